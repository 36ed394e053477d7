"""quest.toml → a Quest: items sources, templates, output formats, examples judged at load."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reins import Example, Item, Outcome, Quest, Seed, State, load_quest
from reins.errors import ConfigError, DocumentError, NotFound
from reins.gate import Context, Verdict
from reins.turn import compose
from reins.turn.compose import EXAMPLES_HEADER
from reins.values import JSON
from tests.kit.declare_checks import (
    CAPITALS_GATE,
    CAPITALS_ITEMS,
    CAPITALS_TOML,
    register,
    write_quest,
)


@pytest.fixture(autouse=True)
def _checks(monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch)


@pytest.fixture
def capitals(tmp_path: Path) -> Path:
    folder = tmp_path / "capitals"
    write_quest(folder, CAPITALS_GATE, CAPITALS_TOML, CAPITALS_ITEMS)
    return folder


def seeds(quest: Quest, args: list[str] | None = None) -> list[Seed]:
    return [Seed(*s) for s in quest.seed(args or [])]


def item(key: str, payload: JSON) -> Item:
    return Item(key, State.TODO, 0, payload)


def test_a_folder_and_its_quest_toml_both_load(capitals: Path) -> None:
    for ref in (str(capitals), str(capitals / "quest.toml")):
        quest = load_quest(ref)
        assert (quest.name, quest.max_tries, quest.gate_version) == ("capitals", 2, "1")
        assert [r.id for r in quest.rules] == ["shape", "right"]
        assert quest.coaching["right"] == "Name the capital city."


def test_jsonl_items_are_keyed_by_their_key_field(capitals: Path) -> None:
    found = seeds(load_quest(str(capitals)))
    assert [s.key for s in found] == ["France", "Spain"]
    assert found[0].payload == {"country": "France", "capital": "Paris"}


def test_a_bad_jsonl_line_is_refused_at_scan_with_its_line_and_column(capitals: Path) -> None:
    (capitals / "items.jsonl").write_text('{"country": "A"}\n{"country": \n', encoding="utf-8")
    quest = load_quest(str(capitals))
    with pytest.raises(DocumentError) as caught:
        list(quest.seed([]))
    assert caught.value.line == 2 and caught.value.column == 13
    assert str(caught.value).startswith(str(capitals / "items.jsonl") + ":2:13")


def test_csv_items(capitals: Path) -> None:
    (capitals / "items.csv").write_text("country,capital\nPeru,Lima\n", encoding="utf-8")
    text = CAPITALS_TOML.replace('source = "items.jsonl"', 'source = "items.csv"')
    (capitals / "quest.toml").write_text(text, encoding="utf-8")
    found = seeds(load_quest(str(capitals)))
    assert [(s.key, s.payload) for s in found] == [("Peru", {"country": "Peru", "capital": "Lima"})]


def test_a_glob_of_text_files_keys_each_by_its_path_and_reads_its_text(tmp_path: Path) -> None:
    folder = tmp_path / "words"
    gate = "## Rules\n\n| id | level | check |\n|---|---|---|\n| anchored | FAIL | in_source |\n"
    toml = (
        'name = "words"\n[items]\nsource = "texts/**/*.txt"\n[prompt]\noutput = "text"\n'
        'template = "Copy a word of {{ item.file }}:\\n{{ item.text }}"\n'
    )
    write_quest(folder, gate, toml)
    (folder / "texts" / "sub").mkdir(parents=True)
    (folder / "texts" / "a.txt").write_text("alpha beta", encoding="utf-8")
    (folder / "texts" / "sub" / "b.txt").write_text("gamma", encoding="utf-8")
    quest = load_quest(str(folder))
    found = seeds(quest)
    assert [s.key for s in found] == ["a", "sub/b"]
    first = item("a", found[0].payload)
    assert quest.render(first) == "Copy a word of a.txt:\nalpha beta"
    ctx = quest.prepare(first, "beta delta")
    assert isinstance(ctx, Context) and ctx.source == "alpha beta"
    verdict = quest.judge.evaluate(ctx)
    assert [f.actual for f in verdict.facts] == ["delta"]


def test_items_that_are_not_utf8_are_refused_with_their_line(capitals: Path) -> None:
    (capitals / "items.jsonl").write_bytes(b'{"country": "A"}\n{"country": "\xff"}\n')
    with pytest.raises(DocumentError, match=r"items\.jsonl:2: not UTF-8"):
        seeds(load_quest(str(capitals)))
    text = (capitals / "quest.toml").read_text(encoding="utf-8")
    (capitals / "quest.toml").write_text(text.replace("items.jsonl", "items.csv"), "utf-8")
    for body in (b"country,capital\nPeru,L\xffma\n", b"coun\xfftry,capital\nPeru,Lima\n"):
        (capitals / "items.csv").write_bytes(body)
        with pytest.raises(DocumentError, match=r"items\.csv(:\d+)?: not UTF-8"):
            seeds(load_quest(str(capitals)))


def test_a_scan_argument_may_be_an_absolute_glob(capitals: Path, tmp_path: Path) -> None:
    texts = tmp_path / "elsewhere" / "texts"
    (texts / "sub").mkdir(parents=True)
    (texts / "a.txt").write_text("alpha", encoding="utf-8")
    (texts / "sub" / "b.txt").write_text("beta", encoding="utf-8")
    found = seeds(load_quest(str(capitals)), [str(texts / "**" / "*.txt")])
    assert [s.key for s in found] == ["a", "sub/b"]


def test_scan_arguments_replace_the_source(capitals: Path, tmp_path: Path) -> None:
    other = tmp_path / "more.jsonl"
    other.write_text('{"country": "Chile", "capital": "Santiago"}\n', encoding="utf-8")
    assert [s.key for s in seeds(load_quest(str(capitals)), [str(other)])] == ["Chile"]


def seed_two(args: list[str]) -> list[tuple[str, dict[str, str]]]:
    return [("one", {"country": "One", "capital": "1"}), ("two", {"country": "Two"})]


def test_a_module_function_source_seeds_through_the_function(capitals: Path) -> None:
    text = CAPITALS_TOML.replace(
        'source = "items.jsonl"', 'source = "tests.test_declare_questdoc:seed_two"'
    )
    (capitals / "quest.toml").write_text(text, encoding="utf-8")
    assert [s.key for s in seeds(load_quest(str(capitals)))] == ["one", "two"]


def test_a_json_quest_fails_a_submission_that_is_not_json_with_a_fact(capitals: Path) -> None:
    quest = load_quest(str(capitals))
    verdict = quest.prepare(item("France", {"country": "France"}), "Paris, I think")
    assert isinstance(verdict, Verdict) and verdict.outcome is Outcome.FAIL
    assert verdict.root_cause == "reins:json" and verdict.facts[0].where == "submission"
    assert "reins:json" in quest.coaching


def test_the_template_is_strict_about_missing_fields(capitals: Path) -> None:
    quest = load_quest(str(capitals))
    assert quest.render(item("Peru", {"country": "Peru"})) == "What is the capital of Peru?"
    with pytest.raises(ConfigError, match=r"cannot render item 'x'.*country"):
        quest.render(item("x", {"name": "Peru"}))


def test_a_template_missing_what_an_example_has_is_refused_at_render_and_scan(
    capitals: Path,
) -> None:
    text = CAPITALS_TOML.replace("{{ item.country }}", "{{ item.nation }}")
    (capitals / "quest.toml").write_text(text, encoding="utf-8")
    quest = load_quest(str(capitals))  # a submit renders nothing and does not pay for Jinja2
    with pytest.raises(DocumentError) as caught:
        quest.render(item("France", {"nation": "France"}))
    assert (
        caught.value.line
        == text.splitlines().index(
            next(ln for ln in text.splitlines() if ln.startswith("template"))
        )
        + 1
    )
    assert "example 'example-1'" in caught.value.message and "nation" in caught.value.message


def test_a_template_syntax_error_names_its_line(capitals: Path) -> None:
    (capitals / "prompt.j2").write_text("line one\n{{ item.country \n", encoding="utf-8")
    text = CAPITALS_TOML.replace(
        'template = "What is the capital of {{ item.country }}?"', 'template_file = "prompt.j2"'
    )
    (capitals / "quest.toml").write_text(text, encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        load_quest(str(capitals)).render(item("France", {"country": "France"}))
    assert caught.value.path.endswith("prompt.j2") and caught.value.line == 2


def test_examples_are_composed_between_the_manual_and_the_task(capitals: Path) -> None:
    quest = load_quest(str(capitals))
    prompt = compose(quest, item("France", {"country": "France"}), [])
    assert prompt.system.startswith(quest.manual + "\n\n" + EXAMPLES_HEADER)
    assert "What is the capital of Italy?" in prompt.system
    assert '{"capital": "Rome"}' in prompt.system
    assert prompt.user == "What is the capital of France?"


def test_a_quest_whose_example_fails_its_own_gate_is_refused_with_the_facts(
    capitals: Path,
) -> None:
    text = CAPITALS_TOML.replace(
        """output = '{"capital": "Rome"}'""", """output = '{"capital": "Milan"}'"""
    )
    (capitals / "quest.toml").write_text(text, encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        load_quest(str(capitals))
    err = caught.value
    assert err.line == text.splitlines().index("[[examples]]") + 1
    assert "example 'example-1' does not pass its own gate" in err.message
    assert (
        "root cause right" in err.message and "'Rome'" in err.message and "'Milan'" in err.message
    )


def test_a_python_quest_whose_example_fails_is_refused_by_load_quest() -> None:
    module = type(sys)("example_quest_mod")
    base = load_quest("emails")
    module.quest = Quest(  # type: ignore[attr-defined]
        name="ex",
        seed=base.seed,
        render=base.render,
        prepare=base.prepare,
        rules=base.rules,
        gate=base.gate,
        examples=[Example({"file": "a.txt", "text": "mail a@b.example"}, '{"addresses": []}')],
    )
    sys.modules["example_quest_mod"] = module
    try:
        with pytest.raises(ConfigError, match="quest ex: example 'example-1' does not pass"):
            load_quest("example_quest_mod:quest")
    finally:
        del sys.modules["example_quest_mod"]


@pytest.mark.parametrize(
    ("old", "new", "line", "words"),
    [
        ("max_tries = 2", "max_tries = 0", 14, "at least 1"),
        ("max_tries = 2", 'max_tries = "2"', 14, "must be a whole number"),
        ('version = "1"', 'retry = "sometimes"', 15, "retry must be one of"),
        ('version = "1"', 'escalate_on = ["nope"]', 15, "no rule for"),
        ('version = "1"', "escalate_on = [{ a = 1 }]", 15, "no rule for"),
        ('output = "json"', 'output = "xml"', 9, '"json" or "text"'),
        ('key = "country"', 'kee = "country"', 6, "unknown key 'kee' in [items]"),
        ('source = "items.jsonl"', 'source = "items.xlsx"', 5, "expected a .jsonl or .csv"),
    ],
)
def test_a_bad_setting_is_refused_at_its_line(
    capitals: Path, old: str, new: str, line: int, words: str
) -> None:
    (capitals / "quest.toml").write_text(CAPITALS_TOML.replace(old, new), encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        load_quest(str(capitals))
    assert caught.value.line == line and words in caught.value.message


def test_quest_toml_that_is_not_toml_is_refused_at_its_position(capitals: Path) -> None:
    (capitals / "quest.toml").write_text('name = "x"\nbroken = \n', encoding="utf-8")
    with pytest.raises(DocumentError) as caught:
        load_quest(str(capitals))
    assert (caught.value.line, caught.value.column) == (2, 10)


def test_a_folder_without_quest_toml_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        load_quest(str(tmp_path / "nothing.toml"))
