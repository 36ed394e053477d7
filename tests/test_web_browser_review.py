"""The review queue by keys, and every page at a phone's width, in a real browser: Debian's
Chromium driven by Playwright over ``reins serve`` in its own process.

The queue moves with j / k and decides with a / r and Enter to confirm (a note first: n),
never while typing in a field; the keys press the page's own forms, so a decision is the same
human turn a click records. The "by" name typed once is kept by the browser across a reload.
At 390 by 844 (and at desktop size) no page scrolls sideways, the nav keeps its words whole,
fact tables wrap rather than clip, and DONE is never coloured like a success. Screenshots land
in test-artifacts/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reins import SQLiteStore, State
from reins.store.model import AttemptKind
from reins.turn import submit
from tests.kit import TINY
from tests.kit.browser import DESKTOP, PHONE, launch, make_ledger, reins, served, shot

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, ViewportSize

pytestmark = pytest.mark.slow

QUEUED = ("r1", "r2", "r3")
# Text with no place to break: a link, a token, a path, as generators and inputs have them.
UNBROKEN = "https://example.org/" + "a1b2c3d4" * 40
LONG_KEY = "item-" + "x" * 90
TALL_KEY = "tall"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


def queued_ledger(folder: Path) -> Path:
    """Three items waiting in REVIEW, one passed after a FAIL, one DONE, one untouched."""
    path = make_ledger(folder, [*QUEUED, "p1", "d1", "t1"])
    with SQLiteStore.open(path) as led:
        for key in QUEUED:
            submit(led, TINY, key, f"meh, says {key}", driver="ann")
        submit(led, TINY, "p1", "bad", driver="ann")
        submit(led, TINY, "p1", "good", driver="ann")
        for _ in range(TINY.max_tries):
            submit(led, TINY, "d1", "bad", driver="bo")
    return path


def current(page: Page) -> str | None:
    return page.locator("article.waiting.current").get_attribute("data-key")


def moved(page: Page, key: str) -> None:
    """Wait until the item ``key`` is the current one."""
    from playwright.sync_api import expect

    expect(page.locator("article.waiting.current")).to_have_attribute("data-key", key)


def test_the_review_queue_answers_to_keys(browser: BrowserContext, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    ledger = queued_ledger(tmp_path)
    with served(ledger) as dashboard:
        url = dashboard.url
        page = browser.new_page()
        page.set_viewport_size(DESKTOP)
        # Before the printed link is opened, the queue is shown to read, with no action to take.
        page.goto(f"{url}review")
        expect(page.locator("#token-missing")).to_contain_text("open the link")
        expect(page.locator("form.act")).to_have_count(0)
        page.goto(dashboard.link)  # its cookie carries the access token
        page.goto(f"{url}review")
        expect(page.locator("form.act").first).to_be_visible()
        expect(page.locator("#keys")).to_contain_text("next / previous item")
        # No item is current on load: a key meant for one cannot land on another.
        assert page.locator("article.waiting.current").count() == 0
        page.keyboard.press("n")
        expect(page.locator("#hint")).to_have_text("press j to choose an item first")
        assert page.locator("article.waiting.current").count() == 0
        page.keyboard.press("j")
        moved(page, "r1")
        shot(page, "review-queue")
        page.set_viewport_size(PHONE)
        shot(page, "review-phone", full=False)
        page.set_viewport_size(DESKTOP)
        for key, to in (("j", "r2"), ("j", "r3"), ("k", "r2"), ("k", "r1")):
            page.keyboard.press(key)
            moved(page, to)  # a key acts once it stands alone: wait for it, then the next

        # Typing in a field fires no key: "rita" holds an r and an a.
        first = page.locator('article.waiting[data-key="r1"]')
        first.locator('input[name="by"]:visible').press_sequentially("rita")
        assert page.locator("#done").count() == 0 and current(page) == "r1"
        for field in page.locator('input[name="by"]').all():  # one name for the whole queue
            expect(field).to_have_value("rita")
        page.keyboard.press("Escape")

        # n: the note; a: arms the accept, Enter confirms it (the same form, posted with its
        # CSRF token).
        page.keyboard.press("n")
        expect(first.locator('input[name="note"]')).to_be_focused()
        page.keyboard.type("fine in context")
        page.keyboard.press("Escape")
        page.keyboard.press("a")
        expect(first.locator(".pending")).to_contain_text("Enter accepts r1")
        assert page.locator("#done").count() == 0  # not before Enter
        page.keyboard.press("Enter")
        expect(page.locator("#done-text")).to_have_text("r1: accepted, locked PASS")
        # The item that followed is offered to j, not chosen: nothing is current.
        expect(page.locator("article.waiting.up")).to_have_attribute("data-key", "r2")
        assert page.locator("article.waiting.current").count() == 0
        expect(page.locator('#queue[data-keys="ready"]')).to_have_count(1)
        page.keyboard.press("j")
        expect(page.locator("article.waiting.current")).to_have_attribute("data-key", "r2")

        # r with no note asks for one and arms nothing; with the note, Enter confirms it.
        page.keyboard.press("r")
        second = page.locator('article.waiting[data-key="r2"]')
        expect(second.locator(".pending")).to_have_text(
            "a decision needs a note: press n to write it"
        )
        page.keyboard.press("n")
        expect(second.locator('input[name="note"]')).to_be_focused()
        page.keyboard.type("not good enough")
        page.keyboard.press("Enter")  # leaves the note
        expect(second.locator(".pending")).to_have_text("press a to accept or r to reject")
        page.keyboard.press("r")
        expect(second.locator(".pending")).to_contain_text("Enter rejects r2")
        page.keyboard.press("Enter")
        expect(page.locator("#done-text")).to_have_text("r2: rejected, locked DONE (rejected)")
        assert not greenish(colour(page, "#done"))  # a rejection (DONE) is no success

        # Enter alone in a note decides nothing.
        expect(page.locator('#queue[data-keys="ready"]')).to_have_count(1)
        page.keyboard.press("j")
        expect(page.locator("article.waiting.current")).to_have_attribute("data-key", "r3")
        page.keyboard.press("n")
        last = page.locator('article.waiting[data-key="r3"]')
        expect(last.locator('input[name="note"]')).to_be_focused()
        page.keyboard.type("hmm")
        page.keyboard.press("Enter")
        expect(last.locator(".pending")).to_have_text("press a to accept or r to reject")
        expect(page.locator("#done-text")).to_have_text("r2: rejected, locked DONE (rejected)")

        # ? opens the sheet of every key; Escape closes it.
        page.keyboard.press("?")
        expect(page.locator("#keysheet")).to_be_visible()
        expect(page.locator("#keysheet")).to_contain_text("undo your decision the banner names")
        page.keyboard.press("Escape")
        expect(page.locator("#keysheet")).to_be_hidden()

        # The name under "by" is this browser's: it is still there after a reload.
        page.reload()
        expect(page.locator('input[name="by"]:visible').first).to_have_value("rita")
        page.goto(f"{url}item?key=p1")
        expect(page.locator('input[name="by"]:visible').first).to_have_value("rita")
        page.close()

    with SQLiteStore.open(ledger) as led:
        accepted = led.snapshot("r1")[1][-1]
        rejected = led.snapshot("r2")[1][-1]
        assert (led.get("r1").state, led.get("r2").state) == (State.PASS, State.DONE)
        assert led.get("r3").state is State.REVIEW
    assert (accepted.kind, accepted.action, accepted.driver, accepted.note) == (
        AttemptKind.HUMAN,
        "accept",
        "rita",
        "fine in context",
    )
    assert (rejected.action, rejected.driver, rejected.note) == (
        "reject",
        "rita",
        "not good enough",
    )


def wide_ledger(folder: Path) -> Path:
    """The queued ledger and an item of unbroken text everywhere (key, submission, facts), an
    item whose text and facts run long (forty lines: more than a box of 18 or 8 lines holds),
    and one waiting with a coding change."""
    path = queued_ledger(folder)
    tall = "\n".join(f"line {n} of a long input" for n in range(40))
    with SQLiteStore.open(path) as led:
        led.add([(LONG_KEY, {"word": UNBROKEN}), (TALL_KEY, {"word": "tall", "text": tall})])
        submit(led, TINY, LONG_KEY, f"meh {UNBROKEN}", driver="a-driver-with-a-long-name")
        submit(led, TINY, TALL_KEY, f"meh\n{tall}", driver="ann")
    return path


# Whether anything sticks out sideways or is cut: the page, a nav link broken over two lines,
# a state or a key broken over lines ("REVI/EW", "DON/E (unso/lved)"), a table wider than the
# screen outside a box that scrolls, a fact table wider than its box or a cell's text running
# out of it, a fact or the item's text cut short in a scroll box of its own.
OVERFLOW = """() => {
  const root = document.documentElement;
  const out = [];
  const lines = (e) => {
    const range = document.createRange();
    range.selectNodeContents(e);
    return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
  };
  if (root.scrollWidth > root.clientWidth) out.push(`page ${root.scrollWidth} wide`);
  for (const a of document.querySelectorAll("header nav a"))
    if (a.getClientRects().length !== 1) out.push(`nav link broken: ${a.textContent}`);
  // A key longer than a line may wrap where it must, outside a table (a table scrolls).
  for (const e of document.querySelectorAll('td[class^="state-"], .key, .count .name')) {
    const text = e.textContent.trim();
    const short = text.length <= 40 || e.closest("td");
    if (text && short && lines(e) > 1) out.push(`broken: ${text}`);
  }
  for (const t of document.querySelectorAll("table")) {
    if (t.getBoundingClientRect().right <= root.clientWidth + 1) continue;
    let box = t.parentElement;
    while (box && !["auto", "scroll"].includes(getComputedStyle(box).overflowX))
      box = box.parentElement;
    if (!box || box.getBoundingClientRect().right > root.clientWidth + 1)
      out.push(`table wider than the screen: ${t.className || t.id}`);
  }
  for (const t of document.querySelectorAll("table.facts")) {
    const box = t.parentElement.getBoundingClientRect();
    if (t.getBoundingClientRect().right > box.right + 1) out.push("fact table too wide");
    for (const c of t.querySelectorAll("td, th, pre"))
      if (c.scrollWidth > c.clientWidth + 1) out.push(`clipped: ${c.textContent.slice(0, 30)}`);
    for (const c of t.querySelectorAll("pre"))
      if (c.scrollHeight > c.clientHeight + 1) out.push(`fact cut: ${c.textContent.slice(0, 30)}`);
  }
  for (const c of document.querySelectorAll(".side.source pre"))
    if (c.scrollHeight > c.clientHeight + 1) out.push(`item text cut: ${c.textContent}`);
  return out;
}"""


def colour(page: Page, selector: str) -> tuple[int, ...]:
    found = page.eval_on_selector(selector, "e => getComputedStyle(e).color")
    return tuple(int(n) for n in re.findall(r"\d+", found)[:3])


def greenish(rgb: tuple[int, ...]) -> bool:
    """Whether a colour reads as a success's: green above red and blue."""
    red, green, blue = rgb
    return green > red and green > blue


@pytest.mark.parametrize("size", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_no_page_scrolls_sideways(
    browser: BrowserContext, tmp_path: Path, size: ViewportSize
) -> None:
    ledger = wide_ledger(tmp_path)
    report = tmp_path / "report.html"
    reins(ledger, "report", "--html", str(report))
    name = "phone" if size == PHONE else "desktop"
    with served(ledger, quest="tests.kit.quests:WORDY") as dashboard:
        url = dashboard.url
        page = browser.new_page()
        page.set_viewport_size(size)
        page.goto(dashboard.link)  # the printed link: its cookie carries the access token
        pages = {
            "board": url,
            "items": f"{url}items",
            "item": f"{url}item?key=p1",
            "long-item": f"{url}item?key={LONG_KEY}",
            "tall-item": f"{url}item?key={TALL_KEY}",
            "decided": f"{url}decided",
            "review": f"{url}review",
            "rejudge": f"{url}rejudge",
            "problem": f"{url}item?key=nope",
            "report": report.as_uri(),
        }
        for what, address in pages.items():
            page.goto(address)
            page.wait_for_load_state("load")
            for details in page.locator("details").all():  # open everything: prompts too
                details.evaluate("d => { d.open = true; }")
            assert page.evaluate(OVERFLOW) == [], (name, what)
            if size == PHONE and what in ("board", "item", "review"):
                shot(page, f"phone-wide-{what}")

        # DONE is never coloured like a success, on any page that shows it.
        page.goto(f"{url}items")
        done, passed = colour(page, "td.state-DONE"), colour(page, "td.state-PASS")
        assert done != passed and not greenish(done), done
        page.goto(url)
        assert colour(page, ".count.state-DONE") == done
        assert colour(page, ".count.state-PASS") == passed
        page.close()
