"""The dashboard under test: a client on the app (Starlette's TestClient, no server) and a ledger
of the tiny quest with something on every page, hostile text included."""

from __future__ import annotations

import dataclasses
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from starlette.applications import Starlette

from reins import Quest
from reins.store.protocol import Store
from reins.testing.harness import StoreHarness
from reins.turn import submit
from reins.web.app import create_app
from reins.web.desk import UNDO_WINDOW
from reins.web.security import Guard
from tests.kit.quests import TINY

with warnings.catch_warnings():
    # Starlette 1.x asks for httpx2 in its test client; httpx (reins' own client) still works.
    from starlette.exceptions import StarletteDeprecationWarning

    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

LOCAL = "http://127.0.0.1:8765"
HOSTILE_KEY = "<script>alert('key')</script>"
HOSTILE_ANSWER = "meh <img src=x onerror=alert('submission')> </pre></td>"
HOSTILE_DRIVER = "<b>bo</b>"
RAW_MARKERS = ("<script>alert", "<img src=x", "</pre></td>\n<", "<b>bo</b>")


@dataclasses.dataclass
class Ledger:
    store: Store
    location: str


@contextmanager
def web_ledger(harness: StoreHarness) -> Iterator[Ledger]:
    """A ledger of the tiny quest: ``a`` FAILed then PASSed, ``b`` and ``c`` and a hostile item
    wait in REVIEW, ``d`` is untouched; every turn by ann but the hostile one's."""
    location = harness.create()
    store = harness.open(location)
    try:
        store.add([(k, {"word": k}) for k in ("a", "b", "c", "d", HOSTILE_KEY)])
        submit(store, TINY, "a", "bad one\nsecond line", driver="ann")
        submit(store, TINY, "a", "good one\nsecond line", driver="ann")
        submit(store, TINY, "b", "meh", driver="ann")
        submit(store, TINY, "c", "meh too", driver="ann")
        submit(store, TINY, HOSTILE_KEY, HOSTILE_ANSWER, driver=HOSTILE_DRIVER)
        yield Ledger(store, location)
    finally:
        store.close()


def client(
    store: Store,
    quest: Quest | None = TINY,
    *,
    guard: Guard | None = None,
    read_only: bool = False,
    base_url: str = LOCAL,
    undo_window: float = UNDO_WINDOW,
    with_token: bool = True,
) -> TestClient:
    """A client on the dashboard over ``store``; actions are by ``web-user`` unless a form
    names someone. ``with_token``: the client opened the link the server prints first, as the
    person's browser does (its cookie carries the access token); without it, it is any other
    local process: it may read pages on loopback, never act."""
    guard = guard or Guard.for_host("127.0.0.1")
    app = create_app(
        store, quest, guard, read_only=read_only, by="web-user", undo_window=undo_window
    )
    web = client_of(app, base_url)
    if with_token:
        opened = web.get("/", params={"token": guard.token})
        assert opened.status_code == 303, opened.text
    return web


def client_of(app: Starlette, base_url: str = LOCAL) -> TestClient:
    """A client on ``app`` (the dashboard, or its routes alone) that follows no redirect."""
    return TestClient(app, base_url=base_url, follow_redirects=False)


def card(html: str, key: str) -> str:
    """The review queue's card of item ``key`` (as the page spells the key)."""
    found = re.search(rf'<article class="waiting" data-key="{key}"(.*?)</article>', html, re.S)
    assert found is not None, key
    return found.group(1)


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found is not None, "the page carries no CSRF token"
    return found.group(1)


def counts_on(html: str) -> dict[str, int]:
    return {s: int(n) for s, n in re.findall(r'data-count="(\w+)">(\d+)<', html)}


def text_of(html: str) -> str:
    """A page's text as a reader sees it: tags gone, spaces folded, entities as they read."""
    import html as entities

    spaced = " ".join(entities.unescape(re.sub(r"<[^>]+>", " ", html)).split())
    return re.sub(r"\( | (?=[,.;:)])", lambda m: m.group(0).strip(), spaced)
