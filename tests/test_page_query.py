"""One page query for every surface: ``reins items``, the dashboard's filters and the MCP
session read a person's text into the same :class:`PageQuery` and refuse it the same way."""

from __future__ import annotations

import html
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.exceptions import StarletteDeprecationWarning

from reins import SQLiteStore
from reins.errors import ConfigError
from reins.host.session import AgentSession, Options
from reins.store.model import State
from reins.store.query import PageQuery
from reins.store.search import words
from reins.web.app import create_app
from reins.web.listing import link, read_filter
from reins.web.security import Guard
from tests.kit import TINY, Cli

with warnings.catch_warnings():
    warnings.simplefilter("ignore", StarletteDeprecationWarning)
    from starlette.testclient import TestClient

# What a person typed for one field, and what every surface says of it.
REFUSED = [
    ("limit", "0", "limit must be at least 1"),
    ("limit", "ten", "limit must be a whole number from 1 to"),
    ("state", "NOPE", "state must be one of TODO, PASS, REVIEW, DONE, SKIPPED, BLOCKED"),
    ("after", "-3", "after must be a whole number from 0 to"),
    ("search", "!?", "search must hold a letter or a digit, got '!?'"),
]
OPTION = {"limit": "--limit", "state": "--state", "after": "--after", "search": "--search"}


@pytest.fixture
def location(tmp_path: Path) -> str:
    path = tmp_path / "tiny.reins.db"
    with SQLiteStore.open(path, create=True) as store:
        store.add((k, {"word": k}) for k in "abc")
    return str(path)


@pytest.mark.parametrize(("field", "typed", "says"), REFUSED)
def test_a_bad_filter_is_refused_alike_by_the_cli_and_the_dashboard(
    location: str, cli: Cli, field: str, typed: str, says: str
) -> None:
    out = cli("--ledger", location, "items", OPTION[field], typed)
    assert out.exit_code == 2, out.output
    assert says in out.output
    with SQLiteStore.open(location) as store:
        app = create_app(store, TINY, Guard.for_host("127.0.0.1"), by="web-user")
        page = TestClient(app, base_url="http://127.0.0.1:8765").get("/items?" + f"{field}={typed}")
        assert page.status_code == 400
        assert "bad filter: " + says in html.unescape(page.text)


def test_the_mcp_board_reads_its_limit_as_the_cli_reads_its_option(location: str, cli: Cli) -> None:
    with SQLiteStore.open(location) as store:
        session = AgentSession(store, TINY, "agent", Options(lease=60, max_submission=10_000))
        reply = session.call("board", {"limit": 0})
        assert reply.is_error and reply.blocks[0] == "error: board: limit must be at least 1, got 0"
        assert len(session.call("board", {"limit": 2}).blocks[0].splitlines()) == 3  # + "more"
    out = cli("--ledger", location, "items", "--limit", "0")
    assert "limit must be at least 1, got 0" in out.output


def test_a_blank_value_keeps_the_default_and_other_names_are_ignored() -> None:
    base = PageQuery(state=State.REVIEW, limit=20)
    assert PageQuery.parse({"state": " ", "limit": "", "fragment": "1"}, base=base) == base
    assert PageQuery.parse({"driver": " ann ", "q": "x y", "sort": "newest"}) == PageQuery(
        leased_to="ann", contains="x y", descending=True
    )
    assert PageQuery.parse({"search": " free mail "}) == PageQuery(search="free mail")
    with pytest.raises(ConfigError, match="sort must be newest or oldest, got 'up'"):
        PageQuery.parse({"sort": "up"})
    with pytest.raises(ConfigError, match="limit must be at most 500, got 501"):
        read_filter({"limit": "501"})


texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1).map(str.strip)
queries = st.builds(
    PageQuery,
    state=st.none() | st.sampled_from(State),
    rule=st.none() | texts.filter(bool),
    leased_to=st.none() | texts.filter(bool),
    round=st.none() | st.integers(1, 1_000_000),
    contains=st.none() | texts.filter(bool),
    search=st.none() | texts.filter(lambda t: bool(words(t))),
    descending=st.booleans(),
    after=st.none() | st.integers(0, 2**62),
    limit=st.integers(1, 500),
)


@given(queries)
def test_a_dashboard_link_reads_back_as_the_same_filter(wanted: PageQuery) -> None:
    from urllib.parse import parse_qsl

    assert read_filter(dict(parse_qsl(link(wanted), keep_blank_values=True))) == wanted
    assert PageQuery.parse(wanted.params()) == wanted
