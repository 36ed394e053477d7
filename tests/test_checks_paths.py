"""Paths into the submission and the item: parse, print and resolve."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.checks.paths import Every, Field, Index, Path, parse
from reins.gate.rule import Context
from reins.values import JSON

CTX = Context(
    key="k1",
    submission={
        "who": ["Ada", "Bob"],
        "people": [{"name": "Ada"}, {"age": 3}, {"name": "Cy"}],
        "odd key": 1,
    },
    payload={"date": "2024-03-01"},
    source="the text",
    raw='{"who": …}',
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("submission", [("submission", CTX.submission)]),
        ("submission.who", [("submission.who", ["Ada", "Bob"])]),
        ("submission.who[1]", [("submission.who[1]", "Bob")]),
        ("submission.people[0].name", [("submission.people[0].name", "Ada")]),
        (
            "submission.people[*].name",
            [("submission.people[0].name", "Ada"), ("submission.people[2].name", "Cy")],
        ),
        ('submission["odd key"]', [('submission["odd key"]', 1)]),
        ("item.date", [("item.date", "2024-03-01")]),
        ("source", [("source", "the text")]),
        ("key", [("key", "k1")]),
        ("raw", [("raw", '{"who": …}')]),
    ],
)
def test_resolve_reaches_each_value_with_its_location(
    text: str, expected: list[tuple[str, object]]
) -> None:
    assert parse(text).resolve(CTX) == expected


@pytest.mark.parametrize(
    "text",
    [
        "submission.missing",
        "submission.who[5]",
        "submission.who.name",  # a field of an array
        "submission.people[1].name",
        "item.date.year",  # a field of a string
        "submission.people[*].name.first",
    ],
)
def test_a_step_that_cannot_be_taken_reaches_nothing(text: str) -> None:
    assert parse(text).resolve(CTX) == []


def test_every_walks_object_members_too() -> None:
    ctx = Context(key="k", submission={"a": {"x": 1, "y": 2}})
    assert parse("submission.a[*]").resolve(ctx) == [("submission.a.x", 1), ("submission.a.y", 2)]


def test_resolve_on_non_json_submission_types_reaches_nothing_below_the_root() -> None:
    submissions: list[JSON] = ["text", 3, None, True, [1]]
    for submission in submissions:
        ctx = Context(key="k", submission=submission)
        assert parse("submission.who").resolve(ctx) == []
        assert parse("submission[*]").resolve(ctx) == (
            [("submission[0]", 1)] if submission == [1] else []
        )


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("", 1),
        ("answer.who", 1),
        ("submission.", 12),
        ("submission..who", 12),
        ("submission.who[", 15),
        ("submission.who[-1]", 15),
        ("submission.who[x]", 15),
        ("submission who", 11),
        ("submission.who]", 15),
        ("submission.1st", 12),
    ],
)
def test_bad_syntax_names_the_character(text: str, column: int) -> None:
    with pytest.raises(ValueError, match=f"character {column}:"):
        parse(text)


def test_text_roots_have_no_parts() -> None:
    for text in ("source.x", "key[0]", "raw[*]"):
        with pytest.raises(ValueError, match="is text and has no parts"):
            parse(text)


def test_parse_builds_the_steps() -> None:
    assert parse('submission.a[3][*]["b c"]') == Path(
        "submission", (Field("a"), Index(3), Every(), Field("b c"))
    )
    assert not parse("submission[*]").definite
    assert parse("submission.a[0]").definite


names = st.text(min_size=1, max_size=8)
steps = st.lists(
    st.one_of(
        names.map(Field),
        st.integers(min_value=0, max_value=10**6).map(Index),
        st.just(Every()),
    ),
    max_size=6,
)


@given(st.sampled_from(["submission", "item"]), steps)
def test_printing_then_parsing_gives_the_same_path(root: str, parts: list[object]) -> None:
    path = Path(root, tuple(parts))  # type: ignore[arg-type]
    assert parse(str(path)) == path


@given(st.text(max_size=30))
def test_any_text_parses_to_a_stable_path_or_raises_value_error(text: str) -> None:
    try:
        path = parse(text)
    except ValueError as exc:
        assert "character" in str(exc) or "no parts" in str(exc)
    else:
        assert parse(str(path)) == path


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=20,
)


@given(json_values, steps)
def test_every_location_resolves_back_to_its_value(value: JSON, parts: list[object]) -> None:
    """A location is itself a definite path that reaches exactly the value it labels."""
    ctx = Context(key="k", submission=value)
    for where, found in Path("submission", tuple(parts)).resolve(ctx):  # type: ignore[arg-type]
        again = parse(where)
        assert again.definite
        assert again.resolve(ctx) == [(where, found)]
