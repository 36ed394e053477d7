"""Two reviewers at one desk, in a real browser (issue 40, items 8 and 14): ``reins serve
--reviewer ann --reviewer bob`` gives each a link of their own, kept across a restart; ann's
page follows what bob does without a reload (his claim, his decision, an item that comes to
wait), and a decision of hers that is refused keeps the note she typed, as a reload does.

Bob acts from a script with his own token; ann in Debian's Chromium driven by Playwright.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from reins import SQLiteStore
from reins.turn import submit
from tests.kit import TINY
from tests.kit.browser import WAIT, _env, launch, make_ledger, shot

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    yield from launch(tmp_path_factory.mktemp("chromium-profile"))


@contextmanager
def desk(ledger: Path, *people: str) -> Iterator[tuple[str, dict[str, str]]]:
    """``reins serve --reviewer …`` in its own process: its address, and each person's link."""
    argv = [sys.executable, "-m", "reins.cli", "--quest", "tests.kit:TINY", "--ledger"]
    named = [a for p in people for a in ("--reviewer", p)]
    proc = subprocess.Popen(
        [*argv, str(ledger), "serve", "--port", "0", *named],
        cwd=ledger.parent,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"(http://\S+/) ", first)
        assert found is not None and "token=" not in first, first  # no shared link
        links = {}
        for _ in people:
            name, link = proc.stdout.readline().split(": ", 1)
            links[name.strip()] = link.strip()
        yield found.group(1), links
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def queued(folder: Path) -> Path:
    path = make_ledger(folder, ["r1", "r2", "r3", "r4"])
    with SQLiteStore.open(path) as led:
        for key in ("r1", "r2", "r3"):
            submit(led, TINY, key, f"meh, says {key}", driver="gen")
    return path


def test_each_reviewer_s_link_is_their_own_and_outlives_a_restart(tmp_path: Path) -> None:
    ledger = queued(tmp_path)
    with desk(ledger, "ann", "bob") as (_, before):
        pass
    with desk(ledger, "ann", "bob") as (url, after):
        tokens = {name: link.split("token=")[1] for name, link in before.items()}
        assert tokens == {name: link.split("token=")[1] for name, link in after.items()}
        assert tokens["ann"] != tokens["bob"]
        bob = before["bob"].split("token=")[1]
        with httpx.Client(base_url=url) as script:
            page = script.get("/review", headers={"authorization": f"Bearer {bob}"}).text
            assert "signed in as bob" in page
    key = tmp_path / ".reins" / "desk.key"
    assert key.stat().st_mode & 0o077 == 0


def test_ann_s_queue_follows_bob_and_a_refusal_keeps_her_note(
    browser: BrowserContext, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    ledger = queued(tmp_path)
    with desk(ledger, "ann", "bob") as (url, links):
        bob = {"authorization": f"Bearer {links['bob'].split('token=')[1]}"}
        page = browser.new_page()
        page.goto(links["ann"])
        page.goto(f"{url}review")
        expect(page.locator("#signed-in")).to_have_text("signed in as ann")
        expect(page.locator('input[name="by"]')).to_have_count(0)
        expect(page.locator("#queue")).to_have_attribute("data-posts", "ready", timeout=WAIT)
        r1 = page.locator('article.waiting[data-key="r1"]')
        note = r1.locator('input[name="note"]')
        note.fill("looks fine to me")
        with httpx.Client(base_url=url, headers=bob) as script:
            csrf = re.search(r'name="csrf" value="([^"]+)"', script.get("/review").text)
            assert csrf is not None
            form = {"csrf": csrf.group(1)}
            claimed = script.post("/review/claim", data={**form, "key": "r1"})
            assert claimed.status_code == 303
            # Live: bob's claim shows on ann's card without a reload.
            expect(r1.locator("p.hold")).to_contain_text("claimed by bob until", timeout=WAIT)
            # Ann's accept is refused, in place: who holds it and until when; her note stays.
            r1.locator("button.accept").click()
            pending = r1.locator('form[action="/review/resolve"] .pending')
            expect(pending).to_contain_text("claimed by bob until", timeout=WAIT)
            expect(pending).to_contain_text("what you typed is kept")
            assert page.url == f"{url}review"
            expect(note).to_have_value("looks fine to me")
            # Bob decides r2, and an item comes to wait: ann's page says both, live.
            decided = {**form, "key": "r2", "decision": "accept", "note": "ok"}
            assert script.post("/review/resolve", data=decided).status_code == 303
        with SQLiteStore.open(ledger) as led:
            submit(led, TINY, "r4", "meh, says r4", driver="gen")
        r2 = page.locator('article.waiting[data-key="r2"]')
        expect(r2).to_have_class(re.compile(r"\bsettled\b"), timeout=WAIT)
        expect(r2.locator(".live-note")).to_have_text("accepted by bob: it no longer waits here")
        expect(r2.locator("button.accept")).to_be_disabled()
        expect(page.locator("#fresh")).to_contain_text("1 more item to review", timeout=WAIT)
        expect(page.locator("#waiting")).to_have_text("3 waiting")
        shot(page, "desk-live")
        # A note typed and not yet decided survives a reload of the page.
        page.locator('article.waiting[data-key="r3"] input[name="note"]').fill("half a thought")
        page.reload()
        expect(page.locator('article.waiting[data-key="r3"] input[name="note"]')).to_have_value(
            "half a thought"
        )
        expect(note).to_have_value("looks fine to me")
        page.close()
    with SQLiteStore.open(ledger) as led:
        assert led.get("r1").state.value == "REVIEW" and led.get("r1").lease_owner == "bob"
        assert led.snapshot("r2")[1][-1].driver == "bob"
