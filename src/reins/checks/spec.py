"""What a check of the standard library is: a name, typed parameters, and a builder.

A rule in ``gate.md`` names a check and gives its parameters (a TOML inline table). When the
document loads, the parameters are validated against the check's :class:`Param` list, so a
missing or ill-typed parameter is refused with the file, line and column before anything is
judged; then :attr:`CheckSpec.build` turns the validated parameters into the rule's check.

A built check reads a gate :class:`~reins.gate.Context` and returns ``None`` (nothing wrong), a
:class:`~reins.values.Fact`, or several facts. Each fact may carry its own ``level`` (FAIL or
REVIEW); the gate caps it at the rule's level, and at REVIEW for a check whose ``ceiling`` is
REVIEW (``ai``). A check that cannot judge (its data is missing, a command cannot start) raises
:class:`~reins.errors.JudgeError`: that is the judge's failure and never costs the generator a
try. Everything in the submission is hostile input.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from reins.gate.rule import Context, Level
from reins.values import Fact

ParamType = Literal["str", "int", "float", "bool", "list[str]", "json", "path"]
"""The types a parameter may have. ``json`` is any TOML value (table, array, scalar); ``path``
is a string in the path syntax of :mod:`reins.checks.paths` (``submission.who``,
``submission.people[*].name``, ``item.date``, ``source``, ``key``), checked when the gate
loads."""

Outcome = Fact | Iterable[Fact] | None
BuiltCheck = Callable[[Context], Outcome]
Params = Mapping[str, object]


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: object = _Required()
"""The default of a parameter that must be given."""

BASE = "__base__"
"""The reserved parameter that tells a check where its quest lives.

The loader adds it to the validated parameters it passes to :attr:`CheckSpec.build`: the
folder that holds ``gate.md``, as a string. A parameter that names a file (``json_schema``'s
``schema = "schema.json"``) is read relative to it. It is never declared in a check's
:class:`Param` list and never written in ``gate.md``; :func:`reins.checks.validate` passes it
through untouched. Without it (a check built by hand), files are relative to the current
directory: see :func:`base_dir`.
"""


def base_dir(params: Params) -> str:
    """The folder a check reads its files from: ``params["__base__"]``, else ``"."``."""
    base = params.get(BASE)
    return base if isinstance(base, str) and base else "."


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a check: its name, type, one line of help, and a default."""

    name: str
    type: ParamType
    help: str
    default: object = REQUIRED

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """A check of the library.

    Args:
        name: what ``gate.md`` calls it (``json_schema``, ``regex``, …).
        summary: one line for ``docs/checks.md`` and error messages.
        params: the parameters it takes; unknown ones are refused at load.
        build: validated parameters (plus the reserved :data:`BASE`) → the check. May raise
            ``ValueError`` for a parameter value that is well-typed but unusable (a regex that
            does not compile): the loader reports it at the parameter's position. The library's
            checks raise :class:`~reins.errors.ParamValueError`, a ``ValueError`` that names
            the parameter in its ``param`` attribute.
        ceiling: the most a fact of this check may weigh (REVIEW for ``ai``), or None.
    """

    name: str
    summary: str
    params: tuple[Param, ...]
    build: Callable[[Params], BuiltCheck]
    ceiling: Level | None = None
