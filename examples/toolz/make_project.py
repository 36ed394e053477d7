"""Make the toolz example's project: toolz 1.0.0 as released, then an "upgrade" that broke it.

    python make_project.py [FOLDER]     (default: project/ beside this file)

The folder becomes a git repository of two commits on ``main``: the sdist as released
(``toolz-1.0.0.tar.gz``, pinned by its SHA-256), then the commit the quests start from, which
changes a few lines the way a careless upgrade would (:data:`UPGRADE`). Its own test suite,
which ships in the sdist, then fails in a few dozen places: those are the items.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SDIST = HERE / "toolz-1.0.0.tar.gz"
SHA256 = "2c86e3d9a04798ac556793bced838816296a2f085017664e4995cb40a1047a02"
UPGRADE = [  # (file, as released, as the upgrade left it)
    ("toolz/itertoolz.py", "    return tail(1, seq)[0]\n", "    return tail(2, seq)[0]\n"),
    (
        "toolz/itertoolz.py",
        "    return filterfalse(predicate, seq)\n",
        "    return filter(predicate, seq)\n",
    ),
    (
        "toolz/dicttoolz.py",
        "        rv.update(d)\n",
        "        rv.update({k: v for k, v in d.items() if k not in rv})\n",
    ),
    (
        "toolz/recipes.py",
        "    return frequencies(map(key, seq))\n",
        "    return frequencies(seq)\n",
    ),
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
        top = "toolz-1.0.0/"
        for member in sdist.getmembers():
            if member.isfile() and member.name.startswith(top):
                target = folder / member.name[len(top) :]
                target.parent.mkdir(parents=True, exist_ok=True)
                extracted = sdist.extractfile(member)
                assert extracted is not None
                target.write_bytes(extracted.read())
    (folder / ".gitignore").write_text("__pycache__/\n*.egg-info/\n.mypy_cache/\n")
    git(folder, "init", "--quiet", "--initial-branch=main")
    git(folder, "add", "--all")
    git(folder, "commit", "--quiet", "-m", "toolz 1.0.0, as released on PyPI")
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
