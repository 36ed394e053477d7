"""Batch jobs: a job leases its items in one go, moves only forward, gives its leases back when it
ends, is driven by one holder at a time; results recorded for it pin the turn they were composed
on; cached tokens and batch costs are kept in the totals; older ledgers gain all of it."""

from __future__ import annotations

import threading

import pytest

from reins.errors import IllegalTransition, LeaseConflict, NotFound, TurnMoved
from reins.store.jobs import WINDOW, BatchRequest, JobDraft, JobState
from reins.store.model import Claim, Usage
from reins.store.protocol import Store
from reins.testing.conformance._kit import (
    QUEST,
    T0,
    TTL,
    assert_sound,
    make_draft,
    opened,
    turn,
    verdict,
)
from reins.testing.harness import StoreHarness
from reins.turn.record import Origin, draft

__all__ = [
    "test_a_job_is_driven_by_one_holder_at_a_time",
    "test_a_job_leases_free_items_in_one_go",
    "test_a_job_moves_only_forward_and_gives_its_leases_back_when_it_ends",
    "test_a_lease_left_on_an_ended_job_is_found_by_the_check",
    "test_a_result_recorded_for_a_job_pins_the_turn_it_was_composed_on",
    "test_every_earlier_schema_gains_batch_jobs_and_cache_counts",
    "test_two_stores_opening_jobs_at_once_lease_each_item_once",
]

DRAFT = JobDraft(backend="openai", model="gpt-test", driver="loop", holder="loop@host:1")
HOLD = 60.0


def _open(store: Store, limit: int = 10) -> tuple[int, list[str]]:
    opened_job = store.open_job(DRAFT, limit=limit, hold=HOLD, now=T0)
    assert opened_job is not None
    job, keys = opened_job
    return job.id, keys


def _requests(store: Store, keys: list[str], tag: str = "t") -> list[BatchRequest]:
    return [
        BatchRequest(f"{tag}-{n}", key, store.get(key).turns, f"digest{n}", 1000 + n)
        for n, key in enumerate(keys)
    ]


def test_a_job_leases_free_items_in_one_go(store_harness: StoreHarness) -> None:
    keys = [f"k{i}" for i in range(6)]
    with opened(store_harness, keys=keys) as store:
        assert store.lease("ann", ttl=TTL, now=T0) is not None  # k0 is ann's
        turn(store, "k1", "PASS")  # k1 is locked
        opened_job = store.open_job(DRAFT, limit=3, hold=HOLD, now=T0, excluding=("k3",))
        assert opened_job is not None
        job, keys = opened_job
        assert keys == ["k2", "k4", "k5"]  # oldest first
        assert (job.state, job.requests, job.backend, job.model) == (
            JobState.LEASED, 0, "openai", "gpt-test",
        )  # fmt: skip
        assert (job.driver, job.holder, job.held_until) == ("loop", "loop@host:1", T0 + HOLD)
        assert job.owner == f"batch:{job.id}" and job.expires_at == T0 + WINDOW
        assert len(job.tag) >= 8 and job.tag.isalnum()
        for key in keys:
            item = store.get(key)
            assert (item.lease_owner, item.lease_expires) == (job.owner, T0 + WINDOW)
            assert item.lease_token is not None
        # Leased to the job, they are nobody else's; the one left free goes to the next job.
        bob = store.lease("bob", ttl=TTL, now=T0 + TTL * 2)
        assert bob is not None and bob.item.key == "k0"
        second = store.open_job(DRAFT, limit=5, hold=HOLD, now=T0)
        assert second is not None and second[1] == ["k3"]
        assert second[0].id != job.id and second[0].tag != job.tag
        assert store.open_job(DRAFT, limit=5, hold=HOLD, now=T0) is None  # no job, none free
        assert [j.id for j in store.jobs()] == [job.id, second[0].id]
        assert store.stats(now=T0).leased == 5
        assert_sound(store)


def test_a_job_moves_only_forward_and_gives_its_leases_back_when_it_ends(
    store_harness: StoreHarness,
) -> None:
    with opened(store_harness) as store:
        job, keys = _open(store)
        with pytest.raises(IllegalTransition, match="cannot move to sent"):
            store.advance_job(job, JobState.SENT, batch_id="b1")
        requests = _requests(store, keys)
        filled = store.fill_job(job, requests, now=T0 + 1)
        assert (filled.state, filled.requests, filled.composed_at) == (JobState.COMPOSED, 3, T0 + 1)
        assert store.job_requests(job) == requests
        with pytest.raises(IllegalTransition):
            store.fill_job(job, requests)  # the requests are written once
        uploaded = store.advance_job(job, JobState.UPLOADED, file_id="file-1")
        assert (uploaded.state, uploaded.file_id, uploaded.batch_id) == (
            JobState.UPLOADED, "file-1", None,
        )  # fmt: skip
        sent = store.advance_job(job, JobState.SENT, batch_id="batch_1", note="validating")
        assert (sent.file_id, sent.batch_id, sent.note) == ("file-1", "batch_1", "validating")
        again = store.advance_job(job, JobState.SENT, note="in_progress")  # a resumed step
        assert (again.batch_id, again.note) == ("batch_1", "in_progress")
        with pytest.raises(IllegalTransition):
            store.advance_job(job, JobState.COMPOSED)
        assert all(store.get(k).lease_owner == f"batch:{job}" for k in keys)
        done = store.advance_job(job, JobState.COLLECTED, note="completed")
        assert done.state is JobState.COLLECTED and done.state.final
        assert all(store.get(k).lease_owner is None for k in keys)
        assert store.jobs() == [] and [j.id for j in store.jobs(open_only=False)] == [job]
        with pytest.raises(IllegalTransition):
            store.advance_job(job, JobState.CANCELLED)
        with pytest.raises(NotFound):
            store.advance_job(job + 100, JobState.DISCARDED)
        assert store.job_requests(job + 100) == []
        other, _ = _open(store)
        assert store.advance_job(other, JobState.DISCARDED).state is JobState.DISCARDED
        assert store.stats(now=T0).leased == 0
        assert_sound(store)


def test_a_job_is_driven_by_one_holder_at_a_time(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as one, opened(store_harness, location, keys=()) as two:
        job, _ = _open(one)
        assert two.hold_job(job, "other", ttl=HOLD, now=T0 + 1) is False  # held by its opener
        assert one.hold_job(job, DRAFT.holder, ttl=HOLD, now=T0 + 1) is True  # renewed
        assert two.hold_job(job, "other", ttl=HOLD, now=T0 + HOLD) is False
        assert two.hold_job(job, "other", ttl=HOLD, now=T0 + 1 + HOLD) is True  # ran out
        assert one.hold_job(job, DRAFT.holder, ttl=HOLD, now=T0 + 2 + HOLD) is False
        assert two.hold_job(job, "other", ttl=0, now=T0 + 3 + HOLD) is True  # given up
        assert one.hold_job(job, DRAFT.holder, ttl=HOLD, now=T0 + 3 + HOLD) is True
        [held] = two.jobs()
        assert (held.holder, held.held_until) == (DRAFT.holder, T0 + 3 + 2 * HOLD)


def test_a_result_recorded_for_a_job_pins_the_turn_it_was_composed_on(
    store_harness: StoreHarness,
) -> None:
    with opened(store_harness) as store:
        turn(store, "b", "FAIL")
        job, keys = _open(store)
        [ra, rb, rc] = _requests(store, keys)
        store.fill_job(job, [ra, rb, rc], now=T0)
        owner = f"batch:{job}"
        with pytest.raises(LeaseConflict):  # leased to the job: no other driver records
            turn(store, "a", "PASS", owner="ann")
        usage = Usage(backend="openai", input_tokens=10, output_tokens=2, cost=0.5, batch=True,
                      list_cost=1.0, cache_read_tokens=4)  # fmt: skip
        d = draft(QUEST, store.get("b"), verdict("FAIL"), Origin(usage=usage))
        item, attempt = store.record(d, Claim("loop", rb.turns, owner=owner), now=T0)
        assert (item.turns, item.lease_owner) == (2, owner)  # still in flight for the job
        assert attempt.usage == usage
        with pytest.raises(TurnMoved):  # the same result again: refused, not recorded twice
            store.record(d, Claim("loop", rb.turns, owner=owner), now=T0)
        turn(store, "c", "PASS", owner=owner)  # c's result lands ...
        with pytest.raises((TurnMoved, IllegalTransition)):  # ... and a second one is refused
            store.record(make_draft(store.get("c"), "PASS"), Claim("loop", rc.turns, owner=owner))
        store.advance_job(job, JobState.SENT, batch_id="b")
        store.advance_job(job, JobState.COLLECTED)
        assert store.get("a").lease_owner is None and store.get("b").lease_owner is None
        stats = store.stats(now=T0)
        assert (stats.cache_read_tokens, stats.batch_cost, stats.list_cost) == (4, 0.5, 1.0)
        assert_sound(store)


def test_two_stores_opening_jobs_at_once_lease_each_item_once(
    store_harness: StoreHarness,
) -> None:
    location = store_harness.create()
    keys = [f"k{i:02d}" for i in range(60)]
    got: dict[str, list[list[str]]] = {}  # each opener's jobs, each job's keys
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def work(name: str) -> None:
        try:
            store = store_harness.open(location)
            try:
                start.wait()
                got[name] = []
                for _ in range(len(keys)):  # until nothing is free; a bound, not a count
                    found = store.open_job(DRAFT, limit=4, hold=HOLD, now=T0)
                    if found is None:
                        break
                    got[name].append(found[1])
            finally:
                store.close()
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)
            start.abort()

    with opened(store_harness, location, keys=keys) as store:
        threads = [threading.Thread(target=work, args=(n,)) for n in ("p", "q")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        opened_jobs = got["p"] + got["q"]
        leased = [key for job in opened_jobs for key in job]
        assert sorted(leased) == keys  # every item once: none twice, none missed
        assert all(1 <= len(job) <= 4 for job in opened_jobs)  # no empty job, none over limit
        # Two openers racing for the last free items (a lease skips the rows the other holds)
        # may both come up short; only there: 60 keys make 15 full jobs, or 14 and two short.
        short = [job for job in opened_jobs if len(job) < 4]
        assert len(short) in (0, 2), [len(job) for job in opened_jobs]
        jobs = store.jobs()
        assert len(jobs) == len(opened_jobs) and len({j.tag for j in jobs}) == len(jobs)
        assert_sound(store)


def test_every_earlier_schema_gains_batch_jobs_and_cache_counts(
    store_harness: StoreHarness,
) -> None:
    for version in store_harness.earlier_versions:
        store = store_harness.open(store_harness.make_at_version(version))
        try:
            assert store.jobs(open_only=False) == [], version
            stats = store.stats(now=T0)
            assert (stats.cache_read_tokens, stats.cache_write_tokens) == (0, 0), version
            assert (stats.batch_cost, stats.list_cost) == (0.0, stats.cost), version
            if version >= 1:
                _, [old] = store.snapshot("a")
                u = old.usage
                assert (u.cache_read_tokens, u.cache_write_tokens, u.batch, u.list_cost) == (
                    None, None, False, None,
                )  # fmt: skip
            else:
                store.add((k, {"word": k}) for k in "abc")
            job, keys = _open(store)
            assert keys == ["b", "c"] if version >= 1 else ["a", "b", "c"]
            store.fill_job(job, _requests(store, keys), now=T0)
            usage = Usage(cost=0.25, batch=True, list_cost=0.5, cache_write_tokens=7)
            d = draft(QUEST, store.get("c"), verdict("PASS"), Origin(usage=usage))
            store.record(d, Claim("loop", 0, owner=f"batch:{job}"), now=T0)
            store.advance_job(job, JobState.SENT, batch_id="b")
            store.advance_job(job, JobState.COLLECTED)
            stats = store.stats(now=T0)
            assert (stats.cache_write_tokens, stats.batch_cost, stats.list_cost) == (7, 0.25, 0.5)
            assert_sound(store)
        finally:
            store.close()


def test_a_lease_left_on_an_ended_job_is_found_by_the_check(store_harness: StoreHarness) -> None:
    location = store_harness.create()
    with opened(store_harness, location) as store:
        job, _ = _open(store, limit=1)
        store.advance_job(job, JobState.DISCARDED)
        assert store.check() == []
    store_harness.execute(
        location, f"UPDATE items SET lease_owner = 'batch:{job}', lease_expires = 1 WHERE key = 'b'"
    )
    with opened(store_harness, location, keys=()) as store:
        assert any("a batch job that ended holds no lease" in p for p in store.check())
