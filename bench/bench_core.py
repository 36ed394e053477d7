"""Core benchmarks of issue 2: a recorded turn, the CLI commands, scan of 1M items, start-up.

Usage (from the repository root)::

    .venv/bin/python bench/bench_core.py                 # 1k, 10k, 100k, 1M; writes bench/CORE.md
    .venv/bin/python bench/bench_core.py --quick         # 1k and 10k, scan of 100k; prints only
    .venv/bin/python bench/bench_core.py --sizes 1k,1M --repeat 9

Ledgers are built once per run with ``SQLiteStore.add`` in a temporary folder and reused by every
measurement; the folder is removed at the end. Processes are timed by wall clock from spawn to
reap; their CPU time (user + system) comes from ``wait4`` and their peak RSS from GNU time
wrapped around them (a child forked straight from this process would report this process's
high-water mark). Subprocesses run with a bytecode cache, as after ``pip install``. In-process
and process measurements interleave the sizes round-robin, so that noise from the shared
machine falls on every size alike and the ratios between sizes stay meaningful; CPU times are
less sensitive to that noise than wall times.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.machine import cpu_model  # noqa: E402
from bench.quests import counter, key_of  # noqa: E402
from reins import SQLiteStore, __version__  # noqa: E402
from reins.store.export import export  # noqa: E402
from reins.turn import compose, submit  # noqa: E402

QUEST_REF = "bench.quests:counter"
DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
GOAL_TURN_MS = 2.0
GOAL_TURN_RATIO = 1.3
GOAL_SCAN_S = 30.0
GOAL_SCAN_RSS_MB = 300.0
GOAL_START_MS = 150.0
# Items at the front of every ledger are left to `reins next`, which leases the oldest TODO items;
# the turns take items drawn at random from the rest, so the two never meet.
NEXT_RESERVE = 100
WARMUP = 5


# -- measuring -----------------------------------------------------------------------------


@dataclass
class Proc:
    """One finished process: wall time, peak RSS, exit code and output."""

    wall: float
    maxrss_kb: int
    cpu: float  # user + system seconds of the process (and of GNU time, ~1 ms)
    code: int
    out: str
    err: str


def reins_argv() -> list[str]:
    """How to start the ``reins`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("reins")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from reins.cli import main; main()"]


def gnu_time() -> str | None:
    """``/usr/bin/time`` if it is GNU time (it reports the peak RSS of its child alone)."""
    path = shutil.which("time", path="/usr/bin:/bin")
    if path is None:
        return None
    probe = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    return path if "GNU" in probe.stdout + probe.stderr else None


GNU_TIME = gnu_time()


def run_process(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str], ok: Iterable[int] = (0,)
) -> Proc:
    """Run ``argv`` to completion: wall time from spawn to reap, and its peak RSS.

    The peak RSS comes from GNU time wrapped around the command: a child forked straight from
    this (large) process would inherit this process's RSS high-water mark and report that.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        rss_file = None
        full = list(argv)
        if GNU_TIME is not None:
            fd, rss_file = tempfile.mkstemp(prefix="rss-")
            os.close(fd)
            full = [GNU_TIME, "-f", "%M", "-o", rss_file, *full]
        start = time.perf_counter()
        p = subprocess.Popen(
            full, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - start
        p.returncode = os.waitstatus_to_exitcode(status)
        maxrss = usage.ru_maxrss  # an upper bound when GNU time is missing
        # wait4 reports the child with its own reaped children: GNU time plus the command.
        cpu = usage.ru_utime + usage.ru_stime
        if rss_file is not None:
            text = Path(rss_file).read_text().split()
            os.unlink(rss_file)
            maxrss = int(text[-1]) if text and text[-1].isdigit() else maxrss
        out.seek(0)
        err.seek(0)
        proc = Proc(
            wall,
            maxrss,
            cpu,
            p.returncode,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
        )
    if proc.code not in tuple(ok):
        raise RuntimeError(
            f"{' '.join(argv)} exited {proc.code}\nstdout: {proc.out[-2000:]}\n"
            f"stderr: {proc.err[-2000:]}"
        )
    return proc


@dataclass
class Series:
    """Samples of one measure, per size (``None`` for measures that do not depend on size)."""

    label: str
    unit: str  # "ms" or "s"
    samples: dict[int | None, list[float]] = field(default_factory=dict)
    rss_kb: dict[int | None, list[int]] = field(default_factory=dict)
    cpu: dict[int | None, list[float]] = field(default_factory=dict)
    goal: str = ""

    def add(self, size: int | None, seconds: float, rss_kb: int | None = None) -> None:
        self.samples.setdefault(size, []).append(seconds)
        if rss_kb is not None:
            self.rss_kb.setdefault(size, []).append(rss_kb)

    def add_proc(self, size: int | None, p: Proc) -> None:
        self.add(size, p.wall, p.maxrss_kb)
        self.cpu.setdefault(size, []).append(p.cpu)

    def cpu_median(self, size: int | None) -> float:
        return statistics.median(self.cpu[size]) * (1000.0 if self.unit == "ms" else 1.0)

    def median(self, size: int | None) -> float:
        return statistics.median(self.samples[size]) * (1000.0 if self.unit == "ms" else 1.0)

    def p90(self, size: int | None) -> float:
        xs = sorted(self.samples[size])
        value = xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]
        return value * (1000.0 if self.unit == "ms" else 1.0)

    def rss_mb(self, size: int | None) -> float:
        return max(self.rss_kb[size]) / 1024.0


# -- the benchmark -------------------------------------------------------------------------


@dataclass
class Settings:
    sizes: list[int]
    repeat: int
    turns: int
    scan_size: int
    scan_repeat: int
    out: Path | None
    keep: bool
    quick: bool


class CoreBench:
    def __init__(self, settings: Settings, work: Path) -> None:
        self.s = settings
        self.work = work
        self.reins = reins_argv()
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
        )
        self.env["REINS_DRIVER"] = "bench"
        for name in ("REINS_QUEST", "REINS_LEDGER"):
            self.env.pop(name, None)
        # As after `pip install`: compiled bytecode is cached (here under the work folder, so
        # that nothing is written into the source tree). `cold_env` compiles reins on every
        # start, as happens when PYTHONDONTWRITEBYTECODE is set with an editable install.
        self.cold_env = dict(self.env, PYTHONDONTWRITEBYTECODE="1")
        self.cold_env.pop("PYTHONPYCACHEPREFIX", None)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
        self.load_start = os.getloadavg()
        self.ledgers: dict[int, Path] = {}
        self.pools: dict[int, list[int]] = {}
        self.series: dict[str, Series] = {}
        self.builds: dict[int, float] = {}
        self.importtimes: dict[str, list[dict[str, tuple[float, float, int]]]] = {}
        self.profile_text = ""
        self.plans: list[tuple[str, str, list[str]]] = []
        self.notes: list[str] = []
        self.fsyncs: list[str] = []
        (work / "answers").mkdir()

    def series_of(self, name: str, label: str, unit: str, goal: str = "") -> Series:
        if name not in self.series:
            self.series[name] = Series(label, unit, goal=goal)
        return self.series[name]

    def cli(self, ledger: Path | None, *args: str, ok: Iterable[int] = (0,)) -> Proc:
        argv = [*self.reins, "--quest", QUEST_REF]
        if ledger is not None:
            argv += ["--ledger", str(ledger)]
        return run_process([*argv, *args], cwd=self.work, env=self.env, ok=ok)

    def answer_file(self, n: int, *, right: bool = True) -> Path:
        path = self.work / "answers" / f"{n}-{'ok' if right else 'bad'}.txt"
        if not path.exists():
            path.write_text(f"{n if right else n + 1}\n", encoding="utf-8")
        return path

    def take(self, size: int) -> int:
        return self.pools[size].pop()

    # -- set-up -------------------------------------------------------------------------

    def build(self) -> None:
        # warm-up and timed turns of three variants, two submits per command round, the profile,
        # the query plans, and a margin
        needed = (
            3 * (WARMUP + self.s.turns)
            + 2 * (self.s.repeat + 1)
            + 2 * (WARMUP + 3 * self.s.repeat)
            + min(100, self.s.turns)
            + 10
        )
        for size in self.s.sizes:
            if size - NEXT_RESERVE < needed:
                raise SystemExit(
                    f"size {size} is too small for {self.s.turns} turns: it needs "
                    f"{needed + NEXT_RESERVE} items (lower --turns)"
                )
            path = self.work / f"ledger-{size}.db"
            start = time.perf_counter()
            with SQLiteStore.open(path, create=True) as ledger:
                added, _ = ledger.add((key_of(n), {"n": n}) for n in range(size))
            self.builds[size] = time.perf_counter() - start
            assert added == size
            self.ledgers[size] = path
            rng = random.Random(size)
            self.pools[size] = rng.sample(range(NEXT_RESERVE, size), needed)
            print(f"  built {size:>9,} items in {self.builds[size]:6.1f} s", file=sys.stderr)

    # -- (a) a recorded turn, in process ------------------------------------------------

    def turns_in_process(self) -> None:
        results = self.work / "results-inprocess.jsonl"
        open_ = {size: SQLiteStore.open(self.ledgers[size]) for size in self.s.sizes}
        variants: list[tuple[str, str, bool, bool]] = [
            ("turn_pass_export", "turn in-process: PASS + export (as the CLI)", True, True),
            ("turn_pass", "turn in-process: PASS (record only)", True, False),
            ("turn_fail", "turn in-process: FAIL (record only)", False, False),
        ]
        try:
            for name, label, right, with_export in variants:
                s = self.series_of(
                    name, label, "ms", f"≤ {GOAL_TURN_MS:g} ms, ≤ {GOAL_TURN_RATIO}×"
                )
                for i in range(WARMUP + self.s.turns):
                    for size in self.s.sizes:
                        n = self.take(size)
                        raw = f"{n if right else n + 1}\n".encode()
                        start, cpu = time.perf_counter(), time.process_time()
                        rec, _ = submit(
                            open_[size],
                            counter,
                            key_of(n),
                            raw,
                            driver="bench",
                            results=results if with_export else None,
                        )
                        elapsed = time.perf_counter() - start
                        cpu = time.process_time() - cpu
                        expected = "PASS" if right else "TODO"
                        assert rec.item.state.value == expected, (rec.item, rec.text)
                        if i >= WARMUP:
                            s.add(size, elapsed)
                            s.cpu.setdefault(size, []).append(cpu)
            # Record-only PASS turns left items unexported: publish them now, untimed, so that
            # the first `reins submit` below does not export hundreds of them.
            for size in self.s.sizes:
                export(open_[size], self.work / "results-drain.jsonl")
            self.reads_in_process(open_)
        finally:
            for ledger in open_.values():
                ledger.close()

    def reads_in_process(self, open_: dict[int, SQLiteStore]) -> None:
        """What `next` and `status` do once started: lease + snapshot + compose; stats."""
        nxt = self.series_of("lib_next", "next in-process: lease, snapshot, compose", "ms")
        stats = self.series_of("lib_status", "status in-process: `SQLiteStore.stats()`", "ms")
        for i in range(WARMUP + self.s.turns):
            for size in self.s.sizes:
                ledger = open_[size]
                driver = f"lib-{i}"
                start = time.perf_counter()
                lease = ledger.lease(driver, ttl=60)
                assert lease is not None
                item, log = ledger.snapshot(lease.item.key)
                compose(counter, item, log)
                elapsed = time.perf_counter() - start
                ledger.release(item.key, driver)
                start2 = time.perf_counter()
                ledger.stats()
                elapsed2 = time.perf_counter() - start2
                if i >= WARMUP:
                    nxt.add(size, elapsed)
                    stats.add(size, elapsed2)

    def fresh_connections(self) -> None:
        """One turn in a connection of its own, as each `reins submit` process makes one.

        No other connection is open, so closing is the last close: SQLite then checkpoints
        the WAL into the database and deletes it, and the next first write starts a new WAL.
        """
        parts = [
            ("conn_open", "fresh connection: `SQLiteStore.open`"),
            ("conn_turn", "fresh connection: first turn (PASS, record only)"),
            ("conn_close", "fresh connection: close (the last one: WAL checkpoint)"),
        ]
        variants = [""]
        if hasattr(sqlite3.Connection, "setconfig"):
            variants.append("_nockpt")
        for suffix in variants:
            for key, label in parts:
                extra = ", NO_CKPT_ON_CLOSE" if suffix else ""
                self.series_of(key + suffix, label + extra, "ms")
        for i in range(WARMUP + self.s.repeat * 3):
            for size in self.s.sizes:
                for suffix in variants:
                    n = self.take(size)
                    c0, t0 = time.process_time(), time.perf_counter()
                    ledger = SQLiteStore.open(self.ledgers[size])
                    if suffix:
                        conn: Any = ledger._conn
                        conn.setconfig(sqlite3.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, True)
                    c1, t1 = time.process_time(), time.perf_counter()
                    submit(ledger, counter, key_of(n), f"{n}\n".encode(), driver="bench")
                    c2, t2 = time.process_time(), time.perf_counter()
                    ledger.close()
                    c3, t3 = time.process_time(), time.perf_counter()
                    if i >= WARMUP:
                        for key, wall, cpu in (
                            ("conn_open", t1 - t0, c1 - c0),
                            ("conn_turn", t2 - t1, c2 - c1),
                            ("conn_close", t3 - t2, c3 - c2),
                        ):
                            self.series[key + suffix].add(size, wall)
                            self.series[key + suffix].cpu.setdefault(size, []).append(cpu)
        if len(variants) == 1:
            self.notes.append(
                f"Python {platform.python_version()} has no `sqlite3.Connection.setconfig` "
                "(3.12+): the fresh-connection variant with SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE "
                "was not measured"
            )

    def fsync_probe(self) -> None:
        """The disk's flush latency now: append 200 bytes and fsync, 40 times."""
        path = self.work / "fsync-probe.bin"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        xs = []
        try:
            for _ in range(40):
                os.write(fd, b"x" * 199 + b"\n")
                start = time.perf_counter()
                os.fsync(fd)
                xs.append((time.perf_counter() - start) * 1000)
        finally:
            os.close(fd)
            path.unlink()
        xs.sort()
        self.fsyncs.append(
            f"median {statistics.median(xs):.2f} ms (p10 {xs[4]:.2f}, p90 {xs[35]:.2f})"
        )

    def profile_turns(self) -> None:
        """cProfile of record-only PASS turns on the largest ledger."""
        size = max(self.s.sizes)
        turns = min(100, self.s.turns)
        prof = cProfile.Profile()
        with SQLiteStore.open(self.ledgers[size]) as ledger:
            keys = [self.take(size) for _ in range(turns)]
            prof.enable()
            for n in keys:
                submit(ledger, counter, key_of(n), f"{n}\n".encode(), driver="bench")
            prof.disable()
        buf = io.StringIO()
        stats = pstats.Stats(prof, stream=buf)
        stats.sort_stats("tottime").print_stats(18)
        text = buf.getvalue()
        # Keep the table, drop pstats' preamble; show paths relative to the repository.
        lines = text.splitlines()
        start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
        body = "\n".join(lines[start:]).replace(str(REPO) + "/", "")
        body = body.replace(sys.prefix + "/", "").replace(sys.base_prefix + "/", "")
        self.profile_text = f"{turns} PASS turns (record only) on {size:,} items:\n\n{body}"

    def query_plans(self) -> None:
        """The SQL one turn, one ``next`` and one ``status`` run, with SQLite's query plans."""
        size = max(self.s.sizes)
        path = self.ledgers[size]
        with SQLiteStore.open(path) as ledger:
            conn: sqlite3.Connection = ledger._conn
            for what, action in (
                (
                    "turn (submit PASS)",
                    lambda n: submit(ledger, counter, key_of(n), f"{n}\n".encode(), driver="plan"),
                ),
                ("next (lease_next)", lambda n: ledger.lease("plan-next", ttl=60)),
                ("status (stats)", lambda n: ledger.stats()),
            ):
                traced: list[str] = []
                conn.set_trace_callback(traced.append)
                try:
                    action(self.take(size))
                finally:
                    conn.set_trace_callback(None)
                stmts = [
                    t.strip()
                    for t in traced
                    if t.split(None, 1)[0].upper()
                    in ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")
                ]
                # A trigger's statements are traced under the text of the statement firing it.
                runs: list[tuple[str, int]] = []
                for stmt in stmts:
                    if runs and runs[-1][0] == stmt:
                        runs[-1] = (stmt, runs[-1][1] + 1)
                    else:
                        runs.append((stmt, 1))
                plans = []
                with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as ro:
                    for stmt, times in runs:
                        try:
                            rows = ro.execute("EXPLAIN QUERY PLAN " + stmt).fetchall()
                            plan = "; ".join(r[3] for r in rows) or "(no table access)"
                        except sqlite3.Error as exc:
                            plan = f"(cannot explain: {exc})"
                        fired = f" (traced {times}×: triggers)" if times > 1 else ""
                        plans.append(f"{shorten(stmt, 150)}\n      → {plan}{fired}")
                self.plans.append((what, f"{len(traced)} statements traced", plans))
            ledger.release_all("plan-next")

    # -- (b, c, d) the commands as processes -----------------------------------------------

    def commands(self) -> None:
        sub = self.series_of("cli_submit", "`reins submit` PASS (auto-export)", "ms")
        sub_ne = self.series_of("cli_submit_noexp", "`reins submit --no-export` PASS", "ms")
        status = self.series_of("cli_status", "`reins status`", "ms")
        nxt = self.series_of("cli_next", "`reins next`", "ms")
        for rep in range(self.s.repeat + 1):  # the first round warms caches and is dropped
            for size in self.s.sizes:
                ledger = self.ledgers[size]
                n = self.take(size)
                p = self.cli(ledger, "submit", "--key", key_of(n), "--in", str(self.answer_file(n)))
                if rep:
                    sub.add_proc(size, p)
                n = self.take(size)
                p = self.cli(
                    ledger,
                    "submit",
                    "--no-export",
                    "--key",
                    key_of(n),
                    "--in",
                    str(self.answer_file(n)),
                )
                if rep:
                    sub_ne.add_proc(size, p)
                p = self.cli(ledger, "status")
                if rep:
                    status.add_proc(size, p)
                p = self.cli(ledger, "next", "--driver", f"bench-next-{rep}")
                if rep:
                    nxt.add_proc(size, p)

    # -- (e) scan ----------------------------------------------------------------------

    def scan(self) -> None:
        n = self.s.scan_size
        label = f"`reins scan {n:,}` (new ledger)"
        s = self.series_of("scan", label, "s", f"≤ {GOAL_SCAN_S:g} s, ≤ {GOAL_SCAN_RSS_MB:g} MB")
        again = self.series_of("rescan", f"`reins scan {n:,}` again (all present)", "s")
        for rep in range(self.s.scan_repeat):
            path = self.work / f"scan-{rep}.db"
            p = self.cli(path, "scan", str(n))
            assert f"added {n} item(s)" in p.out, p.out
            s.add_proc(n, p)
            print(f"  scan {n:,}: {p.wall:.1f} s, {p.maxrss_kb / 1024:.0f} MB", file=sys.stderr)
            if rep == self.s.scan_repeat - 1:
                p = self.cli(path, "scan", str(n))
                assert f"{n} already present" in p.out, p.out
                again.add_proc(n, p)
            for f in self.work.glob(f"scan-{rep}.db*"):
                f.unlink()

    # -- (f) start-up ------------------------------------------------------------------

    def startup(self) -> None:
        py = sys.executable
        warm, cold = self.env, self.cold_env
        probes: list[tuple[str, str, list[str], dict[str, str]]] = [
            ("py_pass", "`python -c pass` (floor)", [py, "-c", "pass"], warm),
            ("py_click", "`python -c 'import click'`", [py, "-c", "import click"], warm),
            ("py_reins", "`python -c 'import reins'`", [py, "-c", "import reins"], warm),
            ("py_cli", "`python -c 'import reins.cli'`", [py, "-c", "import reins.cli"], warm),
            (
                "py_all",
                "`python -c 'import reins.cli, reins.turn, bench.quests'`",
                [py, "-c", "import reins.cli, reins.turn, reins.store.sqlite, bench.quests"],
                warm,
            ),
            ("version", "`reins --version`", [*self.reins, "--version"], warm),
            (
                "version_cold",
                "`reins --version`, no bytecode cache for reins (PYTHONDONTWRITEBYTECODE=1)",
                [*self.reins, "--version"],
                cold,
            ),
        ]
        src_cache = REPO / "src" / "reins" / "__pycache__"
        if src_cache.exists():
            self.notes.append(
                f"{src_cache} exists, so the no-bytecode-cache row may have read cached bytecode"
            )
        for name, label, _, _ in probes:
            goal = f"≤ {GOAL_START_MS:g} ms" if name == "version" else ""
            self.series_of(name, label, "ms", goal)
        for _ in range(2):  # fill the bytecode cache and the page cache
            for _, _, argv, env in probes:
                run_process(argv, cwd=self.work, env=env)
        for _ in range(max(12, self.s.repeat * 3)):
            for name, _, argv, env in probes:
                p = run_process(argv, cwd=self.work, env=env)
                self.series[name].add_proc(None, p)

    def import_times(self) -> None:
        """``python -X importtime`` of ``reins --version`` and ``reins next``, three runs each."""
        script = self.reins[0] if len(self.reins) == 1 else None
        if script is None:
            self.notes.append("no `reins` script beside the interpreter: import times skipped")
            return
        size = min(self.s.sizes)
        for what, args in (
            ("reins --version", ["--version"]),
            (
                "reins next",
                ["--quest", QUEST_REF, "--ledger", str(self.ledgers[size]), "next", "-d", "imp"],
            ),
        ):
            runs = []
            for _ in range(3):
                p = run_process(
                    [sys.executable, "-X", "importtime", script, *args], cwd=self.work, env=self.env
                )
                runs.append(parse_importtime(p.err))
            self.importtimes[what] = runs

    # -- reporting ---------------------------------------------------------------------

    def report(self, started: float) -> str:
        sizes = self.s.sizes
        lines: list[str] = []
        add = lines.append
        add("# Core benchmarks (issue 2)")
        add("")
        add(
            f"Written by `bench/bench_core.py` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC "
            f"in {time.perf_counter() - started:.0f} s. Medians of several runs; ratios are "
            "within this one run (sizes interleaved round-robin)."
        )
        add("")
        add("## Machine")
        add("")
        for k, v in machine(self.load_start).items():
            add(f"- {k}: {v}")
        add(
            f"- settings: sizes {', '.join(human(n) for n in sizes)}; {self.s.turns} in-process "
            f"turns per variant and size (after {WARMUP} warm-up); {self.s.repeat} runs per "
            f"command and size; {self.s.scan_repeat} scan(s) of {self.s.scan_size:,}"
        )
        add("")
        add("## Figures")
        add("")
        add(self.size_table())
        add("")
        add(self.single_table())
        add("")
        if self.fsyncs:
            add(
                "Disk flush (append 200 bytes + `fsync`, 40 times) in this run: "
                + "; then ".join(self.fsyncs)
                + ". Every figure that waits on a flush moves with it."
            )
            add("")
        add(
            "Library build of the ledgers (`SQLiteStore.add`, once): "
            + ", ".join(f"{human(n)} {t:.1f} s" for n, t in self.builds.items())
            + "."
        )
        rss = [
            (self.series[k].label, self.series[k].rss_mb(max(sizes)))
            for k in ("cli_submit", "cli_status", "cli_next")
            if k in self.series
        ]
        if rss:
            add(
                f"Peak RSS at {human(max(sizes))}: "
                + "; ".join(f"{label} {mb:.0f} MB" for label, mb in rss)
                + "."
            )
        add("")
        add("## Goals")
        add("")
        for line in self.goals():
            add(f"- {line}")
        add("")
        add("## Start-up: what the time goes to")
        add("")
        add(self.startup_breakdown())
        for what, runs in self.importtimes.items():
            add("")
            add(f"### `python -X importtime` — `{what}` (median of {len(runs)} runs)")
            add("")
            add(importtime_report(runs))
        if self.profile_text:
            add("")
            add("## Profile of a recorded turn (cProfile, sorted by own time)")
            add("")
            add("```")
            add(self.profile_text.rstrip())
            add("```")
        if self.plans:
            add("")
            add(f"## SQL and query plans at {human(max(sizes))} items")
            add("")
            add("```")
            for what, summary, plans in self.plans:
                add(f"{what}: {summary}")
                for p in plans:
                    add(f"  {p}")
            add("```")
        if self.notes:
            add("")
            add("## Notes")
            add("")
            for note in self.notes:
                add(f"- {note}")
        return "\n".join(lines) + "\n"

    def size_table(self) -> str:
        sizes = self.s.sizes
        ratio_head = f"{human(max(sizes))}/{human(min(sizes))}"
        out: list[str] = []
        for title, keys in (
            (
                "in process: wall median (p90; CPU median)",
                (
                    "turn_pass",
                    "turn_fail",
                    "turn_pass_export",
                    "lib_next",
                    "lib_status",
                    "conn_open",
                    "conn_turn",
                    "conn_close",
                    "conn_open_nockpt",
                    "conn_turn_nockpt",
                    "conn_close_nockpt",
                ),
            ),
            (
                "process: wall median (CPU median)",
                ("cli_submit", "cli_submit_noexp", "cli_status", "cli_next"),
            ),
        ):
            present = [self.series[k] for k in keys if k in self.series]
            if not present:
                continue
            if out:
                out.append("")
            out.append(f"| {title} | " + " | ".join(human(n) for n in sizes) + f" | {ratio_head} |")
            out.append("|---|" + "---:|" * (len(sizes) + 1))
            for s in present:
                if title.startswith("process"):
                    cells = [f"{s.median(n):.0f} ({s.cpu_median(n):.0f}) {s.unit}" for n in sizes]
                elif s.cpu:
                    cells = [
                        f"{s.median(n):.2f} ({s.p90(n):.2f}; CPU {s.cpu_median(n):.2f}) {s.unit}"
                        for n in sizes
                    ]
                else:
                    cells = [f"{s.median(n):.2f} ({s.p90(n):.2f}) {s.unit}" for n in sizes]
                ratio = s.median(max(sizes)) / s.median(min(sizes))
                out.append(f"| {s.label} | " + " | ".join(cells) + f" | {ratio:.2f}× |")
        return "\n".join(out)

    def single_table(self) -> str:
        rows = [
            "| process | wall median | min | max | CPU median | runs | peak RSS |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for key in (
            "scan",
            "rescan",
            "py_pass",
            "py_click",
            "py_reins",
            "py_cli",
            "py_all",
            "version",
            "version_cold",
        ):
            s = self.series.get(key)
            if s is None:
                continue
            (size,) = s.samples
            factor = 1000.0 if s.unit == "ms" else 1.0
            digits = 1 if s.unit == "s" else 0
            xs = s.samples[size]
            cpu = f"{s.cpu_median(size):.{digits}f}" if s.cpu else "—"
            rows.append(
                f"| {s.label} | {s.median(size):.{digits}f} {s.unit} | "
                f"{min(xs) * factor:.{digits}f} | {max(xs) * factor:.{digits}f} | {cpu} | "
                f"{len(xs)} | {s.rss_mb(size):.0f} MB |"
            )
        return "\n".join(rows)

    def goals(self) -> list[str]:
        sizes = self.s.sizes
        out: list[str] = []

        def verdict(ok: bool) -> str:
            return "met" if ok else "**MISSED**"

        for key in ("turn_pass", "turn_fail", "turn_pass_export"):
            s = self.series.get(key)
            if s is None:
                continue
            worst = max(s.median(n) for n in sizes)
            ratio = s.median(max(sizes)) / s.median(min(sizes))
            out.append(
                f"{s.label}: ≤ {GOAL_TURN_MS:g} ms — worst median {worst:.2f} ms: "
                f"{verdict(worst <= GOAL_TURN_MS)}; {human(max(sizes))} vs {human(min(sizes))} "
                f"≤ {GOAL_TURN_RATIO}× — {ratio:.2f}×: {verdict(ratio <= GOAL_TURN_RATIO)}"
            )
        if max(sizes) < 1_000_000:
            out.append(f"the ratio goal is for 1k vs 1M; this run went up to {human(max(sizes))}")
        s = self.series.get("scan")
        if s is not None:
            (n,) = s.samples
            t, mb = s.median(n), s.rss_mb(n)
            out.append(
                f"scan of {n:,}: ≤ {GOAL_SCAN_S:g} s — {t:.1f} s: {verdict(t <= GOAL_SCAN_S)}; "
                f"peak RSS ≤ {GOAL_SCAN_RSS_MB:g} MB — {mb:.0f} MB: "
                f"{verdict(mb <= GOAL_SCAN_RSS_MB)}"
                + ("" if n >= 1_000_000 else " (the goal is for 1M; this run scanned fewer)")
            )
        s = self.series.get("version")
        if s is not None:
            t = s.median(None)
            out.append(
                f"`reins --version` start-up ≤ {GOAL_START_MS:g} ms — {t:.0f} ms: "
                f"{verdict(t <= GOAL_START_MS)} (fastest run {min(s.samples[None]) * 1000:.0f} ms; "
                f"CPU {s.cpu_median(None):.0f} ms; the floor `python -c pass` "
                f"{self.series['py_pass'].median(None):.0f} ms in the same run)"
            )
        return out

    def startup_breakdown(self) -> str:
        need = ("py_pass", "py_click", "py_reins", "py_cli", "py_all", "version")
        if not all(k in self.series for k in need):
            return "(start-up not measured)"
        m = {k: self.series[k].median(None) for k in need}
        floor = m["py_pass"]
        rows = [
            "| process | wall median ms | minus the floor | CPU median ms |",
            "|---|---:|---:|---:|",
            f"| `python -c pass` (the floor: interpreter and site) | {floor:.0f} | 0 | "
            f"{self.series['py_pass'].cpu_median(None):.0f} |",
        ]
        for key, what in (
            ("py_click", "`import click`"),
            ("py_reins", "`import reins` (the package alone)"),
            ("py_cli", "`import reins.cli` (click, config, the command group)"),
            ("version", "`reins --version` (click and the command registry: no command module)"),
            ("py_all", "`import reins.cli, reins.turn, reins.store.sqlite, bench.quests`"),
        ):
            cpu = self.series[key].cpu_median(None)
            rows.append(f"| {what} | {m[key]:.0f} | {m[key] - floor:+.0f} | {cpu:.0f} |")
        for key, what, base, base_label in (
            ("cli_status", "`reins status`", "version", "`--version`"),
            ("cli_next", "`reins next`", "py_all", "its imports"),
            ("cli_submit_noexp", "`reins submit --no-export`", "py_all", "its imports"),
        ):
            if key in self.series:
                n = min(self.s.sizes)
                t = self.series[key].median(n)
                rows.append(
                    f"| {what} at {human(n)} | {t:.0f} | {t - floor:+.0f} "
                    f"({t - m[base]:+.0f} beyond {base_label}) | "
                    f"{self.series[key].cpu_median(n):.0f} |"
                )
        if "version_cold" in self.series:
            c = self.series["version_cold"].median(None)
            rows.append(
                f"| `reins --version`, reins compiled from source at every start | {c:.0f} | "
                f"{c - floor:+.0f} ({c - m['version']:+.0f} vs cached bytecode) | "
                f"{self.series['version_cold'].cpu_median(None):.0f} |"
            )
        return "\n".join(rows)


# -- import-time parsing -------------------------------------------------------------------


def parse_importtime(stderr: str) -> dict[str, tuple[float, float, int]]:
    """``-X importtime`` output → module → (self µs, cumulative µs, depth)."""
    out: dict[str, tuple[float, float, int]] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cum_us, name = line.split(":", 1)[1].split("|", 2)
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        out[name.strip()] = (float(self_us), float(cum_us), depth)
    return out


def importtime_report(runs: list[dict[str, tuple[float, float, int]]]) -> str:
    names = set().union(*runs)
    med: dict[str, tuple[float, float, int]] = {}
    for name in names:
        got = [r[name] for r in runs if name in r]
        med[name] = (
            statistics.median(g[0] for g in got),
            statistics.median(g[1] for g in got),
            got[0][2],
        )
    total = sum(c for s_, c, d in med.values() if d == 0)
    by_root: dict[str, float] = {}
    for name, (self_us, _, _) in med.items():
        root = name.split(".")[0]
        by_root[root] = by_root.get(root, 0.0) + self_us
    lines = [
        f"All imports: {total / 1000:.1f} ms under `-X importtime` (which inflates them; the "
        "wall-clock rows above are the true cost).",
        "",
        "| top-level package (sum of own time) | ms | share |",
        "|---|---:|---:|",
    ]
    for root, us in sorted(by_root.items(), key=lambda kv: -kv[1])[:12]:
        lines.append(f"| {root} | {us / 1000:.1f} | {us / total:.0%} |")
    lines += ["", "| module (largest own time) | own ms | cumulative ms |", "|---|---:|---:|"]
    for name, (self_us, cum, _) in sorted(med.items(), key=lambda kv: -kv[1][0])[:15]:
        lines.append(f"| {name} | {self_us / 1000:.1f} | {cum / 1000:.1f} |")
    lines += ["", "| module (largest cumulative, reins and first-level imports) | cumulative ms |"]
    lines.append("|---|---:|")
    picked = [
        (name, cum)
        for name, (_, cum, depth) in med.items()
        if depth == 0 or name.startswith("reins")
    ]
    for name, cum in sorted(picked, key=lambda kv: -kv[1])[:16]:
        lines.append(f"| {name} | {cum / 1000:.1f} |")
    return "\n".join(lines)


# -- helpers -------------------------------------------------------------------------------


def human(n: int) -> str:
    for unit, div in (("M", 1_000_000), ("k", 1_000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def parse_size(text: str) -> int:
    t = text.strip().lower().replace("_", "")
    mult = {"k": 1_000, "m": 1_000_000}.get(t[-1:], 1)
    return int(t.rstrip("km")) * mult


def shorten(text: str, limit: int) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def machine(load_start: tuple[float, float, float]) -> dict[str, str]:
    cpu = cpu_model()
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    start = " / ".join(f"{x:.2f}" for x in load_start)
    end = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "CPU": f"{cpu}; nproc {affinity} (cpu_count {os.cpu_count()}), shared; {mem}",
        "load average (1/5/15 min)": f"{start} at the start, {end} at the end",
        "system": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "Python": f"{platform.python_version()} ({sys.executable})",
        "SQLite": sqlite3.sqlite_version,
        "reins": f"{__version__}, {source_state()}",
    }


def source_state() -> str:
    """The commit measured, and whether the working tree of src/ differed from it."""
    try:
        head = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(REPO), "status", "--porcelain", "--", "src"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"
    return f"commit {head}" + (f" with {len(dirty)} changed file(s) in src/" if dirty else "")


def print_table(report: str) -> None:
    """The figures and goals part of the report, for the terminal."""
    keep = False
    for line in report.splitlines():
        if line.startswith("## "):
            keep = line in ("## Figures", "## Goals", "## Start-up: what the time goes to")
        if keep:
            print(line)


def parse_args(argv: Sequence[str] | None) -> Settings:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--sizes", help="ledger sizes, e.g. 1k,10k,100k,1M [default: those four]")
    p.add_argument("--repeat", type=int, help="runs per command and size [default 7, quick 3]")
    p.add_argument("--turns", type=int, help="in-process turns per size [default 200, quick 40]")
    p.add_argument("--scan-size", type=parse_size, help="items to scan [1M, quick 100k]")
    p.add_argument("--scan-repeat", type=int, help="scans [default 3, quick 1]")
    p.add_argument("--quick", action="store_true", help="small sizes, few runs; prints only")
    p.add_argument(
        "--out",
        type=Path,
        help="figures file [default bench/CORE.md; none with --quick unless given]",
    )
    p.add_argument("--keep", action="store_true", help="keep the temporary folder")
    a = p.parse_args(argv)
    quick = bool(a.quick)
    sizes = (
        [parse_size(x) for x in a.sizes.split(",")]
        if a.sizes
        else ([1_000, 10_000] if quick else list(DEFAULT_SIZES))
    )
    out = a.out if a.out is not None else (None if quick else HERE / "CORE.md")
    return Settings(
        sizes=sorted(set(sizes)),
        repeat=a.repeat or (3 if quick else 7),
        turns=a.turns or (40 if quick else 200),
        scan_size=a.scan_size or (100_000 if quick else 1_000_000),
        scan_repeat=a.scan_repeat or (1 if quick else 3),
        out=out,
        keep=bool(a.keep),
        quick=quick,
    )


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_args(argv)
    if GNU_TIME is None:
        print("bench_core: no GNU time; peak RSS figures are upper bounds", file=sys.stderr)
    started = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="reins-bench-core-"))
    print(f"bench_core: working in {work}", file=sys.stderr)
    bench = CoreBench(settings, work)
    steps: list[tuple[str, Callable[[], None]]] = [
        ("disk flush latency", bench.fsync_probe),
        ("building ledgers", bench.build),
        ("start-up", bench.startup),
        ("turns in process", bench.turns_in_process),
        ("commands as processes", bench.commands),
        ("fresh connections", bench.fresh_connections),
        ("disk flush latency", bench.fsync_probe),
        ("scan", bench.scan),
        ("import times", bench.import_times),
        ("profile of a turn", bench.profile_turns),
        ("query plans", bench.query_plans),
    ]
    try:
        for what, step in steps:
            print(f"- {what}", file=sys.stderr)
            step()
    finally:
        if settings.keep:
            print(f"bench_core: kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    report = bench.report(started)
    print_table(report)
    if settings.out is not None:
        settings.out.write_text(report, encoding="utf-8")
        print(f"\nbench_core: figures written to {settings.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
