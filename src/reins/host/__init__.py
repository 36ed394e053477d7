"""The agent's host: where a coding agent drives reins itself, an MCP server, a stop hook, and
their set-up (``reins mcp``, ``reins hook``, ``reins install``). The loop's own coding agents,
the ones reins drives, are :mod:`reins.coders`.

Nothing here is imported at ``reins`` start-up; ``mcp`` (the SDK) only by :mod:`.mcp_server`.
"""
