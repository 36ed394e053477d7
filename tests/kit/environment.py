"""What a developer's shell may hold that would change what reins does under test: the
``clean_environment`` fixture removes it before every test."""

from __future__ import annotations

PREFIXES = ("REINS_", "PG")  # reins' own settings; libpq's (host, user, password, …)
SUFFIXES = ("_API_KEY",)  # a backend's key: OPENAI_API_KEY, ANTHROPIC_API_KEY, …
NAMES = ("CLAUDE_PROJECT_DIR",)  # where the stop hook looks for a project


def foreign(name: str) -> bool:
    """Whether the environment variable ``name`` is one a test must not inherit."""
    return name.startswith(PREFIXES) or name.endswith(SUFFIXES) or name in NAMES
