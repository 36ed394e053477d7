"""``reins mcp``: the agent session's tools served over the Model Context Protocol (stdio).

Built on the official ``mcp`` SDK, imported here and only here (``pip install
'reins-quest[mcp]'``). Over stdio a server process serves one client, so the process is the
session: one driver, whose lease is given back the moment the client goes away (its stdin
closes, or the process is told to stop), and kept alive by a heartbeat while it stays.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from reins._version import __version__
from reins.errors import ConfigError, NotFound, ReinsError
from reins.host import identity
from reins.host.session import AgentSession
from reins.host.tools import BY_NAME, GAME


def _require_sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise ConfigError("reins mcp needs the MCP SDK: pip install 'reins-quest[mcp]'") from exc


def build(session: AgentSession) -> Any:
    """The low-level MCP server whose tools are ``session``'s."""
    _require_sdk()
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    tools = [
        types.Tool(
            name=spec.name,
            description=spec.description,
            input_schema=spec.input_schema(),
            annotations=types.ToolAnnotations(
                read_only_hint=spec.read_only, destructive_hint=False
            ),
        )
        for spec in (BY_NAME[n] for n in session.tool_names())
    ]

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        # Blocking on purpose: each call is one short transaction (a ground may take longer),
        # and a stdio session is one client asking one thing at a time.
        try:
            reply = session.call(params.name, params.arguments)
        except NotFound as exc:  # no such tool: the request itself is wrong
            raise MCPError(code=types.INVALID_PARAMS, message=str(exc)) from None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=b) for b in reply.blocks],
            is_error=reply.is_error,
        )

    return Server(
        "reins",
        version=__version__,
        instructions=GAME,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(session: AgentSession) -> None:
    """Serve ``session`` over stdin/stdout until the client goes away; then release its lease."""
    server = build(session)  # first: without the SDK, a one-line error saying what to install

    import anyio
    from mcp.server.stdio import stdio_server

    beat_every = max(1.0, session.options.lease / 3)
    agent = identity.register(session.store, session.driver)

    async def heartbeat() -> None:
        while True:
            await anyio.sleep(beat_every)
            try:
                session.heartbeat()
            except ReinsError as exc:  # a busy ledger, say: the next beat tries again; the
                # session lives on (a lease that does run out is reported at the next submit)
                print(f"reins mcp: heartbeat failed: {exc}", file=sys.stderr)

    async def on_signal() -> None:
        # A client that ends the session may terminate the server instead of closing its stdin.
        # The stdin reader sits in a thread no cancellation reaches, so the lease is released
        # here, on the event loop like every other ledger call, and the process ends at once.
        with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
            async for signum in signals:
                finish(session, agent)
                os._exit(128 + signum)

    async def main() -> None:
        async with stdio_server() as (read, write), anyio.create_task_group() as tasks:
            tasks.start_soon(heartbeat)
            tasks.start_soon(on_signal)
            await server.run(read, write, server.create_initialization_options())
            tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    finally:
        finish(session, agent)


def finish(session: AgentSession, agent: int) -> None:
    """The session is over: give back its leases and the agent's link to it, say so."""
    released = session.close()
    identity.unregister(session.store, session.driver, agent)
    print(
        f"reins mcp: session {session.driver} ended; released {released} lease(s)",
        file=sys.stderr,
        flush=True,
    )
