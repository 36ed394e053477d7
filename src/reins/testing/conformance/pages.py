"""Items: adding them, and keyset pages in the order they were added, by state or by rule."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reins.errors import LedgerError
from reins.store.model import State
from reins.store.protocol import Store
from reins.store.query import PageQuery
from reins.store.walk import iter_items
from reins.testing.conformance._kit import T0, assert_sound, everything, opened, turn
from reins.testing.harness import StoreHarness
from reins.values import JSON


def _walk(
    store: Store, *, limit: int, state: State | None = None, rule: str | None = None
) -> list[list[str]]:
    """The keys of every page, following the cursors to the last page (which has none)."""
    pages: list[list[str]] = []
    after: int | None = None
    while True:
        page = store.page(PageQuery(state=state, rule=rule, after=after, limit=limit))
        assert len(page.items) <= limit
        pages.append([item.key for item in page.items])
        if page.next is None:
            return pages
        assert len(page.items) == limit  # only a full page may have a next one
        assert len(pages) < 10_000
        after = page.next


def test_pages_follow_the_order_items_were_added(store_harness: StoreHarness) -> None:
    first = [f"k{i:02d}" for i in range(22, 0, -1)]  # added in reverse order of their names
    second = ["zz", "aa", "é", "\u2028", "key with spaces", "k00"]
    with opened(store_harness, keys=first) as store:
        store.add((k, None) for k in second)
        order = first + second
        assert _walk(store, limit=5) == [order[i : i + 5] for i in range(0, len(order), 5)]
        assert _walk(store, limit=7) == [order[i : i + 7] for i in range(0, len(order), 7)]
        # A page that ends exactly at the last item is the last page: it has no cursor.
        assert _walk(store, limit=len(order)) == [order]
        assert _walk(store, limit=len(order) // 2) == [order[:14], order[14:]]
        assert _walk(store, limit=1000) == [order]
        assert [item.key for item in iter_items(store)] == order
        last = store.page(PageQuery(limit=len(order) - 1))
        assert last.next is not None
        assert [i.key for i in store.page(PageQuery(after=last.next)).items] == [order[-1]]
    with opened(store_harness, keys=()) as empty:
        assert _walk(empty, limit=5) == [[]]


def test_pages_filter_by_state(store_harness: StoreHarness) -> None:
    with opened(store_harness, keys=[f"k{i}" for i in range(12)]) as store:
        for key, result in (("k1", "PASS"), ("k4", "REVIEW"), ("k5", "PASS"), ("k9", "PASS")):
            turn(store, key, result)
        turn(store, "k2", "FAIL")
        for state in State:
            want = [item.key for item, _ in everything(store) if item.state is state]
            pages = _walk(store, limit=2, state=state)
            assert [k for page in pages for k in page] == want, state
        assert [k for p in _walk(store, limit=3, state=State.PASS) for k in p] == ["k1", "k5", "k9"]


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
            return [k for page in _walk(store, limit=1, rule=rule, state=state) for k in page]

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


def test_add_dedupes_by_key_and_leaves_existing_items_untouched(
    store_harness: StoreHarness,
) -> None:
    with opened(store_harness) as store:
        turn(store, "b", "PASS")
        before = store.snapshot("b")
        added, present = store.add([("a", {"word": "changed"}), ("d", None), ("d", 1), ("b", 2)])
        assert (added, present) == (1, 3)
        assert store.get("a").payload == {"word": "a"}
        assert store.get("d").payload is None
        assert store.snapshot("b") == before
        assert [i.key for i in iter_items(store)] == ["a", "b", "c", "d"]
        assert store.add([]) == (0, 0)
        assert_sound(store)


def test_add_streams_a_large_input(store_harness: StoreHarness) -> None:
    pulled = 0

    def seeds() -> Iterator[tuple[str, JSON]]:
        nonlocal pulled
        for i in range(12_000):
            pulled += 1
            yield f"k{i}", {"n": i} if i % 2 else None

    with opened(store_harness, keys=()) as store:
        assert store.add(seeds()) == (12_000, 0)
        assert pulled == 12_000
        stats = store.stats(now=T0)
        assert stats.counts[State.TODO] == 12_000 and stats.total == 12_000
        assert store.get("k11999").payload == {"n": 11_999}
        assert [
            i.key
            for i in store.page(PageQuery(after=store.page(PageQuery(limit=11_998)).next)).items
        ] == [
            "k11998",
            "k11999",
        ]
        assert store.add((f"k{i}", None) for i in range(11_990, 12_010)) == (10, 10)
        assert store.check() == []


def test_an_empty_key_is_refused(store_harness: StoreHarness) -> None:
    with opened(store_harness) as store, pytest.raises(LedgerError):
        store.add([("", None)])
