"""Start-up of the CLI (issues 10, 22): each command as a process, as a ratio to a bare interpreter.

A coding agent starts ``reins`` twice per turn (``next``, then ``submit``), so what a turn costs
it is mostly start-up. In one run, interleaved round-robin in a shuffled order (noise from the
shared machine falls on every probe alike), this times:

- the floor, ``python -c "import sqlite3, json"``, and references: ``python -c pass``,
  ``import click``, and ``import click, sqlite3, json`` (the least a click command reading a
  ledger can cost);
- ``reins --version`` and ``reins --help``;
- ``reins next``, ``reins submit`` (PASS, with its auto-export, as an agent runs it) and
  ``reins status`` on ledgers of 1k, 100k and 1M items of ``bench.quests:counter``.

Each is reported as its median wall time and CPU time, each a ratio to the floor's median in
the same run, and its peak RSS (GNU time). Then where ``reins next``'s time goes, from
``python -X importtime`` grouped by package.

``--before SRC`` times a second reins beside this one in the same rounds: the package under
``SRC`` (the ``src`` folder of another checkout, e.g. a worktree of the commit before a change)
runs each reins probe again with ``SRC`` first on ``PYTHONPATH``, so before and after share
the machine's load and the table sets them side by side.

Usage (from the repository root)::

    .venv/bin/python bench/bench_startup.py              # 1k, 100k, 1M; writes bench/STARTUP.md
    .venv/bin/python bench/bench_startup.py --quick      # 1k and 10k, fewer rounds; prints only
    .venv/bin/python bench/bench_startup.py --sizes 1k,100k --rounds 40
    .venv/bin/python bench/bench_startup.py --before /tmp/base/src   # before and after, one run
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.bench_core import (  # noqa: E402
    GNU_TIME,
    QUEST_REF,
    Proc,
    human,
    machine,
    parse_size,
    reins_argv,
    run_process,
)
from bench.quests import key_of  # noqa: E402
from bench.startup_packs import PackQuest, pack_quests  # noqa: E402
from reins import SQLiteStore  # noqa: E402

DEFAULT_SIZES = (1_000, 100_000, 1_000_000)
GOAL_COMMAND = 3.0  # next, submit, status: at most this many times the floor (issue 22)
GOAL_VERSION = 1.5
GOAL_RSS_MIB = 14.0
WARMUP_ROUNDS = 2
FLOOR = "floor"
# `reins next` leases the oldest TODO items; submits take items drawn at random from the rest.
NEXT_RESERVE = 200


@dataclass
class Probe:
    """One command timed in every round."""

    key: str
    label: str
    argv: list[str]
    size: int | None = None
    goal: float | None = None  # a ratio to the floor
    reins: bool = True  # False for the interpreter references
    before: bool = False  # the reins of --before SRC
    pack: PackQuest | None = None  # a quest of --packs, not the counter
    ok: tuple[int, ...] = (0,)  # the exit codes it may end with
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)

    def add(self, p: Proc) -> None:
        self.walls.append(p.wall * 1000)
        self.cpus.append(p.cpu * 1000)
        self.rss_kb.append(p.maxrss_kb)


@dataclass
class Settings:
    sizes: list[int]
    rounds: int
    out: Path | None
    before: Path | None = None  # the src folder of the reins to time beside this one
    packs: bool = False  # time next, submit and status on real quests too (startup_packs.py)


class StartupBench:
    def __init__(self, settings: Settings, work: Path) -> None:
        self.s = settings
        self.work = work
        self.reins = reins_argv()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
        )
        env["REINS_DRIVER"] = "bench"
        for name in ("REINS_QUEST", "REINS_LEDGER", "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        # Bytecode is cached as after `pip install` (here under the work folder, so that nothing
        # is written into the source tree); every probe, the floor too, reads it from there.
        env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        self.env = env
        self.before_env = None
        if settings.before is not None:
            # The same quests (bench.quests from this checkout), the other reins package.
            before = dict(env)
            before["PYTHONPATH"] = os.pathsep.join((str(settings.before), env["PYTHONPATH"]))
            self.before_env = before
        self.load_start = os.getloadavg()
        self.ledgers: dict[int, Path] = {}
        self.pools: dict[int, list[int]] = {}
        self.builds: dict[int, float] = {}
        self.probes: list[Probe] = []
        self.packs: list[PackQuest] = []
        self.importtime: list[dict[str, float]] = []
        self.click_alone: set[str] = set()  # the modules `import click` loads
        (work / "answers").mkdir()

    # -- set-up -------------------------------------------------------------------------

    def build(self) -> None:
        needed = (WARMUP_ROUNDS + self.s.rounds + 2) * (1 if self.s.before is None else 2)
        if needed > NEXT_RESERVE:
            raise SystemExit(
                f"too many rounds: {needed} submits per ledger, at most {NEXT_RESERVE}"
            )
        for size in self.s.sizes:
            if size < NEXT_RESERVE + needed:
                raise SystemExit(f"size {size} is too small: it needs {NEXT_RESERVE + needed}")
            path = self.work / f"ledger-{size}.db"
            start = time.perf_counter()
            with SQLiteStore.open(path, create=True) as ledger:
                added, _ = ledger.add((key_of(n), {"n": n}) for n in range(size))
            assert added == size
            self.builds[size] = time.perf_counter() - start
            self.ledgers[size] = path
            self.pools[size] = random.Random(size).sample(range(NEXT_RESERVE, size), needed)
            print(f"  built {size:>9,} items in {self.builds[size]:6.1f} s", file=sys.stderr)
        if self.s.packs:
            self.build_packs(needed)

    def build_packs(self, needed: int) -> None:
        """The ledgers of --packs, each scanned by the reins under test (a pack loads there)."""
        self.packs = pack_quests(self.work, max(2 * needed + 20, 120))
        for pq in self.packs:
            argv = [*self.reins, "--quest", pq.ref, "--ledger", str(pq.ledger), "scan", *pq.scan]
            run_process(argv, cwd=self.work, env=self.env)
            with SQLiteStore.open(pq.ledger) as ledger:
                pq.items = ledger.stats().total
            print(f"  scanned {pq.items:>7,} items of {pq.name}", file=sys.stderr)

    def make_probes(self) -> None:
        py = sys.executable
        fixed = [
            (
                FLOOR,
                "floor: `python -c 'import sqlite3, json'`",
                [py, "-c", "import sqlite3, json"],
            ),
            ("pass", "`python -c pass`", [py, "-c", "pass"]),
            ("click", "`python -c 'import click'`", [py, "-c", "import click"]),
            (
                "click_sqlite",
                "`python -c 'import click, sqlite3, json'`",
                [py, "-c", "import click, sqlite3, json"],
            ),
        ]
        self.probes = [Probe(k, label, argv, reins=False) for k, label, argv in fixed]
        mine = [
            Probe("version", "`reins --version`", [*self.reins, "--version"], goal=GOAL_VERSION),
            Probe("help", "`reins --help`", [*self.reins, "--help"]),
        ]
        for size in self.s.sizes:
            base = [*self.reins, "--quest", QUEST_REF, "--ledger", str(self.ledgers[size])]
            for what in ("next", "submit", "status"):
                # argv is completed per round: next takes a driver, submit an item
                mine.append(Probe(what, f"`reins {what}`", base, size, GOAL_COMMAND))
        for pq in self.packs:
            base = [*self.reins, "--quest", pq.ref, "--ledger", str(pq.ledger)]
            for what in ("next", "submit", "status"):
                if what == "submit" and pq.answer is None:
                    continue
                label = f"`reins {what}`, {pq.name}" + (" (a FAIL)" if what == "submit" else "")
                ok = (4,) if what == "submit" else (0,)
                mine.append(Probe(what, label, base, pq.items, GOAL_COMMAND, pack=pq, ok=ok))
        for probe in mine:
            self.probes.append(probe)
            if self.before_env is not None:
                label = f"before: {probe.label}"
                twin = Probe(
                    probe.key,
                    label,
                    probe.argv,
                    probe.size,
                    probe.goal,
                    before=True,
                    pack=probe.pack,
                    ok=probe.ok,
                )
                self.probes.append(twin)

    def argv(self, probe: Probe, round_: int) -> list[str]:
        if probe.size is None:
            return probe.argv
        if probe.key == "next":
            driver = f"{'before' if probe.before else 'bench'}-{round_}"
            return [*probe.argv, "next", "--driver", driver]
        if probe.key == "submit" and probe.pack is not None:
            assert probe.pack.answer is not None
            key = probe.pack.keys.pop()
            return [*probe.argv, "submit", "--key", key, "--in", str(probe.pack.answer)]
        if probe.key == "submit":
            n = self.pools[probe.size].pop()
            answer = self.work / "answers" / f"{n}.txt"
            answer.write_text(f"{n}\n", encoding="utf-8")
            return [*probe.argv, "submit", "--key", key_of(n), "--in", str(answer)]
        return [*probe.argv, probe.key]

    # -- measuring ----------------------------------------------------------------------

    def measure(self) -> None:
        rng = random.Random(0)
        order = list(self.probes)
        for round_ in range(WARMUP_ROUNDS + self.s.rounds):
            rng.shuffle(order)
            for probe in order:
                env = self.before_env if probe.before and self.before_env else self.env
                p = run_process(self.argv(probe, round_), cwd=self.work, env=env, ok=probe.ok)
                if round_ >= WARMUP_ROUNDS:
                    probe.add(p)
            if round_ >= WARMUP_ROUNDS and (round_ - WARMUP_ROUNDS) % 5 == 4:
                print(f"  round {round_ - WARMUP_ROUNDS + 1}/{self.s.rounds}", file=sys.stderr)

    def import_times(self, runs: int = 5) -> None:
        """``-X importtime`` of ``reins next --peek`` on the smallest ledger: µs per module."""
        ledger = self.ledgers[min(self.s.sizes)]
        argv = [sys.executable, "-X", "importtime", "-c", ROUTED, "--quest", QUEST_REF]
        argv += ["--ledger", str(ledger), "next", "--peek"]
        click = [sys.executable, "-X", "importtime", "-c", "import click"]
        self.click_alone = set(own_times(run_process(click, cwd=self.work, env=self.env).err))
        for _ in range(runs):
            p = run_process(argv, cwd=self.work, env=self.env)
            self.importtime.append(own_times(p.err))

    # -- reporting ----------------------------------------------------------------------

    def floor(self) -> Probe:
        return next(p for p in self.probes if p.key == FLOOR)

    def report(self, started: float) -> str:
        floor = self.floor()
        f_wall, f_cpu = statistics.median(floor.walls), statistics.median(floor.cpus)
        lines = [
            "# Start-up of the CLI (issues 10 and 22)",
            "",
            f"Written by `bench/bench_startup.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC in "
            f"{time.perf_counter() - started:.0f} s: {self.s.rounds} rounds after "
            f"{WARMUP_ROUNDS} of warm-up, every probe once per round in a shuffled order. "
            "Ratios are to the floor's median in this run.",
            "",
            "## Machine",
            "",
        ]
        lines += [f"- {k}: {v}" for k, v in machine(self.load_start).items()]
        if self.s.before is not None:
            lines.append(f"- before: the reins of {self.s.before}, {before_state(self.s.before)}")
        lines += ["", "## Figures", "", self.table(f_wall, f_cpu), "", "## Goals", ""]
        lines += [f"- {g}" for g in self.goals(f_wall)]
        if self.importtime:
            lines += ["", "## Where `reins next` spends its imports", "", self.breakdown()]
        builds = ", ".join(f"{human(n)} {t:.1f} s" for n, t in self.builds.items())
        lines += ["", f"Ledgers built once with `SQLiteStore.add`: {builds}."]
        if GNU_TIME is None:
            lines.append("No GNU time: peak RSS figures are upper bounds.")
        return "\n".join(lines) + "\n"

    def table(self, f_wall: float, f_cpu: float) -> str:
        rows = [
            "| measure | items | wall ms (median) | × floor | p10 ms | CPU ms | × floor "
            "| peak RSS MiB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        order = {id(p): i for i, p in enumerate(self.probes)}
        for p in sorted(self.probes, key=lambda p: (p.pack is not None, p.size or 0, order[id(p)])):
            wall, cpu = statistics.median(p.walls), statistics.median(p.cpus)
            p10 = sorted(p.walls)[len(p.walls) // 10]
            rows.append(
                f"| {p.label} | {human(p.size) if p.size else ''} | {wall:.1f} | "
                f"{wall / f_wall:.2f} | {p10:.1f} | {cpu:.1f} | {cpu / f_cpu:.2f} | "
                f"{max(p.rss_kb) / 1024:.1f} |"
            )
        return "\n".join(rows)

    def goals(self, f_wall: float) -> list[str]:
        out = []
        for p in self.probes:
            if p.goal is None or p.before:
                continue
            ratio = statistics.median(p.walls) / f_wall
            where = f" at {human(p.size)}" if p.size else ""
            verdict = "met" if ratio <= p.goal else "missed"
            twin = self.twin(p)
            was = "" if twin is None else f"{statistics.median(twin.walls) / f_wall:.2f}× → "
            out.append(
                f"{p.label}{where}: {was}{ratio:.2f}× the floor (≤ {p.goal:g}×): **{verdict}**"
            )
        worst = max(
            (p for p in self.probes if p.reins and not p.before), key=lambda p: max(p.rss_kb)
        )
        mib = max(worst.rss_kb) / 1024
        verdict = "met" if mib <= GOAL_RSS_MIB else "missed"
        where = f" at {human(worst.size)}" if worst.size else ""
        out.append(
            f"peak RSS of every reins probe ≤ {GOAL_RSS_MIB:g} MiB: **{verdict}** "
            f"(largest {mib:.1f} MiB, {worst.label}{where})"
        )
        click = next(p for p in self.probes if p.key == "click_sqlite")
        out.append(
            "`import click, sqlite3, json` alone is "
            f"{statistics.median(click.walls) / f_wall:.2f}× the floor: the least any click "
            "command that opens a ledger can cost"
        )
        return out

    def twin(self, probe: Probe) -> Probe | None:
        """The --before probe of ``probe``'s command and size, if there is one."""
        return next(
            (
                p
                for p in self.probes
                if p.before
                and p.key == probe.key
                and p.size == probe.size
                and p.pack is probe.pack
                and p is not probe
            ),
            None,
        )

    def breakdown(self) -> str:
        """Own import time per package, median of the runs: click's share against reins'."""
        runs = self.importtime
        names = set().union(*runs)
        own = {n: statistics.median(r.get(n, 0.0) for r in runs) for n in names}
        click_alone = self.click_alone
        groups: dict[str, float] = {}
        for name, us in own.items():
            if name.startswith("reins."):
                parts = name.split(".")
                group = ".".join(parts[:3] if parts[1] in ("store", "cli") else parts[:2])
            elif name in click_alone:
                group = "click, with the standard library it imports"
            else:
                group = "other standard library and extension modules"
            groups[group] = groups.get(group, 0.0) + us
        total = sum(groups.values())
        rows = [
            f"`python -X importtime reins next --peek`, {len(runs)} runs: {total / 1000:.0f} ms "
            "of own import time (the flag inflates it; the shares are what counts).",
            "",
            "| package | own ms | share |",
            "|---|---:|---:|",
        ]
        for group, us in sorted(groups.items(), key=lambda kv: -kv[1])[:12]:
            rows.append(f"| {group} | {us / 1000:.1f} | {us / total:.0%} |")
        rows += ["", "| reins module (largest own time) | own ms | share |", "|---|---:|---:|"]
        mine = sorted(
            ((n, us) for n, us in own.items() if n.startswith("reins")), key=lambda kv: -kv[1]
        )
        for name, us in mine[:10]:
            rows.append(f"| {name} | {us / 1000:.1f} | {us / total:.0%} |")
        return "\n".join(rows)


# `reins` as its script starts it, but with importlib.import_module routed through the import
# statement: -X importtime times only the statement, and reins loads its commands, its lazy
# names and the quest through import_module (unrouted, the table would leave them all out).
ROUTED = """\
import importlib, sys
_import_module = importlib.import_module
def routed(name, package=None):
    if package is not None or name.startswith("."):
        return _import_module(name, package)
    __import__(name)
    return sys.modules[name]
importlib.import_module = routed
from reins.cli import main
main()
"""


def before_state(src: Path) -> str:
    """The commit of the checkout holding ``src``, as far as git knows it."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "-C", str(src), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"commit {head}"


def own_times(stderr: str) -> dict[str, float]:
    """``-X importtime`` output → module → its own µs (a module can be listed twice: summed)."""
    own: dict[str, float] = {}
    for line in stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            self_us, _, name = line.split(":", 1)[1].split("|", 2)
            own[name.strip()] = own.get(name.strip(), 0.0) + float(self_us)
    return own


def parse_args(argv: Sequence[str] | None) -> tuple[Settings, bool]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--sizes", help="ledger sizes, e.g. 1k,100k,1M [default: those three]")
    p.add_argument("--rounds", type=int, help="timed rounds [default 25, quick 6]")
    p.add_argument("--quick", action="store_true", help="1k and 10k, few rounds; prints only")
    p.add_argument("--out", type=Path, help="figures file [default bench/STARTUP.md]")
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    p.add_argument("--before", type=Path, help="the src folder of a reins to time beside this one")
    p.add_argument("--packs", action="store_true", help="also time the emails and ifeval quests")
    a = p.parse_args(argv)
    quick = bool(a.quick)
    if a.sizes:
        sizes = [parse_size(x) for x in a.sizes.split(",")]
    else:
        sizes = [1_000, 10_000] if quick else list(DEFAULT_SIZES)
    out = a.out if a.out is not None else (None if quick else HERE / "STARTUP.md")
    rounds = a.rounds or (6 if quick else 25)
    before = a.before.resolve() if a.before is not None else None
    if before is not None and not (before / "reins" / "__init__.py").is_file():
        raise SystemExit(f"--before {a.before}: no reins package there (give a src folder)")
    return Settings(sorted(set(sizes)), rounds, out, before, bool(a.packs)), bool(a.keep)


def main(argv: Sequence[str] | None = None) -> int:
    settings, keep = parse_args(argv)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="reins-bench-startup-"))
    print(f"bench_startup: working in {work}", file=sys.stderr)
    bench = StartupBench(settings, work)
    try:
        print("- building ledgers", file=sys.stderr)
        bench.build()
        bench.make_probes()
        print("- timing processes", file=sys.stderr)
        bench.measure()
        print("- import times", file=sys.stderr)
        bench.import_times()
    finally:
        if keep:
            print(f"bench_startup: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    report = bench.report(started)
    print(report.split("## Figures", 1)[1].split("Ledgers built", 1)[0].strip())
    if settings.out is not None:
        settings.out.write_text(report, encoding="utf-8")
        print(f"\nbench_startup: figures written to {settings.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
