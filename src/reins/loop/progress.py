"""Progress: how a loop run shows itself — a live status line, plain lines, or JSON events.

A reporter is called on the event loop: once at the start, after every recorded turn, on a timer
(``tick``), for notes, for each item set aside, for each lock an export refused, and once with
the summary. It must be quick; it never decides anything. What each line says is
:mod:`reins.loop.lines`'s.
"""

from __future__ import annotations

import shutil
import time
from typing import Protocol, TextIO

from reins.loop.events import (
    AsideEvent,
    BatchEvent,
    RefusedEvent,
    ResultsEvent,
    Status,
    Summary,
    TurnEvent,
)
from reins.loop.lines import (
    aside_text,
    batch_line,
    refused_text,
    status_line,
    summary_text,
    turn_line,
)
from reins.values import printable, readable_json

REDRAW = 0.1  # seconds between redraws of the status line
BATCH_LINGER = 2.0  # seconds a batch's progress line stays before the status line comes back


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
    """A line per turn and per note on a terminal (``err``), scrolling above a status line
    redrawn in place below them; the summary on ``out``.

    ``err`` takes the control sequences that redraw the line, so the CLI hands over the
    terminal itself, not its printable stream: every text written there is made printable here.
    """

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
        self.err.write("\r\x1b[2K" + printable(status_line(status))[: max(width - 1, 20)])
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
        """The turn's line above the status line, as a pipe gets it; then the status."""
        self._clear()
        self.err.write(printable(turn_line(event)) + "\n")
        self._draw(status, force=True)

    def tick(self, status: Status) -> None:
        self._draw(status)

    def batch(self, event: BatchEvent) -> None:
        """A batch being polled is drawn in place of the status line; the rest are notes."""
        if event.phase != "poll":
            self.note(batch_line(event))
            return
        width = shutil.get_terminal_size().columns
        self.err.write("\r\x1b[2K" + printable(batch_line(event))[: max(width - 1, 20)])
        self.err.flush()
        self._shown = True
        self._drawn = time.monotonic() + BATCH_LINGER  # the next redraws leave it be a while

    def note(self, text: str) -> None:
        self._clear()
        self.err.write(f"note: {printable(text)}\n")
        self.err.flush()

    def finish(self, summary: Summary) -> None:
        self._clear()
        self.out.write(summary_text(summary))
        self.out.flush()
