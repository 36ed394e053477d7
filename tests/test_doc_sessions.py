"""Every console session of the README and docs/ runs as a test, or says in the doc why it cannot.

Sybil finds the ```console blocks of README.md and docs/*.md and the markers before them;
``tests/kit/sessions.py`` runs each in bash in a folder of its own and compares what it prints
with what the block shows (times, hashes and paths masked). A block that cannot run here (a paid
provider, a real agent's login, the package index, minutes of a real model) is preceded by
``<!-- skip: next "why, and which test runs it instead" -->``: the test reports it skipped with
that reason, and a marker without a reason, or one that marks no console block, fails. A block
that needs a ledger in some state first is preceded by an invisible block,
``<!-- invisible-code-block: console … -->``, run in the same folder just before it. No
session reaches the internet.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from pathlib import Path

import pytest
from sybil import Document, Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

from tests.kit import ROOT
from tests.kit.sessions import Step, check, steps

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
HEADING = re.compile(r"^#{1,4} (.+)$", re.M)
SYBIL = Sybil(parsers=[CodeBlockParser("console"), SkipParser()])
# The sessions that confine a coding agent with bubblewrap (and judge it with git and pytest).
SLOW_SESSIONS = ("$ reins new --pack coding play",)


def document(path: Path) -> Document:
    return SYBIL.parse(path)


def is_invisible(example: Example) -> bool:
    return example.document.text.startswith("<!--", example.region.start)


def is_skip(example: Example) -> bool:
    return isinstance(example.parsed, tuple)


def sessions() -> list[tuple[Example, Example | None, Example | None]]:
    """Each visible console block, with the skip marker or the invisible block right before it."""
    found = []
    for path in DOCS:
        examples = list(document(path))
        for i, example in enumerate(examples):
            if is_skip(example) or is_invisible(example):
                continue
            before = examples[i - 1] if i else None
            # Sybil's region of an HTML comment ends before its `-->`
            adjacent = before is not None and example.document.text[
                before.region.end : example.region.start
            ].strip() in ("", "-->")
            skip = before if adjacent and before is not None and is_skip(before) else None
            setup = before if adjacent and before is not None and is_invisible(before) else None
            found.append((example, skip, setup))
    return found


def name(example: Example) -> str:
    """``README.md#the-ledger``: the file and the anchor of the heading the block is under,
    numbered from 2 when that section has more than one (stable as other sections change)."""
    text = example.document.text[: example.region.start]
    heading, nth, fenced = "", 1, False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            nth += fenced and line == "```console"
        elif not fenced and (found := HEADING.match(line)):
            heading, nth = found.group(1), 1
    suffix = f"-{nth}" if nth > 1 else ""
    return f"{Path(example.path).relative_to(ROOT)}#{anchor_of(heading)}{suffix}"


def anchor_of(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


SESSIONS = sessions()


def marks(example: Example) -> list[pytest.MarkDecorator]:
    """Every session starts bash and reins in other processes: slow, by tests/kit's rule."""
    return [pytest.mark.slow]


@pytest.mark.parametrize(
    ("example", "skip", "setup"),
    [pytest.param(*s, id=name(s[0]), marks=marks(s[0])) for s in SESSIONS],
)
def test_the_session_runs_as_the_doc_shows(
    example: Example, skip: Example | None, setup: Example | None, tmp_path: Path
) -> None:
    if skip is not None:
        pytest.skip(reason_of(skip))
    block = steps(str(example.parsed))
    before = steps(str(setup.parsed)) if setup is not None else []
    slow = any(str(example.parsed).startswith(s) for s in SLOW_SESSIONS)
    if slow and shutil.which("bwrap") is None and not os.environ.get("CI"):
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    folder = tmp_path.resolve()
    if before:
        check(before, folder)
    check(block, folder, timeout=600 if slow else 120)


def reason_of(skip: Example) -> str:
    """The reason a ``skip: next "…"`` marker gives: a string literal, as Sybil reads it."""
    action, reason = skip.parsed
    assert action == "next", f'{name(skip)}: only `skip: next "why"` is used in the docs'
    said = ast.literal_eval(reason or "''")
    assert isinstance(said, str) and len(said.split()) >= 3, (
        f"{name(skip)}: a block that cannot run says why, in words"
    )
    return said


def test_every_skip_marker_gives_a_reason_and_marks_a_console_block() -> None:
    skips = [e for path in DOCS for e in document(path) if is_skip(e)]
    marked = {(s.path, s.region.start) for _, s, _ in SESSIONS if s is not None}
    assert skips, "the docs mark no block that cannot run"
    for skip in skips:
        reason_of(skip)
        assert (skip.path, skip.region.start) in marked, f"{name(skip)} marks no console block"


def test_every_session_of_the_docs_is_a_console_block() -> None:
    """A session in a ```bash or ```text block would escape the test: a `$ ` line is console."""
    fence = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
    for path in DOCS:
        for lang, body in fence.findall(path.read_text(encoding="utf-8")):
            if lang != "console":
                assert not re.search(r"^\$ ", body, re.M), (path.name, lang, body[:80])


def test_a_session_is_compared_line_by_line_with_masks(tmp_path: Path) -> None:
    """The runner itself: a wrong line fails, masks and `…` hold, a hash binds to what ran."""
    folder = tmp_path.resolve()
    good = [
        Step("echo one; echo two; echo three", ("one", "…")),
        Step("echo a1b2c3d4e5f6 in 0:03, 1.5 turns/s", ("0792e0a70600 in 0:02, 0.3 turns/s",)),
        Step("echo 0792e0a70600", ("a1b2c3d4e5f6",)),  # bound, then the command replaced
        Step("echo $PWD/x; false", ("/tmp/readme/x",)),
        Step("echo $?", ("1",)),
    ]
    check(good, folder)
    with pytest.raises(AssertionError, match="printed"):
        check([Step("echo one", ("two",))], folder)
    with pytest.raises(AssertionError):
        check([Step("false", ()), Step("true", ())], folder)  # a list of commands: exit 0
