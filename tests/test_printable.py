"""What a generator wrote never reaches a terminal raw (issue 37).

An agent's answer, note or item key can carry control sequences: a window title or a clipboard
write (OSC 0, OSC 52), a cleared screen, an 8-bit CSI (U+009B), a carriage return that writes
over a line, a bidi override that reverses what follows. Each test here records such text the
way a generator does (``submit``, an item it proposed) and reads every surface that prints it
back, text and ``--json``: no control or format character but newline and tab comes out, and
the escape that stands for it is there to see.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given
from hypothesis import strategies as st

from reins import Context, Item, Seed
from reins.cli.app import Printable, raw
from reins.loop import Status, TtyReporter
from reins.store import State
from reins.values import printable, readable_json
from tests.kit import TINY, TINY_REF, Cli, tiny_seed

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;ZXZpbA==\x07"
CSI_8BIT = "\x9b31m"
REVERSED = "\u202egnp.exe"
ANSWER = (
    f"{TITLE} title, {CLEAR} clear, {CLIPBOARD} clipboard, {CSI_8BIT} red, {REVERSED}, "
    "\u200bhidden \U000e0041 tag \x08\x7f,\rall good\nsecond line\tafter a tab"
)
"""An answer as a hostile generator writes it; "bad " before it FAILs, "meh " makes a REVIEW."""

SEEN = ["\\x1b]0;pwned\\x07", "\\x1b]52;c;ZXZpbA==\\x07", "\\u009b31m", "\\u202egnp", "\\x0d"]
"""How the answer's controls read once escaped (a pipe gets no CSI: click strips it)."""

KEY = f"k{TITLE}{REVERSED}"
"""An item key from a generator: an agent proposes items (the MCP server's propose_item)."""
KEY_SEEN = "k\\x1b]0;pwned\\x07\\u202egnp.exe"


def unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal must not receive raw: every control (category
    Cc) but newline and tab, every format character (Cf), every lone surrogate (Cs)."""
    found = {c for c in text if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Cs")}
    return sorted(f"U+{ord(c):04X}" for c in found)


def shown_safely(*results: Result) -> None:
    for result in results:
        out, err = result.stdout, result.stderr
        assert (unsafe(out), unsafe(err)) == ([], []), f"raw on a terminal:\n{out!r}\n{err!r}"


def echoing_seed(args: Sequence[str]) -> Iterator[Seed]:
    """Items from a source's findings; a finding it cannot read is quoted in its error."""
    for finding in args:
        if not finding.isalnum():
            raise ValueError(f"cannot read the finding {finding}")
    yield from tiny_seed(args)


def echoing_prepare(item: Item, raw: str) -> Context:
    """A parser that refuses every answer, quoting it in its error, as parsers do."""
    raise ValueError(f"cannot read {raw.strip()}")


ECHOING = dataclasses.replace(TINY, name="echoing", seed=echoing_seed, prepare=echoing_prepare)


def test_an_answer_is_escaped_in_submit_log_and_the_next_prompt(cli: Cli) -> None:
    cli("scan")
    failed = cli("submit", "-k", "a", input=f"bad {ANSWER}")
    assert failed.exit_code == 4
    log, full, prompt = cli("log", "a"), cli("log", "a", "--full"), cli("next")
    shown_safely(failed, log, full, prompt)
    for result in (log, full):
        assert all(s in result.stdout for s in SEEN), result.stdout
        assert "\n    second line\tafter a tab" in result.stdout  # lines and tabs stay readable
    assert "\\u001b]0;pwned\\u0007" in prompt.stdout  # the feedback quotes the fact as JSON


def test_on_a_terminal_a_screen_clear_is_escaped_not_run(cli: Cli) -> None:
    """A terminal keeps the CSI sequences click strips from a pipe: they are escaped too."""
    cli("scan")
    cli("submit", "-k", "a", input=f"bad {ANSWER}")
    log = cli("log", "a", color=True)
    shown_safely(log)
    assert "\\x1b[2J clear" in log.stdout


def test_json_keeps_the_answer_and_writes_no_raw_control(cli: Cli) -> None:
    cli("scan")
    cli("scan", KEY)
    failed = cli("submit", "-k", "a", "--json", input=f"bad {ANSWER}")
    review = cli("submit", "-k", KEY, "--json", input=f"meh {ANSWER}")
    results = [
        failed,
        review,
        cli("log", "a", "--json"),
        cli("next", "--json"),
        cli("review", "--json"),
        cli("items", "--json"),
        cli("status", "--todo", "--json"),
        cli("resolve", KEY, "--reject", "--note", "no", "--json"),
    ]
    shown_safely(*results)
    documents = [json.loads(r.stdout) for r in results]  # still JSON, of the same values
    assert documents[2]["attempts"][0]["submission"] == f"bad {ANSWER}"
    assert {f["actual"] for f in documents[0]["facts"]} == {f"bad {ANSWER}"}
    assert documents[4]["items"][0]["key"] == KEY
    assert KEY in [row["key"] for row in documents[6]]


def test_a_proposed_key_is_escaped_in_listings_reviews_and_errors(cli: Cli) -> None:
    cli("scan")
    cli("scan", KEY)
    submitted = cli("submit", "-k", KEY, input=f"meh {ANSWER}")
    assert submitted.exit_code == 11
    listings = [cli("status", "--todo"), cli("items"), cli("review"), cli("review", "--full")]
    resolved = cli("resolve", KEY, "--accept", "--note", "fine")
    locked = cli("submit", "-k", KEY, input="good")
    locked_json = cli("submit", "-k", KEY, "--json", input="good")
    shown_safely(submitted, *listings, resolved, locked, locked_json, cli("status"), cli("report"))
    for result in (submitted, *listings, resolved):
        assert KEY_SEEN in result.stdout, result.stdout
    assert all(s in listings[2].stdout for s in SEEN[:4]), listings[2].stdout
    assert locked.exit_code == 5 and f"item '{KEY_SEEN}' is PASS, not TODO" in locked.stderr
    # The ledger's own message quotes the key with repr(): its JSON says so, as written.
    assert json.loads(locked_json.stdout)["error"].startswith(f"item '{KEY_SEEN}' is PASS")


def test_errors_quoting_what_a_generator_wrote_are_escaped(cli: Cli) -> None:
    quest = "tests.test_printable:ECHOING"
    cli("scan", quest=quest)
    judged = cli("submit", "-k", "a", input=ANSWER, quest=quest)
    log = cli("log", "a", quest=quest)
    refused = cli("scan", ANSWER, quest=quest)
    refused_json = cli("scan", ANSWER, "--json", quest=quest)
    shown_safely(judged, log, refused, refused_json)
    assert judged.exit_code == 10 and "ValueError: cannot read \\x1b]0;pwned" in judged.stdout
    assert all(s in log.stdout for s in SEEN), log.stdout
    assert refused.exit_code == 2 and all(s in refused.stderr for s in SEEN), refused.stderr
    error = json.loads(refused_json.stdout)["error"]
    assert error == f"scan: the quest's seed raised ValueError: cannot read the finding {ANSWER}"


@pytest.mark.slow
def test_an_ascii_stdout_is_no_way_around(cli: Cli, tmp_path: Path) -> None:
    """click writes UTF-8 past a stream whose encoding is ASCII; the CLI's still escapes."""
    cli("scan", KEY)
    argv = [sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "items"]
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
    assert b"\x1b" not in done.stdout and KEY_SEEN.encode() in done.stdout


def test_the_live_status_line_keeps_its_own_controls_and_escapes_notes() -> None:
    """The loop's status line is redrawn by control sequences of its own, on the terminal
    itself (the CLI hands it the stream under its printable one); its notes, which quote
    backends and models, are escaped there."""
    out, err = io.StringIO(), io.StringIO()
    reporter = TtyReporter(out, err)
    counts = ("turns", "judged", "generation_errors", "judge_errors", "in_flight")
    zero = dict.fromkeys((*counts, "input_tokens", "output_tokens"), 0)
    reporter.start(Status(total=1, counts={State.TODO: 1}, **zero, cost=0.0, elapsed=0.0))
    reporter.note(f"generation failed: {TITLE}")
    assert err.getvalue().startswith("\r\x1b[2K0/1 done")
    assert err.getvalue().endswith("\r\x1b[2Knote: generation failed: \\x1b]0;pwned\\x07\n")


def test_a_printable_stream_escapes_text_and_passes_the_rest_through() -> None:
    terminal = io.StringIO()
    stream = Printable(terminal)
    assert stream.write(f"{TITLE}ok\n") == len(f"{TITLE}ok\n")
    assert terminal.getvalue() == "\\x1b]0;pwned\\x07ok\n"
    with pytest.raises(TypeError):
        stream.write(b"")  # type: ignore[arg-type]  # how click tells a binary stream apart
    assert stream.isatty() is False and raw(stream) is terminal  # type: ignore[arg-type]


# Every kind of character, and the hostile ones often.
TEXT = st.text(
    st.characters(exclude_categories=())
    | st.sampled_from(["\x1b", "\x9b", "\r", "\x7f", "\u202e", "\ud800", "\U000e0041", "\n"])
)


@given(TEXT)
def test_printable_leaves_nothing_a_terminal_acts_on(text: str) -> None:
    out = printable(text)
    assert unsafe(out) == []
    assert printable(out) == out
    assert out.count("\n") == text.count("\n") and out.count("\t") == text.count("\t")


@given(st.text(st.characters(exclude_categories=("Cc", "Cf", "Cs", "Cn")) | st.just("\t")))
def test_printable_leaves_plain_text_as_it_is(text: str) -> None:
    assert printable(text) == text


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)


@given(JSON)
def test_a_json_document_made_printable_is_the_same_document(value: object) -> None:
    """Its escapes are JSON's own: ``--json`` written through the printable stream parses to
    the value the command wrote."""
    for document in (readable_json(value), json.dumps(value, ensure_ascii=False, indent=2)):
        assert json.loads(printable(document)) == value


# Unassigned in Python 3.11's Unicode (14.0), escaped already: U+2065 sits among the invisible
# operators, and Unicode 15.0 made U+13439..U+1343F format characters.
RESERVED = {0x2065, *range(0x13439, 0x13440)}


def test_printable_escapes_exactly_the_controls_surrogates_and_format_characters() -> None:
    """Checked over every code point against this Python's Unicode, so that a newer one's
    format characters fail here until the list in reins.values has them."""
    every = "".join(map(chr, range(0x110000)))
    wanted = []
    for c in every:
        code = ord(c)
        if c in "\n\t" or (
            unicodedata.category(c) not in ("Cc", "Cf", "Cs") and code not in RESERVED
        ):
            wanted.append(c)
        elif code < 0x20:
            wanted.append(f"\\x{code:02x}")
        else:
            wanted.append(json.dumps(c)[1:-1])  # \u009b, \u202e, a surrogate pair above U+FFFF
    assert printable(every) == "".join(wanted)
    assert {unicodedata.category(chr(c)) for c in RESERVED} <= {"Cf", "Cn"}
