"""The quest contract: how a domain seeds items, describes them, decodes answers and judges them.

A quest is a value, not a base class: build a :class:`Quest` from plain functions and rules.
References to quests (a folder, a pack's name, ``package.module:attr`` or an installed
``reins.quests`` entry point) are resolved by :func:`reins.quests.find.load_quest`, a layer
above: the contract imports no document reader and no pack.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from reins.errors import ConfigError
from reins.gate import CatalogEntry, Context, Rule, Verdict, evaluate
from reins.retry import RETRY_POLICIES, canonical_retry
from reins.store.model import Item
from reins.values import JSON

if TYPE_CHECKING:
    from reins.figures import FigureFunction
    from reins.workspace.site import BaseTree
    from reins.workspace.spec import Workspace

__all__ = ["RETRY_POLICIES", "Example", "FlatGate", "Gate", "Quest", "RepositoryItems", "Seed"]


class Seed(NamedTuple):
    """One item to add: a key unique within the quest, and any JSON value as payload."""

    key: str
    payload: JSON = None


@dataclass(frozen=True, slots=True)
class Example:
    """A worked input/output pair: an item's payload and an output that passes the gate.

    Examples are composed into every prompt between the manual and the feedback, and judged by
    the quest's own gate when the quest loads: one that does not pass refuses the quest, since
    a wrong example teaches the wrong answer.
    """

    input: JSON
    output: str
    key: str = ""


class RepositoryItems(Protocol):
    """Items found in a coding quest's repository: what ``reins scan`` (with no arguments)
    adds, read in a tree of the base in reins' own folder (:mod:`reins.sources` has the
    failing tests, a program's findings and matching files)."""

    @property
    def kind(self) -> str:
        """What finds them: ``pytest``, ``command``, ``files`` (or a source's own word)."""
        ...

    def scan(self, tree: BaseTree) -> Iterable[Seed]: ...


class Gate(Protocol):
    """Something that judges a context. The flat gate over ``rules`` is the default."""

    def evaluate(self, ctx: Context) -> Verdict: ...

    def catalog(self) -> list[CatalogEntry]: ...


@dataclass(frozen=True, slots=True)
class FlatGate:
    """The default gate: every rule runs; FAIL beats REVIEW beats PASS."""

    rules: Sequence[Rule]

    def evaluate(self, ctx: Context) -> Verdict:
        return evaluate(self.rules, ctx)

    def catalog(self) -> list[CatalogEntry]:
        return [CatalogEntry(r.id, r.level, r.description) for r in self.rules]


@dataclass(frozen=True)
class Quest:
    """A domain reins can run.

    Args:
        name: short name; names the default ledger and results files.
        seed: turns command-line arguments into items, lazily (a generator is best).
        render: what to do for one item (the first layer of the prompt).
        prepare: decodes a raw submission into a gate :class:`Context`, or returns a short
            verdict (FAIL, SKIPPED, BLOCKED or REVIEW; never PASS).
        rules: the gate's catalog, in order.
        manual: system text given with every prompt.
        coaching: rule id → extra text for the next prompt after a FAIL whose root cause is
            that rule (after the item, before the feedback: it is the item's own).
        max_tries: judged FAILs before an item locks DONE.
        gate: a gate other than the flat one over ``rules`` (a defeat graph, say).
        escalate_on: root-cause rule ids that move an item to the stronger model.
        retry: how a retry is composed: ``facts``, ``facts+previous`` or ``fresh``, or a
            schedule of them per answer with declared temperatures (``fresh,facts@0.8``:
            :mod:`reins.retry`); kept in its canonical form.
        gate_version: a label to change whenever a rule's code changes its judgment; it goes
            into the gate digest every attempt records, beside the catalog's ids, levels,
            descriptions and edges, so ``status`` can count items judged under an older gate.
        examples: worked input/output pairs, composed between the manual and the feedback;
            :func:`~reins.quests.find.load_quest` refuses a quest whose example does not pass
            its own gate.
        allow_proposals: coding agents on the MCP server may add TODO items (``propose_item``);
            the gate judges them like any other. Off by default: remaining work then only
            grows by a person's reopen.
        workspace: the items are changes to a git repository: ``reins loop`` runs a coding
            agent in a repository of its own per item and judges what it changed (see
            :class:`~reins.workspace.spec.Workspace`). None: a submission is text.
        found: where a coding quest finds its items in its repository (``[items] from``):
            ``reins scan`` with no arguments runs it at the base, and a rescan adds what is new
            (a locked item is never reopened). ``seed`` still reads the scan's arguments.
        land_rules: what ``reins land`` judges after merging each PASS onto the integration
            branch (the whole test suite, say), in the judge's tree of the merged commit; a
            red one, like a merge conflict, makes the change a new item whose task is to land
            it (``land/<key>``), judged by the gate as its item was and then by these rules.
            Flat rules, a coding quest's only (``[land] rules_file`` in quest.toml).
        figures: the quest's own figures for ``reins report`` (:mod:`reins.figures`): called
            with a read-only view of the ledger (each item, its payload and its latest judged
            answer), it returns :class:`~reins.figures.Figure` values, which ``report``
            prints after its own lines.
        extras: the extras of ``reins-quest`` its checks need (``("ifeval",)``: see
            :mod:`reins.extras`); a command that would judge an answer refuses the quest up
            front, with the pip line, while one of them is not installed.
    """

    name: str
    seed: Callable[[Sequence[str]], Iterable[Seed | tuple[str, JSON]]]
    render: Callable[[Item], str]
    prepare: Callable[[Item, str], Context | Verdict]
    rules: Sequence[Rule]
    manual: str = ""
    coaching: Mapping[str, str] = field(default_factory=dict)
    max_tries: int = 3
    gate: Gate | None = None
    escalate_on: frozenset[str] = frozenset()
    retry: str = "facts"
    description: str = ""
    gate_version: str = ""
    examples: Sequence[Example] = ()
    allow_proposals: bool = False
    workspace: Workspace | None = None
    figures: FigureFunction | None = None
    found: RepositoryItems | None = None
    land_rules: Sequence[Rule] = ()
    extras: Sequence[str] = ()

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").isalnum():
            raise ConfigError(
                f"a quest name must be a word of letters, digits, - or _: {self.name!r}"
            )
        if not isinstance(self.max_tries, int) or self.max_tries < 1:
            raise ConfigError(f"quest {self.name}: max_tries must be a whole number ≥ 1")
        try:
            object.__setattr__(self, "retry", canonical_retry(self.retry))
        except ConfigError as exc:
            raise ConfigError(
                f"quest {self.name}: retry must be one of {', '.join(RETRY_POLICIES)} or a "
                f"schedule of them: {exc}"
            ) from None
        ids = [r.id for r in self.rules]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ConfigError(f"quest {self.name}: duplicate rule ids {', '.join(dupes)}")
        if self.figures is not None and not callable(self.figures):
            raise ConfigError(f"quest {self.name}: figures must be a function of the ledger's view")
        object.__setattr__(self, "escalate_on", frozenset(self.escalate_on))
        object.__setattr__(self, "examples", tuple(self.examples))
        object.__setattr__(self, "land_rules", tuple(self.land_rules))
        self._check_extras()
        self._check_land_rules(ids)
        if self.found is not None and self.workspace is None:
            raise ConfigError(
                f"quest {self.name}: items found in a repository need the quest's workspace "
                "(a [workspace] table, or Quest(workspace=Workspace(...)))"
            )
        if self.workspace is not None:
            from reins.workspace.spec import Workspace  # only a coding quest loads it

            if not isinstance(self.workspace, Workspace):
                raise ConfigError(f"quest {self.name}: workspace must be a Workspace(...) value")
        for ex in self.examples:
            if not isinstance(ex, Example) or not isinstance(ex.output, str):
                raise ConfigError(
                    f"quest {self.name}: examples must be Example(input, output: str) values"
                )

    def _check_extras(self) -> None:
        if isinstance(self.extras, str):
            object.__setattr__(self, "extras", (self.extras,))
        object.__setattr__(self, "extras", tuple(self.extras))
        if not self.extras:
            return
        from reins.extras import EXTRAS  # only a quest that names an extra loads the table

        unknown = [e for e in self.extras if e not in EXTRAS]
        if unknown:
            raise ConfigError(
                f"quest {self.name}: no extra of reins-quest is named {unknown[0]!r}. "
                f"Known: {', '.join(EXTRAS)}"
            )

    def _check_land_rules(self, gate_ids: list[str]) -> None:
        if not self.land_rules:
            return
        if self.workspace is None:
            raise ConfigError(
                f"quest {self.name}: land rules judge the merges of `reins land`, which lands "
                "a coding quest's changes: give the quest a workspace"
            )
        ids = [r.id for r in self.land_rules]
        clash = sorted({i for i in ids if ids.count(i) > 1 or i in gate_ids})
        if clash:
            raise ConfigError(
                f"quest {self.name}: land rule ids must be their own (a land item is judged "
                f"by the gate's rules and the land rules alike): {', '.join(clash)}"
            )

    @property
    def judge(self) -> Gate:
        """The gate that decides: ``gate`` if given, else the flat gate over ``rules``."""
        return self.gate if self.gate is not None else FlatGate(self.rules)

    @functools.cached_property
    def gate_digest(self) -> str:
        """A short fingerprint of the gate: its catalog (ids, levels, descriptions, edges) and
        ``gate_version``. Recorded on every judgment."""
        import json

        try:  # hashlib's own BLAKE2, without hashlib: its OpenSSL start costs every submit 4 ms
            from _blake2 import blake2b
        except ImportError:  # pragma: no cover - not CPython
            from hashlib import blake2b

        entries = [
            [e.id, e.level.value, e.description, list(e.supersedes), list(e.needs)]
            # a declared rule's check and parameters judge too (its description may not say);
            # left out when empty so that a Python quest's digest never changes
            + ([e.check, e.parameters] if e.check else [])
            for e in self.judge.catalog()
        ]
        if self.land_rules:  # they judge land items too; left out when none, as before
            entries.append(["land", *([r.id, r.level.value, r.description]
                                      for r in self.land_rules)])  # fmt: skip
        text = json.dumps([self.gate_version, entries], ensure_ascii=True)
        return blake2b(text.encode(), digest_size=6).hexdigest()
