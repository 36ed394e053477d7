"""What ``--json`` writes: one frozen value per shape, each turning itself into JSON.

A shape's fields are its keys, in the order written; programs read them, so a key is never
renamed, moved or dropped (tests/test_cli_json.py pins every command's). The modules below
hold the shapes of one group of commands each; this one holds what they share.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from reins.errors import ReinsError
    from reins.store.export import Exported
    from reins.store.owner import Owner


class Shape(Protocol):
    """Anything ``emit_json`` writes: a value that says what it is as JSON."""

    def to_json(self) -> dict[str, Any]: ...


class Plain:
    """A shape whose keys are its dataclass fields, in order. A field holding shapes (alone,
    in a tuple or as a dict's values) or facts is written as their JSON; tuples as lists."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        return {f.name: _field(getattr(self, f.name)) for f in fields(self)}  # type: ignore[arg-type]


def _field(value: object) -> object:
    if isinstance(value, tuple):
        return [_one(v) for v in value]
    if isinstance(value, dict):
        return {k: _one(v) for k, v in value.items()}
    return _one(value)


def _one(value: object) -> object:
    # Shapes, and a Fact (the values layer's, with its own to_dict), become JSON objects; a
    # payload and every other plain value is left as it is.
    to_json = getattr(value, "to_json", None) or getattr(value, "to_dict", None)
    return to_json() if callable(to_json) else value


@dataclass(frozen=True, slots=True)
class Failure:
    """An error under ``--json``: its message and exit code, then the error's own fields."""

    error: str
    exit_code: int
    fields: dict[str, object]

    @classmethod
    def of(cls, exc: ReinsError) -> Failure:
        return cls(str(exc), int(exc.exit_code), exc.fields())

    def to_json(self) -> dict[str, Any]:
        return {"error": self.error, "exit_code": self.exit_code, **self.fields}


@dataclass(frozen=True, slots=True)
class QuestRef(Plain):
    """The quest a ledger belongs to: its name, compared, and where it was loaded from."""

    name: str
    origin: str

    @classmethod
    def of(cls, owner: Owner | None) -> QuestRef | None:
        return None if owner is None else cls(owner.name, owner.origin)


@dataclass(frozen=True, slots=True)
class Refused(Plain):
    """A locked item an export refused to write, because no attempt produced its lock:
    ``reason`` says how, in the words ``reins ledger check`` uses."""

    key: str
    state: str
    reason: str

    @classmethod
    def all_of(cls, exported: Exported) -> tuple[Refused, ...]:
        return tuple(cls(f.key, f.state, f.words()) for f in exported.refused)
