"""The judge's trees: where a coding item's gate runs, built by reins from what was recorded.

A judge's tree is the base commit, checked out from the base store; the recorded patch (the
submission's, byte for byte) applied to it; the judge's own files (``[workspace] judge``) put
back as the base has them, whatever the patch did to them; and the quest's hidden tests copied
in. Nothing else: not the agent's workspace, its ignored files, its ``.git``, nor anything a
process the agent left could write (the agent's whole process tree has ended before the change
is taken, and under the sandbox the agent cannot reach reins' folder). So the verdict is a
function of the recorded patch, and every PASS reproduces from it on a fresh clone.

What building a tree finds in the patch is returned as FAIL facts on the tree: each judge's
file the patch changes (``reins:judge-owned``), each symbolic link that points out of the tree
(``reins:link``: the judge would read a file the patch does not hold), a patch that does not
apply (``reins:change``). A hidden test's path is overwritten without a fact: a fact would name
it, and its name must reach no prompt.

The trees are a pool under ``root/.reins/judge``: a judgment takes the first tree no other
thread or process holds (an ``flock`` each) and resets it in place, so only the files that
differ from the last use are written.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import threading
from collections.abc import Iterator, Sequence

from reins.errors import WorkspaceError
from reins.values import Fact, JudgeTree
from reins.workspace.basestore import DONE, objects_of, seal
from reins.workspace.change import CHANGE_RULE
from reins.workspace.git import git
from reins.workspace.globs import Globs
from reins.workspace.places import Hold, Places, locked

JUDGE_RULE = "reins:judge-owned"
CLEAN = ".clean"  # beside a tree's index: the tree it was cleaned to, as no judgment left it
# Trees being cleaned by this process, per judge's folder: a judgment waits for one of them
# rather than check out a new tree.
_CLEANERS: dict[str, int] = {}
_CLEANING = threading.Condition()
LINK_RULE = "reins:link"
NAMED = 20
"""Facts of one kind named one by one; more are counted in one fact."""


class JudgeTrees:
    """The judge's trees of a quest whose items start from ``base``."""

    def __init__(
        self, places: Places, base: str, *, judge: Sequence[str] = (), hidden: str | None = None
    ) -> None:
        self.places, self.base, self.hidden = places, base, hidden
        self.globs = Globs.of(judge)
        self.store = places.base_store(base)
        self._judge_store = os.path.join(places.judge, "store.git")

    @classmethod
    def of(cls, tree: JudgeTree) -> JudgeTrees:
        """The trees a check in ``tree`` may take one of (a tree of the base, to compare)."""
        return cls(Places(tree.root), tree.base, hidden=tree.hidden)

    @contextlib.contextmanager
    def tree(self, patch: str | None, *, branch: str) -> Iterator[JudgeTree]:
        """A tree of the base with ``patch`` applied, held while the block runs.

        Raises:
            WorkspaceError: git failed on the base itself (reins' fault, not the patch's).
        """
        with self._slot() as (path, index):
            facts = self._build(path, index, patch)
            yield JudgeTree(path, self.base, branch, self.places.root, self.hidden, facts)

    @contextlib.contextmanager
    def base_tree(self) -> Iterator[str]:
        """The folder of a tree of the base alone (with the hidden tests), held meanwhile."""
        with self._slot() as (path, index):
            self._build(path, index, None)
            yield path

    def make_ahead(
        self, count: int, *, after: Sequence[threading.Thread] = ()
    ) -> list[threading.Thread]:
        """Make ``count`` trees of the base in the background, one after the other (the first
        judgment comes after an agent's run), so that the first judgments reset a tree in
        place rather than check out the whole repository."""

        def make() -> None:
            for thread in after:  # what must be made first (the agents' folders)
                thread.join()
            held = [self.base_tree() for _ in range(count)]  # each a tree of its own
            with contextlib.ExitStack() as stack:
                for tree in held:
                    with contextlib.suppress(Exception):  # else made when judged
                        stack.enter_context(tree)

        thread = threading.Thread(target=make, daemon=True, name="reins-judge-ahead")
        thread.start()
        return [thread]

    def settle(self) -> None:
        """Wait until no tree of this folder is being cleaned (a run's end: no git of reins
        is left running in a tree, and each is noted clean for the next run)."""
        with _CLEANING:
            while _CLEANERS.get(self.places.judge):
                _CLEANING.wait()

    @contextlib.contextmanager
    def _slot(self) -> Iterator[tuple[str, str]]:
        """A tree no other judgment holds: a clean one if one is free, else one being cleaned
        (waited for), else a new one. Once the judgment is done, the tree is cleaned in a
        thread of its own (reset to what it held, what the tests wrote removed), so that the
        next judgment finds it clean and writes only the files that differ."""
        hold, n = self._free()
        path = os.path.join(self.places.judge, str(n))
        index = os.path.join(self.places.judge, f"{n}.index")
        try:
            yield path, index
        except BaseException:
            hold.release()
            raise
        with _CLEANING:
            _CLEANERS[self.places.judge] = _CLEANERS.get(self.places.judge, 0) + 1
        threading.Thread(target=self._clean, args=(hold, path, index), daemon=True,
                         name="reins-judge-clean").start()  # fmt: skip

    def _free(self) -> tuple[Hold, int]:
        with _CLEANING:
            while True:
                taken = self._first_free()
                if taken is not None:
                    return taken
                if not _CLEANERS.get(self.places.judge):
                    break
                _CLEANING.wait()
        for n in itertools.count():  # none free nor soon to be: a new tree
            hold = Hold.take(os.path.join(self.places.judge, f"{n}.lock"), wait=False)
            if hold is not None:
                return hold, n
        raise AssertionError("unreachable")  # pragma: no cover

    def _first_free(self) -> tuple[Hold, int] | None:
        """The first tree that exists and no one holds (cleaned ones first)."""
        try:
            names = os.listdir(self.places.judge)
        except FileNotFoundError:
            return None
        made = sorted(
            (int(n) for n in names if n.isdigit()),
            key=lambda n: (not os.path.exists(os.path.join(self.places.judge, f"{n}{CLEAN}")), n),
        )
        for n in made:
            hold = Hold.take(os.path.join(self.places.judge, f"{n}.lock"), wait=False)
            if hold is not None:
                return hold, n
        return None

    def _clean(self, hold: Hold, path: str, index: str) -> None:
        try:
            held = self._git(index, ["write-tree"])  # what the judgment's tree was reset to
            self._git(index, ["read-tree", "-u", "--reset", held.decode().strip()], tree=path)
            self._git(index, ["clean", "--quiet", "-ffdx"], tree=path)
            _note(index + CLEAN, held.decode().strip())
        except Exception:  # not noted clean: the next judgment resets it whole
            pass
        finally:
            hold.release()
            with _CLEANING:
                _CLEANERS[self.places.judge] -= 1
                _CLEANING.notify_all()

    def _git(
        self,
        index: str,
        args: list[str],
        *,
        tree: str | None = None,
        stdin: bytes | None = None,
        check: bool = True,
        failed: bool = False,
    ) -> bytes:
        """``git ARGS`` on the judge's store with ``index`` (and ``tree`` as work tree): its
        output, or (``failed``) ``b"failed"`` when it failed and nothing when it did not."""
        head = [f"--git-dir={self._judge_store}"] + ([f"--work-tree={tree}"] if tree else [])
        env = {"GIT_INDEX_FILE": index}
        cwd = tree or self.places.judge
        done = git([*head, *args], cwd=cwd, env=env, stdin=stdin, check=check)
        if failed:
            return b"failed" if done.returncode else b""
        return done.stdout

    def _base_index(self) -> str:
        """An index of the base (made once per base), which each judgment copies."""
        path = os.path.join(self.places.judge, f"base-{self.base}.index")
        if not os.path.isfile(path):
            making = f"{path}.{threading.get_ident()}"
            self._git(making, ["read-tree", self.base])
            os.replace(making, path)
        return path

    def _store(self) -> str:
        """The judge's store: it holds the blobs of the patches judged, borrowing the base's
        objects; no agent's repository borrows from it (an answer must not be read there)."""
        path = os.path.join(self.places.judge, "store.git")
        if not os.path.isfile(os.path.join(path, DONE)):
            with locked(self.places.lock_file):
                if not os.path.isfile(os.path.join(path, DONE)):
                    shutil.rmtree(path, ignore_errors=True)
                    git(["init", "--quiet", "--bare", "--template=", path], cwd=self.places.own)
                    with open(os.path.join(path, DONE), "w", encoding="ascii") as f:
                        f.write(self.base + "\n")
        seal(path)  # once a judgment (an unconfined agent could have written to it meanwhile)
        alternates = os.path.join(path, "objects", "info", "alternates")
        if not os.path.isfile(alternates):
            with open(alternates, "w", encoding="utf-8") as f:
                f.write(objects_of(self.store) + "\n")
        return path

    def _build(self, path: str, index: str, patch: str | None) -> tuple[Fact, ...]:
        """Make the tree at ``path`` the judged one: its content is worked out in an index of
        its own first (the base, the patch applied, the judge's files put back, links out of
        the tree dropped), then the folder is reset to it in place, so that only the files
        that differ from its last judgment are written."""
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.unlink(path)
        os.makedirs(path, exist_ok=True)
        seal(self.store)
        self._judge_store = self._store()
        target, facts = self.base, list[Fact]()
        if patch:
            target, facts = self._judged(index + ".next", patch, path)
        clean = _taken(index + CLEAN)
        merge = ["read-tree", "-u", "-m", clean or "", target]
        if (
            clean is None
            or not os.path.isfile(index)
            or self._git(index, merge, tree=path, check=False, failed=True)
        ):  # clean at that tree, the files that differ changed; else a reset of every file
            self._git(index, ["read-tree", "-u", "--reset", target], tree=path)
            self._git(index, ["clean", "--quiet", "-ffdx"], tree=path)
        if self.hidden:
            shutil.copytree(self.hidden, path, symlinks=True, dirs_exist_ok=True)
        return tuple(facts)

    def _judged(self, index: str, patch: str, path: str) -> tuple[str, list[Fact]]:
        """The tree to judge (the base, ``patch`` applied, then the judge's files and the links
        out of the tree taken out of it), and the facts of what was taken out."""
        data = patch.encode("utf-8", "surrogatepass")
        shutil.copyfile(self._base_index(), index)  # the base's index, read once: a copy
        try:
            # git wants a work tree even for --cached; the folder's files are not read
            apply = ["apply", "--cached", "--binary", "--whitespace=nowarn", "-"]
            self._git(index, apply, tree=path, stdin=data)
            listed = self._git(index, ["apply", "--numstat", "-z", "-"], tree=path, stdin=data)
            paths = _numstat_paths(listed)
            facts = [*self._links(index, paths, path, data), *self._judge_files(index, paths, path)]
            return self._git(index, ["write-tree"], tree=path).decode().strip(), facts
        except WorkspaceError as exc:  # a patch git cannot apply, or make a tree of
            said = str(exc).rsplit("failed: ", 1)[-1]
            fact = Fact(where="the change", expected="a patch that applies to the base",
                        actual=said, rule=CHANGE_RULE)  # fmt: skip
            return self.base, [fact]

    def _links(self, index: str, paths: list[str], path: str, data: bytes) -> list[Fact]:
        """A fact for each link the patch made that points out of the tree (then dropped)."""
        found = []
        listing = ["ls-files", "-s", "-z", "--", *paths]
        maybe = paths and b" 120000" in data  # a link's mode: most patches make none
        entries = self._git(index, listing, tree=path) if maybe else b""
        for entry in entries.decode("utf-8", "surrogateescape").split("\0"):
            head, _, name = entry.partition("\t")
            if not head.startswith("120000 "):
                continue
            target = self._git(index, ["cat-file", "blob", head.split()[1]]).decode(
                "utf-8", "surrogateescape"
            )
            inside = os.path.normpath(os.path.join("/tree", os.path.dirname(name), target))
            if os.path.isabs(target) or not inside.startswith("/tree/"):
                found.append(name)
        if found:
            gone = "".join(f"{name}\0" for name in found).encode("utf-8", "surrogateescape")
            remove = ["update-index", "--force-remove", "-z", "--stdin"]
            self._git(index, remove, tree=path, stdin=gone)
        return _named(found, LINK_RULE, "a link to a file inside the repository",
                      "a symbolic link out of the tree")  # fmt: skip

    def _judge_files(self, index: str, paths: list[str], path: str) -> list[Fact]:
        """A fact for each judge's file the patch changed; each is put back as the base has it
        (or taken out, when the base has none)."""
        owned = [name for name in paths if self.globs.match(name)]
        if not owned:
            return []
        base = self._git(index, ["ls-tree", "-r", "-z", self.base, "--", *owned])
        kept = {e.partition("\t")[2] for e in base.decode("utf-8", "surrogateescape").split("\0")}
        added = [name for name in owned if name not in kept]
        if added:
            gone = "".join(f"{name}\0" for name in added).encode("utf-8", "surrogateescape")
            remove = ["update-index", "--force-remove", "-z", "--stdin"]
            self._git(index, remove, tree=path, stdin=gone)
        if base:
            self._git(index, ["update-index", "-z", "--index-info"], tree=path, stdin=base)
        return _named(owned, JUDGE_RULE, "unchanged: it is the judge's ([workspace] judge)",
                      "changed by the agent's patch")  # fmt: skip


def _note(path: str, tree: str) -> None:
    with open(path + ".tmp", "w", encoding="ascii") as f:
        f.write(tree + "\n")
    os.replace(path + ".tmp", path)


def _taken(path: str) -> str | None:
    """The tree a clean note names, the note taken away (the tree is about to change)."""
    try:
        with open(path, encoding="ascii") as f:
            tree = f.read().strip()
        os.unlink(path)
    except (OSError, UnicodeDecodeError):
        return None
    return tree or None


def _numstat_paths(out: bytes) -> list[str]:
    """The paths ``git apply --numstat -z`` lists (``added<TAB>deleted<TAB>path`` each)."""
    paths = []
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        parts = entry.split("\t", 2)
        if len(parts) == 3 and parts[2]:
            paths.append(parts[2])
    return paths


def _named(paths: list[str], rule: str, expected: str, actual: str) -> list[Fact]:
    facts = [Fact(where=f"file {name}", expected=expected, actual=actual, rule=rule)
             for name in paths[:NAMED]]  # fmt: skip
    if len(paths) > NAMED:
        more = f"{len(paths) - NAMED} more files like these"
        facts.append(Fact(where="the change", expected=expected, actual=more, rule=rule))
    return facts
