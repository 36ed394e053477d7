"""Typing on the review queue decides nothing (issue 40): Debian's Chromium driven by
Playwright over ``reins serve`` in its own process.

A reviewer who types with no field focused ("ok as is", Enter; "on"; "undo that") meant words,
not keys: the queue's keys act only when pressed on their own, and a key that records something
(a, r, u, c) only arms its action, which Enter then confirms. The ledger is read after each
burst: no decision, no undo, no note made of the words.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reins import SQLiteStore, State
from reins.store.model import AttemptKind
from reins.turn import submit
from tests.kit import TINY
from tests.kit.browser import DESKTOP, launch, make_ledger, served

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

pytestmark = pytest.mark.slow

QUEUED = ("r1", "r2", "r3")
TYPED = "you typed words, not keys: nothing was done"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


def queued(folder: Path) -> Path:
    path = make_ledger(folder, list(QUEUED))
    with SQLiteStore.open(path) as led:
        for key in QUEUED:
            submit(led, TINY, key, f"meh, says {key}", driver="ann")
    return path


def humans(ledger: Path) -> list[tuple[str, str | None, str | None]]:
    """Every person's turn in the ledger: (key, action, note)."""
    found = []
    with SQLiteStore.open(ledger) as led:
        for key in QUEUED:
            for a in led.snapshot(key)[1]:
                if a.kind is AttemptKind.HUMAN:
                    found.append((key, a.action, a.note))
    return found


def typed(page: Page, words: str, *, delay: float = 0) -> None:
    """``words`` and Enter typed with no field focused, then the page's answer to them."""
    from playwright.sync_api import expect

    expect(page.locator('#queue[data-keys="ready"]')).to_have_count(1)
    notes = page.locator('input[name="note"]')
    before = [n.input_value() for n in notes.all()]
    page.keyboard.type(words, delay=delay)
    page.keyboard.press("Enter")
    expect(page.locator("#hint")).to_have_text(TYPED)
    assert page.evaluate("!document.activeElement.closest('input, select')")  # no field took them
    assert [n.input_value() for n in notes.all()] == before  # nor any note


def test_words_typed_on_the_queue_decide_nothing(browser: BrowserContext, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    ledger = queued(tmp_path)
    with served(ledger) as dashboard:
        page = browser.new_page()
        page.set_viewport_size(DESKTOP)
        page.goto(dashboard.link)  # its cookie carries the access token
        page.goto(f"{dashboard.url}review")
        typed(page, "ok as is")  # as fast as a machine types
        typed(page, "ok as is", delay=120)  # and at a person's pace
        typed(page, "a")  # a lone a followed by Enter at once: Enter is part of the typing
        assert page.locator("#done").count() == 0
        assert humans(ledger) == []

        # A decision by keys is a deliberate sequence: the item, the note, the key, Enter.
        page.keyboard.press("j")
        first = page.locator('article.waiting[data-key="r1"]')
        expect(first).to_have_class("waiting current")
        page.keyboard.press("n")
        expect(first.locator('input[name="note"]')).to_be_focused()
        page.keyboard.type("fine in context")
        page.keyboard.press("Enter")  # leaves the note: decides nothing
        expect(first.locator(".pending")).to_have_text("press a to accept or r to reject")
        page.keyboard.press("a")
        expect(first.locator(".pending")).to_have_text(
            "Enter accepts r1; Esc or any other key cancels"
        )
        typed(page, "x")  # any other key disarms it: x and Enter are typing
        expect(first.locator(".pending")).to_have_text("not accepted")
        assert humans(ledger) == []
        page.keyboard.press("a")
        expect(first.locator(".pending")).to_contain_text("Enter accepts r1")
        page.keyboard.press("Enter")
        expect(page.locator("#done-text")).to_have_text("r1: accepted, locked PASS")
        assert humans(ledger) == [("r1", "accept", "fine in context")]

        # Typing on the banner's page undoes nothing; u alone arms the undo, Enter confirms.
        typed(page, "on")
        typed(page, "undo that", delay=120)
        assert page.locator("#done-text").text_content() == "r1: accepted, locked PASS"
        assert humans(ledger) == [("r1", "accept", "fine in context")]
        page.keyboard.press("u")
        expect(page.locator("#hint")).to_have_text(
            "Enter undoes: r1: accepted, locked PASS; Esc or any other key cancels"
        )
        page.keyboard.press("Escape")
        expect(page.locator("#hint")).to_have_text("not undone")
        page.keyboard.press("u")
        expect(page.locator("#hint")).to_contain_text("Enter undoes")
        page.keyboard.press("Enter")
        expect(page.locator("#done-text")).to_contain_text("r1: the accept was undone")
        page.close()

    assert [h[1] for h in humans(ledger)] == ["accept", "undo"]
    with SQLiteStore.open(ledger) as led:
        assert [led.get(k).state for k in QUEUED] == [State.REVIEW] * 3
