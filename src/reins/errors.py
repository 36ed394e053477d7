"""The exception tree of reins, and the exit code each branch maps to.

::

    ReinsError                   what                                     exit (an Exit)
    ├── ConfigError              bad flag, env var, reins.toml, quest     USAGE 2
    │   ├── WrongQuest           the ledger belongs to another quest
    │   └── MissingExtra         a reins-quest[extra] the quest needs is absent
    ├── NotFound(LookupError)    unknown item, quest or backend           USAGE 2
    ├── LedgerError                                                       ERROR 1
    │   ├── CorruptLedger        not a reins ledger, damaged, too new     ERROR 1
    │   ├── IllegalTransition    the ratchet refused a transition         NOT_TODO 5
    │   ├── NotTodo              the item is locked already               NOT_TODO 5
    │   └── LeaseConflict        another driver holds the item            LEASED 6
    │       └── TurnMoved        the item gained a turn since it was read
    ├── BackendError             a generator failed (never a verdict)     ERROR 1
    │   ├── BackendTimeout
    │   └── TransientError       retried inside the backend
    │       └── TransientTimeout (also a BackendTimeout)
    ├── WorkspaceError           an item's git workspace failed           ERROR 1
    ├── JudgeError               the gate itself failed: never a verdict  JUDGE_ERROR 10
    │   └── GroundError          a ground could not be resolved
    └── TurnTableError           turn.md is malformed: raised at import   ERROR 1

    ConfigError also holds DocumentError (a quest document that cannot load) and ParamError (a
    check's parameter); ParamValueError is a ParamError that is also a ValueError.

:class:`Exit` is every exit status of the ``reins`` command, each with its meaning: the one
table (docs/commands.md's and the CLI's are checked against it by tests/test_exit_codes.py).
Messages say what went wrong and what to do next; the CLI prints them in one place.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    """Every exit status of ``reins``, each with its one-line meaning (Markdown)."""

    meaning: str

    def __new__(cls, code: int, meaning: str) -> Exit:
        member = int.__new__(cls, code)
        member._value_ = code
        member.meaning = meaning
        return member

    OK = (
        0,
        (
            "success; for `submit`, the item locked PASS; for `loop`, every item is locked or a "
            "cap you set (`--max-*`) was reached"
        ),
    )
    ERROR = 1, "an error: damaged or foreign ledger, unreadable file, failure inside reins"
    USAGE = (
        2,
        (
            "usage or configuration error: bad flag, unknown item, quest or `reins.toml` key; a "
            "ledger of another quest; `submit`: the submission is empty, over `max_submission` or "
            "not UTF-8 (nothing recorded)"
        ),
    )
    NOTHING_LEFT = (
        3,
        (
            "`next`: nothing left to lease; `loop --no-wait`: the items left are all leased to "
            "other drivers; `loop --batch`: they are all leased to other drivers or batch jobs"
        ),
    )
    FAIL_RETRY = 4, "`submit`: FAIL with answers left — read the facts and submit again"
    NOT_TODO = (
        5,
        (
            "`submit`: the item is not TODO (it locked earlier); `resolve`/`reopen`: the action "
            "does not apply to the item's state"
        ),
    )
    LEASED = (
        6,
        (
            "`submit`: another driver holds the item's lease, or the lease token is stale; "
            "`release KEY`: the lease is another driver's"
        ),
    )
    BREAKER = (
        7,
        (
            "`loop`: the circuit breaker tripped (generation failed on N different items in a "
            "row, or the backend was not running at the run's first call; nothing locked)"
        ),
    )
    REPLAY_INCOMPLETE = (
        8,
        (
            "`replay`: some lines were not recorded (each is reported on stderr), and none was a "
            "judge error"
        ),
    )
    UNSOUND = (
        9,
        (
            "`ledger check`: an invariant is violated; `gate check`, `replay "
            "--check-determinism`: a rule judged differently in fresh processes"
        ),
    )
    JUDGE_ERROR = (
        10,
        (
            "the gate itself failed: `submit` recorded a judge error (no answer counted); "
            "`replay`: a line was a judge error (this outranks 8: fix the gate, then replay the "
            "file again); `loop`: the judge breaker tripped"
        ),
    )
    LOCKED_NOT_PASS = (
        11,
        ("`submit`: the item locked without a pass (DONE, REVIEW, SKIPPED or BLOCKED)"),
    )
    SET_ASIDE = (
        12,
        (
            "`loop`: items are left that this run set aside (their generation failed "
            "`--set-aside-after` times in a row; TODO, failures used unchanged)"
        ),
    )
    NOT_LANDED = (
        13,
        (
            "`land`: a PASS did not land (a merge conflict or a red land rule made it a new "
            "item to do, or it waits on one), or the whole suite fails on the integration "
            "(the branch did not move)"
        ),
    )
    SIGINT = 130, "`loop`: stopped by SIGINT (Ctrl-C), cleanly; any other command: interrupted"
    SIGTERM = 143, "`loop`: stopped by SIGTERM, cleanly"


class ReinsError(Exception):
    """Root of every error reins raises on purpose."""

    exit_code: Exit = Exit.ERROR

    def fields(self) -> dict[str, object]:
        """What a program reading ``--json`` errors gets beside the message and the exit code."""
        return {}


class ConfigError(ReinsError):
    """A bad flag, environment variable, ``reins.toml`` entry or quest definition."""

    exit_code = Exit.USAGE


class WrongQuest(ConfigError):
    """The ledger belongs to another quest: it was opened under the wrong ``--quest`` or
    ``--ledger``, and refused before anything was written.

    ``recorded`` and ``given`` are the two quests as ``(name, origin)``.
    """

    def __init__(
        self,
        message: str,
        *,
        location: str,
        recorded: tuple[str, str],
        given: tuple[str, str],
    ) -> None:
        super().__init__(message)
        self.location, self.recorded, self.given = location, recorded, given

    def fields(self) -> dict[str, object]:
        def quest(pair: tuple[str, str]) -> dict[str, str]:
            return {"name": pair[0], "origin": pair[1]}

        return {
            "ledger": self.location,
            "ledger_quest": quest(self.recorded),
            "quest": quest(self.given),
        }


class MissingExtra(ConfigError):
    """An extra of ``reins-quest`` that a quest or a backend needs is not installed: refused
    before anything is leased, judged or recorded (see :mod:`reins.extras`)."""

    def __init__(
        self, message: str, *, extras: tuple[str, ...], packages: tuple[str, ...], install: str
    ) -> None:
        super().__init__(message)
        self.extras, self.packages, self.install = extras, packages, install

    def fields(self) -> dict[str, object]:
        return {
            "extras": list(self.extras),
            "missing": list(self.packages),
            "install": self.install,
        }


class NotFound(ReinsError, LookupError):
    """An unknown item, quest or backend."""

    exit_code = Exit.USAGE

    def __str__(self) -> str:  # LookupError would quote the message like KeyError; keep it plain
        return str(self.args[0]) if self.args else ""


class LedgerError(ReinsError):
    """The ledger refused or failed an operation."""


class CorruptLedger(LedgerError):
    """The file is not a reins ledger, is damaged, or was written by a newer reins."""


class IllegalTransition(LedgerError):
    """The ratchet refused a machine transition out of a terminal state."""

    exit_code = Exit.NOT_TODO


class NotTodo(IllegalTransition):
    """A submission for an item that is already locked."""


class LeaseConflict(LedgerError):
    """Another driver holds the lease on the item, or the item changed under us."""

    exit_code = Exit.LEASED


class TurnMoved(LeaseConflict):
    """The item gained a turn since the driver read it: the record was refused, nothing written."""


class BackendError(ReinsError):
    """A generator failed: the turn records a generation error, never a verdict.

    ``unreachable``: nothing answered at all (a refused connection, an unknown host, a CLI
    that is not installed): the generator is not running, rather than failing on this prompt.
    """

    def __init__(
        self,
        message: str,
        *,
        backend: str = "",
        retryable: bool = False,
        unreachable: bool = False,
    ) -> None:
        super().__init__(message)
        self.backend = backend
        self.retryable = retryable
        self.unreachable = unreachable


class BackendTimeout(BackendError):
    """A generator did not answer in time."""


class TransientError(BackendError):
    """A failure that a later try may not repeat: connection, timeout, 429, 5xx, a cut body."""

    def __init__(
        self,
        message: str,
        *,
        backend: str = "",
        retry_after: float | None = None,
        unreachable: bool = False,
    ):
        super().__init__(message, backend=backend, retryable=True, unreachable=unreachable)
        self.retry_after = retry_after


class TransientTimeout(TransientError, BackendTimeout):
    """A request that did not finish in time; retried like any transient failure."""


class WorkspaceError(ReinsError):
    """An item's workspace could not be made, reset, read or removed (git failed, a folder is
    in the way): the loop records it as a generation error for that item, never a verdict."""


class JudgeError(ReinsError):
    """The judge itself failed: a rule, ``prepare``, a ground or an AI check raised or could not
    answer. Recorded as a judge error: no try is used, nothing locks, no prompt sees it.

    ``where`` names what failed (a rule id, ``quest.prepare``, a ground); ``cause`` is the
    exception's type and message, cut short and free of tracebacks.
    """

    exit_code = Exit.JUDGE_ERROR

    def __init__(self, where: str, cause: str) -> None:
        super().__init__(f"{where}: {cause}")
        self.where = where
        self.cause = cause


def cause_of(exc: BaseException) -> str:
    """``Type: message`` on one line, for a judge error: the message's first line that says
    something (has a letter or a digit), without terminal colour codes.

    NLTK's LookupError, for one, starts with an empty line and a row of asterisks; its first
    line alone would show as nothing. Later lines (advice to download, search paths) are left
    out: a judge error is one line, and the exception's traceback is the check author's.
    """
    import re

    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", str(exc))
    line = next((ln.strip() for ln in text.splitlines() if any(c.isalnum() for c in ln)), "")
    return f"{type(exc).__name__}: {line}" if line else type(exc).__name__


class GroundError(JudgeError):
    """A ground could not be resolved: refused, unreachable, too large, too slow or malformed."""

    def __init__(self, message: str, *, ground: str = "ground") -> None:
        super().__init__(ground, message)
        self.args = (message,)


class TurnTableError(ReinsError):
    """turn.md does not hold a well-formed, total and unambiguous record table."""


class DocumentError(ConfigError):
    """A quest document (``quest.toml``, ``gate.md``) that cannot be loaded: it names the file,
    the line and column (1-based, 0 when unknown) and what was expected there. Nothing is
    scanned or judged until every document of a quest loads."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        self.path, self.line, self.column, self.message = path, line, column, message
        where = path if line <= 0 else f"{path}:{line}" + (f":{column}" if column > 0 else "")
        super().__init__(f"{where}: {message}")


class ParamError(ConfigError):
    """A check's parameter that is missing, unknown, ill-typed or unusable. The document loader
    turns it into a :class:`DocumentError` at the parameter's position."""

    def __init__(self, check: str, param: str, message: str) -> None:
        self.check, self.param, self.message = check, param, message
        super().__init__(f"check {check}, parameter {param!r}: {message}")


class ParamValueError(ParamError, ValueError):
    """A parameter that is well-typed but unusable (a regex that does not compile, a schema file
    that is missing), raised by a check's ``build``. It is a ``ValueError`` (the contract of
    :attr:`~reins.checks.CheckSpec.build`) that also names the parameter, so the loader can
    point at it."""


def describe(exc: BaseException) -> str:
    """How an exception reads in a message: a reins error as it says itself, any other with
    its type's name first."""
    return str(exc) if isinstance(exc, ReinsError) else f"{type(exc).__name__}: {exc}"
