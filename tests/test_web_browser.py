"""The dashboard end to end in a real browser: Debian's Chromium driven by Playwright.

``reins serve`` runs in its own process over an SQLite ledger while a loop in another process
records turns with a FakeBackend. The board follows the loop without a reload; the items page
filters; an item's timeline opens; the review queue accepts one item and rejects another, and
the ledger shows both; a post without the CSRF token is refused; the HTML report opens from a
file with the network off and shows the counts of ``reins status --json``. Screenshots of each
page land in test-artifacts/ (git-ignored).

Skipped only when Chromium is not installed and ``CI`` is unset: CI installs it (.ci/run) and
fails here without it. Playwright never downloads a browser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reins import SQLiteStore, State
from reins.store.model import AttemptKind
from tests.kit.browser import WAIT, launch, reins, served, shot, start_loop
from tests.kit.browser import make_ledger as ledger_of

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page

pytestmark = pytest.mark.slow

KEYS = [f"k{i:02d}" for i in range(40)]
DOUBTFUL = ("k03", "k07")  # answered "meh": locked REVIEW, waiting for a person

# A loop in its own process: every item answered after a short latency, two of them "meh",
# every fifth one "bad" at first (a FAIL, then a retry that passes).
LOOP = f"""
import sys
from reins.backends import registry
from reins.cli import main
from reins.testing import FakeBackend
from tests.kit.loopkit import FakeFactory

def reply(call):
    if call.key in {DOUBTFUL!r}:
        return "meh"
    return "bad" if call.key.endswith(("0", "5")) and call.n == 0 else "good"

registry.register("fake", FakeFactory({{"w": FakeBackend(reply, latency=0.15)}}))
sys.argv = ["reins", "--quest", "tests.kit:TINY", "--ledger", sys.argv[1],
            "loop", "-m", "fake:w", "-c", "2"]
main()
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


def count(page: Page, state: str) -> int:
    return int(page.locator(f'#live [data-count="{state}"]').inner_text())


def make_ledger(tmp_path: Path) -> Path:
    return ledger_of(tmp_path, KEYS)


def test_the_dashboard_follows_a_loop_and_settles_the_review_queue(
    browser: BrowserContext, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    ledger = make_ledger(tmp_path)
    with served(ledger) as dashboard:
        url = dashboard.url
        page = browser.new_page()
        page.goto(dashboard.link)  # the link `reins serve` printed: its cookie carries the token
        expect(page.locator('#live [data-count="TODO"]')).to_have_text(str(len(KEYS)))
        page.evaluate("window.notReloaded = true")

        # The board follows a loop in another process, without a reload.
        loop = start_loop(LOOP, ledger)
        try:
            todo = page.locator('#live [data-count="TODO"]')
            expect(todo).not_to_have_text(str(len(KEYS)), timeout=WAIT)
            assert count(page, "TODO") < len(KEYS)
            _, err = loop.communicate(timeout=120)
        finally:
            if loop.poll() is None:
                loop.kill()
        assert loop.returncode == 0, err
        status = json.loads(reins(ledger, "status", "--json"))
        assert status["counts"]["REVIEW"] == len(DOUBTFUL) and status["remaining"] == 0
        for state, n in status["counts"].items():
            expect(page.locator(f'#live [data-count="{state}"]')).to_have_text(str(n), timeout=WAIT)
        assert page.evaluate("window.notReloaded") is True
        assert page.locator("svg.chart polyline.turns").count() == 1
        shot(page, "board")

        # Items: filter by state, then by text in the key.
        page.click("nav >> text=items")
        page.select_option("select[name=state]", "REVIEW")
        page.click("#filters button[type=submit]")
        expect(page.locator("#items a.key")).to_have_text(list(DOUBTFUL))
        page.fill("input[name=q]", "k07")
        page.click("#filters button[type=submit]")
        expect(page.locator("#items a.key")).to_have_text(["k07"])
        page.goto(f"{url}items?rule=not-bad")
        expect(page.locator("#items a.key")).to_have_count(0)  # retried and passed
        page.goto(f"{url}items?state=PASS&sort=newest&limit=5")
        expect(page.locator("#items a.key")).to_have_count(5)
        shot(page, "items")

        # An item's timeline: the FAIL, the retry that passed, each prompt expandable.
        page.goto(f"{url}items?q=k05")
        page.click("#items a.key >> text=k05")
        expect(page.locator("#item-key")).to_have_text("k05")
        expect(page.locator("#timeline li.turn")).to_have_count(2)
        prompt = page.locator("#turn-2 details.prompt")
        expect(prompt.locator("pre")).to_be_hidden()
        prompt.locator("summary").click()
        expect(prompt.locator("pre")).to_contain_text("## Your last submission failed the gate")
        expect(prompt.locator("summary")).to_contain_text("matches the recorded digest")
        page.locator("#turn-2 details.diff summary").click()
        expect(page.locator("#turn-2 .dadd")).to_have_text("+good")
        shot(page, "item")

        # The review queue: accept one, reject the other.
        page.click("nav >> text=review")
        expect(page.locator("article.waiting")).to_have_count(2)
        shot(page, "review")
        first = page.locator(f'article.waiting[data-key="{DOUBTFUL[0]}"]')
        first.locator("input[name=note]").fill("fine in context")
        first.locator("button.accept").click()
        expect(page.locator("#done-text")).to_have_text(f"{DOUBTFUL[0]}: accepted, locked PASS")
        second = page.locator(f'article.waiting[data-key="{DOUBTFUL[1]}"]')
        second.locator("input[name=note]").fill("not good enough")
        second.locator("button.reject").click()
        expect(page.locator("#done-text")).to_have_text(
            f"{DOUBTFUL[1]}: rejected, locked DONE (rejected)"
        )
        expect(page.locator("#nothing-to-review")).to_be_visible()

        # A post without the CSRF token, from the page itself, is refused.
        refused = page.evaluate(
            """async () => (await fetch('/item/reopen', {method: 'POST',
                headers: {'content-type': 'application/x-www-form-urlencoded'},
                body: 'key=k00&reason=sneaky'})).status"""
        )
        assert refused == 403
        page.goto(f"{url}item?key=k00")
        page.evaluate("document.querySelector('input[name=csrf]').value = 'forged'")
        page.fill("input[name=reason]", "forged")
        page.click("button[value=reopen]")
        expect(page.locator("#problem")).to_contain_text("CSRF")
        shot(page, "refused")
        page.close()

    after = json.loads(reins(ledger, "status", "--json"))
    assert after["counts"]["REVIEW"] == 0
    assert after["counts"]["PASS"] == status["counts"]["PASS"] + 1
    assert after["counts"]["DONE"] == status["counts"]["DONE"] + 1
    with SQLiteStore.open(ledger) as led:
        accepted = led.snapshot(DOUBTFUL[0])[1][-1]
        rejected = led.snapshot(DOUBTFUL[1])[1][-1]
        assert led.get(DOUBTFUL[0]).state is State.PASS
        assert led.get(DOUBTFUL[1]).state is State.DONE
        untouched = led.snapshot("k00")
    assert (accepted.kind, accepted.action, accepted.driver, accepted.note) == (
        AttemptKind.HUMAN,
        "accept",
        "pat",
        "fine in context",
    )
    assert (rejected.action, rejected.note) == ("reject", "not good enough")
    assert untouched[0].state is State.PASS and untouched[0].round == 1


def test_the_html_report_opens_offline_with_the_counts_of_status(
    browser: BrowserContext, tmp_path: Path
) -> None:
    from playwright.sync_api import Route, expect

    ledger = make_ledger(tmp_path)
    with SQLiteStore.open(ledger) as led:
        from reins.turn import submit
        from tests.kit import TINY

        for key, answer in (("k00", "good"), ("k01", "meh"), ("k02", "bad"), ("k03", "<b>x</b>")):
            submit(led, TINY, key, answer, driver="ann")
    report = tmp_path / "report.html"
    reins(ledger, "report", "--html", str(report))
    status = json.loads(reins(ledger, "status", "--json"))

    asked: list[str] = []

    def refuse(route: Route) -> None:
        asked.append(route.request.url)
        route.abort()

    browser.route(re.compile(r"^(?!file:).*"), refuse)
    browser.set_offline(True)
    try:
        page = browser.new_page()
        page.goto(report.as_uri())
        for state, n in status["counts"].items():
            expect(page.locator(f'[data-count="{state}"]')).to_have_text(str(n))
        expect(page.locator('[data-count="total"]')).to_have_text(str(status["total"]))
        expect(page.locator("article.waiting")).to_have_count(status["counts"]["REVIEW"])
        expect(page.locator("form")).to_have_count(0)
        # The stylesheet is inline: the page is styled with no request made.
        body = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert body == "rgb(247, 248, 250)"
        shot(page, "report")
        page.close()
    finally:
        browser.set_offline(False)
        browser.unroute_all()
    assert asked == []
