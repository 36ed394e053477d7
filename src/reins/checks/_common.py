"""What the library's checks share: how values are shown in facts, and walked."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

from reins.checks.paths import Path, member
from reins.errors import JudgeError
from reins.gate.rule import Context
from reins.values import Fact

EXCERPT = 200


def excerpt(value: object, limit: int = EXCERPT) -> str:
    """``value`` as short text for a fact: strings as they are, anything else as JSON."""
    text = value if isinstance(value, str) else to_json(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more)"


def to_json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True, default=repr)
    except (ValueError, RecursionError):
        return repr(value)


def type_name(value: object) -> str:
    """The JSON name of ``value``'s type (``string``, ``number``, ``object``, …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def texts(path: Path, ctx: Context) -> Iterator[tuple[str, str | None, object]]:
    """Each value ``path`` reaches, as ``(location, text or None, value)``: None when the
    value is not a string (the check turns that into a fact: wrong types are facts)."""
    for where, value in path.resolve(ctx):
        yield where, value if isinstance(value, str) else None, value


def not_text(where: str, value: object) -> Fact:
    return Fact(where=where, expected="text", actual=f"{type_name(value)} {excerpt(value, 80)}")


def nothing_at(path: Path, expected: str) -> Fact:
    return Fact(where=str(path), expected=expected, actual="nothing there")


def leaves(where: str, value: object) -> Iterator[tuple[str, object]]:
    """The scalar values inside ``value`` with their locations: arrays and objects are walked
    (iteratively: a hostile submission may nest deeper than Python's recursion limit)."""
    stack: list[tuple[str, object]] = [(where, value)]
    while stack:
        here, current = stack.pop()
        if isinstance(current, list):
            stack.extend((f"{here}[{i}]", v) for i, v in reversed(list(enumerate(current))))
        elif isinstance(current, dict):
            items = list(current.items())
            stack.extend((member(here, str(k)), v) for k, v in reversed(items))
        else:
            yield here, current


_ITEM_FIELD = re.compile(r"\{item\.([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")


def has_fields(text: str) -> bool:
    """Whether ``text`` names the item's key or a field of its payload for :func:`filled`."""
    return "{key}" in text or _ITEM_FIELD.search(text) is not None


def blanked(text: str) -> str:
    """``text`` with each value :func:`filled` would write a plain word: what a check of the
    text at load, before any item, can read."""
    return _ITEM_FIELD.sub("x", text.replace("{key}", "x"))


def filled(
    text: str, ctx: Context, *, check: str, escape: Callable[[str], str] | None = None
) -> str:
    """``text`` with ``{key}`` the item's key and ``{item.FIELD}`` a field of its payload
    (dotted for a nested one): a scanned item's ``{item.test}`` or ``{item.path}``.

    A value is one argument, never split; one that would read as an option (it starts with
    ``-``) is refused, since an item's payload may come from a scan or an agent's proposal.
    With ``escape`` (``re.escape`` for a pattern) each value is written through it instead,
    so it stands for itself and nothing else, and no value is refused for its ``-``.

    Raises:
        JudgeError: the payload has no such field, or its value is not a string or a number,
            or starts with ``-`` (the item's fault, not the change's: no try is used).
    """

    def value(match: re.Match[str]) -> str:
        found: object = ctx.payload
        for part in match.group(1).split("."):
            found = found.get(part) if isinstance(found, dict) else None
        if isinstance(found, bool) or not isinstance(found, str | int | float):
            raise JudgeError(check, f"item {ctx.key!r} has no field {match.group(1)!r} "
                                    f"(a string or a number) for {match.group(0)}")  # fmt: skip
        if escape is not None:
            return escape(str(found))
        if str(found).startswith("-"):
            raise JudgeError(check, f"item {ctx.key!r}: {match.group(0)} is {str(found)[:60]!r}, "
                                    "which would read as an option")  # fmt: skip
        return str(found)

    key = ctx.key if escape is None else escape(ctx.key)
    return _ITEM_FIELD.sub(value, text.replace("{key}", key))
