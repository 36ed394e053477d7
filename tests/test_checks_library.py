"""The library as a whole: the registry, validate, the reserved __base__, and docs/checks.md."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from reins.checks import BASE, STANDARD, spec_of, validate
from reins.checks.reference import refresh, table
from reins.checks.spec import Param
from reins.errors import ConfigError, ParamError

DOCS = Path(__file__).resolve().parent.parent / "docs" / "checks.md"


@pytest.mark.parametrize("name", sorted(STANDARD))
def test_every_registered_check_loads_under_its_name(name: str) -> None:
    spec = spec_of(name)
    assert spec.name == name
    assert spec.summary and spec.params
    assert len({p.name for p in spec.params}) == len(spec.params)
    assert all(isinstance(p, Param) and p.help for p in spec.params)


def test_an_unknown_check_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match="Known: absent, ai, anchored, command"):
        spec_of("anchord")


def test_validate_fills_defaults_converts_floats_and_passes_base_through() -> None:
    spec = spec_of("numeric")
    params = validate(spec, {"path": "submission", "expected": 3, BASE: "/q"})
    assert params == {
        "path": "submission",
        "expected": 3.0,
        "expected_path": None,
        "tolerance": 0.0,
        "relative": None,
        BASE: "/q",
    }
    assert isinstance(params["expected"], float)
    with pytest.raises(ParamError, match="a number"):
        validate(spec, {"path": "submission", "expected": True})


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
        for p in spec_of(name).params:
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
