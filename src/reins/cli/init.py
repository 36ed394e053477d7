"""``reins init``: a reins.toml and a starter quest module to edit."""

from __future__ import annotations

from pathlib import Path

import click

from reins.cli.config import CONFIG_FILE
from reins.errors import ConfigError

STARTER = '''\
"""A starter quest: edit seed, render, prepare and the rules, then `reins scan`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from reins import Context, Fact, Item, Level, Outcome, Quest, Seed, Verdict, rule


def seed(args: Sequence[str]) -> Iterator[Seed]:
    """One item per argument: the key names it, the payload is what render and rules read."""
    for word in args or ["alpha", "beta", "gamma"]:
        yield Seed(key=word, payload={{"word": word}})


def render(item: Item) -> str:
    """What to do for one item: the first layer of the prompt."""
    return (
        f"Write the word {{item.payload['word']!r}} in capital letters as JSON: "
        '{{"answer": "..."}}'
    )


def prepare(item: Item, raw: str) -> Context | Verdict:
    """Decode a submission, or refuse it with a short FAIL (never PASS)."""
    try:
        answer = json.loads(raw)["answer"]
    except (ValueError, KeyError, TypeError, RecursionError):  # deep nesting: the answer's fault
        fact = Fact(
            rule="json-shape", where="submission", expected='{{"answer": "..."}}', actual=raw[:80]
        )
        return Verdict.short(Outcome.FAIL, fact)
    return Context(key=item.key, submission=answer, payload=item.payload)


@rule("upper-case", Level.FAIL, "the answer is the word in capital letters")
def upper_case(ctx: Context) -> Fact | None:
    want = ctx.payload["word"].upper()
    if ctx.submission != want:
        return Fact(where="answer", expected=want, actual=str(ctx.submission))
    return None


quest = Quest(
    name="{name}",
    seed=seed,
    render=render,
    prepare=prepare,
    rules=[upper_case],
    manual="Answer with JSON only.",
    coaching={{"upper-case": "Every letter must be a capital letter."}},
    max_tries=3,
)
'''

CONFIG = """\
[reins]
quest = "{module}:quest"      # package.module:attr, or an installed quest name
ledger = "{name}.reins.db"    # the ledger file (SQLite)
results = "{name}-results.jsonl"
auto_export = true            # locking submits append to the results file
max_submission = 1048576      # bytes
lease = 900                   # seconds an item stays with the driver that took it
"""


@click.command()
@click.option("--name", default="myquest", show_default=True, help="Quest name.")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def init(name: str, force: bool) -> None:
    """Write reins.toml and a starter quest module (NAME.py) in this folder."""
    if not name.isidentifier():
        raise ConfigError(f"--name must be a Python identifier, got {name!r}")
    shadowed = _importable_elsewhere(name)
    if shadowed:
        raise ConfigError(
            f"--name {name!r} would shadow the installed module {name!r} ({shadowed}): "
            f"`import {name}` would find your quest instead. Pick another name."
        )
    files = {
        Path(CONFIG_FILE): CONFIG.format(module=name, name=name),
        Path(f"{name}.py"): STARTER.format(name=name),
    }
    existing = [str(p) for p in files if p.exists()]
    if existing and not force:
        raise ConfigError(f"{', '.join(existing)} already exist(s); pass --force to overwrite")
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {path}")
    click.echo(f"next: reins scan, then reins next (edit {name}.py to make it yours)")


def _importable_elsewhere(name: str) -> str:
    """Where ``name`` already imports from (the standard library, a package), or ""."""
    import importlib.util
    import sys

    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return "the standard library"
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return ""
    if spec is None:
        return ""
    origin = spec.origin or "a namespace package"
    # A quest module already written here (init --force) is the user's own, not a shadow.
    here = str(Path.cwd() / f"{name}.py")
    return "" if origin == here else origin
