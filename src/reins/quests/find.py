"""Finding a quest by reference: a folder, a pack's name, ``module:attr`` or an entry point.

This is the layer above the quest contract (:mod:`reins.quest`), the document reader
(:mod:`reins.declare`) and the shipped packs (:mod:`reins.packs`): it reaches each only for the
kind of reference that needs it, so ``reins submit`` on a Python quest imports no document
reader. ``reins.load_quest`` is :func:`load_quest`.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from reins.errors import ConfigError, NotFound
from reins.quest import Quest

ENTRY_POINT_GROUP = "reins.quests"
# Built-in quests, also registered as entry points; looked up here first because reading
# entry points (importlib.metadata) costs about 25 ms at every CLI start.
BUILTIN_QUESTS = {"emails": "reins.quests.emails:quest"}


def load_quest(ref: str, *, folder: str | os.PathLike[str] | None = None) -> Quest:
    """Resolve a quest reference.

    ``ref`` is a folder holding ``quest.toml`` (or the path of a quest.toml), the name of a
    shipped pack, ``package.module:attr``, or the name of an installed ``reins.quests`` entry
    point. A quest with examples is refused if one of them does not pass its own gate.
    ``folder``: where a ``module:attr`` that is no installed module imports from (the folder of
    the reins.toml that names it); by default the working folder.

    Raises:
        NotFound: no such folder, pack, entry point, module or attribute.
        ConfigError: the reference does not name a Quest; a document does not load
            (:class:`~reins.errors.DocumentError`); an example fails its gate.
    """
    ref = BUILTIN_QUESTS.get(ref, ref)
    if looks_like_a_path(ref) and not is_folder_ref(ref):
        raise _no_folder(ref)
    if is_folder_ref(ref):
        from reins.declare.questdoc import load_folder

        return load_folder(ref)  # its examples are checked there, at their lines
    if ":" not in ref and ref.isidentifier():
        from reins.packs import HERE

        if (HERE / ref / "quest.toml").is_file():
            from reins.packs import load_pack

            return load_pack(ref)
    quest = _resolve(ref, folder)
    if quest.examples:
        from reins.declare.examples import check_examples

        check_examples(quest)
    return quest


def quest_origin(ref: str) -> str:
    """Where ``ref`` loads its quest from, as a reference that loads it again from anywhere: a
    folder (or a quest file not named quest.toml) as its absolute path, anything else (a
    pack's name, ``module:attr``, an entry point) as given."""
    if not is_folder_ref(ref):
        return ref
    from pathlib import Path

    path = Path(ref).resolve()
    return str(path.parent if path.name == "quest.toml" else path)


def is_folder_ref(ref: str) -> bool:
    """Whether ``ref`` names a quest folder or a quest.toml rather than a module or a name."""
    if ref.endswith(".toml"):
        return True
    if ":" in ref and not os.path.isdir(ref):
        return False
    return os.path.isfile(os.path.join(ref, "quest.toml"))


def looks_like_a_path(ref: str) -> bool:
    """Whether ``ref`` can only mean a folder: it has a path separator, or starts with ``.``
    or ``~`` (a module reference has neither before its colon; a name has none at all)."""
    head = ref.partition(":")[0] if ":" in ref and not os.path.isdir(ref) else ref
    return head.startswith((".", "~")) or "/" in head or os.sep in head


def _no_folder(ref: str) -> NotFound:
    """Why ``ref``, a path, loads no quest: it does not exist, or holds no quest.toml."""
    from pathlib import Path

    path = Path(ref).expanduser()
    where = path.resolve()
    if not path.exists():
        return NotFound(
            f"no quest folder {ref!r}: {where} does not exist. Give the folder that holds "
            "quest.toml (`reins init --template declarative` writes one), or a pack's name "
            "(`reins packs` lists them)"
        )
    if path.is_dir():
        return NotFound(
            f"no quest in {ref!r}: the folder {where} holds no quest.toml. Give the folder "
            "that holds it (`reins init --template declarative` writes one)"
        )
    return NotFound(f"no quest in {ref!r}: {where} is a file, not a quest folder or quest.toml")


def known_quests() -> list[str]:
    """Every quest a name loads: the shipped packs and the installed entry points."""
    from importlib.metadata import entry_points

    from reins.packs import folders

    names = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return sorted(names | set(folders()) | set(BUILTIN_QUESTS))


def _resolve(ref: str, folder: str | os.PathLike[str] | None = None) -> Quest:
    """A Python quest: ``package.module:attr`` or an entry point's name."""
    if ":" in ref:
        module_name, _, attr = ref.partition(":")
        # Quests beside reins.toml import like scripts do, from wherever a command runs.
        where = "" if folder is None else os.fspath(folder)
        if where not in sys.path and not (where == "" and "." in sys.path):
            sys.path.insert(0, where)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                raise NotFound(f"quest {ref!r}: no module named {exc.name!r}") from exc
            raise _broken(ref, f"module {module_name} failed to import", exc) from exc
        except Exception as exc:  # a syntax error, or anything its top level raises
            raise _broken(ref, f"module {module_name} failed to import", exc) from exc
        obj: Any = module
        for part in attr.split("."):
            try:
                obj = getattr(obj, part)
            except AttributeError as exc:
                raise NotFound(f"quest {ref!r}: module {module_name} has no {attr!r}") from exc
    else:
        from importlib.metadata import entry_points

        found = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        if ref not in found:
            if os.path.isdir(ref):  # a folder of that name is here: it is what was meant
                raise _no_folder(ref)
            from reins.packs import meant

            known = ", ".join(known_quests()) or "none installed"
            raise NotFound(
                f"no quest named {ref!r}{meant(ref, known_quests())}. Known: {known}. "
                "Or give a quest folder, or a reference such as mypackage.module:quest."
            )
        try:
            obj = found[ref].load()
        except Exception as exc:
            raise _broken(ref, f"entry point {found[ref].value} failed to load", exc) from exc
    if callable(obj) and not isinstance(obj, Quest):
        try:
            obj = obj()
        except Exception as exc:
            raise _broken(ref, "its factory raised", exc) from exc
    if not isinstance(obj, Quest):
        raise ConfigError(f"quest {ref!r} is a {type(obj).__name__}, not a reins.Quest")
    return obj


def _broken(ref: str, what: str, exc: BaseException) -> ConfigError:
    """One line naming the quest and the exception: the traceback is the quest author's."""
    if isinstance(exc, SyntaxError):
        detail = f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})"
    else:
        detail = f"{type(exc).__name__}: {exc}"
    return ConfigError(f"quest {ref!r}: {what}: {detail}")
