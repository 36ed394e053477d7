"""The judge's trees: where a coding item's gate runs, built by reins from what was recorded.

A judge's tree is the base commit, checked out from the base store; the recorded patch (the
submission's, byte for byte) applied to it; the judge's own files (``[workspace] judge``) put
back as the base has them, whatever the patch did to them. Nothing else: not the agent's
workspace, its ignored files, its ``.git``, nor anything a process the agent left could write.
The quest's hidden tests are not in it: they are judged apart, in a tree of their own
(:meth:`JudgeTrees.built` with ``hidden``) that the visible tests' run never sees. So the
verdict is a function of the recorded patch, and every PASS reproduces from it on a fresh clone.

What building a tree finds in the patch is returned as FAIL facts on the tree (see
:mod:`reins.workspace.treefacts`): each judge's file the patch changes (``reins:judge-owned``),
each link that leads out of the tree as the kernel would follow it (``reins:link``), a module
at the top named like one of Python's own (``reins:shadow``), a file where the hidden tests go
(``reins:hidden``), a patch that does not apply (``reins:change``).

The trees are a pool under ``root/.reins/judge``: a judgment takes the first tree no other
holds (an ``flock`` each) and resets it in place. Nothing there is trusted: the judged tree is
computed from a fresh index of the proven base store into a fresh object folder, and git resets
the folder to it (:mod:`reins.workspace.treeindex`, :mod:`reins.workspace.storeproof`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import shutil
import threading
from collections.abc import Iterator, Sequence

from reins.errors import WorkspaceError
from reins.values import Fact, JudgeTree
from reins.workspace import gitlocks, hidden_tests, storeproof, treefacts, treeindex
from reins.workspace.basestore import DONE, objects_of, seal
from reins.workspace.change import CHANGE_RULE
from reins.workspace.environment import Environment
from reins.workspace.git import git
from reins.workspace.globs import Globs
from reins.workspace.places import Hold, Places, locked, write_whole

JUDGE_RULE = "reins:judge-owned"
CLEAN = ".clean"  # beside a tree's index: the tree it was cleaned to (a free tree to take first)
# Trees being cleaned by this process, per judge's folder: a judgment waits for one of them
# rather than check out a new tree.
_CLEANERS: dict[str, int] = {}
_CLEANING = threading.Condition()


class JudgeTrees:
    """The judge's trees of a quest whose items start from ``base``; ``sandbox`` is the run's
    setting (the judge is confined wherever it can be; ``none`` lets it run unconfined where
    bubblewrap cannot run at all)."""

    def __init__(
        self,
        places: Places,
        base: str,
        *,
        judge: Sequence[str] = (),
        hidden: str | None = None,
        sandbox: str = "bwrap",
    ) -> None:
        self.places, self.base, self.hidden, self.sandbox = places, base, hidden, sandbox
        self.environment: Environment | None = None  # the project's: its files in every tree
        self.plugins: tuple[str, ...] = ()  # the pytest plugins the project's tests need
        self.globs = Globs.of(judge)
        self.store = places.base_store(base)
        self._judge_store = os.path.join(places.judge, "store.git")
        self._tests: tuple[str, ...] | None = None
        self._base_tree: str | None = None
        self._config: str | None = None
        self._base_objects = objects_of(self.store)
        self._lent: dict[str, str] = {}  # a slot's objects → the judgment's it borrows

    @classmethod
    def of(cls, tree: JudgeTree) -> JudgeTrees:
        """The trees a check in ``tree`` may take one of (a tree of the base, to compare; the
        tree of the hidden tests)."""
        made = cls(Places(tree.root), tree.base, hidden=tree.hidden, sandbox=tree.sandbox)
        made._tests, made._config = tree.tests, tree.config
        made.environment = Environment.of(tree.python, tree.environment, tree.generated)
        made.plugins = tree.plugins
        return made

    @contextlib.contextmanager
    def tree(self, patch: str | None, *, branch: str, before: str = "") -> Iterator[JudgeTree]:
        """A tree of the base with ``patch`` applied, held while the block runs (the hidden
        tests are not in it).

        Raises:
            WorkspaceError: git failed on the base itself (reins' fault, not the patch's).
        """
        with self._slot() as (path, index):
            self._judge_store = self._store()
            storeproof.fresh(
                storeproof.slot_objects(index)
            )  # what the judgment writes, and reads back, is its own
            os.makedirs(path, exist_ok=True)  # git applies a patch "in" it (reading no file)
            target, facts, changed = (self._judged(index + ".next", patch, path) if patch
                                      else (self.base_tree_id(), [], []))  # fmt: skip
            self._reset(path, index, target)
            made = JudgeTree(path, self.base, branch, self.places.root, self.hidden, tuple(facts),
                             changed=tuple(changed), target=target, sandbox=self.sandbox,
                             tests=self.tests(), config=self.config(),
                             plugins=self.plugins, before=before)  # fmt: skip
            yield self._environed(made)

    @contextlib.contextmanager
    def base_tree(self) -> Iterator[str]:
        """The folder of a tree of the base alone (with the hidden tests), held meanwhile."""
        with self.built(self.base_tree_id(), hidden=True) as path:
            yield path

    @contextlib.contextmanager
    def built(self, target: str, *, hidden: bool, lender: str | None = None) -> Iterator[str]:
        """The folder of a tree holding the git tree ``target`` (and, with ``hidden``, the
        hidden tests), held meanwhile: the hidden tests' own run takes one. ``target``'s
        objects are the base's, or those of the judgment in the tree ``lender`` (held)."""
        with self._slot() as (path, index):
            self._judge_store = self._store()
            objects = storeproof.slot_objects(index)
            storeproof.fresh(objects)
            if lender:
                self._lent[objects] = lender + ".objects"
            try:
                self._reset(path, index, target)
            finally:
                self._lent.pop(objects, None)
            if self.environment is not None:
                self.environment.place(path, prove=self.sandbox == "none")
            if hidden and self.hidden:
                hidden_tests.place(self.hidden, path)
            yield path

    def _environed(self, tree: JudgeTree) -> JudgeTree:
        """``tree`` with the project's generated files in it, naming its environment."""
        env = self.environment
        if env is None:
            return tree
        env.place(tree.path, prove=self.sandbox == "none")
        return dataclasses.replace(tree, python=env.python, environment=env.folder or "",
                                   generated=env.generated or "")  # fmt: skip

    def base_tree_id(self) -> str:
        """The git tree of the base commit."""
        if self._base_tree is None:
            out = git([f"--git-dir={self.store}", "rev-parse", f"{self.base}^{{tree}}"],
                      cwd=self.places.own).stdout  # fmt: skip
            self._base_tree = out.decode().strip()
        return self._base_tree

    def tests(self) -> tuple[str, ...]:
        """The judge's own test files at the base, by path from the top, sorted."""
        if self._tests is None:
            args = [f"--git-dir={self.store}", "ls-tree", "-r", "-z", "--name-only", self.base]
            out = git(args, cwd=self.places.own).stdout.decode("utf-8", "surrogateescape")
            names = [n for n in out.split("\0") if n]
            self._tests = tuple(
                n for n in names if self.globs.match(n) and treefacts.TEST_FILE.search(n)
            )
        return self._tests

    def config(self) -> str:
        """The base's pytest configuration file among the judge's files ("" for none): the
        first of pytest's own names the base holds at its top that configures pytest."""
        if self._config is None:
            owned = [n for n in treefacts.CONFIGS if self.globs.match(n)]
            self._config = next((n for n in owned if treefacts.configures(n, self.at_base(n))), "")
        return self._config

    def at_base(self, name: str) -> bytes | None:
        """The file ``name`` at the top of the base, or None."""
        shown = git([f"--git-dir={self.store}", "show", f"{self.base}:{name}"],
                    cwd=self.places.own, check=False)  # fmt: skip
        return shown.stdout if shown.returncode == 0 else None

    def hidden_files(self) -> list[str]:
        return hidden_tests.files(self.hidden) if self.hidden else []  # from the top, as links

    def make_ahead(
        self, count: int, *, after: Sequence[threading.Thread] = ()
    ) -> list[threading.Thread]:
        """Make ``count`` trees of the base in the background, one after another, so that the
        first judgments (after an agent's run) reset a tree rather than check one out."""

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
        """Wait until no tree of this folder is being cleaned (a run's end: no git left)."""
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
            gitlocks.clear(path, indexes=[index, index + ".next"])  # a killed git's, held: stale
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
        """Reset a tree after its judgment, off the turn's path, so the next reset finds less
        to do (it proves the tree again all the same)."""
        try:
            if treeindex.trusted(index):
                held = self._git(index, ["write-tree"]).decode().strip()
                self._reset(path, index, held)
                write_whole(index + CLEAN, held + "\n")
        except Exception:  # the next judgment resets it whole
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
    ) -> bytes:
        """``git ARGS`` on the judge's store with ``index`` (and ``tree`` as work tree)."""
        head = [f"--git-dir={self._judge_store}"] + ([f"--work-tree={tree}"] if tree else [])
        objects = storeproof.slot_objects(index)  # the slot's own, fresh each judgment
        borrowed = [*([self._lent[objects]] if objects in self._lent else []), self._base_objects]
        env = {"GIT_INDEX_FILE": index, "GIT_OBJECT_DIRECTORY": objects,
               "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(borrowed),
               **gitlocks.marking(index.split(".index", 1)[0])}  # fmt: skip
        cwd = tree or self.places.judge
        return git([*head, *args], cwd=cwd, env=env, stdin=stdin, check=check).stdout

    def _store(self) -> str:
        """The judge's store (its configuration; the objects of each judgment are a folder of
        the judgment's own, borrowing the base's), after the base store is proven whole: no
        agent's repository borrows from either (an answer must not be read there)."""
        seal(self.store)  # once a judgment (an unconfined agent could have written to it)
        storeproof.prove(self.store)
        path = os.path.join(self.places.judge, "store.git")
        if not os.path.isfile(os.path.join(path, DONE)):
            with locked(self.places.lock_file):
                if not os.path.isfile(os.path.join(path, DONE)):
                    shutil.rmtree(path, ignore_errors=True)
                    git(["init", "--quiet", "--bare", "--template=", path], cwd=self.places.own)
                    with open(os.path.join(path, DONE), "w", encoding="ascii") as f:
                        f.write(self.base + "\n")
        seal(path)
        return path

    def _reset(self, path: str, index: str, target: str) -> None:
        """Make the folder ``path`` hold exactly the git tree ``target``, proven by git: every
        file whose state on disk differs from what the index recorded is written again, every
        file the index does not hold removed. An index reins did not write last is dropped
        first, so every file is written (a forged index could vouch for a forged file)."""
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.unlink(path)
        os.makedirs(path, exist_ok=True)
        if not treeindex.trusted(index):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(index)
        try:
            self._git(index, ["read-tree", "-u", "--reset", target], tree=path)
            self._git(index, ["clean", "--quiet", "-ffdx"], tree=path)
        except WorkspaceError:  # what a judged run left in the way (a folder it made unreadable)
            hidden_tests.wipe(path)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(index)
            self._git(index, ["read-tree", "-u", "--reset", target], tree=path)
        treeindex.remember(index)

    def _judged(self, index: str, patch: str, path: str) -> tuple[str, list[Fact], list[str]]:
        """The tree to judge (the base, ``patch`` applied, then the judge's files and the links
        out of the tree taken out of it), the facts of what was found, and the paths the patch
        touches. The index starts from the base's commit every time: no cache is trusted."""
        data = patch.encode("utf-8", "surrogatepass")
        with contextlib.suppress(FileNotFoundError):
            os.unlink(index)
        try:
            self._git(index, ["read-tree", self.base])
            # git wants a work tree even for --cached; the folder's files are not read
            apply = ["apply", "--cached", "--binary", "--whitespace=nowarn", "-"]
            self._git(index, apply, tree=path, stdin=data)
            # what the patch changed, as git's objects say (a rename is its two paths)
            diff = ["diff-index", "--cached", "--no-renames", "-z", self.base]
            changes = treefacts.changes(self._git(index, diff, tree=path))
        except WorkspaceError as exc:  # a patch git cannot apply
            said = str(exc).rsplit("failed: ", 1)[-1]
            fact = Fact(where="the change", expected="a patch that applies to the base",
                        actual=said, rule=CHANGE_RULE)  # fmt: skip
            return self.base_tree_id(), [fact], []
        paths = [c.path for c in changes]
        added = [c.path for c in changes if c.status == "A"]
        linked = any(c.mode == "120000" for c in changes)
        entries = self._entries(index) if linked or self.hidden else {}
        facts = [*(self._links(index, entries, path) if linked else []),
                 *treefacts.shadow_facts(treefacts.shadows(added)),
                 *self._judge_files(index, paths, path)]  # fmt: skip
        if self.hidden and treefacts.hidden_clashes(self.hidden_files(), set(entries)):
            facts.append(treefacts.hidden_fact())
        return self._git(index, ["write-tree"], tree=path).decode().strip(), facts, paths

    def _entries(self, index: str) -> dict[str, tuple[str, str]]:
        """Every entry of ``index``: path → (mode, object)."""
        return treefacts.entries(self._git(index, ["ls-files", "-s", "-z"]))

    def _links(self, index: str, entries: dict[str, tuple[str, str]], path: str) -> list[Fact]:
        """A fact for each link of the tree that leads out of it, once the patch made or changed
        one (a new link can turn an old one's path outward), links followed as the kernel
        follows them, chains included; each is dropped."""
        links = {
            name: self._git(index, ["cat-file", "blob", obj]).decode("utf-8", "surrogateescape")
            for name, (mode, obj) in entries.items()
            if mode == "120000"
        }
        found = treefacts.all_escaping(links)
        self._forget(index, path, found)
        return treefacts.link_facts(found)

    def _forget(self, index: str, path: str, names: list[str]) -> None:
        """Take ``names`` out of ``index``."""
        if names:
            gone = "".join(f"{name}\0" for name in names).encode("utf-8", "surrogateescape")
            remove = ["update-index", "--force-remove", "-z", "--stdin"]
            self._git(index, remove, tree=path, stdin=gone)

    def _judge_files(self, index: str, paths: list[str], path: str) -> list[Fact]:
        """A fact for each judge's file the patch changed; each is put back as the base has it
        (or taken out, when the base has none)."""
        owned = [name for name in paths if self.globs.match(name)]
        if not owned:
            return []
        base = self._git(index, ["ls-tree", "-r", "-z", self.base, "--", *owned])
        kept = {e.partition("\t")[2] for e in base.decode("utf-8", "surrogateescape").split("\0")}
        self._forget(index, path, [name for name in owned if name not in kept])
        if base:
            self._git(index, ["update-index", "-z", "--index-info"], tree=path, stdin=base)
        return treefacts.named(owned, JUDGE_RULE,
                               "unchanged: it is the judge's ([workspace] judge)",
                               "changed by the agent's patch")  # fmt: skip
