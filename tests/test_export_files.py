"""`reins export` writes every lock to a file that does not hold it: `--out` a new file, or the
results file deleted; each file gets each record exactly once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.kit import Cli


def keys(path: Path) -> list[str]:
    return [json.loads(line)["key"] for line in path.read_text().splitlines()]


def locked(cli: Cli) -> Path:
    """a, b and c locked by submits (each exported to the results file as it locked)."""
    assert cli("scan").exit_code == 0
    for key in "abc":
        assert cli("submit", "-k", key, input="good").exit_code == 0
    results = cli.folder / "tiny-results.jsonl"
    assert keys(results) == ["a", "b", "c"]
    return results


def test_export_out_a_new_file_writes_every_lock_once(cli: Cli) -> None:
    results = locked(cli)
    out = cli("export", "--out", "new.jsonl")
    assert out.exit_code == 0 and out.stdout.startswith("exported 3 new record(s) to new.jsonl")
    assert keys(cli.folder / "new.jsonl") == ["a", "b", "c"]
    assert cli("export", "--out", "new.jsonl").stdout.startswith("exported 0 new record(s)")
    assert cli("export").stdout.startswith("exported 0 new record(s)")  # it held them already
    assert keys(results) == ["a", "b", "c"]
    assert (cli.folder / "new.jsonl").read_text() == results.read_text()


def test_a_deleted_results_file_is_written_again_once(cli: Cli) -> None:
    results = locked(cli)
    results.unlink()
    out = cli("export", "--json")
    assert out.exit_code == 0 and json.loads(out.stdout)["exported"] == 3
    assert keys(results) == ["a", "b", "c"]
    assert cli("export").stdout.startswith("exported 0 new record(s)")
    assert keys(results) == ["a", "b", "c"]
