"""The MCP tools: their names, what they tell the agent, their arguments, and checking those.

Plain data, no SDK: :mod:`.mcp_server` turns :data:`TOOLS` into the protocol's tool list and
calls :func:`check_arguments` before a tool runs, so a bad argument is an error result the agent
reads and fixes, never an exception inside the server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reins.errors import ConfigError

# One paragraph every tool carries: the rules of the game, where the agent reads them.
GAME = (
    "reins runs this task as a quest: a list of items, each judged by a deterministic gate. "
    "You cannot mark anything done; only the gate can, when you submit an answer that passes "
    "it. You hold one item at a time: take it with next_item, answer it with submit, read the "
    "facts of a FAIL and submit again. Locked items never change again."
)


@dataclass(frozen=True, slots=True)
class ToolParam:
    """One argument: its JSON type (None: any JSON value), what it means, whether required."""

    name: str
    kind: str | None
    doc: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the agent sees it."""

    name: str
    doc: str
    params: tuple[ToolParam, ...] = ()
    read_only: bool = False
    only_with_proposals: bool = False

    @property
    def description(self) -> str:
        return f"{self.doc}\n\n{GAME}"

    def input_schema(self) -> dict[str, Any]:
        props: dict[str, Any] = {}
        for p in self.params:
            props[p.name] = {"description": p.doc} | ({"type": p.kind} if p.kind else {})
        return {
            "type": "object",
            "properties": props,
            "required": [p.name for p in self.params if p.required],
            "additionalProperties": False,
        }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "next_item",
        "Take your item: lease the next item to you and return its full prompt (the task, the "
        "manual, and the facts of your last FAIL on it). Asking again returns the same item "
        "until you submit it and it locks.",
    ),
    ToolSpec(
        "submit",
        "Answer your item. The gate judges the submission and the ledger records the turn; the "
        "result is the verdict: outcome, the answer it judged (answer 1 of 3), the state and "
        "the answers left, and each fact as where / expected / actual, then what to do next.",
        (
            ToolParam(
                "submission", "string", "Your answer, exactly as the prompt asks for it.", True
            ),
            ToolParam("key", "string", "The item you answer [default: your item in progress]."),
        ),
    ),
    ToolSpec(
        "board",
        "The quest's checklist: [ ] to do, [>] in progress (with its driver), [x] PASS, "
        "[?] REVIEW (a person decides), [-] locked without a pass; and what remains.",
        (ToolParam("limit", "integer", "Most items to list [default 50]."),),
        read_only=True,
    ),
    ToolSpec(
        "item_log",
        "Every attempt of one item: turn, driver, outcome, root cause, facts, submission.",
        (
            ToolParam("key", "string", "The item.", True),
            ToolParam("full", "boolean", "Whole submissions, not excerpts [default false]."),
        ),
        read_only=True,
    ),
    ToolSpec(
        "rules",
        "The gate's catalog: every rule that judges a submission, its level and what it checks.",
        read_only=True,
    ),
    ToolSpec(
        "release",
        "Give your item back unanswered, so another driver may take it (it stays to do).",
        (ToolParam("key", "string", "The item [default: every item you hold]."),),
    ),
    ToolSpec(
        "propose_item",
        "Propose a new item for the quest: it is added to do, marked as proposed by you, and "
        "the gate judges it like any other. You cannot lock, skip or delete an item.",
        (
            ToolParam("key", "string", "A new, unique key for the item.", True),
            ToolParam(
                "payload", None, "The item's data, as the quest's other items hold it.", True
            ),
            ToolParam("why", "string", "Why the quest needs this item."),
        ),
        only_with_proposals=True,
    ),
)
BY_NAME = {t.name: t for t in TOOLS}
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
}
# What a refusal calls each JSON type: the argument's, and the value given (by its Python type).
_JSON_WORDS = {"string": "a string", "integer": "an integer", "boolean": "true or false"}
_GIVEN_WORDS = {str: "a string", int: "a number", float: "a number", bool: "true or false",
                list: "an array", dict: "an object"}  # fmt: skip


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments, checked against ``spec``.

    Raises:
        ConfigError: an unknown or missing argument, or one of the wrong type; the message
            names it and what was wanted.
    """
    args = dict(arguments or {})
    known = {p.name: p for p in spec.params}
    unknown = sorted(set(args) - set(known))
    if unknown:
        takes = ", ".join(known) or "no arguments"
        raise ConfigError(
            f"{spec.name}: unknown argument(s) {', '.join(unknown)}; it takes {takes}"
        )
    for p in spec.params:
        if p.name not in args or args[p.name] is None:
            if p.required:
                raise ConfigError(f"{spec.name}: missing required argument {p.name!r}")
            args.pop(p.name, None)
            continue
        value = args[p.name]
        # JSON true is a bool, and bool is an int: refuse it where a number goes.
        wrong = p.kind is not None and (
            not isinstance(value, _JSON_TYPES[p.kind])
            or (p.kind == "integer" and isinstance(value, bool))
        )
        if wrong:
            given = _GIVEN_WORDS.get(type(value), type(value).__name__)
            wanted = _JSON_WORDS.get(p.kind or "", p.kind)
            raise ConfigError(f"{spec.name}: argument {p.name!r} must be {wanted}, not {given}")
    return args
