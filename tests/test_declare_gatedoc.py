"""gate.md: rules and edges as tables; every refusal at its file, line and column."""

from __future__ import annotations

import pytest

from reins.declare.gatedoc import load_gate
from reins.errors import DocumentError
from reins.gate import Context, Level, Outcome
from tests.kit.declare_checks import register


@pytest.fixture(autouse=True)
def _checks(monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch)


HEAD = (
    "# Gate\n\n## Rules\n\n| id | level | check | parameters | coaching |\n|---|---|---|---|---|\n"
)
# rows start on line 7


def refused(text: str) -> DocumentError:
    with pytest.raises(DocumentError) as caught:
        load_gate(text, "q/gate.md")
    return caught.value


def at(err: DocumentError) -> tuple[int, int]:
    assert str(err).startswith(f"q/gate.md:{err.line}")
    return err.line, err.column


def test_a_gate_loads_rules_levels_coaching_and_a_flat_gate() -> None:
    doc = load_gate(
        HEAD
        + '| shape | FAIL | has_field | field = "a" | Give a. |\n'
        + "| word | review | strict_loose | word = 'Yes' | |\n",
        "gate.md",
    )
    assert [(r.id, r.level) for r in doc.rules] == [("shape", Level.FAIL), ("word", Level.REVIEW)]
    assert doc.coaching == {"shape": "Give a."}
    gate = doc.gate()
    entry = gate.catalog()[0]
    assert (entry.check, entry.parameters, entry.description) == (
        "has_field",
        'field = "a"',
        'has_field: field = "a"',
    )
    verdict = gate.evaluate(Context("k", {"a": "x"}))
    assert verdict.outcome is Outcome.REVIEW and verdict.root_cause == "word"


def test_an_unknown_check_is_refused_at_its_cell() -> None:
    err = refused(HEAD + "| r | FAIL | nosuch | | |\n")
    assert at(err) == (7, 14) and "unknown check 'nosuch'" in err.message


def test_a_bad_level_is_refused_at_its_cell() -> None:
    err = refused(HEAD + "| r | BLOCK | has_field | field = 'a' | |\n")
    assert at(err) == (7, 7) and "FAIL or REVIEW" in err.message


def test_a_missing_parameter_is_refused_at_the_parameters_cell() -> None:
    err = refused(HEAD + "| r | FAIL | same | field = 'a' | |\n")
    assert at(err) == (7, 21) and "'item_field'" in err.message and "missing" in err.message


def test_an_unknown_parameter_is_refused_where_it_is_written() -> None:
    err = refused(HEAD + "| r | FAIL | has_field | field = 'a', feild = 'b' | |\n")
    assert at(err) == (7, 39) and "'feild'" in err.message and "unknown" in err.message


def test_an_ill_typed_parameter_is_refused_where_it_is_written() -> None:
    err = refused(HEAD + "| r | FAIL | pattern | pattern = 'a', flags = 3 | |\n")
    assert at(err) == (7, 39) and "array of strings" in err.message


def test_a_parameter_of_a_union_type_takes_either_and_is_refused_naming_both() -> None:
    for flags in ("'i'", "['i', 'm']"):
        assert load_gate(HEAD + f"| r | FAIL | pattern | pattern = 'a', flags = {flags} | |\n", "g")
    err = refused(HEAD + "| r | FAIL | pattern | pattern = 'a', flags = true | |\n")
    assert at(err) == (7, 39)
    assert err.message == (
        "check pattern, parameter 'flags': expected a string or an array of strings, got bool True"
    )


def test_a_parameter_the_check_cannot_use_is_refused_where_it_is_written() -> None:
    err = refused(HEAD + "| r | FAIL | pattern | pattern = '(' | |\n")
    assert at(err) == (7, 24) and "does not compile" in err.message


def test_parameters_that_are_not_toml_are_refused_at_the_column_toml_names() -> None:
    err = refused(HEAD + "| r | FAIL | has_field | field = a | |\n")
    assert at(err) == (7, 34) and "TOML" in err.message


def test_a_column_after_an_escaped_pipe_is_where_it_was_written() -> None:
    line = "| r | FAIL | pattern | pattern = 'a\\|b', flags = 1 | |"
    err = refused(HEAD + line + "\n")
    assert line[err.column - 1 :].startswith("flags")


def test_a_duplicate_rule_id_is_refused_at_the_second() -> None:
    err = refused(HEAD + "| r | FAIL | in_source | | |\n| r | FAIL | in_source | | |\n")
    assert at(err) == (8, 3) and "first on line 7" in err.message


def test_a_row_with_the_wrong_number_of_cells_is_refused() -> None:
    err = refused(HEAD + "| r | FAIL | in_source | a = 1 | x | y |\n")
    assert err.line == 7 and "6 cells, expected 5" in err.message


def test_an_ai_check_at_fail_is_refused_at_its_level() -> None:
    err = refused(HEAD + "| r | FAIL | doubt | | |\n")
    assert at(err) == (7, 7) and "REVIEW at most" in err.message


def test_a_gate_without_a_rules_table_is_refused() -> None:
    assert "no table under a heading named Rules" in refused("# Gate\n\nprose\n").message


EDGES = "\n## Edges\n\n| rule | supersedes |\n|---|---|\n"
# with two rule rows (lines 7, 8), the edges rows start on line 14
TWO = HEAD + "| up | FAIL | has_field | field = 'a' | |\n| down | FAIL | in_source | | |\n"


def test_an_edges_table_makes_a_graph() -> None:
    doc = load_gate(TWO + EDGES + "| up | down |\n", "gate.md")
    gate = doc.gate()
    assert [e.supersedes for e in gate.catalog()] == [("down",), ()]
    verdict = gate.evaluate(Context("k", "x", source=""))
    assert [f.rule for f in verdict.facts] == ["up"] and verdict.feedback


def test_an_unknown_rule_in_an_edge_is_refused_where_it_is_written() -> None:
    err = refused(TWO + EDGES + "| up | down, dwn |\n")
    assert at(err) == (14, 14) and "unknown rule 'dwn'" in err.message
    err = refused(TWO + EDGES + "| upp | down |\n")
    assert at(err) == (14, 3) and "unknown rule 'upp'" in err.message


def test_a_cycle_is_refused_naming_it() -> None:
    err = refused(TWO + EDGES + "| up | down |\n| down | up |\n")
    assert at(err) == (14, 8) and "up → down → up" in err.message


def test_an_unknown_ground_is_refused_where_it_is_written() -> None:
    edges = "\n## Edges\n\n| rule | needs |\n|---|---|\n| up | mx |\n"
    err = refused(TWO + edges)
    assert at(err) == (14, 8) and "unknown ground 'mx'" in err.message
