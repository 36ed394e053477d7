"""A full disk is one clear error naming the file and the cause, and leaves no line cut short:
``reins export`` onto a full file system (a small tmpfs, mounted in a mount namespace of the
test's own) says so in one line, the file keeps whole lines only, and the next export, with
room again, writes every record once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit import ROOT, TINY_REF, Cli

pytestmark = pytest.mark.slow

PAGE = 4096
# A tmpfs of two pages, one taken by a filler: the export file gets one page, less than its
# three long records.
FULL = """
set -e
mount -t tmpfs -o size=8k tmpfs "$1"
head -c 4096 /dev/zero > "$1/filler"
target="$2"; seen="$3"; shift 3
set +e
"$@"
code=$?
cat "$target" > "$seen" 2>/dev/null
exit $code
"""


def test_export_onto_a_full_disk_says_so_in_one_line_and_leaves_whole_lines(
    cli: Cli, tmp_path: Path
) -> None:
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed to mount a small file system")
    assert cli("scan").exit_code == 0
    for key in "abc":
        answer = f"good {key * 3 * PAGE}"  # each record longer than a page
        assert cli("submit", "-k", key, input=answer).exit_code == 0
    small = tmp_path / "small"
    small.mkdir()
    target = small / "new.jsonl"
    seen = tmp_path / "seen.jsonl"  # the file as the full disk held it
    argv = [sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "export", "--out", str(target)]
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", FULL, "sh", str(small), str(target), str(seen), *argv],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"cannot write export file {target}: No space left on device" in said[0]
    held = seen.read_bytes()
    assert held == b"" or held.endswith(b"\n")  # no line cut short
    for line in held.splitlines():
        json.loads(line)

    out = cli("export", "--out", str(tmp_path / "roomy.jsonl"))  # room again: every record
    assert out.exit_code == 0, out.output
    keys = [json.loads(line)["key"] for line in (tmp_path / "roomy.jsonl").read_text().splitlines()]
    assert keys == ["a", "b", "c"]


LEDGER_ON_SMALL = """
set -e
mount -t tmpfs -o size=256k tmpfs "$1"
cp "$2" "$1/"
shift 2
exec "$@"
"""


def test_a_full_disk_under_the_ledger_is_one_line_naming_the_ledger_and_the_cause(
    cli: Cli, tmp_path: Path
) -> None:
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed to mount a small file system")
    assert cli("scan").exit_code == 0
    small = tmp_path / "small"
    small.mkdir()
    ledger = small / "tiny.reins.db"
    argv = [sys.executable, "-m", "reins.cli", "--quest", TINY_REF, "--ledger", str(ledger),
            "submit", "-k", "a"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", LEDGER_ON_SMALL, "sh", str(small),
         str(tmp_path / "tiny.reins.db"), *argv],
        cwd=tmp_path, env=env, input="good " + "x" * 400_000, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(said) == 1 and f"ledger {ledger}" in said[0], done.stderr
    assert "database or disk is full" in said[0]
