"""What changed, in Debian's Chromium driven by Playwright over ``reins serve`` in its own
process (issue 40): a coding change's file list leads to each file's diff, the item page's diff
has the page's width, and a retried answer's comparison opens on a click, its hostile text
inert.
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
from tests.kit.browser import DESKTOP, launch, make_ledger, served, shot

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Dialog

pytestmark = pytest.mark.slow

PATCH = b"".join(
    b"diff --git a/pkg/m%d.py b/pkg/m%d.py\n--- a/pkg/m%d.py\n+++ b/pkg/m%d.py\n@@ -1 +1,40 @@\n"
    b"-    raise NotImplementedError\n"
    % (n, n, n, n)
    + b"".join(b"+    line_%d = %d  # a line of code\n" % (k, k) for k in range(40))
    for n in range(4)
)
BEFORE = "bad: the total is 41 <img src=x onerror=alert('before')>"
AFTER = "meh: the total is 42 <img src=x onerror=alert('after')><script>alert(1)</script>"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


def ledger(folder: Path) -> Path:
    path = make_ledger(folder, ["coding", "retried"])
    with SQLiteStore.open(path) as led:
        text = compose("meh, I changed four modules", PATCH, files=4, base="0" * 40,
                       commit="1" * 40, branch="reins/coding").text  # fmt: skip
        submit(led, TINY, "coding", text, driver="agent")
        submit(led, TINY, "retried", BEFORE, driver="ann")
        submit(led, TINY, "retried", AFTER, driver="ann")
    return path


def test_a_file_list_leads_to_each_diff_and_a_retry_opens_on_a_click(
    browser: BrowserContext, tmp_path: Path
) -> None:
    alerts: list[str] = []
    with served(ledger(tmp_path)) as dashboard:
        page = browser.new_page()
        page.set_viewport_size(DESKTOP)

        def dismissed(dialog: Dialog) -> None:
            alerts.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", dismissed)
        page.goto(dashboard.link)
        page.goto(f"{dashboard.url}review")
        coding = page.locator('article[data-key="coding"]')
        entries = coding.locator("ol.files li a")
        assert entries.count() == 4
        entries.nth(3).click()
        target = page.evaluate("location.hash").removeprefix("#")
        assert target.endswith("-file-4"), target
        landed = coding.locator(f'details.file[id="{target}"]')
        top = landed.evaluate("e => e.getBoundingClientRect().top")
        assert 0 <= top < 100, top  # scrolled to the fourth file's diff
        assert "pkg/m3.py" in (landed.locator("summary").text_content() or "")
        retry = page.locator('article[data-key="retried"] details.retry')
        assert not retry.locator("ins").first.is_visible()  # collapsed until asked
        retry.locator("summary").click()
        assert retry.locator("ins").first.is_visible()
        added = " ".join(retry.locator("ins").all_text_contents())
        assert "42" in added and "<script>" in added  # the text itself, as text
        shot(page, "retry-open")
        item = browser.new_page()
        item.set_viewport_size(DESKTOP)
        item.goto(f"{dashboard.url}item?key=coding")
        width = item.locator("main").evaluate("e => e.clientWidth")
        diff = item.locator("#change pre.diff").first.evaluate("e => e.clientWidth")
        assert diff >= 0.8 * width, (diff, width)
        page.close()
        item.close()
    assert not alerts, alerts
