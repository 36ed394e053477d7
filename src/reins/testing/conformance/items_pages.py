"""Items: ``page(PageQuery)``, keyset pages in the order items were added or newest first,
by state, root cause, lease holder, round, text in the key or words of the item's texts,
walked while the ledger is written."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from reins.store.model import Claim, State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.store.walk import iter_items
from reins.testing.conformance._kit import (
    T0,
    act,
    assert_sound,
    everything,
    lock,
    make_draft,
    opened,
    reopen,
    turn,
)
from reins.testing.harness import StoreHarness

__all__ = [
    "test_a_search_reads_only_the_first_characters_of_each_text",
    "test_items_can_be_walked_while_the_ledger_is_written",
    "test_pages_filter_by_lease_holder",
    "test_pages_filter_by_round",
    "test_pages_filter_by_state",
    "test_pages_filter_by_text_in_the_key",
    "test_pages_filter_by_the_last_judged_root_cause",
    "test_pages_find_items_by_the_words_of_their_texts",
    "test_pages_follow_the_order_items_were_added",
    "test_pages_run_newest_first_when_descending",
]


def _pages(store: Store, limit: int, **filters: Any) -> list[list[str]]:
    """The keys of every page under ``filters``, following the cursors to the last page (which
    has none)."""
    pages: list[list[str]] = []
    wanted = PageQuery(limit=limit, **filters)
    while True:
        page = store.page(wanted)
        assert len(page.items) <= limit
        pages.append([item.key for item in page.items])
        if page.next is None:
            return pages
        assert len(page.items) == limit  # only a full page may have a next one
        assert len(pages) < 10_000
        wanted = replace(wanted, after=page.next)


def test_pages_follow_the_order_items_were_added(store_harness: StoreHarness) -> None:
    first = [f"k{i:02d}" for i in range(22, 0, -1)]  # added in reverse order of their names
    second = ["zz", "aa", "é", "\u2028", "key with spaces", "k00"]
    with opened(store_harness, keys=first) as store:
        store.add((k, None) for k in second)
        order = first + second
        assert _pages(store, limit=5) == [order[i : i + 5] for i in range(0, len(order), 5)]
        assert _pages(store, limit=7) == [order[i : i + 7] for i in range(0, len(order), 7)]
        # A page that ends exactly at the last item is the last page: it has no cursor.
        assert _pages(store, limit=len(order)) == [order]
        assert _pages(store, limit=len(order) // 2) == [order[:14], order[14:]]
        assert _pages(store, limit=1000) == [order]
        assert [item.key for item in iter_items(store)] == order
        last = store.page(PageQuery(limit=len(order) - 1))
        assert last.next is not None
        assert [i.key for i in store.page(PageQuery(after=last.next)).items] == [order[-1]]
    with opened(store_harness, keys=()) as empty:
        assert _pages(empty, limit=5) == [[]]


def test_pages_filter_by_state(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[f"k{i}" for i in range(12)]) as store:
        for key, result in (("k1", "PASS"), ("k4", "REVIEW"), ("k5", "PASS"), ("k9", "PASS")):
            turn(store, key, result)
        turn(store, "k2", "FAIL")
        for state in State:
            want = [item.key for item, _ in everything(store) if item.state is state]
            pages = _pages(store, limit=2, state=state)
            assert [k for page in pages for k in page] == want, state
        assert [k for p in _pages(store, limit=3, state=State.PASS) for k in p] == [
            "k1",
            "k5",
            "k9",
        ]


def test_pages_filter_by_the_last_judged_root_cause(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys="abcdef") as store:
        turn(store, "a", "FAIL")
        turn(store, "b", "FAIL")
        turn(store, "b", "ERROR")  # a generation error keeps the last judged root cause
        turn(store, "c", "FAIL")
        turn(store, "c", "FAIL", rule_id="not-ugly")  # the last judgement decides
        turn(store, "d", "REVIEW")
        turn(store, "e", "ERROR")
        turn(store, "f", "FAIL")
        turn(store, "f", "FAIL")
        turn(store, "f", "FAIL")  # locked DONE by its third FAIL

        def keys(rule: str, state: State | None = None) -> list[str]:
            return [k for page in _pages(store, limit=1, rule=rule, state=state) for k in page]

        assert keys(rule="not-bad") == ["a", "b", "f"]
        assert keys(rule="not-ugly") == ["c"]
        assert keys(rule="not-meh") == ["d"]
        assert keys(rule="nothing") == []
        assert keys(rule="not-bad", state=State.TODO) == ["a", "b"]
        assert keys(rule="not-bad", state=State.DONE) == ["f"]
        assert keys(rule="not-meh", state=State.TODO) == []
        assert [store.get(k).root_cause for k in "abcdef"] == [
            "not-bad",
            "not-bad",
            "not-ugly",
            "not-meh",
            None,
            "not-bad",
        ]
        assert_sound(store)


def test_pages_filter_by_lease_holder(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[f"k{i}" for i in range(6)]) as store:
        for owner in ("ann", "bo", "ann", "cy"):  # ann's second lease renews her first
            assert store.lease(owner, ttl=1, now=T0) is not None
        held = {
            o: [i.key for i in iter_items(store, PageQuery(leased_to=o))]
            for o in ("ann", "bo", "cy")
        }
        assert held == {"ann": ["k0"], "bo": ["k1"], "cy": ["k2"]}
        assert [i.key for i in iter_items(store, PageQuery(leased_to="dee"))] == []
        # Expired leases still name their holder until someone leases the item again.
        page = store.page(PageQuery(state=State.TODO, leased_to="bo", limit=5))
        assert [i.key for i in page.items] == ["k1"] and page.next is None
        assert_sound(store)


def test_items_can_be_walked_while_the_ledger_is_written(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store:
        seen = []
        for item in iter_items(store):
            seen.append(item.key)
            turn(store, item.key, "FAIL", driver="w")
            assert store.snapshot(item.key)[1][-1].turn == 1
        assert seen == ["a", "b", "c"]
        assert [i.key for i in store.page(PageQuery(state=State.TODO, limit=2)).items] == ["a", "b"]
        # Page by page, with records and new items landing between the pages.
        walked: list[str] = []
        after: int | None = None
        added = 0
        while True:
            if added < 3:
                store.add([(f"new{added}", None)])
                added += 1
            page = store.page(PageQuery(after=after, limit=2))
            for item in page.items:
                walked.append(item.key)
                if item.state is State.TODO:
                    turn(store, item.key, "PASS", driver="w")
            if page.next is None:
                break
            after = page.next
        assert walked == ["a", "b", "c", "new0", "new1", "new2"]
        assert_sound(store)


def test_pages_run_newest_first_when_descending(store_harness: StoreHarness) -> None:
    keys = [f"k{i:02d}" for i in range(11)]
    with opened(store_harness, keys=keys) as store:
        turn(store, "k03", "PASS")
        newest = list(reversed(keys))
        assert _pages(store, 4, descending=True) == [newest[:4], newest[4:8], newest[8:]]
        assert _pages(store, 11, descending=True) == [newest]
        assert _pages(store, 2, descending=True, state=State.PASS) == [["k03"]]
        todo = [k for k in newest if k != "k03"]
        assert [k for p in _pages(store, 3, descending=True, state=State.TODO) for k in p] == todo
    with opened(store_harness, keys=()) as empty:
        assert _pages(empty, 3, descending=True) == [[]]


def test_pages_filter_by_text_in_the_key(store_harness: StoreHarness) -> None:
    keys = ["alpha", "Alphabet", "beta", "gamma-alpha", "50%_off", "5x_off", "é-alpha", "del"]
    with opened(store_harness, keys=keys) as store:
        found = [k for p in _pages(store, 2, contains="alpha") for k in p]
        assert found == ["alpha", "gamma-alpha", "é-alpha"]  # case-sensitive
        # No wildcard: % and _ are plain characters.
        assert [k for p in _pages(store, 5, contains="%_") for k in p] == ["50%_off"]
        assert [k for p in _pages(store, 5, contains="_off") for k in p] == ["50%_off", "5x_off"]
        assert _pages(store, 5, contains="zeta") == [[]]
        turn(store, "gamma-alpha", "PASS")
        assert _pages(store, 5, contains="alpha", state=State.PASS) == [["gamma-alpha"]]
        assert _pages(store, 5, contains="alpha", descending=True) == [
            ["é-alpha", "gamma-alpha", "alpha"]
        ]


def test_pages_filter_by_round(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[f"k{i}" for i in range(7)]) as store:
        for key in ("k1", "k4", "k5"):
            lock(store, key, "PASS")
            act(store, reopen(key))
        lock(store, "k4", "PASS")
        act(store, reopen("k4"))  # round 3
        assert [k for p in _pages(store, 1, round=2) for k in p] == ["k1", "k5"]
        assert _pages(store, 5, round=3) == [["k4"]]
        assert _pages(store, 5, round=1) == [["k0", "k2", "k3", "k6"]]
        assert _pages(store, 5, round=4) == [[]]
        assert _pages(store, 5, round=2, descending=True) == [["k5", "k1"]]
        assert_sound(store)


def _answered(store: Store, key: str, result: str, submission: str, actual: str = "bad") -> None:
    """A turn of ``result`` on ``key`` whose submission (and facts' actual) are the given."""
    item = store.get(key)
    d = make_draft(item, result)
    facts = tuple(replace(f, actual=actual) for f in d.facts)
    store.record(replace(d, submission=submission, facts=facts), Claim("c", item.turns), now=T0)


def _found(store: Store, search: str, limit: int = 5, **filters: Any) -> list[str]:
    return [k for p in _pages(store, limit, search=search, **filters) for k in p]


def test_pages_find_items_by_the_words_of_their_texts(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[]) as store:
        store.add([("report-2024", {"city": "Paris"}), ("plain", {"city": "Rome"})])
        store.add([("coded", None), ("faulty", None), ("twice", {"city": "Paris"})])
        _answered(store, "coded", "FAIL", "def slugify(text):\n    return text.lower()")
        _answered(store, "faulty", "REVIEW", "Dear Bob", actual="bob@free-mail.com")
        _answered(store, "twice", "REVIEW", "Paris, again")
        assert _found(store, "paris") == ["report-2024", "twice"]  # a payload, in any case
        assert _found(store, "report") == _found(store, "2024") == ["report-2024"]  # the key
        assert _found(store, "slug") == ["coded"]  # the start of a word of a submission
        assert _found(store, "SLUGIFY Lower") == ["coded"]  # every word, in any case
        assert _found(store, "ugify") == []  # the start of a word, not any part of one
        assert _found(store, "slugify paris") == []  # one text holds them all, or none
        assert _found(store, "free mail") == _found(store, "bob") == ["faulty"]  # the facts
        assert _found(store, "dear") == ["faulty"]
        assert _found(store, '(Paris)* OR "rome') == []  # no syntax: paris, or, rome
        assert _found(store, "(Paris)*") == ["report-2024", "twice"]
        assert _found(store, "paris", limit=1) == ["report-2024", "twice"]  # paged
        assert _found(store, "paris", descending=True) == ["twice", "report-2024"]
        assert _found(store, "paris", state=State.REVIEW) == ["twice"]
        assert _found(store, "zeta") == []
        assert _found(store, "!!") == []  # no word at all: nothing matches
        # Items added and turns recorded later are found as well.
        store.add([("later", {"city": "Parisian"})])
        _answered(store, "plain", "REVIEW", "Paris")
        assert _found(store, "paris") == ["report-2024", "plain", "twice", "later"]
        assert_sound(store)


def test_a_search_reads_only_the_first_characters_of_each_text(
    store_harness: StoreHarness,
) -> None:
    """What is indexed is bounded (reins.store.search.INDEXED): a word past the first 100,000
    characters of a submission is not found, the words before it are."""
    with opened(store_harness, keys=["long"]) as store:
        _answered(store, "long", "REVIEW", "early " + "x" * 100_000 + " needle")
        assert _found(store, "early") == ["long"]
        assert _found(store, "needle") == []
        assert_sound(store)
