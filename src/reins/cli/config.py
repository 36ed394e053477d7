"""Settings for one CLI run: flags, then REINS_* variables, then reins.toml, then defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
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
    "reviewers",
}
# The stop hook lets an agent stop after this many blocks in a row without a new recorded turn.
DEFAULT_HOOK_MAX_BLOCKS = 3


@dataclass(frozen=True, slots=True)
class Config:
    """The ``[reins]`` table of one reins.toml, and the folder holding it: relative paths in it
    (quest, ledger, results), and the default ledger and results file, start there."""

    table: dict[str, Any]
    folder: Path | None = None  # None: no reins.toml; paths start at the working folder
    # [prices]: a model spec → USD per million input and output tokens (reins loop's --price)
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)

    def place(self, path: str) -> str:
        """``path`` as this project reads it: a relative file path starts at :attr:`folder`.

        Left as it is when it is absolute, a URL, or already right from the working folder.
        """
        if self.folder is None or "://" in path or os.path.isabs(path):
            return path
        if self.folder == Path.cwd():
            return path  # the same file, and shown as the user wrote it
        return str(self.folder / path)

    def quest(self, ref: str) -> str:
        """A quest reference of reins.toml as its folder reads it: a quest folder or a
        quest.toml starts there; a module (imported from there, see :attr:`folder`), a pack
        or an installed quest's name is left as it is."""
        if self.folder is None:
            return ref
        here = self.folder / ref
        if ":" in ref and not here.is_dir():
            return ref
        if ref.endswith(".toml") or "/" in ref or os.sep in ref or (here / "quest.toml").is_file():
            return self.place(ref)
        return ref


def _reviewers(value: Any) -> tuple[str, ...]:
    """``reviewers``: the names of the people the desk knows (``reins serve --reviewer``)."""
    if not isinstance(value, list) or not all(isinstance(n, str) and n.strip() for n in value):
        raise ConfigError(f'{CONFIG_FILE}: reviewers must be a list of names, as ["ann", "bob"]')
    return tuple(value)


def find_config(start: Path | None = None) -> Path | None:
    """The nearest reins.toml: in ``start`` (default: the working folder) or in the closest
    folder above it, as git finds ``.git``; None when there is none up to the root."""
    here = (start or Path.cwd()).absolute()
    for folder in (here, *here.parents):
        path = folder / CONFIG_FILE
        if path.is_file():
            return path
    return None


def read_config(start: Path | None = None) -> Config:
    """The nearest reins.toml above ``start`` (see :func:`find_config`), read and checked."""
    path = find_config(start)
    return Config({}) if path is None else load_config(path)


def load_config(path: Path) -> Config:
    """The ``[reins]`` table of the reins.toml at ``path``.

    Raises:
        ConfigError: the file cannot be read, is not TOML, or holds an unknown table or key.
    """
    import tomllib  # only when there is a file to read: start-up matters

    try:
        with path.open("rb") as f:
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    others = sorted(set(data) - {"reins", "prices"})
    if others:
        raise ConfigError(
            f"{path}: unknown table(s) or key(s) {', '.join(others)}; reins reads only [reins] "
            "and [prices]"
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
    return Config(table, path.parent, read_prices(path, data.get("prices", {})))


def read_prices(path: Path, table: Any) -> dict[str, tuple[float, float]]:
    """The ``[prices]`` table: each key a model spec (``"openai:gpt-4.1"``), each value its
    price, ``"IN/OUT"`` or ``{ input = IN, output = OUT }`` (USD per million tokens).

    Raises:
        ConfigError: not a table, a key that is no model spec, a value that is no price.
    """
    from reins.backends.prices import read_rates
    from reins.backends.registry import parse_spec

    if not isinstance(table, dict):
        raise ConfigError(f'{path}: [prices] must be a table of model spec = "IN/OUT"')
    prices: dict[str, tuple[float, float]] = {}
    for spec, value in table.items():
        try:
            parse_spec(spec)
            if isinstance(value, dict) and set(value) == {"input", "output"}:
                value = f"{value['input']}/{value['output']}"
            if not isinstance(value, str):
                raise ValueError(f"{value!r} is not a price")
            prices[spec] = read_rates(value)
        except (ConfigError, ValueError) as exc:
            raise ConfigError(
                f'{path}: [prices] {spec!r}: {exc}; write "backend:model" = "IN/OUT", '
                "USD per million input and output tokens"
            ) from None
    return prices


def same_quest(given: str, own: str) -> bool:
    """Whether the quest reference ``given`` names reins.toml's quest ``own`` (as its folder
    reads it): the same words, or the same folder or file however written."""
    if given == own:
        return True
    here, there = Path(given), Path(own)
    return here.exists() and there.exists() and here.resolve() == there.resolve()


def default_driver() -> str:
    """``REINS_DRIVER``, else the user name."""
    name = os.environ.get("REINS_DRIVER")
    if name:
        return name
    import getpass  # here: it loads termios, and an agent's REINS_DRIVER makes it unneeded

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "driver"


@dataclass(frozen=True, slots=True)
class Settings:
    """Resolved settings; the quest itself is loaded only by commands that need it.

    Paths from reins.toml already start at its folder; a flag's or a variable's start at the
    working folder. ``quest_folder`` is where a ``module:attr`` quest of reins.toml imports
    from (None: the working folder); ``project`` places the default ledger and results file.
    """

    quest_ref: str | None
    ledger: str | None
    results: str | None
    auto_export: bool
    max_submission: int
    lease: float
    max_tries: int | None
    hook_max_blocks: int = DEFAULT_HOOK_MAX_BLOCKS
    hook_max_turns: int | None = None
    reviewers: tuple[str, ...] = ()  # the people the desk knows (reins serve --reviewer)
    quest_folder: str | None = None
    project: Config = field(default_factory=lambda: Config({}))

    @classmethod
    def resolve(
        cls, *, quest: str | None, ledger: str | None, config: Config, fixed: str | None = None
    ) -> Settings:
        """The settings of one run: ``quest`` and ``ledger`` as given (flag or variable),
        ``config`` the project's reins.toml, ``fixed`` the quest of a CLI made for one quest
        (``for_quest``: its reference, or its name) when no ``quest`` is given.

        A quest given (or fixed) that is not reins.toml's own takes none of the ledger and
        results file reins.toml names for its quest: its ledger is ``--ledger``, else its own
        default (``<quest>.reins.db`` in the project's folder).
        """

        def typed(key: str, kind: type, default: Any) -> Any:
            value = config.table.get(key, default)
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
        lease = config.table.get("lease", DEFAULT_LEASE)
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
        results = typed("results", str, None)
        own = quest_ref and config.quest(quest_ref)
        chosen = quest or fixed
        # reins.toml's ledger and results file are its quest's: another quest given is not
        # pointed at them (its ledger would be refused as another quest's, or made its own).
        other = bool(chosen and own and not same_quest(chosen, own))
        from_file = not chosen and quest_ref is not None and config.folder is not None
        return cls(
            quest_ref=chosen or own,
            ledger=ledger or (None if other else ledger_ref and config.place(ledger_ref)),
            results=None if other else results and config.place(results),
            auto_export=typed("auto_export", bool, True),
            max_submission=max_submission,
            lease=float(lease),
            max_tries=max_tries,
            hook_max_blocks=hook_max_blocks,
            hook_max_turns=hook_max_turns,
            reviewers=_reviewers(config.table.get("reviewers", [])),
            quest_folder=str(config.folder) if from_file else None,
            project=config,
        )

    def place(self, path: str) -> str:
        """A default file name (ledger, results) in the project's folder."""
        return self.project.place(path)
