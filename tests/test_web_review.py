"""The review queue as a reviewer decides from it, through Starlette's TestClient on both
engines: per item, the item's own text (as the quest renders it), the submission and the facts
side by side; the keys shown beside the actions they press; the "by" field left to the browser;
and a decision that brings the reviewer back to the item that followed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

import pytest

from reins.store.model import State
from reins.testing.harness import StoreHarness
from tests.kit import TINY
from tests.kit.web import HOSTILE_KEY, Ledger, client, csrf_of, text_of, web_ledger


@pytest.fixture
def ledger(store_harness: StoreHarness) -> Iterator[Ledger]:
    with web_ledger(store_harness) as found:
        yield found


def waiting(html: str) -> dict[str, str]:
    """Each queued item's article, by key (as the page spells it)."""
    return dict(
        re.findall(r'<article class="waiting" data-key="([^"]*)"(.*?)</article>', html, re.S)
    )


def side(article: str, name: str) -> str:
    found = re.search(rf'<section class="side {name}">(.*?)</section>', article, re.S)
    assert found is not None, name
    return found.group(1)


def test_each_item_shows_its_text_the_submission_and_the_facts(ledger: Ledger) -> None:
    page = client(ledger.store).get("/review").text
    queued = waiting(page)
    assert list(queued) == ["b", "c", "&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;"]
    b = queued["b"]
    assert text_of(side(b, "source")) == "The item Say 'good' for b."  # the quest's render
    assert text_of(side(b, "submission")) == "Submission meh"
    assert text_of(side(b, "facts")) == (
        "Facts rule not-meh where answer expected good actual meh "
        "not-meh raised at REVIEW the answer is not 'meh'"  # the rule as the catalog says it
    )
    assert "REVIEW on answer 1 of 3" in text_of(b)
    # Hostile text stays text in all three.
    hostile = queued["&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;"]
    assert "Say &#39;good&#39; for &lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;." in hostile
    assert "&lt;img src=x onerror=alert(&#39;submission&#39;)&gt;" in side(hostile, "submission")
    assert "<script>" not in page and "<img src=x" not in page


def test_without_the_quest_or_its_render_the_payload_stands_in(ledger: Ledger) -> None:
    bare = waiting(client(ledger.store, quest=None).get("/review").text)["b"]
    assert text_of(side(bare, "source")) == 'The item (its payload) { "word": "b" }'

    def broken(item: object) -> str:
        raise KeyError("word")

    quest = dataclasses.replace(TINY, render=broken)
    shown = waiting(client(ledger.store, quest).get("/review").text)["b"]
    said = text_of(side(shown, "source"))
    assert said.startswith("The item (its payload: the quest cannot render it, KeyError")
    assert said.endswith('{ "word": "b" }')


def test_the_keys_are_shown_beside_what_they_do(ledger: Ledger) -> None:
    page = client(ledger.store).get("/review").text
    keys = re.search(r'<p class="keys" id="keys">(.*?)</p>', page, re.S)
    assert keys is not None
    legend = text_of(keys.group(1))
    for said in ("j / k next / previous item", "n write the note", "a accept", "r reject"):
        assert said in legend
    b = waiting(page)["b"]
    assert re.search(r'aria-keyshortcuts="a" title="locks it PASS">Accept <kbd>a</kbd></button>', b)
    assert re.search(r'aria-keyshortcuts="r" title="[^"]*">Reject <kbd>r</kbd></button>', b)
    # The page loads its own script only: the keys live in reins.js, not in the page.
    assert re.findall(r"<script[^>]*>", page) == ['<script src="/static/reins.js" defer>']
    assert client(ledger.store).get("/static/reins.js").status_code == 200
    # Read-only, the keys that move stay; those that decide are not offered.
    quiet = text_of(client(ledger.store, read_only=True).get("/review").text)
    assert "j / k next / previous item" in quiet and "a accept" not in quiet


def test_the_by_field_is_the_browsers_not_the_servers_user(ledger: Ledger) -> None:
    """The server's user is only what a blank "by" falls back to; reins.js fills the field
    from this browser's storage."""
    web = client(ledger.store)
    for path in ("/review", "/item?key=a"):
        fields = re.findall(r'<input name="by"[^>]*>', web.get(path).text)
        assert fields and all('placeholder="web-user"' in f for f in fields), path
        assert not any("value=" in f for f in fields), path


def test_a_decision_comes_back_to_the_item_that_followed(ledger: Ledger) -> None:
    web = client(ledger.store)
    page = web.get("/review").text
    b = waiting(page)["b"]
    assert '<input type="hidden" name="then" value="c">' in b
    last = waiting(page)["&lt;script&gt;alert(&#39;key&#39;)&lt;/script&gt;"]
    assert '<input type="hidden" name="then" value="c">' in last  # the last goes back one
    done = web.post(
        "/review/resolve",
        data={"csrf": csrf_of(page), "key": "b", "decision": "accept", "note": "ok", "then": "c"},
    )
    assert done.status_code == 303
    assert done.headers["location"].startswith(  # then the server's signature of the banner
        "/review?done=b%3A+accepted%2C+locked+PASS&at=c&undo=b&turn=2&sig="
    )
    assert ledger.store.get("b").state is State.PASS
    # Enter in the note presses no decision: the form's first submit button is a disabled one.
    form = re.search(
        r'<form method="post" action="/review/resolve" class="act">(.*?)</form>', b, re.S
    )
    assert form is not None
    first = re.search(r"<button[^>]*>", form.group(1))
    assert first is not None and "disabled" in first.group(0)
    assert HOSTILE_KEY not in page
