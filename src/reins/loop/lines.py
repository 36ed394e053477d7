"""The loop's lines: what a run says of its status, a turn, a batch, an item set aside, a lock
not exported and its end, in the words every surface uses (:mod:`reins.gate.wording`).

The reporters of :mod:`reins.loop.progress` print them; the status line and the summary are
what a person reads of a run, ``--json`` carries the same events as data.
"""

from __future__ import annotations

from reins.gate.wording import UNSOLVED, answer_of, failures_of, state_short
from reins.loop.events import AsideEvent, BatchEvent, RefusedEvent, Status, Summary, TurnEvent, some
from reins.store.model import State

LOCKED = (State.PASS, State.REVIEW, State.DONE, State.SKIPPED, State.BLOCKED)


def status_line(s: Status) -> str:
    """``12/40 done · 28 left · PASS 9 REVIEW 1 DONE 2 · 37 turns · 8.1/s · …``."""
    named = {State.DONE: f"{UNSOLVED} (DONE)"}
    locked = " ".join(
        f"{named.get(st, st.value)} {s.counts.get(st, 0)}" for st in LOCKED if s.counts.get(st)
    )
    parts = [f"{s.done}/{s.total} done", f"{s.remaining} left"]
    if locked:
        parts.append(locked)
    turns = f"{s.turns} turns"
    errors = [
        f"{n} {what} error{'' if n == 1 else 's'}"
        for n, what in ((s.generation_errors, "generation"), (s.judge_errors, "judge"))
        if n
    ]
    if errors:
        turns += f" ({', '.join(errors)})"
    parts += [turns, f"{s.turns_per_second:.1f} turns/s"]
    if s.input_tokens or s.output_tokens:
        parts.append(f"{s.input_tokens + s.output_tokens:,} tokens")
    if s.cost or s.unpriced:
        parts.append(cost_text(s.cost, s.unpriced))
    parts += [clock(s.elapsed), f"{s.in_flight} in flight"]
    return " · ".join(parts)


def turn_line(e: TurnEvent) -> str:
    """One turn: ``turn 2 · key · FAIL (r) → TODO, 1 of 3 failures used · backend``, or
    ``turn 3 · key · PASS on answer 2 of 3 → PASS · backend``."""
    head = f"turn {e.turn} · {e.key} · "
    via = e.backend + (f" (escalated by {e.escalated_by})" if e.escalated_by else "")
    if e.kind == "judge_error":
        return f"{head}judge error: {e.error} · the gate failed, no answer counted · {via}"
    if e.kind != "judged":
        return f"{head}generation error: {e.error} · no answer counted · {via}"
    cause = f" ({e.root_cause})" if e.root_cause else ""
    if e.outcome == "FAIL":
        used = failures_of(e.tries, e.max_tries)
        return f"{head}FAIL{cause} → {state_short(e.state)}, {used} · {via}"
    k = answer_of(e.answer or e.tries + 1, e.max_tries)
    return f"{head}{e.outcome}{cause} on {k} → {state_short(e.state)} · {via}"


def batch_line(e: BatchEvent) -> str:
    """``batch job 3 · openai batch_1 · in_progress · 12/500 recorded · total 500, … · 2:31``."""
    where = f"{e.backend} {e.batch_id}" if e.batch_id else f"{e.backend}:{e.model}"
    parts = [f"batch job {e.job}", where]
    if e.status:
        parts.append(e.status)
    parts.append(f"{e.done}/{e.requests} recorded")
    if e.counts:
        parts.append(", ".join(f"{k} {v}" for k, v in e.counts.items()))
    parts.append(clock(e.elapsed))
    line = " · ".join(parts)
    return f"{line}: {e.message}" if e.message else line


def aside_text(e: AsideEvent) -> str:
    """Why an item was set aside, and what became of it."""
    if e.errors == 0:  # not errors: the item's own budget is spent
        return (
            f"set aside {e.key!r} for the rest of this run: {e.error}. It stays TODO, tries "
            f"{e.tries}/{e.max_tries}; the other items go on"
        )
    errors = f"{e.errors} generation error{'' if e.errors == 1 else 's'}"
    return (
        f"set aside {e.key!r} for the rest of this run: {errors} in a row (the last: "
        f"{e.error}). It stays TODO, {failures_of(e.tries, e.max_tries)}; the other items go on"
    )


def refused_text(e: RefusedEvent) -> str:
    """Why a locked item was not exported."""
    return f"not exported: {e.reason} (`reins ledger check` lists it)"


def locked_text(locked: dict[str, int]) -> str:
    """``PASS 6, REVIEW 3, unsolved (DONE) 21``: the locks of a run, in the states' order."""
    order = [st.value for st in LOCKED] + sorted(set(locked) - {st.value for st in LOCKED})
    named = {State.DONE.value: f"{UNSOLVED} (DONE)"}
    return ", ".join(f"{named.get(k, k)} {locked[k]}" for k in order if locked.get(k)) or "none"


def summary_text(s: Summary) -> str:
    """The final summary, a few lines of text."""
    locked = locked_text(s.locked)
    lines = [
        f"loop {s.reason.value}: {s.message}",
        f"  turns {s.turns} ({s.judged} judged, {s.generation_errors} generation errors, "
        f"{s.judge_errors} judge errors) "
        f"in {clock(s.elapsed)}, {s.turns_per_second:.1f} turns/s",
        f"  locked this run: {locked}; {s.remaining} of {s.total} item(s) left",
    ]
    if s.set_aside:
        lines.append(f"  set aside this run: {some(s.set_aside)}")
    if s.escalated:
        lines.append(f"  turns on the stronger backend: {s.escalated}")
    if s.input_tokens or s.output_tokens or s.cost:
        cost = cost_text(s.cost, s.unpriced)
        lines.append(f"  tokens {s.input_tokens} in / {s.output_tokens} out, {cost}")
    if s.exported:
        lines.append(f"  exported {s.exported} record(s)")
    if s.refused:
        lines.append(
            f"  refused to export {len(s.refused)} item(s) whose lock no attempt produced: "
            f"{some(s.refused)} (`reins ledger check` lists them)"
        )
    if s.sandbox == "none":
        lines.append("  coding agents ran UNCONFINED (--sandbox none)")
    return "\n".join(lines) + "\n"


def cost_text(cost: float, unpriced: int) -> str:
    """``cost 0.1234``; ``cost unknown`` when no turn had a price; or the priced turns' cost
    and how many turns it leaves out."""
    if not unpriced:
        return f"cost {cost:.4f}"
    turns = f"{unpriced} turn{'' if unpriced == 1 else 's'}"
    if not cost:
        return f"cost unknown (no price for the model: {turns})"
    return f"cost {cost:.4f} + unknown ({turns} with no price)"


def clock(seconds: float) -> str:
    """``0:04`` or ``1:02:03``."""
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"
