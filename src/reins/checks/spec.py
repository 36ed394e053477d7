"""What a check of the standard library is: a name, its parameters as a dataclass, a builder.

A rule in ``gate.md`` names a check and gives its parameters (a TOML inline table). A check
declares the parameters it takes as a frozen dataclass: each field's type and default are the
declaration, and the docstring written under a field is its one line of help in
``docs/checks.md``. When the document loads, :func:`reins.checks.validate` reads the table
into that dataclass (:mod:`reins.checks.params`), so a missing, unknown or ill-typed parameter
is refused with the file, line and column before anything is judged; then
:attr:`CheckSpec.build` turns the instance into the rule's check.

A built check reads a gate :class:`~reins.gate.Context` and returns ``None`` (nothing wrong), a
:class:`~reins.values.Fact`, or several facts. Each fact may carry its own ``level`` (FAIL or
REVIEW); the gate caps it at the rule's level, and at REVIEW for a check whose ``ceiling`` is
REVIEW (``ai``). A check that cannot judge (its data is missing, a command cannot start) raises
:class:`~reins.errors.JudgeError`: that is the judge's failure and never costs the generator a
try. Everything in the submission is hostile input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, NewType, TypeVar

from reins.gate.rule import Context, Level
from reins.values import Fact

Outcome = Fact | Iterable[Fact] | None
BuiltCheck = Callable[[Context], Outcome]
P = TypeVar("P")

BASE = "__base__"
"""The reserved key of the given parameters that tells a check where its quest lives.

The loader adds it to the parameters it validates: the folder that holds ``gate.md``, as a
string. A check that reads files declares a field of type :data:`QuestFolder`, which receives
it (``"."`` without it: a check built by hand reads files relative to the current directory).
It is never written in ``gate.md``; a check that declares no such field ignores it.
"""

QuestFolder = NewType("QuestFolder", str)
"""The type of the parameters field that receives the quest folder (:data:`BASE`). A file a
parameter names (``json_schema``'s ``schema = "schema.json"``) is read relative to it."""

CWD = QuestFolder(".")
"""The quest folder of a check built without one: the current directory. The default of a
:data:`QuestFolder` field (``base: QuestFolder = CWD``)."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: object = _Required()
"""The default of a parameter that must be given."""


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter as its check's dataclass declares it, for docs and messages.

    ``type`` is how ``docs/checks.md`` writes the field's type (``str``, ``int``, ``path``,
    ``list[str]``, ``json``, ``str | list[str]``…); ``help`` is the docstring under the field.
    """

    name: str
    type: str
    help: str
    default: object = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True, slots=True)
class CheckSpec(Generic[P]):
    """A check of the library.

    Args:
        name: what ``gate.md`` calls it (``json_schema``, ``regex``, …).
        summary: one line for ``docs/checks.md`` and error messages.
        params: the frozen dataclass of its parameters; unknown ones are refused at load.
        build: the validated parameters → the check. May raise ``ValueError`` for a value that
            is well-typed but unusable (a regex that does not compile): the loader reports it
            at the parameter's position. The library's checks raise
            :class:`~reins.errors.ParamValueError`, a ``ValueError`` that names the parameter in
            its ``param`` attribute (a ``__post_init__`` of the dataclass may raise it too).
        ceiling: the most a fact of this check may weigh (REVIEW for ``ai``), or None.
    """

    name: str
    summary: str
    params: type[P]
    build: Callable[[P], BuiltCheck]
    ceiling: Level | None = None
