"""Prompt caching: the shortest prefix a provider caches, and whether a prompt's prefix reaches it.

Compose puts what every item shares first (:class:`reins.values.Prompt`'s ``system``). OpenAI
and Gemini cache such a prefix on their own once it is long enough; Anthropic caches only up to
a ``cache_control`` marker, which its backend sets at the end of ``system`` when
:func:`anthropic_cacheable` says the prefix is long enough for the model, and not otherwise.

Below a model's minimum the provider caches nothing, bills the prefix as plain input and says
nothing. A marker on a prefix that turns out too short therefore costs nothing, while a marker
left off a prefix long enough forgoes the discount. So the two guesses made here lean the same
way: the prefix's length is an overestimate (:func:`reins.backends.limits.estimate_tokens`: a
third of its ASCII characters, two per other character; English runs nearer four characters a
token), and a model the table does not know gets the smallest minimum Anthropic's own list
documents, 1,024 tokens.
"""

from __future__ import annotations

from reins.backends.limits import estimate_tokens
from reins.backends.prices import model_family

OPENAI_MINIMUM = 1024
"""OpenAI caches prompts from 1,024 tokens on, exact prefixes only, with no marker
(https://developers.openai.com/api/docs/guides/prompt-caching)."""

ANTHROPIC_DEFAULT_MINIMUM = 1024
"""The minimum assumed for a model not in :data:`ANTHROPIC_MINIMUMS`."""

_OFFICIAL = (
    "Anthropic's prompt-caching guide, as quoted in"
    " https://github.com/anthropics/anthropic-sdk-python/issues/1194"
)
_LITELLM = "secondary: docs.litellm.ai, its prompt-caching page (last updated 2026-10-07)"

ANTHROPIC_MINIMUMS: dict[str, tuple[int, str]] = {
    "claude-opus-4-6": (4096, _OFFICIAL),
    "claude-opus-4-5": (4096, _OFFICIAL),
    "claude-haiku-4-5": (4096, _OFFICIAL),
    "claude-sonnet-4-6": (1024, _OFFICIAL),
    "claude-sonnet-4-5": (1024, _OFFICIAL),
    "claude-opus-4-1": (1024, _OFFICIAL),
    "claude-opus-4": (1024, _OFFICIAL),
    "claude-sonnet-4": (1024, _OFFICIAL),
    "claude-3-7-sonnet": (1024, _OFFICIAL),
    "claude-3-5-haiku": (2048, _OFFICIAL),
    "claude-3-haiku": (2048, _OFFICIAL),
    # Newer models: secondary sources only, and they disagree on Opus 4.7 (2,048 or 4,096):
    # the lower one, as a marker below the real minimum costs nothing.
    "claude-opus-4-7": (2048, "secondary: dev.to/creeta; 4,096 per docs.litellm.ai"),
    "claude-opus-4-8": (1024, _LITELLM),
    "claude-sonnet-5": (1024, _LITELLM),
    "claude-opus-5": (512, _LITELLM),
    "claude-fable-5": (512, _LITELLM),
    "claude-mythos-5": (512, _LITELLM),
}
"""Anthropic model → (the fewest prompt tokens a cache entry holds, where that was read)."""


def anthropic_minimum(model: str) -> int:
    """The shortest prefix Anthropic caches for ``model`` (a dated id counts as its model)."""
    known = ANTHROPIC_MINIMUMS.get(model) or ANTHROPIC_MINIMUMS.get(model_family(model))
    return known[0] if known else ANTHROPIC_DEFAULT_MINIMUM


def anthropic_cacheable(model: str, prefix: str) -> bool:
    """Whether ``prefix`` may be long enough for Anthropic to cache it for ``model``."""
    return estimate_tokens(prefix) >= anthropic_minimum(model)
