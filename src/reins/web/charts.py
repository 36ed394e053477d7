"""Charts as numbers a template draws: a time series as SVG polylines, a histogram as bars.

Everything here is arithmetic over store values; the templates only place the results, so the
dashboard and the offline report draw the same charts and no script is needed to see them.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

from reins.store.model import Activity, AttemptKind, State

WIDTH = 600  # the plot's own coordinates; the page stretches it to its width
HEIGHT = 150
BINS = 40
# Steps the time axis may tick at, in seconds: round times a person reads at a glance.
TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600,
              43_200, 86_400, 172_800, 604_800, 2_592_000)  # fmt: skip
MOST_TICKS = 4  # intervals on the time axis at most, so its labels fit a phone's width


@dataclass(frozen=True, slots=True)
class Bar:
    """One bar of a histogram: its label, its value and its length as a share of the longest."""

    label: str
    value: int
    share: float


@dataclass(frozen=True, slots=True)
class Tick:
    """A mark on an axis: where (a share of the axis, 0..1, from its start) and its label."""

    at: float
    text: str

    @property
    def anchor(self) -> str:
        """How its label hangs (an SVG text-anchor): inward at the ends, so none is cut."""
        return "start" if self.at < 0.08 else "end" if self.at > 0.92 else "middle"


@dataclass(frozen=True, slots=True)
class TimeChart:
    """Turns and locks per minute over the run, as SVG polyline points in a WIDTH by HEIGHT
    box, with the scale of each axis: ``rates`` (turns per minute, 0 to ``top``) and
    ``times`` (UTC, from ``start`` to ``end``).

    ``sampled``/``read``/``total``: when the log is long the rates are estimated from ``read``
    of its ``total`` attempts (evenly spread runs of consecutive turns).
    """

    turns: str
    locks: str
    peak: float
    top: float
    rates: tuple[Tick, ...]
    times: tuple[Tick, ...]
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


def bars(values: dict[int, int]) -> tuple[Bar, ...]:
    """A histogram of ``values`` in key order, each bar sized against the largest."""
    top = max(values.values(), default=0) or 1
    return tuple(Bar(str(k), v, v / top) for k, v in sorted(values.items()))


def tries_to_lock(activity: Activity) -> dict[int, int]:
    """The answer on which the gate locked each item (1 = the first), from the activity's
    marks, scaled to the whole log when the marks are a sample.

    ``tries_after`` counts FAILs: a PASS or REVIEW on the first answer leaves it at 0, while
    the FAIL that locks an item DONE is itself the last try. A lock a person undid since (a
    reopen, or a re-judge that failed, sends the item back to TODO) no longer stands: an item
    counts once, at its standing lock, so the bars add up to the items locked.
    """
    standing: dict[int, int] = {}  # item → the answer of its standing lock
    unnamed: list[int] = []  # the locks of marks that name no item
    for mark in activity.marks:
        if mark.locked:
            n = mark.tries_after if mark.state_after is State.DONE else mark.tries_after + 1
            if mark.item is None:
                unnamed.append(n)
            else:
                standing[mark.item] = n
        elif mark.kind is AttemptKind.HUMAN and mark.state_after is State.TODO and mark.item:
            standing.pop(mark.item, None)  # a person sent it back: its lock stands no more
    found = Counter([*standing.values(), *unnamed])
    scale = activity.total / len(activity.marks) if activity.marks else 1.0
    return {k: round(v * scale) for k, v in found.items()}


def _time(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def nice_step(raw: float) -> float:
    """The round step (1, 2 or 5 times a power of ten) nearest above ``raw``."""
    if raw <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if raw <= m * power * (1 + 1e-9))


def rate_ticks(peak: float) -> tuple[float, tuple[Tick, ...]]:
    """The top of the rate axis (a round number at or above ``peak``) and its ticks."""
    step = nice_step(peak / 3)
    n = max(1, math.ceil(peak / step - 1e-9))
    digits = max(0, -math.floor(math.log10(step)))
    top = step * n
    return top, tuple(Tick(i / n, f"{step * i:.{digits}f}") for i in range(n + 1))


def time_ticks(first: float, span: float) -> tuple[Tick, ...]:
    """Ticks at round UTC times within ``first`` .. ``first + span`` (seconds); the two ends
    when fewer than two round times fall within."""
    step = next((s for s in TIME_STEPS if span / s <= MOST_TICKS), TIME_STEPS[-1])
    shape = "%H:%M:%S" if step < 60 else "%H:%M" if step < 86_400 else "%b %d"
    at = math.ceil(first / step) * step
    ticks = []
    while at <= first + span:
        text = datetime.fromtimestamp(at, UTC).strftime(shape)
        ticks.append(Tick((at - first) / span, text))
        at += step
    if len(ticks) < 2:  # a run of a second or two: its two ends say more than one round time
        return tuple(
            Tick(share, datetime.fromtimestamp(first + share * span, UTC).strftime("%H:%M:%S"))
            for share in (0.0, 1.0)
        )
    return tuple(ticks)


def _stamp(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def time_chart(activity: Activity, bins: int = BINS) -> TimeChart:
    """Turns and locks per minute in ``bins`` equal slices of the time the log covers."""
    marks = activity.marks
    if not marks:
        return TimeChart("", "", 0.0, 1.0, (), (), "", "", 0, activity.total)
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
    peak = max(turn_rates)
    top, rates = rate_ticks(peak)

    def points(values: list[float]) -> str:
        # Each slice at its middle, so the time axis below reads true.
        return " ".join(
            f"{(i + 0.5) / bins * WIDTH:.1f},{HEIGHT - r / top * HEIGHT:.1f}"
            for i, r in enumerate(values)
        )

    return TimeChart(
        turns=points(turn_rates),
        locks=points(lock_rates),
        peak=peak,
        top=top,
        rates=rates,
        times=time_ticks(first, span),
        start=_stamp(first),
        end=_stamp(first + span),
        read=len(marks),
        total=activity.total,
    )
