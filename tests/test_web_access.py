"""The access token on loopback: every request that changes state carries it, on both engines.

Any local process can reach a loopback port (a coding agent sharing the network, a script), read
the review page and the CSRF token in it: the token, printed in the link ``reins serve`` shows at
start, is what tells the person's browser from them. Without it a post is refused (401) and
records nothing, whatever name its form gives; a page read without it offers no action and says
how to get one; with it (the link's cookie, or ``Authorization: Bearer``) the same post records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from reins import SQLiteStore
from reins.store.model import AttemptKind, State
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.web.app import create_app
from reins.web.security import Guard
from tests.kit import TINY
from tests.kit.web import Ledger, client, client_of, csrf_of, web_ledger

ACCEPT_AS_ANN = {"key": "b", "decision": "accept", "note": "looks fine", "by": "ann"}


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def test_a_local_script_without_the_token_cannot_accept_as_anyone(ledger: Ledger) -> None:
    """What an agent did on loopback: read /review, take the CSRF field, accept "as ann"."""
    guard = Guard.for_host("127.0.0.1")
    script = client(ledger.store, guard=guard, with_token=False)
    page = script.get("/review")
    assert page.status_code == 200  # reading stays open on loopback
    scraped = re.search(r'name="csrf" value="([^"]+)"', page.text)
    # A page read without the token shows no form, so no CSRF field either: the script is given
    # the right one, to show that the access token alone refuses it.
    csrf = scraped.group(1) if scraped else guard.csrf
    before = ledger.store.snapshot("b")
    refused = script.post("/review/resolve", data={**ACCEPT_AS_ANN, "csrf": csrf})
    assert refused.status_code == 401
    assert "access token" in refused.text and "reins serve" in refused.text
    assert ledger.store.get("b").state is State.REVIEW
    assert ledger.store.snapshot("b") == before
    # Every other action is refused alike, its CSRF token and the header form of it too.
    for path, form in (
        ("/review/claim", {"key": "b", "by": "ann"}),
        ("/review/release", {"key": "b", "by": "ann"}),
        ("/review/undo", {"key": "b", "turn": "1", "by": "ann"}),
        ("/item/reopen", {"key": "a", "reason": "again", "by": "ann"}),
    ):
        answer = script.post(path, data={**form, "csrf": csrf}, headers={"x-csrf-token": csrf})
        assert answer.status_code == 401, path
    assert ledger.store.snapshot("b") == before and ledger.store.get("b").lease_owner is None
    assert ledger.store.get("a").state is State.PASS
    assert ledger.store.decisions(limit=10).attempts == ()


def test_the_same_script_with_the_token_records_the_accept(ledger: Ledger) -> None:
    guard = Guard.for_host("127.0.0.1")
    browser = client(ledger.store, guard=guard)  # opened the printed link: the cookie carries it
    csrf = csrf_of(browser.get("/review").text)
    done = browser.post("/review/resolve", data={**ACCEPT_AS_ANN, "csrf": csrf})
    assert done.status_code == 303
    last = ledger.store.snapshot("b")[1][-1]
    assert (last.kind, last.action, last.driver) == (AttemptKind.HUMAN, "accept", "ann")
    assert ledger.store.get("b").state is State.PASS
    # A program may send the token as a header instead of the cookie.
    program = client(ledger.store, guard=guard, with_token=False)
    bearer = {"authorization": f"Bearer {guard.token}"}
    form = {**ACCEPT_AS_ANN, "key": "c", "csrf": csrf}
    assert program.post("/review/resolve", data=form, headers=bearer).status_code == 303
    assert ledger.store.get("c").state is State.PASS


def test_the_actions_served_without_the_guard_record_nothing(ledger: Ledger) -> None:
    """Should the routes ever be mounted without the dashboard's guard, a form still names no
    one: the actions act only on a request the guard found the token on."""
    guard = Guard.for_host("127.0.0.1")
    bare = Starlette(routes=create_app(ledger.store, TINY, guard).routes)
    web = client_of(bare)
    before = ledger.store.snapshot("b")
    bearer = {"authorization": f"Bearer {guard.token}"}
    form = {**ACCEPT_AS_ANN, "csrf": guard.csrf}
    assert web.post("/review/resolve", data=form, headers=bearer).status_code == 401
    assert ledger.store.snapshot("b") == before


def test_a_page_read_without_the_token_offers_no_action(ledger: Ledger) -> None:
    guard = Guard.for_host("127.0.0.1")
    script = client(ledger.store, guard=guard, with_token=False)
    for path in ("/review", "/item?key=a"):  # a: PASS, which a person could reopen
        page = script.get(path).text
        assert 'method="post"' not in page and guard.csrf not in page, path
        assert 'id="token-missing"' in page and "open the link" in page, path
        assert ">view only<" in page, path
    assert ">view only<" in script.get("/").text
    browser = client(ledger.store)
    for path in ("/review", "/item?key=a"):
        page = browser.get(path).text
        assert 'method="post"' in page and "token-missing" not in page, path
        assert "view only" not in page, path
    # Read-only, or without the quest, there is nothing to act on: no call for the token.
    for web in (client(ledger.store, read_only=True, with_token=False),
                client(ledger.store, quest=None, with_token=False)):  # fmt: skip
        assert "token-missing" not in web.get("/review").text


def test_a_link_of_an_earlier_start_is_refused_with_a_word_why(ledger: Ledger) -> None:
    earlier, now = Guard.for_host("127.0.0.1"), Guard.for_host("127.0.0.1")
    assert earlier.token != now.token and earlier.cookie != now.cookie  # two dashboards coexist
    stale = client(ledger.store, guard=now, with_token=False).get(
        "/", params={"token": earlier.token}
    )
    assert stale.status_code == 401 and "each start makes a new one" in stale.text
    assert "set-cookie" not in stale.headers


@pytest.mark.slow  # `reins serve` in its own process, and a script talking to it over HTTP
def test_reins_serve_prints_the_token_link_on_loopback(tmp_path: Path) -> None:
    from tests.kit.browser import make_ledger, reins, served

    ledger = make_ledger(tmp_path, ["k"])
    with SQLiteStore.open(ledger) as store:
        submit(store, TINY, "k", "meh", driver="pat")  # doubt: REVIEW, for a person
    with served(ledger) as dashboard:
        found = re.fullmatch(r"(http://127\.0\.0\.1:\d+/)\?token=([\w-]+)", dashboard.link)
        assert found is not None, dashboard.link
        base, token = found.groups()
        form = {"key": "k", "decision": "accept", "note": "ok", "by": "ann"}
        signed = {"authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base) as script:
            assert 'name="csrf"' not in script.get("/review").text  # no form without the token
            form["csrf"] = csrf_of(script.get("/review", headers=signed).text)
            assert script.post("/review/resolve", data=form).status_code == 401
            assert json.loads(reins(ledger, "status", "--json"))["counts"]["REVIEW"] == 1
            done = script.post("/review/resolve", data=form, headers=signed)
            assert done.status_code == 303
    assert json.loads(reins(ledger, "status", "--json"))["counts"]["PASS"] == 1
