"""``reins land BRANCH``: a coding quest's PASSes merged onto one integration branch.

``land`` exits 0, 1, 2, 10 or 13.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, emit_json, pass_env
from reins.cli.work import json_option
from reins.errors import Exit

if TYPE_CHECKING:
    from reins.land.run import LandRun


@click.command("land")
@click.argument("branch")
@click.option(
    "--order",
    type=click.Choice(("locked", "key")),
    default="locked",
    show_default=True,
    help="The order the changes are merged in: the order their items locked, or by key.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Merge and judge in reins' store, but move no branch and add no item.",
)
@json_option
@pass_env
def land(env: Env, branch: str, order: str, dry_run: bool, as_json: bool) -> None:
    """Merge every PASS onto BRANCH in reins' own store, judging the land rules after each.

    Each PASS item's change (its last commit, from the recorded base) is merged onto the
    integration in a store of reins' own, never in your checkout, in the order the items
    locked (--order key: by key). After each merge the quest's land rules ([land] rules_file
    in quest.toml) judge the merged tree in a judge's tree; green, the integration moves onto
    it, and so does BRANCH in your repository: the only branch of yours that moves, created if
    missing, fast-forward only, never one checked out. A merge conflict or a red land rule
    moves no item: the change becomes a new item, `land/KEY`, that starts from the
    integration commit and asks an agent to land it (`reins loop` works it); once it passes,
    the next `reins land` merges it in the item's place. Before BRANCH moves, the project's
    own test command ([workspace] test, default pytest) runs on the integration: BRANCH moves
    only when it passes. Run it again at any time: what landed is read back from the
    integration's history, and nothing lands twice. Exits 13 when a PASS is left unlanded or
    the whole suite fails.
    """
    from reins.cli.loopflags import worktrees_beside
    from reins.land.integrate import land as land_all
    from reins.loop.places import default_root

    quest = env.judging_quest()
    store = env.ledger()
    root = ""
    if quest.workspace is not None:
        preferred = worktrees_beside(env)
        root = quest.workspace.worktrees or default_root(quest.workspace, quest.name, preferred)

    def say(step: object) -> None:
        from reins.land.run import BEFORE, Step

        if isinstance(step, Step) and step.outcome != BEFORE:
            click.echo(step.line(dry_run))

    run = land_all(store, quest, root=root, branch=branch, order=order, dry_run=dry_run,
                   say=None if as_json else say)  # fmt: skip
    if as_json:
        from reins.cli.shapes.land import Landing

        emit_json(Landing.of(run))
    else:
        click.echo(summary(run))
    if not run.settled:
        sys.exit(Exit.NOT_LANDED)


def summary(run: LandRun) -> str:
    """The run's last line: what landed, what is left, where the branch is."""
    from reins.land.run import BEFORE, LANDED, SETTLED

    now = sum(s.outcome == LANDED for s in run.steps)
    before = sum(s.outcome == BEFORE for s in run.steps)
    left = sum(s.outcome not in SETTLED for s in run.steps)
    said = f"{run.branch}: {now} landed now, {before} before"
    if left:
        said += f", {left} not landed (their land items are to do: `reins loop` works them)"
    if run.dry_run:
        return f"{said}; a dry run: no branch moved, no item added"
    if run.suite is not None and not run.suite.passed and run.suite.fact is not None:
        fact = run.suite.fact
        return (f"{said}; {run.branch} NOT moved: {fact.expected} on {fact.where}, and it "
                f"failed: {fact.actual}\nFix it on a branch of your own from "
                f"{run.tip[:12]} (reins' land store holds it), or drop the item whose change "
                f"breaks it; {run.branch} "
                + (f"stays at {run.was[:12]}" if run.was else "is not made"))  # fmt: skip
    if run.suite is not None and run.suite.note:
        said += f" ({run.suite.note})"
    elif run.suite is not None and run.suite.passed:
        said += ", the project's whole suite passing on them"
    if run.moved:
        was = run.was[:12] if run.was else "nothing (made now)"
        return f"{said}; {run.branch} moved from {was} to {run.tip[:12]}"
    if run.was is None:
        return f"{said}; {run.branch} is not made: nothing has landed on it yet"
    return f"{said}; {run.branch} is at {run.tip[:12]}"


COMMANDS = (land,)
