"""Items per hour with 1, 2 and 3 hosts on one PostgreSQL ledger and one remote (issue 42).

Usage (from the repository root)::

    .venv/bin/python bench/bench_hosts.py              # 1, 2, 3 hosts; writes HOSTS.md
    .venv/bin/python bench/bench_hosts.py --quick      # fewer items
    .venv/bin/python bench/bench_hosts.py --profile    # and where a turn's time goes

Each host is simulated as the many-hosts tests simulate it (tests/kit/hosts.py): a folder holding
only the quest's documents, with a host name and pid namespace of its own where the machine
allows it; all share one PostgreSQL ledger (a throwaway cluster on 127.0.0.1) and one bare
remote served on 127.0.0.1 by ``git daemon``. Every host runs one ``reins loop -c C`` at once on
a coding quest of ``hosts * C * --per-slot`` items whose agent (``cmd:``) sleeps 1 s, then
writes its one file; the gate runs one command per item; the default sandbox (bwrap).

Items per hour are read from the ledger: the items over the window from the first turn's start
to the last turn's record (the loops' start-up is not in it; the whole run, start-up included,
is reported beside it). The ideal is ``hosts * C`` items a second (each of the ``C`` agent
places of a host busy with nothing but a 1 s agent); the figure is the fraction of it. Goal:
≥ 0.8 at 3 hosts.

``--profile`` runs the 3-host case once more with each loop timing, across its threads, the
parts of a turn (making the workspace, the agent, taking its change, the push of the turn's
commit to the remote and the ``ls-remote`` before it, the judge's tree and gate, the record).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402

GOAL = 0.8
AGENT = """
import re, sys, time
prompt = sys.stdin.read()
time.sleep({seconds})
key = re.search(r"Make the file (\\S+)\\.txt", prompt).group(1)
open(f"{{key}}.txt", "w").write(key + "\\n")
"""
# A loop whose turn's parts are timed (wall, summed over its threads), written at its exit.
PROFILED = """
import asyncio, atexit, functools, json, sys, threading, time
from reins.loop import recording, workshop
from reins.workspace import change, remote, workspaces
out, argv = sys.argv[1], sys.argv[2:]
spent, guard = {}, threading.Lock()

def note(name, seconds):
    with guard:
        entry = spent.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += seconds

def timed(owner, attr, name):
    fn = getattr(owner, attr)
    if asyncio.iscoroutinefunction(fn):
        async def wrapped(*args, **kwargs):
            start = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                note(name, time.perf_counter() - start)
    else:
        def wrapped(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                note(name, time.perf_counter() - start)
    setattr(owner, attr, functools.wraps(fn)(wrapped))

timed(workshop.Workshop, "turn", "turn: workspace, agent, change")
timed(workshop.Workshop, "_prepare", "  make or reset the workspace")
timed(workshop.Workshop, "_run", "  the agent (1 s sleep, under bwrap)")
timed(change, "take", "  take the change and commit it")
timed(workspaces, "publish", "  publish, beside the gate (ls-remote only when refused)")
timed(remote, "ref_at", "    ls-remote of the item's branch")
timed(remote, "push", "    push (--atomic --force-with-lease)")
timed(remote, "mirrored", "fetch of the remote at start")
timed(recording.Recorder, "agent", "judge and record")
timed(recording, "judge", "  the gate (in the judge's tree)")
timed(recording, "record", "  the record (ledger)")
atexit.register(lambda: open(out, "w").write(json.dumps(spent)))
sys.argv = ["reins", *argv]
from reins.cli import main
main()
"""


@dataclass
class Run:
    hosts: int
    concurrency: int
    items: int
    window: float  # first turn's start to last record, seconds
    wall: float  # first loop's launch to last loop's end
    loops: list[float]  # each loop's wall time
    load: float
    seconds: float  # the agent's

    @property
    def ideal(self) -> float:
        return self.hosts * self.concurrency / self.seconds  # items a second

    @property
    def fraction(self) -> float:
        return self.items / self.window / self.ideal

    @property
    def whole(self) -> float:
        return self.items / self.wall / self.ideal


def stamp(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def one_case(
    folder: Path,
    url: str,
    hosts: int,
    concurrency: int,
    per_slot: int,
    seconds: float,
    profile: Path | None = None,
    *,
    path: bool = False,
) -> Run:
    from tests.kit.codingkit import agent, git
    from tests.kit.hosts import GitDaemon, make_host, namespaces
    from tests.kit.landkit import land_quest

    from reins.store.postgres import PostgresStore
    from reins.store.walk import iter_items

    count = hosts * concurrency * per_slot
    items = [{"id": f"k{n:03d}"} for n in range(count)]
    source = land_quest(folder / "source" / "q", items, limit=count + 5)
    served = folder / "served"
    served.mkdir()
    git(folder, "clone", "--quiet", "--bare", str(source), str(served / "remote.git"))
    daemon = GitDaemon(served)
    made = []
    ledger = f"{url}?schema=hosts_{os.urandom(4).hex()}"
    try:
        for n in range(hosts):
            where = str(served / "remote.git") if path else daemon.url("remote.git")
            made.append(make_host(folder, f"host-{n}", source, where, isolated=namespaces()))
        scan = made[0].run(ledger, "scan")
        assert scan.returncode == 0, scan.stdout + scan.stderr
        procs, logs = [], []
        start = time.monotonic()
        for host in made:
            model = f"cmd:{agent(host.folder / 'agent.py', AGENT.format(seconds=seconds))}"
            args = ["loop", "--model", model, "-c", str(concurrency), "--no-export"]
            log = (host.folder / "loop.log").open("w")
            logs.append(log)
            if profile is None:
                procs.append(host.start(ledger, *args, log=log))
            else:
                argv = host.argv(ledger, *args)
                at = argv.index("-m")  # python -m reins.cli … → python -c PROFILED OUT …
                argv[at : at + 2] = ["-c", PROFILED, str(profile / f"{host.name}.json")]
                procs.append(subprocess.Popen(argv, cwd=host.folder, stdout=log,
                                              stderr=subprocess.STDOUT))  # fmt: skip
        ends = []
        for proc, log in zip(procs, logs, strict=True):
            code = proc.wait(timeout=3600)
            ends.append(time.monotonic() - start)
            log.close()
            assert code == 0, f"a loop ended {code}: see {log.name}"
        load = os.getloadavg()[0]
        with PostgresStore.open(ledger) as led:
            starts, records = [], []
            for item in iter_items(led):
                assert item.state.value == "PASS", item.key
                for attempt in led.snapshot(item.key)[1]:
                    starts.append(stamp(attempt.started_at or attempt.recorded_at))
                    records.append(stamp(attempt.recorded_at))
        window = max(records) - min(starts)
        return Run(hosts, concurrency, count, window, max(ends), ends, load, seconds)
    finally:
        for host in made:
            host.close()
        daemon.close()


def profiled(folder: Path) -> dict[str, list[float]]:
    """Every host's timings, summed."""
    total: dict[str, list[float]] = {}
    for path in sorted(folder.glob("*.json")):
        for name, (calls, seconds) in json.loads(path.read_text()).items():
            entry = total.setdefault(name, [0, 0.0])
            entry[0] += calls
            entry[1] += seconds
    return total


def main() -> None:
    from tests.kit.hosts import namespaces

    from reins.testing.postgres import TempCluster

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 items a slot")
    parser.add_argument("--hosts", default="1,2,3")
    parser.add_argument("-c", "--concurrency", type=int, default=2)
    parser.add_argument("--per-slot", type=int, default=8, help="items per host and slot")
    parser.add_argument("--agent-seconds", type=float, default=1.0)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--path", action="store_true", help="the remote as a path, not git://")
    parser.add_argument("--out", default=str(HERE / "HOSTS.md"))
    args = parser.parse_args()
    per_slot = 3 if args.quick else args.per_slot
    runs: list[Run] = []
    lines: list[str] = []
    cluster = TempCluster()
    with cluster, tempfile.TemporaryDirectory() as tmp:
        for n in [int(h) for h in args.hosts.split(",")]:
            run = one_case(Path(tmp) / f"h{n}", cluster.url, n, args.concurrency, per_slot,
                           args.agent_seconds, path=args.path)  # fmt: skip
            runs.append(run)
            print(
                f"{n} host(s): {run.items} items in {run.window:.1f} s of turns "
                f"({run.wall:.1f} s whole): {run.fraction:.2f} of the ideal",
                flush=True,
            )
        if args.profile:
            folder = Path(tmp) / "profile"
            folder.mkdir()
            n = max(int(h) for h in args.hosts.split(","))
            run = one_case(Path(tmp) / "p", cluster.url, n, args.concurrency, per_slot,
                           args.agent_seconds, profile=folder, path=args.path)  # fmt: skip
            total = profiled(folder)
            turns = total.get("turn: workspace, agent, change", [1, 0.0])[0] or 1
            lines = [
                "",
                f"Where a turn's time goes ({n} hosts, -c {args.concurrency}, profiled run: "
                f"{run.fraction:.2f} of the ideal; each loop times the parts of its turns, "
                f"wall time summed over its threads; {turns} turns):",
                "",
                "| part | calls | ms a turn |",
                "|---|---:|---:|",
                *[
                    f"| {name.strip()} | {int(c)} | {s / turns * 1000:.0f} |"
                    for name, (c, s) in total.items()
                ],
            ]
    remote = "a path (bare repository)" if args.path else "`git daemon` on 127.0.0.1"
    ns = "own host names and pid namespaces" if namespaces() else "one host name (no namespaces)"
    report = "\n".join(
        [
            "# Many hosts, one ledger, one remote (`bench_hosts.py`, issue 42)",
            "",
            f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}; "
            f"load average at each run's end: {', '.join(f'{r.load:.1f}' for r in runs)}. Hosts: "
            f"{ns}; ledger: PostgreSQL on 127.0.0.1; remote: {remote}. Agent: sleeps "
            f"{args.agent_seconds:g} s then writes one file; -c {args.concurrency} per host.",
            "",
            "| hosts | items | turns' window s | items/hour | ideal items/hour | fraction | "
            f"whole run s (start-up in) | fraction, whole run | goal ≥ {GOAL:g} at 3 |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
            *[
                f"| {r.hosts} | {r.items} | {r.window:.1f} | {r.items / r.window * 3600:,.0f} | "
                f"{r.ideal * 3600:,.0f} | {r.fraction:.2f} | {r.wall:.1f} | "
                f"{r.whole:.2f} | "
                f"{('met' if r.fraction >= GOAL else '**missed**') if r.hosts == 3 else ''} |"
                for r in runs
            ],
            *lines,
            "",
        ]
    )
    Path(args.out).write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
