"""Quest packs: ready quests shipped as documents, one folder each (``quest.toml``, ``gate.md``,
their items and a README with the source and licence).

``reins -q NAME`` loads the pack NAME; ``reins packs`` lists them; ``reins new --pack NAME DIR``
copies one for editing. Each pack is also an entry point of the ``reins.quests`` group
(``ifeval = "reins.packs:ifeval_pack"``): this module answers ``<name>_pack`` with a function
that loads it. (Not the bare name: a pack with Python code of its own is also a subpackage,
and once imported, ``reins.packs.<name>`` is that module.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reins.quest import Quest

HERE = Path(__file__).parent


def folders() -> dict[str, Path]:
    """Every shipped pack: name → its folder (one holding a quest.toml), sorted by name."""
    return {
        p.name: p
        for p in sorted(HERE.iterdir())
        if p.is_dir() and not p.name.startswith(("_", ".")) and (p / "quest.toml").is_file()
    }


def meant(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'emails'?)`` for a name close to a known one (a typo), else ""."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=2)
    return f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""


def folder(name: str) -> Path:
    """The folder of pack ``name``.

    Raises:
        NotFound: no pack has that name (the message lists the known ones).
    """
    path = HERE / name
    if name.startswith(("_", ".")) or "/" in name or not (path / "quest.toml").is_file():
        from reins.errors import NotFound

        known = ", ".join(folders()) or "none"
        raise NotFound(f"no pack named {name!r}{meant(name, folders())}. Known: {known}")
    return path


def load_pack(name: str) -> Quest:
    """The quest of pack ``name``, loaded from its documents.

    Raises:
        NotFound: no such pack.
        DocumentError: its documents do not load (an extra it needs is missing, say).
    """
    from reins.declare.questdoc import load_folder

    return load_folder(folder(name))


SUFFIX = "_pack"


def __getattr__(attr: str) -> Callable[[], Quest]:
    """``reins.packs.<name>_pack``: a function loading pack NAME (what entry points name)."""
    name = attr.removesuffix(SUFFIX)
    if name == attr or name.startswith("_") or not (HERE / name / "quest.toml").is_file():
        raise AttributeError(f"module 'reins.packs' has no attribute {attr!r}")

    def load() -> Quest:
        return load_pack(name)

    load.__name__ = attr
    return load
