"""Spend: what the recorded turns cost, what the same tokens cost at list price, and the saving.

From the ledger's kept totals only (:class:`~reins.store.model.Stats`), so it costs the same at
any size. The saving is ``list_cost - cost``; its batch part is what the turns made through a
batch API would have cost outside one (their cost divided by the batch share,
:data:`~reins.backends.prices.BATCH_PRICE`) less what they cost, and the rest is the prompt
cache's. The cache's part is negative when cache writes (billed above the input rate by some
providers) were not read back often enough to pay for themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.backends.prices import BATCH_PRICE
from reins.store.model import Stats


@dataclass(frozen=True, slots=True)
class Spend:
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    list_cost: float
    batch_cost: float

    @classmethod
    def of(cls, stats: Stats) -> Spend:
        return cls(
            stats.input_tokens,
            stats.output_tokens,
            stats.cache_read_tokens,
            stats.cache_write_tokens,
            stats.cost,
            stats.list_cost,
            stats.batch_cost,
        )

    @property
    def recorded(self) -> bool:
        """Whether any turn recorded tokens or a cost."""
        return bool(self.input_tokens or self.output_tokens or self.cost or self.list_cost)

    @property
    def cache_hit_rate(self) -> float | None:
        """The share of input tokens read from the prompt cache (None: no input recorded)."""
        return self.cache_read_tokens / self.input_tokens if self.input_tokens else None

    @property
    def saved(self) -> float:
        """What caching and batching saved against the list price."""
        return self.list_cost - self.cost

    @property
    def saved_by_batch(self) -> float:
        return self.batch_cost * (1 - BATCH_PRICE) / BATCH_PRICE

    @property
    def saved_by_cache(self) -> float:
        return self.saved - self.saved_by_batch
