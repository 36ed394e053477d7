"""``command``: run a program on the submission (for code quests: "the tests pass").

Each run gets a fresh temporary folder holding the submission in ``file`` (text as written,
JSON as JSON), runs ``run`` there as an argument vector (no shell), and deletes the folder. In
``run``, ``{file}`` is the submission file's path, ``{dir}`` the folder, ``{base}`` the quest
folder, ``{python}`` the judge's own Python, ``{key}`` the item's key and ``{item.FIELD}`` a field
of its payload (one argument each, never one that starts with ``-``); a program named with
a ``/`` is relative to the quest folder, any other is looked up on ``PATH``.

With ``workspace = true`` the program runs in the judge's tree of a coding item instead: the
base with the recorded patch applied and the judge's own files from the base, a tree reins
built (``{dir}`` is that tree; there is no submission file). Python writes no bytecode and
pytest no cache there.

- The program runs in reins' sandbox (:mod:`reins.checks._judged`): the toolchain (system
  folders, the interpreter's, the program's own folder) read-only, its folder and a private
  ``/tmp`` (its HOME and TMPDIR) writable, nothing else of the host (not reins' folder, the
  ledger, the user's repository or HOME), reins' own package hidden, no network (``network =
  true`` gives it the host's), a process namespace of its own. Where bubblewrap cannot run at
  all, a judge's tree refuses unless the run said ``--sandbox none``; a file's check then runs
  in namespaces of its own where ``unshare`` works (``require_isolation = true`` refuses where
  the network cannot be cut), with a temporary HOME, on the host's file system.
- The environment is clean: ``PATH``, ``LANG=C.UTF-8``, ``HOME`` and ``TMPDIR``; no other
  variable of the judge (so no secret) reaches the program.
- Output is captured and capped (the last ``output_chars`` characters of each stream are kept).
- An exit code outside ``pass_codes`` is a fact with the tail of the output; so is running past
  ``timeout`` seconds (the whole process group is killed): an infinite loop is the submission's
  fault. For pytest, each failing test the summary names is a fact of its own.

The judge-error rule: what says the tool or its environment broke, not the change, is the
judge's failure (:class:`~reins.errors.JudgeError`, no try used), never the generator's FAIL:

- a program that cannot start (not found, not executable);
- an exit code of ``broken_codes`` (126 and 127, a shell's "cannot execute" and "not found";
  for pytest also 3, an internal error, and 4, a usage error such as a missing test file);
- ``X -m MODULE`` that says ``No module named MODULE`` (the interpreter lacks the tool);
- in a workspace, an exit code of ``base_codes`` (for pytest 2, a collection error, and 5, no
  tests collected) that the same command also exits with at the base revision, in a judge's
  tree of the base alone: the environment's fault (a missing plugin, a broken conftest), not
  the change's. The answer is kept per base and command for the process. When the base exits
  otherwise, the change broke collection: a FAIL.

An exit code is all this check reads. For tests, prefer the ``pytest`` check, which reads
pytest's own report: an exit status 0 with no test run, or printed text that looks like a
pass, is no pass there.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import secrets
import shutil
import sys
import threading
from dataclasses import dataclass
from pathlib import Path as FilePath

from reins import sandbox
from reins.checks import _pytest
from reins.checks._common import excerpt, filled
from reins.checks._judged import Judged, run_judged, within
from reins.checks._running import Ran
from reins.checks.spec import CWD, BuiltCheck, CheckSpec, QuestFolder
from reins.errors import JudgeError, ParamValueError
from reins.gate.rule import Context
from reins.values import Fact, JudgeTree
from reins.workspace import processes, scratch

NAME = "command"
BROKEN = (126, 127)
"""Exit codes of any command that mean it could not run: a judge error."""


@dataclass(frozen=True, slots=True)
class CommandParams:
    run: tuple[str, ...]
    """the argument vector; {file}, {dir}, {base}, {python}, {key} and {item.FIELD} are replaced"""
    file: str = "submission.txt"
    """the name of the file the submission is written to"""
    timeout: float = 10.0
    """seconds before the run is killed (a fact)"""
    pass_codes: tuple[int, ...] = (0,)
    """the exit codes that pass"""
    output_chars: int = 4000
    """how much of each output stream to keep"""
    network: bool = False
    """let the program use the network"""
    require_isolation: bool = False
    """refuse to run where the network cannot be cut"""
    workspace: bool = False
    """run in the judge's tree of a coding item (the base and the recorded patch), not on a file"""
    broken_codes: tuple[int, ...] | None = None
    """exit codes that mean the tool broke: a judge error (default 126, 127; pytest adds 3, 4)"""
    base_codes: tuple[int, ...] | None = None
    """exit codes judged the environment's when the base exits so too (default: pytest's 2, 5)"""
    base: QuestFolder = CWD


def _build(params: CommandParams) -> BuiltCheck:
    argv = params.run
    if not argv or not argv[0]:
        raise ParamValueError(NAME, "run", "expected a non-empty argument vector")
    name = params.file
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ParamValueError(NAME, "file", f"expected a plain file name, got {name!r}")
    if params.timeout <= 0:
        raise ParamValueError(NAME, "timeout", "expected a number of seconds above 0")
    if not params.pass_codes:
        raise ParamValueError(NAME, "pass_codes", "expected at least one exit code")
    if params.output_chars < 1:
        raise ParamValueError(
            NAME, "output_chars", f"expected at least 1, got {params.output_chars}"
        )
    if params.workspace and any("{file}" in a for a in argv):
        raise ParamValueError(
            NAME,
            "run",
            "{file} has no meaning with workspace = true: the program runs on "
            "the judge's tree ({dir}), not on a file",
        )
    pytest = _pytest.is_pytest(argv)
    broken = params.broken_codes
    if broken is None:
        broken = BROKEN + (_pytest.BROKEN if pytest else ())
    collection = params.base_codes
    if collection is None:
        collection = _pytest.COLLECTION if pytest and params.workspace else ()
    if collection and not params.workspace:
        raise ParamValueError(
            NAME, "base_codes", "needs workspace = true: only a workspace has a base to compare"
        )
    overlap = sorted(set(params.pass_codes) & (set(broken) | set(collection)))
    if overlap:
        raise ParamValueError(
            NAME, "pass_codes", f"exit code {overlap[0]} cannot both pass and fail"
        )
    return Run(
        argv=argv,
        file=name,
        timeout=params.timeout,
        pass_codes=frozenset(params.pass_codes),
        keep=params.output_chars,
        base=os.path.abspath(params.base),
        network=params.network,
        require_isolation=params.require_isolation,
        workspace=params.workspace,
        broken=frozenset(broken),
        collection=frozenset(collection),
        pytest=pytest,
    )


@dataclass(frozen=True, slots=True)
class Run:
    """The built check: one run of the program per submission."""

    argv: tuple[str, ...]
    file: str
    timeout: float
    pass_codes: frozenset[int]
    keep: int
    base: str
    network: bool
    require_isolation: bool
    workspace: bool = False
    broken: frozenset[int] = frozenset(BROKEN)
    collection: frozenset[int] = frozenset()
    pytest: bool = False

    def __call__(self, ctx: Context) -> list[Fact] | None:
        if any("{item." in a for a in self.argv):  # the item's fields, each one argument
            run = dataclasses.replace(
                self, argv=tuple(filled(a, ctx, check=NAME) for a in self.argv)
            )
            return run(ctx)
        if self.workspace:
            tree = ctx.workspace
            if tree is None:
                raise JudgeError(
                    NAME,
                    "this rule runs in the item's workspace, and this turn has none: only "
                    "`reins loop` with a coding agent works in one",
                )
            ran = self._in(tree.path, ctx.key, unconfined=tree.sandbox == "none",
                           python=tree.python)  # fmt: skip
        else:
            with scratch.folder("command") as folder:
                target = os.path.join(folder, self.file)
                FilePath(target).write_bytes(_content(ctx.submission))
                ran = self._run(folder, target, ctx.key, unconfined=True)
        judged = self._judged(ran, ctx)
        if judged and self.workspace and ctx.workspace is not None:
            return within(judged, ctx.workspace.path)
        return judged

    def shown(self, key: str) -> str:
        """The command as a fact names it: the item's key in, the judge's Python as python."""
        words = [a.replace("{key}", key).replace("{python}", "python") for a in self.argv]
        return excerpt(" ".join(words), 160)

    def _in(self, folder: str, key: str, *, unconfined: bool, python: str = "") -> Ran:
        return self._run(folder, "", key, unconfined=unconfined, python=python)

    def _run(
        self, folder: str, target: str, key: str, *, unconfined: bool, python: str = ""
    ) -> Ran:
        """The program run in ``folder``, confined (:mod:`reins.checks._judged`); ``target``
        is the submission's file ("" in a judge's tree); ``{python}`` is ``python`` (the
        project's interpreter) or reins' own."""
        env = {}
        if self.workspace:  # a judge's tree is reused: nothing of one run may serve the next
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env["PYTEST_ADDOPTS"] = "-p no:cacheprovider"
            env[processes.MARKER] = processes.marker(folder, secrets.token_hex(6))
        argv = self._argv(folder, target, key, python or sys.executable)
        run = Judged(folder, readable=tuple(sandbox.needed(argv, path=False)),
                     network=self.network, unconfined=unconfined,
                     require_isolation=self.require_isolation)  # fmt: skip
        return run_judged(argv, run, timeout=self.timeout, keep=self.keep, check=NAME, env=env)

    def _judged(self, ran: Ran, ctx: Context) -> list[Fact] | None:
        shown = self.shown(ctx.key)
        if ran.timed_out:
            return [
                Fact(
                    where=f"command {shown}",
                    expected=f"to finish within {self.timeout:g} s",
                    actual="still running, killed" + _tail(ran, self._tail_chars),
                )
            ]
        if ran.code in self.pass_codes:
            return None
        self._refuse_broken(ran, shown)
        if ran.code in self.collection and ctx.workspace is not None:
            self._compare_with_base(ran, ctx.workspace, ctx.key, shown)
        facts, failed = _pytest.test_facts(ran.out) if self.pytest else ([], 0)
        status = f"killed by signal {-ran.code}" if ran.code < 0 else f"exit code {ran.code}"
        if failed > len(facts):
            status += f"; {failed} tests failed, the first {len(facts)} named above"
        wanted = ", ".join(map(str, sorted(self.pass_codes)))
        facts.append(
            Fact(
                where=f"command {shown}",
                expected=f"exit code {wanted}",
                actual=status + _tail(ran, self._tail_chars),
            )
        )
        return facts

    @property
    def _tail_chars(self) -> int:
        return 1500 if self.pytest else 600

    def _refuse_broken(self, ran: Ran, shown: str) -> None:
        """Raise the judge's error when the run says the tool broke, not the change."""
        if ran.code in self.broken:
            raise JudgeError(
                NAME, f"{shown} could not run (exit code {ran.code}): {ran.first_line()}"
            )
        module = _module(self.argv)
        if module and re.search(rf"No module named '?{re.escape(module)}'?\s*$", ran.err, re.M):
            raise JudgeError(NAME, f"{shown}: the interpreter has no module {module!r}: install it")

    def _compare_with_base(self, ran: Ran, tree: JudgeTree, key: str, shown: str) -> None:
        """Raise the judge's error when the command exits the same way at the base."""
        code = _base_code(self, tree, key)
        if code == ran.code:
            raise JudgeError(
                NAME,
                f"{shown} exits {ran.code} at the base revision {tree.base[:12]} too, so "
                f"the environment, not the change, is at fault: {ran.first_line()}",
            )

    def _argv(self, folder: str, target: str, key: str, python: str) -> list[str]:
        values = {
            "{file}": target,
            "{dir}": folder,
            "{base}": self.base,
            "{python}": python,
            "{key}": key,
        }
        argv = []
        for arg in self.argv:
            for placeholder, value in values.items():
                arg = arg.replace(placeholder, value)
            argv.append(arg)
        program = argv[0]
        if program == python:
            found = program
        elif "/" in program:
            found = os.path.join(self.base, program)
            if not (os.path.isfile(found) and os.access(found, os.X_OK)):
                raise JudgeError(NAME, f"{program} is not an executable file in {self.base}")
        else:
            which = shutil.which(program, path=os.environ.get("PATH", os.defpath))
            if which is None:
                raise JudgeError(NAME, f"{program!r} was not found on PATH")
            found = which
        return [found, *argv[1:]]


_BASE_CODES: dict[tuple[str, str, tuple[str, ...], str, str], int] = {}
_BASE_LOCK = threading.Lock()


def _base_code(run: Run, tree: JudgeTree, item: str) -> int:
    """The exit code of ``run``'s command at the base revision, run once per base and command
    (and item, when the command names it)."""
    named = any("{key}" in a for a in run.argv)
    key = (tree.root, tree.base, run.argv, item if named else "", tree.hidden or "")
    with _BASE_LOCK:
        if key not in _BASE_CODES:
            from reins.errors import WorkspaceError
            from reins.workspace.judgetree import JudgeTrees

            try:
                with JudgeTrees.of(tree).base_tree() as folder:
                    ran = run._in(folder, item, unconfined=tree.sandbox == "none",
                                  python=tree.python)  # fmt: skip
            except WorkspaceError as exc:
                raise JudgeError(NAME, f"cannot make a clean tree of the base: {exc}") from None
            _BASE_CODES[key] = -999 if ran.timed_out else ran.code
        return _BASE_CODES[key]


def _module(argv: tuple[str, ...]) -> str:
    """The module ``X -m MODULE`` runs, or ""."""
    for flag, name in itertools.pairwise(argv):
        if flag == "-m":
            return name
    return ""


def _content(submission: object) -> bytes:
    if isinstance(submission, str):
        return submission.encode("utf-8", "surrogatepass")
    return json.dumps(submission, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _tail(ran: Ran, limit: int) -> str:
    """The end of each output stream, for the fact (a failing test's report is at the end)."""
    parts = []
    for name, text in (("stderr", ran.err), ("stdout", ran.out)):
        text = text.strip()
        if text:
            parts.append(f"\n{name}: " + (text if len(text) <= limit else "…" + text[-limit:]))
    return "".join(parts)


COMMAND = CheckSpec(
    name=NAME,
    summary=(
        "a program run on the submission in a temporary folder (or in the item's workspace) "
        "exits with a passing code"
    ),
    params=CommandParams,
    build=_build,
)
