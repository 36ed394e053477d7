"""The reviewer's desk in a real browser, at a laptop's size and a phone's (1280 by 800 and 390
by 844): Debian's Chromium driven by Playwright over ``reins serve`` in its own process.

A reviewer decides ten REVIEW items by keyboard alone (j, n and the note, a or r, Enter to
confirm), undoes one from the banner (u, Enter: back in the queue, recorded as an undo), and finds
one of those left by a word of its submission (/, the word, Enter); every decision lands in the
ledger as the same human turn ``reins resolve`` records, and the decided view then lists who
did what.
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
from tests.kit.browser import DESKTOP, PHONE, launch, make_ledger, served, shot

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, ViewportSize

pytestmark = pytest.mark.slow

# One word of each submission no other holds: what the reviewer finds an item by.
WORDS: tuple[str, ...] = (
    "apple",
    "birch",
    "cedar",
    "dune",
    "ember",
    "fjord",
    "grove",
    "heron",
    "iris",
    "juniper",
)
WORDS += ("kestrel", "lagoon")
KEYS = tuple(f"r{n:02d}" for n in range(1, len(WORDS) + 1))
DECIDED = 10


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


def review_ledger(folder: Path) -> Path:
    """Twelve items waiting in REVIEW, each submission with a word of its own."""
    path = make_ledger(folder, list(KEYS))
    with SQLiteStore.open(path) as led:
        for key, word in zip(KEYS, WORDS, strict=True):
            submit(led, TINY, key, f"meh, says {key}: {word}", driver="ann")
    return path


def decide(page: Page, n: int) -> str:
    """Decide the item j takes next, by keys alone: accept the even ones, reject the odd."""
    from playwright.sync_api import expect

    expect(page.locator('#queue[data-keys="ready"]')).to_have_count(1)
    page.keyboard.press("j")
    chosen = page.locator("article.waiting.current")
    key = chosen.get_attribute("data-key")
    assert key is not None
    decision = "accept" if n % 2 == 0 else "reject"
    page.keyboard.press("n")  # the note first: a decision needs one
    expect(chosen.locator('input[name="note"]')).to_be_focused()
    page.keyboard.type(f"{decision} {key} by keys")
    page.keyboard.press("Enter")  # leaves the note, decides nothing
    page.keyboard.press(decision[0])  # arms the decision; Enter confirms it
    expect(chosen.locator(".pending")).to_contain_text(f"Enter {decision}s {key}")
    page.keyboard.press("Enter")
    locked = "PASS" if decision == "accept" else "DONE (rejected)"
    expect(page.locator("#done-text")).to_have_text(f"{key}: {decision}ed, locked {locked}")
    return key


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_reviewer_decides_ten_by_keys_undoes_one_and_finds_one_by_a_word(
    browser: BrowserContext, tmp_path: Path, size: ViewportSize
) -> None:
    from playwright.sync_api import expect

    name = "phone" if size == PHONE else "desktop"
    ledger = review_ledger(tmp_path)
    with served(ledger) as dashboard:
        url = dashboard.url
        page = browser.new_page()
        page.goto(dashboard.link)  # the printed link: its cookie carries the access token
        page.set_viewport_size(size)
        page.goto(f"{url}review")
        assert page.locator("article.waiting.current").count() == 0  # none until j
        decided = [decide(page, n) for n in range(DECIDED)]
        assert decided == list(KEYS[:DECIDED])  # j took each next one, never skipped one
        shot(page, f"desk-{name}-decided", full=False)

        # u undoes the last decision, from its banner: the item waits again, in its round.
        expect(page.locator('#queue[data-keys="ready"]')).to_have_count(1)
        page.keyboard.press("u")
        expect(page.locator("#hint")).to_contain_text("Enter undoes")
        page.keyboard.press("Enter")
        last = decided[-1]
        expect(page.locator("#done-text")).to_have_text(
            f"{last}: the reject was undone: REVIEW again, waiting for a decision"
        )
        expect(page.locator("#waiting")).to_have_text(f"{len(KEYS) - DECIDED + 1} waiting")

        # / then a word of a submission: the queue narrows to the item that holds it.
        expect(page.locator('#queue[data-keys="ready"]')).to_have_count(1)
        page.keyboard.press("/")
        expect(page.locator("#search")).to_be_focused()
        page.keyboard.type(WORDS[-1].upper())
        page.keyboard.press("Enter")
        expect(page.locator("article.waiting")).to_have_count(1)
        expect(page.locator("article.waiting")).to_have_attribute("data-key", KEYS[-1])
        expect(page.locator("article.waiting mark").first).to_be_visible()  # the flagged value
        shot(page, f"desk-{name}-found", full=False)
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")

        page.goto(f"{url}decided")
        expect(page.locator("tr.decision")).to_have_count(DECIDED + 1)
        expect(page.locator('tr.reviewer[data-name="pat"] td.today')).to_have_text(str(DECIDED + 1))
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        shot(page, f"desk-{name}-history", full=False)
        page.close()

    with SQLiteStore.open(ledger) as led:
        for n, key in enumerate(decided[:-1]):
            item, log = led.snapshot(key)
            want = State.PASS if n % 2 == 0 else State.DONE
            assert (item.state, log[-1].kind, log[-1].driver) == (want, AttemptKind.HUMAN, "pat")
            assert log[-1].note == f"{log[-1].action} {key} by keys"
        item, log = led.snapshot(last)
        assert (item.state, item.round) == (State.REVIEW, 1)
        assert [a.action for a in log[-2:]] == ["reject", "undo"]
        assert log[-1].note == f"undo of the reject (reject {last} by keys)"
        assert [led.get(k).state for k in KEYS[DECIDED:]] == [State.REVIEW] * 2
