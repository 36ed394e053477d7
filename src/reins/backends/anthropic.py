"""The ``anthropic`` backend: Anthropic's Messages API (``POST /v1/messages``).

The key goes in ``x-api-key``, the API version in ``anthropic-version``, and system text in the
top-level ``system`` field. The API takes no seed, so a retry samples anew on its own.

Anthropic caches a prompt only up to a ``cache_control`` breakpoint. The system text is what
every item of a quest shares (see :class:`~reins.values.Prompt`), so when it is long enough to
be cached for the model (:func:`~reins.backends.cache.anthropic_cacheable`) it goes as one text
block carrying the breakpoint, the default 5-minute ``ephemeral`` one; shorter, as plain text.
The usage's ``input_tokens`` leaves out the tokens read from and written to the cache; reins
adds them back, so ``input_tokens`` counts every prompt token billed, as for every backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from reins.backends._common import Reply
from reins.backends._http import COMMON_OPTIONS, HTTPBackend, dig
from reins.backends.cache import anthropic_cacheable

if TYPE_CHECKING:
    from reins.backends.batch import BatchAPI
    from reins.values import Prompt

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096  # the API requires a cap


class AnthropicBackend(HTTPBackend):
    """Anthropic Messages: ``anthropic:claude-sonnet-4-5?max_output_tokens=2000``."""

    name = "anthropic"
    default_url = "https://api.anthropic.com"
    url_env = "REINS_ANTHROPIC_URL"
    key_env_default = "ANTHROPIC_API_KEY"
    prices = "anthropic"
    options: ClassVar[dict[str, str]] = {
        "base_url": "API root (default: $REINS_ANTHROPIC_URL or Anthropic's)",
        "key_env": "environment variable holding the API key (default ANTHROPIC_API_KEY)",
        "version": f"anthropic-version header (default {API_VERSION})",
        **COMMON_OPTIONS,
    }

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        super().__init__(model, options)
        self.version = self.opts.text("version", API_VERSION) or API_VERSION

    def output_reserve(self) -> int:
        return self.max_output_tokens or DEFAULT_MAX_TOKENS

    def request(self, prompt: Prompt, seed: int) -> tuple[str, dict[str, str], dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.output_reserve(),
            "messages": [{"role": "user", "content": prompt.user}],
        }
        if prompt.system and anthropic_cacheable(self.model, prompt.system):
            marker = {"type": "ephemeral"}
            body["system"] = [{"type": "text", "text": prompt.system, "cache_control": marker}]
        elif prompt.system:
            body["system"] = prompt.system
        temperature = self.sampling_at(prompt)
        if temperature is not None:
            body["temperature"] = temperature
        headers = {"anthropic-version": self.version}
        if self.key:
            headers["x-api-key"] = self.key
        return f"{self.base_url}/v1/messages", headers, body

    def parse(self, data: Any) -> Reply:
        if dig(data, "type") == "error":
            raise self.fail(self.snippet(dig(data, "error", "message") or "error reply"))
        content = dig(data, "content")
        text = None
        if isinstance(content, list):
            text = "".join(
                b["text"]
                for b in content
                if isinstance(b, dict)
                and b.get("type") == "text"
                and isinstance(b.get("text"), str)
            )
        return self.reply(
            text,
            model=dig(data, "model"),
            stop=dig(data, "stop_reason"),
            **usage_counts(dig(data, "usage")),
        )

    def batches(self) -> BatchAPI:
        """This backend's batch API, for ``reins loop --batch``."""
        from reins.backends.anthropic_batch import AnthropicBatches

        return AnthropicBatches(self, self.version)


def usage_counts(usage: Any) -> dict[str, Any]:
    """Token counts of an Anthropic ``usage``, the cache reads and writes added into the input."""
    input_tokens = dig(usage, "input_tokens")
    read = dig(usage, "cache_read_input_tokens")
    write = dig(usage, "cache_creation_input_tokens")
    if isinstance(input_tokens, int):
        for more in (read, write):
            input_tokens += more if isinstance(more, int) and more > 0 else 0
    return {
        "input_tokens": input_tokens,
        "output_tokens": dig(usage, "output_tokens"),
        "cache_read_tokens": read,
        "cache_write_tokens": write,
    }


if TYPE_CHECKING:  # the class is a factory, its instances backends
    from reins.backends.base import BackendFactory

    _factory: BackendFactory = AnthropicBackend
