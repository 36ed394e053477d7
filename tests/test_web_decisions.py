"""What the desk says of a decision and of what it decides from (issue 40), through Starlette's
TestClient on both engines: a person's reject reads as theirs, not as the gate's "out of
tries"; a REVIEW card names the level each fact was raised at and coaching only where it
applies, with a rule's description in words; a diff's file names come from git's own headers,
quoted names decoded and binary patches named, never spoofed by a name that holds " b/";
hidden Unicode is shown and flagged; and the banner after an action says only what this server
did.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins import load_quest
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.turn.lane import resolve
from tests.kit import TINY
from tests.kit.declare_checks import register, write_quest
from tests.kit.quests import WORDY
from tests.kit.web import Ledger, card, client, csrf_of, text_of, web_ledger


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def test_a_person_s_reject_reads_as_the_person_s_not_out_of_tries(ledger: Ledger) -> None:
    store = ledger.store
    web = client(store)
    b = text_of(card(web.get("/review").text, "b"))
    assert "Reject locks it DONE — rejected by a person." in b
    assert "out of tries" not in b and "out of tries" not in web.get("/review").text
    page = web.get("/review").text
    done = web.post(
        "/review/resolve",
        data={"csrf": csrf_of(page), "key": "c", "decision": "reject", "note": "no", "by": "cy"},
    )
    assert done.status_code == 303
    banner = re.search(r'<span id="done-text">(.*?)</span>', web.get(done.headers["location"]).text)
    assert banner is not None and banner.group(1) == "c: rejected, locked DONE (rejected)"
    item = text_of(web.get("/item", params={"key": "c"}).text)
    assert "DONE — rejected by cy · 0 of 3 failures used" in item
    assert "reject by a person → DONE (rejected)" in item  # the timeline's turn
    assert "out of tries" not in item and "unsolved" not in item
    decided = text_of(web.get("/decided").text)
    assert "reject by a person → DONE (rejected)" in decided and "unsolved" not in decided
    # The CLI's words for the same decision, and for the item's log.
    said = resolve(store, TINY, "b", accept=False, note="nope", by="bo").text
    assert said == "b -> reject by bo (state DONE (rejected), round 1): nope\n"
    from reins.turn.views import log_text

    rejected, log = store.snapshot("b")
    logged = log_text(rejected, log, max_tries=TINY.max_tries)
    assert logged.startswith("b: DONE — rejected by a person, 0 of 3 failures used")
    assert "reject by a person → DONE (rejected)" in logged
    # The gate's own DONE still says what it means.
    for _ in range(TINY.max_tries):
        submit(store, TINY, "d", "bad", driver="ann")
    gate = text_of(web.get("/item", params={"key": "d"}).text)
    assert "DONE — out of tries, not passed · 3 of 3 failures used" in gate


GATE = """\
# Capitals

## Rules

| id | level | check | parameters | coaching | description |
|----|-------|-------|------------|----------|-------------|
| word | FAIL | strict_loose | word = "Rome" | Name Rome. | `capital:word`: names Rome, as spelt |
| known | REVIEW | regex | path = "submission", pattern = 'Rome' | Name a capital city. | |
"""

TOML = """\
name = "capitals"

[items]
source = "items.jsonl"
key = "country"

[prompt]
output = "text"
template = "What is the capital of {{ item.country }}?"

[judge]
max_tries = 2
"""


def test_a_review_card_names_the_level_raised_and_coaches_only_after_a_fail(
    ledger: Ledger, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The word rule is FAIL, its fact only REVIEW (the loose reading): the card says REVIEW,
    not FAIL, and no "coaching after a FAIL" on it; a description is words, its code apart."""
    register(monkeypatch)
    folder = tmp_path / "capitals"
    write_quest(folder, GATE, TOML, '{"country": "Italy"}\n')
    quest = load_quest(str(folder))
    store = ledger.store
    store.add([("Italy", {"country": "Italy"})])
    submit(store, quest, "Italy", "rome", driver="ann")  # word: REVIEW; known: REVIEW
    shown = card(client(store, quest).get("/review").text, "Italy")
    rules = re.search(r'<dl class="rules">(.*?)</dl>', shown, re.S)
    assert rules is not None
    said = text_of(rules.group(1))
    assert said.startswith("word raised at REVIEW (the rule counts up to FAIL)")
    assert "names Rome, as spelt" in said and "`" not in rules.group(1)
    assert '<code class="ref">capital:word</code>' in rules.group(
        1
    )  # the reference, as code, apart
    assert "coaching" not in said and "Name Rome" not in said
    # A rule the quest gave no description is described by its check, in words.
    assert "known raised at REVIEW" in said
    assert "the text at the path must (or must not) match a regular expression" in said
    code = "regex: path = &#34;submission&#34;, pattern = &#39;Rome&#39;"
    assert f'<code class="ref">{code}</code>' in rules.group(1)
    assert "Name a capital city" not in said


def test_coaching_is_shown_for_a_fact_raised_at_fail(ledger: Ledger) -> None:
    """A card whose facts include a FAIL one (a person's REVIEW over it is possible in a
    graph gate; here the rule card of a FAILed attempt, read through the same function)."""
    import dataclasses

    from reins.web.desk import rule_notes

    coached = dataclasses.replace(TINY, coaching={"not-bad": "Never say bad.", "not-meh": "No."})
    submit(ledger.store, TINY, "d", "bad and meh", driver="ann")
    last = ledger.store.snapshot("d")[1][-1]
    notes = {n.rule: n for n in rule_notes(coached, last)}
    assert (notes["not-bad"].level, notes["not-bad"].coaching) == ("FAIL", "Never say bad.")
    assert (notes["not-meh"].level, notes["not-meh"].coaching) == ("REVIEW", None)


def git_patch(folder: Path, files: dict[str, bytes]) -> bytes:
    """The patch ``git diff --binary`` gives for ``files`` added to an empty repository, with
    the settings reins takes a change with (quoted paths, no renames, a/ and b/)."""
    import os
    import subprocess

    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> bytes:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.org",
             "-c", "core.quotePath=true", *args],
            cwd=folder, env=env, capture_output=True, check=True,
        )  # fmt: skip
        return done.stdout

    folder.mkdir()
    git("init", "-q", ".")
    git("commit", "-q", "--allow-empty", "-m", "base")
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    git("add", "-A")
    git("commit", "-q", "-m", "change")
    return git(
        "diff", "--binary", "--no-color", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/",
        "HEAD~1", "HEAD",
    )  # fmt: skip


def test_a_diff_lists_each_file_by_git_s_headers_never_by_a_spoofed_name(
    ledger: Ledger, tmp_path: Path
) -> None:
    from reins.workspace.submission import compose

    patch = git_patch(
        tmp_path / "repo",
        {
            "x.py b/README.md": b"x = 1\n",  # a file whose path holds " b/"
            "caf\u00e9.py": b"y = 2\n",  # git quotes it: "b/caf\303\251.py"
            "t\tab.py": b"tab\n",  # and this: "b/t\tab.py"
            "logo.bin": b"\x89PNG\r\n\x1a\n\x00\x01\x02" * 40,  # a GIT binary patch
        },
    )
    store = ledger.store
    store.add([("spoof", {"word": "spoof"})])
    text = compose("meh, I added files", patch, files=4, base="0" * 40, commit="1" * 40,
                   branch="reins/spoof").text  # fmt: skip
    submit(store, TINY, "spoof", text, driver="agent")
    web = client(store)
    for page in (web.get("/review").text, web.get("/item", params={"key": "spoof"}).text):
        paths = re.findall(r'<code class="path">(.*?)</code>', page, re.S)  # once per change shown
        assert paths[:4] == ["caf\u00e9.py", "logo.bin", "t\\tab.py", "x.py b/README.md"], paths
        assert "README.md</code>" not in page.replace("x.py b/README.md</code>", "")
        binary = re.search(r'<code class="path">logo.bin</code>.*?</details>', page, re.S)
        assert binary is not None
        assert "binary file changed" in text_of(binary.group(0))
        change = re.search(r'<div class="change">.*?</div>', page, re.S)
        assert change is not None  # (the tiny quest's fact quotes the whole submission)
        assert "GIT binary patch" not in change.group(0) and "literal " not in change.group(0)


RLO, PDF, ZWSP = "\u202e", "\u202c", "\u200b"


def test_hidden_unicode_is_shown_as_a_marker_and_flags_the_card(ledger: Ledger) -> None:
    """An answer "9876-5432-1000" that bidirectional controls reorder on screen, and a
    zero-width space: on the desk and the item page each shows as a marker naming it, none is
    left in the page to act, and the card says the item holds them."""
    store = ledger.store
    store.add([("bidi", {"word": "bidi", "text": f"Give the account{ZWSP} number."})])
    answer = f"meh {RLO}0001-2345-6789{PDF}"
    submit(store, WORDY, "bidi", answer, driver="ann")
    web = client(store, WORDY)
    review = web.get("/review").text
    shown = card(review, "bidi")
    markers = re.findall(r'<span class="hidden-char" title="([^"]*)">([^<]*)</span>', shown)
    assert ("RIGHT-TO-LEFT OVERRIDE (U+202E): a hidden character", "U+202E") in markers
    assert ("POP DIRECTIONAL FORMATTING (U+202C): a hidden character", "U+202C") in markers
    assert ("ZERO WIDTH SPACE (U+200B): a hidden character", "U+200B") in markers
    flag = re.search(r'<p class="hidden-flag"[^>]*>(.*?)</p>', shown, re.S)
    assert flag is not None
    assert text_of(flag.group(1)).startswith("This item holds 5 hidden characters")
    for raw in (RLO, PDF, ZWSP):
        assert raw not in review
    assert "hidden-flag" not in card(review, "b")  # an item without any is not flagged
    item = web.get("/item", params={"key": "bidi"}).text
    for raw in (RLO, PDF, ZWSP):
        assert raw not in item
    assert '<span class="hidden-char" title="RIGHT-TO-LEFT OVERRIDE' in item
    assert re.search(r'<p class="hidden-flag"[^>]*>', item)
    assert "hidden-flag" not in web.get("/item", params={"key": "b"}).text


def banner(html: str) -> str | None:
    found = re.search(r'<div class="done" id="done".*?</div>', html, re.S)
    return None if found is None else found.group(0)


def test_the_banner_says_only_what_this_server_did(ledger: Ledger) -> None:
    """/review?done=TEXT&undo=KEY showed any text as the status, with a working Undo."""
    from urllib.parse import parse_qs, urlencode, urlsplit

    web = client(ledger.store)
    forged = web.get("/review", params={"done": "b: approved by the boss", "undo": "a",
                                        "turn": "2"})  # fmt: skip
    assert forged.status_code == 200
    assert banner(forged.text) is None and "approved by the boss" not in forged.text
    assert 'action="/review/undo"' not in forged.text
    page = web.get("/review").text
    done = web.post(
        "/review/resolve",
        data={"csrf": csrf_of(page), "key": "b", "decision": "accept", "note": "ok", "then": "c"},
    )
    back = done.headers["location"]
    shown = banner(web.get(back).text)
    assert shown is not None and "b: accepted, locked PASS" in shown
    assert 'action="/review/undo"' in shown
    # The server's own words, changed or moved to another item, are no longer its own.
    said = {k: v[0] for k, v in parse_qs(urlsplit(back).query).items()}
    for change in ({"done": "b: rejected, locked DONE (rejected)"}, {"undo": "c"},
                   {"turn": "1"}, {"sig": ""}):  # fmt: skip
        tampered = web.get("/review?" + urlencode({**said, **change})).text
        assert banner(tampered) is None, change
        assert 'action="/review/undo"' not in tampered
    # Nor does another server (another start) vouch for them.
    assert banner(client(ledger.store).get(back).text) is None
