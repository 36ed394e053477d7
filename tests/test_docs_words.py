"""What the README and docs/ tell a newcomer in the first hour is what reins does.

The Concepts table names each word once, and only the actions a person has; turn.md says what
a raising rule is; speed figures are kept in bench/README.md alone; the model-spec hint names
options the backends take; every `reins` line with a `?` or an `&` in its words quotes them,
so that it runs as pasted in zsh (where `?` is a wildcard) and in any shell (`&`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reins.backends.registry import BACKENDS, parse_spec
from reins.errors import ConfigError
from reins.turn.human import Action
from tests.kit import ROOT, Cli

README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def concepts() -> list[tuple[str, str]]:
    """The rows of the README's Concepts table: (word, meaning)."""
    section = README.read_text(encoding="utf-8").split("\n## Concepts\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows[1:]]
    return [(c[0], c[1]) for c in cells if not set(c[0]) <= {"-"}]


def test_the_concepts_table_names_each_word_once() -> None:
    words = [word for word, _ in concepts()]
    assert len(words) == len(set(words)), words


def test_the_concepts_table_names_only_the_actions_a_person_has() -> None:
    (turn,) = [meaning for word, meaning in concepts() if word == "turn"]
    named = re.search(r"a person's actions \(([^)]*)\)", turn)
    assert named, turn
    assert {a.strip() for a in named.group(1).split(",")} == {a.value for a in Action}


def test_the_concepts_table_explains_every_state() -> None:
    explained = " ".join(word for word, _ in concepts())
    for state in ("DONE", "SKIPPED", "BLOCKED"):
        assert state in explained, state


def test_turn_md_says_what_a_raising_rule_is_as_submit_does(cli: Cli) -> None:
    text = (ROOT / "src" / "reins" / "turn" / "turn.md").read_text(encoding="utf-8")
    judge = text.split("3. **judge**", 1)[1].split("4. **record**", 1)[0]
    said = " ".join(judge.split())
    assert "rule that raises" in said and "judge error" in said, said
    assert "FAIL fact" not in said.split("rule that raises", 1)[1], said
    assert cli("scan").exit_code == 0
    assert cli("submit", "-k", "a", input="explode").exit_code == 10  # the tiny rule raises


def test_speed_figures_are_kept_in_bench_readme_alone() -> None:
    """A figure restated elsewhere drifts from the measured one: the docs point to bench/."""
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        figures = re.findall(r"[^\n]*\d(?:[–-]\d+)? ?ms\b[^\n]*", text)
        assert figures == [], (path.name, figures)


def test_the_spec_hint_names_options_the_text_backends_take() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_spec("ollama:m?oops")
    hint = re.search(r"e\.g\. (\?\S+)", str(refused.value))
    assert hint, str(refused.value)
    keys = set(parse_spec("ollama:m" + hint.group(1)).options)
    for name in ("anthropic", "gemini", "local", "ollama", "openai"):
        assert keys <= set(BACKENDS.find(name).options), (name, keys)


def command_lines(path: Path) -> list[str]:
    """Every `reins …` line of the fenced blocks of ``path``, its comment cut off."""
    found = []
    for _, body in FENCE.findall(path.read_text(encoding="utf-8")):
        for line in body.splitlines():
            line = line.removeprefix("$ ").split("  #", 1)[0].strip()
            if line.startswith("reins "):
                found.append(line)
    return found


def test_every_reins_line_quotes_its_question_marks_and_ampersands() -> None:
    packs = sorted((ROOT / "src" / "reins" / "packs").glob("*/README.md"))
    for path in [*DOCS, *packs]:
        for line in command_lines(path):
            bare = re.sub(r"'[^']*'|\"[^\"]*\"", "", line).replace("&&", "")
            assert "?" not in bare and "&" not in bare, f"{path.name}: {line}"
