"""Batch prices: what a provider bills for a request sent through its batch API.

OpenAI's Batch API, Anthropic's Message Batches and Gemini's batch mode all bill a batch request
at half the list price of the same call, input and output, cached tokens too (the discounts
stack). This is the one place reins applies that factor: a batch turn's ``cost`` is its list
cost times :data:`BATCH_PRICE`, and ``report`` divides by it to say what the same tokens cost at
list price.
"""

from __future__ import annotations

BATCH_PRICE = 0.5
"""A batch request's price as a share of the list price of the same call."""


def batch_cost(list_cost: float | None) -> float | None:
    """What a batch call whose tokens cost ``list_cost`` at list price is billed."""
    return None if list_cost is None else list_cost * BATCH_PRICE
