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
from reins.gate.ai import cap
from reins.gate.counter import Counter
from reins.gate.evaluate import excerpt, fire, strongest
from reins.gate.graphcheck import check_acyclic, check_edges, check_nodes, reaches, words
from reins.gate.ground import Provider, Resolver
from reins.gate.hcat import h_categoriser
from reins.gate.rule import CatalogEntry, Context, Fact, Level, Rule
from reins.gate.staged import judge_staged
from reins.gate.verdict import Outcome, Verdict
from reins.gate.walkthrough import walkthrough

__all__ = ["GRAPH_RULE", "WARRANT", "Counter", "Graph", "Judgement"]

WARRANT = "reins:pass"
"""The node id of the PASS warrant in :meth:`Judgement.acceptability`."""

GRAPH_RULE = "reins:graph"
"""The rule id of the fact left when the graph itself cannot be evaluated."""


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
        object.__setattr__(self, "_index", check_nodes(counters))
        check_edges(counters, self.grounds)
        upstream: dict[str, list[str]] = {c.id: [] for c in counters}
        for c in counters:
            for down in c.supersedes:
                upstream[down].append(c.id)
        check_acyclic(counters)
        object.__setattr__(self, "_upstream", {k: tuple(v) for k, v in upstream.items()})
        object.__setattr__(self, "_reach", reaches(counters))

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
                supersedes=tuple(words(edges["supersedes"].get(r.id, ()))),
                needs=tuple(words(edges["needs"].get(r.id, ()))),
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

    def position(self, node: str) -> int:
        """Where ``node`` stands in the catalog (0 first)."""
        return self._index[node]

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
        feedback = walkthrough(self, outcome, root, remaining, superseded, facts, levels, skipped)
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
