"""The ``--json`` of the commands that set things up: ``packs``, ``new``, ``backends``,
``hook install``/``uninstall`` and ``serve``."""

from __future__ import annotations

from dataclasses import dataclass, field

from reins.cli.shapes import Plain


@dataclass(frozen=True, slots=True)
class Pack(Plain):
    """A shipped pack, read from its quest.toml: ``items`` is None when not cheap to count;
    ``missing`` names the packages of its extra that are not installed (their PyPI names), and
    ``install`` is then the pip line that installs them (None when nothing is missing)."""

    name: str
    description: str
    items: int | None
    extra: str | None
    folder: str
    missing: tuple[str, ...] = ()
    install: str | None = None


@dataclass(frozen=True, slots=True)
class UnreadablePack(Plain):
    """A pack whose quest.toml cannot be read: the description says why."""

    name: str
    description: str
    items: None = None
    extra: None = None  # not written: a program sees the three keys it always saw

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "description": self.description, "items": None}


@dataclass(frozen=True, slots=True)
class NewQuest(Plain):
    """``new --pack``: the pack copied, the folder, and the copy's own quest name."""

    pack: str
    folder: str
    quest: str


@dataclass(frozen=True, slots=True)
class PriceRow(Plain):
    """One model of the price table: USD per million tokens, the batch share, date and source."""

    model: str
    input: float
    cached_input: float | None  # None: billed as input
    cache_write: float | None
    output: float
    batch: float
    date: str
    source: str
    note: str


@dataclass(frozen=True, slots=True)
class BackendRow(Plain):
    """An installed backend: its entry point, summary and options, or why it cannot load.

    ``prices`` lists the models the price table prices for it (any other model reports no
    cost unless the price options are given); None for a backend the table does not price.
    ``extra`` is the extra of reins-quest it runs on (None: it needs none), ``missing`` the
    packages of it not installed, and ``install`` the pip line then (else None).
    """

    name: str
    target: str | None
    summary: str
    options: dict[str, str]
    error: str | None
    prices: tuple[PriceRow, ...] | None = None
    extra: str | None = None
    missing: tuple[str, ...] = ()
    install: str | None = None


@dataclass(frozen=True, slots=True)
class AgentRow(Plain):
    """An installed coding agent, as :class:`BackendRow` a backend, and the program it runs:
    its path where found (``found`` true), None where not found (``found`` false) or where the
    agent names no program of its own (``cmd``: ``found`` None)."""

    name: str
    target: str | None
    summary: str
    options: dict[str, str]
    error: str | None
    program: str | None = None
    found: bool | None = None


@dataclass(frozen=True, slots=True)
class Installed(Plain):
    """``hook install``: the client, the project, the files changed."""

    installed: str
    project: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Uninstalled(Plain):
    """``hook uninstall``: the client, the project, the files restored."""

    uninstalled: str
    project: str
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Serving(Plain):
    """``serve``: where the dashboard listens (``url``: the link that carries the token), and
    its access token, on every address; with reviewers named, ``reviewers`` maps each name to
    their own link, and ``url`` carries no token (``token`` is None: no shared one admits)."""

    url: str
    port: int
    read_only: bool
    token: str | None
    reviewers: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        # Without reviewers, the four keys a program has always read, and no more.
        found = super(Serving, self).to_json()
        if not self.reviewers:
            del found["reviewers"]
        return found
