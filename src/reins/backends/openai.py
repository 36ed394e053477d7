"""The ``openai`` backend: any OpenAI-compatible chat-completions API.

One backend for OpenAI itself, xAI, vLLM, LM Studio, llama.cpp's server and the like: point
``base_url`` at the server's ``/v1``. The key comes from ``$OPENAI_API_KEY`` when the server is
OpenAI's; for any other server, only from the variable ``key_env`` names, so an OpenAI key is
never sent to a third party by accident.
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


class OpenAIBackend(HTTPBackend):
    """OpenAI-compatible ``/chat/completions``: ``openai:gpt-4o-mini?temperature=0.7``."""

    name = "openai"
    default_url = f"https://{OPENAI_HOST}/v1"
    url_env = "REINS_OPENAI_URL"
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
        if self.temperature is not None:
            body["temperature"] = self.temperature
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
            input_tokens=dig(data, "usage", "prompt_tokens"),
            output_tokens=dig(data, "usage", "completion_tokens"),
            cost=dig(data, "usage", "cost"),
            stop=dig(data, "choices", 0, "finish_reason"),
        )

    def batches(self) -> BatchAPI:
        """This backend's batch API, for ``reins loop --batch``."""
        from reins.backends.openai_batch import OpenAIBatches

        return OpenAIBatches(self)


if TYPE_CHECKING:  # the class is a factory, its instances backends
    from reins.backends.base import BackendFactory

    _factory: BackendFactory = OpenAIBackend
