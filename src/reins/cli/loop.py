"""``reins loop``: a backend answers, the gate judges, the ledger records, unattended.

Exit codes are those of :class:`reins.errors.Exit` (the table is in :mod:`reins.cli.app`):
``loop`` exits 0, 1, 2, 3, 7, 10, 12, 130 or 143.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from reins.cli.app import Env, pass_env, raw
from reins.cli.loopflags import LoopFlags, agent_options
from reins.cli.work import json_option
from reins.errors import Exit

if TYPE_CHECKING:
    from reins.loop import Reporter, Summary

# The same as reins.quest.RETRY_POLICIES (a test keeps them equal); not imported, to start fast.
RETRY_CHOICES = ("facts", "facts+previous", "fresh")


class RetryPolicyType(click.ParamType[str]):
    """A retry policy or a schedule of them (``fresh,facts@0.8``), checked by
    :func:`reins.retry.parse_retry` and given on in its canonical form; a bad one is a usage
    error (exit 2) that says which step is wrong."""

    name = "POLICY"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from reins.errors import ConfigError
        from reins.retry import canonical_retry

        try:
            return canonical_retry(str(value))
        except ConfigError as exc:
            self.fail(str(exc), param, ctx)


RETRY = RetryPolicyType()
RETRY_HELP = (
    f"How a retry is composed: {', '.join(RETRY_CHOICES)}, or a schedule, one per answer "
    "from answer 2 (the last repeats), each with an optional @TEMPERATURE to sample that "
    "retry at: fresh,facts@0.8"
)


@click.command("loop")
@click.option(
    "--model",
    "-m",
    metavar="SPEC",
    envvar="REINS_MODEL",
    required=True,
    help="Backend and model: backend:model?key=value&… [env REINS_MODEL].",
)
@click.option(
    "--strong",
    metavar="SPEC",
    envvar="REINS_STRONG_MODEL",
    help="Stronger model for items that escalate [env REINS_STRONG_MODEL].",
)
@click.option(
    "--escalate-on",
    "escalate_on",
    metavar="RULE",
    multiple=True,
    help="Root cause that moves an item to --strong (repeat, or comma-separate); "
    "added to the quest's escalate_on.",
)
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(1, 4096),
    default=1,
    show_default=True,
    help=(
        "Generations at once, each of a leased item; for a coding agent, agents at once (a "
        "confined agent's items: up to twice as many in flight, each judged while the next "
        "agent runs)."
    ),
)
@click.option("--max-items", type=click.IntRange(min=1), help="Take up at most N items.")
@click.option("--max-turns", type=click.IntRange(min=1), help="Record at most N turns.")
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    help="Stop after N tokens (in + out); coding agents in flight are killed at it.",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    help="Stop after this cost; coding agents in flight are killed at it.",
)
@click.option(
    "--price",
    metavar="[SPEC=]IN/OUT",
    multiple=True,
    help="USD per million input/output tokens of --model (or of the model SPEC names: "
    "repeat for --strong), for a model reins' price table does not list; also [prices] in "
    "reins.toml. The cost caps refuse to start on a model without a price.",
)
@click.option(
    "--retry",
    type=RETRY,
    help=f"{RETRY_HELP} [default: the quest's, else facts].",
)
@click.option(
    "--breaker",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Stop when generation fails on N items in a row, no judged turn between: the "
    "backend is down (nothing is locked by it).",
)
@click.option(
    "--set-aside-after",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Set an item aside for this run after N generation errors in a row on it: it stays "
    "TODO, tries unchanged, and the others go on.",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="When the items left are all leased to others, stop (exit 3) instead of waiting.",
)
@click.option(
    "--judge-breaker",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Stop after N judge errors in a row: the gate itself failing (no try is used).",
)
@click.option(
    "--driver",
    "-d",
    show_default="loop",
    help="Driver name recorded on each attempt.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=300.0,
    show_default=True,
    help="Seconds one backend call may take.",
)
@click.option(
    "--lease",
    type=click.FloatRange(min=1),
    default=60.0,
    show_default=True,
    help="Seconds a lease lives without a heartbeat (a crashed loop's items come back then).",
)
@agent_options
@click.option(
    "--max-item-tokens",
    type=click.IntRange(min=1),
    help="Cap each item's tokens over all its turns: the agent is killed, the item set aside.",
)
@click.option(
    "--max-item-cost",
    type=click.FloatRange(min=0, min_open=True),
    help="Cap each item's cost over all its turns: the agent is killed, the item set aside.",
)
@click.option("--no-export", is_flag=True, help="Do not append locked items to the results file.")
@click.option(
    "--batch",
    is_flag=True,
    help="Send the items a round at a time as one provider batch (openai, anthropic): half "
    "the price, answers within 24 h. A rerun carries on the batches still open.",
)
@click.option(
    "--round-size",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="With --batch: items one round takes (one provider batch).",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0, min_open=True),
    default=5.0,
    show_default=True,
    help="With --batch: seconds before the first poll of a batch; each wait is half as long "
    "again, up to a minute.",
)
@json_option
@pass_env
def loop(env: Env, /, as_json: bool, **flags: Any) -> None:
    """Work the quest unattended: a backend answers, the gate judges, the ledger records.

    Every turn is composed from the log, exactly as `reins next` prints it; a FAIL's facts go
    back in the next prompt. A backend error uses no try. An item whose generation fails
    --set-aside-after times in a row is set aside for the rest of the run (TODO, tries
    unchanged) and the others go on; when generation fails on --breaker items in a row, the
    loop stops with nothing locked. A judge error (the gate itself failing on a submission)
    uses no try either; after --judge-breaker of them in a row the loop stops. Ctrl-C stops
    cleanly (the same signal again within a second is the same request; a later second
    Ctrl-C interrupts at once), and a rerun resumes where the ledger stands (items set aside
    are tried again). On stderr: a line per turn (on a terminal, above a live status line),
    and a summary. With --json, stdout holds the result: one JSON event per turn (and per
    item set aside, and per note), the summary last.

    When the items left are all leased to other drivers, it waits for their leases to run out
    (saying so every 10 s: who holds which, and how to give it back), or with --no-wait stops.

    With --batch, each round leases up to --round-size items to one provider batch (recorded
    in the ledger before anything is sent), polls it, and records each result as one turn;
    the next round carries the FAILs' feedback. Ctrl-C leaves a sent batch running: run the
    same command again to record its results, or `reins batch cancel`.

    On a quest with a [workspace], --model names a coding agent (cmd:PROGRAM ARGS…, and the
    agents `reins backends` lists) that works in a git repository of its own per item, under
    bubblewrap unless --sandbox none; the gate judges its change in a tree reins builds, and a
    locked item lands on its branch (reins/KEY). --agent-idle, --agent-timeout and the caps
    (--max-tokens, --max-cost, --max-item-*) kill an agent with its process tree: each kill is
    a generation error (no try used).

    Exits 0 when every item is locked or a --max-* cap is reached, 3 with --no-wait when the
    items left are all leased to other drivers, 7 when the breaker trips, 10 when the judge
    breaker trips, 12 when the items left include some this run set aside, 130 or 143 on
    SIGINT or SIGTERM.
    """
    from reins.loop import run

    given = LoopFlags(**flags)
    rules = given.rules()
    quest = env.judging_quest()
    if given.batch:
        given.check_batch(quest)
    ledger = env.ledger()
    if given.batch:
        _batch_rounds(env, given, rules, as_json)
        return
    generator, stronger = given.generators(env, quest)
    options = given.options(env, rules)
    if stronger is not None and not (quest.escalate_on | rules):
        click.echo(
            "note: --strong is never used: neither the quest nor --escalate-on names a rule",
            err=True,
        )
    summary = run(
        ledger, quest, generator, strong=stronger, options=options, reporter=_reporter(as_json)
    )
    code = exit_code(summary)
    if code:
        sys.exit(code)


def _batch_rounds(env: Env, given: LoopFlags, rules: frozenset[str], as_json: bool) -> None:
    """``loop --batch``: rounds sent as provider batches, to one text backend."""
    from reins.loop import run_batches

    if given.concurrency != 1:
        click.echo("note: --concurrency does not apply to --batch: a round is one batch", err=True)
    from reins.loop.generator import text_backend

    backend = text_backend(given.specs(env)[0])
    options = given.options(env, rules)
    ledger, quest = env.ledger(), env.quest
    summary = run_batches(ledger, quest, backend, options=options, reporter=_reporter(as_json))
    code = exit_code(summary)
    if code:
        sys.exit(code)


def _reporter(as_json: bool) -> Reporter:
    """Where the run shows itself. With ``--json`` its events are the result, data on stdout;
    without, every line (each turn, notes, the summary) is for people, on stderr, and stdout
    stays empty: the result is the ledger and the exit code."""
    from reins.loop import JsonReporter, LineReporter, TtyReporter

    err = sys.stderr
    if as_json:
        return JsonReporter(sys.stdout, err)
    if err.isatty():
        return TtyReporter(err, raw(err))  # it redraws its line itself (reins.loop.progress)
    return LineReporter(err, err)


def exit_code(summary: Summary) -> Exit:
    """The exit status of ``reins loop`` for how the run ended."""
    from reins.loop import StopReason

    reason = summary.reason
    if reason is StopReason.BREAKER:
        return Exit.BREAKER
    if reason is StopReason.JUDGE_BREAKER:
        return Exit.JUDGE_ERROR
    if reason is StopReason.LEASED:
        return Exit.NOTHING_LEFT
    if reason is StopReason.SET_ASIDE:
        return Exit.SET_ASIDE
    if reason is StopReason.INTERRUPTED:
        return Exit.SIGTERM if summary.signal == "SIGTERM" else Exit.SIGINT
    if reason is StopReason.ERROR:
        return Exit.ERROR
    return Exit.OK


COMMANDS = (loop,)
