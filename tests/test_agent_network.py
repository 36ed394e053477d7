"""Issue 38, its network: a sandboxed agent has no network but a proxy of its run's own, which
reaches only its model and the hosts the quest names (``[workspace] network``); everything
else it tries is refused, counted on the turn and shown (``reins log``, ``--json``)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from reins import SQLiteStore, State
from tests.kit.browser import served
from tests.kit.codingkit import FILE_HOLDS_KEY, agent, cli, quest_repo

# Tries each connection of TRIES as a program that honours the proxy variables does (urllib),
# then the same without a proxy (a raw socket), resolves a name, and does the item's work.
TRIES = """
import os, socket, urllib.request
said = [f"proxy offered: {bool(os.environ.get('HTTPS_PROXY'))}"]
for name, url in URLS:
    try:
        body = urllib.request.urlopen(url, timeout=10).read(200)
        said.append(f"{name} via proxy: got {body!r}")
    except Exception as exc:
        said.append(f"{name} via proxy: refused ({getattr(exc, 'code', type(exc).__name__)})")
    host, port = url.split("/")[2].rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        said.append(f"{name} direct: connected")
    except OSError as exc:
        said.append(f"{name} direct: failed ({type(exc).__name__})")
try:
    socket.getaddrinfo("example.com", 443)
    said.append("dns: resolved")
except OSError:
    said.append("dns: failed")
said.append("env: " + " ".join(sorted(os.environ)))
key = os.path.basename(os.getcwd())
open(key + ".txt", "w").write(key)
print("\\n".join(said))
"""


AGENT_ENVIRONMENT = (
    "PATH", "LANG", "HOME", "TMPDIR", "PWD", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "LC_CTYPE", "REINS_AGENT_RUN",
)  # fmt: skip
"""What an agent's environment may hold: the runner's clean one (with the marker that finds
its processes after a crash) and the bridge's proxy."""


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """The test's folder (the autouse ``clean_environment`` made it the working folder)."""
    return tmp_path


@pytest.fixture
def answering() -> Iterator[str]:
    """An HTTP server on loopback outside the sandbox: ``host:port``; it answers "answered"."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "8")
            self.end_headers()
            self.wfile.write(b"answered")

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def run_agent_trying(here: Path, urls: list[tuple[str, str]], extra: str = "") -> str:
    """One loop over quest q (one item, k) whose agent tries ``urls``: what it said."""
    quest_repo(here / "q", ["k", "other"], FILE_HOLDS_KEY, extra=extra)
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "tries.py", f"URLS = {urls!r}\n" + TRIES)
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--max-items", "1", "--json")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        return led.snapshot("k")[1][-1].submission or ""


@pytest.mark.postgres
def test_an_agent_reaches_neither_the_dashboard_nor_a_ledger_nor_other_hosts(
    here: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-agents")
    monkeypatch.setenv("REINS_LEDGER", str(here / "q.reins.db"))
    quest_repo(here / "q", ["k", "other"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    ledger = here / "q.reins.db"
    with served(ledger, quest=str(here / "q")) as dashboard:
        board = urlsplit(dashboard.url)
        pg = urlsplit(postgres_url)
        urls = [
            ("dashboard", f"http://127.0.0.1:{board.port}/review"),
            ("ledger", f"http://127.0.0.1:{pg.port}/"),
            ("outside", "http://203.0.113.9:80/"),
        ]
        script = agent(here / "tries.py", f"URLS = {urls!r}\n" + TRIES)
        out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--max-items", "1", "--json")
        assert out.exit_code == 0, out.output
    with SQLiteStore.open(ledger) as led:
        item, log = led.snapshot("k")
        other = led.snapshot("other")[0]
    said = log[-1].submission or ""
    assert "proxy offered: True" in said, said
    for name in ("dashboard", "ledger", "outside"):
        assert f"{name} via proxy: refused (403)" in said, said
        assert f"{name} direct: failed" in said, said
    assert "dns: failed" in said
    # Of reins' environment, only what the runner names reached it (cmd: names no key).
    names = set(said.split("env: ", 1)[1].split("\n", 1)[0].split())
    assert names <= set(AGENT_ENVIRONMENT), names - set(AGENT_ENVIRONMENT)
    # The proxy counted what it refused, and the log shows it.
    notes = log[-1].notes
    assert notes.refused == 3, notes
    for where in (f"127.0.0.1:{board.port}", f"127.0.0.1:{pg.port}", "203.0.113.9:80"):
        assert where in (notes.refused_to or "")
    # Nothing was recorded that the agent did not earn: its own item by the gate, no other.
    assert item.state is State.PASS and len(log) == 1
    assert other.state is State.TODO and other.turns == 0
    shown = cli("-q", "q", "log", "k")
    assert "network: 3 connection(s) refused" in shown.stdout, shown.stdout
    as_json = json.loads(cli("-q", "q", "log", "k", "--json").stdout)
    turn = as_json["attempts"][-1]
    assert turn["refused"] == 3 and turn["sandbox"] == "bwrap", turn


def test_a_host_the_quest_names_is_reachable_and_only_it(here: Path, answering: str) -> None:
    port = answering.rsplit(":", 1)[1]
    refused = f"127.0.0.1:{int(port) + 1 if int(port) < 65535 else int(port) - 1}"
    urls = [("allowed", f"http://{answering}/"), ("neighbour", f"http://{refused}/")]
    said = run_agent_trying(here, urls, extra=f'network = ["{answering}"]\n')
    assert "allowed via proxy: got b'answered'" in said, said
    assert "allowed direct: connected" in said, said  # a forward of the same port inside
    assert "neighbour via proxy: refused (403)" in said, said
    assert "neighbour direct: failed" in said, said


def test_the_loop_says_what_agents_reach(here: Path) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY, extra='network = ["pypi.org"]\n')
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "a.py", "import os\nk = os.path.basename(os.getcwd())\n"
                   "open(k + '.txt', 'w').write(k)\n")  # fmt: skip
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--json")
    notes = [e["message"] for e in map(json.loads, out.stdout.splitlines()) if e["event"] == "note"]
    assert any("each reaches its model and pypi.org, through reins' proxy" in n for n in notes)
    with SQLiteStore.open(here / "q.reins.db") as led:
        assert led.snapshot("k")[1][-1].notes.refused == 0


def test_unconfined_agents_are_said_to_reach_all_you_can(here: Path) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY)
    assert cli("-q", "q", "scan").exit_code == 0
    script = agent(here / "a.py", "import os\nk = os.path.basename(os.getcwd())\n"
                   "open(k + '.txt', 'w').write(k)\n")  # fmt: skip
    out = cli("-q", "q", "loop", "--model", f"cmd:{script}", "--sandbox", "none")
    assert "each can read, write and reach all you can" in out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        assert led.snapshot("k")[1][-1].notes.refused is None  # no proxy: nothing counted


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ('network = "pypi.org"', "network must be an array"),
        ('network = ["http://pypi.org"]', "is not a host"),
        ('network = ["pypi.org:99999"]', "the port must be a number"),
    ],
)
def test_a_bad_network_list_is_refused_at_its_line(here: Path, written: str, said: str) -> None:
    quest_repo(here / "q", ["k"], FILE_HOLDS_KEY, extra=written + "\n")
    out = cli("-q", "q", "scan")
    assert out.exit_code == 2 and said in out.stderr, out.stderr


def test_the_desk_and_the_item_page_show_what_the_proxy_refused(here: Path) -> None:
    from tests.kit.web import client, text_of

    doubt = FILE_HOLDS_KEY.replace("| FAIL |", "| REVIEW |")
    quest_repo(here / "q", ["k"], doubt)
    assert cli("-q", "q", "scan").exit_code == 0
    tries = (
        "import urllib.request\n"
        "for _ in range(2):\n"
        "    try:\n"
        "        urllib.request.urlopen('http://example.com:8080/<b>', timeout=10)\n"
        "    except Exception:\n"
        "        pass\n"
    )  # and the word is not written: a person decides
    out = cli("-q", "q", "loop", "--model", f"cmd:{agent(here / 'a.py', tries)}")
    assert out.exit_code == 0, out.output
    with SQLiteStore.open(here / "q.reins.db") as led:
        assert led.snapshot("k")[0].state is State.REVIEW
        web = client(led, quest=None)
        card = text_of(web.get("/review").text)
        page = text_of(web.get("/item", params={"key": "k"}).text)
    assert "the agent's proxy refused 2 connection(s): example.com:8080 x2" in card, card
    assert "network: 2 connection(s) refused by the agent's proxy: example.com:8080 x2" in page
