"""``submit`` through MCP (issue 12): one session, many calls, beside the CLI's process per call.

An agent on the MCP server pays no process start per turn: the server is started once and each
``submit`` is a JSON-RPC round trip over its stdin/stdout. On a ledger of ``bench.quests:counter``
(100k items by default), in one run, this times, as the client sees it (the official
``ClientSession`` over stdio, pydantic on both sides included):

- ``submit`` through MCP, a FAIL that stays TODO (``max_tries`` high in reins.toml), the same item
  again and again: the turn without an export;
- ``submit`` through MCP, a PASS after a ``next_item`` (only the submit is timed), with
  ``auto_export`` off, then on (a locking turn appends to the results file and fsyncs it);
- ``next_item`` through MCP, and a ping (the round trip alone, no ledger);
- ``reins submit`` as a process (PASS with its auto-export, and a FAIL), as an agent on the
  shell runs it.

Usage (from the repository root)::

    .venv/bin/python bench/bench_mcp.py            # 100k items; writes bench/MCP.md
    .venv/bin/python bench/bench_mcp.py --quick    # 10k items, fewer calls; prints only
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from bench.bench_core import human, machine, parse_size, reins_argv, run_process  # noqa: E402
from bench.quests import key_of  # noqa: E402

QUEST_REF = "bench.quests:counter"
GOAL_MS = 5.0


def ms(samples: Sequence[float]) -> tuple[float, float]:
    """Median and 90th percentile, in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.9)] * 1000


def scan(folder: Path, size: int, env: dict[str, str]) -> None:
    run_process([*reins_argv(), "-q", QUEST_REF, "scan", str(size)], cwd=folder, env=env)


def write_toml(folder: Path, *, auto_export: bool) -> None:
    (folder / "reins.toml").write_text(
        "[reins]\nmax_tries = 1000000\n" + f"auto_export = {str(auto_export).lower()}\n"
    )


async def mcp_session(folder: Path, calls: int) -> dict[str, list[float]]:
    """One MCP session: FAIL submits on one item, then PASS submits, each after next_item."""
    params = StdioServerParameters(
        command=reins_argv()[0],
        args=[*reins_argv()[1:], "-q", QUEST_REF, "mcp", "--driver", "bench"],
        cwd=str(folder),
        env={"PYTHONPATH": str(REPO)},
    )
    times: dict[str, list[float]] = {"fail": [], "pass": [], "next": [], "ping": []}
    with (folder / "server.log").open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
            await s.initialize()

            async def timed(bucket: str | None, tool: str, args: dict[str, Any]) -> str:
                start = time.perf_counter()
                result = await s.call_tool(tool, args)
                took = time.perf_counter() - start
                if bucket is not None:
                    times[bucket].append(took)
                text = getattr(result.content[0], "text", "")
                if getattr(result, "is_error", False):
                    raise RuntimeError(f"{tool} failed: {text}")
                return str(text)

            for _ in range(calls):  # the transport's floor: a round trip that touches no ledger
                start = time.perf_counter()
                await s.send_ping()
                times["ping"].append(time.perf_counter() - start)
            prompt = await timed(None, "next_item", {})
            key = prompt.split()[2]
            for _ in range(calls):
                verdict = await timed("fail", "submit", {"key": key, "submission": "-1"})
                assert "FAIL" in verdict, verdict
            n = int(key[1:])
            await timed(None, "submit", {"key": key, "submission": str(n)})
            for _ in range(calls):
                prompt = await timed("next", "next_item", {})
                key = prompt.split()[2]
                verdict = await timed("pass", "submit", {"key": key, "submission": key[1:]})
                assert "PASS" in verdict, verdict
    return times


def cli_submits(folder: Path, env: dict[str, str], keys: Sequence[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"cli_pass": [], "cli_fail": []}
    for key in keys:
        for bucket, answer, ok in (("cli_fail", "-1", (4,)), ("cli_pass", key[1:], (0,))):
            with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
                f.write(answer)
            argv = [*reins_argv(), "-q", QUEST_REF, "submit", "-k", key, "--in", f.name]
            proc = run_process(argv, cwd=folder, env=env, ok=ok)
            os.unlink(f.name)
            times[bucket].append(proc.wall)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--size", type=parse_size, help="items in the ledger [100k, quick 10k]")
    p.add_argument("--calls", type=int, help="MCP calls per measure [300, quick 60]")
    p.add_argument("--processes", type=int, help="CLI processes per measure [15, quick 5]")
    p.add_argument("--quick", action="store_true", help="small and short; prints only")
    p.add_argument("--out", type=Path, help="figures file [bench/MCP.md; none with --quick]")
    a = p.parse_args(argv)
    size = a.size or (10_000 if a.quick else 100_000)
    calls = a.calls or (60 if a.quick else 300)
    processes = a.processes or (5 if a.quick else 15)
    out = a.out if a.out is not None else (None if a.quick else HERE / "MCP.md")
    load = os.getloadavg()
    env = {**os.environ, "PYTHONPATH": str(REPO), "REINS_DRIVER": "bench-cli"}
    with tempfile.TemporaryDirectory(prefix="reins-bench-mcp-") as tmp:
        folder = Path(tmp)
        print(f"scanning {human(size)} items …", flush=True)
        scan(folder, size, env)
        write_toml(folder, auto_export=False)
        quiet = anyio.run(mcp_session, folder, calls)
        write_toml(folder, auto_export=True)
        exporting = anyio.run(mcp_session, folder, calls)
        keys = [key_of(size - 1 - i) for i in range(processes)]
        cli = cli_submits(folder, env, keys)
    rows = [
        ("MCP `submit`, FAIL (no export)", quiet["fail"]),
        ("MCP `submit`, PASS, auto_export off", quiet["pass"]),
        ("MCP `submit`, PASS, auto_export on (fsync)", exporting["pass"]),
        ("MCP `next_item`", quiet["next"]),
        ("MCP ping (the transport alone)", quiet["ping"]),
        ("`reins submit` process, FAIL", cli["cli_fail"]),
        ("`reins submit` process, PASS + auto-export", cli["cli_pass"]),
    ]
    fail_median = ms(quiet["fail"])[0]
    pass_median = ms(exporting["pass"])[0]
    cli_median = ms(cli["cli_pass"])[0]
    lines = [
        f"# MCP submit at {human(size)} items (bench/bench_mcp.py)",
        "",
        f"Run {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.",
        "",
        *[f"- {k}: {v}" for k, v in machine(load).items()],
        "",
        "## Figures",
        "",
        "| measure | calls | median | p90 |",
        "|---|---:|---:|---:|",
        *[f"| {name} | {len(s)} | {ms(s)[0]:.2f} ms | {ms(s)[1]:.2f} ms |" for name, s in rows],
        "",
        "## Goals",
        "",
        f"- MCP `submit` ≤ {GOAL_MS:g} ms per call at {human(size)} items: without an export "
        f"{fail_median:.2f} ms — **{'met' if fail_median <= GOAL_MS else 'missed'}**; a locking "
        f"PASS with its auto-export {pass_median:.2f} ms — "
        f"**{'met' if pass_median <= GOAL_MS else 'missed'}**.",
        f"- Beside the CLI: `reins submit` as a process {cli_median:.0f} ms, "
        f"{cli_median / pass_median:.0f}× the MCP call with the same export.",
        "",
    ]
    report = "\n".join(lines)
    print(report)
    if out is not None:
        out.write_text(report, encoding="utf-8")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
