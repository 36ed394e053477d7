"""``ai``: ask a model a question about the submission; a doubtful answer parks it for a person.

The check is :class:`reins.gate.ai.AICheck` (so its level is capped at REVIEW, and an outage is
the judge's failure, never a verdict), built from a model spec, a question and a regex:

- ``question`` is plain text in which ``{submission}`` (text as written, JSON as JSON),
  ``{source}``, ``{key}`` and ``{raw}`` are replaced; other braces stay as they are;
- the answer is *doubtful* when ``doubt_when`` matches it (``'^\\s*no\\b'`` with ``flags = "i"``,
  say): then the check leaves a REVIEW fact with the answer.

The backend is built from ``backend`` (a model spec such as ``ollama:llama3``) on the first
question, not when the gate loads: loading a gate needs no model and no network.
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from reins.checks._common import excerpt, to_json
from reins.checks.regex import compile_pattern
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import ConfigError, ParamValueError
from reins.gate.ai import AICheck
from reins.gate.rule import Context, Level
from reins.values import Fact

if TYPE_CHECKING:
    from reins.backends.base import Backend

NAME = "ai"
PLACEHOLDERS = ("submission", "source", "key", "raw")
T = TypeVar("T")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")


def render(template: str, ctx: Context) -> str:
    """``template`` with each ``{name}`` of :data:`PLACEHOLDERS` replaced from ``ctx``."""
    submission = ctx.submission if isinstance(ctx.submission, str) else to_json(ctx.submission)
    values = {"submission": submission, "source": ctx.source, "key": ctx.key, "raw": ctx.raw}
    # one pass: a value put in (a submission that writes "{source}") is never read again
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


class Asker:
    """``ask(question) -> answer`` on the backend a model spec names, built on first use."""

    def __init__(self, spec: str, timeout: float) -> None:
        self.spec, self.timeout = spec, timeout
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    def backend(self) -> Backend:
        with self._lock:
            if self._backend is None:
                from reins.backends.registry import resolve  # the gate loads no backend

                self._backend = resolve(self.spec)
            return self._backend

    def __call__(self, question: str) -> str:
        from reins.values import Prompt, call_seed

        prompt = Prompt(system="", user=question, key="ai-check")
        coro = self.backend().complete(prompt, seed=call_seed(question, 0), timeout=self.timeout)
        return _run(coro).text


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end, also from a thread whose event loop is running (the loop may
    judge inline): then in a thread of its own, with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, name="reins-ai-check")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class AIParams:
    backend: str
    """the model spec, e.g. ollama:llama3"""
    question: str
    """the question; {submission}, {source}, {key}, {raw} replaced"""
    doubt_when: str
    """a regex: an answer it matches parks the item for review"""
    flags: str = "i"
    """regex flags for doubt_when: letters of imsxa"""
    timeout: float = 60.0
    """seconds to wait for the answer"""


def _build(params: AIParams) -> BuiltCheck:
    spec = params.backend
    try:
        from reins.backends.registry import parse_spec

        parse_spec(spec)
    except ConfigError as exc:
        raise ParamValueError(NAME, "backend", str(exc)) from None
    template = params.question
    if not template.strip():
        raise ParamValueError(NAME, "question", "expected a question")
    doubt = compile_pattern(NAME, params.doubt_when, params.flags)
    timeout = params.timeout
    if timeout <= 0:
        raise ParamValueError(NAME, "timeout", "expected a number of seconds above 0")

    def read(answer: str, ctx: Context) -> Fact | None:
        if doubt.search(answer) is None:
            return None
        return Fact(
            where="ai",
            expected=f"an answer not matching /{doubt.pattern}/",
            actual=excerpt(answer),
            level=Level.REVIEW.value,
        )

    return AICheck(NAME, Asker(spec, timeout), lambda ctx: render(template, ctx), read)


AI = CheckSpec(
    name=NAME,
    summary="a model's answer to a question about the submission raises doubt (REVIEW at most)",
    params=AIParams,
    build=_build,
    ceiling=Level.REVIEW,
)
