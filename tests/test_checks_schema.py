"""json_schema: one fact per validation error, the schema from a file or inline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reins.checks import BASE, spec_of, validate
from reins.errors import ParamError, ParamValueError
from tests.kit.checkkit import HOSTILE, build, run

SCHEMA = {
    "type": "object",
    "required": ["who", "when"],
    "properties": {
        "who": {"type": "array", "items": {"type": "string"}},
        "when": {"type": "string", "pattern": "^[0-9]{4}"},
    },
    "additionalProperties": False,
}


def test_a_valid_submission_leaves_no_fact() -> None:
    check = build("json_schema", schema=SCHEMA)
    assert run(check, {"who": ["Ada"], "when": "2024-01-02"}) == []


def test_each_error_is_a_located_fact() -> None:
    check = build("json_schema", schema=SCHEMA)
    facts = run(check, {"who": ["Ada", 7], "when": "soon", "extra": 1})
    assert [(f.where, f.expected) for f in facts] == [
        ("submission", "additionalProperties false"),
        ("submission.when", 'pattern "^[0-9]{4}"'),
        ("submission.who[1]", 'type "string"'),
    ]
    assert "7 is not of type 'string'" in facts[2].actual


def test_a_missing_property_names_the_requirement() -> None:
    (fact,) = run(build("json_schema", schema=SCHEMA), {"who": []})
    assert fact.where == "submission"
    assert fact.expected == 'required ["who", "when"]'
    assert "'when' is a required property" in fact.actual


def test_the_schema_file_is_read_relative_to_the_quest_folder(tmp_path: Path) -> None:
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA), encoding="utf-8")
    spec = spec_of("json_schema")
    params = validate(spec, {"schema": "schema.json", BASE: str(tmp_path)})
    check = spec.build(params)
    assert run(check, {"who": [], "when": "2024"}) == []
    assert len(run(check, {"who": "Ada", "when": "2024"})) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not JSON"),
        ("[1, 2]", "holds a list"),
        ('{"type": "strang"}', "not a valid JSON Schema"),
    ],
)
def test_an_unusable_schema_is_refused_at_build(
    tmp_path: Path, content: str | None, message: str
) -> None:
    if content is not None:
        (tmp_path / "schema.json").write_text(content, encoding="utf-8")
    spec = spec_of("json_schema")
    with pytest.raises(ParamValueError, match=message) as caught:
        spec.build(validate(spec, {"schema": "schema.json", BASE: str(tmp_path)}))
    assert caught.value.param == "schema"
    assert isinstance(caught.value, ValueError)


def test_facts_are_capped_with_a_count_of_the_rest() -> None:
    check = build("json_schema", schema={"type": "array", "items": {"type": "string"}}, max_facts=3)
    facts = run(check, list(range(10)))
    assert [f.where for f in facts] == ["submission[0]", "submission[1]", "submission"]
    assert facts[-1].actual == "8 more"


def test_a_path_selects_what_is_validated() -> None:
    check = build("json_schema", schema={"type": "string"}, path="submission.people[*].name")
    facts = run(check, {"people": [{"name": "a"}, {"name": 2}]})
    assert [f.where for f in facts] == ["submission.people[1].name"]
    assert [f.actual for f in run(check, {"people": []})] == ["nothing there"]


def test_boolean_schemas() -> None:
    assert run(build("json_schema", schema=True), {"x": 1}) == []
    assert len(run(build("json_schema", schema=False), {"x": 1})) == 1


@pytest.mark.parametrize("submission", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_submissions_are_facts_not_exceptions(submission: object) -> None:
    facts = run(build("json_schema", schema=SCHEMA), submission)
    assert len(facts) >= 1


def test_deep_nesting_does_not_crash() -> None:
    deep: object = "x"
    for _ in range(3000):
        deep = [deep]
    schema = {
        "$ref": "#/$defs/n",
        "$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
    }
    facts = run(build("json_schema", schema=schema), deep)
    assert len(facts) == 1


def test_parameters_are_validated() -> None:
    spec = spec_of("json_schema")
    with pytest.raises(ParamError, match="missing"):
        validate(spec, {})
    with pytest.raises(ParamError, match="whole number"):
        validate(spec, {"schema": {}, "max_facts": "3"})
    with pytest.raises(ParamValueError, match="at least 1"):
        build("json_schema", schema={}, max_facts=0)
    with pytest.raises(ParamError, match="expected a string, true or false, or a table, got int"):
        validate(spec, {"schema": 3})  # typed str | bool | table: a type error now
