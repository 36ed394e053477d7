"""The one process runner of every program generator (reins.backends.process): what a text CLI
and a coding agent both get from it, tried on real processes."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.backends import process
from reins.backends.process import Collected, Lines, Switch, Watch, Watchdogs, watched
from reins.workspace import processes as tree


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def dead(pid: int) -> bool:
    """Gone, or a zombie: either way it runs no more (a moment is allowed for the kernel)."""
    for _ in range(50):
        if not tree.alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_a_single_shot_cli_that_leaves_a_daemon_in_a_session_of_its_own_leaves_nothing(
    tmp_path: Path,
) -> None:
    """The attack on a group kill: the CLI answers, exits 0, and leaves a tool that moved to a
    new session (as Claude Code starts its tools). The run's marker still finds it."""
    pid_file = tmp_path / "daemon"
    code = (
        "import subprocess, sys\n"
        "d = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        f"open({str(pid_file)!r}, 'w').write(str(d.pid))\n"
        "print('the answer')\n"
    )
    done = asyncio.run(process.run(python(code), stdin=b"", timeout=30, cwd=str(tmp_path)))
    assert (done.returncode, done.stdout.strip()) == (0, "the answer")
    assert dead(int(pid_file.read_text()))


def test_a_timeout_ends_the_tree_and_says_so(tmp_path: Path) -> None:
    code = "import time\nprint('started', flush=True)\ntime.sleep(300)\n"
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"still running after 0\.5 s"):
        asyncio.run(process.run(python(code), stdin=b"", timeout=0.5, grace=0.5))
    assert time.monotonic() - started < 20


def test_stdin_none_is_dev_null_and_a_long_input_arrives_whole() -> None:
    seen: list[bytes] = []
    read = Lines(lambda line, _: seen.append(line))
    code = "import sys\nprint(len(sys.stdin.buffer.read()))\n"
    for stdin, want in ((None, b"0"), (b"z" * 2_000_000, b"2000000")):
        seen.clear()
        done = asyncio.run(watched(python(code), stdin=stdin, read=read, limits=Watchdogs()))
        assert (done.returncode, done.stopped, seen) == (0, None, [want])


def test_no_idle_watchdog_unless_asked_and_the_idle_one_names_its_flag() -> None:
    quiet = "import time\ntime.sleep(1.2)\nprint('late')\n"
    lines: list[bytes] = []
    done = asyncio.run(
        watched(python(quiet), stdin=None, read=Lines(lambda b, _: lines.append(b)),
                limits=Watchdogs(wall=60))
    )  # fmt: skip
    assert done.stopped is None and lines == [b"late"]
    done = asyncio.run(
        watched(python(quiet), stdin=None, read=Lines(lambda b, _: None),
                limits=Watchdogs(idle=0.4, grace=0.5), name="agent", flags={"idle": "--idle"})
    )  # fmt: skip
    assert done.stopped is not None and done.stopped.kind == "idle"
    assert done.stopped.message.startswith("agent: no output for 0.4 s (--idle): killed")
    assert done.returncode < 0  # ended by a signal


def test_a_reader_ends_the_run_and_its_first_reason_is_kept() -> None:
    code = "import time\nfor i in range(600):\n    print(i, flush=True); time.sleep(0.05)\n"

    def read(line: bytes, watch: Watch) -> None:
        if line == b"3":
            watch.stop("budget", "over the cap")
            watch.stop("abort", "a second reason")

    done = asyncio.run(
        watched(python(code), stdin=None, read=Lines(read), limits=Watchdogs(grace=0.5))
    )
    assert done.stopped == process.Stopped("budget", "over the cap")
    assert done.seconds < 20


def test_a_reader_that_raises_ends_the_run_instead_of_hanging_it() -> None:
    def read(chunk: bytes, watch: Watch) -> None:
        raise ValueError("bad bytes")

    code = "import time\nprint('x', flush=True)\ntime.sleep(300)\n"
    done = asyncio.run(
        watched(python(code), stdin=None, read=read, limits=Watchdogs(grace=0.5), name="p")
    )
    assert done.stopped == process.Stopped("abort", "p: its output could not be read: bad bytes")


def test_after_its_last_word_a_program_gets_linger_seconds_then_ends_without_a_stop() -> None:
    code = "import time\nprint('result', flush=True)\ntime.sleep(300)\n"
    done = asyncio.run(
        watched(python(code), stdin=None, read=Lines(lambda _, w: w.last_word()),
                limits=Watchdogs(linger=0.3, grace=0.5))
    )  # fmt: skip
    assert done.stopped is None and done.returncode < 0 and done.seconds < 20


def test_a_switch_stops_every_run_watching_it() -> None:
    async def both() -> list[process.Watched]:
        switch = Switch()
        code = "import time\ntime.sleep(300)\n"
        limits = Watchdogs(grace=0.5)
        runs = [
            asyncio.ensure_future(
                watched(
                    python(code),
                    stdin=None,
                    read=Collected(10),
                    limits=limits,
                    switch=switch,
                    name=f"r{n}",
                )
            )
            for n in range(2)
        ]
        await asyncio.sleep(0.5)
        switch.trip("the loop stops")
        return list(await asyncio.gather(*runs))

    ended = asyncio.run(both())
    assert [w.stopped for w in ended] == [
        process.Stopped("stop", f"r{n}: the loop stops: killed with its process tree")
        for n in range(2)
    ]


def test_collected_output_past_its_bound_ends_the_run(tmp_path: Path) -> None:
    code = "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n"
    out = Collected(100_000)
    done = asyncio.run(watched(python(code), stdin=None, read=out, limits=Watchdogs(grace=0.5)))
    assert done.stopped == process.Stopped("output", "more than 100000 bytes on stdout")
    assert len(out.text()) <= 100_000


@given(
    st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=8),
    st.lists(st.integers(1, 50), min_size=1, max_size=8),
)
def test_lines_hands_on_every_line_whatever_the_chunking(
    lines: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(line + b"\n" for line in lines)
    seen: list[bytes] = []
    read, watch, at, i = Lines(lambda b, _: seen.append(b)), Watch(), 0, 0
    while at < len(data):
        step = cuts[i % len(cuts)]
        read(data[at : at + step], watch)
        at, i = at + step, i + 1
    read(b"", watch)
    assert seen == lines


def test_an_endless_line_is_handed_on_by_its_start_and_the_next_line_still_comes() -> None:
    seen: list[bytes] = []
    read, watch = Lines(lambda b, _: seen.append(b), max_line=10), Watch()
    read(b"a" * 25, watch)
    read(b"a" * 25 + b"\nnext\n", watch)
    read(b"", watch)
    assert seen == [b"a" * 10, b"next"]
