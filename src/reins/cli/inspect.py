"""Commands that read: ``status``, ``log``, ``rules``, ``turn``; and ``export``, which publishes.

The shapes of ``--json`` are imported only under ``--json``: each is a dataclass, and building
one costs every start about a millisecond.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.work import json_option
from reins.errors import LedgerError

if TYPE_CHECKING:
    from reins.quest import Quest
    from reins.store.model import Stats
    from reins.store.protocol import Store

# Said when turns recorded tokens and no cost: their model had no price (or ran for nothing).
NO_COST = "no cost recorded (a model without a price records none; see --price)"


@click.command()
@click.option("--todo", is_flag=True, help="Print the board as a checklist for agents.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Most items --todo lists.",
)
@json_option
@pass_env
def status(env: Env, todo: bool, limit: int, as_json: bool) -> None:
    """Counts per state, work remaining, failures used, and how often each rule fired.

    DONE means out of tries, not passed. The histogram counts items by their failures used
    (judged FAILs in the round); ``--todo`` shows each item's next answer (answer 2 of 3).
    """
    ledger = env.ledger()
    stats = ledger.stats()
    quest = env.quest_if_given()
    allowed = quest.max_tries if quest is not None else None
    if todo:
        _todo(ledger, stats, limit, allowed, as_json)
        return
    older = _older_gate(ledger, stats, quest)
    stats, land = land_apart(ledger, stats)
    sandbox = ledger.meta(SANDBOX_META)
    if as_json:
        from reins.cli.shapes.figures import Status

        exported = ledger.exported_count()
        emit_json(Status.of(ledger.location, stats, older, exported, allowed, sandbox, land))
        return
    for line in _status_lines(ledger.location, stats, older, allowed, land):
        click.echo(line)
    if sandbox == "none":
        click.echo("agents       ran UNCONFINED in the last loop (--sandbox none)")
    elif sandbox is not None:
        click.echo(f"agents       sandboxed ({sandbox}) in the last loop")
    landed = ledger.meta(LAND_META) if sandbox is not None else None
    if landed is not None:
        click.echo(f"landing      {landed} (the last `reins land`)")
    if not stats.leased:  # a batch in flight leases its items; nothing leased, nothing to load
        return
    try:
        jobs = ledger.jobs()
    except LedgerError:  # an engine of its own that keeps no batch jobs: there are none
        jobs = []
    if jobs:
        flying = sum(j.requests for j in jobs)
        click.echo(
            f"batch jobs   {len(jobs)} open, {flying} item(s) in flight: `reins batch status`"
        )


SANDBOX_META = "workspace.sandbox"  # as reins.loop.workshop writes it (cli loads no loop here)
LAND_META = "land.last"  # as reins.land.run names it


def _todo(ledger: Store, stats: Stats, limit: int, allowed: int | None, as_json: bool) -> None:
    """``status --todo``: the board as a checklist, at most ``limit`` items."""
    import time

    from reins.store.query import PageQuery
    from reins.turn.views import board_lines, mark

    now = time.time()
    rows = [(mark(item, now), item) for item in ledger.page(PageQuery(limit=limit)).items]
    if as_json:
        from reins.cli.shapes.items import BoardRow

        emit_json([BoardRow.of(item, live=m == ">", allowed=allowed) for m, item in rows])
        return
    for line in board_lines((item for _, item in rows), now, max_tries=allowed):
        click.echo(line)
    if stats.total > len(rows):
        click.echo(f"… and {stats.total - len(rows)} more (--limit)")


def _older_gate(ledger: Store, stats: Stats, quest: Quest | None) -> int | None:
    """Items last judged under an older gate, but those a whole ``rejudge`` found the current
    gate agrees with (see :data:`reins.store.model.GATE_AGREES`)."""
    current = None if quest is None else quest.gate_digest
    older = stats.older_gate(current)
    if older and current:  # read the agreement only when there is something to subtract
        from reins.store.model import GATE_AGREES, read_agreeing

        older = stats.older_gate(current, read_agreeing(ledger.meta(GATE_AGREES + current)))
    return older


def land_apart(ledger: Store, stats: Stats) -> tuple[Stats, dict[str, int]]:
    """``stats`` of the quest's own items, and the land items ``reins land`` added (keyed
    ``land/…``), counted apart by state (none when it added none)."""
    if ledger.meta(LAND_META) is None:  # no `reins land` ran: it added no item
        return stats, {}
    import dataclasses
    from collections import Counter

    from reins.land.plan import land_items

    found = land_items(ledger)
    if not found:
        return stats, {}
    states, tries = Counter(i.state for i in found), Counter(i.tries for i in found)
    own = dataclasses.replace(
        stats,
        counts={s: n - states[s] for s, n in stats.counts.items()},
        tries={t: n - tries[t] for t, n in stats.tries.items() if n > tries[t]},
    )
    return own, {s.value: states[s] for s in stats.counts}


def _status_lines(
    location: str,
    stats: Stats,
    older: int | None,
    allowed: int | None,
    land: dict[str, int] | None = None,
) -> Iterator[str]:
    """``status`` as text: counts (the land items apart), failures used, rules, usage, errors
    and a person's actions."""
    from reins.gate.wording import DONE_MEANS, DROPPED
    from reins.store.model import State

    yield f"ledger {location}"
    for state in State:
        n = stats.counts[state]
        extra = f"   ({stats.leased} leased)" if state is State.TODO and stats.leased else ""
        if state is State.DONE:
            dropped = f"; {stats.dropped} {DROPPED}" if stats.dropped else ""
            extra = f"   ({DONE_MEANS}{dropped})"
        yield f"  {state.value:<8} {n:>8}{extra}"
    yield f"  {'total':<8} {stats.total:>8}   remaining {stats.remaining}"
    if land and any(land.values()):
        counted = ", ".join(f"{n} {s}" for s, n in land.items() if n)
        yield f"  {'land':<8} {sum(land.values()):>8}   (`reins land`'s items, apart: {counted})"
    if stats.tries:
        # items by the judged FAILs of their round: what `tries` counts
        of = f" of {allowed} allowed" if allowed is not None else ""
        histogram = "  ".join(f"{k}: {v}" for k, v in sorted(stats.tries.items()))
        yield f"failures used  {histogram}   (items by failures used{of})"
    if stats.rules:
        yield "rules fired  (times fired / times root cause)"
        width = max(len(r) for r in stats.rules)
        for r, (fired, root) in stats.rules.items():
            yield f"  {r:<{width}} {fired:>6} / {root}"
    if stats.input_tokens or stats.output_tokens or stats.cost:
        cost = f"cost {stats.cost:.4f}" if stats.cost else NO_COST
        yield f"usage        {stats.input_tokens} in / {stats.output_tokens} out tokens, {cost}"
    errors = {k: stats.kinds.get(k, 0) for k in ("generation_error", "judge_error", "human")}
    if any(errors.values()) or stats.reopened:
        yield (
            f"attempts     {errors['generation_error']} generation errors, "
            f"{errors['judge_error']} judge errors, {errors['human']} by a person; "
            f"{stats.reopened} item(s) reopened"
        )
    if older:
        yield (
            f"gate         {older} item(s) judged under an older gate: "
            "`reins rejudge` shows which verdicts the current gate would change"
        )


@click.command()
@click.argument("key")
@click.option("--full", is_flag=True, help="Print whole submissions, not excerpts.")
@json_option
@pass_env
def log(env: Env, key: str, full: bool, as_json: bool) -> None:
    """Every attempt of item KEY: turn, driver, outcome, root cause, facts, submission."""
    from reins.host.session import proposer
    from reins.turn.views import log_text

    item, attempts = env.ledger().snapshot(key)
    quest = env.quest_if_given()
    allowed = quest.max_tries if quest is not None else None
    if as_json:
        from reins.cli.shapes.items import ItemLog

        emit_json(ItemLog.of(item, attempts, proposer(env.ledger(), item.key), allowed))
        return
    click.echo(log_text(item, attempts, max_tries=allowed, full=full), nl=False)


@click.command()
@json_option
@pass_env
def rules(env: Env, as_json: bool) -> None:
    """Every fact the quest can raise: the gate's catalog (what actually judges; for a graph
    gate, its nodes and edges), then those its prepare and reins itself raise, with coaching."""
    from reins.turn.raised import raised_beside_the_gate
    from reins.turn.views import rules_text

    quest = env.quest
    catalog, beside = quest.judge.catalog(), raised_beside_the_gate(quest)
    if as_json:
        from reins.cli.shapes.items import RuleView

        rows = [RuleView.of(e, quest.coaching.get(e.id)) for e in catalog]
        emit_json([*rows, *(RuleView.beside(r) for r in beside)])
        return
    click.echo(rules_text(catalog, beside, quest.coaching), nl=False)


@click.command()
@click.option("--out", "-o", metavar="FILE", help="Results file [default <quest>-results.jsonl].")
@json_option
@pass_env
def export(env: Env, out: str | None, as_json: bool) -> None:
    """Append to a JSONL file each lock it lacks, and each withdrawal it is owed: each exactly
    once per file.

    A new file (--out), or the results file deleted, gets every lock; a withdrawal is owed for
    each lock the file holds that a person moved back to TODO.

    A lock is the record of a locked item; a withdrawal is a record with state TODO (its round,
    the person's action and note) that says the key's earlier record no longer stands. The
    last record of a key is the one to believe. A lock no attempt produced (the ledger written
    by hand) is refused: never written, named on stderr, and listed by `reins ledger check`.
    """
    from reins.cli.app import say_refused
    from reins.store.export import export as export_items

    target = out or str(env.results_path)
    done = export_items(env.ledger(), target)
    say_refused(done)
    if as_json:
        from reins.cli.shapes.work import Exported

        emit_json(Exported.of(done, target))
    else:
        click.echo(f"exported {done.count} new record(s) to {target}")


@click.command()
def turn() -> None:
    """Print turn.md: the four steps of a turn and the table that records them."""
    from reins.turn.table import DOCUMENT

    click.echo(DOCUMENT.read_text(encoding="utf-8"), nl=False)


COMMANDS = (status, log, rules, export, turn)
