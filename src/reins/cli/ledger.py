"""The ``ledger`` commands: check a ledger's invariants, copy a quest run between engines."""

from __future__ import annotations

import sys

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.shapes import QuestRef
from reins.cli.shapes.runs import Copied, LedgerCheck
from reins.cli.work import json_option
from reins.errors import Exit


@click.group()
def ledger() -> None:
    """Check a ledger, or copy it between SQLite and PostgreSQL."""


@ledger.command()
@json_option
@pass_env
def check(env: Env, as_json: bool) -> None:
    """Verify the ledger's invariants by scanning it (exits 9 if any is violated).

    Every lock was produced by the item's last attempt (a judged one by turn.md's record
    table, or a person's action), every log holds turns 1 to n, every attempt follows from the
    turn before by turn.md's tables, nothing but a person's action follows a lock, the kept
    counters match the items; each item that breaks one is named in plain words. A lock
    written into the ledger by hand is found so, and no export writes it. Says which quest the
    ledger belongs to; under another quest it is refused, as by every command.
    """
    store = env.ledger()
    problems = store.check()
    stats = store.stats()
    owner = store.owner
    if as_json:
        quest = QuestRef.of(owner)
        emit_json(
            LedgerCheck(
                store.location, quest, not problems, tuple(problems), stats.total, stats.attempts
            )
        )
    elif problems:
        for line in problems:
            click.echo(line)
    else:
        of = "no quest recorded" if owner is None else f"quest {owner.describe()}"
        click.echo(
            f"{store.location}: sound ({of}; {stats.total} items, {stats.attempts} attempts)"
        )
    if problems:
        sys.exit(Exit.UNSOUND)


@ledger.command()
@click.argument("source")
@click.argument("target")
@click.option("--schema", help="PostgreSQL schema for a URL that names none [default: quest].")
@json_option
@pass_env
def copy(env: Env, source: str, target: str, schema: str | None, as_json: bool) -> None:
    """Copy a quest run from SOURCE to a new, empty TARGET ledger and verify it.

    Each is an SQLite file or a postgresql:// URL, so this moves a run between engines
    (SQLite → PostgreSQL and back). Items, logs and counters are copied, and the quest the
    ledger belongs to; leases and export marks are not (the copy starts with nothing leased
    and nothing exported). The counts and a digest of every item and attempt are compared
    after the copy. With a quest given, SOURCE must be that quest's.
    """
    from reins.cli.app import say_adopted
    from reins.store.engines import engine_of, open_store
    from reins.store.walk import copy as copy_ledger

    def schema_for(location: str, name: str | None = None) -> str | None:
        if not engine_of(location).schemas:
            return None
        return schema or name or env.quest.name

    src = open_store(source, schema=schema_for(source), owner=env.owner)
    try:
        say_adopted(src)
        owner = src.owner or env.owner
        dst = open_store(
            target,
            create=True,
            schema=schema_for(target, owner.name if owner else None),
            owner=owner,
        )
        try:
            say_adopted(dst)
            items, attempts, digest = copy_ledger(src, dst)
            where = dst.location
        finally:
            dst.close()
    finally:
        src.close()
    if as_json:
        emit_json(Copied(where, items, attempts, digest))
    else:
        click.echo(
            f"copied {items} item(s) and {attempts} attempt(s) to {where}: digest {digest[:16]}"
        )


COMMANDS = (ledger,)
