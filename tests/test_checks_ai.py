"""ai: a model's doubt parks an item for review, never more; the backend is a FakeBackend."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from reins.backends import registry
from reins.checks import spec_of, validate
from reins.checks.ai import render
from reins.errors import JudgeError, ParamError, ParamValueError
from reins.gate.ai import is_ai
from reins.gate.rule import Context, Level, Rule
from reins.testing import FakeBackend
from tests.kit.checkkit import build, run


class Factory:
    """A backend factory for the registry that hands out one scripted FakeBackend."""

    def __init__(self, backend: FakeBackend) -> None:
        self.options: dict[str, str] = {}
        self.backend = backend
        self.models: list[str] = []

    def __call__(self, model: str, options: dict[str, str]) -> FakeBackend:
        self.models.append(model)
        return self.backend


@pytest.fixture
def fake() -> Iterator[Factory]:
    factory = Factory(
        FakeBackend(
            lambda call: "NO: the date is wrong" if "bad" in call.prompt.user else "yes, fine"
        )
    )
    registry.register("fakeai", factory)
    yield factory
    registry.unregister("fakeai")


QUESTION = "Is this answer right? {submission}\nSource: {source} ({key}) {not a placeholder}"


def test_a_doubtful_answer_is_a_review_fact(fake: Factory) -> None:
    check = build("ai", backend="fakeai:judge-1", question=QUESTION, doubt_when=r"^\s*no\b")
    assert run(check, "good", source="src") == []
    (fact,) = run(check, {"when": "bad"}, source="src", key="k7")
    assert fact.level == "REVIEW"
    assert fact.actual == "NO: the date is wrong"
    assert fake.models == ["judge-1"]  # built once, on the first question
    prompts = [c.prompt.user for c in fake.backend.calls]
    assert prompts[1] == (
        'Is this answer right? {"when": "bad"}\nSource: src (k7) {not a placeholder}'
    )


def test_the_check_is_capped_at_review() -> None:
    spec = spec_of("ai")
    assert spec.ceiling is Level.REVIEW
    check = build("ai", backend="fakeai:x", question="q", doubt_when="no")
    assert is_ai(Rule("r", Level.REVIEW, "an ai rule", check))


def test_the_gate_loads_without_building_the_backend() -> None:
    check = build("ai", backend="nosuchbackend:model", question="q", doubt_when="no")
    with pytest.raises(JudgeError, match="nosuchbackend"):
        run(check, "x")


def test_a_backend_failure_is_the_judge_s_failure(fake: Factory) -> None:
    fake.backend.replies = [RuntimeError("down")]
    check = build("ai", backend="fakeai:x", question="{submission}", doubt_when="no")
    with pytest.raises(JudgeError, match="down"):
        run(check, "x")


def test_it_answers_from_inside_a_running_event_loop(fake: Factory) -> None:
    check = build("ai", backend="fakeai:x", question="{submission}", doubt_when="^no")

    async def judge_inline() -> list[object]:
        return run(check, "bad")  # type: ignore[return-value]

    assert len(asyncio.run(judge_inline())) == 1


def test_render_reads_no_value_twice() -> None:
    ctx = Context(key="k", submission="{source}", source="SECRET-SOURCE")
    assert render("{submission}|{source}", ctx) == "{source}|SECRET-SOURCE"


@pytest.mark.parametrize(
    ("given", "param"),
    [
        ({"backend": "no-colon"}, "backend"),
        ({"question": "  "}, "question"),
        ({"doubt_when": "("}, "pattern"),
        ({"flags": "z"}, "flags"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_unusable_values_are_refused_at_build(given: dict[str, object], param: str) -> None:
    params = {"backend": "fakeai:x", "question": "q", "doubt_when": "no", **given}
    with pytest.raises(ParamValueError) as caught:
        build("ai", **params)
    assert caught.value.param == param


def test_parameters_are_validated() -> None:
    spec = spec_of("ai")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {"backend": "a:b", "question": "q"})
    with pytest.raises(ParamError, match="unknown"):
        validate(spec, {"backend": "a:b", "question": "q", "doubt_when": "x", "level": "FAIL"})
