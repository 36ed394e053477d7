"""The files of a judge's tree that reins puts in and takes out itself: the quest's hidden
tests (``[workspace] hidden``), listed and put in without following a link on either side, and
a whole tree wiped whatever a judged run left in it."""

from __future__ import annotations

import contextlib
import os
import shutil


def files(folder: str) -> list[str]:
    """Every file and link below ``folder``, by path from it (links listed, never followed)."""
    found = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        rel = os.path.relpath(top, folder)
        for name in sorted(files) + sorted(d for d in dirs if os.path.islink(os.path.join(top, d))):
            found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
    return sorted(found)


def place(hidden: str, tree: str) -> None:
    """Copy the hidden tests into ``tree``, which reins has just reset (no link of it leads a
    hidden file out: :func:`treefacts.hidden_clashes`). No link is followed on either side: a
    link among the hidden tests is copied as a link, and a link or file where a folder goes is
    replaced, never written through."""
    for name in files(hidden):
        source = os.path.join(hidden, name)
        target = os.path.join(tree, name)
        folder = tree
        for part in name.split("/")[:-1]:
            folder = os.path.join(folder, part)
            if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
                os.unlink(folder)
            if not os.path.lexists(folder):
                os.mkdir(folder)
        if os.path.islink(target) or os.path.isfile(target):
            os.unlink(target)
        elif os.path.isdir(target):
            shutil.rmtree(target)
        if os.path.islink(source):
            os.symlink(os.readlink(source), target)
        else:
            shutil.copyfile(source, target, follow_symlinks=False)


def wipe(folder: str) -> None:
    """Remove ``folder`` and everything in it, then make it again, empty: folders a judged run
    made unreadable or unwritable are opened up first (never through a link)."""
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o700)
    for top, dirs, _files in os.walk(folder, followlinks=False):
        for name in dirs:
            path = os.path.join(top, name)
            if not os.path.islink(path):
                with contextlib.suppress(OSError):
                    os.chmod(path, 0o700)
    shutil.rmtree(folder, ignore_errors=True)  # what stays in the way fails makedirs
    os.makedirs(folder)
