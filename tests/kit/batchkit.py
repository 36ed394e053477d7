"""What the tests of `reins loop --batch` share: the steered fake model, the loop in-process
and in a child process (tests/batch/)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from click.testing import Result

from tests.kit import CHILD_PATH
from tests.kit.batchserver import KEY, Answer, Ask, BatchServer
from tests.kit.cli import reins

QUEST = "tests.kit:TINY"
FEEDBACK = "## Your last submission failed the gate"


def steered(ask: Ask) -> Answer:
    """b answers 'bad' until its prompt carries the gate's feedback; c 'meh'; the rest 'good'."""
    if FEEDBACK in ask.user:
        return "good"
    if "for b." in ask.user:
        return "bad"
    if "for c." in ask.user:
        return "meh"
    return "good"


def spec(server: BatchServer, provider: str, **options: str) -> str:
    return server.openai(**options) if provider == "openai" else server.anthropic(**options)


def cli(*args: str, quest: str = QUEST, ledger: Path | None = None) -> Result:
    where = ["--ledger", str(ledger)] if ledger is not None else []
    return reins("--quest", quest, *where, *args)


def batch_loop(
    server: BatchServer, provider: str, *args: str, quest: str = QUEST, ledger: Path | None = None
) -> Result:
    return cli("loop", "--batch", "--model", spec(server, provider), "--poll", "0.01", *args,
               quest=quest, ledger=ledger)  # fmt: skip


ROOT = Path(__file__).resolve().parent.parent.parent  # the repository
LOOP = """
import sys
from reins.cli import main
sys.argv = ["reins", *sys.argv[1:]]
main()
"""


def loop_command(
    server: BatchServer, provider: str, ledger: Path | str, crash: str | None, *extra: str
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment of ``reins loop --batch`` in a process of its own, killed at
    ``crash`` (a crash point); ``extra`` options come last (``--lease 600`` overrides the
    default ``--lease 1``)."""
    model = server.openai() if provider == "openai" else server.anthropic()
    env = {
        **os.environ,
        "PYTHONPATH": CHILD_PATH,
        "BATCH_KEY": KEY,
    }
    env.pop("REINS_CRASH_AT", None)
    if crash is not None:
        env["REINS_CRASH_AT"] = crash
    argv = ["--quest", "tests.kit:TINY", "--ledger", str(ledger), "loop", "--batch",
            "--model", model, "--poll", "0.01", "--lease", "1", "--no-export", *extra]  # fmt: skip
    return [sys.executable, "-c", LOOP, *argv], env


def run_loop(
    server: BatchServer, provider: str, ledger: Path | str, crash: str | None, *extra: str
) -> subprocess.CompletedProcess[str]:
    """:func:`loop_command`, run to its end."""
    argv, env = loop_command(server, provider, ledger, crash, *extra)
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120,
                          check=False)  # fmt: skip


def start_loop(
    server: BatchServer, provider: str, ledger: Path | str, *extra: str
) -> subprocess.Popen[bytes]:
    """:func:`loop_command` started, not waited for (its output discarded)."""
    argv, env = loop_command(server, provider, ledger, None, *extra)
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip


def item_turns(custom_ids: list[str]) -> Counter[tuple[str, int]]:
    """How many requests each (item key, turn) was sent in, read from the custom ids (the
    kit's keys are safe as they are: ``<tag>-<n>-<key>-t<turn>``)."""
    out: Counter[tuple[str, int]] = Counter()
    for cid in custom_ids:
        _, _, rest = cid.partition("-")
        _, _, rest = rest.partition("-")
        key, _, turn = rest.rpartition("-t")
        out[key, int(turn)] += 1
    return out
