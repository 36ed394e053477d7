"""Random sequences of leases, turns, expiries, releases, crashes and exports by two owners,
each through its own store, and of a person's actions (resolving a REVIEW item, reopening a
locked one, which withdraws its exported lock), checked step by step against a small in-memory
model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule, run_state_machine_as_test

from reins.errors import IllegalTransition, LeaseConflict, NotTodo, TurnMoved
from reins.store.export import export
from reins.store.model import (
    Attempt,
    AttemptKind,
    Claim,
    Draft,
    Item,
    Lease,
    Notes,
    State,
    Transition,
)
from reins.testing.conformance._kit import PERSON, TTL, jsonl, keys_in, make_draft
from reins.testing.conformance._machine import (
    KEYS,
    OWNERS,
    RESULTS,
    STEPS,
    MachineState,
    after_turn,
)
from reins.testing.harness import StoreHarness

__all__ = ["test_random_sequences_keep_every_invariant"]


class LedgerMachine(MachineState):
    """The steps: subclassed per run with ``harness`` and ``folder`` set (see the test below)."""

    # -- leases ---------------------------------------------------------------------------

    @rule(owner=st.sampled_from(OWNERS))
    def lease(self, owner: str) -> None:
        self._leased(owner, self.stores[owner].lease(owner, ttl=TTL, now=self.clock))

    @rule(first=st.sampled_from(OWNERS))
    def lease_many(self, first: str) -> None:
        """Both owners in one call: what ``lease`` gives each, one after the other."""
        owners = [first, *(o for o in OWNERS if o != first)]
        got = self.stores[first].lease_many(owners, ttl=TTL, now=self.clock)
        by_owner = {lease.item.lease_owner: (lease, log) for lease, log in got}
        assert [lease.item.lease_owner for lease, _ in got] == [o for o in owners if o in by_owner]
        for owner in owners:
            lease, log = by_owner.get(owner, (None, []))
            self._leased(owner, lease)
            if lease is not None:
                assert log == self.stores[owner].snapshot(lease.item.key)[1]

    def _leased(self, owner: str, got: Lease | None) -> None:
        """Check what leasing to ``owner`` gave against the model, and note it there."""
        held = [k for k in KEYS if self.model[k].state is State.TODO]
        mine = [k for k in held if self.model[k].holder(self.clock) == owner]
        free = [k for k in held if self.model[k].holder(self.clock) is None]
        event(f"lease: {'renewed' if mine else 'free' if free else 'none'}")
        if mine:
            assert got is not None and got.renewed and got.item.key in mine
        elif free:
            assert got is not None and not got.renewed and got.item.key == free[0]
        else:
            assert got is None
            return
        key = got.item.key
        assert self.model[key].holder(self.clock) in (None, owner)  # never two owners
        self.model[key].owner, self.model[key].expires = owner, self.clock + TTL
        self.given[owner] = key
        self.nexts[owner] += 1
        assert got.nexts_since_submit == self.nexts[owner]
        assert (got.item.lease_owner, got.item.lease_expires) == (owner, self.clock + TTL)

    @rule(owner=st.sampled_from(OWNERS))
    def heartbeat(self, owner: str) -> None:
        key = self.given[owner]
        if key is None:
            return
        m = self.model[key]
        extended = self.stores[owner].heartbeat(key, owner, ttl=TTL, now=self.clock)
        event(f"heartbeat: {extended}")
        if m.state is State.TODO and m.holder(self.clock) == owner:
            assert extended
        elif m.state.terminal or m.owner != owner:
            assert not extended
        # else: ``owner``'s lease ran out and nobody took the item; an engine may revive it.
        if extended:
            m.owner, m.expires = owner, self.clock + TTL

    @rule(owner=st.sampled_from(OWNERS))
    def release(self, owner: str) -> None:
        key = self.given[owner]
        if key is None:
            return
        m = self.model[key]
        released = self.stores[owner].release(key, owner)
        event(f"release: {released}")
        if m.holder(self.clock) == owner:
            assert released
        elif m.owner != owner:
            assert not released
        if released:
            m.owner = m.expires = None

    @rule(owner=st.sampled_from(OWNERS))
    def release_all(self, owner: str) -> None:
        marked = [k for k in KEYS if self.model[k].owner == owner]
        live = [k for k in marked if self.model[k].holder(self.clock) == owner]
        n = self.stores[owner].release_all(owner)
        assert len(live) <= n <= len(marked)
        for key in marked:  # an expired lease may or may not count as held
            item = self.stores[owner].get(key)
            assert item.lease_owner in (None, owner) and (key not in live or not item.lease_owner)
            self.model[key].owner, self.model[key].expires = item.lease_owner, item.lease_expires

    @rule(step=st.sampled_from(STEPS))
    def advance(self, step: float) -> None:
        self.clock += step

    # -- turns ----------------------------------------------------------------------------

    @rule(
        owner=st.sampled_from(OWNERS),
        result=st.sampled_from(RESULTS),
        pick=st.sampled_from(("mine", "theirs", *KEYS)),
        stale=st.integers(0, 4).map(lambda n: n == 0),
        slot=st.booleans(),
    )
    def record(self, owner: str, result: str, pick: str, stale: bool, slot: bool) -> None:
        other = next(o for o in OWNERS if o != owner)
        given = {"mine": self.given[owner], "theirs": self.given[other]}
        key = given.get(pick, pick) or KEYS[0]
        m = self.model[key]
        store = self.stores[owner]
        item = store.get(key)
        turns = (m.turns - 1 if m.turns else m.turns + 1) if stale else m.turns
        claim = Claim(driver="loop" if slot else owner, turns=turns, owner=owner if slot else None)
        draft = make_draft(item, result, nonce=f"{owner}-{next(self.nonces)}")
        holder = m.holder(self.clock)
        expected: type[Exception] | None = None
        if m.state.terminal:
            expected = NotTodo
        elif holder not in (None, owner):
            expected = LeaseConflict
        elif turns != m.turns:
            expected = TurnMoved
        event(f"record: {'written' if expected is None else expected.__name__}")
        try:
            after, attempt = store.record(draft, claim, now=self.clock)
        except (NotTodo, LeaseConflict) as exc:
            assert type(exc) is expected, (expected, exc)
            return
        assert expected is None, f"{expected} was not raised"
        state, tries = after_turn(m, result)
        assert (after.state, after.tries, after.turns) == (state, tries, m.turns + 1)
        assert (attempt.turn, attempt.state_after, attempt.tries_after) == (
            m.turns + 1,
            state,
            tries,
        )
        assert attempt.driver == claim.driver and attempt.notes.nonce == draft.notes.nonce
        m.state, m.tries, m.turns = state, tries, m.turns + 1
        if state.terminal or m.owner != owner:
            m.owner = m.expires = None  # a lock ends the lease; another's expired one is gone
        if state.terminal:
            self.crashed.discard(key)  # locked while its withdrawal was being written: a lock
        assert (after.lease_owner, after.lease_expires) == (m.owner, m.expires)
        if attempt.judged:
            self.nexts[owner] = 0
        if state.terminal:
            self.locked[key] = store.snapshot(key)
        self.last = (owner, draft, claim, attempt)

    @precondition(lambda self: self.last is not None)
    @rule()
    def retry_last_record(self) -> None:
        """The last record's answer was lost: the driver sends the same draft again."""
        assert self.last is not None
        owner, draft, claim, attempt = self.last
        before = self.stores[owner].snapshot(draft.key)
        _, again = self.stores[owner].record(draft, claim, now=self.clock)
        assert again == attempt
        assert self.stores[owner].snapshot(draft.key) == before

    # -- a person's actions ---------------------------------------------------------------

    def _person(
        self, pick: str, fits: Callable[[State], bool], draft: Draft
    ) -> tuple[str, Item, Attempt] | None:
        """Record a person's ``draft`` on ``pick`` (a key, or ``*``: the first item whose state
        ``fits`` the action); None if it is refused, as it must be unless the state fits."""
        if pick == "*":
            pick = next((k for k in KEYS if fits(self.model[k].state)), KEYS[0])
        key = pick
        m = self.model[key]
        fits_now = fits(m.state)
        d = replace(draft, key=key, notes=Notes(via="human", nonce=f"p-{next(self.nonces)}"))
        claim = Claim(PERSON, m.turns)
        store = self.stores["bob"]
        try:
            after, attempt = store.record(d, claim, now=self.clock)
        except IllegalTransition as exc:
            event(f"person: {draft.action} refused")
            assert not fits_now and type(exc) is IllegalTransition, exc
            return None
        event(f"person: {draft.action}")
        assert fits_now, f"{draft.action} on a {m.state} item was not refused"
        assert (attempt.kind, attempt.action, attempt.driver) == (
            AttemptKind.HUMAN,
            draft.action,
            PERSON,
        )
        assert (attempt.turn, after.turns) == (m.turns + 1, m.turns + 1)
        assert after.lease_owner is None and not after.exported
        if key in self.exported or key in self.crashed:
            # its lock may be in the file: withdrawn by the next export if it is TODO by then
            # (a decided REVIEW reopened before its decision left), else superseded
            self.owed.add(key)
        self.exported.discard(key)  # its mark is cleared: exported again once it is locked
        self.crashed.discard(key)  # and no longer in the batch a dead writer left open
        self.last = ("bob", d, claim, attempt)
        return key, after, attempt

    @precondition(lambda self: any(m.state is State.REVIEW for m in self.model.values()))
    @rule(pick=st.sampled_from(("*", "*", *KEYS)), accept=st.booleans())
    def person_resolves(self, pick: str, accept: bool) -> None:
        state, action = (State.PASS, "accept") if accept else (State.DONE, "reject")
        draft = Draft(key="", kind=AttemptKind.HUMAN, transition=Transition(state, 0))
        review = replace(draft, action=action, note="checked")
        done = self._person(pick, lambda s: s is State.REVIEW, review)
        if done is None:
            return
        key, after, attempt = done
        m = self.model[key]
        assert (after.state, after.tries, after.round) == (state, m.tries, m.round)
        assert (attempt.state_after, attempt.tries_after, attempt.round) == (
            state,
            m.tries,
            m.round,
        )
        m.state, m.turns = state, m.turns + 1
        self.locked[key] = self.stores["bob"].snapshot(key)

    @precondition(lambda self: any(m.state.terminal for m in self.model.values()))
    @rule(pick=st.sampled_from(("*", "*", *KEYS)))
    def person_reopens(self, pick: str) -> None:
        draft = Draft(
            key="",
            kind=AttemptKind.HUMAN,
            transition=Transition(State.TODO, 0, new_round=True),
            action="reopen",
        )
        done = self._person(pick, lambda s: s.terminal, draft)
        if done is None:
            return
        key, after, attempt = done
        m = self.model[key]
        assert (after.state, after.tries, after.round, after.locked_at) == (
            State.TODO,
            0,
            m.round + 1,
            None,
        )
        assert (attempt.state_after, attempt.tries_after, attempt.round) == (
            State.TODO,
            0,
            m.round + 1,
        )
        m.state, m.tries, m.turns, m.round = State.TODO, 0, m.turns + 1, m.round + 1
        del self.locked[key]
        self.remaining += 1  # the one way remaining grows: a person reopened an item

    # -- export ---------------------------------------------------------------------------

    @rule(owner=st.sampled_from(OWNERS))
    def export_results(self, owner: str) -> None:
        terminal = {k for k in KEYS if self.model[k].state.terminal}
        withdrawn = {k for k in self.owed if not self.model[k].state.terminal}
        n = export(self.stores[owner], self.out).count
        event(f"export: {'recovered' if self.crashed else 'plain'}, {min(n, 2)} or more new")
        event(f"export: {min(len(withdrawn), 2)} or more withdrawn")
        new = terminal - self.exported - self.crashed
        assert n == len(new) + len(withdrawn)
        self.lines.update(new | self.crashed | withdrawn)  # a crashed batch is written again
        self.exported |= terminal
        self.crashed.clear()
        self.owed.clear()  # written, or dropped for an item that locked again
        # Once per lock, once per withdrawal: an item a person moved is exported again.
        assert Counter(keys_in(self.out)) == self.lines
        assert self.stores[owner].exported_count() == len(self.exported)
        # A reader of the file believes the last record of each key: never a withdrawn lock.
        last = {r["key"]: r for r in jsonl(self.out)}
        for key, record in last.items():
            m = self.model[key]
            if m.state.terminal:
                assert (record["state"], record["round"]) == (m.state.value, m.round), key
            else:  # withdrawn (in this round, or an earlier one if its later lock never left)
                assert (record["state"], record["action"], record["locked_at"]) == (
                    "TODO",
                    "reopen",
                    None,
                ), key
                assert record["round"] <= m.round, key

    # Exports to one file hold its lock, and each recovers what a dead writer left before it
    # claims anew: so at most one batch per file is ever open.
    @precondition(lambda self: not self.crashed)
    @rule(owner=st.sampled_from(OWNERS), limit=st.integers(min_value=1, max_value=3))
    def crash_mid_export(self, owner: str, limit: int) -> None:
        """A writer claims a batch, appends part of it and dies before finishing it."""
        path = str(self.out.resolve())
        offset = self.out.stat().st_size if self.out.exists() else 0
        batch = self.stores[owner].claim_export(path, offset, limit)
        locks = sorted(
            (k for k in KEYS if self.model[k].state.terminal and k not in self.exported),
            key=KEYS.index,
        )[:limit]
        # The withdrawals owed fill the rest, in item order; an item locked since is dropped.
        owed = sorted(self.owed, key=KEYS.index)[: limit - len(locks)]
        self.owed -= set(owed)
        pending = sorted(
            [*locks, *(k for k in owed if not self.model[k].state.terminal)], key=KEYS.index
        )
        if batch is None:
            assert not pending
            return
        keys = [e.item.key for e in batch.entries]
        assert keys == pending and batch.offset == offset
        self.crashed |= set(keys)
        with self.out.open("ab") as f:
            f.write(b'{"key":"' + keys[0].encode() + b'","sta')


def test_random_sequences_keep_every_invariant(store_harness: StoreHarness, tmp_path: Path) -> None:
    class Machine(LedgerMachine):
        harness = store_harness
        folder = tmp_path

    run_state_machine_as_test(
        Machine,
        settings=settings(
            max_examples=30,
            stateful_step_count=40,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
