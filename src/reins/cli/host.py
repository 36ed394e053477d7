"""Commands for coding agents: ``mcp`` serves the quest over MCP; ``hook`` keeps agents at it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, ReinsGroup, emit_json, pass_env
from reins.cli.shapes.setup import Installed, Uninstalled
from reins.cli.work import json_option

if TYPE_CHECKING:
    from reins.cli.config import Settings
    from reins.host.hook import Payload
    from reins.host.install import Launch


@click.command()
@click.option(
    "--driver",
    "-d",
    default=None,
    help="The session's driver name [default: mcp-<6 hex>, new for every session]. A fixed "
    "name keeps the reminder count across restarts; two sessions must not share one.",
)
@pass_env
def mcp(env: Env, driver: str | None) -> None:
    """Serve the quest to a coding agent over the Model Context Protocol (stdio).

    Tools: next_item, submit, board, item_log, rules, release (and propose_item when the
    quest allows proposals). The session is the driver: its lease is released when the
    client disconnects. Needs the extra: pip install 'reins-quest[mcp]'.
    """
    from reins.host import identity
    from reins.host.mcp_server import serve_stdio
    from reins.host.session import AgentSession, Options

    store = env.ledger()  # a missing ledger fails here, before the client is served
    results = env.results_path if env.settings.auto_export else None
    options = Options(env.settings.lease, env.settings.max_submission, results)
    session = AgentSession(store, env.judging_quest(), identity.session_driver(driver), options)
    serve_stdio(session)


@click.group(cls=ReinsGroup)
def hook() -> None:
    """Claude Code's stop hook: an agent may not stop while items are left for it."""


@hook.command("stop")
@click.option(
    "--driver",
    "-d",
    default=None,
    help="The agent's driver [default: the MCP session its agent started, else "
    "$REINS_DRIVER or your user name].",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The project folder, pinned by `hook install`: where reins.toml is looked for when "
    "neither the payload's cwd nor $CLAUDE_PROJECT_DIR leads to one.",
)
@click.pass_context
def stop(ctx: click.Context, driver: str | None, project: Path | None) -> None:
    """Read the Stop hook's JSON on stdin; print a block decision while work is left.

    The project is the nearest reins.toml above the payload's cwd (the agent's folder), else
    above $CLAUDE_PROJECT_DIR, else above --project (or the working folder). Prints nothing
    (the agent may stop) when every item is locked, when the rest is leased to other drivers,
    when hook_max_turns is reached, or after hook_max_blocks blocks in a row without a new
    recorded turn. When it cannot read its quest or ledger, it blocks once with the cause as the
    reason and lets the agent's next stop go, with the cause shown to the user: a broken tool
    must not trap the agent. With no project and no quest at all, there is nothing to guard.
    """
    from reins.cli.config import default_driver
    from reins.host import hook as stop_hook
    from reins.host import identity

    env = ctx.find_object(Env)
    assert env is not None
    try:
        payload = stop_hook.Payload.parse(sys.stdin.read())
    except ValueError as exc:  # not Claude Code's payload: nothing says it is a fresh stop
        why = f"the stop hook cannot read its input: {exc}"
        click.echo(stop_hook.notice_output(f"reins: {why}; it let the agent stop"))
        click.echo(f"reins hook: {why}; letting the agent stop", err=True)
        return
    found = _project_config(payload, project)
    try:
        env.settings = _settings(ctx, found, project)
        store = env.ledger()
        who = driver or identity.agent_driver(store) or default_driver()
        quest = env.quest_if_given()
        decision = stop_hook.stop(
            store,
            payload,
            who,
            max_blocks=env.settings.hook_max_blocks,
            max_turns=env.settings.hook_max_turns,
            max_tries=quest.max_tries if quest is not None else None,
        )
    except Exception as exc:  # never exit 2: Claude Code would read it as a block
        why = str(exc).rstrip(". ") or type(exc).__name__
        if found is None and project is None and not env.quest_known:
            # No reins.toml, no pinned project, no quest: a hook with nothing to guard here.
            click.echo(f"reins hook: {why}; letting the agent stop", err=True)
            return
        told = stop_hook.trouble(why, payload)
        out = stop_hook.block_output(told) if told.block else stop_hook.notice_output(told.reason)
        click.echo(out)
        click.echo(f"reins hook: {why}", err=True)
        return
    if decision.block:
        click.echo(stop_hook.block_output(decision))
    else:
        click.echo(f"reins hook: {decision.reason}; the agent may stop", err=True)


def _project_config(payload: Payload, project: Path | None) -> Path | None:
    """The reins.toml of the project the agent works in: the nearest one above the payload's
    cwd, else above $CLAUDE_PROJECT_DIR, else above ``project`` (or the working folder)."""
    import os

    from reins.cli.config import find_config

    for start in (payload.cwd, os.environ.get("CLAUDE_PROJECT_DIR"), project or Path.cwd()):
        if start and Path(start).is_dir():
            found = find_config(Path(start))
            if found is not None:
                return found
    return None


def _settings(ctx: click.Context, found: Path | None, project: Path | None) -> Settings:
    """This run's settings from the project's reins.toml (``found``) and the command's flags.
    Without a reins.toml, the default ledger sits in the pinned ``project``.

    Raises:
        ConfigError: the reins.toml cannot be read or holds a bad value.
    """
    from reins.cli.config import Config, Settings, load_config

    config = load_config(found) if found else Config({}, project.absolute() if project else None)
    params = ctx.find_root().params
    return Settings.resolve(
        quest=params.get("quest_ref"), ledger=params.get("ledger"), config=config
    )


def _launch(ctx: click.Context) -> Launch:
    """How the agent should start reins: this installation's executable, with the options
    this command was given (--quest, --ledger). Paths among them are made absolute: the agent
    runs them from its own folder."""
    import os
    import shutil

    from reins.host.install import Launch
    from reins.quests.find import is_folder_ref

    found = shutil.which("reins")
    program = [str(Path(found).resolve())] if found else [sys.executable, "-m", "reins.cli"]
    params = ctx.find_root().params
    options: list[str] = []
    quest, ledger = params.get("quest_ref"), params.get("ledger")
    if quest:
        options += ["--quest", os.path.abspath(quest) if is_folder_ref(quest) else str(quest)]
    if ledger:
        options += ["--ledger", str(ledger) if "://" in ledger else os.path.abspath(ledger)]
    return Launch(program, options)


_project = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=".",
    show_default=True,
    help="The project folder (where .claude/ and .mcp.json live).",
)


@hook.command("install")
@click.argument("client", type=click.Choice(["claude"]))
@_project
@json_option
@click.pass_context
def install(ctx: click.Context, client: str, project: Path, as_json: bool) -> None:
    """Add the stop hook and the MCP server to CLIENT's project settings (merged, backed up)."""
    from reins.host.install import install as do_install

    written = do_install(project, _launch(ctx))
    if as_json:
        emit_json(Installed(client, str(project), tuple(written)))
        return
    click.echo(f"installed the reins stop hook and MCP server in {', '.join(written)}")
    click.echo("undo with: reins hook uninstall", err=True)


@hook.command("uninstall")
@click.argument("client", type=click.Choice(["claude"]), default="claude")
@_project
@json_option
def uninstall(client: str, project: Path, as_json: bool) -> None:
    """Remove exactly what `reins hook install` added, restoring each file it changed."""
    from reins.host.install import uninstall as do_uninstall

    restored = do_uninstall(project)
    if as_json:
        emit_json(Uninstalled(client, str(project), tuple(restored)))
        return
    click.echo(f"removed the reins stop hook and MCP server from {', '.join(restored)}")


COMMANDS = (mcp, hook)
