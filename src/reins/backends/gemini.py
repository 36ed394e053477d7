"""The ``gemini`` backend: Google's Generative Language API (``models/{model}:generateContent``).

System text travels in ``systemInstruction``, its own field, not merged into the user turn; the
key travels in the ``x-goog-api-key`` header, never in the URL; the model name is URL-escaped.

Gemini 2.5 and newer cache a repeated prompt prefix on their own (implicit caching, no marker)
once it is long enough for the model; ``promptTokenCount`` includes the cached part, which
``cachedContentTokenCount`` reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from reins.backends._common import Reply, api_seed
from reins.backends._http import COMMON_OPTIONS, HTTPBackend, dig

if TYPE_CHECKING:
    from reins.values import Prompt


class GeminiBackend(HTTPBackend):
    """Gemini ``generateContent``: ``gemini:gemini-2.5-flash?thinking_budget=0``."""

    name = "gemini"
    default_url = "https://generativelanguage.googleapis.com"
    url_env = "REINS_GEMINI_URL"
    key_env_default = "GEMINI_API_KEY"
    prices = "gemini"  # the table lists no Gemini model yet: price options give the cost
    options: ClassVar[dict[str, str]] = {
        "base_url": "API root (default: $REINS_GEMINI_URL or Google's)",
        "key_env": "environment variable holding the API key (default GEMINI_API_KEY)",
        "thinking_budget": "thinking tokens allowed (0 turns thinking off where the model can)",
        "json": "true: ask for JSON (responseMimeType application/json)",
        **COMMON_OPTIONS,
    }

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        super().__init__(model.removeprefix("models/"), options)
        self.thinking_budget = self.opts.whole("thinking_budget", minimum=-1)
        self.json = bool(self.opts.flag("json", False))

    def request(self, prompt: Prompt, seed: int) -> tuple[str, dict[str, str], dict[str, Any]]:
        config: dict[str, Any] = {"seed": api_seed(seed)}
        temperature = self.sampling_at(prompt)
        if temperature is not None:
            config["temperature"] = temperature
        if self.max_output_tokens is not None:
            config["maxOutputTokens"] = self.max_output_tokens
        if self.thinking_budget is not None:
            config["thinkingConfig"] = {"thinkingBudget": self.thinking_budget}
        if self.json:
            config["responseMimeType"] = "application/json"
        body: dict[str, Any] = {
            "contents": [{"role": "user", "parts": [{"text": prompt.user}]}],
            "generationConfig": config,
        }
        if prompt.system:
            body["systemInstruction"] = {"parts": [{"text": prompt.system}]}
        url = f"{self.base_url}/v1beta/models/{quote(self.model, safe='')}:generateContent"
        headers = {"x-goog-api-key": self.key} if self.key else {}
        return url, headers, body

    def parse(self, data: Any) -> Reply:
        blocked = dig(data, "promptFeedback", "blockReason")
        if blocked:
            raise self.fail(f"the prompt was blocked: {self.snippet(blocked)}")
        parts = dig(data, "candidates", 0, "content", "parts")
        text = None
        if isinstance(parts, list):
            # thought summaries come flagged `thought: true`; the answer is the rest
            texts = [
                p["text"]
                for p in parts
                if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
            ]
            text = "".join(texts)
        usage = dig(data, "usageMetadata") or {}
        output = dig(usage, "candidatesTokenCount")
        thoughts = dig(usage, "thoughtsTokenCount")
        if isinstance(output, int) and isinstance(thoughts, int):
            output += thoughts  # thinking is billed as output
        return self.reply(
            text,
            model=dig(data, "modelVersion"),
            input_tokens=dig(usage, "promptTokenCount"),
            output_tokens=output,
            stop=dig(data, "candidates", 0, "finishReason"),
            # JSON leaves out a count of 0: a prompt counted with no cached part had none
            cache_read_tokens=dig(usage, "cachedContentTokenCount")
            or (0 if isinstance(dig(usage, "promptTokenCount"), int) else None),
        )


if TYPE_CHECKING:  # the class is a factory, its instances backends
    from reins.backends.base import BackendFactory

    _factory: BackendFactory = GeminiBackend
