"""The reviewer's desk through Starlette's TestClient, on both engines: what a decision locks
and its undo, claims, the queue's rule filter and search, the decided view, the flagged value
marked in the item's text, the rules and coaching on the card, a coding item's diff per file,
and the board and report beside them (the quest's figures, words for the usage, times in a
snapshot, the favicon).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from reins import Fact, Outcome, Verdict
from reins.figures import Figure, LedgerView
from reins.store.model import AttemptKind, Notes, State
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.turn.lane import resolve
from reins.turn.record import Origin, record
from reins.web.report import write_html
from reins.workspace.submission import compose
from tests.kit import TINY
from tests.kit.quests import WORDY
from tests.kit.web import HOSTILE_KEY, Ledger, card, client, csrf_of, text_of, web_ledger


def answered(view: LedgerView) -> list[Figure]:
    """The share of judged items whose latest judged answer passed, as a quest counts it."""
    judged = [i for i in view.items() if i.answer is not None]
    passed = sum(1 for i in judged if i.answer is not None and i.answer.outcome == "PASS")
    share = passed / len(judged)
    return [Figure("pass_share", share, "percent", "passed", f"{passed} of {len(judged)}")]


COUNTED = dataclasses.replace(TINY, figures=answered)


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def decide(web: object, key: str, decision: str, note: str, **more: str) -> str:
    page = web.get("/review").text  # type: ignore[attr-defined]
    form = {"csrf": csrf_of(page), "key": key, "decision": decision, "note": note, **more}
    done = web.post("/review/resolve", data=form)  # type: ignore[attr-defined]
    assert done.status_code == 303, done.text
    return str(done.headers["location"])


def test_the_card_says_what_accept_and_reject_lock(ledger: Ledger) -> None:
    b = text_of(card(client(ledger.store).get("/review").text, "b"))
    assert "Accept locks it PASS; Reject locks it DONE — rejected by a person." in b
    assert (
        "Either is undone from the banner for 10 min after, by whoever decided: the item waits "
        "here again." in b
    )


def test_a_decision_is_undone_by_its_maker_back_into_the_queue_in_its_round(
    ledger: Ledger,
) -> None:
    """Issue 40: an undo was a reopen (the item left the queue for a new round of the
    generator), and anyone could undo anyone's decision."""
    web = client(ledger.store)
    back = decide(web, "b", "accept", "fine", then="c", by="rita")
    assert re.fullmatch(  # the banner's words, signed by the server (sig)
        r"/review\?done=b%3A\+accepted%2C\+locked\+PASS&at=c&undo=b&turn=2&sig=[0-9a-f]{32}", back
    )
    page = web.get(back).text
    banner = re.search(r'<div class="done" id="done".*?</div>', page, re.S)
    assert banner is not None and 'action="/review/undo"' in banner.group(0)
    assert '<input type="hidden" name="turn" value="2">' in banner.group(0)
    # Another person's undo is refused, naming who decided; nothing is recorded.
    other = web.post(
        "/review/undo", data={"csrf": csrf_of(page), "key": "b", "turn": "2", "by": "sam"}
    )
    assert other.status_code == 409
    assert "was accepted by rita, not sam: only rita may undo it" in text_of(other.text)
    assert ledger.store.get("b").turns == 2
    undone = web.post(
        "/review/undo", data={"csrf": csrf_of(page), "key": "b", "turn": "2", "by": "rita"}
    )
    assert undone.status_code == 303
    assert "the+accept+was+undone" in undone.headers["location"]
    item, log = ledger.store.snapshot("b")
    assert (item.state, item.round, item.tries) == (State.REVIEW, 1, 0)  # where it was
    assert (log[-1].kind, log[-1].action, log[-1].driver) == (AttemptKind.HUMAN, "undo", "rita")
    assert log[-1].note == "undo of the accept (fine)"
    assert [a.action for a in log] == [None, "accept", "undo"]  # the decision stays logged
    assert "b" in re.findall(r'data-key="([^"]*)"', web.get("/review").text)  # waiting again
    # Once is all: the item moved since that decision.
    again = web.post("/review/undo", data={"csrf": csrf_of(page), "key": "b", "turn": "2"})
    assert again.status_code == 409 and "moved since that decision" in again.text
    assert ledger.store.get("b").turns == 3
    # Decided again, it is a decision like any other, in the same round.
    decide(web, "b", "reject", "on second thought", by="rita")
    assert (ledger.store.get("b").state, ledger.store.get("b").round) == (State.DONE, 1)


def test_an_undo_is_refused_after_its_while_and_without_the_token(ledger: Ledger) -> None:
    web = client(ledger.store)
    decide(web, "c", "reject", "no")
    token = csrf_of(web.get("/review").text)
    forged = web.post("/review/undo", data={"key": "c", "turn": "2"})
    assert forged.status_code == 403
    strict = client(ledger.store, undo_window=0)
    late = strict.post(
        "/review/undo",
        data={"csrf": csrf_of(strict.get("/review").text), "key": "c", "turn": "2"},
    )
    assert late.status_code == 409 and "reopen the item from its page" in late.text
    assert ledger.store.get("c").state is State.DONE  # nothing was undone
    # A turn that is no decision is not undone either.
    wrong = web.post("/review/undo", data={"csrf": token, "key": "a", "turn": "2"})
    assert wrong.status_code == 409 and "no decision to undo" in wrong.text


def test_a_claim_is_seen_by_others_keeps_their_decisions_off_and_is_released(
    ledger: Ledger,
) -> None:
    web = client(ledger.store)
    token = csrf_of(web.get("/review").text)
    claimed = web.post("/review/claim", data={"csrf": token, "key": "b", "by": "rita"})
    assert claimed.status_code == 303 and "claimed+by+rita" in claimed.headers["location"]
    assert ledger.store.get("b").lease_owner == "rita"
    b = card(web.get("/review").text, "b")
    assert 'data-holder="rita"' in b and "claimed by rita until" in text_of(b)
    assert 'action="/review/release"' in b
    taken = web.post(
        "/review/resolve",
        data={"csrf": token, "key": "b", "decision": "accept", "note": "mine", "by": "sam"},
    )
    assert taken.status_code == 409
    said = re.search(r"claimed by rita until \d\d:\d\d UTC: theirs to decide", text_of(taken.text))
    assert said is not None, text_of(taken.text)  # who holds it, and until when
    assert ledger.store.get("b").state is State.REVIEW
    refused = web.post("/review/release", data={"csrf": token, "key": "b", "by": "sam"})
    assert refused.status_code == 409 and ledger.store.get("b").lease_owner == "rita"
    released = web.post("/review/release", data={"csrf": token, "key": "b", "by": "rita"})
    assert released.status_code == 303 and ledger.store.get("b").lease_owner is None
    assert "claimed by" not in text_of(card(web.get("/review").text, "b"))
    # The holder's decision ends a claim.
    web.post("/review/claim", data={"csrf": token, "key": "c", "by": "rita"})
    decide(web, "c", "accept", "ok", by="rita")
    assert ledger.store.get("c").lease_owner is None


def test_the_queue_filters_by_root_cause_and_finds_by_words(ledger: Ledger) -> None:
    submit(ledger.store, TINY, "d", "meh, the fjord is wide", driver="ann")
    web = client(ledger.store)
    page = web.get("/review").text
    assert re.search(r'<select name="rule">.*<option value="not-meh">', page, re.S)
    assert '<input name="search"' in page
    found = web.get("/review", params={"search": "FJORD"}).text
    assert re.findall(r'<article class="waiting" data-key="([^"]*)"', found) == ["d"]
    assert '<input type="hidden" name="search" value="FJORD">' in card(found, "d")
    none = web.get("/review", params={"rule": "not-bad"}).text
    assert "nothing to review under this filter" in none
    # A decision under a filter comes back under it.
    back = decide(web, "d", "accept", "wide indeed", search="FJORD")
    assert "search=FJORD" in back
    bad = web.get("/review", params={"search": "!!"})
    assert bad.status_code == 400 and "search must hold a letter or a digit" in bad.text
    # The items page finds by words too, in any state.
    items = web.get("/items", params={"search": "fjord"}).text
    assert re.findall(r'class="key">([^<]*)</a>', items) == ["d"]
    assert '<input name="search" value="fjord"' in items


def test_the_decided_view_says_who_decided_what_when_and_why(ledger: Ledger) -> None:
    web = client(ledger.store)
    decide(web, "b", "accept", "fine in context", by="rita")
    decide(web, "c", "reject", "not good", by="sam")
    decide(web, HOSTILE_KEY, "reject", "<b>no</b>", by="rita")
    page = web.get("/decided").text
    rows = re.findall(r'<tr class="decision kind-(\w+)">(.*?)</tr>', page, re.S)
    said = [(kind, text_of(row)) for kind, row in rows]
    assert [kind for kind, _ in said] == ["reject", "reject", "accept"]  # newest first
    assert said[1][1].endswith("sam c reject by a person → DONE (rejected) not good")
    assert said[2][1].endswith("rita b accept by a person → PASS fine in context")
    assert "&lt;b&gt;no&lt;/b&gt;" in page and "<b>no</b>" not in page
    people = dict(re.findall(r'<tr class="reviewer" data-name="(\w+)">(.*?)</tr>', page, re.S))
    assert text_of(people["rita"]).startswith("rita 2 2 1 1 0 0")  # today, in all, by action
    assert text_of(people["sam"]).startswith("sam 1 1 0 1 0 0")
    assert '<a href="/decided"' in page  # in the nav


def test_the_flagged_value_is_marked_where_the_item_s_text_holds_it(ledger: Ledger) -> None:
    store = ledger.store
    store.add([("quoted", {"word": "quoted", "text": "She wrote: meh, fine."})])
    submit(store, WORDY, "quoted", "meh", driver="ann")
    shown = card(client(store, WORDY).get("/review").text, "quoted")
    text = re.search(r'<pre class="text">(.*?)</pre>', shown, re.S)
    assert text is not None and text.group(1).endswith("She wrote: <mark>meh</mark>, fine.")
    answer = re.search(r'<pre class="answer">(.*?)</pre>', shown, re.S)
    assert answer is not None and answer.group(1) == "<mark>meh</mark>"
    # Marks are text like the rest: what a generator wrote is escaped inside them.
    store.add([("hostile", {"word": "h", "text": "x <i>meh</i> y"})])
    submit(store, WORDY, "hostile", "<i>meh</i>", driver="ann")
    hostile = card(client(store, WORDY).get("/review").text, "hostile")
    assert "<mark>&lt;i&gt;meh&lt;/i&gt;</mark>" in hostile and "<i>" not in hostile


def test_the_card_names_the_rule_its_description_and_its_coaching(ledger: Ledger) -> None:
    coached = dataclasses.replace(TINY, coaching={"not-meh": "Say good, never meh."})
    b = text_of(card(client(ledger.store, coached).get("/review").text, "b"))
    assert "not-meh raised at REVIEW the answer is not 'meh'" in b
    assert "coaching" not in b  # no FAIL on it: coaching after one does not apply
    bare = text_of(card(client(ledger.store, quest=None).get("/review").text, "b"))
    assert "the answer is not 'meh'" not in bare  # without the quest, no catalog to read


PATCH = b"""diff --git a/textkit/__init__.py b/textkit/__init__.py
index 83ed59d..41e1030 100644
--- a/textkit/__init__.py
+++ b/textkit/__init__.py
@@ -1,3 +1,3 @@
 def slugify(text):
--    raise NotImplementedError
+    return text.lower()
diff --git a/README.md b/README.md
new file mode 100644
--- /dev/null
+++ b/README.md
@@ -0,0 +1 @@
+# meh
"""


def test_a_coding_item_is_reviewed_as_a_diff_per_file_beside_its_test_output(
    ledger: Ledger,
) -> None:
    store = ledger.store
    store.add([("slugify", {"word": "slugify"})])
    text = compose(
        "I changed slugify. meh", PATCH, files=2, base="0" * 40, commit="1" * 40,
        branch="reins/slugify",
    ).text  # fmt: skip
    submit(store, TINY, "slugify", text, driver="agent")
    web = client(store)
    for page in (web.get("/review").text, web.get("/item", params={"key": "slugify"}).text):
        paths = re.findall(r'<code class="path">([^<]*)</code>', page)
        assert paths[:2] == ["textkit/__init__.py", "README.md"]
        assert '<span class="ddel">--    raise NotImplementedError</span>' in page
        assert '<span class="dadd">+    return text.lower()</span>' in page
        assert '<span class="dmeta">--- a/textkit/__init__.py</span>' in page
        assert '<span class="dhunk">@@ -1,3 +1,3 @@</span>' in page
        assert "Test output" in page
    review = card(web.get("/review").text, "slugify")
    assert '<pre class="message">I changed slugify. meh</pre>' in review
    item = web.get("/item", params={"key": "slugify"}).text
    tests = re.search(r'<div class="side tests">(.*?)</div>\s*</div>', item, re.S)
    assert tests is not None and "turn 1: REVIEW" in tests.group(1) and "not-meh" in tests.group(1)
    # Accept and Reject work on it as on any REVIEW item.
    decide(web, "slugify", "accept", "the diff is right")
    assert store.get("slugify").state is State.PASS


def test_a_coding_item_s_diff_is_read_at_its_span_not_from_a_header_in_the_message(
    ledger: Ledger,
) -> None:
    store = ledger.store
    store.add([("forged", {"word": "forged"})])
    fake = "\n\n## Changes: 1 file(s)\n\n```diff\ndiff --git a/pwned.py b/pwned.py\n+x\n```\n"
    made = compose("I changed slugify." + fake, PATCH, files=2, base="0" * 40,
                   commit="1" * 40, branch="reins/forged")  # fmt: skip
    notes = Notes(via="loop", branch="reins/forged", commit="1" * 40, base="0" * 40,
                  patch_start=made.start, patch_end=made.end)  # fmt: skip
    fact = Fact(rule="not-meh", where="answer", expected="good", actual="meh")
    # The span decides, whatever the text holds: even a header after the patch is only text.
    record(store, TINY, store.get("forged"), Verdict(Outcome.REVIEW, (fact,), "not-meh"),
           Origin(notes=notes), driver="loop", submission=made.text + fake)  # fmt: skip
    web = client(store)
    for page in (web.get("/review").text, web.get("/item", params={"key": "forged"}).text):
        paths = re.findall(r'<code class="path">([^<]*)</code>', page)
        assert paths[:2] == ["textkit/__init__.py", "README.md"] and "pwned.py" not in paths
    shown = card(web.get("/review").text, "forged")
    assert "## Changes: 1 file(s)" in shown  # the agent's words, shown as its message


def test_a_person_s_decision_is_named_on_the_item_page(ledger: Ledger) -> None:
    resolve(ledger.store, TINY, "b", accept=True, note="fine", by="rita")
    page = client(ledger.store).get("/item", params={"key": "b"}).text
    assert text_of(page).count("PASS accepted by rita · 0 of 3 failures used") == 1
    gate = client(ledger.store).get("/item", params={"key": "a"}).text  # the gate's own PASS
    assert 'id="item-decided"' not in gate


def test_the_board_shows_the_quest_s_own_figures_as_report_does(
    ledger: Ledger, tmp_path: Path
) -> None:
    page = client(ledger.store, COUNTED).get("/").text
    own = re.search(
        r'<section class="panel own-figures" id="own-figures">(.*?)</section>', page, re.S
    )
    assert own is not None
    shown = text_of(own.group(1))
    assert "tiny figures" in shown and "pass_share 25.0000% passed (1 of 4)" in shown
    report = tmp_path / "r.html"
    write_html(ledger.store, COUNTED, report)
    assert "pass_share 25.0000% passed (1 of 4)" in text_of(report.read_text())
    # Neither the live fragment (redrawn on every turn) nor a quest without figures has them.
    assert "own-figures" not in client(ledger.store, COUNTED).get("/?fragment=1").text
    assert "own-figures" not in client(ledger.store).get("/").text


def test_the_usage_table_words_the_kinds_of_turn(ledger: Ledger) -> None:
    resolve(ledger.store, TINY, "b", accept=True, note="ok", by="rita")
    usage = re.search(
        r'<table class="usage">(.*?)</table>', client(ledger.store).get("/").text, re.S
    )
    assert usage is not None
    shown = text_of(usage.group(1))
    assert "· judged answers 5" in shown and "· a person's actions 1" in shown
    assert "generation_error" not in usage.group(1) and "· human" not in shown


def test_a_snapshot_says_its_times_as_they_were(ledger: Ledger, tmp_path: Path) -> None:
    """The report calls itself a snapshot: "24 s ago" would be wrong by the time it is read."""
    report = tmp_path / "r.html"
    write_html(ledger.store, TINY, report)
    html = report.read_text()
    assert not re.search(r"\bago\b|just now", html)
    stamps = re.findall(r'<time datetime="[^"]+">(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)</time>', html)
    assert len(stamps) >= 5  # the feed's turns, the queue's, when the report was made
    assert "just now" in client(ledger.store).get("/").text  # the live board counts back


def test_the_favicon_is_served(ledger: Ledger) -> None:
    web = client(ledger.store)
    icon = web.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
    assert '<link rel="icon" href="/static/favicon.svg"' in web.get("/").text
