"""The human lane in the CLI: list items, review, resolve, reopen, re-judge and drop.

A person has the last word: these are the only commands that move a locked item, each as a
recorded turn of kind ``human`` naming who did it and why.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, emit_json, pass_env, say_refused
from reins.cli.config import default_driver
from reins.cli.shapes import Refused
from reins.cli.shapes.items import Acted, Change, ItemRow, ItemsPage, Rejudged, ReviewRow
from reins.cli.work import json_option

if TYPE_CHECKING:
    from reins.quest import Quest
    from reins.store.export import Exported
    from reins.store.model import Item
    from reins.store.protocol import Store
    from reins.turn.record import Recorded

STATES = ("TODO", "PASS", "REVIEW", "DONE", "SKIPPED", "BLOCKED")
LOCKED = ("PASS", "REVIEW", "DONE", "SKIPPED", "BLOCKED")

by_option = click.option(
    "--by",
    default=default_driver,
    show_default="$REINS_DRIVER or your user name",
    help="The person acting; recorded on the attempt and in the export.",
)
rule_option = click.option("--rule", "-r", help="Only items whose last root cause is RULE.")
search_option = click.option(
    "--search",
    metavar="WORDS",
    help="Only items one of whose texts (key and payload, or a turn's submission and facts) "
    "holds every word, each as the start of a word, in any case.",
)


@click.command()
@click.option(
    "--state",
    "-s",
    metavar="STATE",
    help=f"Only items in this state, in any case: {', '.join(STATES)}.",
)
@rule_option
@search_option
@click.option("--after", metavar="CURSOR", help="Cursor from the previous page.")
@click.option(
    "--limit",
    metavar="N",
    default="100",
    show_default=True,
    help="Most items on the page (1 to 10000).",
)
@json_option
@pass_env
def items(
    env: Env,
    state: str | None,
    rule: str | None,
    search: str | None,
    after: str | None,
    limit: str,
    as_json: bool,
) -> None:
    """List items in the order they were added, a page at a time (fast at any size).

    The last line (or "next" in JSON) is the cursor of the next page: pass it to --after.
    """
    from reins.gate.wording import failures_of, state_short
    from reins.store.query import PageQuery

    given = {"state": state, "rule": rule, "search": search, "after": after, "limit": limit}
    wanted = PageQuery.parse(given)
    page = env.ledger().page(wanted)
    allowed = _allowed(env)
    if as_json:
        emit_json(ItemsPage(tuple(ItemRow.of(i, allowed) for i in page.items), page.next))
        return
    for i in page.items:
        cause = f"  root cause {i.root_cause}" if i.root_cause else ""
        again = f"  round {i.round}" if i.round > 1 else ""
        used = failures_of(i.tries, allowed)
        click.echo(f"{i.key}  {state_short(i.state)}  {used}{again}{cause}")
    if page.next is not None:
        click.echo(f"# more: --after {page.next}")


@click.command()
@rule_option
@search_option
@click.option(
    "--limit", metavar="N", default="50", show_default=True, help="Most items listed (1 to 10000)."
)
@click.option("--after", metavar="CURSOR", help="Cursor from the previous page.")
@click.option("--full", is_flag=True, help="Print whole texts and submissions, not excerpts.")
@json_option
@pass_env
def review(
    env: Env,
    rule: str | None,
    search: str | None,
    limit: str,
    after: str | None,
    full: bool,
    as_json: bool,
) -> None:
    """List the REVIEW items waiting for a person, with their text, submission and facts.

    For each: the item's text (as the quest renders it), the submission and the facts that
    raised the doubt, each cut short unless --full; who claimed it on the dashboard.

    Settle each with `reins resolve KEY --accept|--reject --note TEXT`.
    """
    import time

    from reins.store.model import State
    from reins.store.query import PageQuery
    from reins.turn.review import review_text, source

    given = {"rule": rule, "search": search, "limit": limit, "after": after}
    waiting = PageQuery.parse(given, base=PageQuery(state=State.REVIEW))
    store = env.ledger()
    quest = env.quest_if_given()
    page = store.page(waiting)
    found = []
    for listed in page.items:
        item, log = store.snapshot(listed.key)
        found.append((item, log[-1] if log else None))
    if as_json:
        allowed = _allowed(env)
        rows = tuple(ReviewRow.of_last(i, last, source(quest, i), allowed) for i, last in found)
        emit_json(ItemsPage(rows, page.next))
        return
    if not found:
        click.echo("nothing to review", err=True)
        return
    now = time.time()
    click.echo(
        "\n".join(review_text(quest, item, last, now=now, full=full) for item, last in found),
        nl=False,
    )
    if page.next is not None:
        click.echo(f"… more: reins review --after {page.next}", err=True)


@click.command()
@click.argument("key")
@click.option("--accept", is_flag=True, help="The item passes (→ PASS).")
@click.option("--reject", is_flag=True, help="The item fails (→ DONE).")
@click.option("--note", "-n", required=True, help="Why: recorded with the decision.")
@by_option
@json_option
@pass_env
def resolve(
    env: Env, key: str, accept: bool, reject: bool, note: str, by: str, as_json: bool
) -> None:
    """Settle a REVIEW item: --accept locks it PASS, --reject locks it DONE."""
    from reins.turn.lane import resolve as resolve_item

    if accept == reject:  # neither, or both: two flags that contradict are no decision
        raise click.UsageError(
            "say --accept or --reject, not both" if accept else "say --accept or --reject"
        )
    recorded = resolve_item(env.ledger(), env.quest, key, accept=accept, note=note, by=by)
    _report(env, [recorded], as_json)


@click.command()
@click.argument("keys", nargs=-1)
@click.option("--reason", required=True, help="Why: recorded on each reopened item.")
@click.option(
    "--state",
    "-s",
    type=click.Choice(LOCKED, case_sensitive=False),
    help="Reopen every item in this state (any case).",
)
@rule_option
@by_option
@json_option
@pass_env
def reopen(
    env: Env,
    keys: tuple[str, ...],
    reason: str,
    state: str | None,
    rule: str | None,
    by: str,
    as_json: bool,
) -> None:
    """Return locked items to TODO in a new round with a fresh try budget.

    Name items by KEY, or select them with --state and/or --rule. The log keeps every earlier
    attempt. A lock already in the results file is withdrawn there by a TODO record (with the
    round, the action and your reason); the item is exported again when it locks again.
    """
    from reins.store.query import PageQuery
    from reins.store.walk import iter_items
    from reins.turn.lane import reopen as reopen_item

    if not keys and state is None and rule is None:
        raise click.UsageError("name items by KEY, or select them with --state or --rule")
    store = env.ledger()
    chosen = list(keys)
    if state is not None or rule is not None:
        wanted = PageQuery.parse({"state": state, "rule": rule})
        chosen += [i.key for i in iter_items(store, wanted) if i.state.terminal]
    done = [reopen_item(store, env.quest, key, reason=reason, by=by) for key in chosen]
    _report(env, done, as_json)


@click.command()
@click.argument("keys", nargs=-1, required=True)
@click.option("--note", "-n", required=True, help="Why: recorded on each dropped item.")
@by_option
@json_option
@pass_env
def drop(env: Env, keys: tuple[str, ...], note: str, by: str, as_json: bool) -> None:
    """Retire items for good: each locks DONE (dropped), with your note, never worked again.

    For what should not have been found (a bad scan's items, a test no one will fix), to do or
    locked: each drop is your recorded action, shown by `reins status` and `reins log`, and
    exported as a DONE record with the action and the note; `reins land` leaves a dropped
    PASS out. An item dropped already is left as it is; one a run is working on now (a live
    lease) is refused. `reins reopen KEY` takes an item back. Every KEY is checked before any
    is dropped.
    """
    from reins.store.model import State
    from reins.turn.lane import drop as drop_item

    store = env.ledger()
    wanted = list(dict.fromkeys(keys))
    for key in wanted:
        store.get(key)  # every one must be there before any is dropped
    last = store.last_attempts(wanted)
    already = [k for k in wanted if k in last and last[k].action == "drop"
               and last[k].state_after is State.DONE]  # fmt: skip
    done = [drop_item(store, env.quest, k, note=note, by=by) for k in wanted if k not in already]
    if already and not as_json:
        click.echo(f"dropped already, left as they are: {', '.join(already)}", err=True)
    if done or not already or as_json:
        _report(env, done, as_json)


@click.command()
@click.option(
    "--state",
    "-s",
    type=click.Choice(LOCKED, case_sensitive=False),
    help="Only items in this state (any case).",
)
@rule_option
@click.option("--apply", "apply_", is_flag=True, help="Record the changed verdicts.")
@click.option("--note", "-n", default="re-judged with the current gate", show_default=True)
@by_option
@json_option
@pass_env
def rejudge(
    env: Env,
    state: str | None,
    rule: str | None,
    apply_: bool,
    note: str,
    by: str,
    as_json: bool,
) -> None:
    """Judge each locked item's locking submission with the current gate.

    A dry run by default: prints the items whose verdict would change. With --apply, records
    each change as a person's action: PASS, REVIEW, SKIPPED and BLOCKED lock as such; a FAIL
    reopens the item for a new round.
    """
    from reins.store.query import PageQuery
    from reins.store.walk import iter_items

    store = env.ledger()
    locked = list(iter_items(store, PageQuery.parse({"state": state, "rule": rule})))
    quest = env.judging_quest()
    changes, done = _rejudge(store, quest, locked, apply_, by=by, note=note)
    settled = all(c.applied for c in changes) if apply_ else not changes
    if state is None and rule is None and settled:  # every locked item, and nothing left
        moved = {r.item.key for r in done}  # judged under the current gate now
        _note_agreement(store, quest.gate_digest, [i for i in locked if i.key not in moved])
    published = _publish(env, done)
    if published.count and not as_json:
        click.echo(f"exported {published.count} record(s) to {env.results_path}", err=True)
    say_refused(published)
    if as_json:
        emit_json(Rejudged(tuple(changes), len(done), published.count, Refused.all_of(published)))
        return
    if not changes:
        click.echo("no verdict would change under the current gate")
        return
    for c in changes:
        was = f"{c.was} ({c.was_root_cause or '-'})"
        now = f"{c.now} ({c.root_cause or '-'})" if c.error is None else c.error
        mark = f"  → {c.new_state}" if c.applied else ""
        click.echo(f"{c.key}  {c.state}: {was} → {now}{mark}")
    if not apply_:
        click.echo(
            f"{len(changes)} item(s) would change; run again with --apply to record them",
            err=True,
        )


def _rejudge(
    store: Store, quest: Quest, locked: list[Item], apply_: bool, *, by: str, note: str
) -> tuple[list[Change], list[Recorded]]:
    """What the current gate changes among ``locked`` (and where it fails); with ``apply_``,
    each change recorded as a person's action, returned beside the changes."""
    from reins.turn.failures import JudgeFailure
    from reins.turn.lane import apply_rejudged
    from reins.turn.lane import rejudge as rejudge_items

    changes: list[Change] = []
    done: list[Recorded] = []
    for found in rejudge_items(store, quest, locked):
        broken = isinstance(found.now, JudgeFailure)
        if not found.changed and not broken:
            continue
        change = Change.of(found)
        if apply_ and not broken:
            recorded = apply_rejudged(store, quest, found, by=by, note=note)
            change = dataclasses.replace(change, new_state=recorded.item.state.value)
            done.append(recorded)
        changes.append(change)
    return changes, done


def _note_agreement(store: Store, current: str, listed: list[Item]) -> None:
    """Record how many locked items of ``listed`` (every item) the current gate agrees with,
    per older gate they were judged under, so ``status`` stops counting them (a TODO item is
    still counted: re-judging judges locked items only)."""
    from collections import Counter

    from reins.store.model import GATE_AGREES

    agreed = Counter(
        i.gate_digest for i in listed if i.state.terminal and i.gate_digest not in (None, current)
    )
    key = GATE_AGREES + current
    text = " ".join(f"{d}={n}" for d, n in sorted(agreed.items()))
    if text != (store.meta(key) or ""):
        store.set_meta(key, text)


def _publish(env: Env, done: list[Recorded]) -> Exported:
    """Export what the actions moved: a locked item is a new record superseding its last one,
    an exported lock moved back to TODO is withdrawn by a TODO record."""
    from reins.store.export import Exported, export

    if not env.settings.auto_export or not done:
        return Exported()
    return export(env.ledger(), env.results_path)


def _report(env: Env, done: list[Recorded], as_json: bool) -> None:
    published = _publish(env, done)
    if published.count and not as_json:
        click.echo(f"exported {published.count} record(s) to {env.results_path}", err=True)
    say_refused(published)
    if as_json:
        emit_json([Acted.of_recorded(r, _allowed(env)) for r in done])
        return
    for r in done:
        click.echo(r.text, nl=False)
    if not done:
        click.echo("no item matched", err=True)


def _allowed(env: Env) -> int | None:
    """The quest's answers allowed (``max_tries``), or None when no quest is configured."""
    quest = env.quest_if_given()
    return quest.max_tries if quest is not None else None


COMMANDS = (items, review, resolve, reopen, rejudge, drop)
