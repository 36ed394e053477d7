"""The dashboard's routes and their security, through Starlette's TestClient, on both engines.

Pages read through the Store protocol; actions go through the human lane and record the same
turns as the CLI; a state-changing request without the CSRF token, from another origin, to a
read-only server, or without the access token (tests/test_web_access.py) is refused and writes
nothing; and everything a generator wrote is escaped on every page.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins.store.model import AttemptKind, State
from reins.testing import FakeBackend
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.turn.lane import reopen
from reins.web.report import write_html
from reins.web.security import Guard
from tests.kit import LENIENT, TINY, Cli
from tests.kit.loopkit import loop
from tests.kit.web import (
    HOSTILE_KEY,
    LOCAL,
    RAW_MARKERS,
    Ledger,
    client,
    counts_on,
    csrf_of,
    web_ledger,
)


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    """A ledger of the tiny quest with a REVIEW item, a FAIL then PASS, a hostile item, on
    each engine."""
    with web_ledger(store_harness) as found:
        yield found


def test_the_board_shows_the_counts_status_reports(ledger: Ledger) -> None:
    page = client(ledger.store).get("/")
    assert page.status_code == 200
    stats = ledger.store.stats()
    want = {s.value: n for s, n in stats.counts.items()} | {"total": stats.total}
    assert counts_on(page.text) == want
    assert want["REVIEW"] == 3 and want["PASS"] == 1
    assert 'data-figure="remaining">1<' in page.text
    assert "not-meh" in page.text and "not-bad" in page.text  # the rules table
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert page.headers["x-frame-options"] == "DENY"


def test_the_pulse_moves_when_a_turn_lands(ledger: Ledger) -> None:
    web = client(ledger.store)
    before = web.get("/api/pulse").json()["version"]
    assert web.get("/api/pulse").json()["version"] == before
    submit(ledger.store, TINY, "d", "bad", driver="ann")
    after = web.get("/api/pulse").json()["version"]
    assert after != before
    fragment = web.get("/?fragment=1").text
    assert "<html" not in fragment and counts_on(fragment)["TODO"] == 1


def test_accept_and_reject_record_what_reins_resolve_records(ledger: Ledger) -> None:
    web = client(ledger.store)
    page = web.get("/review")
    assert page.status_code == 200 and ">b</a>" in page.text and ">c</a>" in page.text
    token = csrf_of(page.text)
    accepted = web.post(
        "/review/resolve",
        data={"csrf": token, "key": "b", "decision": "accept", "note": "fine in context"},
    )
    assert accepted.status_code == 303 and accepted.headers["location"].startswith("/review")
    rejected = web.post(
        "/review/resolve",
        data={"csrf": token, "key": "c", "decision": "reject", "note": "no", "by": "cy"},
    )
    assert rejected.status_code == 303
    assert ledger.store.get("b").state is State.PASS
    assert ledger.store.get("c").state is State.DONE
    for key, action, who, note in (("b", "accept", "web-user", "fine in context"),):
        last = ledger.store.snapshot(key)[1][-1]
        assert (last.kind, last.action, last.driver, last.note) == (
            AttemptKind.HUMAN,
            action,
            who,
            note,
        )
    assert ledger.store.snapshot("c")[1][-1].driver == "cy"
    # The human table's rules hold here too: a settled item cannot be settled again.
    again = web.post(
        "/review/resolve", data={"csrf": token, "key": "b", "decision": "reject", "note": "x"}
    )
    assert again.status_code == 409 and ledger.store.get("b").state is State.PASS
    assert ">b</a>" not in web.get("/review").text


def test_a_post_without_the_csrf_token_is_refused_and_writes_nothing(ledger: Ledger) -> None:
    web = client(ledger.store)
    before = ledger.store.snapshot("b")
    form = {"key": "b", "decision": "accept", "note": "sneaky"}
    assert web.post("/review/resolve", data=form).status_code == 403
    assert web.post("/review/resolve", data={**form, "csrf": "guess"}).status_code == 403
    # From another site, even a right token (were it ever leaked) is refused.
    token = csrf_of(web.get("/review").text)
    foreign = web.post(
        "/review/resolve",
        data={**form, "csrf": token},
        headers={"origin": "http://evil.example"},
    )
    assert foreign.status_code == 403
    assert web.post("/item/reopen", data={"key": "a", "reason": "x"}).status_code == 403
    assert ledger.store.snapshot("b") == before
    assert ledger.store.get("a").state is State.PASS
    # Another server's token is not this one's.
    other = client(ledger.store)
    assert other.post("/review/resolve", data={**form, "csrf": token}).status_code == 403
    assert ledger.store.snapshot("b") == before


def test_off_loopback_every_request_needs_the_token(ledger: Ledger) -> None:
    guard = Guard.for_host("0.0.0.0")
    web = client(ledger.store, guard=guard, base_url="http://192.0.2.7:8765", with_token=False)
    for path in ("/", "/items", "/review", "/api/pulse", "/item?key=a", "/static/reins.js"):
        assert web.get(path).status_code == 401, path
    assert web.get("/", params={"token": "wrong"}).status_code == 401
    assert web.get("/", headers={"authorization": "Bearer nope"}).status_code == 401
    assert web.post("/review/resolve", data={"key": "b"}).status_code == 401
    # The printed link sets a cookie and takes the token out of the address.
    opened = web.get("/items", params={"token": guard.token, "state": "REVIEW"})
    assert opened.status_code == 303 and opened.headers["location"] == "/items?state=REVIEW"
    assert f"{guard.cookie}=" in opened.headers["set-cookie"]
    assert "httponly" in opened.headers["set-cookie"].lower()
    assert web.get("/items?state=REVIEW").status_code == 200  # the cookie carries it
    bearer = client(ledger.store, guard=guard, base_url="http://192.0.2.7:8765", with_token=False)
    auth = {"authorization": f"Bearer {guard.token}"}
    assert bearer.get("/", headers=auth).status_code == 200


def test_on_loopback_a_foreign_host_name_is_refused(ledger: Ledger) -> None:
    """A site that points its own name at 127.0.0.1 (DNS rebinding) reads nothing."""
    rebound = client(ledger.store, base_url="http://rebind.example:8765", with_token=False)
    assert rebound.get("/").status_code == 421
    for host in ("http://localhost:8765", "http://[::1]:8765", LOCAL):
        assert client(ledger.store, base_url=host).get("/").status_code == 200, host
    reading_too = Guard.for_host("127.0.0.1", token_to_read=True)
    assert client(ledger.store, guard=reading_too, with_token=False).get("/").status_code == 401


def test_read_only_offers_no_action_and_refuses_every_post(ledger: Ledger) -> None:
    web = client(ledger.store, read_only=True)
    review = web.get("/review").text
    # Forms that look (the review queue's filter) stay; none that act.
    assert 'method="post"' not in review and "read-only" in review
    assert "<form" not in web.get("/item?key=a").text
    before = ledger.store.snapshot("b")
    form = {"key": "b", "decision": "accept", "note": "x", "csrf": "anything"}
    assert web.post("/review/resolve", data=form).status_code in (404, 405)
    assert web.post("/item/reopen", data={"key": "a", "reason": "x"}).status_code in (404, 405)
    assert ledger.store.snapshot("b") == before
    # Without the quest there is no human table to act by: no forms either.
    assert 'method="post"' not in client(ledger.store, quest=None).get("/review").text


def test_what_a_generator_wrote_is_escaped_on_every_page(ledger: Ledger, tmp_path: Path) -> None:
    web = client(ledger.store)
    key = {"key": HOSTILE_KEY}
    pages = {
        "board": web.get("/").text,
        "items": web.get("/items").text,
        "search": web.get("/items", params={"q": "<script>"}).text,
        "item": web.get("/item", params=key).text,
        "review": web.get("/review").text,
        "rejudge": client(ledger.store, LENIENT).get("/rejudge").text,
        "missing": web.get("/item", params={"key": "<script>alert('x')</script>"}).text,
    }
    report = tmp_path / "report.html"
    write_html(ledger.store, TINY, report)
    pages["report"] = report.read_text()
    for name, html in pages.items():
        for raw in RAW_MARKERS:
            assert raw not in html, (name, raw)
    assert "&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;" in pages["item"]
    assert "&lt;img src=x onerror=alert(&#39;submission&#39;)&gt;" in pages["item"]
    assert "&lt;b&gt;bo&lt;/b&gt;" in pages["item"]
    assert "&lt;script&gt;" in pages["search"] and "&lt;script&gt;" in pages["rejudge"]


def test_items_filter_search_sort_and_page(ledger: Ledger) -> None:
    web = client(ledger.store)

    def keys(**query: str) -> list[str]:
        page = web.get("/items", params=query)
        assert page.status_code == 200
        return re.findall(r'class="key">([^<]*)<', page.text)

    assert keys(state="REVIEW") == ["b", "c", "&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;"]
    assert keys(rule="not-meh", q="b") == ["b"]
    assert keys(q="script", state="REVIEW") == ["&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;"]
    assert keys(round="1", state="TODO") == ["d"]
    assert keys(round="2") == []
    assert keys(sort="newest", limit="2")[0].startswith("&lt;script&gt;")
    first = web.get("/items", params={"limit": "2"}).text
    assert re.findall(r'class="key">([^<]*)<', first) == ["a", "b"]
    following = re.search(r'href="/items\?([^"]+)" id="next-page"', first)
    assert following is not None
    second = web.get("/items?" + following.group(1).replace("&amp;", "&")).text
    assert re.findall(r'class="key">([^<]*)<', second) == ["c", "d"]
    assert web.get("/items", params={"state": "NOPE"}).status_code == 400
    assert web.get("/items", params={"round": "x"}).status_code == 400
    assert web.get("/items", params={"limit": "100000"}).status_code == 400


def test_the_item_page_is_the_whole_log_with_diffs(ledger: Ledger) -> None:
    web = client(ledger.store)
    page = web.get("/item", params={"key": "a"}).text
    assert page.count('class="turn kind-judged"') == 2
    assert "Say &#39;good&#39; for a." in page  # each turn's prompt, composed again
    assert "## Your last submission failed the gate" in page  # turn 2 quotes turn 1's FAIL
    assert '<span class="ddel">-bad one</span>' in page
    assert '<span class="dadd">+good one</span>' in page
    assert "<td>not-bad</td><td>answer</td>" in page  # facts: rule, where, expected, actual
    assert web.get("/item", params={"key": "zzz"}).status_code == 404


def test_reopen_from_the_item_page_records_a_new_round(ledger: Ledger) -> None:
    web = client(ledger.store)
    page = web.get("/item", params={"key": "a"}).text
    done = web.post(
        "/item/reopen", data={"csrf": csrf_of(page), "key": "a", "reason": "check again"}
    )
    assert done.status_code == 303
    item, log = ledger.store.snapshot("a")
    assert (item.state, item.round) == (State.TODO, 2)
    assert (log[-1].action, log[-1].note, log[-1].driver) == ("reopen", "check again", "web-user")
    assert 'class="turn kind-human"' in web.get("/item", params={"key": "a"}).text


def test_the_rejudge_preview_lists_changes_and_records_nothing(ledger: Ledger) -> None:
    before = ledger.store.stats()
    page = client(ledger.store, LENIENT).get("/rejudge", params={"state": "REVIEW"})
    assert page.status_code == 200
    assert re.findall(
        r'<td class="state-REVIEW">REVIEW</td>\s*<td>REVIEW \(not-meh\) on answer 1 of 3</td>'
        r"\s*<td>PASS \(-\)</td>",
        page.text,
    )
    assert ">b</a>" in page.text and ">c</a>" in page.text
    assert ledger.store.stats() == before
    same = client(ledger.store).get("/rejudge").text
    assert ">b</a>" not in same  # under the gate that judged them nothing changes


def test_another_site_cannot_set_a_rejudge_preview_off(ledger: Ledger) -> None:
    web = client(ledger.store, LENIENT)
    for site in ("cross-site", "same-site"):  # same-site: another port of this host
        page = web.get("/rejudge", headers={"sec-fetch-site": site})
        assert page.status_code == 403 and ">b</a>" not in page.text
    ours = web.get(
        "/rejudge", params={"state": "REVIEW"}, headers={"sec-fetch-site": "same-origin"}
    )
    assert ours.status_code == 200 and ">b</a>" in ours.text


def test_a_loop_recorded_prompt_is_shown_with_its_digest_checked(tmp_path: Path) -> None:
    from reins import SQLiteStore

    path = tmp_path / "tiny.reins.db"
    with SQLiteStore.open(path, create=True) as led:
        led.add([("k", {"word": "k"})])
    loop(path, FakeBackend(["bad", "good"]))
    with SQLiteStore.open(path) as led:
        page = client(led).get("/item", params={"key": "k"}).text
    assert page.count("matches the recorded digest") == 2
    assert "via fake" in page


def test_reins_report_writes_a_self_contained_page(
    ledger: Ledger, tmp_path: Path, cli: Cli
) -> None:
    cli.ledger = ledger.location

    def reins(*args: str) -> str:
        out = cli(*args)
        assert out.exit_code == 0, out.output
        return out.stdout

    target = tmp_path / "report.html"
    assert json.loads(reins("report", "--html", str(target), "--json")) == {"html": str(target)}
    html = target.read_text()
    status = json.loads(reins("status", "--json"))
    assert counts_on(html) == {**status["counts"], "total": status["total"]}
    # Nothing to fetch: no script, no stylesheet link, no address but the page's own.
    assert "<script" not in html and "<link" not in html
    assert not re.findall(r'(?:src|href)="(?!#)', html)
    assert "Review queue" in html and "<form" not in html
    figures = json.loads(reins("report", "--json"))
    assert figures["counts"] == status["counts"] and figures["remaining"] == 1
    assert figures["rules"]["not-meh"] == {"fired": 3, "root_cause": 3}
    text = reins("report")
    assert "REVIEW 3" in text and "remaining 1" in text and "not-meh" in text


def test_the_html_report_is_readable_by_its_owner_only(
    ledger: Ledger, tmp_path: Path, cli: Cli
) -> None:
    """It holds submissions and payloads, as the results file does: mode 0600, like it, even
    over a page an earlier reins wrote world-readable."""
    target = tmp_path / "report.html"
    target.write_text("old")
    target.chmod(0o644)
    out = cli("--ledger", ledger.location, "report", "--html", str(target))
    assert out.exit_code == 0, out.output
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    assert "Review queue" in target.read_text()  # with the submissions waiting for a person


def test_a_quest_that_cannot_render_an_item_still_shows_its_log(ledger: Ledger) -> None:
    def broken(item: object) -> str:
        raise KeyError("word")

    page = client(ledger.store, dataclasses.replace(TINY, render=broken)).get("/item?key=a")
    assert page.status_code == 200
    assert "the prompt cannot be composed again: KeyError" in page.text
    assert "good one" in page.text


def test_tries_to_lock_counts_the_try_that_locked() -> None:
    from reins.store.model import Activity, Mark
    from reins.web.charts import tries_to_lock

    at = "2026-12-01T00:00:00+00:00"
    marks = (
        Mark(at, AttemptKind.JUDGED, State.PASS, 0),  # passed on the first answer
        Mark(at, AttemptKind.JUDGED, State.TODO, 1),  # a FAIL: not a lock
        Mark(at, AttemptKind.JUDGED, State.REVIEW, 1),  # doubt raised on the second
        Mark(at, AttemptKind.JUDGED, State.DONE, 3),  # the third FAIL locked it
        Mark(at, AttemptKind.HUMAN, State.PASS, 1),  # a person's accept is not the gate's lock
    )
    assert tries_to_lock(Activity(marks, len(marks))) == {1: 1, 2: 1, 3: 1}


def test_answers_that_locked_count_each_locked_item_once_after_a_reopen(ledger: Ledger) -> None:
    """A lock a person reopened no longer stands: "locked on answer" adds up to the items
    locked (it counted 10 locks for 9 items after a reopen)."""
    from reins.web.board import board
    from reins.web.charts import tries_to_lock

    store = ledger.store
    reopen(store, TINY, "a", reason="look again", by="ann")  # a: PASS on answer 2, reopened
    submit(store, TINY, "a", "good", driver="ann")  # locked again, on answer 1 of round 2
    submit(store, TINY, "d", "good", driver="ann")
    locked = store.stats().total - store.stats().remaining
    found = tries_to_lock(store.activity())
    assert sum(found.values()) == locked == 5  # a, d, and three REVIEW items
    assert found == {1: 5}
    shown = board(store, TINY).tries_to_lock
    assert [(b.label, b.value) for b in shown] == [("1", 5)]


def test_serve_on_a_port_in_use_is_a_clear_error(ledger: Ledger, cli: Cli) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        out = cli("--ledger", ledger.location, "serve", "--port", str(port))
    assert out.exit_code == 2, out.output
    assert f"cannot listen on 127.0.0.1:{port}" in out.output
    assert "Traceback" not in out.output
