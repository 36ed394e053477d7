"""The dashboard's words and figures, through Starlette's TestClient on both engines: one
vocabulary for tries and outcomes on every page ("answer k of N", "failures used f of N", DONE
saying it is unsolved), the board's feed of recent turns, the items list's last driver and
relative time, and the throughput chart's axes.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reins.store.model import Activity, AttemptKind, Mark, State
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.turn.lane import resolve
from reins.web.report import write_html
from tests.kit import TINY
from tests.kit.web import HOSTILE_KEY, Ledger, client, text_of, web_ledger


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def test_every_page_says_which_answer_of_how_many(ledger: Ledger, tmp_path: Path) -> None:
    web = client(ledger.store)
    item = text_of(web.get("/item", params={"key": "a"}).text)
    assert "FAIL (not-bad) → TODO, 1 of 3 failures used" in item
    assert "PASS on answer 2 of 3 → PASS" in item
    assert "PASS · 1 of 3 failures used · 2 turn(s)" in item
    assert "answer 1 of 3 next" in text_of(web.get("/item", params={"key": "d"}).text)
    items = web.get("/items").text
    assert "<th>failures used</th>" in items and "<th>tries</th>" not in items
    row = re.search(r">a</a></td>.*?</tr>", items, re.S)
    assert row is not None and '<td class="n">1 of 3</td>' in row.group(0)
    review = text_of(web.get("/review").text)
    assert "REVIEW on answer 1 of 3 · root cause not-meh" in review
    board = text_of(web.get("/").text)
    assert "Answer on which the gate locked" in board and "answer 2 1 lock" in board
    assert "Failures used per item (of 3 answers allowed)" in board and "1 of 3 1 item" in board
    assert "Tries" not in board
    report = tmp_path / "report.html"
    write_html(ledger.store, TINY, report)
    shown = text_of(report.read_text())
    assert "failures used" in shown and "REVIEW on answer 1 of 3" in shown
    # Without the quest the answers allowed are unknown: the count stands alone.
    bare = text_of(client(ledger.store, quest=None).get("/item", params={"key": "a"}).text)
    assert "FAIL (not-bad) → TODO, 1 failure used" in bare


def test_done_says_it_is_unsolved_on_every_page(ledger: Ledger, tmp_path: Path) -> None:
    resolve(ledger.store, TINY, "c", accept=False, note="no", by="cy")
    for _ in range(3):
        submit(ledger.store, TINY, "d", "bad", driver="ann")
    assert ledger.store.get("d").state is State.DONE
    web = client(ledger.store)
    item = text_of(web.get("/item", params={"key": "d"}).text)
    assert "DONE — out of tries, not passed · 3 of 3 failures used" in item
    assert "FAIL (not-bad) → DONE (unsolved), 3 of 3 failures used" in item
    assert "DONE (unsolved)" in text_of(web.get("/items", params={"state": "DONE"}).text)
    board = web.get("/").text
    assert re.search(
        r'title="DONE — out of tries, not passed"><span class="name">DONE \(unsolved\)', board
    )
    assert "reject by a person → DONE (rejected)" in text_of(board)  # the person's, no try's
    report = tmp_path / "report.html"
    write_html(ledger.store, TINY, report)
    assert "DONE (unsolved)" in report.read_text()
    # The state's name is kept where a program reads it: the filter's value, the figures.
    assert '<option value="DONE">DONE (unsolved)</option>' in web.get("/items").text
    assert 'data-count="DONE">2<' in board


def test_the_feed_words_a_turn_as_the_loop_prints_it(ledger: Ledger) -> None:
    """One wording of a turn: the loop's line ("FAIL (r) → TODO, 1 of 3 failures used") and
    the dashboard's feed said the same FAIL differently ("failures used 1 of 3")."""
    from reins.loop.events import TurnEvent
    from reins.loop.lines import turn_line
    from reins.web.board import board
    from reins.web.words import answer

    submit(ledger.store, TINY, "d", "bad", driver="ann")
    feed = board(ledger.store, TINY).feed
    judged = [r for r in feed if r.attempt.judged]
    assert {r.attempt.outcome for r in judged} == {"FAIL", "PASS", "REVIEW"}
    for r in judged:
        a = r.attempt
        event = TurnEvent(
            a.key, a.turn, a.kind.value, a.outcome, a.state_after.value, a.tries_after,
            TINY.max_tries, a.root_cause, "via", None, 0, a.policy, "", None, None, None, None,
            a.error, a.feedback, answer(a),
        )  # fmt: skip
        line = turn_line(event)
        assert line == f"turn {a.turn} · {a.key} · {r.what} · via", (line, r.what)


def test_the_board_feeds_the_newest_turns(ledger: Ledger) -> None:
    board = client(ledger.store).get("/").text
    feed = re.search(r'<ol class="feed" id="feed">(.*?)</ol>', board, re.S)
    assert feed is not None
    lines = [text_of(li) for li in re.findall(r"<li.*?</li>", feed.group(1), re.S)]
    assert all(re.fullmatch(r"just now|\d+ s ago", line.split(" · ")[0]) for line in lines)
    assert [line.split(" · ", 1)[1] for line in lines] == [
        f"<b>bo</b> · {HOSTILE_KEY} · REVIEW (not-meh) on answer 1 of 3 → REVIEW",
        "ann · c · REVIEW (not-meh) on answer 1 of 3 → REVIEW",
        "ann · b · REVIEW (not-meh) on answer 1 of 3 → REVIEW",
        "ann · a · PASS on answer 2 of 3 → PASS",
        "ann · a · FAIL (not-bad) → TODO, 1 of 3 failures used",
    ]
    assert 'href="/item?key=a#turn-2"' in feed.group(1)
    assert "&lt;b&gt;bo&lt;/b&gt;" in feed.group(1)  # a driver's name is text, never markup
    # A person's action is a turn too.
    resolve(ledger.store, TINY, "b", accept=True, note="fine", by="pat")
    assert "pat · b · accept by a person → PASS" in text_of(client(ledger.store).get("/").text)


def test_the_feed_holds_the_newest_twelve_turns(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    store = store_harness.open(location)
    try:
        keys = [f"k{i:02d}" for i in range(30)]
        store.add((k, {"word": k}) for k in keys)
        for k in keys:
            submit(store, TINY, k, "good", driver="ann")
        board = client(store).get("/").text
    finally:
        store.close()
    feed = re.search(r'<ol class="feed" id="feed">(.*?)</ol>', board, re.S)
    assert feed is not None
    shown = re.findall(r'class="key" href="/item\?key=(k\d\d)', feed.group(1))
    assert shown == [f"k{i:02d}" for i in range(29, 17, -1)]  # the newest twelve, newest first


def test_the_items_list_shows_the_last_driver_and_how_long_ago(ledger: Ledger) -> None:
    page = client(ledger.store).get("/items").text
    rows = {
        text_of(key): row
        for key, row in re.findall(r'class="key">([^<]*)</a>(.*?)</tr>', page, re.S)
    }
    assert re.search(r'<td class="driver">ann</td>', rows["a"])
    assert '<td class="driver">&lt;b&gt;bo&lt;/b&gt;</td>' in rows[HOSTILE_KEY]
    assert '<td class="driver"></td>' in rows["d"]  # no turn yet
    a = ledger.store.get("a")
    when = re.search(r'<time datetime="([^"]+)" title="([^"]+)">([^<]+)</time>', rows["a"])
    assert when is not None and when.group(1) == a.updated_at
    stamp = datetime.fromisoformat(a.updated_at).astimezone(UTC)
    assert when.group(2) == stamp.strftime("%Y-%m-%d %H:%M:%S UTC")
    assert re.fullmatch(r"just now|\d+ s ago", when.group(3))
    assert "<th>last driver</th>" in page and "<th>updated</th>" in page


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (-30, "just now"),  # a clock a little ahead of the server's
        (3, "just now"),
        (42, "42 s ago"),
        (3 * 60 + 20, "3 min ago"),
        (5 * 3600 + 59, "5 h ago"),
        (86_400 + 5, "1 day ago"),
        (9 * 86_400, "9 days ago"),
        (400 * 86_400, "2024-11-26"),
    ],
)
def test_how_long_ago_reads(seconds: int, said: str) -> None:
    from reins.web.words import ago

    now = datetime(2025, 12, 31, 12, 0, tzinfo=UTC).timestamp()
    stamp = datetime.fromtimestamp(now - seconds, UTC).isoformat().replace("+00:00", "Z")
    assert ago(stamp, now) == said


def test_the_throughput_chart_has_a_scale_and_readable_times() -> None:
    from reins.web.charts import time_chart

    start = datetime(2026, 3, 4, 14, 0, tzinfo=UTC).timestamp()
    marks = tuple(
        Mark(
            datetime.fromtimestamp(start + 18 * i, UTC).isoformat().replace("+00:00", "Z"),
            AttemptKind.JUDGED,
            State.PASS if i % 3 == 0 else State.TODO,
            0,
        )
        for i in range(101)  # a turn every 18 s for 30 minutes
    )
    chart = time_chart(Activity(marks, len(marks)))
    assert [t.text for t in chart.times] == ["14:00", "14:10", "14:20", "14:30"]
    assert [round(t.at, 3) for t in chart.times] == [0.0, 0.333, 0.667, 1.0]
    assert [t.anchor for t in chart.times] == ["start", "middle", "middle", "end"]
    rates = [float(t.text) for t in chart.rates]
    assert rates[0] == 0 and rates[-1] == chart.top >= chart.peak > rates[-2]
    steps = {round(b - a, 6) for a, b in itertools.pairwise(rates)}
    assert len(steps) == 1 and steps.pop() in (1.0, 2.0, 5.0)  # one round step
    assert chart.start == "2026-03-04 14:00:00 UTC" and chart.end == "2026-03-04 14:30:00 UTC"


def test_the_board_draws_the_chart_with_its_axes(ledger: Ledger) -> None:
    board = client(ledger.store).get("/").text
    chart = re.search(r'<svg class="chart".*?<p class="legend"', board, re.S)
    assert chart is not None
    rates = re.findall(r'<text class="tick" x="2"[^>]*>([^<]+)</text>', chart.group(0))
    times = re.findall(r'<text class="tick" x="[\d.]+%"[^>]*>([^<]+)</text>', chart.group(0))
    assert len(rates) >= 2 and rates[0] == "0" and rates[-1].endswith(" per min")
    assert len(times) >= 2 and all(re.fullmatch(r"\d\d:\d\d:\d\d", t) for t in times)
    assert "UTC" in text_of(board[board.index('class="legend"') :])


def test_a_run_of_seconds_still_labels_both_ends() -> None:
    from reins.web.charts import time_chart

    at = "2026-03-04T14:00:00.200Z", "2026-03-04T14:00:00.900Z"
    marks = tuple(Mark(t, AttemptKind.JUDGED, State.PASS, 0) for t in at)
    chart = time_chart(Activity(marks, 2))
    assert len(chart.times) >= 2 and all(re.fullmatch(r"14:00:0\d", t.text) for t in chart.times)
