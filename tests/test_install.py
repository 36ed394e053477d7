"""The README's install route, for real: the wheel built from this checkout, installed into a fresh
virtual environment without any extra, runs a session of a pack that needs none, and says what
a pack that needs one is missing, with the pip line.

Slow: it builds the wheel (pip fetches hatchling from the package index, as any build does) and
installs it with its four dependencies into a new environment. Nothing else is downloaded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.kit import ROOT


def run(
    argv: list[str], cwd: Path, *, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``argv`` in ``cwd``, in an environment that does not point Python at this checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["REINS_DRIVER"] = "newcomer"
    return subprocess.run(
        argv, cwd=cwd, env=env, input=input, capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment holding the wheel of this checkout (no extra): its bin/."""
    root = tmp_path_factory.mktemp("install")
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", str(ROOT), "-w", "dist"], root)
    assert built.returncode == 0, built.stderr
    (wheel,) = (root / "dist").glob("reins_quest-*.whl")
    venv.EnvBuilder(with_pip=True).create(root / "venv")
    bin_ = root / "venv" / "bin"
    done = run([str(bin_ / "python"), "-m", "pip", "install", "--quiet", str(wheel)], root)
    assert done.returncode == 0, done.stderr
    return bin_


@pytest.mark.slow  # builds and installs the wheel, then runs reins from it
def test_the_wheel_in_a_fresh_environment_runs_a_session_and_names_missing_extras(
    installed: Path, tmp_path: Path
) -> None:
    """As a newcomer meets it: a session of a pack that needs no extra, then a pack that needs
    one, which `reins packs` says is missing (the environment has no extra) and `next`
    refuses with the pip line."""
    reins = str(installed / "reins")
    from reins import __version__

    version = run([reins, "--version"], tmp_path)
    assert version.stdout == f"reins, version {__version__}\n", version.stderr
    where = run([str(installed / "python"), "-c", "import reins; print(reins.__file__)"], tmp_path)
    assert where.stdout.startswith(str(installed.parent)), where.stdout  # not this checkout's
    assert run([reins, "new", "--pack", "example", "play"], tmp_path).returncode == 0
    scanned = run([reins, "-q", "play", "scan"], tmp_path)
    assert scanned.stdout.startswith("added 3 item(s)"), scanned.stderr
    leased = run([reins, "-q", "play", "next"], tmp_path)
    assert leased.returncode == 0 and "# item alpha" in leased.stdout, leased.stderr
    token = re.search(r"--token (\w+)", leased.stdout)
    assert token, leased.stdout
    answer = '{"answer": "ALPHA"}'
    args = [reins, "-q", "play", "submit", "-k", "alpha", "-t", token.group(1)]
    submitted = run(args, tmp_path, input=answer)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    assert submitted.stdout.startswith("alpha -> PASS")
    packs = run([reins, "packs"], tmp_path).stdout
    (ifeval,) = [line for line in packs.splitlines() if line.startswith("ifeval ")]
    assert "lm-eval" in ifeval and "pip install 'reins-quest[ifeval]'" in ifeval
    assert run([reins, "-q", "ifeval", "scan"], tmp_path).returncode == 0
    refused = run([reins, "-q", "ifeval", "next"], tmp_path)
    assert refused.returncode == 2 and refused.stdout == ""
    assert "pip install 'reins-quest[ifeval]'" in refused.stderr
    backends = run([reins, "backends", "local"], tmp_path).stdout
    assert "pip install 'reins-quest[local]'" in backends


def test_the_readme_names_the_install_route_with_its_extras() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    for line in ("pip install .", "pip install '.[", "pipx install '.[", "uv tool install '.["):
        assert line in section, line
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for extra in set(extras["optional-dependencies"]) - {"dev"}:
        assert f"`{extra}`" in section, extra
