"""What the conformance tests share: a small quest, turns built by the record table (a machine's
and a person's), and the checks every test runs after it writes (the ledger is sound, its
counters agree with its log).

Everything here goes through the :class:`~reins.store.protocol.Store` protocol, never an
engine's internals: the suite holds any engine to the same behaviour.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from reins.gate import Context, Fact, Level, Outcome, Verdict, rule
from reins.quest import Quest, Seed
from reins.store.codec import fired_rules
from reins.store.model import (
    Attempt,
    AttemptKind,
    Claim,
    Draft,
    Item,
    Lease,
    Notes,
    State,
    Stats,
    Transition,
    Usage,
)
from reins.store.owner import Owner
from reins.store.protocol import Store
from reins.store.walk import iter_items
from reins.testing.harness import StoreHarness
from reins.turn.failures import GenerationFailure
from reins.turn.record import Origin, draft

KEYS = ("a", "b", "c")
# A fake clock: every lease and record in the suite passes ``now=``, so nothing waits.
T0 = 1_000_000.0
TTL = 60.0
ERROR = "ERROR"  # a generation error, beside the gate's outcomes
RESULTS = ("PASS", "FAIL", "REVIEW", "SKIPPED", "BLOCKED", ERROR)
PERSON = "pat"  # the driver of every person's action
LONE = "\ud800"  # a lone surrogate: not UTF-8, yet a generator or an input may produce one
# The quests ledgers belong to (a ledger records only a quest's name and where it came from).
TINY_OWNER = Owner("tiny", "/quests/tiny")
OTHER_OWNER = Owner("other", "pkg.other:quest")


def _seed(args: Sequence[str]) -> Iterator[Seed]:
    for word in args or KEYS:
        yield Seed(word, {"word": word})


def _render(item: Item) -> str:
    return f"Say 'good' for {item.key}."


def _prepare(item: Item, raw: str) -> Context | Verdict:
    return Context(key=item.key, submission=raw.strip(), payload=item.payload)


@rule("not-bad", Level.FAIL, "the answer is not 'bad'")
def _not_bad(ctx: Context) -> Fact | None:
    if isinstance(ctx.submission, str) and "bad" in ctx.submission:
        return Fact(where="answer", expected="good", actual=ctx.submission)
    return None


@rule("not-meh", Level.REVIEW, "the answer is not 'meh'")
def _not_meh(ctx: Context) -> Fact | None:
    if isinstance(ctx.submission, str) and "meh" in ctx.submission:
        return Fact(where="answer", expected="good", actual=ctx.submission)
    return None


QUEST = Quest(
    name="conformance",
    seed=_seed,
    render=_render,
    prepare=_prepare,
    rules=[_not_bad, _not_meh],
    max_tries=3,
)


def verdict(result: str, rule_id: str = "not-bad") -> Verdict | GenerationFailure:
    """The verdict (or generation failure) a turn of ``result`` records."""
    if result == ERROR:
        return GenerationFailure("the backend timed out")
    if result == "PASS":
        return Verdict(Outcome.PASS)
    if result == "FAIL":
        fact = Fact(rule=rule_id, where="answer", expected="good", actual="bad")
        return Verdict(Outcome.FAIL, (fact,), rule_id)
    if result == "REVIEW":
        fact = Fact(rule="not-meh", where="answer", expected="good", actual="meh")
        return Verdict(Outcome.REVIEW, (fact,), "not-meh")
    return Verdict.short(result)


def make_draft(
    item: Item, result: str, *, nonce: str | None = None, rule_id: str = "not-bad"
) -> Draft:
    """The draft of a turn of ``result`` on ``item`` as it stands, by the record table."""
    origin = Origin(notes=Notes(via="conformance", nonce=nonce))
    submission = None if result == ERROR else result.lower()
    return draft(QUEST, item, verdict(result, rule_id), origin, submission=submission)


def turn(
    store: Store,
    key: str,
    result: str,
    *,
    driver: str = "conformance",
    owner: str | None = None,
    turns: int | None = None,
    now: float = T0,
    nonce: str | None = None,
    rule_id: str = "not-bad",
) -> tuple[Item, Attempt]:
    """Record one turn of ``result`` on ``key``, claiming the turn count read now (or
    ``turns``)."""
    item = store.get(key)
    claim = Claim(driver=driver, turns=item.turns if turns is None else turns, owner=owner)
    return store.record(make_draft(item, result, nonce=nonce, rule_id=rule_id), claim, now=now)


def full_draft(key: str) -> Draft:
    """A judged FAIL on ``key`` with every field of a draft set, hostile text in each."""
    facts = (
        Fact(rule="not-bad", where="answer", expected="good", actual=f"bad {LONE} \x00 \udfff"),
        Fact(rule="not-bad", where="line 2", expected='"quoted"\n', actual="é 🎉 \u2028"),
        Fact(rule="other", where="", expected="", actual=""),
    )
    return Draft(
        key=key,
        kind=AttemptKind.JUDGED,
        transition=Transition(State.TODO, 1),
        outcome="FAIL",
        root_cause="not-bad",
        facts=facts,
        feedback="a -> FAIL (state TODO, tries 1/3)\nroot cause: not-bad\n  é 🎉\n",
        submission="bad answer\nwith lines é 🎉 \t and \\ backslashes",
        policy="facts+previous",
        prompt_digest="0123456789abcdef",
        usage=Usage(
            backend="fake",
            input_tokens=12,
            output_tokens=34,
            cost=0.00125,
            latency=1.25,
            cache_read_tokens=8,
            cache_write_tokens=3,
            batch=True,
            list_cost=0.0025,
        ),
        started_at="2026-01-02T03:04:05.678Z",
        notes=Notes(
            via="loop",
            seed=2_147_483_647,
            escalated_by=f"not-bad {LONE}",
            model="model \udfff \x00 é",
            line=7,
            nonce="abc123",
            batch="batch_é",
            branch="reins/a",
            commit="c" * 40,
            base="b" * 40,
            sandbox="none",
            patch_start=12,
            patch_end=2_000_000,
        ),
    )


def leased(store: Store, owner: str, now: float = T0) -> Lease:
    """A lease for ``owner`` (the test fails if there is no item to lease)."""
    lease = store.lease(owner, ttl=TTL, now=now)
    assert lease is not None, owner
    return lease


def human(
    key: str,
    state: State,
    action: str,
    *,
    note: str | None = None,
    new_round: bool = False,
    outcome: str | None = None,
    gate_digest: str | None = None,
    nonce: str | None = None,
) -> Draft:
    """A person's action on ``key`` that leaves it in ``state``."""
    return Draft(
        key=key,
        kind=AttemptKind.HUMAN,
        transition=Transition(state, 0, new_round=new_round),
        outcome=outcome,
        gate_digest=gate_digest,
        action=action,
        note=note,
        notes=Notes(via="human", nonce=nonce),
    )


def reopen(key: str, *, note: str | None = None, nonce: str | None = None) -> Draft:
    return human(key, State.TODO, "reopen", note=note, new_round=True, nonce=nonce)


def act(store: Store, d: Draft, *, now: float = T0) -> tuple[Item, Attempt]:
    """Record a person's action, claiming the turn count read now."""
    return store.record(d, Claim(PERSON, store.get(d.key).turns), now=now)


def lock(store: Store, key: str, state: str) -> Item:
    """Lock ``key`` by machine turns: PASS or REVIEW at once, DONE by three FAILs."""
    for result in ["FAIL"] * 3 if state == "DONE" else [state]:
        item, _ = turn(store, key, result)
    assert item.state is State(state)
    return item


def judged(store: Store, key: str, result: str, gate: str | None) -> tuple[Item, Attempt]:
    """A machine's judged turn of ``result`` on ``key`` by the gate whose digest is ``gate``."""
    item = store.get(key)
    d = replace(make_draft(item, result), gate_digest=gate)
    return store.record(d, Claim("loop", item.turns), now=T0)


@contextmanager
def opened(
    harness: StoreHarness, location: str | None = None, keys: Iterable[str] = KEYS
) -> Iterator[Store]:
    """A store on a fresh ledger (or on ``location``) holding ``keys``, closed afterwards."""
    store = harness.open(harness.create() if location is None else location)
    try:
        store.add((k, {"word": k}) for k in keys)
        yield store
    finally:
        store.close()


def everything(store: Store) -> list[tuple[Item, list[Attempt]]]:
    """Every item with its log, in the order added."""
    return [store.snapshot(item.key) for item in iter_items(store)]


def world(store: Store, now: float = T0) -> tuple[list[tuple[Item, list[Attempt]]], Stats, int]:
    """All a refused operation must leave as it was: items, logs, counters, export marks."""
    return everything(store), store.stats(now=now), store.exported_count()


def assert_sound(store: Store) -> None:
    """``check()`` finds nothing, and the invariants hold when read through the protocol."""
    assert store.check() == []
    entries = everything(store)
    for item, log in entries:
        assert item.turns == len(log), item
        assert [a.turn for a in log] == list(range(1, len(log) + 1)), item
        assert all(a.key == item.key for a in log), item
        if log:
            last = log[-1]
            assert (item.state, item.tries, item.round) == (
                last.state_after,
                last.tries_after,
                last.round,
            ), item
            assert log[0].round == 1, item
            for a, b in pairwise(log):  # the ratchet, turn by turn
                if a.state_after.terminal or b.round != a.round:
                    assert b.kind is AttemptKind.HUMAN, (item, b)  # only a person moves it
                if b.round == a.round:
                    assert b.tries_after >= a.tries_after, (item, b)
                else:  # a new round: the next one, from scratch
                    assert (b.round, b.state_after, b.tries_after) == (a.round + 1, State.TODO, 0)
        else:
            assert (item.state, item.tries, item.round) == (State.TODO, 0, 1), item
        judged = [a for a in log if judging(a)]
        assert item.root_cause == (judged[-1].root_cause if judged else None), item
        assert item.gate_digest == (judged[-1].gate_digest if judged else None), item
        assert (item.locked_at is not None) == item.state.terminal, item
        if item.state.terminal:
            assert item.locked_at == log[-1].recorded_at, item
            # A lock ends a lease; what a locked item may hold is a person's claim on it while
            # it waits for them (reins.store.people): REVIEW, with no token.
            claimed = item.state is State.REVIEW and item.lease_token is None
            assert item.lease_owner is None or claimed, item
        if item.lease_owner is None:
            assert item.lease_token is None, item
    assert_counters_agree(store, entries)


def judging(a: Attempt) -> bool:
    """Whether ``a`` judged its item (a person's re-judgment too): the item keeps its root
    cause and gate digest from the last such attempt."""
    return a.judged or (a.kind is AttemptKind.HUMAN and a.outcome is not None)


def assert_counters_agree(
    store: Store, entries: list[tuple[Item, list[Attempt]]] | None = None
) -> None:
    """The kept counters (``stats``) say what a scan of the items and logs says."""
    entries = everything(store) if entries is None else entries
    stats = store.stats(now=T0)
    attempts = [a for _, log in entries for a in log]
    states = Counter(item.state for item, _ in entries)
    assert stats.counts == {s: states.get(s, 0) for s in State}
    assert stats.tries == dict(Counter(item.tries for item, _ in entries))
    assert stats.attempts == len(attempts)
    assert stats.input_tokens == sum(a.usage.input_tokens or 0 for a in attempts)
    assert stats.output_tokens == sum(a.usage.output_tokens or 0 for a in attempts)
    assert abs(stats.cost - sum(a.usage.cost or 0.0 for a in attempts)) < 1e-9
    assert stats.cache_read_tokens == sum(a.usage.cache_read_tokens or 0 for a in attempts)
    assert stats.cache_write_tokens == sum(a.usage.cache_write_tokens or 0 for a in attempts)
    batch = sum(a.usage.cost or 0.0 for a in attempts if a.usage.batch)
    assert abs(stats.batch_cost - batch) < 1e-9
    listed = (a.usage.cost if a.usage.list_cost is None else a.usage.list_cost for a in attempts)
    assert abs(stats.list_cost - sum(x or 0.0 for x in listed)) < 1e-9
    rules: dict[str, tuple[int, int]] = {}
    for a in attempts:
        for name, (fired, root) in fired_rules(a).items():
            was = rules.get(name, (0, 0))
            rules[name] = (was[0] + fired, was[1] + root)
    assert {r: v for r, v in stats.rules.items() if v != (0, 0)} == rules
    assert stats.kinds == dict(Counter(a.kind.value for a in attempts))
    assert stats.reopened == sum(1 for item, _ in entries if item.round > 1)
    digests = (item.gate_digest for item, _ in entries if item.gate_digest is not None)
    assert stats.gates == dict(Counter(digests))


def live_holder(item: Item, now: float) -> str | None:
    """Who holds ``item`` at ``now``: an expired lease holds nothing."""
    if item.lease_owner is not None and (item.lease_expires or 0.0) > now:
        return item.lease_owner
    return None


def jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of an export file (none if it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def keys_in(path: Path) -> list[str]:
    return [str(r["key"]) for r in jsonl(path)]


def with_nonce(d: Draft, nonce: str) -> Draft:
    return replace(d, notes=replace(d.notes, nonce=nonce))
