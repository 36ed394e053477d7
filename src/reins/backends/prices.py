"""Prices: what a provider bills per million tokens of a model, and what a call's usage cost.

The table is a snapshot, read on :data:`TABLE_DATE` from the pages each entry names (its
``source``); the providers change their prices, so every entry can be overridden with a
backend's price options (``price_in``, ``price_out``, ``price_cached``, ``price_cache_write``,
``price_batch``), and a model that is not in the table reports no cost unless they are given.
Where only a secondary source gave a figure, the entry says so in its ``note``.

A call's usage follows :class:`reins.values.Completion`: ``input_tokens`` are all the prompt
tokens billed, of which ``cache_read`` were read from the provider's prompt cache and
``cache_write`` written to it. Its ``cost`` prices each part at its own rate and a batch call at
the batch share of that; its ``list_cost`` prices the same tokens at list price, every input
token at the uncached rate and no batch discount, so ``list_cost - cost`` is what caching and
batching saved (or, for cache writes never read, what they cost).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TABLE_DATE = "2026-12-01"
"""When the table's sources were read: the prices are those of that day."""

PER = 1_000_000

BATCH_PRICE = 0.5
"""A batch request's price as a share of the list price of the same call: OpenAI's Batch API,
Anthropic's Message Batches and Gemini's batch mode all bill half (``price_batch`` overrides it)."""


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens of one model, and the share of it a batch request is billed.

    ``cache_read`` and ``cache_write`` are the rates of input tokens read from and written to
    the prompt cache (Anthropic's write: the 5-minute one, which reins asks for); None means
    no rate of their own is known, and they are billed as uncached input.
    """

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    batch: float = BATCH_PRICE
    date: str = TABLE_DATE
    source: str = ""
    note: str = ""

    def cost(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        *,
        cache_read: int | None = None,
        cache_write: int | None = None,
        batch: bool = False,
    ) -> float | None:
        """What a call with this usage is billed, in USD; None when it reported no tokens."""
        if input_tokens is None and output_tokens is None:
            return None
        read, write = cache_read or 0, cache_write or 0
        uncached = max((input_tokens or 0) - read - write, 0)  # a provider's counts may not add up
        read_rate = self.input if self.cache_read is None else self.cache_read
        write_rate = self.input if self.cache_write is None else self.cache_write
        billed = uncached * self.input + read * read_rate + write * write_rate
        billed += (output_tokens or 0) * self.output
        return billed * (self.batch if batch else 1.0) / PER

    def list_cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        """The same tokens at list price: every input token uncached, no batch discount."""
        if input_tokens is None and output_tokens is None:
            return None
        return ((input_tokens or 0) * self.input + (output_tokens or 0) * self.output) / PER


_OPENAI_DOCS = "https://developers.openai.com/api/docs/models/"
_CLAUDE_DOCS = "https://platform.claude.com/docs/"
_LONG = "prompts over 272K input tokens bill 2x input and cache, 1.5x output (not modelled)"
_OPUS = Price(
    input=5.00, cache_read=0.50, cache_write=6.25, output=25.00,
    source=_CLAUDE_DOCS + "en/about-claude/pricing",
)  # fmt: skip

PRICES: dict[str, dict[str, Price]] = {
    # OpenAI, Standard tier. "Batch and Flex are priced at 50% of Standard rates" (model pages);
    # cache writes cost 1.25x input from the GPT-5.6 family on and nothing extra before it
    # (https://developers.openai.com/api/docs/guides/prompt-caching).
    "openai": {
        "gpt-6-sol": Price(
            input=2.00, cache_read=0.20, cache_write=2.50, output=10.00,
            source="https://developers.openai.com/docs/models/gpt-6-sol", note=_LONG,
        ),
        "gpt-6.2-sol": Price(
            input=2.00, cache_read=0.10, cache_write=2.50, output=10.00,
            source=_OPENAI_DOCS + "gpt-6.2-sol.md",
            note="the cache write is the 30-minute one; " + _LONG,
        ),
        "gpt-6-luna": Price(
            input=0.10, cache_read=0.01, cache_write=0.125, output=0.50,
            source="https://developers.openai.com/ja-JP/api/docs/models/gpt-6-luna", note=_LONG,
        ),
        "gpt-5.6-luna": Price(
            input=0.20, cache_read=0.02, cache_write=0.25, output=1.20,
            source=_OPENAI_DOCS + "gpt-5.6-luna",
            note="cache write 1.25x input per the prompt-caching guide; the batch share is the"
            " Batch API's 50%, not stated on the model page",
        ),
        "gpt-4.1-mini": Price(
            input=0.40, cache_read=0.10, cache_write=0.40, output=1.60,
            source="https://vercel.com/ai-gateway/models/gpt-4.1-mini",
            note="secondary source; no cache-write fee before GPT-5.6; OpenAI shuts the model"
            " down on 2027-01-14",
        ),
    },
    # Anthropic: 5-minute cache writes 1.25x input, reads 0.1x for most models; "Batch API: 50%
    # discount on input and output" (model pages). That the batch discount applies to cache
    # reads and writes too is said by secondary sources only.
    "anthropic": {
        "claude-sonnet-5-5": Price(
            input=2.00, cache_read=0.20, cache_write=2.50, output=10.00,
            source=_CLAUDE_DOCS + "zh-CN/models/sonnet-5-5/overview",
            note="third-party trackers report cache reads cut to 0.10 from 2026-10-07; the"
            " official page read shows 0.20 (set price_cached if your bill says otherwise)",
        ),
        "claude-haiku-4-5": Price(
            input=1.00, cache_read=0.10, cache_write=1.25, output=5.00,
            source=_CLAUDE_DOCS + "zh-CN/models/haiku-4-5/overview.md",
            note="cache rates from a secondary table (docs.electronhub.ai): the documented"
            " multipliers",
        ),
        "claude-haiku-5-5": Price(
            input=0.10, cache_read=0.01, cache_write=0.125, output=0.50,
            source="https://apidog.com/blog/how-to-use-claude-haiku-5-5-api",
            note="secondary sources only; prompts up to 100K tokens (above: 5x, not modelled)",
        ),
        # the models of Claude Code's earlier defaults, for its runs' metering
        "claude-sonnet-4-5": Price(
            input=3.00, cache_read=0.30, cache_write=3.75, output=15.00,
            source=_CLAUDE_DOCS + "en/about-claude/pricing",
        ),
        "claude-opus-4-1": Price(
            input=15.00, cache_read=1.50, cache_write=18.75, output=75.00,
            source=_CLAUDE_DOCS + "en/about-claude/pricing",
        ),
        "claude-opus-5": _OPUS,
        "claude-opus-4-8": _OPUS,
        "claude-opus-4-7": _OPUS,
        "claude-opus-4-6": _OPUS,
        "claude-opus-4-5": _OPUS,
    },
}  # fmt: skip
"""Provider → model → price: the backends' ``prices`` name a provider here."""

# A dated snapshot id (claude-haiku-4-5-20251001, gpt-4.1-mini-2025-04-14) or an alias ending
# in -latest is priced as its model.
_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|@\d{8}|-latest)\Z")


def model_family(model: str) -> str:
    """``model`` without a snapshot date or ``-latest``: the name tables are keyed by."""
    return _SUFFIX.sub("", model.strip().removeprefix("models/"))


def lookup(provider: str, model: str) -> Price | None:
    """The table's price of ``model`` at ``provider``, or None when the table does not know it."""
    table = PRICES.get(provider, {})
    return table.get(model) or table.get(model_family(model))


def override(
    listed: Price | None,
    *,
    input: float | None = None,
    output: float | None = None,
    cache_read: float | None = None,
    cache_write: float | None = None,
    batch: float | None = None,
) -> Price | None:
    """``listed`` with each rate that is given replaced.

    A model the table does not list gets a price only from ``input`` or ``output`` (the other
    one 0): cache and batch rates alone say nothing of what its tokens cost.
    """
    if listed is None and input is None and output is None:
        return None
    if all(v is None for v in (input, output, cache_read, cache_write, batch)):
        return listed
    base = listed if listed is not None else Price(0.0, 0.0, date="")
    note = "rates set by the backend's price options"
    return Price(
        input=base.input if input is None else input,
        output=base.output if output is None else output,
        cache_read=base.cache_read if cache_read is None else cache_read,
        cache_write=base.cache_write if cache_write is None else cache_write,
        batch=base.batch if batch is None else batch,
        date=base.date,
        source=base.source,
        note=f"{note}; {base.note}" if base.note else note,
    )


def says_priced(generator: object) -> bool | None:
    """Whether a backend (or a coding agent) says each call of it records a cost: its
    ``priced`` attribute (the price table or price options price its model, its provider or CLI
    reports what it billed, or it runs here for nothing); None when it does not say."""
    value = getattr(generator, "priced", None)
    return value if isinstance(value, bool) else None


def read_rates(text: str) -> tuple[float, float]:
    """``IN/OUT``, USD per million input and output tokens (``2.00/8.00``), as two numbers.

    Raises:
        ValueError: not two finite numbers of 0 or more joined by a ``/`` (the message says
            what was expected).
    """
    given, slash, out = text.strip().partition("/")
    try:
        rates = (float(given), float(out)) if slash else None
    except ValueError:
        rates = None
    if rates is None or not all(0 <= r < float("inf") for r in rates):
        raise ValueError(
            f"{text!r} is not a price: write IN/OUT, USD per million input and output tokens "
            "(e.g. 2.00/8.00)"
        )
    return rates
