"""The dashboard in a real browser: Debian's Chromium driven by Playwright, and ``reins serve``
in its own process. Playwright never downloads a browser: it is given the system's.

A test module makes its own module-scoped fixture of :func:`launch`; everything here is marked
``slow`` by the modules that use it (they start processes and a browser).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reins import SQLiteStore
from tests.kit import ROOT

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Page, ViewportSize

ARTIFACTS = ROOT / "test-artifacts"  # screenshots (git-ignored); docs/img is refreshed from it
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]
WAIT = 20_000  # ms: a deadline for the page to catch up, never a measure of speed
DESKTOP: ViewportSize = {"width": 1280, "height": 800}  # the sizes reviewers were seen at
PHONE: ViewportSize = {"width": 390, "height": 844}


def chromium() -> str:
    """The system's Chromium; skipped without it unless ``CI`` is set (CI installs it)."""
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed; .ci/run installs Debian's package")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def launch(profile: Path) -> Iterator[BrowserContext]:
    """A headless Chromium context at desktop size, for a module-scoped fixture to yield."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")  # the system's Chromium only
        with sync_playwright() as playwright:
            context = playwright.chromium.launch_persistent_context(
                str(profile),
                executable_path=executable,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport=DESKTOP,
            )
            try:
                yield context
            finally:
                context.close()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONUNBUFFERED": "1", "REINS_DRIVER": "pat"}


def reins(ledger: Path, *args: str) -> str:
    """``reins`` on the tiny quest over ``ledger``, in a process; its stdout."""
    argv = [sys.executable, "-m", "reins.cli", "--quest", "tests.kit:TINY"]
    done = subprocess.run(
        [*argv, "--ledger", str(ledger), *args],
        cwd=ledger.parent,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def start_loop(script: str, ledger: Path) -> subprocess.Popen[str]:
    """A Python ``script`` (a loop) in its own process, given the ledger as its argument."""
    return subprocess.Popen(
        [sys.executable, "-c", script, str(ledger)],
        cwd=ledger.parent,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@dataclass(frozen=True)
class Dashboard:
    """A dashboard ``reins serve`` started: ``url``, its address; ``link``, the link it printed,
    which carries the access token (open it first to act, as a person does)."""

    url: str
    link: str


@contextmanager
def served(ledger: Path, *extra: str, quest: str = "tests.kit:TINY") -> Iterator[Dashboard]:
    """``reins serve`` on a free port in its own process (its user: ``pat``)."""
    argv = [sys.executable, "-m", "reins.cli", "--quest", quest]
    proc = subprocess.Popen(
        [*argv, "--ledger", str(ledger), "serve", "--port", "0", *extra],
        cwd=ledger.parent,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        found = re.search(r"((http://\S+/)\?token=\S+)", first)
        if found is None:  # its stderr says why, once it ended (a running server's never ends)
            proc.kill()
            raise AssertionError(f"no link with a token in {first!r}: {proc.communicate()[1]}")
        yield Dashboard(url=found.group(2), link=found.group(1))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)


def shot(page: Page, name: str, *, full: bool = True) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full)


def make_ledger(folder: Path, keys: list[str]) -> Path:
    """A SQLite ledger of the tiny quest holding ``keys``."""
    path = folder / "tiny.reins.db"
    with SQLiteStore.open(path, create=True) as led:
        led.add((k, {"word": k}) for k in keys)
    return path
