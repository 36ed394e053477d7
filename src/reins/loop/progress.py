"""Progress: how a loop run shows itself — a live status line, plain lines, or JSON events.

A reporter is called on the event loop: once at the start, after every recorded turn, on a timer
(``tick``), for notes, for each item set aside, for each lock an export refused, and once with
the summary. It must be quick; it never decides anything.
"""

from __future__ import annotations

import shutil
import time
from typing import Protocol, TextIO

from reins.gate.wording import UNSOLVED, answer_of, failures_of, state_short
from reins.loop.events import (
    AsideEvent,
    BatchEvent,
    RefusedEvent,
    ResultsEvent,
    Status,
    Summary,
    TurnEvent,
    some,
)
from reins.store.model import State
from reins.values import readable_json

REDRAW = 0.1  # seconds between redraws of the status line
BATCH_LINGER = 2.0  # seconds a batch's progress line stays before the status line comes back
LOCKED = (State.PASS, State.REVIEW, State.DONE, State.SKIPPED, State.BLOCKED)


class Reporter(Protocol):
    """Receives what a run does."""

    def start(self, status: Status) -> None: ...

    def turn(self, event: TurnEvent, status: Status) -> None: ...

    def tick(self, status: Status) -> None: ...

    def note(self, text: str) -> None: ...

    def aside(self, event: AsideEvent) -> None: ...

    def refused(self, event: RefusedEvent) -> None: ...

    def batch(self, event: BatchEvent) -> None: ...

    def results(self, event: ResultsEvent) -> None: ...

    def finish(self, summary: Summary) -> None: ...


class NullReporter:
    """Shows nothing (the library's default)."""

    def start(self, status: Status) -> None:
        pass

    def turn(self, event: TurnEvent, status: Status) -> None:
        pass

    def tick(self, status: Status) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def aside(self, event: AsideEvent) -> None:
        """An item set aside: a note, unless the reporter writes events of its own."""
        self.note(aside_text(event))

    def refused(self, event: RefusedEvent) -> None:
        """A lock the export refused: a note, unless the reporter writes events of its own."""
        self.note(refused_text(event))

    def batch(self, event: BatchEvent) -> None:
        """A batch job's progress: a note, unless the reporter writes events of its own."""
        self.note(batch_line(event))

    def results(self, event: ResultsEvent) -> None:
        """Trouble in a batch's results files: a note, unless the reporter writes events."""
        self.note(event.message)

    def finish(self, summary: Summary) -> None:
        pass


class JsonReporter(NullReporter):
    """One JSON object per line: an event per turn, notes, and the summary last. A lock the
    export refused is said on ``err`` too, when given: tampering is for a person to see."""

    def __init__(self, out: TextIO, err: TextIO | None = None) -> None:
        self.out = out
        self.err = err

    def _emit(self, data: dict[str, object]) -> None:
        self.out.write(readable_json(data) + "\n")
        self.out.flush()

    def turn(self, event: TurnEvent, status: Status) -> None:
        self._emit(event.to_json())

    def note(self, text: str) -> None:
        self._emit({"event": "note", "message": text})

    def aside(self, event: AsideEvent) -> None:
        self._emit(event.to_json())

    def refused(self, event: RefusedEvent) -> None:
        self._emit(event.to_json())
        if self.err is not None:
            self.err.write(f"note: {refused_text(event)}\n")
            self.err.flush()

    def batch(self, event: BatchEvent) -> None:
        self._emit(event.to_json())

    def results(self, event: ResultsEvent) -> None:
        self._emit(event.to_json())

    def finish(self, summary: Summary) -> None:
        self._emit(summary.to_json())


class LineReporter(NullReporter):
    """A plain line per turn on ``out`` (for logs and pipes), notes on ``err``, the summary."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err

    def turn(self, event: TurnEvent, status: Status) -> None:
        self.out.write(turn_line(event) + "\n")
        self.out.flush()

    def note(self, text: str) -> None:
        self.err.write(f"note: {text}\n")
        self.err.flush()

    def finish(self, summary: Summary) -> None:
        self.out.write(summary_text(summary))
        self.out.flush()


class TtyReporter(NullReporter):
    """A status line redrawn in place on a terminal (``err``); the summary on ``out``."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out = out
        self.err = err
        self._drawn = 0.0
        self._shown = False

    def _draw(self, status: Status, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._drawn < REDRAW:
            return
        self._drawn = now
        # A line wider than the terminal would wrap, and \r could no longer redraw it.
        width = shutil.get_terminal_size().columns
        self.err.write("\r\x1b[2K" + status_line(status)[: max(width - 1, 20)])
        self.err.flush()
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self.err.write("\r\x1b[2K")
            self.err.flush()
            self._shown = False

    def start(self, status: Status) -> None:
        self._draw(status, force=True)

    def turn(self, event: TurnEvent, status: Status) -> None:
        self._draw(status)

    def tick(self, status: Status) -> None:
        self._draw(status)

    def batch(self, event: BatchEvent) -> None:
        """A batch being polled is drawn in place of the status line; the rest are notes."""
        if event.phase != "poll":
            self.note(batch_line(event))
            return
        width = shutil.get_terminal_size().columns
        self.err.write("\r\x1b[2K" + batch_line(event)[: max(width - 1, 20)])
        self.err.flush()
        self._shown = True
        self._drawn = time.monotonic() + BATCH_LINGER  # the next redraws leave it be a while

    def note(self, text: str) -> None:
        self._clear()
        self.err.write(f"note: {text}\n")
        self.err.flush()

    def finish(self, summary: Summary) -> None:
        self._clear()
        self.out.write(summary_text(summary))
        self.out.flush()


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
    if s.cost:
        parts.append(f"cost {s.cost:.4f}")
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
        lines.append(f"  tokens {s.input_tokens} in / {s.output_tokens} out, cost {s.cost:.4f}")
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


def clock(seconds: float) -> str:
    """``0:04`` or ``1:02:03``."""
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"
