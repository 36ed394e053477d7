"""Coding-agent CLIs as backends: ``claude``, ``codex``, ``gemini-cli`` and ``grok``.

Each call is single-shot, with tools disabled or read-only as far as the CLI allows, in a fresh
empty working directory. The whole prompt, system text included, goes on stdin, after a short
no-tools preamble: none of these CLIs has a stdin channel for system text, and the argument list
is visible to every local user. It runs on the one process runner (:mod:`reins.backends.process`):
a timeout, or too much output, ends its whole process tree, and so does its end. Authentication
is each CLI's own login: reins passes no key. The binary is found on
``PATH`` or named by ``REINS_<NAME>_BIN`` (``REINS_GEMINI_CLI_BIN`` for ``gemini-cli``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from reins.backends import process
from reins.backends._common import LIMIT_OPTIONS, PRICE_OPTIONS, Options, Reply
from reins.backends._http import dig
from reins.backends.limits import estimate_tokens
from reins.backends.redact import Redactor
from reins.errors import BackendError, ConfigError, TransientError, TransientTimeout
from reins.workspace.scratch import folder as temporary_folder

if TYPE_CHECKING:
    from reins.values import Completion, Prompt

PREAMBLE = (
    "You are used as a plain text generator. You have no tools: do not read or write files,"
    " run commands or browse. Work only from the text below, and reply with exactly the"
    " requested output, with no remarks before or after it."
)
DEFAULT_MODEL = "default"  # `claude:default`: leave the model to the CLI's own configuration

CLI_OPTIONS: dict[str, str] = {
    "cwd": "working directory for the CLI (default: a fresh empty temporary directory)",
    **LIMIT_OPTIONS,
    "retries": "retries of a transient failure: timeout, rate limit, overload, network (default 4)",
    **PRICE_OPTIONS,
}

_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+\[\]-]*\Z")
# failures a later try may not repeat: rate limits, overload, the network
_TRANSIENT = re.compile(
    r"(?i)\b(429|500|502|503|504|529)\b|rate.?limit|too many requests|overloaded|"
    r"temporarily unavailable|try again|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|"
    r"network error|socket hang up|timed? ?out"
)


def fold(prompt: Prompt) -> str:
    """The stdin text: preamble, system text, user text, each separated by a blank line."""
    return "\n\n".join(part for part in (PREAMBLE, prompt.system, prompt.user) if part)


def _json_objects(text: str) -> list[Any]:
    """Every JSON value on its own line of ``text`` (JSONL), skipping lines that are not."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("{", "[")):
            try:
                found.append(json.loads(line))
            except ValueError:
                continue
    return found


def _json_document(text: str) -> Any:
    """``text`` as one JSON document, tolerating chatter before it (a log line, a banner)."""
    text = text.strip()
    with contextlib.suppress(ValueError):
        return json.loads(text)
    start = text.find("{")
    if start > 0:
        with contextlib.suppress(ValueError):
            return json.loads(text[start:])
    return None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class CLIBackend:
    """One coding-agent CLI. Subclasses give its arguments and read its output."""

    name: str  # an instance attribute to the Backend protocol; each subclass sets it
    binary: ClassVar[str]
    options: ClassVar[dict[str, str]] = CLI_OPTIONS
    reports_cost: ClassVar[bool] = False  # whether the CLI reports what each call was billed

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        self.opts = opts = Options(self.name, options, self.options)
        if model != DEFAULT_MODEL and not _MODEL.match(model):
            raise ConfigError(
                f"backend {self.name!r}: {model!r} is not a model name (letters, digits and"
                f" ._:/@+-; {self.name}:{DEFAULT_MODEL} leaves the choice to the CLI)"
            )
        self.model = model
        self.bin = self._find_binary()
        self.cwd = opts.text("cwd")
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise ConfigError(f"backend {self.name!r}: cwd {self.cwd!r} is not a directory")
        self.guard = opts.guard((self.bin, model))
        self.priced = self.reports_cost or self.guard.price is not None  # see Backend
        # the environment's secrets read once, here, not at every call (see reins.backends.redact)
        self._redactor = Redactor()

    @classmethod
    def bin_env(cls) -> str:
        return f"REINS_{cls.name.upper().replace('-', '_')}_BIN"

    def _find_binary(self) -> str:
        env = self.bin_env()
        named = os.environ.get(env, "").strip()
        found = shutil.which(named or self.binary)
        if found is None:
            where = (
                f"{env}={named!r} is not an executable"
                if named
                else (f"{self.binary!r} is not on PATH; install it or set {env}")
            )
            raise ConfigError(f"backend {self.name!r}: {where}")
        return found

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, bin={self.bin!r})"

    @property
    def model_args(self) -> list[str]:
        return [] if self.model == DEFAULT_MODEL else ["--model", self.model]

    # -- what subclasses provide ---------------------------------------------------------

    def argv(self) -> list[str]:
        """Arguments after the binary; never any prompt text."""
        raise NotImplementedError

    def parse(self, stdout: str) -> Reply | str | None:
        """A reply, an error message the CLI reported, or None when stdout says nothing."""
        raise NotImplementedError

    # -- the call ------------------------------------------------------------------------

    def _error(self, message: str, stderr: str) -> BackendError:
        detail = self._redactor.tail(stderr, 1000)  # redacted before it is cut
        text = self._redactor(message) + (f"; stderr: {detail}" if detail else "")
        if _TRANSIENT.search(message) or _TRANSIENT.search(stderr):
            return TransientError(f"{self.name}: {text}", backend=self.name)
        return BackendError(f"{self.name}: {text}", backend=self.name)

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        """Run the CLI once (again on a transient failure), all within ``timeout`` seconds."""
        stdin = fold(prompt)
        data = stdin.encode()
        argv = [self.bin, *self.argv()]

        async def attempt(seconds: float) -> Reply:
            with temporary_folder("cli") as scratch:
                try:
                    done = await process.run(
                        argv, stdin=data, timeout=seconds, cwd=self.cwd or scratch
                    )
                except TimeoutError:
                    raise TransientTimeout(
                        f"{self.name}: no answer within {round(seconds, 2):g}s"
                        " (process tree killed)",
                        backend=self.name,
                    ) from None
                except process.OutputTooLarge as exc:
                    raise BackendError(f"{self.name}: {exc}", backend=self.name) from None
                except OSError as exc:
                    raise BackendError(
                        f"{self.name}: cannot run {self.bin}: {exc.strerror or exc}",
                        backend=self.name,
                        unreachable=True,  # no answer will come: the loop stops at once
                    ) from None
            parsed = self.parse(done.stdout)
            if isinstance(parsed, Reply) and done.returncode == 0:
                return parsed
            if isinstance(parsed, str):
                raise self._error(parsed, done.stderr)
            if done.returncode != 0:
                raise self._error(f"exit status {done.returncode}", done.stderr)
            raise self._error("no answer on stdout", done.stderr)

        return await self.guard.run(attempt, tokens=estimate_tokens(stdin), timeout=timeout)

    def reply(self, text: Any, **usage: Any) -> Reply | str:
        if not isinstance(text, str) or not text.strip():
            return "the reply holds no text"
        model = usage.get("model")
        cost = usage.get("cost")
        # the CLI's word for its model goes into the ledger: scrubbed like any error text
        served = self._redactor.clip(model, 300) if isinstance(model, str) and model.strip() else ""
        return Reply(
            text=text,
            model=served or self.model,
            input_tokens=_int(usage.get("input_tokens")),
            output_tokens=_int(usage.get("output_tokens")),
            cost=float(cost) if isinstance(cost, int | float) and cost >= 0 else None,
        )


class ClaudeCLI(CLIBackend):
    """Claude Code in print mode: ``claude:sonnet``, ``claude:default``."""

    name = "claude"
    binary = "claude"
    reports_cost = True  # total_cost_usd

    def argv(self) -> list[str]:
        return [
            "-p",
            "--output-format",
            "json",
            "--max-turns",
            "1",
            "--permission-mode",
            "dontAsk",
            "--tools",
            "",
            "--no-session-persistence",
            *self.model_args,
        ]

    def parse(self, stdout: str) -> Reply | str | None:
        data = _json_document(stdout)
        if isinstance(data, list):  # some versions print the whole message list
            results = [d for d in data if dig(d, "type") == "result"]
            data = results[-1] if results else None
        if not isinstance(data, dict):
            return None
        if data.get("is_error") or str(data.get("subtype", "success")) != "success":
            detail = data.get("result") if isinstance(data.get("result"), str) else ""
            return self._redactor.clip(
                f"{data.get('subtype') or 'error'}: {detail}".strip(": "), 500
            )
        usage = data.get("usage") or {}
        input_tokens = _int(dig(usage, "input_tokens"))
        if input_tokens is not None:
            for extra in ("cache_creation_input_tokens", "cache_read_input_tokens"):
                input_tokens += _int(dig(usage, extra)) or 0
        models = data.get("modelUsage")
        model = next(iter(models)) if isinstance(models, dict) and len(models) == 1 else None
        return self.reply(
            data.get("result"),
            model=model,
            input_tokens=input_tokens,
            output_tokens=dig(usage, "output_tokens"),
            cost=data.get("total_cost_usd"),
        )


class CodexCLI(CLIBackend):
    """OpenAI Codex ``exec``, read-only sandbox, prompt from stdin: ``codex:gpt-5-codex``."""

    name = "codex"
    binary = "codex"

    def argv(self) -> list[str]:
        return [
            "exec",
            "--ephemeral",
            "--sandbox",
            "read-only",
            *self.model_args,
            "--json",
            "--skip-git-repo-check",
            "--ignore-user-config",
            "--ignore-rules",
            "-",
        ]

    def parse(self, stdout: str) -> Reply | str | None:
        text = None
        usage: Any = None
        for event in _json_objects(stdout):
            kind = dig(event, "type")
            if kind == "error":
                return self._redactor.clip(str(dig(event, "message") or "error event"), 500)
            if kind == "turn.failed":
                return self._redactor.clip(
                    str(dig(event, "error", "message") or "turn failed"), 500
                )
            if kind == "item.completed":
                item = dig(event, "item") or {}
                if dig(item, "type") in ("agent_message", "assistant_message") or dig(
                    item, "item_type"
                ) in ("agent_message", "assistant_message"):
                    text = dig(item, "text")
            if kind == "turn.completed":
                usage = dig(event, "usage")
        if text is None:
            return None
        return self.reply(
            text,
            input_tokens=dig(usage, "input_tokens"),
            output_tokens=dig(usage, "output_tokens"),
        )


class GeminiCLI(CLIBackend):
    """Google's Gemini CLI, headless, plan (read-only) mode: ``gemini-cli:gemini-2.5-pro``."""

    name = "gemini-cli"
    binary = "gemini"

    def argv(self) -> list[str]:
        # `-p ""` selects headless mode; the CLI puts stdin before the (empty) -p text
        return ["-p", "", *self.model_args, "--output-format", "json", "--approval-mode", "plan"]

    def parse(self, stdout: str) -> Reply | str | None:
        data = _json_document(stdout)
        if not isinstance(data, dict):
            # a CLI build that ignores --output-format: the trimmed text is the answer
            text = stdout.strip()
            return self.reply(text) if text and not text.startswith("{") else None
        error = data.get("error")
        if error:
            message = dig(error, "message") if isinstance(error, dict) else error
            return self._redactor.clip(str(message or "error"), 500)
        input_tokens = output_tokens = None
        models = dig(data, "stats", "models")
        if isinstance(models, dict) and models:
            input_tokens = output_tokens = 0
            for stats in models.values():
                input_tokens += _int(dig(stats, "tokens", "prompt")) or 0
                output_tokens += _int(dig(stats, "tokens", "candidates")) or 0
                output_tokens += _int(dig(stats, "tokens", "thoughts")) or 0
        model = next(iter(models)) if isinstance(models, dict) and len(models) == 1 else None
        return self.reply(
            data.get("response"),
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )


class GrokCLI(CLIBackend):
    """xAI's Grok CLI, headless, no tools: ``grok:grok-code-fast-1``.

    Headless grok reads no prompt from stdin, only from ``--prompt-file``; reins names
    ``/dev/stdin`` there, so the prompt still arrives through the pipe.
    """

    name = "grok"
    binary = "grok"

    @property
    def model_args(self) -> list[str]:
        return [] if self.model == DEFAULT_MODEL else ["-m", self.model]

    def argv(self) -> list[str]:
        return [
            "--prompt-file",
            "/dev/stdin",
            "--output-format",
            "json",
            "--max-turns",
            "1",
            "--permission-mode",
            "dontAsk",
            "--tools",
            "",
            "--disable-web-search",
            "--no-subagents",
            "--no-memory",
            *self.model_args,
        ]

    def parse(self, stdout: str) -> Reply | str | None:
        data = _json_document(stdout)
        if not isinstance(data, dict):
            return None
        error = data.get("error")
        if error:
            message = dig(error, "message") if isinstance(error, dict) else error
            return self._redactor.clip(str(message or "error"), 500)
        stop = data.get("stopReason")
        if stop not in (None, "EndTurn", "end_turn"):
            return self._redactor.clip(f"stop reason {stop}", 500)
        usage = data.get("usage") or {}
        return self.reply(
            data.get("text"),
            input_tokens=dig(usage, "input_tokens"),
            output_tokens=dig(usage, "output_tokens"),
        )


if TYPE_CHECKING:  # each class is a factory, its instances backends
    from reins.backends.base import BackendFactory

    _factories: tuple[BackendFactory, ...] = (ClaudeCLI, CodexCLI, GeminiCLI, GrokCLI)
