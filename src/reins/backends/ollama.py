"""The ``ollama`` backend: Ollama's chat API (``POST /api/chat``), one non-streamed reply.

The context window is sized to each prompt: ``num_ctx`` is the smallest power of two (at least
2048) that holds the estimated prompt plus the output cap, with no upper clamp. An explicit
``num_ctx`` too small for the prompt is refused before the call, because Ollama would otherwise
cut the prompt silently. ``think`` goes where the API reads it: a top-level field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from reins.backends._common import Reply, api_seed
from reins.backends._http import COMMON_OPTIONS, HTTPBackend, dig
from reins.backends.limits import estimate_tokens

if TYPE_CHECKING:
    from reins.values import Prompt

MIN_CTX = 2048
_TEMPLATE_OVERHEAD = 32  # role markers and the chat template around two messages
_THINK = ("true", "false", "low", "medium", "high")


def context_size(need: int) -> int:
    """The smallest power of two ≥ ``need`` and ≥ 2048."""
    size = MIN_CTX
    while size < need:
        size *= 2
    return size


class OllamaBackend(HTTPBackend):
    """Ollama's ``/api/chat``: ``ollama:qwen2.5:0.5b?temperature=0.7``."""

    name = "ollama"
    default_url = "http://localhost:11434"
    url_env = "REINS_OLLAMA_URL"
    down_hint = (
        "is Ollama running? Start it with `ollama serve`, or set base_url (or "
        "REINS_OLLAMA_URL) to where it listens"
    )
    options: ClassVar[dict[str, str]] = {
        "base_url": "server URL (default: $REINS_OLLAMA_URL or http://localhost:11434)",
        "num_ctx": "context window in tokens (default: sized to the prompt + output cap)",
        "think": "reasoning switch, the top-level `think` field: true, false, low, medium, high",
        "json": "true: constrain the reply to JSON (`format: json`)",
        "keep_alive": "how long the server keeps the model loaded, e.g. 10m, or 0",
        "key_env": "environment variable holding a bearer token, for a server behind auth",
        **COMMON_OPTIONS,
    }

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        super().__init__(model, options)
        opts = self.opts
        self.num_ctx = opts.whole("num_ctx", minimum=1)
        think = opts.choice("think", _THINK)
        self.think: bool | str | None = {"true": True, "false": False}.get(think or "", think)
        self.json = bool(opts.flag("json", False))
        self.keep_alive = opts.text("keep_alive")

    def request(self, prompt: Prompt, seed: int) -> tuple[str, dict[str, str], dict[str, Any]]:
        reserve = self.output_reserve()
        prompt_tokens = estimate_tokens(prompt.system) + estimate_tokens(prompt.user)
        need = prompt_tokens + reserve + _TEMPLATE_OVERHEAD
        if self.num_ctx is None:
            num_ctx = context_size(need)
        elif need > self.num_ctx:
            raise self.fail(
                f"the prompt needs about {need} tokens of context (prompt ~{prompt_tokens},"
                f" output cap {reserve}) but num_ctx={self.num_ctx}: raise num_ctx, lower"
                " max_output_tokens, or leave num_ctx unset to size it per prompt"
            )
        else:
            num_ctx = self.num_ctx
        options: dict[str, Any] = {
            "num_ctx": num_ctx,
            "num_predict": reserve,
            "seed": api_seed(seed),
        }
        temperature = self.sampling_at(prompt)
        if temperature is not None:
            options["temperature"] = temperature
        messages = [{"role": "user", "content": prompt.user}]
        if prompt.system:
            messages.insert(0, {"role": "system", "content": prompt.system})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": False,
            "options": options,
        }
        if self.think is not None:
            body["think"] = self.think
        if self.json:
            body["format"] = "json"
        if self.keep_alive is not None:
            body["keep_alive"] = self.keep_alive
        headers = {"authorization": f"Bearer {self.key}"} if self.key else {}
        return f"{self.base_url}/api/chat", headers, body

    def parse(self, data: Any) -> Reply:
        error = dig(data, "error")
        if isinstance(error, str) and error:
            raise self.fail(self.snippet(error))
        return self.reply(
            dig(data, "message", "content"),
            model=dig(data, "model"),
            input_tokens=dig(data, "prompt_eval_count"),
            output_tokens=dig(data, "eval_count"),
            stop=dig(data, "done_reason"),
        )


if TYPE_CHECKING:  # the class is a factory, its instances backends
    from reins.backends.base import BackendFactory

    _factory: BackendFactory = OllamaBackend
