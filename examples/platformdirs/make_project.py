"""Make the platformdirs example's project: platformdirs 4.4.0 as released, then an upgrade.

    python make_project.py [FOLDER]     (default: project/ beside this file)

The folder becomes a git repository of two commits on ``main``: the sdist as released
(``platformdirs-4.4.0.tar.gz``, pinned by its SHA-256) without its generated version file, which
the project's build writes (``src/platformdirs/version.py``, ignored by git, as upstream has
it); then the commit the quests start from, which changes a few lines the way a careless
upgrade would (:data:`UPGRADE`): three bugs its own suite catches, and two unused imports ruff
finds. The suite needs a pytest plugin (``pytest-mock``) and ``appdirs``, which the project's
environment holds, never reins'.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SDIST = HERE / "platformdirs-4.4.0.tar.gz"
SHA256 = "ca753cf4d81dc309bc67b0ea38fd15dc97bc30ce419a7f58d13eb3bf14c4febf"
GENERATED = "src/platformdirs/version.py"
UPGRADE = [  # (file, as released, as the upgrade left it)
    (
        "src/platformdirs/api.py",
        "                params.append(self.version)\n",
        "                params.insert(0, self.version)\n",
    ),
    (
        "src/platformdirs/unix.py",
        '            path = f"/usr/local/share{os.pathsep}/usr/share"\n',
        '            path = f"/usr/share{os.pathsep}/usr/local/share"\n',
    ),
    (
        "src/platformdirs/macos.py",
        'os.path.expanduser("~/Library/Caches"))',
        'os.path.expanduser("~/Library/Cache"))',
    ),
    ("src/platformdirs/android.py", "import re\n", "import re\nimport shutil\n"),
    ("src/platformdirs/windows.py", "import sys\n", "import sys\nimport textwrap\n"),
]
IDENTITY = {
    "GIT_AUTHOR_NAME": "upstream",
    "GIT_AUTHOR_EMAIL": "upstream@example.org",
    "GIT_COMMITTER_NAME": "upstream",
    "GIT_COMMITTER_EMAIL": "upstream@example.org",
}


def git(folder: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | IDENTITY
    subprocess.run(["git", *args], cwd=folder, env=env, check=True, capture_output=True)


def make(folder: Path) -> Path:
    data = SDIST.read_bytes()
    if hashlib.sha256(data).hexdigest() != SHA256:
        raise SystemExit(f"{SDIST.name} is not the pinned sdist (SHA-256 differs)")
    if folder.exists() and any(folder.iterdir()):
        raise SystemExit(f"{folder} exists and is not empty")
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(SDIST) as sdist:
        top = "platformdirs-4.4.0/"
        for member in sdist.getmembers():
            name = member.name[len(top) :]
            if member.isfile() and member.name.startswith(top) and name != GENERATED:
                target = folder / name
                target.parent.mkdir(parents=True, exist_ok=True)
                extracted = sdist.extractfile(member)
                assert extracted is not None
                target.write_bytes(extracted.read())
    git(folder, "init", "--quiet", "--initial-branch=main")
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "platformdirs 4.4.0, as released on PyPI")
    for name, released, upgraded in UPGRADE:
        path = folder / name
        text = path.read_text(encoding="utf-8")
        if text.count(released) != 1 or text.count(upgraded) != 0:
            raise SystemExit(f"{name}: expected one {released.strip()!r} and no {upgraded!r}")
        path.write_text(text.replace(released, upgraded), encoding="utf-8")
    git(folder, "commit", "--quiet", "-am", "upgrade: the careless kind")
    return folder


if __name__ == "__main__":
    print(make(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "project"))
