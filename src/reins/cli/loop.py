"""Commands that drive unattended: ``loop`` (a backend generates) and ``replay`` (a file does).

Exit codes beyond the shared ones (see :mod:`reins.cli.app`):

====  =========================================================================
0     ``loop``: every item is locked, or a cap you set (--max-*) was reached
3     ``loop``: items are left, but all are leased to other drivers
7     ``loop``: the circuit breaker tripped (generation errors on N items in a row)
10    ``loop``: the judge breaker tripped (N judge errors in a row)
12    ``loop``: items are left that this run set aside (their generation kept failing)
8     ``replay``: some lines were not recorded (bad, unknown key, locked, leased)
10    ``replay``: the gate failed on a line (a judge error; outranks 8)
130   ``loop``: stopped by SIGINT (Ctrl-C); 143 by SIGTERM. Nothing half-recorded.
====  =========================================================================
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, BinaryIO

import click

from reins.cli.app import EXIT_JUDGE_ERROR, EXIT_NOTHING_LEFT, Env, emit_json, pass_env
from reins.cli.work import json_option

if TYPE_CHECKING:
    from reins.backends.base import Backend
    from reins.loop import Reporter, Summary
    from reins.turn.replay import ReplayResult

EXIT_BREAKER = 7
EXIT_SET_ASIDE = 12
EXIT_REPLAY_INCOMPLETE = 8
EXIT_SIGNAL = {"SIGINT": 130, "SIGTERM": 143}
# The same as reins.quest.RETRY_POLICIES (a test keeps them equal); not imported, to start fast.
RETRY_CHOICES = ("facts", "facts+previous", "fresh")


def resolve_backend(spec: str) -> Backend:
    """The backend a ``--model`` spec names, through the ``reins.backends`` registry."""
    from reins.backends.registry import resolve

    return resolve(spec)


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
    help="Items in flight at once, each leased.",
)
@click.option("--max-items", type=click.IntRange(min=1), help="Take up at most N items.")
@click.option("--max-turns", type=click.IntRange(min=1), help="Record at most N turns.")
@click.option("--max-tokens", type=click.IntRange(min=1), help="Stop after N tokens (in + out).")
@click.option(
    "--max-cost", type=click.FloatRange(min=0, min_open=True), help="Stop after this cost."
)
@click.option(
    "--retry",
    type=click.Choice(RETRY_CHOICES),
    help="How a retry is composed [default: the quest's, else facts].",
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
@click.option("--no-export", is_flag=True, help="Do not append locked items to the results file.")
@json_option
@pass_env
def loop(
    env: Env,
    model: str,
    strong: str | None,
    escalate_on: tuple[str, ...],
    concurrency: int,
    max_items: int | None,
    max_turns: int | None,
    max_tokens: int | None,
    max_cost: float | None,
    retry: str | None,
    breaker: int,
    set_aside_after: int,
    no_wait: bool,
    judge_breaker: int,
    driver: str | None,
    timeout: float,
    lease: float,
    no_export: bool,
    as_json: bool,
) -> None:
    """Work the quest unattended: a backend answers, the gate judges, the ledger records.

    Every turn is composed from the log, exactly as `reins next` prints it; a FAIL's facts go
    back in the next prompt. A backend error uses no try. An item whose generation fails
    --set-aside-after times in a row is set aside for the rest of the run (TODO, tries
    unchanged) and the others go on; when generation fails on --breaker items in a row, the
    loop stops with nothing locked. A judge error (the gate itself failing on a submission)
    uses no try either; after --judge-breaker of them in a row the loop stops. Ctrl-C stops
    cleanly (the same signal again within a second is the same request; a later second
    Ctrl-C interrupts at once), and a rerun resumes where the ledger stands (items set aside
    are tried again). Prints a live status line on a terminal, a line per turn otherwise, one
    JSON event per turn (and per item set aside) with --json, and a summary.

    When the items left are all leased to other drivers, it waits for their leases to run out
    (saying so every 10 s), or with --no-wait stops.

    Exits 0 when every item is locked or a --max-* cap is reached, 3 with --no-wait when the
    items left are all leased to other drivers, 7 when the breaker trips, 10 when the judge
    breaker trips, 12 when the items left include some this run set aside, 130 or 143 on
    SIGINT or SIGTERM.
    """
    from reins.loop import Budget, LoopOptions, run
    from reins.turn.drivers import DRIVERS

    rules = frozenset(r.strip() for value in escalate_on for r in value.split(",") if r.strip())
    if rules and strong is None:
        raise click.UsageError("--escalate-on needs --strong: the model an item escalates to")
    quest = env.quest
    ledger = env.ledger()
    backend = resolve_backend(model)
    stronger = resolve_backend(strong) if strong else None
    options = LoopOptions(
        concurrency=concurrency,
        budget=Budget(
            max_items=max_items, max_turns=max_turns, max_tokens=max_tokens, max_cost=max_cost
        ),
        breaker=breaker,
        set_aside_after=set_aside_after,
        judge_breaker=judge_breaker,
        wait=not no_wait,
        retry=retry,
        escalate_on=rules,
        driver=driver or DRIVERS["loop"].default_name,
        timeout=timeout,
        lease_ttl=lease,
        results=None if no_export or not env.settings.auto_export else env.results_path,
    )
    if stronger is not None and not (quest.escalate_on | rules):
        click.echo(
            "note: --strong is never used: neither the quest nor --escalate-on names a rule",
            err=True,
        )
    summary = run(
        ledger, quest, backend, strong=stronger, options=options, reporter=_reporter(as_json)
    )
    code = exit_code(summary)
    if code:
        sys.exit(code)


def _reporter(as_json: bool) -> Reporter:
    from reins.loop import JsonReporter, LineReporter, TtyReporter

    out, err = sys.stdout, sys.stderr
    if as_json:
        return JsonReporter(out)
    if err.isatty():
        return TtyReporter(out, err)
    return LineReporter(out, err)


def _check_first(env: Env, data: bytes) -> None:
    """Judge the file's outputs in fresh processes; stop before recording if a rule wavers."""
    from reins.cli.gate import EXIT_UNSOUND, outputs
    from reins.turn.determinism import check

    if not env.settings.quest_ref:
        raise click.UsageError("--check-determinism runs the quest in fresh processes: --quest")
    entries = outputs(env, data.splitlines(), 10**9)
    found = check(env.settings.quest_ref, entries, folder=env.settings.quest_folder)
    for d in found:
        click.echo(f"{d.key}: {', '.join(d.rules)} judged differently in fresh processes", err=True)
    if found:
        click.echo("nothing was recorded: make the gate deterministic first", err=True)
        sys.exit(EXIT_UNSOUND)


def exit_code(summary: Summary) -> int:
    """The exit status of ``reins loop`` for how the run ended."""
    from reins.loop import StopReason

    reason = summary.reason
    if reason is StopReason.BREAKER:
        return EXIT_BREAKER
    if reason is StopReason.JUDGE_BREAKER:
        return EXIT_JUDGE_ERROR
    if reason is StopReason.LEASED:
        return EXIT_NOTHING_LEFT
    if reason is StopReason.SET_ASIDE:
        return EXIT_SET_ASIDE
    if reason is StopReason.INTERRUPTED:
        return EXIT_SIGNAL.get(summary.signal or "", 130)
    if reason is StopReason.ERROR:
        return 1
    return 0


@click.command()
@click.option(
    "--from",
    "source",
    metavar="FILE.jsonl",
    type=click.File("rb"),
    required=True,
    help='Recorded outputs, a JSON line {"key": …, "output": …} each; - reads stdin.',
)
@click.option(
    "--driver",
    "-d",
    show_default="replay",
    help="Driver name recorded on each attempt.",
)
@click.option(
    "--retry",
    type=click.Choice(RETRY_CHOICES),
    help="Retry policy recorded with each turn [default: the quest's].",
)
@click.option(
    "--max-tries",
    type=click.IntRange(min=1),
    help="Tries before an item locks DONE, for this replay (1: a one-shot evaluation).",
)
@click.option("--dry-run", is_flag=True, help="Judge and print verdicts; record nothing.")
@click.option(
    "--check-determinism",
    is_flag=True,
    help="First judge the file twice in fresh processes; record nothing if a rule wavers (9).",
)
@click.option("--no-export", is_flag=True, help="Do not append locked items to the results file.")
@json_option
@pass_env
def replay(
    env: Env,
    source: BinaryIO,
    driver: str | None,
    retry: str | None,
    max_tries: int | None,
    dry_run: bool,
    check_determinism: bool,
    no_export: bool,
    as_json: bool,
) -> None:
    """Judge recorded outputs: each line goes through the same turn as a submission.

    Lines run in order, so several lines for one key are its successive tries. An output
    already judged for its item (in the item's current round) is not judged again, so a file
    replayed twice spends no second try. A bad line, an unknown key, a locked item or one
    another driver holds is skipped and reported on stderr. The summary counts the outcomes,
    the judge errors and the generation errors. Exits 0 when every line was recorded (or
    repeated), 10 when the gate itself failed on a line (a judge error: no try used), else 8
    when some were skipped.
    """
    import dataclasses

    from reins.turn.drivers import DRIVERS
    from reins.turn.replay import Replayed, read_lines
    from reins.turn.replay import replay as replay_lines

    quest = env.quest
    if max_tries is not None:
        quest = dataclasses.replace(quest, max_tries=max_tries)
    if check_determinism:
        import io

        data = source.read()
        _check_first(env, data)
        source = io.BytesIO(data)
    ledger = env.ledger()
    results = None if no_export or dry_run or not env.settings.auto_export else env.results_path

    def show(result: ReplayResult) -> None:
        recorded = result.recorded
        if as_json:
            data: dict[str, object] = {
                "line": result.line,
                "key": result.key,
                "status": result.status.value,
            }
            if recorded is not None and recorded.verdict is not None:
                data.update(
                    outcome=recorded.verdict.outcome.value,
                    state=recorded.item.state.value,
                    tries=recorded.item.tries,
                    turn=recorded.attempt.turn,
                    root_cause=recorded.verdict.root_cause,
                    feedback=recorded.text,
                )
            else:
                data["message"] = result.message
            emit_json(data)
        elif recorded is not None:
            click.echo(recorded.text.split("\n", 1)[0])
        else:  # a dry run's verdict is data; a skipped line is a message
            click.echo(result.message, err=result.status is not Replayed.JUDGED)

    summary = replay_lines(
        ledger,
        quest,
        read_lines(source),
        driver=driver or DRIVERS["replay"].default_name,
        policy=retry,
        limit=env.settings.max_submission,
        results=results,
        on_result=show,
        dry_run=dry_run,
    )
    counts = {status.value: summary.lines[status] for status in Replayed}
    if as_json:
        emit_json(
            {
                "event": "summary",
                "lines": counts,
                "outcomes": dict(summary.outcomes),
                "judge_errors": summary.judge_errors,
                "generation_errors": summary.generation_errors,
                "exported": summary.exported,
            }
        )
    else:
        done = sum(summary.lines.values())
        parts = [f"{n} {status}" for status, n in counts.items() if n]
        judged = [f"{k} {v}" for k, v in sorted(summary.outcomes.items())]
        for name, n in (
            ("judge errors", summary.judge_errors),
            ("generation errors", summary.generation_errors),
        ):
            judged += [f"{name} {n}"] if n else []
        click.echo(
            f"replayed {done} line(s): {', '.join(parts) or 'none'}"
            + (f" ({', '.join(judged)})" if judged else "")
        )
        if summary.exported:
            click.echo(f"exported {summary.exported} record(s) to {results}", err=True)
    # The gate failing outranks skipped lines: fix the gate first; a rerun judges those lines
    # again (a judge error is no judged output) and reports the skipped ones again.
    if summary.judge_errors:
        sys.exit(EXIT_JUDGE_ERROR)
    if not summary.complete:
        sys.exit(EXIT_REPLAY_INCOMPLETE)


COMMANDS = (loop, replay)
