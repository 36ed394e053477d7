"""Commands that move work: ``scan`` seeds items, ``next`` leases one, ``submit`` answers it.

An agent runs ``next`` and ``submit`` once per turn: what only one branch needs (the shapes of
``--json``, each a dataclass built at import) is imported in that branch.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, BinaryIO

import click

from reins.cli.app import Env, emit_json, pass_env, say_refused
from reins.cli.config import default_driver
from reins.errors import Exit

if TYPE_CHECKING:
    from collections.abc import Iterator

    from reins.values import JSON

NAG_AFTER = 3


def _json_errors(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    # Parsed before the command runs, so an error the command raises is written as JSON too.
    env = ctx.find_object(Env)
    if env is not None and value:
        env.json_errors = True
    return value


json_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    callback=_json_errors,
    help='Write JSON for programs (errors too: {"error": …, "exit_code": …}).',
)
driver_option = click.option(
    "--driver",
    "-d",
    default=default_driver,
    show_default="$REINS_DRIVER or your user name",
    help="Who is working: leases and the log are kept per driver.",
)


@click.command()
@click.argument("args", nargs=-1)
@json_option
@pass_env
def scan(env: Env, args: tuple[str, ...], as_json: bool) -> None:
    """Seed the quest's items from ARGS (what they mean is the quest's: files, folders, …).

    Creates the ledger if it is missing. Items already present are left untouched.

    A quest whose items are found in its repository (``[items] from``: failing tests, a
    program's findings, matching files) finds them at its base when ARGS are none, in a tree
    of reins' own; a rescan adds what is new and never reopens a locked item.
    """
    import itertools

    from reins.errors import ConfigError, ReinsError

    quest = env.quest
    source: _Source | None = None
    try:
        if quest.found is not None and not args:
            from reins.workspace.site import BASE_META

            ledger = env.ledger(create=True)
            base, found = _found(env, ledger.meta(BASE_META))
            source = _Source(quest.found.kind, base)
            seeds = source.count((str(s[0]), s[1]) for s in found)
            first = list(itertools.islice(seeds, 1))
            if ledger.meta(BASE_META) is None:  # before any item: the loop starts from it too
                ledger.set_meta(BASE_META, base)
        else:
            seeds = ((str(s[0]), s[1]) for s in quest.seed(list(args)))
            # The first item is read before the ledger exists: a scan that fails at once (a
            # missing folder, a bad argument) leaves no empty ledger behind.
            first = list(itertools.islice(seeds, 1))
            ledger = env.ledger(create=True)
        added, present = ledger.add(itertools.chain(first, seeds))
    except ReinsError:
        raise
    except (OSError, UnicodeError) as exc:
        raise ConfigError(f"scan: {exc}") from exc
    except Exception as exc:  # the quest's own seed code
        raise ConfigError(f"scan: the quest's seed raised {type(exc).__name__}: {exc}") from exc
    stats = ledger.stats()
    if quest.extras:  # the items are in; judging them waits for the extra: say so now
        _note_missing_extras(env)
    if as_json:
        from reins.cli.shapes.work import FoundBy, Scanned

        by = None if source is None else FoundBy(source.kind, source.base, source.found)
        emit_json(Scanned(added, present, stats.total, ledger.location, by))
        return
    if source is not None:  # what the source itself found, before what the ledger made of it
        click.echo(f"{source.kind} found {source.found} item(s) at base {source.base[:12]}")
    click.echo(
        f"added {added} item(s), {present} already present; {stats.total} in {ledger.location} "
        f"({stats.remaining} to do)"
    )


def _note_missing_extras(env: Env) -> None:
    from reins.errors import MissingExtra

    try:
        env.judging_quest()
    except MissingExtra as exc:
        click.echo(f"note: {exc}", err=True)


class _Source:
    """The repository source a scan ran: its kind, the base it read, how many items it found."""

    def __init__(self, kind: str, base: str) -> None:
        self.kind, self.base, self.found = kind, base, 0

    def count(self, seeds: Iterator[tuple[str, JSON]]) -> Iterator[tuple[str, JSON]]:
        for seed in seeds:
            self.found += 1
            yield seed


def _found(env: Env, recorded: str | None) -> tuple[str, Iterator[tuple[str, JSON]]]:
    """The base and the items the quest finds in its repository, in the workspaces' folder
    the loop uses (so it reuses the base store the scan made)."""
    from reins.cli.loopflags import worktrees_beside
    from reins.loop.places import default_root
    from reins.sources.scanning import found_items

    workspace = env.quest.workspace
    assert workspace is not None
    root = workspace.worktrees or default_root(workspace, env.quest.name, worktrees_beside(env))
    say = lambda said: click.echo(f"note: {said}", err=True)  # noqa: E731 (a minute, said)
    base, seeds = found_items(env.quest, root=root, recorded=recorded, say=say)
    return base, ((s.key, s.payload) for s in seeds)


@click.command("next")
@driver_option
@click.option(
    "--lease",
    "lease",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds the item stays yours without a submit [default 900, reins.toml lease].",
)
@click.option("--peek", is_flag=True, help="Show the next prompt without leasing anything.")
@json_option
@pass_env
def next_(env: Env, driver: str, lease: float | None, peek: bool, as_json: bool) -> None:
    """Lease the next item to DRIVER and print its full prompt.

    Asking again before submitting returns the same item (one item in progress per driver),
    with a new lease token: submit with the latest one. Exits 3 when nothing is left to lease.
    """
    from reins.turn.compose import compose
    from reins.turn.views import leased_prompt

    quest = env.quest if peek else env.judging_quest()
    ledger = env.ledger()
    if peek:
        _peek(env, driver, as_json)
        return
    held = ledger.lease(driver, ttl=lease or env.settings.lease)
    if held is None:
        stats = ledger.stats()
        if as_json:
            from reins.cli.shapes.work import NothingLeft

            emit_json(NothingLeft(stats.remaining, stats.leased))
        elif stats.remaining:  # a message, not a prompt: stdout stays empty
            click.echo(
                f"nothing free: the {stats.remaining} item(s) left are leased to other drivers",
                err=True,
            )
        else:
            click.echo(f"nothing left: all {stats.total} item(s) are locked", err=True)
        sys.exit(Exit.NOTHING_LEFT)
    item, log = ledger.snapshot(held.item.key)
    prompt = compose(quest, item, log)
    nag = held.nexts_since_submit >= NAG_AFTER
    answer = f"reins submit --key {item.key} --token {held.token} --in FILE"
    reminder = (
        f"reminder: you asked for an item {held.nexts_since_submit} times without submitting. "
        f"Finish {item.key!r} and submit it: {answer}"
    )
    if as_json:
        from reins.cli.shapes.work import Leased

        emit_json(Leased.of(quest, held, item, prompt, driver, reminder if nag else None))
        return
    if nag:
        click.echo(reminder)
    click.echo(leased_prompt(quest, item, prompt, driver), nl=False)
    click.echo(f"\n# answer with: {answer}   (or --in - for stdin)")


def _peek(env: Env, driver: str, as_json: bool) -> None:
    """The prompt `next` would print now, without leasing (nor counting a request)."""
    import time

    from reins.store.model import State
    from reins.store.query import PageQuery
    from reins.store.walk import iter_items
    from reins.turn.compose import compose

    store, now = env.ledger(), time.time()
    # As `next` leases: the driver's own live lease first, else the first free TODO item.
    mine = iter_items(store, PageQuery(state=State.TODO, leased_to=driver))
    found = next((i for i in mine if (i.lease_expires or 0) > now), None)
    if found is None:
        todo = iter_items(store, PageQuery(state=State.TODO))
        found = next(
            (i for i in todo if i.lease_owner is None or (i.lease_expires or 0) <= now), None
        )
    if found is None:
        if as_json:
            from reins.cli.shapes.work import NothingToPeek

            emit_json(NothingToPeek())
        else:
            click.echo("nothing free to peek at", err=True)
        sys.exit(Exit.NOTHING_LEFT)
    item, log = store.snapshot(found.key)
    prompt = compose(env.quest, item, log)
    if as_json:
        from reins.cli.shapes.work import Peeked

        emit_json(Peeked.of(env.quest, item, prompt))
        return
    from reins.gate.wording import answer_of

    asked = answer_of(item.tries + 1, env.quest.max_tries)
    click.echo(f"# item {item.key} · {asked} · turn {item.turns + 1} · peek: not leased")
    click.echo(prompt.text().rstrip("\n"))


@click.command()
@click.argument("key", required=False)
@click.option("--mine", is_flag=True, help="Give back every lease DRIVER holds.")
@click.option("--expired", is_flag=True, help="Clear every lease that has run out.")
@driver_option
@json_option
@pass_env
def release(
    env: Env, key: str | None, mine: bool, expired: bool, driver: str, as_json: bool
) -> None:
    """Give back a lease: KEY's (held by DRIVER), --mine (all of DRIVER's), or --expired."""
    import time

    from reins.errors import LeaseConflict
    from reins.store.model import State
    from reins.store.query import PageQuery
    from reins.store.walk import iter_items

    if sum((key is not None, mine, expired)) != 1:
        raise click.UsageError("give one of KEY, --mine or --expired")
    store = env.ledger()
    released: list[str] = []
    if mine:
        held = [i.key for i in iter_items(store, PageQuery(state=State.TODO, leased_to=driver))]
        store.release_all(driver)
        released = held
    elif expired:
        now = time.time()
        for i in iter_items(store, PageQuery(state=State.TODO)):
            ran_out = i.lease_owner is not None and (i.lease_expires or 0) <= now
            if ran_out and i.lease_owner is not None and store.release(i.key, i.lease_owner):
                released.append(i.key)
    else:
        assert key is not None
        item = store.get(key)
        if item.lease_owner is None:
            released = []
        elif item.lease_owner != driver:
            raise LeaseConflict(
                f"item {key!r} is leased to {item.lease_owner!r}, not {driver!r}: only its "
                f"holder releases it (--driver {item.lease_owner}), or wait for it to expire"
            )
        elif store.release(key, driver):
            released = [key]
    if as_json:
        from reins.cli.shapes.work import Released

        emit_json(Released(tuple(released)))
    else:
        click.echo(
            f"released {len(released)} lease(s)" + (f": {', '.join(released)}" if released else "")
        )


@click.command()
@click.option("--key", "-k", required=True, help="The item you answer.")
@click.option(
    "--in",
    "source",
    type=click.File("rb"),
    default="-",
    show_default=True,
    help="File holding the submission; - reads stdin.",
)
@driver_option
@click.option(
    "--token",
    "-t",
    envvar="REINS_LEASE_TOKEN",
    help="The lease token `reins next` printed; a stale one is refused [env REINS_LEASE_TOKEN].",
)
@click.option("--no-export", is_flag=True, help="Do not append locked items to the results file.")
@json_option
@pass_env
def submit(
    env: Env,
    key: str,
    source: BinaryIO,
    driver: str,
    token: str | None,
    no_export: bool,
    as_json: bool,
) -> None:
    """Judge a submission for item KEY and record the turn.

    Prints the verdict: outcome and the answer it judged (answer 2 of 3), root cause, and
    each fact as where / expected / actual — the same text the next prompt feeds back.
    Exits 0 on PASS, 4 on a FAIL with answers left,
    11 when the item locked without a pass (DONE, REVIEW, SKIPPED, BLOCKED), 5 when it was
    locked already, 6 when another driver holds it, 10 when the gate itself failed (a judge
    error: recorded, no answer counted — fix the gate and submit again). A submission that is
    empty, larger than max_submission (1 MiB by default) or not UTF-8 is refused with exit 2:
    nothing is recorded, no try is used and the lease is kept.
    """
    from reins.store.model import AttemptKind, State
    from reins.turn.submit import submit as submit_turn

    quest = env.judging_quest()
    ledger = env.ledger()
    limit = env.settings.max_submission
    raw = _read_submission(source, limit)
    results = None if no_export or not env.settings.auto_export else env.results_path
    recorded, exported = submit_turn(
        ledger, quest, key, raw, driver=driver, limit=limit, results=results, token=token
    )
    item, attempt = recorded.item, recorded.attempt
    if as_json:
        from reins.cli.shapes.work import Submitted

        emit_json(Submitted.of(quest, recorded, exported))
    else:
        click.echo(recorded.text, nl=False)
        if exported.count:
            click.echo(f"exported {exported.count} record(s) to {results}", err=True)
    say_refused(exported)
    if attempt.kind is AttemptKind.JUDGE_ERROR:
        sys.exit(Exit.JUDGE_ERROR)
    if not item.state.terminal:
        sys.exit(Exit.FAIL_RETRY)
    if item.state is not State.PASS:
        sys.exit(Exit.LOCKED_NOT_PASS)


def _read_submission(source: BinaryIO, limit: int) -> bytes:
    """A person's submission, or a ConfigError that records nothing.

    A model's oversize or undecodable output is its own fault and a FAIL fact (the loop,
    replay and an agent's MCP tool call judge it so); a person who hands over the wrong file
    is told at once, and keeps the try and the lease.
    """
    from reins.errors import ConfigError

    raw = source.read(limit + 1)
    untouched = "nothing was recorded, no try used, the lease is kept"
    if len(raw) > limit:
        raise ConfigError(
            f"the submission is larger than the limit of {limit} bytes: {untouched}. "
            "Submit a shorter answer, or raise max_submission in reins.toml"
        )
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"the submission is not UTF-8 text (byte {exc.start} is not): {untouched}. "
            "Save the answer as UTF-8 and submit it again"
        ) from None
    if not raw.strip():
        raise ConfigError("the submission is empty: nothing was recorded")
    return raw


COMMANDS = (scan, next_, submit, release)
