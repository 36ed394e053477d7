"""What an agent's egress proxy costs (issue 38): per model call, and per turn at start-up.

Usage (from the repository root)::

    .venv/bin/python bench/bench_egress.py            # 400 calls a way, 20 start-ups, 5 rounds
    .venv/bin/python bench/bench_egress.py --quick    # 100 calls, 8 start-ups, 2 rounds

**Per model call.** A model server on 127.0.0.1 answers each POST with 2 KB of JSON. A client
inside the agent's sandbox makes sequential calls, a new connection each, and times each call
in its own process (so the sandbox's start-up is not counted), three ways:

- *before*: the sandbox as it was before this issue, the host's network shared: straight to
  the server;
- *proxy*: no network but the run's egress proxy, as a client that honours ``HTTP_PROXY``
  sends it (``POST http://127.0.0.1:PORT/…``);
- *forward*: no network, to the same port inside, which the bridge forwards through the proxy
  (``CONNECT``), as a client that ignores proxy variables does.

**Per turn.** ``true`` run in the agent's sandbox, as before (network shared) and now (the
proxy started, the bridge, the proxy closed). The rounds interleave the ways, so the load of
the moment weighs on each. Medians; the goal: at most 2 ms added per call. Figures go to
``bench/EGRESS.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import http.server
import json
import platform
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402
from reins.sandbox import Policy, confine, launched  # noqa: E402
from reins.sandbox.allow import Allowance  # noqa: E402
from reins.sandbox.egress import Egress  # noqa: E402

ANSWER = json.dumps({"id": "x", "content": [{"type": "text", "text": "y" * 2000}]}).encode()
CLIENT = """
import http.client, json, os, sys, time
port, calls, how = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
proxy = os.environ.get("HTTP_PROXY", "")
took = []
for _ in range(calls):
    start = time.perf_counter()
    if how == "proxy":
        c = http.client.HTTPConnection(proxy.split("//")[1].split(":")[0],
                                       int(proxy.rsplit(":", 1)[1]))
        c.request("POST", f"http://127.0.0.1:{port}/v1/messages", body=b"{}" * 200)
    else:
        c = http.client.HTTPConnection("127.0.0.1", port)
        c.request("POST", "/v1/messages", body=b"{}" * 200)
    r = c.getresponse()
    assert r.status == 200 and len(r.read()) > 2000
    c.close()
    took.append(time.perf_counter() - start)
print(json.dumps(took))
"""


class Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(ANSWER)))
        self.end_headers()
        self.wfile.write(ANSWER)

    def log_message(self, *_: object) -> None:
        pass


def sandbox(argv: list[str]) -> Policy:
    return launched(argv, Policy(view="toolchain"))


async def calls(port: int, count: int, how: str) -> list[float]:
    argv = [sys.executable, "-c", CLIENT, str(port), str(count), how]
    if how == "before":
        return await _run(confine(argv, dataclasses.replace(sandbox(argv), network=True)))
    async with Egress(Allowance.of([f"127.0.0.1:{port}"])) as egress:
        inner, walled = egress.behind(argv, sandbox(argv))
        return await _run(confine(inner, launched(inner[:1], walled)))


async def _run(argv: list[str]) -> list[float]:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    if proc.returncode:
        raise SystemExit(f"the client failed ({proc.returncode})")
    return [float(t) for t in json.loads(out.decode().strip().splitlines()[-1])]


async def start_up(way: str) -> float:
    argv = ["/bin/true"]
    start = time.perf_counter()
    if way == "before":
        await _exit(confine(argv, Policy(view="toolchain", network=True)))
    else:
        async with Egress(Allowance.of(["127.0.0.1:9"])) as egress:
            inner, walled = egress.behind(argv, Policy(view="toolchain"))
            await _exit(confine(inner, launched(inner[:1], walled)))
    return time.perf_counter() - start


async def _exit(argv: list[str]) -> None:
    proc = await asyncio.create_subprocess_exec(*argv)
    if await proc.wait():
        raise SystemExit(f"{argv[-1]} failed in the sandbox")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    args = parser.parse_args()
    count, starts, rounds = (100, 8, 2) if args.quick else (400, 20, 5)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    ways = ("before", "proxy", "forward")
    took: dict[str, list[float]] = {w: [] for w in ways}
    started: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(rounds):
        for way in ways:
            took[way] += asyncio.run(calls(port, count, way))
        for _ in range(starts):
            for way in started:
                started[way].append(asyncio.run(start_up(way)))
    server.shutdown()
    ms = {w: statistics.median(t) * 1000 for w, t in took.items()}
    p90 = {w: statistics.quantiles(t, n=10)[-1] * 1000 for w, t in took.items()}
    up = {w: statistics.median(t) * 1000 for w, t in started.items()}
    added = {w: "—" if w == "before" else f"{ms[w] - ms['before']:+.2f} ms" for w in ways}
    lines = [
        "# The egress proxy's cost (`bench_egress.py`)",
        "",
        f"Machine: {cpu_model()}, {platform.machine()}, Python {platform.python_version()}; "
        f"{rounds} rounds of {count} calls a way and {starts} start-ups a way.",
        "",
        "| per model call (loopback, 2 KB answer) | median ms | p90 ms | added (median) |",
        "|---|---|---|---|",
        *(f"| {w} | {ms[w]:.2f} | {p90[w]:.2f} | {added[w]} |" for w in ways),
        "",
        "| sandbox start-up per turn (`true`) | median ms |",
        "|---|---|",
        f"| before (network shared) | {up['before']:.1f} |",
        f"| now (proxy + bridge) | {up['now']:.1f} |",
        "",
        f"Goal: at most 2 ms added per call: proxy {ms['proxy'] - ms['before']:+.2f} ms, "
        f"forward {ms['forward'] - ms['before']:+.2f} ms.",
    ]
    text = "\n".join(lines) + "\n"
    (HERE / "EGRESS.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
