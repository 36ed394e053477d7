"""What a program's launch needs to see: its own files, its interpreter, its ``PATH``.

A sandbox that hides folders (or shows only a toolchain) must still show what starts the
program: a script and the interpreter its ``#!`` line names, the files a link points to, the
whole ``node_modules`` of a program installed by npm, a virtual environment's packages.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Sequence

from reins.sandbox.policy import Policy, below


def launched(argv: Sequence[str], policy: Policy) -> Policy:
    """``policy`` showing what launching ``argv`` needs (:func:`needed`) and would not see: in a
    host view, only what lies under a scratch folder or ``/dev`` (the rest is seen anyway).
    What a launch needs inside a hidden folder stays hidden: data, not programs."""
    found = needed(argv)
    if policy.view == "host":
        fresh = [s for s, _ in policy.scratch] + ["/dev"]
        found = [p for p in found if any(below(p, f) for f in fresh)]
    return dataclasses.replace(policy, readable=(*found, *policy.readable))


def needed(argv: Sequence[str], *, path: bool = True) -> list[str]:
    """The folders a launch needs to see: the folder of each file ``argv`` names (a program, a
    script; a folder named as an argument is data, not shown), the folder of what a link
    points to (``node_modules/.bin/claude`` is one), a whole ``node_modules`` on either path
    (a program installed by npm reads its siblings), a script's interpreter (its ``#!`` line,
    through ``env`` too) with its virtual environment, and (``path``) the folders on ``PATH``."""
    found = []
    for arg in [*argv, *_interpreters(argv)]:
        if not (os.path.isabs(arg) and os.path.isfile(arg)):
            continue
        for file in dict.fromkeys([arg, os.path.realpath(arg)]):
            folder = os.path.dirname(file)
            found.append(folder)
            parts = file.split(os.sep)
            if "node_modules" in parts:
                found.append(os.sep.join(parts[: parts.index("node_modules") + 1]))
            if os.path.basename(folder) in ("bin", "shims"):  # a virtual environment's
                found.append(os.path.dirname(folder))  # packages too; pyenv's shims need pyenv
    for folder in os.environ.get("PATH", "").split(os.pathsep) if path else ():
        if os.path.isabs(folder) and os.path.isdir(folder):
            found.append(os.path.realpath(folder))
            if os.path.basename(folder) in ("bin", "shims"):  # pyenv's shims need pyenv
                found.append(os.path.dirname(os.path.realpath(folder)))
    return list(dict.fromkeys(found))


def _interpreters(argv: Sequence[str]) -> list[str]:
    """The interpreter each script ``argv`` names starts with (its ``#!`` line; for
    ``#!/usr/bin/env NAME``, NAME found on ``PATH``)."""
    found = []
    for arg in argv:
        if not os.path.isfile(arg):
            continue
        try:
            with open(arg, "rb") as f:
                first = f.readline(256)
        except OSError:
            continue
        if first.startswith(b"#!"):
            words = first[2:].decode("utf-8", "replace").split()
            if words:
                found.append(words[0])
            if len(words) > 1 and os.path.basename(words[0]) == "env":
                which = shutil.which(words[1])
                if which:
                    found.append(which)
    return found
