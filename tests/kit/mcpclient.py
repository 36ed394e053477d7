"""A client of ``reins mcp`` through the official MCP SDK: a server process over stdio, one
session, a tool call's texts (needs the ``mcp`` extra: import it only where that is checked)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.kit import CHILD_PATH, TINY_REF


def server(folder: Path, *args: str, quest: str = TINY_REF) -> StdioServerParameters:
    """``reins --quest QUEST mcp ARGS`` as a process in ``folder``."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "reins.cli", "--quest", quest, "mcp", *args],
        cwd=str(folder),
        env={"PYTHONPATH": CHILD_PATH},
    )


@asynccontextmanager
async def connect(folder: Path, *args: str, quest: str = TINY_REF) -> AsyncIterator[ClientSession]:
    """One client session against a fresh ``reins mcp`` process in ``folder`` (its stderr goes
    to ``folder/server.log``)."""
    with (folder / "server.log").open("a") as errlog:
        async with (
            stdio_client(server(folder, *args, quest=quest), errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> tuple[list[str], bool]:
    """The text blocks of a tool's result, and whether it is an error."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, mcp.types.CallToolResult)
    texts = [block.text for block in result.content if isinstance(block, mcp.types.TextContent)]
    return texts, result.is_error
