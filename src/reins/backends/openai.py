"""The ``openai`` backend: any OpenAI-compatible chat-completions API.

One backend for OpenAI itself, xAI, vLLM, LM Studio, llama.cpp's server and the like: point
``base_url`` at the server's ``/v1``. The key comes from ``$OPENAI_API_KEY`` when the server is
OpenAI's; for any other server, only from the variable ``key_env`` names, so an OpenAI key is
never sent to a third party by accident.

OpenAI caches a prompt's prefix on its own from 1,024 tokens on: the order compose gives (the
shared system text first) is all it needs, so the request carries no marker. The usage's
``prompt_tokens`` already counts the cached tokens (``cached_tokens``, ``cache_write_tokens``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from reins.backends._common import Options, Reply, api_seed
from reins.backends._http import COMMON_OPTIONS, HTTPBackend, dig
from reins.backends.redact import read_key

if TYPE_CHECKING:
    from reins.backends.batch import BatchAPI
    from reins.values import Prompt

OPENAI_HOST = "api.openai.com"


def _text(content: Any) -> Any:
    """Message content as text: a string, or a list of text parts some servers send."""
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str)) or None
    return content


def usage_counts(usage: Any) -> dict[str, Any]:
    """Token counts of an OpenAI ``usage``, of Chat Completions or of the Responses API.

    Both count the cached tokens inside the prompt total already (unlike Anthropic), so the
    total is ``input_tokens`` as it stands.
    """
    if dig(usage, "input_tokens") is not None:  # Responses
        total, details, out = "input_tokens", "input_tokens_details", "output_tokens"
    else:
        total, details, out = "prompt_tokens", "prompt_tokens_details", "completion_tokens"
    return {
        "input_tokens": dig(usage, total),
        "output_tokens": dig(usage, out),
        "cache_read_tokens": dig(usage, details, "cached_tokens"),
        "cache_write_tokens": dig(usage, details, "cache_write_tokens"),
        "cost": dig(usage, "cost"),  # some servers (OpenRouter) report what they billed
    }


class OpenAIBackend(HTTPBackend):
    """OpenAI-compatible ``/chat/completions``: ``openai:gpt-4o-mini?temperature=0.7``."""

    name = "openai"
    default_url = f"https://{OPENAI_HOST}/v1"
    url_env = "REINS_OPENAI_URL"
    prices = "openai"
    options: ClassVar[dict[str, str]] = {
        "base_url": "API base URL ending in /v1 (default: $REINS_OPENAI_URL or OpenAI's)",
        "key_env": "environment variable holding the API key (default OPENAI_API_KEY for"
        " api.openai.com; other servers get a key only when this is set)",
        "reasoning_effort": "reasoning models: low, medium or high (sent as reasoning_effort)",
        "json": "true: ask for a JSON object (response_format json_object)",
        **COMMON_OPTIONS,
    }

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        super().__init__(model, options)
        self.reasoning_effort = self.opts.text("reasoning_effort")
        self.json = bool(self.opts.flag("json", False))
        self.is_openai = urlsplit(self.base_url).hostname == OPENAI_HOST

    def _read_key(self, opts: Options) -> str | None:
        key_env = opts.text("key_env")
        if key_env:
            return read_key(key_env, backend=self.name)
        if urlsplit(self.base_url).hostname == OPENAI_HOST:
            return read_key("OPENAI_API_KEY", backend=self.name)
        return None

    def request(self, prompt: Prompt, seed: int) -> tuple[str, dict[str, str], dict[str, Any]]:
        messages = [{"role": "user", "content": prompt.user}]
        if prompt.system:
            messages.insert(0, {"role": "system", "content": prompt.system})
        body: dict[str, Any] = {"model": self.model, "messages": messages, "seed": api_seed(seed)}
        temperature = self.sampling_at(prompt)
        if temperature is not None:
            body["temperature"] = temperature
        if self.max_output_tokens is not None:
            # OpenAI's reasoning models refuse the older max_tokens; most other servers know
            # only max_tokens
            field = "max_completion_tokens" if self.is_openai else "max_tokens"
            body[field] = self.max_output_tokens
        if self.reasoning_effort is not None:
            body["reasoning_effort"] = self.reasoning_effort
        if self.json:
            body["response_format"] = {"type": "json_object"}
        headers = {"authorization": f"Bearer {self.key}"} if self.key else {}
        return f"{self.base_url}/chat/completions", headers, body

    def parse(self, data: Any) -> Reply:
        error = dig(data, "error")
        if error:
            message = dig(error, "message") if isinstance(error, dict) else error
            raise self.fail(self.snippet(message))
        if not dig(data, "choices"):
            raise self.fail("the reply has no choices")
        return self.reply(
            _text(dig(data, "choices", 0, "message", "content")),
            model=dig(data, "model"),
            stop=dig(data, "choices", 0, "finish_reason"),
            **usage_counts(dig(data, "usage")),
        )

    def batches(self) -> BatchAPI:
        """This backend's batch API, for ``reins loop --batch``."""
        from reins.backends.openai_batch import OpenAIBatches

        return OpenAIBatches(self)


if TYPE_CHECKING:  # the class is a factory, its instances backends
    from reins.backends.base import BackendFactory

    _factory: BackendFactory = OpenAIBackend
