"""Hostile submissions: whatever a generator returns ends in a recorded verdict, on both engines.

Everything a generator produces is hostile input. These tests drive generated junk — random
bytes, invalid UTF-8, lone surrogates (escaped in JSON and raw), NUL bytes, 10k-deep nesting,
5 MB strings, duplicate keys, huge numbers, every JSON type where another is expected — through
the paths `submit`, `replay` and the loop use, and check after each one that the turn was
recorded (or refused with a one-line reins error, never a traceback) and that the ledger's
invariants hold. ``make fuzz`` runs the same properties with a large example budget
(``REINS_FUZZ_EXAMPLES``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reins import NotTodo, State, Store
from reins.loop import LoopOptions, TextGenerator, run
from reins.quests.emails import quest as EMAILS
from reins.store.walk import iter_items
from reins.testing import FakeBackend
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.turn.replay import Replayed, ReplayLine, replay_line
from tests.kit import Cli
from tests.kit.loopkit import FAST

EXAMPLES = int(os.environ.get("REINS_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

# Hand-picked hostile answers: each has broken something once, somewhere.
NASTY: list[str | bytes] = [
    '{"addresses":["\\ud800@example.org"]}',  # an escaped lone surrogate
    '{"addresses":["\\udfff\\ud800"]}',
    "\ud800 raw lone surrogate",
    b"\xff\xfe not utf-8",
    b"\xed\xa0\x80",  # a surrogate encoded as UTF-8 bytes
    "nul \x00 inside",
    '{"addresses":["a\\u0000b@example.org"]}',
    "[" * 10_000 + "]" * 10_000,
    '{"addresses":' + "[" * 10_000 + "]" * 10_000 + "}",
    "x" * (5 * 1024 * 1024),
    '{"addresses":["a@b.example"],"addresses":["c@d.example"]}',
    '{"addresses":[' + "9" * 5000 + "]}",
    '{"addresses":[1e999]}',
    '{"addresses":{"a":1}}',
    '{"addresses":[null,true,1.5,{}]}',
    "",
]

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300),
    st.text(alphabet=st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), max_size=5),
    st.builds(lambda s: json.dumps({"addresses": [s]}), st.text(max_size=40)),
    st.builds(lambda v: json.dumps({"addresses": v}), JSON_VALUES),
    st.builds(json.dumps, JSON_VALUES),
    st.builds(_nested, st.integers(1, 12_000)),
    st.sampled_from(NASTY),
)


@pytest.fixture
def store(store_harness: StoreHarness) -> Iterator[Store]:
    opened = store_harness.open(store_harness.create())
    try:
        yield opened
    finally:
        opened.close()


def assert_sound(store: Store) -> None:
    assert store.check() == []


@FUZZ
@given(raw=HOSTILE)
def test_any_submission_is_judged_and_recorded(store: Store, raw: str | bytes) -> None:
    key = f"s{abs(hash(raw)) % 10**12}"
    store.add([(key, next(iter(EMAILS.seed([])))[1])])
    try:
        recorded, _ = submit(store, EMAILS, key, raw, driver="fuzz")
    except NotTodo:
        return  # the same example twice: the first locked it
    attempt = recorded.attempt
    assert attempt.judged and attempt.outcome in {"PASS", "REVIEW", "FAIL", "SKIPPED", "BLOCKED"}
    # What was recorded reads back the same, and prints.
    item, log = store.snapshot(key)
    assert log[-1] == attempt and item.turns == attempt.turn
    assert recorded.text.encode("utf-8")
    assert_sound(store)


@FUZZ
@given(raw=st.text(max_size=300) | st.sampled_from([n for n in NASTY if isinstance(n, str)]))
def test_any_replayed_output_is_recorded_and_the_rest_of_the_file_goes_on(
    store: Store, raw: str
) -> None:
    key = f"r{abs(hash(raw)) % 10**12}"
    store.add([(key, next(iter(EMAILS.seed([])))[1]), (key + "-next", None)])
    first = replay_line(store, EMAILS, ReplayLine(1, key, raw))
    assert first.status in (Replayed.RECORDED, Replayed.LOCKED, Replayed.REPEATED)
    assert_sound(store)


def test_a_loop_records_every_hostile_answer_and_finishes(store_harness: StoreHarness) -> None:
    """The loop's path: a backend answers each nasty text in turn; nothing stops the run."""
    location = store_harness.create()
    payload = next(iter(EMAILS.seed([])))[1]
    answers = {
        f"n{i}": [n.decode("utf-8", "surrogateescape") if isinstance(n, bytes) else n]
        for i, n in enumerate(NASTY)
    }
    with closing(store_harness.open(location)) as s:
        s.add((key, payload) for key in answers)
        summary = run(
            s,
            dataclasses.replace(EMAILS, max_tries=1),
            TextGenerator(FakeBackend(answers)),
            options=LoopOptions(**FAST),
            handle_signals=False,
        )
    with closing(store_harness.open(location)) as s:
        states = {i.key: i.state for i in iter_items(s)}
        assert all(state is not State.TODO for state in states.values()), states
        assert summary.judged == len(NASTY) and summary.generation_errors == 0
        assert_sound(s)


def test_the_cli_records_an_escaped_lone_surrogate_and_prints_it(cli: Cli, tmp_path: Path) -> None:
    """The reported defect: a traceback from `submit`, a dead `replay`, a `log --json` crash."""
    cli.quest = "emails"
    assert cli("scan").exit_code == 0
    out = cli("submit", "--key", "01-meeting", input='{"addresses":["\\ud800@example.org"]}')
    assert out.exit_code == 4 and '"\\ud800@example.org"' in out.stdout
    out = cli("log", "01-meeting", "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["attempts"][0]["outcome"] == "FAIL"
    lines = [
        {"key": "02-newsletter", "output": '{"addresses":["\\udfff"]}'},
        {"key": "03-invoice", "output": '{"addresses":[]}'},
    ]
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = cli("replay", "--from", "out.jsonl")
    assert out.exit_code == 0, out.stderr
    assert "replayed 2 line(s): 2 recorded" in out.stdout
