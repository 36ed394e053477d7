"""The integration: reins' own store of what ``reins land`` merged, and the git of each landing.

::

    root/.reins/land-<base>.git           a bare repository of reins', borrowing the base store
      refs/heads/<BRANCH>                 the integration of BRANCH: the base, then one merge
                                          commit per change landed
      refs/reins/changes/<slug>           each change brought in to be merged (kept reachable)

With ``[workspace] remote``, the integration's ref is the remote's ``refs/reins/<quest>/land/
<BRANCH>`` (:meth:`Integration.sync` fetches it into the store, :meth:`Integration.move`
pushes it, pinned to the commit it held), so any host lands from where another stopped; the
store is a host's cache of it.

The history of ``refs/heads/<BRANCH>`` is the journal: each landing is a merge commit whose
first parent is the integration before it and whose second is the change, and whose message
names the item it landed (``Reins-Landed: <key>``), the change's commit and the land item it
came through, if any (``Reins-Item: land/<key>``). A rerun reads the landings back from there
(:meth:`Integration.landed`), so a crash at any step loses nothing and lands nothing twice: a
merge commit made but not yet on the ref is made again, and the ref moves only by a
compare-and-swap from the commit the run read.

Merges are made with ``git merge-tree --write-tree``: no work tree, no index, no checkout of
anyone's; the user's repository is never written here (:meth:`Repository.advance
<reins.workspace.repository.Repository.advance>` moves the user's branch, by a checked fetch).
The base store is not written either: it must hold the base alone, so that no agent reads
another item's answer from git; a land item's workspace fetches the two commits it needs into
its own store (:meth:`Workspaces.borrow <reins.workspace.workspaces.Workspaces.borrow>`).
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass

from reins.errors import WorkspaceError
from reins.workspace.basestore import DONE, objects_of, seal
from reins.workspace.git import DIFF_OPTIONS, git
from reins.workspace.names import slug
from reins.workspace.places import Places, locked
from reins.workspace.remote import push, ref_at

LANDED, COMMIT, ITEM, QUEST = "Reins-Landed", "Reins-Commit", "Reins-Item", "Reins-Quest"
ZERO = "0" * 40


@dataclass(frozen=True, slots=True)
class Merged:
    """A merge as ``merge-tree`` made it: its tree, or (``tree`` None) the files that conflict
    and git's words about them."""

    tree: str | None
    files: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Landed:
    """One landing read back from the integration's history: the item whose change landed, the
    merge commit, the change's commit and the land item it came through (None: the item's
    own PASS)."""

    key: str
    merge: str
    commit: str
    item: str | None


class Integration:
    """The integration of ``branch`` in reins' land store of ``places``, from commit ``base``."""

    def __init__(self, places: Places, base: str, branch: str, *, remote: str | None = None,
                 quest: str = "") -> None:  # fmt: skip
        self.places, self.base, self.branch = places, base, branch
        self.store = places.land_store(base)
        self.ref = f"refs/heads/{branch}"
        self.remote = remote
        self.remote_ref = f"refs/reins/{quest}/land/{branch}"

    @property
    def where(self) -> str:
        """Where the integration's ref is, in words."""
        return f"the remote {self.remote} ({self.remote_ref})" if self.remote else self.store

    def sync(self) -> None:
        """The store's ref made the remote's (nothing without a remote): the remote's commits
        fetched, objects checked; no ref there, none here.

        Raises:
            WorkspaceError: the remote cannot be read.
        """
        if self.remote is None:
            return
        there = ref_at(self.remote, self.remote_ref, cwd=self.scratch)
        if there is None:
            self.git(["update-ref", "-d", self.ref], check=False)
            return
        if not self.has(there):
            self.git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                      "--no-recurse-submodules", self.remote, self.remote_ref])  # fmt: skip
        self.git(["update-ref", self.ref, there])

    def publish(self, commit: str, branch: str, *, was: str | None) -> None:
        """The remote's ``BRANCH`` moved from ``was`` (None: absent) to ``commit``, or not at
        all (with a remote only: the user's branch, where it lands)."""
        assert self.remote is not None
        push(self.store, self.remote, commit, f"refs/heads/{branch}", old=was)

    @classmethod
    def open(cls, places: Places, base: str, branch: str, *, remote: str | None = None,
             quest: str = "") -> Integration:  # fmt: skip
        """The integration of ``branch``, its store made if it is not whole.

        Raises:
            WorkspaceError: git failed.
        """
        found = cls(places, base, branch, remote=remote, quest=quest)
        path = found.store
        if not os.path.isfile(os.path.join(path, DONE)):
            with locked(places.lock_file):
                if not os.path.isfile(os.path.join(path, DONE)):
                    shutil.rmtree(path, ignore_errors=True)
                    git(["init", "--quiet", "--bare", "--template=", path], cwd=places.own)
                    with open(os.path.join(path, DONE), "w", encoding="ascii") as f:
                        f.write(base + "\n")
        seal(path)
        # Written whole in one step: a loop may be fetching from the store meanwhile.
        alternates = os.path.join(path, "objects", "info", "alternates")
        os.makedirs(os.path.dirname(alternates), exist_ok=True)
        with open(f"{alternates}.{os.getpid()}.tmp", "w", encoding="utf-8") as f:
            f.write(objects_of(places.base_store(base)) + "\n")
        os.replace(f"{alternates}.{os.getpid()}.tmp", alternates)
        os.makedirs(found.scratch, exist_ok=True)
        return found

    @property
    def scratch(self) -> str:
        """An empty folder git may take for a work tree (``apply --cached`` wants one)."""
        return os.path.join(self.places.own, "land-work")

    def git(self, args: list[str], *, stdin: bytes | None = None, index: str | None = None,
            check: bool = True) -> bytes:  # fmt: skip
        """``git ARGS`` on the land store (with ``index`` as its index, when given)."""
        head = [f"--git-dir={self.store}", f"--work-tree={self.scratch}"]
        env = {"GIT_INDEX_FILE": index} if index else None
        done = git([*head, *args], cwd=self.scratch, env=env, stdin=stdin, check=check)
        return done.stdout if done.returncode == 0 else b""

    # -- what landed -----------------------------------------------------------------------

    def tip(self) -> str:
        """The integration's commit: the ref's, else the base (nothing landed yet)."""
        out = self.git(["rev-parse", "--verify", "--quiet", self.ref], check=False)
        return out.decode().strip() or self.base

    def landed(self) -> list[Landed]:
        """Every landing on the integration, oldest first, read from its history."""
        tip = self.tip()
        if tip == self.base:
            return []
        args = ["log", "--first-parent", "-z", "--format=%H%n%B", tip, f"^{self.base}"]
        found = []
        for record in self.git(args).decode("utf-8", "surrogateescape").split("\0"):
            merge, _, message = record.strip("\n").partition("\n")
            said = _trailers(message)
            if merge and LANDED in said:
                found.append(Landed(said[LANDED], merge, said.get(COMMIT, ""), said.get(ITEM)))
        return found[::-1]

    def same_tree(self, commit: str, other: str) -> bool:
        """Whether two commits hold the same files (a merge that changed nothing)."""
        trees = self.git(["rev-parse", f"{commit}^{{tree}}", f"{other}^{{tree}}"]).split()
        return len(trees) == 2 and trees[0] == trees[1]

    def has(self, commit: str) -> bool:
        args = ["cat-file", "-e", f"{commit}^{{commit}}"]
        return (
            git([f"--git-dir={self.store}", *args], cwd=self.scratch, check=False).returncode == 0
        )

    def holds(self, ancestor: str, commit: str) -> bool:
        """Whether ``ancestor`` is in the history of ``commit`` (both known to the store)."""
        if not (self.has(ancestor) and self.has(commit)):
            return False
        args = ["merge-base", "--is-ancestor", ancestor, commit]
        head = [f"--git-dir={self.store}"]
        return git([*head, *args], cwd=self.scratch, check=False).returncode == 0

    # -- bringing a change in --------------------------------------------------------------

    def bring(self, key: str, commit: str, sources: list[str]) -> bool:
        """Fetch ``commit`` (item ``key``'s change) from the first of ``sources`` (git folders)
        that holds it, objects checked; whether the store holds it now."""
        if self.has(commit):
            return True
        for source in sources:
            if not os.path.isdir(source):
                continue
            refspec = f"+{commit}:refs/reins/changes/{slug(key)}"
            self.git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                      "--no-recurse-submodules", source, refspec], check=False)  # fmt: skip
            if self.has(commit):
                return True
        return False

    def rebuild(self, key: str, patch: str, parent: str) -> str:
        """The commit of the base plus ``patch`` (a recorded change), on top of ``parent``:
        item ``key``'s change made again when no store holds its commit any more.

        Raises:
            WorkspaceError: the patch does not apply to the base, or git failed.
        """
        index = os.path.join(self.places.own, "land.index")
        self.git(["read-tree", self.base], index=index)
        apply = ["apply", "--cached", "--binary", "--whitespace=nowarn", "-"]
        self.git(apply, stdin=patch.encode("utf-8", "surrogatepass"), index=index)
        tree = self.git(["write-tree"], index=index).decode().strip()
        os.unlink(index)
        message = f"reins: {key}, made again from its recorded patch\n"
        made = self.git(["commit-tree", tree, "-p", parent, "-m", message]).decode().strip()
        self.git(["update-ref", f"refs/reins/changes/{slug(key)}", made])
        return made

    # -- merging ---------------------------------------------------------------------------

    def merge(self, onto: str, commit: str) -> Merged:
        """``commit`` merged onto ``onto``, in the store alone.

        Raises:
            WorkspaceError: git could not merge at all (not a conflict).
        """
        args = [f"--git-dir={self.store}", "merge-tree", "--write-tree", "-z", "--name-only",
                onto, commit]  # fmt: skip
        done = git(args, cwd=self.scratch, check=False)
        if done.returncode not in (0, 1):
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise WorkspaceError(f"git merge-tree failed: {said[-1] if said else done.returncode}")
        tree, files, messages = _merge_output(done.stdout)
        return Merged(tree if done.returncode == 0 else None, files, messages)

    def commit(self, tree: str, parents: list[str], *, key: str, commit: str,
               item: str | None, quest: str) -> str:  # fmt: skip
        """The merge commit of one landing, its trailers the journal's entry."""
        lines = [f"{LANDED}: {_value(key)}", f"{COMMIT}: {commit}"]
        if item is not None:
            lines.append(f"{ITEM}: {_value(item)}")
        lines.append(f"{QUEST}: {quest}")
        message = f"reins: land {_value(key)} onto {self.branch}\n\n" + "\n".join(lines) + "\n"
        args = ["commit-tree", tree, *(a for p in parents for a in ("-p", p)), "-m", message]
        return self.git(args).decode().strip()

    def move(self, old: str, new: str) -> None:
        """The integration's ref from ``old`` (the base: no ref yet) to ``new``, or not at all
        (with a remote, the remote's first: a push pinned to ``old``).

        Raises:
            WorkspaceError: the ref is not at ``old`` (another run moved it), or git failed.
        """
        if self.remote is not None:
            push(self.store, self.remote, new, self.remote_ref,
                 old=None if old == self.base else old)  # fmt: skip
        before = ZERO if old == self.base and not self._ref_exists() else old
        self.git(["update-ref", "-m", "reins land", self.ref, new, before])

    def diff(self, commit: str) -> bytes:
        """The patch from the base to ``commit``, as reins takes every patch: UTF-8 text (when
        a file's content is not, every file is shown as git's binary patch, which applies
        the same)."""
        patch = self.git(["diff", *DIFF_OPTIONS, self.base, commit, "--"])
        try:
            patch.decode("utf-8")
        except UnicodeDecodeError:
            attributes = os.path.join(self.store, "info", "attributes")
            os.makedirs(os.path.dirname(attributes), exist_ok=True)
            with open(attributes, "w", encoding="ascii") as f:
                f.write("* -diff\n")
            try:
                patch = self.git(["diff", *DIFF_OPTIONS, self.base, commit, "--"])
            finally:
                os.unlink(attributes)
        return patch

    def delta(self, onto: str, commit: str) -> str:
        """What ``commit`` changes from where it and ``onto`` part (their merge base)."""
        since = self.git(["merge-base", onto, commit], check=False).decode().strip() or self.base
        return self.git(["diff", *DIFF_OPTIONS, since, commit, "--"]).decode("utf-8", "replace")

    def _ref_exists(self) -> bool:
        args = ["rev-parse", "--verify", "--quiet", self.ref]
        return bool(self.git(args, check=False).strip())


def _value(text: str) -> str:
    """A key as a trailer writes it: as it is when it is plain, else as a JSON string."""
    plain = text.isprintable() and text == text.strip() and not text.startswith('"')
    return text if plain and text else json.dumps(text)


def _trailers(message: str) -> dict[str, str]:
    """The ``Name: value`` lines of a landing's message (each value as :func:`_value` wrote
    it, read back)."""
    found = {}
    for line in message.splitlines():
        name, sep, value = line.partition(": ")
        if sep and name in (LANDED, COMMIT, ITEM, QUEST) and name not in found:
            try:
                found[name] = json.loads(value) if value.startswith('"') else value
            except ValueError:
                continue
    return found


def _merge_output(out: bytes) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``merge-tree -z --name-only``'s output: the tree, the conflicted files, and git's
    words on each conflict (its messages are ``<count> NUL <path>… NUL <type> NUL <message>
    NUL``; those of a type other than ``CONFLICT …``, as ``Auto-merging``, are left out)."""
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    tree, rest = fields[0], fields[1:]
    files = []
    while rest and rest[0]:
        files.append(rest.pop(0))
    rest = rest[1:]
    messages = []
    while rest and rest[0].isdigit():
        count = int(rest[0])
        entry = rest[1 : 1 + count + 2]
        rest = rest[1 + count + 2 :]
        if len(entry) == count + 2 and entry[-2].startswith("CONFLICT"):
            messages.append(entry[-1].strip())
    return tree, tuple(dict.fromkeys(files)), tuple(m for m in messages if m)


def sealed(store: str) -> bool:
    """Whether reins' store of an item is there, sealed as reins made it (an unconfined agent
    could have written to its configuration) before git reads it."""
    if not os.path.isfile(os.path.join(store, "HEAD")):
        return False
    seal(store)
    return True
