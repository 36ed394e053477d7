"""Grounds: the snapshot, staged evaluation, and the guarded default resolver (local server)."""

from __future__ import annotations

import re
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from reins.errors import ConfigError, JudgeError
from reins.gate import (
    Context,
    Counter,
    Fact,
    FakeResolver,
    Graph,
    GroundError,
    Level,
    NetResolver,
    Outcome,
    Rule,
    Snapshot,
    require_dnspython,
)
from tests.kit import FakeServer, Reply, Seen

URL = "https://example.org/terms"

# --- the snapshot -------------------------------------------------------------------------


def test_a_snapshot_resolves_each_key_once() -> None:
    resolver = FakeResolver(pages={URL: "terms"}, domains={"example.org": True})
    snapshot = Snapshot(resolver)
    assert [snapshot.fetch(URL), snapshot.fetch(URL)] == ["terms", "terms"]
    assert [snapshot.mx("Example.ORG"), snapshot.mx("example.org")] == [True, True]
    assert resolver.calls == [("fetch", URL), ("mx", "example.org")]


def test_a_snapshot_keeps_the_error_too() -> None:
    resolver = FakeResolver(pages={URL: OSError("network is down")})
    snapshot = Snapshot(resolver)
    for _ in range(2):
        with pytest.raises(GroundError, match=re.escape(f"fetch {URL}: OSError: network is down")):
            snapshot.fetch(URL)
    assert resolver.calls == [("fetch", URL)]


def test_concurrent_readers_of_one_key_cost_one_call() -> None:
    resolver = FakeResolver(pages={URL: "terms"}, delay=0.05)
    snapshot = Snapshot(resolver)
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(snapshot.fetch(URL))) for _ in range(16)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["terms"] * 16
    assert resolver.calls == [("fetch", URL)]


def test_readers_of_different_keys_do_not_wait_for_each_other() -> None:
    pages = {f"https://example.org/{i}": str(i) for i in range(8)}
    snapshot = Snapshot(FakeResolver(pages=pages, delay=0.2))
    threads = [threading.Thread(target=snapshot.fetch, args=(url,)) for url in pages]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert time.monotonic() - started < 1.0  # 8 × 0.2 s if they queued


def test_a_key_that_reads_itself_is_an_error_not_a_deadlock() -> None:
    snapshot = Snapshot(FakeResolver())

    def loop() -> Any:
        return snapshot.once("k", loop)

    with pytest.raises(GroundError, match="k depends on itself"):
        snapshot.once("k", loop)


def test_the_fake_resolver_refuses_what_it_was_not_told() -> None:
    with pytest.raises(GroundError, match="no answer"):
        FakeResolver().mx("example.org")


# --- staged evaluation ----------------------------------------------------------------------


def fires_on(id: str, level: Level = Level.FAIL) -> Rule:
    def check(ctx: Context) -> Fact | None:
        assert isinstance(ctx.submission, list)
        return (
            Fact(where="answer", expected=f"no {id}", actual=id) if id in ctx.submission else None
        )

    return Rule(id, level, id, check)


def reads(id: str, ground: str, bad: str, level: Level = Level.FAIL) -> Rule:
    """Fires when the ground's text contains ``bad``."""

    def check(ctx: Context) -> Fact | None:
        text = ctx.grounds[ground]
        return Fact(where=ground, expected=f"no {bad}", actual=text) if bad in text else None

    return Rule(id, level, id, check)


@dataclass
class CountingProvider:
    url: str
    calls: list[str] = field(default_factory=list)

    def __call__(self, ctx: Context, snapshot: Snapshot) -> str:
        self.calls.append(ctx.key)
        return snapshot.fetch(self.url)


def staged(resolver: FakeResolver) -> Graph:
    return Graph(
        [
            Counter(fires_on("fmt")),
            Counter(fires_on("vague", Level.REVIEW)),
            Counter(reads("stale", "page", "old"), needs=("page",)),
            Counter(reads("banned", "page", "banned"), needs=("page",)),
            Counter(reads("title", "head", "untitled", Level.REVIEW), needs=("head",)),
        ],
        grounds={"page": CountingProvider(URL), "head": CountingProvider(URL)},
        resolver=resolver,
    )


def test_a_fail_before_any_ground_costs_zero_resolver_calls() -> None:
    resolver = FakeResolver(pages={URL: "old banned"})
    judgement = staged(resolver).judge(Context("k", ["fmt"]))
    assert judgement.verdict.outcome is Outcome.FAIL
    assert judgement.verdict.root_cause == "fmt"
    assert resolver.calls == []
    assert judgement.skipped == ("stale", "banned", "title")
    assert "Not judged yet (they read grounds): stale, banned and title.\n" in (
        judgement.verdict.feedback
    )


def test_several_readers_of_a_ground_cost_one_resolver_call() -> None:
    resolver = FakeResolver(pages={URL: "old banned untitled"})
    graph = staged(resolver)
    judgement = graph.judge(Context("k", []))
    assert judgement.remaining == ("stale", "banned", "title")
    assert resolver.calls == [("fetch", URL)]  # two grounds, three readers, one URL
    assert [graph.grounds[name].calls for name in ("page", "head")] == [["k"], ["k"]]  # type: ignore[attr-defined]


def test_a_review_before_the_grounds_still_resolves_them() -> None:
    resolver = FakeResolver(pages={URL: "old"})
    verdict = staged(resolver).evaluate(Context("k", ["vague"]))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "stale")
    assert len(resolver.calls) == 1


def test_a_ground_that_cannot_be_resolved_is_a_judge_error_naming_it() -> None:
    """The outside world not answering is the judge's failure, never a verdict on the item."""
    resolver = FakeResolver(pages={URL: OSError("connection reset")})
    with pytest.raises(JudgeError) as caught:
        staged(resolver).evaluate(Context("k", []))
    assert caught.value.where == "ground page"
    assert "OSError: connection reset" in caught.value.cause
    assert resolver.calls == [("fetch", URL)]


def test_a_ground_that_fails_after_a_stage_zero_review_is_still_a_judge_error() -> None:
    """A REVIEW before the grounds does not settle the verdict, so the failing ground decides."""
    resolver = FakeResolver(pages={URL: OSError("connection reset")})
    with pytest.raises(JudgeError, match="ground page"):
        staged(resolver).judge(Context("k", ["vague"]))


def test_a_ground_that_is_never_needed_cannot_fail_the_judge() -> None:
    resolver = FakeResolver(pages={URL: OSError("connection reset")})
    verdict = staged(resolver).evaluate(Context("k", ["fmt"]))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.FAIL, "fmt")
    assert resolver.calls == []


def test_a_provider_that_raises_is_a_judge_error_naming_its_ground() -> None:
    def broken(ctx: Context, snapshot: Snapshot) -> str:
        raise KeyError("addresses")

    graph = Graph(
        [Counter(reads("stale", "page", "old"), needs=("page",))],
        grounds={"page": broken},
        resolver=FakeResolver(),
    )
    with pytest.raises(JudgeError) as caught:
        graph.evaluate(Context("k", []))
    assert caught.value.where == "ground page"
    assert "KeyError: 'addresses'" in caught.value.cause


def test_a_ground_reader_that_supersedes_a_cheap_fail_is_still_consulted() -> None:
    """The Go original short-circuited here and could never apply this edge."""
    resolver = FakeResolver(pages={URL: "excuse"})
    graph = Graph(
        [
            Counter(fires_on("holder")),
            Counter(
                reads("excused", "page", "excuse", Level.REVIEW),
                supersedes=("holder",),
                needs=("page",),
            ),
        ],
        grounds={"page": CountingProvider(URL)},
        resolver=resolver,
    )
    verdict = graph.evaluate(Context("k", ["holder"]))
    assert (verdict.outcome, verdict.root_cause) == (Outcome.REVIEW, "excused")
    assert resolver.calls == [("fetch", URL)]


def test_checks_see_the_grounds_read_only_and_the_stage_zero_checks_run_once() -> None:
    seen: list[Any] = []

    def first(ctx: Context) -> None:
        seen.append(("first", dict(ctx.grounds)))

    def second(ctx: Context) -> None:
        seen.append(("second", dict(ctx.grounds)))
        ctx.grounds["page"] = "changed"  # type: ignore[index]

    graph = Graph(
        [
            Counter(Rule("first", Level.FAIL, "", first)),
            Counter(Rule("second", Level.FAIL, "", second), needs=("page",)),
        ],
        grounds={"page": lambda ctx, snap: snap.fetch(URL)},
        resolver=FakeResolver(pages={URL: "text"}),
    )
    with pytest.raises(JudgeError) as caught:
        graph.evaluate(Context("k", None, grounds={"given": 1}))
    assert seen == [("first", {"given": 1}), ("second", {"given": 1, "page": "text"})]
    # Writing to the read-only grounds raised inside the check: the judge's failure, named.
    assert caught.value.where == "second"
    assert caught.value.cause.startswith("TypeError:")


def test_without_a_resolver_the_graph_uses_the_guarded_one() -> None:
    graph = Graph(
        [Counter(reads("stale", "page", "old"), needs=("page",))],
        grounds={"page": lambda ctx, snap: snap.fetch("http://127.0.0.1:9/")},
    )
    with pytest.raises(JudgeError) as caught:
        graph.evaluate(Context("k", None))
    assert caught.value.where == "ground page"
    assert "refused 127.0.0.1: a loopback address" in caught.value.cause


# --- the guarded default resolver, against a server on 127.0.0.1 ---------------------------

LOOPBACK = ("127.0.0.1/32",)


def pages(seen: Seen) -> Reply:
    """The test server's pages, by the first part of the path."""
    url = urlsplit(seen.path)
    parts = url.path.strip("/").split("/")
    if parts[0] == "ok":
        return Reply(200, "hello")
    if parts[0] == "host":
        return Reply(200, seen.headers["host"])
    if parts[0] == "big":
        return Reply(200, "x" * 2000)
    if parts[0] == "chunked":
        return Reply(200, "y" * 2000, chunk=500)
    if parts[0] == "redirect":
        n = int(parts[1])
        return Reply(200, "landed") if n == 0 else redirect(f"/redirect/{n - 1}")
    if parts[0] == "away":
        return redirect(parse_qs(url.query)["to"][0])
    if parts[0] == "slow":
        return Reply(200, "late", delay=1.0)
    if parts[0] == "drip":
        return Reply(200, "d" * 30, drip=0.05)
    return Reply(404, "no such page")


def redirect(location: str) -> Reply:
    return Reply(302, headers={"Location": location})


@pytest.fixture
def server(http_server: FakeServer) -> FakeServer:
    http_server.answer = pages
    return http_server


def hits(server: FakeServer) -> list[str]:
    return [seen.path for seen in server.seen]


def base(srv: FakeServer, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{srv.port}"


def test_loopback_is_refused_by_default_before_any_connection(server: FakeServer) -> None:
    with pytest.raises(GroundError, match=r"refused 127\.0\.0\.1: a loopback address"):
        NetResolver().fetch(f"{base(server)}/ok")
    assert hits(server) == []


def test_loopback_is_fetched_when_allowed(server: FakeServer) -> None:
    assert NetResolver(allow=LOOPBACK).fetch(f"{base(server)}/ok") == "hello"


def test_the_host_header_names_the_host_while_the_connection_goes_to_the_checked_address(
    server: FakeServer,
) -> None:
    resolver = NetResolver(allow=("127.0.0.0/8", "::1/128"))
    port = server.port
    assert resolver.fetch(f"{base(server, 'localhost')}/host") == f"localhost:{port}"


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://localhost/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://10.1.2.3/", "private"),
        ("http://192.168.0.1/", "private"),
        ("http://172.16.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://100.64.0.1/", "non-global"),
    ],
)
def test_non_public_addresses_are_refused(url: str, kind: str) -> None:
    with pytest.raises(GroundError, match=f"a {kind} address"):
        NetResolver(timeout=0.5).fetch(url)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://x/"])
def test_only_http_and_https_are_fetched(url: str) -> None:
    with pytest.raises(GroundError, match="only http and https"):
        NetResolver().fetch(url)


@pytest.mark.parametrize("path", ["big", "chunked"])
def test_a_body_over_the_cap_is_refused(server: FakeServer, path: str) -> None:
    with pytest.raises(GroundError, match="exceeds 1000"):
        NetResolver(allow=LOOPBACK, max_bytes=1000).fetch(f"{base(server)}/{path}")
    assert NetResolver(allow=LOOPBACK, max_bytes=2000).fetch(f"{base(server)}/{path}")


def test_redirects_are_followed_up_to_the_limit(server: FakeServer) -> None:
    resolver = NetResolver(allow=LOOPBACK, max_redirects=2)
    assert resolver.fetch(f"{base(server)}/redirect/2") == "landed"
    with pytest.raises(GroundError, match="more than 2 redirects"):
        resolver.fetch(f"{base(server)}/redirect/3")
    assert hits(server).count("/redirect/0") == 1


@pytest.mark.parametrize(
    ("target", "refusal"),
    [("http://127.0.0.2:{port}/ok", r"127\.0\.0\.2: a loopback"), ("http://10.0.0.1/", "private")],
)
def test_every_redirect_target_is_checked_again(
    server: FakeServer, target: str, refusal: str
) -> None:
    to = target.format(port=server.port)
    with pytest.raises(GroundError, match=refusal):
        NetResolver(allow=LOOPBACK).fetch(f"{base(server)}/away?to={to}")


def test_a_malformed_redirect_target_is_an_error(server: FakeServer) -> None:
    with pytest.raises(GroundError, match="Invalid"):
        NetResolver(allow=LOOPBACK).fetch(f"{base(server)}/away?to=http://[::1")


def test_a_slow_server_times_out(server: FakeServer) -> None:
    started = time.monotonic()
    with pytest.raises(GroundError, match=r"timed out after 0\.2 s"):
        NetResolver(allow=LOOPBACK, timeout=0.2).fetch(f"{base(server)}/slow")
    assert time.monotonic() - started < 0.9


def test_a_body_that_trickles_in_hits_the_overall_deadline(server: FakeServer) -> None:
    with pytest.raises(GroundError, match=r"took longer than 0\.6 s"):
        NetResolver(allow=LOOPBACK, timeout=0.3).fetch(f"{base(server)}/drip")


def test_a_status_other_than_2xx_is_an_error(server: FakeServer) -> None:
    with pytest.raises(GroundError, match="status 404"):
        NetResolver(allow=LOOPBACK).fetch(f"{base(server)}/missing")


@pytest.mark.parametrize(
    "options",
    [{"timeout": 0}, {"max_bytes": 0}, {"max_redirects": -1}, {"allow": ("not a network",)}],
)
def test_a_bad_resolver_option_is_a_config_error(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        NetResolver(**options)


def test_mx_lookups_without_dnspython_say_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "dns", None)
    monkeypatch.setitem(sys.modules, "dns.resolver", None)
    with pytest.raises(ConfigError, match="pip install dnspython"):
        NetResolver().mx("example.org")
    with pytest.raises(ConfigError, match="pip install dnspython"):
        require_dnspython()
