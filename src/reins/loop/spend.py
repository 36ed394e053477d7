"""What an item has cost over its whole log, and whether that, or the run's spending, reached
a cap.

The item's caps (``--max-item-tokens``, ``--max-item-cost``) count every turn of its log, so a
restarted run, or the next one, knows what the item cost before it spends more; the run's
(``--max-tokens``, ``--max-cost``) count what it recorded and what its agents in flight spent.
"""

from __future__ import annotations

from collections.abc import Sequence

from reins.coders.protocol import Spent
from reins.loop.options import Budget
from reins.store.model import Attempt

# Which cap an agent was killed at: the run's tokens, the run's cost, or the item's own.
RUN_TOKENS, RUN_COST, ITEM = "run-tokens", "run-cost", "item"


def item_spent(log: Sequence[Attempt]) -> Spent:
    """What every turn of an item's log cost."""
    tokens_in = sum(a.usage.input_tokens or 0 for a in log)
    tokens_out = sum(a.usage.output_tokens or 0 for a in log)
    return Spent(tokens_in, tokens_out, sum(a.usage.cost or 0.0 for a in log))


def item_over(budget: Budget, spent: Spent) -> str | None:
    """The item's cap that ``spent`` reached, said for a person, or None."""
    if budget.max_item_tokens is not None and spent.tokens >= budget.max_item_tokens:
        return f"the item's budget of {budget.max_item_tokens} tokens is spent (--max-item-tokens)"
    if budget.max_item_cost is not None and (spent.cost or 0.0) >= budget.max_item_cost:
        return f"the item's budget of a cost of {budget.max_item_cost:g} is spent (--max-item-cost)"
    return None


def cap_reached(budget: Budget, item: Spent, run: Spent) -> tuple[str | None, str | None]:
    """The cap reached by an item that spent ``item`` or by a run that spent ``run``, said for
    a person, and which (:data:`ITEM`, :data:`RUN_TOKENS`, :data:`RUN_COST`); the item's
    first."""
    said = item_over(budget, item)
    if said is not None:
        return said, ITEM
    if budget.max_tokens is not None and run.tokens >= budget.max_tokens:
        return f"the run's budget of {budget.max_tokens} tokens is spent", RUN_TOKENS
    if budget.max_cost is not None and (run.cost or 0.0) >= budget.max_cost:
        return f"the run's budget of a cost of {budget.max_cost:g} is spent", RUN_COST
    return None, None
