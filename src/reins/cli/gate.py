"""The ``gate`` commands: check that the gate judges the same submission the same way."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, BinaryIO

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.shapes.runs import GateCheck, Wavering
from reins.cli.work import json_option
from reins.errors import Exit

if TYPE_CHECKING:
    from reins.turn.replay import Fields


@click.group(invoke_without_command=True)
@click.pass_context
def gate(ctx: click.Context) -> None:
    """Print the quest's gate.md, or check the gate (`reins gate check`).

    A quest written in Python has no gate.md: `reins rules` prints its catalog.
    """
    if ctx.invoked_subcommand is not None:
        return
    env = ctx.find_object(Env)
    assert env is not None
    path = getattr(env.quest.judge, "path", "")
    if not path:
        from reins.errors import ConfigError

        raise ConfigError(
            f"quest {env.quest.name} is written in Python and has no gate.md; "
            "`reins rules` prints its catalog"
        )
    from pathlib import Path

    click.echo(Path(path).read_text(encoding="utf-8"), nl=False)


@gate.command("check")
@click.option(
    "--from",
    "source",
    metavar="FILE.jsonl",
    type=click.File("rb"),
    help="Judge the outputs of a replay file instead of the ledger's recorded submissions.",
)
@click.option("--limit", type=click.IntRange(min=1), default=1000, show_default=True)
@json_option
@pass_env
def check(env: Env, source: BinaryIO | None, limit: int, as_json: bool) -> None:
    """Judge recorded submissions twice, in fresh processes with different hash seeds, and list
    the rules whose verdict differs (exits 9 if any does).

    A rule that is not deterministic is a judge defect: the same answer could pass today and
    fail tomorrow.
    """
    env.judging_quest()  # refused up front while an extra its checks need is missing
    entries = outputs(env, source, limit) if source is not None else _from_ledger(env, limit)
    ref = env.settings.quest_ref
    if not ref:
        raise click.UsageError("gate check runs the quest in fresh processes: pass --quest REF")
    from reins.turn.determinism import check as check_gate

    found = check_gate(ref, entries, folder=env.settings.quest_folder)
    if as_json:
        emit_json(GateCheck(len(entries), tuple(Wavering.of(d) for d in found)))
    elif found:
        for d in found:
            click.echo(f"{d.key}: {', '.join(d.rules)} judged differently in fresh processes")
    else:
        click.echo(f"{len(entries)} submission(s) judged alike in fresh processes")
    if found:
        sys.exit(Exit.UNSOUND)


def _from_ledger(env: Env, limit: int) -> list[tuple[str, object, str]]:
    from reins.store.walk import iter_items

    store = env.ledger()
    out: list[tuple[str, object, str]] = []
    for listed in iter_items(store):
        if listed.turns == 0:
            continue
        item, log = store.snapshot(listed.key)
        last = next((a for a in reversed(log) if a.judged and a.submission is not None), None)
        if last is not None and last.submission is not None:
            out.append((item.key, item.payload, last.submission))
            if len(out) >= limit:
                break
    return out


def outputs(
    env: Env, source: Iterable[bytes | str], limit: int, fields: Fields | None = None
) -> list[tuple[str, object, str]]:
    """The (key, payload, output) of each good line of a replay file whose item exists."""
    from reins.errors import NotFound
    from reins.turn.replay import read_lines

    store = env.ledger()
    out: list[tuple[str, object, str]] = []
    for line in read_lines(source, fields):
        if line.key is None or line.output is None:
            continue
        try:
            item = store.get(line.key)
        except NotFound:
            continue
        out.append((item.key, item.payload, line.output))
        if len(out) >= limit:
            break
    return out


COMMANDS = (gate,)
