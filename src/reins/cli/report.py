"""``reins report``: the run's figures as text or JSON, or as one self-contained HTML file."""

from __future__ import annotations

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.work import json_option

TOP_RULES = 10


@click.command()
@click.option(
    "--html",
    "html_path",
    metavar="FILE",
    help="Write a self-contained HTML report (board, charts, rule tables, review queue).",
)
@json_option
@pass_env
def report(env: Env, html_path: str | None, as_json: bool) -> None:
    """The run's figures: counts, remaining, tries to lock, rules; --html FILE for a page.

    Text (or --json) gives counts per state, work remaining, the tries each item had used when
    the gate locked it, and the rules fired most. With --html FILE, a self-contained HTML page
    to mail or attach to a PR: it needs no network to view.
    """
    store, quest = env.ledger(), env.quest_if_given()
    if html_path is not None:
        try:
            from reins.web.report import write_html
        except ImportError as exc:
            from reins.cli.serve import web_missing

            raise web_missing(exc) from exc
        written = write_html(store, quest, html_path)
        if as_json:
            emit_json({"html": str(written)})
        else:
            click.echo(f"wrote {written}")
        return
    from reins.web.board import board

    b = board(store, quest)
    tries = {bar.label: bar.value for bar in b.tries_to_lock}
    rules = b.rules[:TOP_RULES]
    if as_json:
        emit_json(
            {
                "counts": {c.state: c.n for c in b.counts},
                "total": b.total,
                "remaining": b.remaining,
                "tries_to_lock": tries,
                "tries_to_lock_sampled": b.chart.sampled,
                "rules": {r.rule: {"fired": r.fired, "root_cause": r.root} for r in rules},
            }
        )
        return
    click.echo("  ".join(f"{c.state} {c.n}" for c in b.counts))
    click.echo(f"total {b.total}  remaining {b.remaining}  ({b.progress:.1f}% locked)")
    if tries:
        note = " (estimated from a sample of the log)" if b.chart.sampled else ""
        click.echo("tries to lock  " + "  ".join(f"{k}: {v}" for k, v in tries.items()) + note)
    if rules:
        click.echo("rules fired most  (times fired / times root cause)")
        width = max(len(r.rule) for r in rules)
        for r in rules:
            click.echo(f"  {r.rule:<{width}} {r.fired:>6} / {r.root}")
