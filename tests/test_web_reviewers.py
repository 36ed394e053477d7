"""Reviewers the desk knows, and a desk that keeps a reviewer's place (issue 40, items 8 and 14),
through Starlette's TestClient on both engines.

- Each reviewer signs in with a token of their own, bound to their name: what a decision
  records is that name, never one typed in the form; the shared token admits no one then.
- A claim keeps others' decisions off, saying who holds it and until when; taking it over is
  an explicit action. Only whoever decided may undo it, and an undo puts the item back in the
  queue in its round.
- The queue answers what changed (``/api/queue``), claims are called claims and counted on the
  board, and a search says how many items matched and marks the words it found, escaped.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reins.store.model import State
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.web.app import create_app
from reins.web.people import names, roster, secret, token
from reins.web.security import Guard
from tests.kit import TINY
from tests.kit.web import (
    HOSTILE_KEY,
    RAW_MARKERS,
    Ledger,
    card,
    client,
    client_of,
    csrf_of,
    text_of,
    web_ledger,
)

if TYPE_CHECKING:
    from starlette.testclient import TestClient

PEOPLE = ("ann", "bob")


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def desk(ledger: Ledger, tmp_path: Path) -> tuple[Guard, dict[str, TestClient]]:
    """The dashboard with reviewers ann and bob, and a browser of each, signed in by the link
    each was given."""
    people = roster(secret(tmp_path), PEOPLE)
    guard = Guard.for_host("127.0.0.1", people=people)
    app = create_app(ledger.store, TINY, guard, by="server-user")
    browsers = {}
    for name, given in people:
        web = client_of(app)
        assert web.get("/", params={"token": given}).status_code == 303
        browsers[name] = web
    return guard, browsers


def decide(web: TestClient, key: str, decision: str, note: str, **more: str) -> Answer:
    form = {"csrf": csrf_of(web.get("/review").text), "key": key, "decision": decision}
    done = web.post("/review/resolve", data={**form, "note": note, **more})
    return Answer(done.status_code, done.text, done.headers.get("location", ""))


@dataclass(frozen=True)
class Answer:
    status_code: int
    text: str
    location: str


def test_a_decision_records_the_name_the_token_is_bound_to_not_a_typed_one(
    ledger: Ledger, tmp_path: Path
) -> None:
    guard, web = desk(ledger, tmp_path)
    page = web["bob"].get("/review").text
    assert "signed in as bob" in text_of(page)
    assert 'name="by"' not in page  # no name to type
    # bob types "ann": the decision is bob's all the same.
    done = decide(web["bob"], "b", "accept", "fine", by="ann")
    assert done.status_code == 303
    log = ledger.store.snapshot("b")[1]
    assert (log[-1].action, log[-1].driver) == ("accept", "bob")
    # With reviewers named, the shared token admits no one, to act or (so) to claim a name.
    shared = client_of(create_app(ledger.store, TINY, guard))
    assert shared.get("/", params={"token": guard.token}).status_code == 401
    bearer = {"authorization": f"Bearer {guard.token}", "x-csrf-token": guard.csrf}
    form = {"key": "c", "decision": "accept", "note": "x", "by": "ann"}
    assert shared.post("/review/resolve", data=form, headers=bearer).status_code == 401
    assert ledger.store.get("c").state is State.REVIEW
    # A script with ann's token as a bearer acts as ann, whatever it names.
    ann = dict(roster(secret(tmp_path), PEOPLE))["ann"]
    signed = {"authorization": f"Bearer {ann}", "x-csrf-token": guard.csrf}
    assert (
        shared.post("/review/resolve", data=form | {"by": "bob"}, headers=signed).status_code == 303
    )
    assert ledger.store.snapshot("c")[1][-1].driver == "ann"


def test_ann_s_claim_keeps_bob_off_until_he_takes_it_over(ledger: Ledger, tmp_path: Path) -> None:
    _, web = desk(ledger, tmp_path)
    csrf = csrf_of(web["ann"].get("/review").text)
    claimed = web["ann"].post("/review/claim", data={"csrf": csrf, "key": "b", "by": "bob"})
    assert claimed.status_code == 303 and ledger.store.get("b").lease_owner == "ann"
    # bob sees ann's claim and is offered an explicit take-over, not a release.
    b = card(web["bob"].get("/review").text, "b")
    assert "claimed by ann until" in text_of(b) and "Take over" in b
    assert 'name="take" value="over"' in b and 'action="/review/release"' not in b
    assert 'action="/review/release"' in card(web["ann"].get("/review").text, "b")
    # Typing ann's name wins bob nothing: his decision is refused, saying whose and until when.
    refused = decide(web["bob"], "b", "accept", "mine", by="ann")
    assert refused.status_code == 409
    said = text_of(refused.text)
    assert re.search(r"claimed by ann until \d\d:\d\d UTC: theirs to decide", said), said
    assert "take it over" in said
    assert ledger.store.get("b").state is State.REVIEW
    # Nor can he release her claim; he takes it over, explicitly, and then decides.
    gone = web["bob"].post("/review/release", data={"csrf": csrf, "key": "b"})
    assert gone.status_code == 409 and ledger.store.get("b").lease_owner == "ann"
    taken = web["bob"].post("/review/claim", data={"csrf": csrf, "key": "b", "take": "over"})
    assert taken.status_code == 303 and "taken+over+from+ann" in taken.headers["location"]
    assert ledger.store.get("b").lease_owner == "bob"
    assert decide(web["bob"], "b", "accept", "mine now").status_code == 303
    assert ledger.store.snapshot("b")[1][-1].driver == "bob"


def test_only_who_decided_undoes_and_the_item_waits_again(ledger: Ledger, tmp_path: Path) -> None:
    _, web = desk(ledger, tmp_path)
    back = decide(web["ann"], "c", "reject", "no")
    location = back.location
    turn = re.search(r"turn=(\d+)", location)
    assert turn is not None
    form = {"csrf": csrf_of(web["ann"].get("/review").text), "key": "c", "turn": turn.group(1)}
    # bob, even naming ann, is refused: only ann undoes her decision.
    refused = web["bob"].post("/review/undo", data={**form, "by": "ann"})
    assert refused.status_code == 409
    assert "was rejected by ann, not bob: only ann may undo it" in text_of(refused.text)
    assert "reopen it from its page" in text_of(refused.text)
    assert ledger.store.get("c").state is State.DONE
    undone = web["ann"].post("/review/undo", data=form)
    assert undone.status_code == 303
    item, log = ledger.store.snapshot("c")
    assert (item.state, item.round) == (State.REVIEW, 1)
    assert (log[-1].action, log[-1].driver) == ("undo", "ann")
    assert "c" in re.findall(r'data-key="([^"]*)"', web["bob"].get("/review").text)
    decided = text_of(web["bob"].get("/decided").text)
    assert "ann c undo by a person → REVIEW undo of the reject (no)" in decided


def test_a_reviewer_s_token_is_kept_across_starts_in_a_file_of_its_owner_s(tmp_path: Path) -> None:
    first = secret(tmp_path)
    path = tmp_path / ".reins" / "desk.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert secret(tmp_path) == first  # the same links after a restart
    assert token(first, "ann") != token(first, "bob")
    assert token(first, "ann") not in path.read_text()  # a token is derived, never stored
    renewed = secret(tmp_path, renew=True)
    assert token(renewed, "ann") != token(first, "ann")  # --new-links ends every old link
    os.chmod(path, 0o644)
    from reins.errors import ConfigError

    with pytest.raises(ConfigError, match="can be read by others"):
        secret(tmp_path)
    with pytest.raises(ConfigError, match="a reviewer's name is one word"):
        names(("ann", "<b>x</b>"))
    assert names(("ann", "bob", "ann")) == ("ann", "bob")


def test_the_queue_says_what_others_did_since_it_was_drawn(ledger: Ledger) -> None:
    web = client(ledger.store)
    shown = {"key": ["b", "c", HOSTILE_KEY]}
    now = web.get("/api/queue", params=shown).json()
    assert now["waiting"] == 3 and now["fresh"] == []
    assert {c["key"]: c["waiting"] for c in now["cards"]} == {
        "b": True,
        "c": True,
        HOSTILE_KEY: True,
    }
    # Elsewhere: c is decided, b is claimed, d comes to wait.
    from reins.turn.lane import resolve

    resolve(ledger.store, TINY, "c", accept=True, note="ok", by="sam")
    ledger.store.reserve("b", "rita", ttl=600)
    submit(ledger.store, TINY, "d", "meh", driver="ann")
    now = web.get("/api/queue", params=shown).json()
    cards = {c["key"]: c for c in now["cards"]}
    assert (cards["c"]["waiting"], cards["c"]["settled"]) == (False, "accepted by sam")
    assert cards["b"]["holder"] == "rita" and re.fullmatch(r"\d\d:\d\d UTC", cards["b"]["until"])
    assert now["fresh"] == ["d"] and now["waiting"] == 3
    bad = web.get("/api/queue", params={"search": "!!"})
    assert bad.status_code == 400 and "search must hold a letter" in bad.json()["error"]


def test_claims_are_called_claims_and_the_board_counts_them(ledger: Ledger) -> None:
    ledger.store.reserve("b", "rita", ttl=600)
    web = client(ledger.store)
    board = text_of(web.get("/").text)
    assert "0 leased now (turns under way), 1 claimed now (by reviewers)" in board
    item = text_of(web.get("/item", params={"key": "b"}).text)
    assert "claimed by rita" in item and "lease holder" not in item
    items = web.get("/items").text
    assert "lease holder" not in items and "rita <small>claim</small>" in items


def test_a_search_says_how_many_matched_and_marks_the_words_found(ledger: Ledger) -> None:
    submit(ledger.store, TINY, "d", "meh, the fjord is wide; fjords are", driver="ann")
    web = client(ledger.store)
    page = web.get("/review", params={"search": "FJOR"}).text
    assert "1 of 4 waiting matches this filter" in text_of(page)
    d = card(page, "d")
    # The words as typed, where a word starts with them (in a flagged value's mark here).
    found = (
        '<mark class="found"><mark>fjor</mark></mark><mark>d is wide; </mark><mark class="found">'
    )
    assert found in d
    assert "matches this filter" not in text_of(web.get("/review").text)  # no filter, no count
    assert "4 of 4 waiting match this filter" in text_of(
        web.get("/review", params={"rule": "not-meh"}).text
    )


def test_a_highlighted_search_of_hostile_text_stays_escaped(ledger: Ledger) -> None:
    """The attack first: words that occur in markup a generator wrote (an <img onerror>, a
    <script> key) are marked inside the escaped text, never turned back into markup."""
    web = client(ledger.store)
    for words in ("img onerror", "script alert", "pre td", "mark class"):
        page = web.get("/review", params={"search": words}).text
        for marker in RAW_MARKERS:
            assert marker not in page, (words, marker)
    img = web.get("/review", params={"search": "img"}).text
    assert '&lt;</mark><mark class="found"><mark>img</mark></mark><mark> src=x' in img
    key = web.get("/review", params={"search": "script"}).text
    assert '&lt;<mark class="found">script</mark>&gt;alert' in key
