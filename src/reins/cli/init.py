"""``reins init``: a reins.toml and a starter quest module to edit."""

from __future__ import annotations

from pathlib import Path

import click

from reins.cli.config import CONFIG_FILE, find_config
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

DECLARED_TOML = """\
name = "{name}"
description = "write a word in capital letters"

[items]
source = "items.jsonl"          # or items.csv, texts/*.txt, or module:function
key = "id"

[prompt]
output = "json"
manual = "Answer with JSON only: {{\\"answer\\": \\"...\\"}}."
template = "Write the word {{{{ item.word }}}} in capital letters."

[judge]
max_tries = 3
retry = "facts"
version = "1"                   # bump when a rule's behaviour changes

[[examples]]                    # judged by gate.md when the quest loads
input = {{ id = "example", word = "delta" }}
output = '{{"answer": "DELTA"}}'
"""

DECLARED_GATE = """\
# The gate of {name}

reins reads the two tables below and runs them; everything else is for people.
Each rule names a check of the standard library (`docs/checks.md`) and its parameters.

## Rules

| id | level | check | parameters | coaching |
|----|-------|-------|------------|----------|
| shape | FAIL | json_schema | schema = "schema.json" | Answer with {{"answer": "..."}}. |
| capitals | FAIL | regex | path = "submission.answer", pattern = '^[A-Z]+$' | Capitals only. |

## Edges

A malformed answer explains everything after it: `shape` supersedes the rest while it fires.

| rule | supersedes |
|------|------------|
| shape | capitals |
"""

DECLARED_SCHEMA = """\
{{
  "type": "object",
  "required": ["answer"],
  "properties": {{"answer": {{"type": "string"}}}},
  "additionalProperties": false
}}
"""

DECLARED_ITEMS = """\
{{"id": "alpha", "word": "alpha"}}
{{"id": "beta", "word": "beta"}}
{{"id": "gamma", "word": "gamma"}}
"""

CONFIG = """\
[reins]
quest = "{quest}"  # a quest folder, package.module:attr, or a quest or pack name
ledger = "{name}.reins.db"    # the ledger file (SQLite)
results = "{name}-results.jsonl"
auto_export = true            # locking submits append to the results file
max_submission = 1048576      # bytes
lease = 900                   # seconds an item stays with the driver that took it
"""


@click.command()
@click.option("--name", default="myquest", show_default=True, help="Quest name.")
@click.option(
    "--template",
    type=click.Choice(["python", "declarative"]),
    default="python",
    show_default=True,
    help="python: a quest module NAME.py; declarative: a folder NAME/ of documents.",
)
@click.option("--force", is_flag=True, help="Overwrite existing files.")
def init(name: str, template: str, force: bool) -> None:
    """Write reins.toml and a starter quest (a NAME/ folder of documents, or NAME.py).

    Every command run in this folder or below it then reads this reins.toml (the nearest one
    above the working folder, as git finds .git).
    """
    if not name.isidentifier():
        raise ConfigError(f"--name must be a Python identifier, got {name!r}")
    if template == "declarative":
        folder = Path(name)
        files = {
            Path(CONFIG_FILE): CONFIG.format(quest=f"./{name}", name=name),
            folder / "quest.toml": DECLARED_TOML.format(name=name),
            folder / "gate.md": DECLARED_GATE.format(name=name),
            folder / "items.jsonl": DECLARED_ITEMS.format(),
            folder / "schema.json": DECLARED_SCHEMA.format(),
        }
        edit = f"{name}/quest.toml and {name}/gate.md"
    else:
        shadowed = _importable_elsewhere(name)
        if shadowed:
            raise ConfigError(
                f"--name {name!r} would shadow the installed module {name!r} ({shadowed}): "
                f"`import {name}` would find your quest instead. Pick another name."
            )
        files = {
            Path(CONFIG_FILE): CONFIG.format(quest=f"{name}:quest", name=name),
            Path(f"{name}.py"): STARTER.format(name=name),
        }
        edit = f"{name}.py"
    existing = [str(p) for p in files if p.exists()]
    if existing and not force:
        are = "already exists" if len(existing) == 1 else "already exist"
        raise ConfigError(f"{', '.join(existing)} {are}; pass --force to overwrite")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        click.echo(f"wrote {path}")
    # A project inside a project is allowed (as a git repository inside another), but every
    # command below here now reads the new file instead of the outer one: say so.
    outer = find_config(Path.cwd().parent)
    if outer is not None:
        click.echo(
            f"note: {outer} is the project above this folder; commands run here and below now "
            f"read this new {CONFIG_FILE} instead (the nearest {CONFIG_FILE} wins)",
            err=True,
        )
    click.echo(f"next: reins scan, then reins next (edit {edit} to make it yours)", err=True)


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
