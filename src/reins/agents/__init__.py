"""Coding agents drive reins where they live: an MCP server, a stop hook, and their set-up.

Nothing here is imported at ``reins`` start-up; ``mcp`` (the SDK) only by :mod:`.mcp_server`.
"""
