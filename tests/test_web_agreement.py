"""Agreement between reviewers on the Decided page (issue 40), on both engines: for each pair of
people who decided the same answer (an item in one round), how many, how many alike, and the
items they split on, linked; read through the store's index of a person's actions alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from reins.store.protocol import Store
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.turn.human import Action
from reins.turn.lane import act, reopen, resolve
from tests.kit import TINY
from tests.kit.web import HOSTILE_KEY, RAW_MARKERS, Ledger, client, text_of, web_ledger

CY = "<b>cy</b>"  # a hostile reviewer name: shown as text, never as markup


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def decide(store: Store, key: str, by: str, accept: bool) -> None:
    resolve(store, TINY, key, accept=accept, note="looked", by=by)


def undo(store: Store, key: str, by: str) -> None:
    act(store, TINY, key, Action.UNDO, note="undo", by=by)


def history(store: Store) -> None:
    """b: ann accepts, undoes, bob rejects (they split); c: ann accepts, undoes, rejects (her
    last word), bob rejects (alike); the hostile item: ann and cy accept (alike); e: ann accepts
    round 1, reopened, bob rejects round 2 (another answer: not paired); f: bob drops it after
    ann's accept was undone (a drop judges no answer)."""
    decide(store, "b", "ann", True)
    undo(store, "b", "ann")
    decide(store, "b", "bob", False)
    decide(store, "c", "ann", True)
    undo(store, "c", "ann")
    decide(store, "c", "ann", False)
    undo(store, "c", "ann")
    decide(store, "c", "bob", False)
    decide(store, HOSTILE_KEY, "ann", True)
    undo(store, HOSTILE_KEY, "ann")
    decide(store, HOSTILE_KEY, CY, True)
    store.add([("e", {"word": "e"}), ("f", {"word": "f"})])
    submit(store, TINY, "e", "meh", driver="loop")
    decide(store, "e", "ann", True)
    reopen(store, TINY, "e", reason="again", by="ann")
    submit(store, TINY, "e", "meh again", driver="loop")
    decide(store, "e", "bob", False)
    submit(store, TINY, "f", "meh", driver="loop")
    decide(store, "f", "ann", True)
    undo(store, "f", "ann")
    act(store, TINY, "f", Action.DROP, note="bad item", by="bob")


def section(html: str) -> str:
    found = re.search(r'<section id="agreement">(.*?)</section>', html, re.S)
    assert found is not None, "the Decided page has no agreement section"
    return found.group(1)


def rows(html: str) -> dict[str, str]:
    """Each pair's row of the agreement table, as text, by its two names."""
    found = re.findall(r'<tr class="pair" data-pair="([^"]*)">(.*?)</tr>', section(html), re.S)
    return {text_of(pair): text_of(row) for pair, row in found}


def test_each_pair_of_reviewers_says_how_often_they_agreed_and_links_their_splits(
    ledger: Ledger,
) -> None:
    store = ledger.store
    history(store)
    page = client(store).get("/decided").text
    pairs = rows(page)
    # ann and bob: b (split) and c (alike); not e (two rounds: two answers), not f (a drop).
    assert set(pairs) == {"ann · bob", f"{CY} · ann"}, pairs  # names in order, "<" first
    assert pairs["ann · bob"].startswith("ann · bob 2 1 (50%) b: ann accepted, bob rejected")
    assert " c:" not in pairs["ann · bob"] and " e:" not in pairs["ann · bob"]
    assert pairs[f"{CY} · ann"] == f"{CY} · ann 1 1 (100%)"
    split = re.search(r'<tr class="pair" data-pair="ann · bob">.*?</tr>', section(page), re.S)
    assert split is not None
    links = re.findall(r'<a class="key" href="([^"]+)">', split.group(0))
    b_turns = len(store.snapshot("b")[1])
    assert links == [f"/item?key=b#turn-{b_turns}"], links  # bob's reject, the split's last
    # What counts is said on the page.
    said = text_of(section(page))
    assert "each person's last accept or reject of an item in a round" in said
    assert "One they undid still counts" in said and "different rounds" in said
    for raw in (*RAW_MARKERS, "<b>cy</b>"):
        assert raw not in section(page)
    assert "&lt;b&gt;cy&lt;/b&gt;" in section(page)


def test_nobody_paired_says_so(ledger: Ledger) -> None:
    store = ledger.store
    decide(store, "b", "ann", True)
    decide(store, "c", "bob", True)
    said = text_of(section(client(store).get("/decided").text))
    assert "no two people have decided the same answer yet" in said


class Counting:
    """The real store, with each call counted by name (what the figures read, and how often)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.calls.append(name)
        return getattr(self.store, name)


def test_the_figures_read_people_s_actions_only_a_page_at_a_time(ledger: Ledger) -> None:
    """However many turns the ledger holds, the figures read the index of a person's actions
    (``Store.decisions``), pages of it, and nothing else; past their cap they say how many of
    the newest they counted."""
    from reins.web.agreement import agreement

    store = ledger.store
    history(store)
    counted = Counting(store)
    found = agreement(counted, page=4)
    made = len(store.decisions(limit=1000).attempts)
    assert set(counted.calls) == {"decisions"}, counted.calls
    assert len(counted.calls) == -(-made // 4)  # ceil: the last page says no next
    assert found.read == made and not found.capped
    capped = agreement(store, page=4, most=5)
    assert capped.read == 5 and capped.capped
    both = {(p.first, p.second): p for p in capped.pairs}
    # The newest five: f's drop, undo and accept, e's reject and reopen: no pair among them.
    assert not both, both
