"""Views: the texts a driver reads, rendered once for every surface (the CLI, the MCP server).

``reins next`` and the MCP tool ``next_item`` print the same leased prompt, ``status --todo``
and ``board`` the same checklist, ``log`` and ``item_log`` the same log, ``rules`` the same
catalog: each is this module's function, so the two surfaces cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from reins.gate import CatalogEntry
from reins.gate.wording import answer_of, failures_of, judged_answer, state_meaning, state_short
from reins.quest import Quest
from reins.store.model import Attempt, AttemptKind, Item
from reins.values import Prompt

if TYPE_CHECKING:
    from reins.turn.raised import Raised

# The checklist's marks: [x] passed, [?] waiting for a person, [-] locked without a pass;
# a TODO item is [>] while someone holds its lease, else [ ].
MARKS = {"PASS": "x", "REVIEW": "?", "DONE": "-", "SKIPPED": "-", "BLOCKED": "-"}


def leased_prompt(quest: Quest, item: Item, prompt: Prompt, driver: str) -> str:
    """The header line and the full prompt of a leased item, as ``reins next`` prints them."""
    header = (
        f"# item {item.key} · {answer_of(item.tries + 1, quest.max_tries)} · "
        f"turn {item.turns + 1} · leased to {driver}"
    )
    return f"{header}\n{prompt.text().rstrip(chr(10))}\n"


def mark(item: Item, now: float) -> str:
    """The item's checklist mark (``>`` only while its lease is live)."""
    leased = item.lease_owner is not None and (item.lease_expires or 0) > now
    return MARKS.get(item.state, ">" if leased else " ")


def board_lines(items: Iterable[Item], now: float, *, max_tries: int | None) -> list[str]:
    """One checklist line per item: ``[mark] key  (state, or the answer next[, who is on
    it])``, DONE with what it means."""
    lines = []
    for item in items:
        m = mark(item, now)
        if item.state.terminal:
            note = state_meaning(item.state)
        else:
            note = f"{answer_of(item.tries + 1, max_tries)} next"
        if m == ">":
            note += f", {item.lease_owner} is on it"
        lines.append(f"[{m}] {item.key}  ({note})")
    return lines


def log_text(
    item: Item, attempts: Sequence[Attempt], *, max_tries: int | None, full: bool = False
) -> str:
    """Every attempt of an item, as ``reins log KEY`` prints it."""
    from reins.gate import excerpt

    rejected = bool(attempts) and attempts[-1].action == "reject"  # a person's DONE, no try's
    dropped = bool(attempts) and attempts[-1].action == "drop"
    out = [
        f"{item.key}: {state_meaning(item.state, rejected=rejected, dropped=dropped)}, "
        f"{failures_of(item.tries, max_tries)}, {len(attempts)} turn(s)"
    ]
    for a in attempts:
        who = a.driver + (f" via {a.usage.backend}" if a.usage.backend else "")
        if a.notes.batch:
            who += f" (batch {a.notes.batch})"
        if a.notes.temperature is not None:  # the retry policy's (facts@0.8), not the spec's
            who += f" at temperature {a.notes.temperature:g} ({a.policy})"
        after = state_short(
            a.state_after, rejected=a.action == "reject", dropped=a.action == "drop"
        )
        what = f"{label(a, answers=True, max_tries=max_tries)} → {after}"
        out.append(f"\nturn {a.turn} · {a.recorded_at} · {who} · {what}")
        if a.error:
            out.append(f"  error: {a.error}")
        if a.note:
            out.append(f"  note: {a.note}")
        n = a.notes
        if n.branch:  # a coding agent's turn: where its work is
            commit = f" at {n.commit[:12]}" if n.commit else ""
            confined = " UNCONFINED (--sandbox none)" if n.sandbox == "none" else ""
            out.append(
                f"  workspace: branch {n.branch}{commit} (base {(n.base or '')[:12]}){confined}"
            )
        if n.refused:
            out.append(f"  network: {n.refused} connection(s) refused: {n.refused_to or ''}")
        if a.root_cause:
            out.append(f"  root cause: {a.root_cause}")
        for f in a.facts:
            out.append(f"  - {f.rule}: {f.where}  expected {f.expected!r}, actual {f.actual!r}")
        if a.submission is not None:
            text = a.submission if full else excerpt(a.submission, 300)
            out.append("  submission: " + text.replace("\n", "\n    "))
    return "\n".join(out) + "\n"


def label(a: Attempt, *, answers: bool = False, max_tries: int | None = None) -> str:
    """What happened in a turn, in a few words: the log's and the dashboard's timeline's.

    With ``answers``, a judged turn names its answer: ``FAIL on answer 1 of 3`` (given
    ``max_tries``), ``FAIL on answer 1`` (None: the quest is not known).
    """
    judged = a.outcome or "judged"
    k = judged_answer(a.outcome, a.tries_after)
    if answers and k is not None:
        judged += f" on {answer_of(k, max_tries)}"
    what = {
        AttemptKind.JUDGED: judged,
        AttemptKind.GENERATION_ERROR: "generation error",
        AttemptKind.JUDGE_ERROR: "judge error",
        AttemptKind.HUMAN: f"{a.action} by a person" + (f" ({a.outcome})" if a.outcome else ""),
    }[a.kind]
    return what + (f" · round {a.round}" if a.round > 1 else "")


def rules_text(
    catalog: Sequence[CatalogEntry],
    beside: Sequence[Raised] = (),
    coaching: Mapping[str, str] | None = None,
) -> str:
    """Every fact a quest can raise, as ``reins rules`` prints it: the gate's catalog, then
    what its prepare and reins raise beside it (``beside``), each with its coaching."""
    coaching = coaching or {}
    width = max((len(e.id) for e in catalog), default=4)
    pad = f"{'':<6} {'':<{width}}  "
    out = []
    for e in catalog:
        out.append(f"{e.level.value:<6} {e.id:<{width}}  {e.description}")
        if e.check and e.description != f"{e.check}: {e.parameters}".rstrip(": "):
            # a declared rule with its own description: show what actually runs
            call = f"{e.check}: {e.parameters}" if e.parameters else e.check
            out.append(f"{pad}check: {call}")
        if e.supersedes:
            out.append(f"{pad}supersedes: {', '.join(e.supersedes)}")
        if e.needs:
            out.append(f"{pad}needs: {', '.join(e.needs)}")
        if coaching.get(e.id):
            out.append(f"{pad}coaching: {coaching[e.id]}")
    if beside:
        out.append("")
        out.append(
            "raised beside the gate (by the quest's prepare, by reins itself, or by a land rule "
            "after each merge of `reins land`):"
        )
        width = max(len(r.id) for r in beside)
        pad = f"{'':<6} {'':<{width}}  "
        for r in beside:
            out.append(f"{r.level.value:<6} {r.id:<{width}}  {r.description} ({r.by})")
            if r.coaching:
                out.append(f"{pad}coaching: {r.coaching}")
    return "".join(line + "\n" for line in out)
