"""``reins packs`` lists the shipped quest packs; ``reins new --pack`` copies one to edit."""

from __future__ import annotations

from pathlib import Path

import click

from reins.cli.app import emit_json
from reins.cli.shapes.setup import NewQuest, Pack, UnreadablePack
from reins.cli.work import json_option
from reins.errors import ConfigError
from reins.extras import install_line, known, missing


def summary(name: str, folder: Path) -> Pack | UnreadablePack:
    """What ``reins packs`` shows of one pack, read from quest.toml alone (no check loads)."""
    import tomllib

    try:
        data = tomllib.loads((folder / "quest.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return UnreadablePack(name, f"(unreadable quest.toml: {exc})")
    items = data.get("items", {})
    source = items.get("source", "") if isinstance(items, dict) else ""
    extras = data.get("extra", [])
    extras = [extras] if isinstance(extras, str) else extras
    extras = (
        [e for e in extras if isinstance(e, str) and known(e)] if isinstance(extras, list) else []
    )
    gone = tuple(p for e in extras for p in missing(e))
    return Pack(
        name,
        str(data.get("description", "")),
        count_items(folder, source) if isinstance(source, str) else None,
        f"reins-quest[{','.join(extras)}]" if extras else None,
        str(folder),
        gone,
        install_line(e for e in extras if missing(e)) if gone else None,
    )


def count_items(folder: Path, source: str) -> int | None:
    """How many items the source holds, when that is cheap to know (None for a function)."""
    import re

    if re.search(r"[*?\[]", source):
        return sum(1 for p in folder.glob(source) if p.is_file())
    path = folder / source
    if path.suffix.lower() not in (".jsonl", ".csv") or not path.is_file():
        return None
    with path.open("rb") as f:
        lines = sum(1 for line in f if line.strip())
    return lines - 1 if path.suffix.lower() == ".csv" else lines


@click.command()
@json_option
def packs(as_json: bool) -> None:
    """List the quest packs shipped with reins: name, description, items, extra needed.

    A pack whose extra is not installed says which packages are missing and the pip line
    that installs them; until then `next`, `submit` and `loop` refuse it.
    """
    from reins.packs import folders

    rows = [summary(name, folder) for name, folder in folders().items()]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no packs installed", err=True)
        return
    width = max(len(r.name) for r in rows)
    for r in rows:
        count = "?" if r.items is None else str(r.items)
        extra = f"  (needs {r.extra}, installed)" if r.extra else ""
        if isinstance(r, Pack) and r.install:
            extra = f"  (needs {r.extra}: {', '.join(r.missing)} missing; {r.install})"
        click.echo(f"{r.name:<{width}}  {count:>5} items  {r.description}{extra}")
    click.echo("use one: reins -q NAME scan; edit one: reins new --pack NAME DIR", err=True)


@click.command()
@click.option("--pack", "name", required=True, metavar="NAME", help="The pack to copy.")
@click.argument("target", metavar="[DIR]", required=False)
@json_option
def new(name: str, target: str | None, as_json: bool) -> None:
    """Copy a pack's folder (quest.toml, gate.md, items) into DIR to make it yours.

    The copy is a quest of its own, named after DIR [default: my-NAME], so it never shares a
    ledger (NAME.reins.db) with the pack it came from. A pack whose items are changes to a git
    repository (a [workspace], like coding) is copied as one: DIR is a new git repository
    whose first commit holds the copy, the base every item starts from.
    """
    import shutil

    from reins.declare.questdoc import QUEST_FILE
    from reins.packs import folder

    source = folder(name)
    dest = Path(target or f"my-{name}")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ConfigError(f"{dest} already exists and is not an empty folder")
    quest = own_name(dest, name)
    text = renamed((source / QUEST_FILE).read_text(encoding="utf-8"), quest, name)
    shutil.copytree(
        source, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    (dest / QUEST_FILE).write_text(text, encoding="utf-8")
    if has_workspace(text):
        first_commit(dest, name)
    if as_json:
        emit_json(NewQuest(name, str(dest), quest))
        return
    click.echo(
        f"copied pack {name} to {dest} as quest {quest!r} (its own ledger: {quest}.reins.db)"
    )
    click.echo(f"next: reins -q {dest} rules, then reins -q {dest} scan", err=True)


def has_workspace(text: str) -> bool:
    """Whether a quest.toml declares a ``[workspace]``."""
    import tomllib

    return isinstance(tomllib.loads(text).get("workspace"), dict)


def first_commit(dest: Path, pack: str) -> None:
    """Make ``dest`` a git repository whose first commit is the copy (the items' base)."""
    from reins.workspace.git import git

    folder = str(dest)
    git(["init", "--quiet"], cwd=folder)
    git(["add", "--all"], cwd=folder)
    git(
        ["commit", "--quiet", "--no-verify", "-m", f"The {pack} pack, as reins new copied it"],
        cwd=folder,
    )


def own_name(dest: Path, pack: str) -> str:
    """The copy's quest name: DIR's name as a quest name (a word of letters, digits, - or _).

    Raises:
        ConfigError: DIR's name holds no letter or digit, or is the pack's own name (the copy
            and the pack would share a ledger, and each be taken for the other).
    """
    import re

    quest = re.sub(r"[^A-Za-z0-9_-]+", "-", dest.resolve().name).strip("-")
    if not quest.replace("-", "").replace("_", ""):
        raise ConfigError(f"{dest}: name the folder with a letter or digit, it names the quest")
    if quest == pack:
        raise ConfigError(
            f"a copy in {dest} would be quest {pack!r}, like the pack, and share its ledger "
            f"({pack}.reins.db); give DIR another name, e.g. my-{pack}"
        )
    return quest


def renamed(text: str, quest: str, pack: str) -> str:
    """quest.toml's ``text`` with its top-level ``name`` set to ``quest``, all else as it was."""
    import re

    table = re.search(r"^\s*\[", text, re.MULTILINE)
    head, rest = (text[: table.start()], text[table.start() :]) if table else (text, "")
    head, found = re.subn(
        r"""^name\s*=\s*(?:"[^"\n]*"|'[^'\n]*')""",
        f'name = "{quest}"',
        head,
        count=1,
        flags=re.MULTILINE,
    )
    if not found:  # every shipped pack names itself on a line of its own
        raise ConfigError(f'pack {pack}: its quest.toml has no name = "…" line to rename')
    return head + rest


COMMANDS = (packs, new)
