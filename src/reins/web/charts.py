"""Charts as numbers a template draws: a time series as SVG polylines, a histogram as bars.

Everything here is arithmetic over store values; the templates only place the results, so the
dashboard and the offline report draw the same charts and no script is needed to see them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from reins.store.model import Activity, State

WIDTH = 600
HEIGHT = 160
BINS = 40


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a histogram: its label, its value and its length as a share of the longest."""

    label: str
    value: int
    share: float


@dataclass(frozen=True, slots=True)
class TimeChart:
    """Turns and locks per minute over the run, as SVG polyline points in a WIDTH by HEIGHT box.

    ``sampled``/``read``/``total``: when the log is long the rates are estimated from ``read``
    of its ``total`` attempts (evenly spread runs of consecutive turns).
    """

    turns: str
    locks: str
    peak: float
    start: str
    end: str
    read: int
    total: int

    @property
    def empty(self) -> bool:
        return self.read == 0

    @property
    def sampled(self) -> bool:
        return self.read < self.total


def bars(values: dict[int, int] | dict[str, int]) -> tuple[Bar, ...]:
    """A histogram of ``values`` in key order, each bar sized against the largest."""
    top = max(values.values(), default=0) or 1
    return tuple(Bar(str(k), v, v / top) for k, v in sorted(values.items()))


def tries_to_lock(activity: Activity) -> dict[int, int]:
    """The try on which the gate locked each item (1 = the first answer), from the activity's
    marks, scaled to the whole log when the marks are a sample.

    ``tries_after`` counts FAILs: a PASS or REVIEW on the first answer leaves it at 0, while
    the FAIL that locks an item DONE is itself the last try.
    """
    found: dict[int, int] = {}
    for mark in activity.marks:
        if mark.locked:
            n = mark.tries_after if mark.state_after is State.DONE else mark.tries_after + 1
            found[n] = found.get(n, 0) + 1
    scale = activity.total / len(activity.marks) if activity.marks else 1.0
    return {k: round(v * scale) for k, v in found.items()}


def _time(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def time_chart(activity: Activity, bins: int = BINS) -> TimeChart:
    """Turns and locks per minute in ``bins`` equal slices of the time the log covers."""
    marks = activity.marks
    if not marks:
        return TimeChart("", "", 0.0, "", "", 0, activity.total)
    times = [_time(m.recorded_at) for m in marks]
    first, last = min(times), max(times)
    span = max(last - first, 1.0)
    bins = max(2, min(bins, int(span)))  # a slice of at least a second: no spikes of noise
    turns = [0] * bins
    locks = [0] * bins
    for at, mark in zip(times, marks, strict=True):
        slot = min(int((at - first) / span * bins), bins - 1)
        turns[slot] += 1
        locks[slot] += mark.locked
    scale = activity.total / len(marks)
    per_minute = 60.0 / (span / bins)
    turn_rates = [n * scale * per_minute for n in turns]
    lock_rates = [n * scale * per_minute for n in locks]
    peak = max(turn_rates) or 1.0

    def points(rates: list[float]) -> str:
        step = WIDTH / max(bins - 1, 1)
        return " ".join(
            f"{i * step:.1f},{HEIGHT - r / peak * (HEIGHT - 4):.1f}" for i, r in enumerate(rates)
        )

    return TimeChart(
        turns=points(turn_rates),
        locks=points(lock_rates),
        peak=peak,
        start=min(m.recorded_at for m in marks),
        end=max(m.recorded_at for m in marks),
        read=len(marks),
        total=activity.total,
    )
