"""A land item: the task of landing one PASS's change onto the integration branch, as the item's
payload holds it, and the prompt that asks for it.

``reins land`` (:mod:`reins.land.integrate`) adds one when a PASS's change does not merge
onto the integration commit (a conflict), or merges and fails a land rule (red). The PASS item
itself never moves: the land item is a TODO item like any other, keyed ``land/<key>`` (then
``land/<key>/2``, … when the change needs landing again), whose payload is one object under
:data:`MARK`::

    {"reins:land": {"item": "slugify", "payload": {…the item's own…}, "branch": "integration",
                    "onto": "<C>", "commit": "<X>", "base": "<B>", "reason": "conflict",
                    "number": 1, "files": ["textkit/__init__.py"], "conflicts": ["CONFLICT …"],
                    "facts": [], "change": "diff --git …"}}

Its workspace starts from the integration commit ``onto`` (not the quest's base), and holds
``commit`` too, so that an agent can ``git merge`` it there; its patch is still taken from the
base, so the judge's tree and the gate work as for any item. The gate judges it as it judged
``item`` (that key and payload), then by the quest's land rules (:mod:`reins.turn.judge`). Its
prompt is :meth:`LandTask.render`: the quest's template cannot know these fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reins.values import JSON, Fact

MARK = "reins:land"
"""The payload's one key that makes an item a land item (reserved: no quest's own)."""
PREFIX = "land/"
CHANGE_CAP = 16_000
"""Characters of the change a land item's payload (and prompt) quotes; git holds all of it."""
REASONS = ("conflict", "red")
_COMMIT = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


def land_key(key: str, number: int) -> str:
    """The key of the ``number``-th land item of item ``key``: ``land/<key>``, then
    ``land/<key>/2``, …"""
    return f"{PREFIX}{key}" if number == 1 else f"{PREFIX}{key}/{number}"


@dataclass(frozen=True, slots=True)
class LandTask:
    """What a land item asks: land ``commit`` (item ``item``'s change) onto commit ``onto`` of
    the integration ``branch``, where it conflicted in ``files`` or failed the land rules'
    ``facts``."""

    item: str
    payload: JSON
    branch: str
    onto: str
    commit: str
    base: str
    reason: str
    number: int = 1
    files: tuple[str, ...] = ()
    conflicts: tuple[str, ...] = ()
    facts: tuple[Fact, ...] = ()
    change: str = ""

    @property
    def key(self) -> str:
        return land_key(self.item, self.number)

    def to_payload(self) -> dict[str, JSON]:
        """The land item's payload."""
        task: dict[str, JSON] = {
            "item": self.item,
            "payload": self.payload,
            "branch": self.branch,
            "onto": self.onto,
            "commit": self.commit,
            "base": self.base,
            "reason": self.reason,
            "number": self.number,
            "files": list(self.files),
            "conflicts": list(self.conflicts),
            "facts": [dict(f.to_dict()) for f in self.facts],
            "change": clipped(self.change),
        }
        return {MARK: task}

    @classmethod
    def of(cls, payload: JSON) -> LandTask | None:
        """The task a payload holds, or None when it is no land item's (a payload of the
        quest's own, or one whose task is not whole)."""
        task = payload.get(MARK) if isinstance(payload, Mapping) else None
        if not isinstance(task, Mapping):
            return None
        texts = {name: task.get(name) for name in ("item", "branch", "reason", "change")}
        commits = {name: task.get(name) for name in ("onto", "commit", "base")}
        number = task.get("number")
        words = {k: v for k, v in {**texts, **commits}.items() if isinstance(v, str)}
        if len(words) != len(texts) + len(commits) or not words["item"]:
            return None
        if not all(_COMMIT.fullmatch(words[name]) for name in commits):
            return None
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            return None
        if words["reason"] not in REASONS:
            return None
        return cls(
            words["item"], task.get("payload"), words["branch"], words["onto"], words["commit"],
            words["base"], words["reason"], number, _texts(task.get("files")),
            _texts(task.get("conflicts")), _facts(task.get("facts")), words["change"],
        )  # fmt: skip

    def render(self) -> str:
        """The task's prompt: what to land where, why it did not land, the change itself."""
        head = (
            f"Land the change of item {self.item} onto the integration branch {self.branch}.\n\n"
            f"Your repository starts at the integration commit {self.onto}: every change landed "
            f"so far. The change to land is commit {self.commit}, which passed the gate on its "
            "own; it is in your repository too, so you can `git merge "
            f"{self.commit}` there.\n\n"
        )
        body = self._conflict() if self.reason == "conflict" else self._red()
        change = clipped(self.change)
        fence = "`" * max(3, max((len(r) for r in re.findall(r"`+", change)), default=0) + 1)
        shown = change if change.endswith("\n") else change + "\n"
        tail = (
            "\n\nKeep what the integration holds and add what the change does, so that both "
            f"work. The gate judges the result as it judged item {self.item}, then by the land "
            "rules. What the change does (a diff from where it and the integration part):\n\n"
            f"{fence}diff\n{shown}{fence}\n"
        )
        return head + body + tail

    def _conflict(self) -> str:
        listed = "\n".join(f"- {name}" for name in self.files) or "- (git named no file)"
        said = "".join(f"\n  {line}" for line in self.conflicts[:20])
        return f"Merged onto the integration commit, it conflicts in these files:\n\n{listed}" + (
            f"\n\ngit said:{said}" if said else ""
        )

    def _red(self) -> str:
        facts = "\n".join(
            f"- {f.rule}: {f.where}: expected {f.expected}; actual {f.actual}" for f in self.facts
        )
        return (
            "It merges cleanly onto the integration commit, but the merged tree fails the land "
            f"rules:\n\n{facts or '- (no fact was left)'}"
        )


def clipped(change: str) -> str:
    """``change`` cut at :data:`CHANGE_CAP` characters, saying how much was left out."""
    if len(change) <= CHANGE_CAP:
        return change
    left = len(change) - CHANGE_CAP
    return change[:CHANGE_CAP] + f"\n… ({left} more characters: `git diff` shows them all)\n"


def _texts(value: object) -> tuple[str, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def _facts(value: object) -> tuple[Fact, ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return ()
    found = []
    for entry in value:
        if isinstance(entry, Mapping) and all(
            isinstance(entry.get(k, ""), str) for k in ("rule", "where", "expected", "actual")
        ):
            values = {k: str(entry.get(k, "")) for k in ("where", "expected", "actual", "rule")}
            found.append(Fact(**values, level=str(entry.get("level", ""))))
    return tuple(found)
