"""What building a judge's tree reads of a patch and finds in it.

It reads the paths the patch touches (as git lists them, never its diff text), the judge's test
files and pytest configuration of the base; it finds, in the tree's entries, the links that
lead out of the tree, modules that stand in for the standard library, and files where the
judge's hidden tests go. Each finding is a FAIL fact (a try used): a change that cannot be
judged as it stands is the change's fault, never the judge's.
"""

from __future__ import annotations

import re
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from reins.values import Fact

LINK_RULE = "reins:link"
SHADOW_RULE = "reins:shadow"
HIDDEN_RULE = "reins:hidden"
NAMED = 20
"""Facts of one kind named one by one; more are counted in one fact."""
HOPS = 40
"""The most links one path may pass through (the kernel's own limit): more is a loop."""

STARTUP = frozenset(
    {"pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py", "pygments", "exceptiongroup",
     "tomli", "colorama"}
)  # fmt: skip
"""The judge's own modules besides the standard library: a module of these names at the top of
the tree would stand in for one the judge imports later."""


TEST_FILE = re.compile(r"(?:^|/)(?:test_[^/]*|[^/]*_test)\.py$")
"""pytest's own names of test files: the judge's files that match are what its runs collect."""
CONFIGS = ("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml",
           "tox.ini", "setup.cfg")  # fmt: skip
"""pytest's configuration files, in the order pytest 9 looks for them in a folder."""


def configures(name: str, text: bytes | None) -> bool:
    """Whether the file ``name`` holding ``text`` (None: no such file) configures pytest (the
    files shared with other tools only when they have pytest's section)."""
    if text is None:
        return False
    sections = {"pyproject.toml": (b"[tool.pytest",), "tox.ini": (b"[pytest]",),
                "setup.cfg": (b"[tool:pytest]",)}  # fmt: skip
    wanted = sections.get(name)
    return wanted is None or any(w in text for w in wanted)


@dataclass(frozen=True, slots=True)
class Change:
    """One path a patch changed: its mode after the patch (``000000`` when deleted) and git's
    status letter (``A`` added, ``M`` modified, ``D`` deleted, ``T`` type changed)."""

    path: str
    mode: str
    status: str


def entries(raw: bytes) -> dict[str, tuple[str, str]]:
    """An index's entries as ``git ls-files -s -z`` prints them: path → (mode, object)."""
    found = {}
    for entry in raw.decode("utf-8", "surrogateescape").split("\0"):
        head, _, name = entry.partition("\t")
        if name:
            mode, obj, _stage = head.split()
            found[name] = (mode, obj)
    return found


def changes(raw: bytes) -> list[Change]:
    """The changes ``git diff-index -z --no-renames`` lists
    (``:old new old-object new-object STATUS`` then the path, each ended by a NUL)."""
    fields = raw.decode("utf-8", "surrogateescape").split("\0")
    found = []
    for head, path in zip(fields[::2], fields[1::2], strict=False):
        parts = head.lstrip(":").split()
        if len(parts) == 5 and path:
            found.append(Change(path, parts[1], parts[4][:1]))
    return found


def escaping(links: dict[str, str], changed: Iterable[str]) -> list[str]:
    """The links among ``changed`` that lead out of the tree, resolved as the kernel resolves a
    path: component by component, each link's target read in place (relative to its folder),
    chains of links followed, ``..`` above the top or an absolute target an escape, more than
    :data:`HOPS` links a loop (an escape too). ``links`` holds every link of the tree (path →
    target), those of the base included: a new link can lead out through an old one."""
    return [name for name in changed if name in links and resolve(name, links) is None]


def all_escaping(links: dict[str, str]) -> list[str]:
    """The links (path → target) that lead out of the tree, and those that do once those are
    gone: dropping one link can change where another leads, so again until none does."""
    links, found = dict(links), []
    while out := escaping(links, sorted(links)):
        found += out
        for name in out:
            del links[name]
    return found


def resolve(name: str, links: dict[str, str]) -> str | None:
    """The path inside the tree ``name`` leads to, or None when it leads out (or loops)."""
    parts = deque(name.split("/"))
    done: list[str] = []
    hops = 0
    while parts:
        part = parts.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not done:
                return None
            done.pop()
            continue
        done.append(part)
        target = links.get("/".join(done))
        if target is None:
            continue
        hops += 1
        if hops > HOPS or target.startswith("/"):
            return None
        done.pop()
        parts.extendleft(reversed(target.split("/")))
    return "/".join(done)


def link_facts(names: list[str]) -> list[Fact]:
    actual = "a symbolic link that leads out of the tree (followed as the system would)"
    return named(names, LINK_RULE, "a link to a file inside the repository", actual)


def shadows(added: Iterable[str]) -> list[str]:
    """The paths among ``added`` that make a module at the top of the tree named like one of
    the standard library or of the judge's own (``json.py``, ``pytest/__init__.py``): the tree
    is on the judged run's import path, so it would stand in for the judge's own module. A
    folder of data (``test/``, ``html/``) is no module and no fact."""
    names = sys.stdlib_module_names | STARTUP
    found = []
    for path in added:
        parts = path.split("/")
        if len(parts) == 1 and path.endswith(".py"):
            module = path.removesuffix(".py")
        elif len(parts) == 2 and parts[1] == "__init__.py":
            module = parts[0]
        else:
            continue
        if module in names:
            found.append(path)
    return found


def shadow_facts(paths: list[str]) -> list[Fact]:
    return named(paths, SHADOW_RULE, "no module at the top named like one of Python's own",
                 "it would stand in for the module the judge imports")  # fmt: skip


def hidden_clashes(hidden: Iterable[str], entries: set[str]) -> bool:
    """Whether the tree has a file or link (an entry of ``entries``) where a hidden test or one
    of its folders goes: the hidden tests could not be put in without following it."""
    for path in hidden:
        parts = path.split("/")
        if any("/".join(parts[:n]) in entries for n in range(1, len(parts))):
            return True
    return False


def hidden_fact() -> Fact:
    """The fact of a change that takes the hidden tests' place (never naming it: a hidden
    test's name must reach no prompt)."""
    return Fact(where="the change", expected="no file where the judge's own tests go",
                actual="the change puts a file or link where a folder of the judge's tests is",
                rule=HIDDEN_RULE)  # fmt: skip


def named(paths: list[str], rule: str, expected: str, actual: str) -> list[Fact]:
    """A fact per path, the first :data:`NAMED` by name and the rest counted in one."""
    facts = [Fact(where=f"file {name}", expected=expected, actual=actual, rule=rule)
             for name in paths[:NAMED]]  # fmt: skip
    if len(paths) > NAMED:
        more = f"{len(paths) - NAMED} more files like these"
        facts.append(Fact(where="the change", expected=expected, actual=more, rule=rule))
    return facts
