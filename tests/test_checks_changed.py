"""changed_files: which paths a coding change touches, read from git's own list, never from the
patch's text, where git quotes the names an attacker would pick to slip past a pattern."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reins import SQLiteStore
from reins.checks import spec_of, validate
from reins.checks.changes import shown
from reins.errors import JudgeError, ParamError, ParamValueError
from reins.gate.evaluate import fire
from reins.gate.rule import Context, Level
from reins.quests.find import load_quest
from reins.store import AttemptKind
from reins.values import JSON, Fact, JudgeTree
from reins.workspace.git import DIFF_OPTIONS, git
from reins.workspace.submission import patch_at
from tests.kit.checkkit import build
from tests.kit.codingkit import agent, cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# Names git quotes in a diff header ("a/tests/t\303\251st.py"), one that ends in a space (git
# leaves it bare, so a fact must show where it ends) and a rename out of textkit/.
QUOTED = ["tests/tést.py", "tests/a\tb.py", 'tests/"q".py', "tests/back\\slash.py"]
HOSTILE = [*QUOTED, "tests/ends-with-space.py ", "textkit/x.py", "tests/x.py"]


def tree(*changed: str) -> JudgeTree:
    return JudgeTree(path="/nowhere", base="0" * 40, branch="reins/k", root="/nowhere",
                     changed=changed)  # fmt: skip


def judged(check: object, *changed: str, payload: JSON = None) -> list[Fact]:
    assert callable(check)
    ctx = Context(key="k", submission="a patch", payload=payload, workspace=tree(*changed))
    out = check(ctx)
    return [] if out is None else list(out)


def wheres(facts: list[Fact]) -> list[str]:
    return [f.where for f in facts]


def test_every_path_outside_allow_is_a_fact_naming_it_however_git_would_quote_it() -> None:
    facts = judged(build("changed_files", allow=["textkit/**"]), *HOSTILE, "textkit/ok.py")
    assert wheres(facts) == [
        "file tests/tést.py",
        'file "tests/a\\tb.py"',
        'file "tests/\\"q\\".py"',
        'file "tests/back\\\\slash.py"',
        'file "tests/ends-with-space.py "',
        "file tests/x.py",  # the new name of the rename; the old one is under textkit/
    ]
    assert {f.expected for f in facts} == {"a change only to paths matching textkit/**"}
    assert {f.actual for f in facts} == {"changed by the patch"}


def test_a_change_under_textkit_alone_passes_whatever_its_names() -> None:
    check = build("changed_files", allow=["textkit/**"])
    assert judged(check, "textkit/__init__.py", "textkit/a/b/tést.py", "textkit/a\tb.py") == []
    assert judged(check) == []  # an empty patch touches nothing


def test_a_name_that_only_starts_like_the_folder_is_outside_it() -> None:
    check = build("changed_files", allow=["textkit/**"])
    near = ["textkit-evil/x.py", "textkitx.py", "TEXTKIT/x.py", "src/textkit/x.py", "textkit"]
    assert wheres(judged(check, *near)) == [f"file {name}" for name in near]


def test_deny_refuses_a_path_even_under_allow() -> None:
    check = build("changed_files", allow=["textkit/**"], deny=["conftest.py", "*.pth"])
    facts = judged(check, "textkit/conftest.py", "textkit/a/b.pth", "textkit/ok.py", "tests/t.py")
    assert wheres(facts) == ["file textkit/conftest.py", "file textkit/a/b.pth", "file tests/t.py"]
    assert facts[0].expected == (
        "a change only to paths matching textkit/**, and no change to paths matching "
        "conftest.py, *.pth"
    )
    only = build("changed_files", deny=["tests/"])
    assert wheres(judged(only, "tests/a/b.py", "textkit/x.py")) == ["file tests/a/b.py"]


def test_the_facts_are_bounded_the_rest_counted() -> None:
    changed = [f"tests/t{i:02}.py" for i in range(25)]
    facts = judged(build("changed_files", allow=["textkit/**"]), *changed)
    assert wheres(facts) == [f"file {name}" for name in changed[:20]] + ["the change"]
    assert facts[-1].actual == "5 more files like these changed by the patch"


def test_a_name_is_printed_so_that_nothing_in_it_hides_or_breaks_the_line() -> None:
    assert shown("textkit/tést.py") == "textkit/tést.py"
    assert shown("a\nb") == '"a\\nb"'
    assert shown("a\rb") == '"a\\rb"'
    assert shown("evil\u202eyp.py") == '"evil\\u202eyp.py"'  # right-to-left override
    assert shown("nb\u00a0sp") == '"nb\\u00a0sp"'  # looks like a space, is none
    assert shown("latin\udce9.py") == '"latin\\xe9.py"'  # a byte git's name held, not UTF-8
    assert shown(" lead") == '" lead"'
    assert shown("x" * 1000).endswith("… (700 more)")
    # printed safely, the fact still encodes: a lone surrogate would break the ledger's JSON
    (fact,) = judged(build("changed_files", allow=["textkit/**"]), "tests/\udcff\x00.py")
    fact.where.encode("utf-8")
    assert fact.where == 'file "tests/\\xff\\u0000.py"'


def test_a_turn_without_a_judge_s_tree_is_the_judge_s_error_never_a_pass() -> None:
    check = build("changed_files", allow=["textkit/**"])
    with pytest.raises(JudgeError, match="changed_files: this rule reads the paths"):
        check(Context(key="k", submission="diff --git a/tests/x.py b/tests/x.py\n"))


def test_the_item_s_own_path_matches_itself_alone() -> None:
    check = build("changed_files", allow=["/{item.path}"])
    own: JSON = {"path": "toolz/a[1]*?.py"}
    assert judged(check, "toolz/a[1]*?.py", payload=own) == []
    # the item's path is no pattern: its * ? and [1] match those characters only
    near = ["toolz/a1xy.py", "toolz/a[1]xy.py", "x/toolz/a[1]*?.py"]
    assert wheres(judged(check, *near, payload=own)) == [f"file {name}" for name in near]
    with pytest.raises(JudgeError, match="no field 'path'"):
        judged(check, "toolz/x.py", payload={})
    with pytest.raises(JudgeError, match="backslash"):
        judged(check, "toolz/x.py", payload={"path": "toolz\\x.py"})


@pytest.mark.parametrize(
    ("given", "param"),
    [
        ({}, "allow"),
        ({"allow": [], "deny": []}, "allow"),
        ({"allow": ["textkit/**", ""]}, "allow"),
        ({"allow": ["../textkit/**"]}, "allow"),
        ({"deny": ["tests\\x.py"]}, "deny"),
        ({"deny": ["/"]}, "deny"),
    ],
)
def test_unusable_patterns_are_refused_when_the_gate_loads(given: dict[str, object], param: str
                                                           ) -> None:  # fmt: skip
    spec = spec_of("changed_files")
    with pytest.raises(ParamValueError) as caught:
        spec.build(validate(spec, given))
    assert caught.value.param == param


def test_the_parameters_are_lists_of_patterns() -> None:
    spec = spec_of("changed_files")
    with pytest.raises(ParamError):
        validate(spec, {"allow": "textkit/**"})
    with pytest.raises(ParamError):
        validate(spec, {"only": ["textkit/**"]})


# -- the coding pack's rule, and git's own diff --------------------------------------------


def only_textkit(*changed: str) -> tuple[Fact, ...]:
    (rule,) = [r for r in load_quest("coding").rules if r.id == "only-textkit"]
    return fire(rule, Context(key="slugify", submission="x", workspace=tree(*changed)))


def test_the_coding_pack_fails_a_change_outside_textkit_that_git_quotes() -> None:
    facts = only_textkit("textkit/__init__.py", "tests/tést.py", "tests/a\tb.py")
    assert [(f.rule, f.level, f.where) for f in facts] == [
        ("only-textkit", Level.FAIL, "file tests/tést.py"),
        ("only-textkit", Level.FAIL, 'file "tests/a\\tb.py"'),
    ]
    assert only_textkit("textkit/__init__.py") == ()


def test_toolz_typed_fails_a_change_to_any_file_but_the_item_s_module() -> None:
    quest = load_quest(str(EXAMPLES / "toolz" / "typed"))
    (rule,) = [r for r in quest.rules if r.id == "only-its-module"]
    own: JSON = {"path": "toolz/utils.py"}

    def facts(*changed: str) -> list[str]:
        ctx = Context(key="toolz/utils.py", submission="x", payload=own, workspace=tree(*changed))
        return [f.where for f in fire(rule, ctx)]

    assert facts("toolz/utils.py") == []
    # a name with a space escaped the old pattern's \S*; the module moves out of mypy's sight
    assert facts("toolz/utils.py", "toolz/evil mod.py", "toolz/r\u00e9.py") == [
        "file toolz/evil mod.py",
        "file toolz/ré.py",
    ]
    assert facts("x/toolz/utils.py") == ["file x/toolz/utils.py"]


def _repo(folder: Path, name: str) -> bytes:
    """A repository whose base holds textkit/, and the patch (as reins takes one, with reins'
    git settings) of a change that adds ``name``."""
    folder.mkdir()

    def run(*args: str) -> bytes:
        return git(list(args), cwd=str(folder)).stdout

    run("init", "--quiet")
    (folder / "textkit").mkdir()
    (folder / "textkit" / "__init__.py").write_text("x = 1\n")
    run("add", "--all")
    run("commit", "--quiet", "-m", "base")
    target = folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("import textkit\n")
    run("add", "--all")
    return run("diff", "--cached", *DIFF_OPTIONS, "HEAD")


@pytest.mark.parametrize("name", QUOTED)
def test_git_quotes_the_name_so_a_regex_misses_it_and_changed_files_does_not(
    tmp_path: Path, name: str
) -> None:
    patch = _repo(tmp_path / "repo", name)
    text = patch.decode("utf-8")
    # why the check exists: the header git writes holds the name quoted, so the pattern the
    # coding pack used to run over the patch finds no change outside textkit/
    header = text.splitlines()[0]
    assert header.startswith('diff --git "a/tests/'), header
    old = build("regex", pattern="^diff --git a/(?!textkit/)", mode="must_not_match", flags="m")
    assert old(Context(key="k", submission=text)) == []
    assert not re.search("^diff --git a/(?!textkit/)", text, re.M)
    # git's own list of the same patch's paths holds the name as it is
    listed = git(["apply", "--numstat", "-z", "-"], cwd=str(tmp_path / "repo"), stdin=patch)
    paths = [e.split("\t", 2)[2] for e in listed.stdout.decode("utf-8").split("\0") if e]
    assert paths == [name]
    facts = judged(build("changed_files", allow=["textkit/**"]), *paths)
    assert wheres(facts) == [f"file {shown(name)}"]
    assert only_textkit(*paths) != ()


# -- a coding agent in the loop --------------------------------------------------------------

# The right slugify, and a file outside textkit/ (and outside the judge's files) whose name git
# quotes: every other rule passes, so only-textkit alone stands between it and a PASS.
QUOTING_AGENT = r"""
import os, re, sys
sys.stdin.read()
path = "textkit/__init__.py"
src = open(path).read()
function = re.compile(r"(def slugify\(.*?\x22\x22\x22\n)(.*?)(\n*)(?=\ndef |\Z)", re.S)
body = "return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')"
open(path, "w").write(function.sub(lambda m: m.group(1) + "    " + body + m.group(3), src))
os.makedirs("docs", exist_ok=True)
open("docs/r\u00e9sum\u00e9.md", "w", encoding="utf-8").write("# what I did\n")
print("Wrote textkit.slugify, and a note.")
"""


def test_an_agent_s_file_outside_textkit_with_a_quoted_name_is_no_pass(tmp_path: Path) -> None:
    assert cli("new", "--pack", "coding", "play").exit_code == 0
    assert cli("-q", "play", "scan").exit_code == 0
    script = agent(tmp_path / "agent.py", QUOTING_AGENT)
    out = cli("-q", "play", "loop", "--model", f"cmd:{script}", "--max-turns", "1")
    assert out.exit_code in (0, 1), out.output + out.stderr
    with SQLiteStore.open(tmp_path / "play.reins.db") as led:
        _, log = led.snapshot("slugify")
    (attempt,) = [a for a in log if a.kind is AttemptKind.JUDGED]
    assert attempt.outcome == "FAIL", attempt.facts
    assert [(f.rule, f.where) for f in attempt.facts] == [("only-textkit", "file docs/résumé.md")]
    # the recorded patch shows the name quoted: the pattern the rule used to be saw nothing
    notes = attempt.notes
    patch = patch_at(attempt.submission, notes.patch_start, notes.patch_end)
    assert patch is not None
    assert 'diff --git "a/docs/r\\303\\251sum\\303\\251.md"' in patch
    assert not re.search("^diff --git a/(?!textkit/)", patch, re.M)
