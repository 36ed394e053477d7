"""The runner every coding agent goes through: stdin closed after the prompt, a clean
environment, the watchdogs, the budget guard, and a kill that leaves no process behind."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from reins.backends.process import Switch, Watchdogs
from reins.coders.cmd import CmdAgent
from reins.coders.protocol import Done, Ending, Launch, Session, Spent
from reins.coders.runner import RunEnd, run_agent
from reins.errors import ConfigError
from reins.values import Prompt
from reins.workspace import processes as tree
from tests.kit.codingkit import agent


def session(tmp_path: Path, text: str = "do the task") -> Session:
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    return Session(Prompt("the manual", text), str(work), str(home))


def run(script: Path, s: Session, **kw: object) -> RunEnd:
    return asyncio.run(run_agent(CmdAgent(str(script), {}), s, **kw))  # type: ignore[arg-type]


def gone(pid: int) -> bool:
    return not tree.alive(pid)


def test_the_prompt_arrives_on_stdin_never_in_argv_and_stdin_is_closed(tmp_path: Path) -> None:
    script = agent(
        tmp_path / "a.py",
        "import sys, json\n"
        "text = sys.stdin.read()\n"  # returns: stdin was closed after the prompt
        "print(json.dumps({'argv': sys.argv[1:], 'stdin': text}))\n",
    )
    out = run(script, session(tmp_path, "SECRET TASK"))
    assert out.error is None, out.error
    assert '"argv": []' in out.message
    assert "the manual\\n\\nSECRET TASK" in out.message


def test_the_environment_is_clean_and_a_key_passes_only_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REINS_TEST_SECRET", "s3cr3t")
    monkeypatch.setenv("MY_API_KEY", "k3y")
    script = agent(
        tmp_path / "a.py",
        "import os\nfor k in sorted(os.environ): print(k + '=' + os.environ[k])\n",
    )
    s = session(tmp_path)
    plain = run(script, s)
    assert "s3cr3t" not in plain.message and "k3y" not in plain.message
    assert f"HOME={s.home}" in plain.message
    assert f"TMPDIR={s.home}/tmp" in plain.message
    named = asyncio.run(run_agent(CmdAgent(str(script), {"env": "MY_API_KEY"}), s))
    assert "MY_API_KEY=k3y" in named.message and "s3cr3t" not in named.message


def test_an_agent_silent_past_the_idle_limit_is_killed_with_its_whole_tree(tmp_path: Path) -> None:
    """The agent starts a tool in a session of its own (as Claude Code does), which a kill of
    the agent's process group would miss, and a daemon that double-forks away."""
    pids = tmp_path / "pids"
    script = agent(
        tmp_path / "a.py",
        "import os, subprocess, sys, time\n"
        f"tool = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        os.setsid(); time.sleep(300)\n"
        "    os._exit(0)\n"
        "time.sleep(0.3)\n"
        f"open({str(pids)!r}, 'w').write(str(tool.pid))\n"
        "print('working', flush=True)\n"
        "time.sleep(300)\n",
    )
    s = session(tmp_path)
    out = run(script, s, limits=Watchdogs(idle=1.5, wall=60, grace=0.5))
    assert out.killed == "idle"
    assert out.error is not None and "no output for 1.5 s" in out.error
    assert gone(int(pids.read_text()))
    assert tree.marked(f"{s.cwd}#") == set(), "a process of the run survived"


def test_an_agent_that_keeps_talking_past_the_wall_time_is_killed(tmp_path: Path) -> None:
    script = agent(
        tmp_path / "a.py",
        "import time\nwhile True:\n    print('still thinking', flush=True); time.sleep(0.1)\n",
    )
    out = run(script, session(tmp_path), limits=Watchdogs(idle=30, wall=1.0, grace=0.5))
    assert out.killed == "wall" and out.error is not None and "still running after 1 s" in out.error


def test_usage_lines_are_metered_as_they_come_and_a_guard_kills_at_its_cap(
    tmp_path: Path,
) -> None:
    script = agent(
        tmp_path / "a.py",
        "import json, time\n"
        "for i in range(100):\n"
        "    print(json.dumps({'reins': {'input_tokens': 100, 'output_tokens': 10, 'cost': 0.01}}),"
        " flush=True)\n"
        "    time.sleep(0.05)\n",
    )
    seen: list[Spent] = []

    def guard(spent: Spent) -> str | None:
        seen.append(spent)
        return "over 500 tokens" if spent.tokens >= 500 else None

    out = run(script, session(tmp_path), guard=guard, limits=Watchdogs(grace=0.5))
    assert out.killed == "budget" and out.error is not None and "over 500 tokens" in out.error
    assert [s.tokens for s in seen][:5] == [110, 220, 330, 440, 550]
    assert out.usage.input_tokens >= 500 and out.usage.cost is not None
    assert len(seen) < 100


def test_a_switch_stops_a_run_in_flight(tmp_path: Path) -> None:
    script = agent(tmp_path / "a.py", "import time\nprint('go', flush=True)\ntime.sleep(300)\n")

    async def go() -> RunEnd:
        switch = Switch()
        task = asyncio.ensure_future(
            run_agent(CmdAgent(str(script), {}), session(tmp_path), switch=switch)
        )
        await asyncio.sleep(0.5)
        switch.trip("the run stopped (interrupted)")
        return await task

    out = asyncio.run(go())
    assert out.killed == "stop" and out.error is not None and "the run stopped" in out.error


def test_a_failing_agent_is_a_generation_error_quoting_its_stderr(tmp_path: Path) -> None:
    script = agent(tmp_path / "a.py", "import sys\nprint('oops', file=sys.stderr)\nsys.exit(3)\n")
    out = run(script, session(tmp_path))
    assert out.killed is None and out.error == "cmd: exit code 3: oops"


def test_a_program_that_cannot_start_is_an_error_not_a_crash(tmp_path: Path) -> None:
    script = tmp_path / "a.py"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    out = run(script, session(tmp_path))
    assert out.error is not None and "cannot start" in out.error


def test_cmd_refuses_a_program_that_is_not_there() -> None:
    with pytest.raises(ConfigError, match="not an executable"):
        CmdAgent("./no-such-agent --flag", {})
    with pytest.raises(ConfigError, match="not found on PATH"):
        CmdAgent("no-such-agent-anywhere", {})


class _Files:
    """An adapter that writes a config below HOME and sets a variable: the protocol's reach."""

    name = "files"

    def __init__(self, script: Path) -> None:
        self.script = script

    def launch(self, s: Session) -> Launch:
        return Launch(
            argv=(str(self.script),), env={"MODE": "quiet"}, files={".tool/config": "x = 1\n"}
        )

    def parser(self) -> _Lines:
        return _Lines()


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def line(self, text: str) -> list[Spent]:
        self.lines.append(text)
        return []

    def end(self, returncode: int, stderr: str) -> Ending:
        return Ending("\n".join(self.lines), usage=Spent(7, 3, 0.5), model="m1")


def test_an_adapter_gets_its_files_its_variables_and_its_reported_totals(tmp_path: Path) -> None:
    script = agent(
        tmp_path / "a.py",
        "import os\nprint(open(os.path.expanduser('~/.tool/config')).read().strip())\n"
        "print(os.environ['MODE'])\n",
    )
    out = asyncio.run(run_agent(_Files(script), session(tmp_path)))
    assert out.message == "x = 1\nquiet"
    assert (out.usage, out.model) == (Spent(7, 3, 0.5), "m1")


class _Result:
    """An adapter whose agent's last word is a ``RESULT`` line (as Claude Code's result)."""

    name = "said-done"

    def __init__(self, script: Path) -> None:
        self.script = script

    def launch(self, session: Session) -> Launch:
        return Launch(argv=(str(self.script),))

    def parser(self) -> _ResultParser:
        return _ResultParser()


class _ResultParser:
    def __init__(self) -> None:
        self.said = ""

    def line(self, text: str) -> list[Done]:
        if text.startswith("RESULT "):
            self.said = text.removeprefix("RESULT ")
            return [Done()]
        return []

    def end(self, returncode: int, stderr: str) -> Ending:
        return Ending(self.said)


def test_an_agent_that_hangs_after_its_last_word_is_ended_and_its_work_kept(
    tmp_path: Path,
) -> None:
    pidfile = tmp_path / "pid"
    script = agent(
        tmp_path / "a.py",
        "import os, time\n"
        f"open({str(pidfile)!r}, 'w').write(str(os.getpid()))\n"
        "print('RESULT all done', flush=True)\n"
        "time.sleep(300)\n",
    )
    limits = Watchdogs(idle=120, wall=120, grace=1, linger=0.5)
    out = asyncio.run(run_agent(_Result(script), session(tmp_path), limits=limits))
    assert (out.error, out.killed, out.message) == (None, None, "all done")
    assert gone(int(pidfile.read_text()))
