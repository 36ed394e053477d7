"""The defeat-graph gate: violations attack one PASS warrant; precedence decides what counts.

Every rule is a *counter*: when its check leaves a fact (or several), the counter is active and
attacks the warrant "this item is done", with the weight of its strongest fact (never above its
rule's level). ``supersedes`` is crisp precedence: an active
counter removes the counters it supersedes from the tally (the upstream explains them). Only
direct edges count, and an active counter supersedes its targets even when it is superseded
itself. What remains is aggregated exactly like the flat gate. Cycles are refused, so whenever
any counter is active at least one remains: supersession can lower FAIL to REVIEW where the
graph says so, but never reach PASS. ``needs`` names the grounds a counter reads; such counters
are judged in a second stage (see :mod:`reins.gate.staged`).

reins owns node identity: node ids are rule ids, checked when the graph is built, so no renamed
or unmatched node can drop out of the tally. The warrant is not a function that could return
false; it is implicit and always stands.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from reins.errors import ConfigError, JudgeError, cause_of
from reins.gate.ai import cap, is_ai
from reins.gate.bounds import FACTS_SHOWN, hidden_line
from reins.gate.evaluate import excerpt, fire, strongest
from reins.gate.ground import Provider, Resolver
from reins.gate.hcat import h_categoriser
from reins.gate.rule import CatalogEntry, Context, Fact, Level, Rule
from reins.gate.staged import judge_staged
from reins.gate.verdict import Outcome, Verdict, quote

WARRANT = "reins:pass"
"""The node id of the PASS warrant in :meth:`Judgement.acceptability`."""

GRAPH_RULE = "reins:graph"
"""The rule id of the fact left when the graph itself cannot be evaluated."""

RESERVED = "reins:"


@dataclass(frozen=True, slots=True)
class Counter:
    """One node: a rule whose fact attacks the PASS warrant.

    Args:
        rule: the rule; its id is the node id and its level the weight of its attack.
        supersedes: ids of the counters this one removes from the tally while it is active.
        needs: names of the grounds its check reads from ``ctx.grounds``.
    """

    rule: Rule
    supersedes: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    id: str = field(init=False, repr=False, compare=False)  # the rule's id, read on every tally

    def __post_init__(self) -> None:
        for name in ("supersedes", "needs"):
            value = getattr(self, name)
            items = (value,) if isinstance(value, str) else tuple(value)
            object.__setattr__(self, name, tuple(dict.fromkeys(items)))
        object.__setattr__(self, "id", self.rule.id)

    @property
    def level(self) -> Level:
        """The level this counter's fact counts at (REVIEW at most for an AI check)."""
        return cap(self.rule, self.rule.level)


@dataclass(frozen=True, slots=True)
class Judgement:
    """One evaluation in full: the verdict and the graph state behind it.

    Attributes:
        active: counters whose check left a fact, in catalog order.
        remaining: active counters no active counter supersedes; their facts are the verdict's.
        superseded: each superseded active counter → the active counters superseding it.
        skipped: counters not judged because a FAIL no ground could change was found first.
        facts: the facts of every active counter, superseded ones included.
        levels: the level each active counter counts at: that of its strongest fact.
    """

    verdict: Verdict
    graph: Graph = field(repr=False)
    active: tuple[str, ...] = ()
    remaining: tuple[str, ...] = ()
    superseded: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    skipped: tuple[str, ...] = ()
    facts: Mapping[str, tuple[Fact, ...]] = field(default_factory=dict)
    levels: Mapping[str, Level] = field(default_factory=dict)

    def acceptability(self) -> dict[str, float]:
        """The weighted h-Categoriser degree of the warrant and of every counter.

        Attacks: every counter attacks the warrant, every ``supersedes`` edge attacks its
        target. Weights: the warrant 1; an active counter 1; an inactive or skipped counter 0
        (it makes no argument). The warrant's degree is 1 on PASS and falls as attacks mount; a
        superseded counter scores below an unchallenged one. Keys: warrant first, then catalog
        order.
        """
        g = self.graph
        weights = {WARRANT: 1.0} | {c.id: float(c.id in self.facts) for c in g.counters}
        attacks = [(c.id, WARRANT) for c in g.counters]
        attacks += [(c.id, down) for c in g.counters for down in c.supersedes]
        return h_categoriser(weights, attacks)


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
    """A defeat-graph gate. Plugs in as ``Quest(gate=graph)``.

    Args:
        counters: the nodes, in catalog order (root-cause ties go to the earlier one).
        grounds: ground name → provider, for every name a counter ``needs``.
        resolver: what providers reach the outside world through; the guarded
            :class:`~reins.gate.ground.NetResolver` when None.

    Raises:
        ConfigError: a duplicate or reserved node id, an edge or a need naming something the
            graph does not have, a cycle in ``supersedes``, or an AI check declared at FAIL or
            superseding anything.
    """

    counters: Sequence[Counter]
    grounds: Mapping[str, Provider] = field(default_factory=dict)
    resolver: Resolver | None = None
    _index: Mapping[str, int] = field(init=False, repr=False)
    _upstream: Mapping[str, tuple[str, ...]] = field(init=False, repr=False)
    _reach: Mapping[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        counters = tuple(self.counters)
        object.__setattr__(self, "counters", counters)
        object.__setattr__(self, "grounds", dict(self.grounds))
        object.__setattr__(self, "_index", _check_nodes(counters))
        _check_edges(counters, self.grounds)
        upstream: dict[str, list[str]] = {c.id: [] for c in counters}
        for c in counters:
            for down in c.supersedes:
                upstream[down].append(c.id)
        _check_acyclic(counters)
        object.__setattr__(self, "_upstream", {k: tuple(v) for k, v in upstream.items()})
        object.__setattr__(self, "_reach", _reaches(counters))

    @classmethod
    def from_rules(
        cls,
        rules: Iterable[Rule],
        *,
        supersedes: Mapping[str, Iterable[str]] | None = None,
        needs: Mapping[str, Iterable[str]] | None = None,
        grounds: Mapping[str, Provider] | None = None,
        resolver: Resolver | None = None,
    ) -> Graph:
        """A graph with one counter per rule, in order; edges given by rule id.

        With no edges it judges exactly like the flat gate over the same rules.
        """
        rules = list(rules)
        ids = {r.id for r in rules}
        edges = {"supersedes": dict(supersedes or {}), "needs": dict(needs or {})}
        for name, table in edges.items():
            unknown = sorted(set(table) - ids)
            if unknown:
                raise ConfigError(
                    f"graph {name} names {', '.join(unknown)}, which no rule has. "
                    f"Known: {', '.join(sorted(ids))}"
                )
        counters = [
            Counter(
                r,
                supersedes=tuple(_words(edges["supersedes"].get(r.id, ()))),
                needs=tuple(_words(edges["needs"].get(r.id, ()))),
            )
            for r in rules
        ]
        return cls(counters, grounds=grounds or {}, resolver=resolver)

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules of the counters, in catalog order (for ``Quest(rules=...)``)."""
        return tuple(c.rule for c in self.counters)

    def reach(self, node: str) -> int:
        """How many counters ``node`` can supersede, directly or through others."""
        return self._reach[node]

    def catalog(self) -> list[CatalogEntry]:
        """What actually judges: each counter with the level it counts at and its edges."""
        return [
            CatalogEntry(c.id, c.level, c.rule.description, c.supersedes, c.needs)
            for c in self.counters
        ]

    def evaluate(self, ctx: Context) -> Verdict:
        """Judge ``ctx``: the verdict, with the walkthrough as its feedback.

        Raises:
            JudgeError: see :meth:`judge`.
        """
        return self.judge(ctx).verdict

    def judge(self, ctx: Context) -> Judgement:
        """Judge ``ctx`` in stages and keep everything behind the verdict.

        Raises:
            JudgeError: a check raised, a ground could not be resolved, or the graph itself
                failed. The judge's own failure is never a verdict: not a PASS, and not a FAIL
                that would charge the generator a try.
        """
        try:
            fired, skipped = judge_staged(self, ctx)
            return self._tally(fired, skipped)
        except JudgeError:
            raise
        except Exception as exc:
            raise JudgeError(GRAPH_RULE, excerpt(cause_of(exc))) from exc

    def acceptability(self, ctx: Context) -> dict[str, float]:
        """The h-Categoriser degree of every node; see :meth:`Judgement.acceptability`."""
        return self.judge(ctx).acceptability()

    def fire(self, counter: Counter, ctx: Context) -> tuple[tuple[Fact, ...], Level] | None:
        """Run one counter: its facts and weight, or None when it did not fire. A node fires
        with all its facts; it weighs what its strongest fact weighs."""
        facts = fire(counter.rule, ctx)
        return (facts, cap(counter.rule, strongest(facts))) if facts else None

    def remaining(self, alive: Collection[str]) -> list[str]:
        """The nodes of ``alive`` (catalog order) that no node of ``alive`` supersedes."""
        upstream = self._upstream
        return [
            n
            for n in sorted(alive, key=self._index.__getitem__)
            if not any(up in alive for up in upstream[n])
        ]

    def _tally(
        self, fired: Mapping[str, tuple[tuple[Fact, ...], Level]], skipped: Sequence[str]
    ) -> Judgement:
        active = tuple(sorted(fired, key=self._index.__getitem__))
        upstream = self._upstream
        superseded = {
            a: ups for a in active if (ups := tuple(u for u in upstream[a] if u in fired))
        }
        remaining = tuple(a for a in active if a not in superseded)
        if active and not remaining:  # impossible on a checked graph: fail closed regardless
            raise RuntimeError(f"supersession removed every active counter: {', '.join(active)}")
        levels = {a: fired[a][1] for a in active}
        facts = {a: fired[a][0] for a in active}
        fails = [r for r in remaining if levels[r] is Level.FAIL]
        pool = fails or list(remaining)
        if not pool:
            verdict = Verdict(Outcome.PASS)
            return Judgement(verdict, self, active, remaining, {}, tuple(skipped), facts, levels)
        outcome = Outcome.FAIL if fails else Outcome.REVIEW
        root = max(pool, key=lambda n: (self._reach[n], -self._index[n]))
        feedback = _walkthrough(self, outcome, root, remaining, superseded, facts, levels, skipped)
        verdict = Verdict(outcome, tuple(f for r in remaining for f in facts[r]), root, feedback)
        return Judgement(
            verdict,
            self,
            active,
            remaining,
            superseded,
            tuple(skipped),
            facts,
            levels,
        )


def _words(value: Iterable[str]) -> Iterable[str]:
    return (value,) if isinstance(value, str) else value


def _check_nodes(counters: Sequence[Counter]) -> dict[str, int]:
    index: dict[str, int] = {}
    dupes: list[str] = []
    for i, c in enumerate(counters):
        if not isinstance(c, Counter):
            raise ConfigError(f"graph nodes must be Counters, got {type(c).__name__}")
        if c.id.startswith(RESERVED):
            raise ConfigError(f"graph node {c.id}: ids starting with {RESERVED!r} belong to reins")
        if is_ai(c.rule) and c.rule.level is not Level.REVIEW:
            raise ConfigError(f"graph node {c.id}: an AI check may raise REVIEW at most, not FAIL")
        if c.id in index:
            dupes.append(c.id)
        index.setdefault(c.id, i)
    if dupes:
        raise ConfigError(f"graph has duplicate nodes: {', '.join(dict.fromkeys(dupes))}")
    return index


def _check_edges(counters: Sequence[Counter], grounds: Mapping[str, Provider]) -> None:
    ids = {c.id for c in counters}
    for name, provider in grounds.items():
        if not isinstance(name, str) or not name or any(ch.isspace() for ch in name):
            raise ConfigError(f"a ground name must be a non-empty word, got {name!r}")
        if not callable(provider):
            raise ConfigError(f"ground {name}: the provider must be callable (ctx, snapshot)")
    for c in counters:
        for down in c.supersedes:
            if down not in ids:
                raise ConfigError(
                    f"graph node {c.id} supersedes {down!r}, which is not a node. "
                    f"Known: {', '.join(sorted(ids))}"
                )
        for need in c.needs:
            if need not in grounds:
                known = ", ".join(sorted(grounds)) or "none"
                raise ConfigError(
                    f"graph node {c.id} needs ground {need!r}, which the graph does not define. "
                    f"Defined: {known}"
                )
        if c.supersedes and is_ai(c.rule):
            raise ConfigError(
                f"graph node {c.id}: an AI check may raise doubt but not supersede "
                f"{', '.join(c.supersedes)}"
            )


def _check_acyclic(counters: Sequence[Counter]) -> None:
    """Raise ConfigError naming a cycle in ``supersedes``, if there is one."""
    edges = {c.id: c.supersedes for c in counters}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in edges:
        if start in state:
            continue
        path = [start]
        stack = [iter(edges[start])]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                cycle = [*path[path.index(nxt) :], nxt]
                raise ConfigError(f"graph supersedes has a cycle: {' → '.join(cycle)}")
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(edges[nxt]))


def _reaches(counters: Sequence[Counter]) -> dict[str, int]:
    edges = {c.id: c.supersedes for c in counters}
    reach: dict[str, int] = {}
    for c in counters:
        seen: set[str] = set()
        todo = list(c.supersedes)
        while todo:
            node = todo.pop()
            if node not in seen and node != c.id:
                seen.add(node)
                todo.extend(edges[node])
        reach[c.id] = len(seen)
    return reach


def _walkthrough(
    graph: Graph,
    outcome: Outcome,
    root: str,
    remaining: Sequence[str],
    superseded: Mapping[str, tuple[str, ...]],
    facts: Mapping[str, tuple[Fact, ...]],
    levels: Mapping[str, Level],
    skipped: Sequence[str],
) -> str:
    """Why the verdict came out as it did, and what would change it. One line per statement."""
    reach = graph.reach(root)
    upstream_of = f", upstream of {reach} rule{'' if reach == 1 else 's'}" if reach else ""
    lines = [f"{outcome}. Root cause: {root} ({levels[root]}{upstream_of})."]
    shown = _Shown(FACTS_SHOWN)
    lines += shown.node(root, levels[root], facts[root], "  ")
    side = [r for r in remaining if r != root]
    if side:
        lines.append("Also remaining:")
        for r in side:
            lines += shown.node(f"{r} ({levels[r]})", levels[r], facts[r], "  ")
    if shown.hidden:
        lines.append(hidden_line(shown.hidden, "  "))
    if superseded:
        lines.append("Superseded while their upstream stands:")
        by_upstream: dict[str, list[str]] = {}
        for down, ups in superseded.items():  # downs come in catalog order
            for up in ups:
                by_upstream.setdefault(up, []).append(down)
        for up in sorted(by_upstream, key=graph._index.__getitem__):
            lines.append(f"  {up} supersedes {_and(by_upstream[up])}.")
    if skipped:
        lines.append(f"Not judged yet (they read grounds): {_and(skipped)}.")
    if outcome is Outcome.REVIEW:
        # REVIEW locks the item: nothing the generator clears can flip it now, a person decides.
        lines.append("A person decides: the item waits for `reins resolve --accept|--reject`.")
        return "\n".join(lines) + "\n"
    alive = set(levels)
    rounds: list[str] = []
    while pick := [r for r in graph.remaining(alive) if levels[r] is Level.FAIL]:
        rounds.append(_and(pick))
        alive.difference_update(pick)
    after = Outcome.REVIEW if graph.remaining(alive) else Outcome.PASS
    lines.append(f"To flip the verdict to {after}, clear {', then '.join(rounds)}.")
    return "\n".join(lines) + "\n"


class _Shown:
    """The facts a walkthrough lists, up to ``left`` over all its nodes; it counts the rest."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.hidden = 0

    def node(self, name: str, level: Level, facts: Sequence[Fact], indent: str) -> list[str]:
        """A node's facts while the budget lasts (a fact lighter than the node's weight says
        its own level); a node whose facts are all left out is still named."""
        lines: list[str] = []
        for fact in facts[: self.left]:
            own = f" ({fact.level})" if fact.level and fact.level != level else ""
            lines += _fact_lines(f"{name}{own}", fact, indent)
        listed = min(len(facts), self.left)
        self.left -= listed
        self.hidden += len(facts) - listed
        if not listed:
            lines.append(f"{indent}{name}: {len(facts)} fact(s), not shown here")
        return lines


def _fact_lines(name: str, fact: Fact, indent: str) -> list[str]:
    where = fact.where if fact.where.isprintable() else quote(fact.where)
    return [
        f"{indent}{name} at {where}" if where else f"{indent}{name}",
        f"{indent}  expected: {quote(fact.expected)}",
        f"{indent}  actual:   {quote(fact.actual)}",
    ]


def _and(names: Sequence[str]) -> str:
    items = list(names)
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
