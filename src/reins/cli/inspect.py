"""Commands that read: ``status``, ``log``, ``rules``, ``turn``; and ``export``, which publishes."""

from __future__ import annotations

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.work import json_option


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
    """Counts per state, work remaining, tries used, and how often each rule fired."""
    from reins.store import PageQuery, State

    ledger = env.ledger()
    stats = ledger.stats()
    quest = env.quest_if_given()
    current = quest.gate_digest if quest is not None else None
    older = stats.older_gate(current)
    if todo:
        import time

        from reins.turn.views import board_lines, mark

        now = time.time()
        rows = [(mark(item, now), item) for item in ledger.page(PageQuery(limit=limit)).items]
        if as_json:
            emit_json(
                [
                    {
                        "key": i.key,
                        "state": i.state.value,
                        "tries": i.tries,
                        "leased_to": i.lease_owner if m == ">" else None,
                    }
                    for m, i in rows
                ]
            )
            return
        for line in board_lines((item for _, item in rows), now):
            click.echo(line)
        if stats.total > len(rows):
            click.echo(f"… and {stats.total - len(rows)} more (--limit)")
        return
    if as_json:
        emit_json(
            {
                "ledger": ledger.location,
                "counts": {s.value: n for s, n in stats.counts.items()},
                "total": stats.total,
                "remaining": stats.remaining,
                "leased": stats.leased,
                "tries": {str(k): v for k, v in sorted(stats.tries.items())},
                "rules": {
                    r: {"fired": f, "root_cause": root} for r, (f, root) in stats.rules.items()
                },
                "attempts": stats.attempts,
                "kinds": dict(sorted(stats.kinds.items())),
                "reopened": stats.reopened,
                "gates": dict(sorted(stats.gates.items())),
                "older_gate": older,
                "exported": ledger.exported_count(),
                "usage": {
                    "input_tokens": stats.input_tokens,
                    "output_tokens": stats.output_tokens,
                    "cost": stats.cost,
                },
            }
        )
        return
    click.echo(f"ledger {ledger.location}")
    for state in State:
        n = stats.counts[state]
        extra = f"   ({stats.leased} leased)" if state is State.TODO and stats.leased else ""
        click.echo(f"  {state.value:<8} {n:>8}{extra}")
    click.echo(f"  {'total':<8} {stats.total:>8}   remaining {stats.remaining}")
    if stats.tries:
        hist = "  ".join(f"{k}: {v}" for k, v in sorted(stats.tries.items()))
        click.echo(f"tries used   {hist}")
    if stats.rules:
        click.echo("rules fired  (times fired / times root cause)")
        width = max(len(r) for r in stats.rules)
        for r, (fired, root) in stats.rules.items():
            click.echo(f"  {r:<{width}} {fired:>6} / {root}")
    if stats.input_tokens or stats.output_tokens or stats.cost:
        click.echo(
            f"usage        {stats.input_tokens} in / {stats.output_tokens} out tokens, "
            f"cost {stats.cost:.4f}"
        )
    errors = {k: stats.kinds.get(k, 0) for k in ("generation_error", "judge_error", "human")}
    if any(errors.values()) or stats.reopened:
        click.echo(
            f"attempts     {errors['generation_error']} generation errors, "
            f"{errors['judge_error']} judge errors, {errors['human']} by a person; "
            f"{stats.reopened} item(s) reopened"
        )
    if older:
        click.echo(
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
    from reins.agents.session import proposer
    from reins.turn.views import log_text

    item, attempts = env.ledger().snapshot(key)
    if as_json:
        emit_json(
            {
                "key": item.key,
                "state": item.state.value,
                "tries": item.tries,
                "round": item.round,
                "payload": item.payload,
                "proposed_by": proposer(env.ledger(), item.key),
                "attempts": [
                    {
                        "turn": a.turn,
                        "kind": a.kind.value,
                        "driver": a.driver,
                        "outcome": a.outcome,
                        "root_cause": a.root_cause,
                        "facts": [f.to_dict() for f in a.facts],
                        "error": a.error,
                        "state_after": a.state_after.value,
                        "tries_after": a.tries_after,
                        "submission": a.submission,
                        "feedback": a.feedback,
                        "policy": a.policy,
                        "backend": a.usage.backend,
                        "prompt_digest": a.prompt_digest,
                        "input_tokens": a.usage.input_tokens,
                        "output_tokens": a.usage.output_tokens,
                        "cost": a.usage.cost,
                        "latency": a.usage.latency,
                        "started_at": a.started_at,
                        "recorded_at": a.recorded_at,
                        "round": a.round,
                        "action": a.action,
                        "note": a.note,
                        "gate_digest": a.gate_digest,
                    }
                    for a in attempts
                ],
            }
        )
        return
    click.echo(log_text(item, attempts, full=full), nl=False)


@click.command()
@json_option
@pass_env
def rules(env: Env, as_json: bool) -> None:
    """The gate's catalog: what actually judges (for a graph gate, its nodes and edges)."""
    from reins.turn.views import rules_text

    catalog = env.quest.judge.catalog()
    if as_json:
        emit_json(
            [
                {
                    "id": e.id,
                    "level": e.level.value,
                    "description": e.description,
                    "supersedes": list(e.supersedes),
                    "needs": list(e.needs),
                    "check": e.check or None,
                    "parameters": e.parameters or None,
                }
                for e in catalog
            ]
        )
        return
    click.echo(rules_text(catalog), nl=False)


@click.command()
@click.option("--out", "-o", metavar="FILE", help="Results file [default <quest>-results.jsonl].")
@json_option
@pass_env
def export(env: Env, out: str | None, as_json: bool) -> None:
    """Append every new lock, and a withdrawal of each exported lock a person moved back to TODO,
    to a JSONL file: each exactly once.

    A lock is the record of a locked item; a withdrawal is a record with state TODO (its round,
    the person's action and note) that says the key's earlier record no longer stands. The
    last record of a key is the one to believe.
    """
    from reins.store.export import export as export_items

    target = out or str(env.results_path)
    n = export_items(env.ledger(), target)
    if as_json:
        emit_json({"exported": n, "out": target})
    else:
        click.echo(f"exported {n} new record(s) to {target}")


@click.command()
def turn() -> None:
    """Print turn.md: the four steps of a turn and the table that records them."""
    from reins.turn.table import DOCUMENT

    click.echo(DOCUMENT.read_text(encoding="utf-8"), nl=False)


COMMANDS = (status, log, rules, export, turn)
