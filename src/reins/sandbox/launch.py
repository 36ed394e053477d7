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

from reins.sandbox.policy import SYSTEM, Policy, below


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
    """What a launch needs to see: for each file ``argv`` names and each script's interpreter
    (its ``#!`` line, through ``env`` too; the file a link points to as well), the whole
    installation it lies in (a ``node_modules``, a virtual environment or pyenv's root, from
    its ``bin`` or ``shims`` folder), else for a binary program its folder (libraries beside
    it), else the file alone (a script, or data the command line hands over: not the project
    folder around it, where the ledger and the results are); a folder named is not shown; and
    (``path``) the folders on ``PATH``."""
    found = []
    programs = [*argv[:1], *_interpreters(argv)]
    for arg in [*programs, *argv[1:]]:
        if not (os.path.isabs(arg) and os.path.isfile(arg)):
            continue
        for file in dict.fromkeys([arg, os.path.realpath(arg)]):
            if any(below(file, s) for s in SYSTEM):
                continue  # a system folder is shown whole (and "/bin"'s parent is everything)
            folder = os.path.dirname(file)
            parts = file.split(os.sep)
            if "node_modules" in parts:  # a program installed by npm reads its siblings
                found += [folder, os.sep.join(parts[: parts.index("node_modules") + 1])]
            elif os.path.basename(folder) in ("bin", "shims"):  # a virtual environment's
                found += [folder, os.path.dirname(folder)]  # packages; pyenv's shims, pyenv
            elif arg in programs and not _text(file):
                found.append(folder)
            else:
                found.append(file)
    for folder in os.environ.get("PATH", "").split(os.pathsep) if path else ():
        if any(below(folder, s) for s in SYSTEM):
            continue
        if os.path.isabs(folder) and os.path.isdir(folder):
            found.append(os.path.realpath(folder))
            if os.path.basename(folder) in ("bin", "shims"):  # pyenv's shims need pyenv
                found.append(os.path.dirname(os.path.realpath(folder)))
    return list(dict.fromkeys(found))


def _text(path: str) -> bool:
    """Whether the file ``path`` is a script (a ``#!`` line) rather than a binary program."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


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
