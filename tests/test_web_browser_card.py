"""A review card as a reviewer sees it (issue 40), in Debian's Chromium driven by Playwright
over ``reins serve`` in its own process: an answer is shown whole, not cut at 24em with no
sign of more; a coding diff takes the card's whole width at 1280 px, not a third of it; and on
a phone's touch screen Accept and Reject are tall enough and far enough apart to hit, with no
keyboard hints for keys it has none of.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reins import SQLiteStore
from reins.turn import submit
from reins.workspace.submission import compose
from tests.kit import TINY
from tests.kit.browser import DESKTOP, PHONE, launch, make_ledger, served, shot

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, FloatRect, Page

pytestmark = pytest.mark.slow

LONG = "\n".join(f"meh, line {n} of a long answer" for n in range(80))
PATCH = b"".join(
    b"diff --git a/textkit/m%d.py b/textkit/m%d.py\n--- a/textkit/m%d.py\n+++ b/textkit/m%d.py\n"
    b"@@ -1 +1 @@\n-    raise NotImplementedError\n+    return text.lower()  # a line of code\n"
    % (n, n, n, n)
    for n in range(3)
)
TOUCH_TARGET = 44  # px: the least a finger is given (WCAG 2.5.5), and the room between two
APART = 16


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


def ledger(folder: Path) -> Path:
    path = make_ledger(folder, ["long", "coding"])
    with SQLiteStore.open(path) as led:
        submit(led, TINY, "long", LONG, driver="ann")
        text = compose("meh, I changed three modules", PATCH, files=3, base="0" * 40,
                       commit="1" * 40, branch="reins/coding").text  # fmt: skip
        submit(led, TINY, "coding", text, driver="agent")
    return path


def box(page: Page, selector: str) -> FloatRect:
    found = page.locator(selector).first.bounding_box()
    assert found is not None, selector
    return found


def test_an_answer_is_whole_and_a_diff_takes_the_card_s_width(
    browser: BrowserContext, tmp_path: Path
) -> None:
    with served(ledger(tmp_path)) as dashboard:
        page = browser.new_page()
        page.set_viewport_size(DESKTOP)
        page.goto(dashboard.link)
        page.goto(f"{dashboard.url}review")
        answer = page.locator('article[data-key="long"] pre.answer')
        cut = answer.evaluate("e => e.scrollHeight - e.clientHeight")
        assert cut <= 1, f"the answer is cut: {cut} px of it out of sight"
        card = box(page, 'article[data-key="coding"]')
        diff = box(page, 'article[data-key="coding"] pre.diff')
        assert diff["width"] >= 0.8 * card["width"], (diff["width"], card["width"])
        shot(page, "card-desktop")
        page.close()


def test_on_a_phone_accept_and_reject_are_targets_and_no_key_is_hinted(
    browser: BrowserContext, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    with served(ledger(tmp_path)) as dashboard:
        page = browser.new_page()
        page.set_viewport_size(PHONE)
        cdp = browser.new_cdp_session(page)  # a touch screen: pointer coarse, no hover
        cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        page.goto(dashboard.link)
        page.goto(f"{dashboard.url}review")
        card = 'article[data-key="long"]'
        accept, reject = box(page, f"{card} button.accept"), box(page, f"{card} button.reject")
        for found in (accept, reject):
            assert found["height"] >= TOUCH_TARGET and found["width"] >= TOUCH_TARGET, found
        if abs(accept["y"] - reject["y"]) < 1:  # side by side
            apart = reject["x"] - (accept["x"] + accept["width"])
        else:
            apart = reject["y"] - (accept["y"] + accept["height"])
        assert apart >= APART, apart
        expect(page.locator("#keys")).to_be_hidden()
        for kbd in page.locator(f"{card} kbd").all():
            expect(kbd).to_be_hidden()
        shot(page, "card-phone-touch", full=False)
        page.close()
