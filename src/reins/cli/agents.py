"""Commands for coding agents: ``mcp`` serves the quest over MCP; ``hook`` keeps agents at it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reins.cli.app import Env, ReinsGroup, emit_json, pass_env
from reins.cli.work import json_option

if TYPE_CHECKING:
    from reins.agents.install import Launch


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
    from reins.agents import identity
    from reins.agents.mcp_server import serve_stdio
    from reins.agents.session import AgentSession, Options

    store = env.ledger()  # a missing ledger fails here, before the client is served
    results = env.results_path if env.settings.auto_export else None
    options = Options(env.settings.lease, env.settings.max_submission, results)
    session = AgentSession(store, env.quest, identity.session_driver(driver), options)
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
@pass_env
def stop(env: Env, driver: str | None) -> None:
    """Read the Stop hook's JSON on stdin; print a block decision while work is left.

    Prints nothing (the agent may stop) when every item is locked, when the rest is leased
    to other drivers, when hook_max_turns is reached, or after hook_max_blocks blocks in a
    row without a new recorded turn. A failure of its own (no ledger, a broken one, bad
    input) lets the agent stop too, with the cause on stderr: a broken tool must not trap it.
    """
    from reins.agents import hook as stop_hook
    from reins.agents import identity
    from reins.cli.config import default_driver

    try:
        payload = stop_hook.Payload.parse(sys.stdin.read())
        if env.config_error is not None:
            raise env.config_error
        store = env.ledger()
        who = driver or identity.agent_driver(store) or default_driver()
        decision = stop_hook.stop(
            store,
            payload,
            who,
            max_blocks=env.settings.hook_max_blocks,
            max_turns=env.settings.hook_max_turns,
        )
    except Exception as exc:  # never exit 2: Claude Code would read it as a block
        why = str(exc).rstrip(". ") or type(exc).__name__
        click.echo(f"reins hook: {why}; letting the agent stop", err=True)
        return
    if decision.block:
        click.echo(stop_hook.block_output(decision))
    else:
        click.echo(f"reins hook: {decision.reason}; the agent may stop", err=True)


def _launch(ctx: click.Context) -> Launch:
    """How the agent should start reins: this installation's executable, with the options
    this command was given (--quest, --ledger)."""
    import shutil

    from reins.agents.install import Launch

    found = shutil.which("reins")
    program = [str(Path(found).resolve())] if found else [sys.executable, "-m", "reins.cli"]
    params = ctx.find_root().params
    options: list[str] = []
    if params.get("quest_ref"):
        options += ["--quest", str(params["quest_ref"])]
    if params.get("ledger"):
        options += ["--ledger", str(params["ledger"])]
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
    from reins.agents.install import install as do_install

    written = do_install(project, _launch(ctx))
    if as_json:
        emit_json({"installed": client, "project": str(project), "files": written})
        return
    click.echo(f"installed the reins stop hook and MCP server in {', '.join(written)}")
    click.echo("undo with: reins hook uninstall", err=True)


@hook.command("uninstall")
@click.argument("client", type=click.Choice(["claude"]), default="claude")
@_project
@json_option
def uninstall(client: str, project: Path, as_json: bool) -> None:
    """Remove exactly what `reins hook install` added, restoring each file it changed."""
    from reins.agents.install import uninstall as do_uninstall

    restored = do_uninstall(project)
    if as_json:
        emit_json({"uninstalled": client, "project": str(project), "files": restored})
        return
    click.echo(f"removed the reins stop hook and MCP server from {', '.join(restored)}")


COMMANDS = (mcp, hook)
