"""What a run's models cost, before it starts: a price given to a model, and the refusal of a
cost cap that could never act.

A turn records a cost only when its model has a price: the price table
(:mod:`reins.backends.prices`) lists it, its spec's price options give one, or its provider
(or CLI) reports what it billed. ``--max-cost`` and ``--max-item-cost`` add up recorded costs,
so on a model without a price they would never act; :func:`refuse_unpriced` stops such a run
before it spends anything, naming the model and how to price it. A price given outside the spec
(``reins loop --price``, the ``[prices]`` table of reins.toml) goes into the spec as its price
options (:func:`priced_spec`), so the backend prices every call as it would its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from reins.backends.prices import TABLE_DATE, says_priced
from reins.errors import ConfigError
from reins.loop.generator import AgentGenerator, TextGenerator

if TYPE_CHECKING:
    from reins.loop.generator import Generator
    from reins.loop.options import Budget

PRICE_OPTIONS = ("price_in", "price_out")


def price_for(spec: str, prices: Mapping[str, tuple[float, float]]) -> tuple[float, float] | None:
    """The price ``prices`` gives the model ``spec`` names: keyed by a spec, options and all,
    or by ``backend:model`` alone (which then prices the model whatever its options)."""
    from reins.backends.registry import parse_spec

    parsed = parse_spec(spec)
    for key, rates in prices.items():
        named = parse_spec(key)
        same = (named.backend, named.model) == (parsed.backend, parsed.model)
        if same and (not named.options or dict(named.options) == dict(parsed.options)):
            return rates
    return None


def priced_spec(spec: str, prices: Mapping[str, tuple[float, float]]) -> str:
    """``spec`` with the price ``prices`` gives it as its ``price_in`` and ``price_out``
    options; as it is when it is given none, or names a price of its own already."""
    from reins.backends.registry import Spec, parse_spec

    rates = price_for(spec, prices)
    parsed = parse_spec(spec)
    if rates is None or any(k in parsed.options for k in PRICE_OPTIONS):
        return spec
    options = {**parsed.options, "price_in": f"{rates[0]:g}", "price_out": f"{rates[1]:g}"}
    return str(Spec(parsed.backend, parsed.model, options))


def _unpriced(generator: Generator) -> bool:
    """Whether ``generator`` is known to record no cost: a text backend that does not say it
    is priced. A coding agent that does not say cannot be told ahead (its run reports what it
    spent, or does not), so it is not refused here; the run notes its first turn without one."""
    if isinstance(generator, TextGenerator):
        return says_priced(generator.backend) is not True
    if isinstance(generator, AgentGenerator):
        return says_priced(generator.agent) is False
    return says_priced(generator) is False


def model_name(generator: Generator | object) -> str:
    """``backend:model`` of a generator (or a backend), as a person names it."""
    inner = getattr(generator, "backend", None) or getattr(generator, "agent", None) or generator
    name = getattr(inner, "name", None) or type(inner).__name__
    model = getattr(inner, "model", None)
    return f"{name}:{model}" if isinstance(model, str) and model else str(name)


def refuse_unpriced(budget: Budget, generators: Sequence[Generator]) -> None:
    """Refuse a run whose cost caps could never act on one of its generators.

    Raises:
        ConfigError: ``--max-cost`` or ``--max-item-cost`` is set and a generator has no price,
            naming the model and the ways to give it one.
    """
    caps = [
        flag
        for flag, value in (
            ("--max-cost", budget.max_cost),
            ("--max-item-cost", budget.max_item_cost),
        )
        if value is not None
    ]
    if not caps:
        return
    names = list(dict.fromkeys(model_name(g) for g in generators if _unpriced(g)))
    if not names:
        return
    which = names[0]
    raise ConfigError(
        f"{' and '.join(caps)} cannot act on {', '.join(names)}: no price is known for it, so "
        f"its turns would record no cost (reins' price table of {TABLE_DATE} does not list "
        "it). Give it a price, USD per million input and output tokens: "
        f"--price {which}=IN/OUT, or under [prices] in reins.toml "
        f'"{which}" = "IN/OUT", or ?price_in=IN&price_out=OUT in its spec; '
        f"or run without {' and '.join(caps)}"
    )
