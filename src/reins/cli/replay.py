"""``reins replay``: judge recorded outputs, each line through the same turn as a submission.

Exit codes are those of :class:`reins.errors.Exit` (the table is in :mod:`reins.cli.app`):
``replay`` exits 0, 1, 2, 8, 9 or 10 (10 outranks 8).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

import click

from reins.cli.app import Env, emit_json, pass_env, say_refused
from reins.cli.loop import RETRY
from reins.cli.shapes.runs import ReplayTally, replayed
from reins.cli.work import json_option
from reins.errors import Exit

if TYPE_CHECKING:
    from pathlib import Path

    from reins.turn.replay import Fields, ReplayResult, ReplaySummary


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
    "--key-field",
    metavar="NAME",
    default="key",
    show_default=True,
    help="The field of each line holding the item's key (a string or an integer).",
)
@click.option(
    "--match",
    "match",
    metavar="FIELD",
    help="Find each line's item by this payload field instead of a key: the line's FIELD "
    "(e.g. prompt) equals the item's payload FIELD.",
)
@click.option(
    "--output-field",
    metavar="NAME",
    default="output",
    show_default=True,
    help="The field of each line holding the output to judge (e.g. response).",
)
@click.option(
    "--driver",
    "-d",
    show_default="replay",
    help="Driver name recorded on each attempt.",
)
@click.option(
    "--retry",
    type=RETRY,
    help="Retry policy (or schedule, see `reins loop --help`) recorded with each turn "
    "[default: the quest's].",
)
@click.option(
    "--max-tries",
    type=click.IntRange(min=1),
    help="Answers allowed before an item locks DONE, for this replay (1: a one-shot evaluation).",
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
    key_field: str,
    match: str | None,
    output_field: str,
    driver: str | None,
    retry: str | None,
    max_tries: int | None,
    dry_run: bool,
    check_determinism: bool,
    no_export: bool,
    as_json: bool,
) -> None:
    """Judge recorded outputs: each line goes through the same turn as a submission.

    A benchmark's own file replays as it is: --key-field and --output-field name its fields;
    --match FIELD finds each line's item by a payload field (`--match prompt --output-field
    response` reads IFEval's and IFBench's {"prompt", "response"} files).

    Lines run in order, so several lines for one key are its successive answers. An output
    already judged for its item (in the item's current round) is not judged again, so a file
    replayed twice spends no second try. A bad line, an unknown key, a locked item or one
    another driver holds is skipped and reported on stderr. The summary counts the outcomes,
    the judge errors and the generation errors. Exits 0 when every line was recorded (or
    repeated), 10 when the gate itself failed on a line (a judge error: no try used), else 8
    when some were skipped.
    """
    import dataclasses

    from reins.turn.drivers import DRIVERS
    from reins.turn.replay import Fields, match_index, read_lines
    from reins.turn.replay import replay as replay_lines

    quest = env.judging_quest()
    if max_tries is not None:
        quest = dataclasses.replace(quest, max_tries=max_tries)
    ledger = env.ledger()
    fields = Fields(key_field, output_field, match, match_index(ledger, match) if match else {})
    if check_determinism:
        source = _check_first(env, source, fields)
    results = None if no_export or dry_run or not env.settings.auto_export else env.results_path
    summary = replay_lines(
        ledger,
        quest,
        read_lines(source, fields),
        driver=driver or DRIVERS["replay"].default_name,
        policy=retry,
        limit=env.settings.max_submission,
        results=results,
        on_result=_shower(as_json, quest.max_tries),
        dry_run=dry_run,
    )
    _tell(summary, results, as_json)
    # The gate failing outranks skipped lines: fix the gate first; a rerun judges those lines
    # again (a judge error is no judged output) and reports the skipped ones again.
    if summary.judge_errors:
        sys.exit(Exit.JUDGE_ERROR)
    if not summary.complete:
        sys.exit(Exit.REPLAY_INCOMPLETE)


def _shower(as_json: bool, allowed: int) -> Callable[[ReplayResult], None]:
    """What is written for each line as it is replayed."""
    from reins.turn.replay import Replayed

    def show(result: ReplayResult) -> None:
        if as_json:
            emit_json(replayed(result, allowed))
        elif result.recorded is not None:
            click.echo(result.recorded.text.split("\n", 1)[0])
        else:  # a dry run's verdict is data; a skipped line is a message
            click.echo(result.message, err=result.status is not Replayed.JUDGED)

    return show


def _tell(summary: ReplaySummary, results: Path | None, as_json: bool) -> None:
    """The last line: lines by status, the outcomes judged, errors, records exported."""
    from reins.turn.replay import Replayed

    counts = {status.value: summary.lines[status] for status in Replayed}
    if as_json:
        say_refused(summary.exported)
        emit_json(ReplayTally.of(summary, counts))
        return
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
    if summary.exported.count:
        click.echo(f"exported {summary.exported.count} record(s) to {results}", err=True)
    say_refused(summary.exported)


def _check_first(env: Env, source: BinaryIO, fields: Fields) -> BinaryIO:
    """Judge the file's outputs in fresh processes; stop before recording if a rule wavers.
    The file read, to replay next."""
    import io

    from reins.cli.gate import outputs
    from reins.turn.determinism import check

    if not env.settings.quest_ref:
        raise click.UsageError("--check-determinism runs the quest in fresh processes: --quest")
    data = source.read()
    entries = outputs(env, data.splitlines(), 10**9, fields)
    found = check(env.settings.quest_ref, entries, folder=env.settings.quest_folder)
    for d in found:
        click.echo(f"{d.key}: {', '.join(d.rules)} judged differently in fresh processes", err=True)
    if found:
        click.echo("nothing was recorded: make the gate deterministic first", err=True)
        sys.exit(Exit.UNSOUND)
    return io.BytesIO(data)


COMMANDS = (replay,)
