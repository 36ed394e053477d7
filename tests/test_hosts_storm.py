"""Three hosts, one PostgreSQL ledger, one remote, and a SIGKILL storm on two of them (issue 42):
the quest ends as on one host, every item locked once, every PASS on the remote, one
integration, one results file.

Each host (tests/kit/hosts.py) is a folder holding only the quest's documents, with a host name
and a pid namespace of its own where the machine allows it (else one host name for all: what a
host can tell of another's processes is then more than a real one could, and the land lease
below is taken over at once). The remote is a bare repository served on 127.0.0.1 by ``git
daemon``. The quest (tests/kit/landkit.py) has twelve items, two of which conflict when landed;
its agent is the stand-in of ``cmd:`` (no model). Host one and host two run ``reins loop`` and
are SIGKILLed at seeded random moments, restarted, killed again; host three runs one loop
throughout. A ``reins land`` killed on host one (between its ref and its journal, a few
landings in) is finished on host two, and the result is compared with a reference: the same
quest worked and landed on a single host, with its own remote and ledger.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from reins.errors import Exit
from reins.store.postgres import PostgresStore
from reins.store.walk import iter_items
from tests.kit.codingkit import agent, git
from tests.kit.hosts import GitDaemon, Host, make_host, namespaces
from tests.kit.landkit import STAND_IN, land_quest, stand_in

pytestmark = pytest.mark.slow

SEED = 42
KEYS = [f"k{n:02d}" for n in range(1, 13)]
SHARED = ("k04", "k09")  # both edit shared.txt's slot: k09 conflicts when landed after k04
KILLS = 5  # per storming host
LEASE = "8"  # seconds: what a host that sees another's dead loop waits at most
LAND = ("land", "integration", "--order", "key")
LEASE_META = "land.lease"
AGENT_SECONDS = 1.5  # the stand-in's work takes this long: the kills find agents at work


def slow_stand_in(folder: Path) -> str:
    return (
        f"cmd:{agent(folder / 'slow.py', f'import time; time.sleep({AGENT_SECONDS})' + STAND_IN)}"
    )


@pytest.fixture
def world(tmp_path: Path, postgres_url: str) -> Iterator[dict[str, Any]]:
    """The quest's source, the remote (served, and a pristine copy for the reference), two
    ledgers (the hosts', the reference's) and three hosts."""
    items = [{"id": k, "shared": k in SHARED} for k in KEYS]
    source = land_quest(tmp_path / "source" / "q", items, limit=len(KEYS) + 5)
    served = tmp_path / "served"
    served.mkdir()
    git(tmp_path, "clone", "--quiet", "--bare", str(source), str(served / "remote.git"))
    shutil.copytree(served / "remote.git", tmp_path / "reference" / "remote.git")
    daemon = GitDaemon(served)
    isolated = namespaces()
    made: list[Host] = []
    try:
        for name in ("host-one", "host-two", "host-three"):
            made.append(make_host(tmp_path, name, source, daemon.url("remote.git"),
                                  isolated=isolated))  # fmt: skip
        alone = make_host(tmp_path, "reference-host", source,
                          str(tmp_path / "reference" / "remote.git"), isolated=False)  # fmt: skip
        schema = os.urandom(4).hex()
        yield {
            "hosts": made,
            "alone": alone,
            "remote": served / "remote.git",
            "reference": tmp_path / "reference" / "remote.git",
            "ledger": f"{postgres_url}?schema=storm_{schema}",
            "reference_ledger": f"{postgres_url}?schema=alone_{schema}",
            "isolated": isolated,
            "logs": tmp_path,
        }
    finally:
        for host in made:
            host.close()
        daemon.close()


def ok(done: subprocess.CompletedProcess[str], *codes: int) -> str:
    assert done.returncode in (codes or (0,)), done.stdout + done.stderr
    return done.stdout + done.stderr


def storm(host: Host, ledger: str, seed: int, log: Path) -> list[int]:
    """``reins loop`` on ``host`` SIGKILLed at random moments, restarted, KILLS times; then a
    loop to its end. The exit of each run (-9: killed)."""
    rng = random.Random(seed)
    model = slow_stand_in(host.folder)
    codes = []
    with log.open("a") as out:
        for _ in range(KILLS):
            proc = host.start(ledger, "loop", "--model", model, "--lease", LEASE, "-c", "2",
                              log=out)  # fmt: skip
            try:
                codes.append(proc.wait(timeout=rng.uniform(1.0, 5.0)))
            except subprocess.TimeoutExpired:
                host.kill(proc)
                codes.append(proc.wait(timeout=120))
    last = host.run(ledger, "loop", "--model", model, "--lease", LEASE)
    with log.open("a") as out:
        out.write(last.stdout + last.stderr)
    return [*codes, last.returncode]


def steady(host: Host, ledger: str, log: Path) -> int:
    done = host.run(ledger, "loop", "--model", slow_stand_in(host.folder), "--lease", LEASE)
    log.write_text(done.stdout + done.stderr)
    return done.returncode


def locks(ledger: str) -> dict[str, tuple[str, list[int], str | None]]:
    """Each item: its state, its turns in the order recorded, its last turn's commit."""
    with PostgresStore.open(ledger) as led:
        found = {}
        for item in iter_items(led):
            _, log = led.snapshot(item.key)
            commit = log[-1].notes.commit if log else None
            found[item.key] = (item.state.value, [a.turn for a in log], commit)
        return found


def on(remote: Path, ref: str) -> str:
    return git(remote, "rev-parse", "--verify", "--quiet", ref).strip()


def landed(remote: Path) -> list[str]:
    log = git(remote, "log", "--first-parent", "--reverse",
              "--format=%(trailers:key=Reins-Landed,valueonly)", "integration")  # fmt: skip
    return [line for line in log.splitlines() if line]


def test_three_hosts_under_a_sigkill_storm_end_as_one_host_would(world: dict[str, Any]) -> None:
    one, two, three = world["hosts"]
    ledger, remote, logs = world["ledger"], world["remote"], world["logs"]
    ok(three.run(ledger, "scan"))

    # The storm: hosts one and two killed and restarted, host three working throughout.
    with ThreadPoolExecutor(3) as pool:
        storms = [pool.submit(storm, h, ledger, SEED + n, logs / f"{h.name}.log")
                  for n, h in enumerate((one, two))]  # fmt: skip
        calm = pool.submit(steady, three, ledger, logs / "host-three.log")
        codes = [s.result() for s in storms]
        (logs / "storm.json").write_text(json.dumps(codes))  # -9: a loop killed
        assert calm.result() == 0, (logs / "host-three.log").read_text()
    for host, ran in zip((one, two), codes, strict=True):
        assert ran[-1] == 0, (logs / f"{host.name}.log").read_text()

    found = locks(ledger)
    assert sorted(found) == KEYS
    for key, (state, turns, commit) in found.items():
        assert state == "PASS", (key, turns)
        assert turns == list(range(1, len(turns) + 1)), f"{key}: a turn recorded twice: {turns}"
        assert commit and on(remote, f"refs/heads/reins/q/{key}") == commit, key

    # A land killed on host one, a few landings in, between the integration's ref and the
    # journal; finished on host two.
    nth = random.Random(SEED).randint(2, 7)
    killed = one.run(ledger, *LAND, env={**os.environ, "REINS_CRASH_AT": f"land-ref:{nth}"})
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    if world["isolated"]:
        # Host two cannot tell that host one's land is gone: it waits out the land lease.
        said = ok(two.run(ledger, *LAND), Exit.USAGE)
        assert "another `reins land` is running" in said
        expire_land_lease(ledger)  # the lease's minute, passed
    said = ok(two.run(ledger, *LAND), Exit.NOT_LANDED)
    assert "land/k09" in said
    ok(three.run(ledger, "loop", "--model", stand_in(three.folder), "--lease", LEASE))
    said = ok(two.run(ledger, *LAND))

    # The reference: the same quest on one host, its own remote and ledger, nothing killed.
    alone, reference, mine = world["alone"], world["reference"], world["reference_ledger"]
    ok(alone.run(mine, "scan"))
    ok(alone.run(mine, "loop", "--model", stand_in(alone.folder)))
    ok(alone.run(mine, *LAND), Exit.NOT_LANDED)
    ok(alone.run(mine, "loop", "--model", stand_in(alone.folder)))
    ok(alone.run(mine, *LAND))

    assert on(remote, "integration^{tree}") == on(reference, "integration^{tree}")
    expected = [k for k in KEYS if k != "k09"] + ["k09"]
    assert landed(remote) == landed(reference) == expected
    found = locks(ledger)
    assert sorted(found) == sorted([*KEYS, "land/k09"])
    assert found["land/k09"][0] == "PASS"
    branches = git(remote, "for-each-ref", "--format=%(refname)", "--points-at",
                   str(found["land/k09"][2]), "refs/heads/reins/q/")  # fmt: skip
    assert branches.startswith("refs/heads/reins/q/land-k09-"), branches
    fsck = subprocess.run(["git", "fsck", "--full", "--no-dangling"], cwd=remote,
                          capture_output=True, text=True)  # fmt: skip
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr

    # The landed branch's whole suite, run by hand too, in a clone of the remote.
    clone = logs / "landed"
    git(logs, "clone", "--quiet", "--branch", "integration", str(remote), str(clone))
    suite = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                           cwd=clone, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert suite.returncode == 0, suite.stdout + suite.stderr

    ok(three.run(ledger, "ledger", "check"))
    # One file with every lock once, from any host. The loops' own files (one a host, each
    # appended to by the loops of its host) hold no lock twice either; a host whose loops were
    # all killed before they exported has none.
    every = logs / "every.jsonl"
    ok(one.run(ledger, "export", "--out", str(every)))
    assert sorted(exported(every)) == sorted(found)
    for host in (one, two, three):
        own = host.folder / "q-results.jsonl"
        twice = Counter(exported(own) if own.exists() else []) - Counter(list(found))
        assert not twice, (host.name, twice)


def exported(path: Path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text().splitlines()]


def expire_land_lease(ledger: str) -> None:
    """The ledger's land lease, aged past its end, as its minute would (the holder kept)."""
    with PostgresStore.open(ledger) as led:
        held = led.meta(LEASE_META)
        assert held is not None
        aged = {**json.loads(held), "until": 0}
        assert led.swap_meta(LEASE_META, held, json.dumps(aged))
