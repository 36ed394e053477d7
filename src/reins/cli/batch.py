"""``reins batch``: the provider batches of ``reins loop --batch``: status, and cancelling.

Each batch job is in the ledger from before anything was sent (``reins.store.jobs``), so both
commands work from any machine that opens the ledger; asking the provider (``status
--model``, ``cancel``) needs the backend the job was sent to, with its key in the environment.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.shapes.batch import JobView
from reins.cli.work import json_option

if TYPE_CHECKING:
    from reins.backends.batch import RemoteBatch
    from reins.loop import Reporter
    from reins.store.jobs import BatchJob


@click.group()
def batch() -> None:
    """The provider batches of `loop --batch`: where each stands, and cancelling them."""


@batch.command()
@click.option("--all", "every", is_flag=True, help="Also the batch jobs that ended.")
@click.option(
    "--model",
    "-m",
    metavar="SPEC",
    help="Also ask the provider, through this backend, where each sent batch stands.",
)
@json_option
@pass_env
def status(env: Env, every: bool, model: str | None, as_json: bool) -> None:
    """The open batch jobs (with --all, every one): state, provider batch, items, expiry.

    A job leases its items for the provider's window (24 h and an hour to collect): they are
    nobody else's until its results are recorded or it is cancelled. With --model SPEC, each
    sent batch's status and counts as the provider gives them.
    """
    jobs = env.ledger().jobs(open_only=not every)
    remotes = _remotes(model, jobs) if model else {}
    now = time.time()
    views = [JobView.of(j, now, remotes.get(j.id)) for j in jobs]
    if as_json:
        emit_json(views)
        return
    if not views:
        click.echo("no open batch job" if not every else "no batch job")
        return
    for view in views:
        click.echo(_line(view, now))


@batch.command()
@click.argument("jobs", nargs=-1, type=click.IntRange(min=1))
@click.option(
    "--model",
    "-m",
    metavar="SPEC",
    envvar="REINS_MODEL",
    required=True,
    help="The backend the jobs were sent to, as given to `loop --batch` [env REINS_MODEL].",
)
@click.option(
    "--no-wait",
    is_flag=True,
    help="Ask the provider to cancel and return; the next `loop --batch` (or `batch cancel`) "
    "records what finished before the cancel took.",
)
@json_option
@pass_env
def cancel(env: Env, jobs: tuple[int, ...], model: str, no_wait: bool, as_json: bool) -> None:
    """Cancel the open batch jobs JOBS (none named: every open one of --model's backend).

    A sent batch is cancelled at the provider; what it answered before the cancel took is
    recorded (each a turn, as `loop --batch` records it), and the items it did not answer are
    given back, TODO with their tries unchanged. A job never sent is discarded.
    """
    from reins.loop import LoopOptions
    from reins.loop.generator import text_backend
    from reins.loop.run import cancel_batches

    backend = text_backend(model)
    done = cancel_batches(
        env.ledger(), env.judging_quest(), backend, jobs, wait=not no_wait,
        options=LoopOptions(poll=2.0), reporter=_notes(),
    )  # fmt: skip
    now = time.time()
    views = [JobView.of(job, now, outcome=outcome) for job, outcome in done]
    if as_json:
        emit_json(views)
        return
    if not views:
        click.echo("no open batch job to cancel")
    for view in views:
        click.echo(_line(view, now))


def _remotes(model: str, jobs: list[BatchJob]) -> dict[int, RemoteBatch]:
    """The provider's word on each sent job of ``model``'s backend."""
    import asyncio

    from reins.backends.batch import batch_api_of
    from reins.loop.generator import text_backend

    api = batch_api_of(text_backend(model))
    sent = [j for j in jobs if j.batch_id and (j.backend, j.model) == (api.name, api.model)]

    async def ask() -> list[RemoteBatch]:
        return [await api.retrieve(j.batch_id) for j in sent if j.batch_id]

    return {j.id: r for j, r in zip(sent, asyncio.run(ask()), strict=True)}


def _line(v: JobView, now: float) -> str:
    """``batch job 3  sent  openai:gpt-4o  batch_abc  500 item(s)  …``."""
    from reins.loop.lines import clock

    parts = [f"batch job {v.job}", v.state, f"{v.backend}:{v.model}", v.batch_id or "(unsent)"]
    parts.append(f"{v.requests} item(s)")
    if v.outcome is not None:
        parts.append(v.outcome)
    elif v.state not in ("collected", "cancelled", "discarded"):
        parts.append(f"leases run out in {clock(max(v.expires_at - now, 0.0))}")
    if v.held_by:
        parts.append(f"driven by {v.held_by}")
    if v.provider is not None:
        counts = ", ".join(f"{k} {n}" for k, n in v.provider.counts.items())
        parts.append(f"provider: {v.provider.status}" + (f" ({counts})" if counts else ""))
    if v.note:
        parts.append(v.note)
    return "  ".join(parts)


def _notes() -> Reporter:
    """Notes on stderr, nothing else: the outcome is printed once the cancel is done."""
    from reins.loop import NullReporter

    class Notes(NullReporter):
        def note(self, text: str) -> None:
            click.echo(f"note: {text}", err=True)

    return Notes()


COMMANDS = (batch,)
