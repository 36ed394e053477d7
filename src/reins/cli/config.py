"""Settings for one CLI run: flags, then REINS_* variables, then reins.toml, then defaults."""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reins.errors import ConfigError

CONFIG_FILE = "reins.toml"
DEFAULT_LEASE = 15 * 60.0
DEFAULT_LIMIT = 1024 * 1024
_KIND_NAMES = {str: "string", int: "whole number", bool: "true or false"}
KNOWN_KEYS = {
    "quest",
    "ledger",
    "results",
    "auto_export",
    "max_submission",
    "lease",
    "max_tries",
    "hook_max_blocks",
    "hook_max_turns",
}
# The stop hook lets an agent stop after this many blocks in a row without a new recorded turn.
DEFAULT_HOOK_MAX_BLOCKS = 3


def read_config(folder: Path | None = None) -> dict[str, Any]:
    """The ``[reins]`` table of ``reins.toml`` in ``folder`` (default: the working directory)."""
    path = (folder or Path.cwd()) / CONFIG_FILE
    if not path.exists():
        return {}
    import tomllib  # only when there is a file to read: start-up matters

    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    others = sorted(set(data) - {"reins"})
    if others:
        raise ConfigError(
            f"{path}: unknown table(s) or key(s) {', '.join(others)}; reins reads only [reins]"
        )
    table = data.get("reins", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [reins] must be a table")
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) {', '.join(unknown)} in [reins]. "
            f"Known: {', '.join(sorted(KNOWN_KEYS))}"
        )
    return table


def default_driver() -> str:
    """``REINS_DRIVER``, else the user name."""
    name = os.environ.get("REINS_DRIVER")
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "driver"


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved settings; the quest itself is loaded only by commands that need it."""

    quest_ref: str | None
    ledger: str | None
    results: str | None
    auto_export: bool
    max_submission: int
    lease: float
    max_tries: int | None
    hook_max_blocks: int = DEFAULT_HOOK_MAX_BLOCKS
    hook_max_turns: int | None = None

    @classmethod
    def resolve(cls, *, quest: str | None, ledger: str | None, config: dict[str, Any]) -> Settings:
        def typed(key: str, kind: type, default: Any) -> Any:
            value = config.get(key, default)
            # TOML's true is a Python bool, and bool is an int: refuse it where a number goes.
            wrong = isinstance(value, bool) and kind is not bool
            if value is not None and (wrong or not isinstance(value, kind)):
                raise ConfigError(
                    f"{CONFIG_FILE}: {key} must be a {_KIND_NAMES[kind]}, not {value!r}"
                )
            return value

        max_submission = typed("max_submission", int, DEFAULT_LIMIT)
        if max_submission < 1:
            raise ConfigError(f"{CONFIG_FILE}: max_submission must be positive")
        lease = config.get("lease", DEFAULT_LEASE)
        if isinstance(lease, bool) or not isinstance(lease, int | float) or lease <= 0:
            raise ConfigError(f"{CONFIG_FILE}: lease must be a positive number of seconds")
        max_tries = typed("max_tries", int, None)
        if max_tries is not None and max_tries < 1:
            raise ConfigError(f"{CONFIG_FILE}: max_tries must be at least 1")
        hook_max_blocks = typed("hook_max_blocks", int, DEFAULT_HOOK_MAX_BLOCKS)
        if hook_max_blocks < 1:
            raise ConfigError(f"{CONFIG_FILE}: hook_max_blocks must be at least 1")
        hook_max_turns = typed("hook_max_turns", int, None)
        if hook_max_turns is not None and hook_max_turns < 1:
            raise ConfigError(f"{CONFIG_FILE}: hook_max_turns must be at least 1")
        # Every value is checked, even one a flag overrides: a bad file is a bad file.
        quest_ref, ledger_ref = typed("quest", str, None), typed("ledger", str, None)
        return cls(
            quest_ref=quest or quest_ref,
            ledger=ledger or ledger_ref,
            results=typed("results", str, None),
            auto_export=typed("auto_export", bool, True),
            max_submission=max_submission,
            lease=float(lease),
            max_tries=max_tries,
            hook_max_blocks=hook_max_blocks,
            hook_max_turns=hook_max_turns,
        )
