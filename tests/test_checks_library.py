"""The library as a whole: the registry, parameters read through each check's dataclass, the
reserved __base__, and docs/checks.md."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

import pytest

from reins.checks import (
    BASE,
    STANDARD,
    BuiltCheck,
    CheckSpec,
    QuestFolder,
    parameters,
    spec_of,
    validate,
)
from reins.checks.paths import SUBMISSION, parse
from reins.checks.paths import Path as At
from reins.checks.reference import refresh, table
from reins.checks.spec import CWD, Param
from reins.errors import ConfigError, ParamError, ParamValueError
from reins.gate.rule import Context
from reins.values import JSON, Fact

DOCS = Path(__file__).resolve().parent.parent / "docs" / "checks.md"


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_every_registered_check_loads_under_its_name(name: str) -> None:
    spec = spec_of(name)
    assert spec.name == name
    assert spec.summary and parameters(spec)
    assert all(isinstance(p, Param) and p.help for p in parameters(spec))


def test_an_unknown_check_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="Known: absent, ai, anchored, changed_files, command"):
        spec_of("anchord")


@dataclass(frozen=True, slots=True)
class Sample:
    """The parameters of a check written for these tests: one field of every kind."""

    word: str
    """the word to find"""
    words: str | tuple[str, ...] = ()
    """one more word, or several"""
    count: int = 1
    """how many times"""
    ratio: float | None = None
    """a fraction of the text"""
    strict: bool = False
    """whether case matters"""
    where: At = SUBMISSION
    """the text to search"""
    mode: Literal["all", "any"] = "all"
    """all or any"""
    options: dict[str, JSON] = field(default_factory=dict)
    """passed on as they are"""
    folder: QuestFolder = CWD


built: list[Sample] = []


def _build_sample(params: Sample) -> BuiltCheck:
    built.append(params)

    def check(ctx: Context) -> Fact | None:
        text = str(ctx.submission)
        if params.word not in text:
            return Fact(where=str(params.where), expected=params.word, actual=text)
        return None

    return check


SAMPLE = CheckSpec("sample", "the word is there", Sample, _build_sample)


def test_a_check_s_parameters_are_its_dataclass_with_defaults_and_conversions() -> None:
    params = validate(SAMPLE, {"word": "a", "words": ["x", "y"], "ratio": 1, BASE: "/q"})
    assert params == Sample(word="a", words=("x", "y"), ratio=1.0, folder=QuestFolder("/q"))
    assert isinstance(params.ratio, float)
    assert validate(SAMPLE, {"word": "a", "words": "x"}).words == "x"
    assert validate(SAMPLE, {"word": "a", "where": "item.date"}).where == parse("item.date")
    assert validate(SAMPLE, {"word": "a"}).folder == "."


def test_build_receives_the_validated_dataclass() -> None:
    built.clear()
    check = SAMPLE.build(validate(SAMPLE, {"word": "cat", "mode": "any"}))
    assert built == [Sample(word="cat", mode="any")]
    assert check(Context("k", "a dog")) == Fact(where="submission", expected="cat", actual="a dog")


TAKES = "this check takes: word, words, count, ratio, strict, where, mode, options"


@pytest.mark.parametrize(
    ("given", "param", "message"),
    [
        ({"word": "a", "wrd": 1}, "wrd", f"unknown parameter ({TAKES})"),
        ({"word": "a", "folder": "/etc"}, "folder", f"unknown parameter ({TAKES})"),
        ({}, "word", "missing; expected a string"),
        ({"word": 1}, "word", "expected a string, got int 1"),
        ({"word": "a", "count": True}, "count", "expected a whole number, got bool True"),
        ({"word": "a", "count": 1.5}, "count", "expected a whole number, got float 1.5"),
        ({"word": "a", "ratio": True}, "ratio", "expected a number, got bool True"),
        ({"word": "a", "strict": 1}, "strict", "expected true or false, got int 1"),
        ({"word": "a", "mode": 1}, "mode", "expected a string, got int 1"),
        ({"word": "a", "options": [1]}, "options", "expected a table, got list [1]"),
        (
            {"word": "a", "words": ["x", 1]},
            "words",
            "expected a string or an array of strings, got list ['x', 1]",
        ),
        ({"word": "a", "where": 3}, "where", 'expected a path such as "submission.who" or'),
    ],
)
def test_ill_typed_parameters_are_refused_naming_the_type(
    given: dict[str, object], param: str, message: str
) -> None:
    with pytest.raises(ParamError) as caught:
        validate(SAMPLE, given)
    assert not isinstance(caught.value, ParamValueError)
    assert (caught.value.check, caught.value.param) == ("sample", param)
    assert caught.value.message.startswith(message)


@pytest.mark.parametrize(
    ("given", "param", "message"),
    [
        ({"word": "a", "mode": "some"}, "mode", "expected one of all, any, got 'some'"),
        ({"word": "a", "where": "submission..x"}, "where", "character"),
    ],
)
def test_well_typed_values_the_check_cannot_use_are_value_errors(
    given: dict[str, object], param: str, message: str
) -> None:
    with pytest.raises(ParamValueError, match=message) as caught:
        validate(SAMPLE, given)
    assert caught.value.param == param


def test_every_type_is_checked_before_any_value() -> None:
    with pytest.raises(ParamError, match="whole number") as caught:
        validate(SAMPLE, {"word": "a", "mode": "some", "count": "2"})
    assert caught.value.param == "count"


@dataclass(frozen=True)
class Dated:
    when: date


@dataclass
class Loose:
    word: str


def test_parameters_toml_cannot_give_or_that_may_change_are_refused() -> None:
    with pytest.raises(ConfigError, match="when"):
        validate(CheckSpec("dated", "", Dated, lambda p: lambda ctx: None), {})
    with pytest.raises(ConfigError, match="frozen dataclass"):
        validate(CheckSpec("loose", "", Loose, lambda p: lambda ctx: None), {"word": "a"})


def test_the_docs_table_comes_from_the_dataclass() -> None:
    assert table(SAMPLE) == (
        "| parameter | type | default | meaning |\n"
        "|---|---|---|---|\n"
        "| `word` | str | required | the word to find |\n"
        "| `words` | str \\| list[str] | `[]` | one more word, or several |\n"
        "| `count` | int | `1` | how many times |\n"
        "| `ratio` | float | none | a fraction of the text |\n"
        "| `strict` | bool | `false` | whether case matters |\n"
        '| `where` | path | `"submission"` | the text to search |\n'
        '| `mode` | str | `"all"` | all or any |\n'
        "| `options` | table | `{}` | passed on as they are |\n"
    )


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_library_loads_no_check_and_no_jsonschema() -> None:
    code = (
        "import sys, reins.checks; "
        "print(sorted(m for m in sys.modules if m.startswith(('reins.checks.', 'jsonschema'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['reins.checks.spec']"


def test_the_parameter_tables_in_docs_are_up_to_date() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert refresh(text) == text, "run: python -m reins.checks.reference docs/checks.md"
    for name in STANDARD:
        assert f"\n## {name}\n" in text
        assert table(spec_of(name)) in text
        for p in parameters(spec_of(name)):
            assert f"| `{p.name}` |" in text


def _example_rows() -> list[tuple[str, str]]:
    """Each example rule row of docs/checks.md: (check, parameters)."""
    rows = re.findall(r"```markdown\n(\|.*\|)\n```", DOCS.read_text(encoding="utf-8"))
    out = []
    for row in rows:
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        out.append((cells[2], cells[3]))
    return out


def test_every_check_has_an_example_row() -> None:
    assert sorted({check for check, _ in _example_rows()}) == sorted(STANDARD)


@pytest.mark.parametrize(("check", "parameters"), _example_rows())
def test_every_example_row_validates_and_builds(check: str, parameters: str) -> None:
    given = tomllib.loads(f"p = {{ {parameters} }}")["p"]
    spec = spec_of(check)
    params = validate(spec, given)
    if check not in ("json_schema", "python"):  # they name files and modules of a quest
        assert callable(spec.build(params))
