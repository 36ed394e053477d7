"""``claude-code:MODEL``: Claude Code (``claude -p``) with its tools on, in the item's worktree.

The run is ``claude -p --output-format stream-json --verbose --permission-mode …`` with the
prompt (the system text, a blank line, the user text) on stdin, then stdin closed; ``MODEL`` goes
to ``--model`` (``claude-code:sonnet``; ``claude-code:default`` leaves the CLI's own). Its
environment is reins' clean one plus ``ANTHROPIC_API_KEY`` or ``CLAUDE_CODE_OAUTH_TOKEN`` (by
name, from yours; a login kept in your own HOME is not seen, since each run has its own HOME),
the telemetry, auto-update and error-report switches off, its retries bounded and its
temporary files below the run's HOME.

Permissions: ``?permissions=bypass`` (the default) lets every tool run without asking, which is
what a run nobody watches needs (as root, Claude Code refuses it unless ``IS_SANDBOX=1``, which
reins then sets: run it under ``--sandbox bwrap`` or in a VM); ``?permissions=edits`` allows
file edits and only the Bash commands ``?allow=`` lists (default: git, python, pytest).

What reins reads from the stream, line by line as it comes: each ``assistant`` line's
``message.usage`` (input and cache tokens when the model's turn starts), metered once per
message so ``--max-tokens`` and ``--max-cost`` can kill the agent in flight (cost priced at
``?price_in``/``?price_out``, else at the price table's list price for the model: an estimate
until the end); the ``result`` line: the final message, ``is_error`` / ``api_error_status`` (a
generation error quoting the CLI), ``usage`` and ``total_cost_usd`` (the CLI's own totals; the
larger of them and what reins metered is recorded). The result line is the run's end: a CLI
that hangs after it is ended, and its work judged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any, ClassVar

from reins.backends.prices import Price
from reins.coders import clis
from reins.coders.protocol import Done, Ending, Event, Launch, Session, Spent
from reins.errors import ConfigError

NAMES = ("claude",)
INSTALL = "npm install -g @anthropic-ai/claude-code"
KEYS = ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN")
ALLOW = ("Bash(git *)", "Bash(python *)", "Bash(python3 *)", "Bash(pytest *)")
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}
# The model the table prices a run at when the name it reports is not in the table (an alias,
# a model newer than the table): the CLI's default, an estimate until the CLI's own total.
DEFAULT_MODEL = "claude-opus-4-5"
ANTHROPIC = "api.anthropic.com"
"""Where Claude Code's model is unless ``?base_url`` says otherwise."""


def list_price(model: str) -> Price:
    """The price table's price of ``model`` at Anthropic, else of :data:`DEFAULT_MODEL`."""
    found = clis.listed("anthropic", model) or clis.listed("anthropic", DEFAULT_MODEL)
    assert found is not None, f"the price table lists {DEFAULT_MODEL}"
    return found


class ClaudeCodeAgent:
    """Claude Code (claude -p, stream-json) with its tools on, in the item's worktree."""

    name = "claude-code"
    options: ClassVar[dict[str, str]] = {
        "base_url": "the Anthropic API's URL, given to the CLI as ANTHROPIC_BASE_URL",
        "bin": "the claude program (default: claude on PATH, else node_modules/.bin/claude)",
        "permissions": "bypass (default: every tool, no prompt) or edits (edits and ?allow)",
        "allow": "with permissions=edits: the tools allowed, comma-separated (Bash(git *),…)",
        "max_turns": "the model turns a run may take (claude --max-turns)",
        "retries": "retries of a failed API request (CLAUDE_CODE_MAX_RETRIES; default 2)",
        **clis.PRICE_OPTIONS,
    }

    def __init__(self, model: str, options: dict[str, str]) -> None:
        name = self.name
        self.model = model.strip()
        self.program = clis.program(name, NAMES, options.get("bin"), INSTALL)
        clis.require_key(name, KEYS, "an Anthropic API key, or a token of `claude setup-token`")
        self.base_url = clis.base_url(name, options["base_url"]) if "base_url" in options else None
        self.permissions = options.get("permissions", "bypass")
        if self.permissions not in ("bypass", "edits"):
            raise ConfigError(f"agent {name}: permissions must be bypass or edits, not "
                              f"{self.permissions!r}")  # fmt: skip
        allow = options.get("allow")
        self.allow = tuple(a.strip() for a in allow.split(",") if a.strip()) if allow else ALLOW
        self.max_turns = clis.whole(name, options, "max_turns", 0)
        self.retries = clis.whole(name, options, "retries", 2)
        self.price = clis.price(name, options)

    @staticmethod
    def locate() -> str | None:
        return clis.locate(NAMES)

    def __repr__(self) -> str:
        return f"ClaudeCodeAgent({self.model!r})"

    def launch(self, session: Session) -> Launch:
        argv = [self.program, "-p", "--output-format", "stream-json", "--verbose"]
        if self.model != "default":
            argv += ["--model", self.model]
        if self.max_turns:
            argv += ["--max-turns", str(self.max_turns)]
        env = {
            **QUIET,
            "CLAUDE_CODE_MAX_RETRIES": str(self.retries),
            "CLAUDE_CODE_TMPDIR": os.path.join(session.home, "tmp"),
        }
        if self.base_url is not None:
            env["ANTHROPIC_BASE_URL"] = self.base_url
        if self.permissions == "bypass":
            argv += ["--permission-mode", "bypassPermissions"]
            if os.geteuid() == 0:
                env["IS_SANDBOX"] = "1"  # else Claude Code refuses bypass as root
        else:
            argv += ["--permission-mode", "acceptEdits", "--allowedTools", *self.allow]
        prompt = session.prompt
        text = f"{prompt.system}\n\n{prompt.user}" if prompt.system else prompt.user
        where = clis.reach(self.base_url) if self.base_url else f"{ANTHROPIC}:443"
        return Launch(argv=tuple(argv), stdin=text, env=env, pass_env=KEYS, network=(where,))

    def parser(self) -> ClaudeParser:
        return ClaudeParser(self.name, self.model, self.price)


class ClaudeParser:
    """Reads one run's stream-json: usage per message as it comes, then the result line."""

    def __init__(self, name: str, model: str, price: Price | None) -> None:
        self.name, self.model, self.price = name, model, price
        self.metered: dict[str, Spent] = {}  # message id → its usage metered so far
        self.result: dict[str, Any] | None = None
        self.said = ""  # the last assistant text, if the result line never comes

    def line(self, text: str) -> Iterable[Event]:
        if not text.startswith("{"):
            return []
        try:
            data = json.loads(text)
        except ValueError:
            return []
        if not isinstance(data, dict):
            return []
        kind = data.get("type")
        if kind == "system" and data.get("subtype") == "init":
            if isinstance(data.get("model"), str):
                self.model = data["model"]
            return []
        if kind == "assistant" and isinstance(data.get("message"), dict):
            return self._assistant(data["message"])
        if kind == "result":
            self.result = data
            return [Done()]
        return []

    def _assistant(self, message: dict[str, Any]) -> list[Event]:
        for block in message.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "text":
                self.said = str(block.get("text", ""))
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return []
        now = _spent(usage)
        key = str(message.get("id", ""))
        before = self.metered.get(key, Spent())
        more = Spent(
            max(now.input_tokens - before.input_tokens, 0),
            max(now.output_tokens - before.output_tokens, 0),
            None,
            max(now.cache_read_tokens - before.cache_read_tokens, 0),
            max(now.cache_write_tokens - before.cache_write_tokens, 0),
        )
        self.metered[key] = Spent(
            max(now.input_tokens, before.input_tokens),
            max(now.output_tokens, before.output_tokens),
            None,
            max(now.cache_read_tokens, before.cache_read_tokens),
            max(now.cache_write_tokens, before.cache_write_tokens),
        )
        if not more.tokens:
            return []
        price = self.price or list_price(str(message.get("model") or self.model))
        return [clis.priced(price, more)]

    def end(self, returncode: int, stderr: str) -> Ending:
        result = self.result
        if result is None:
            said = clis.last_words(stderr)
            why = f": {said}" if said else ""
            if returncode == 0:
                return Ending(self.said, f"{self.name}: it ended without its result line{why}")
            return Ending(self.said, f"{self.name}: {clis.status(returncode)}{why}")
        message = str(result.get("result") or "")
        usage = _spent(result["usage"]) if isinstance(result.get("usage"), dict) else None
        cost = result.get("total_cost_usd")
        if usage is not None and isinstance(cost, int | float) and cost >= 0:
            usage = Spent(usage.input_tokens, usage.output_tokens, float(cost),
                          usage.cache_read_tokens, usage.cache_write_tokens)  # fmt: skip
        if result.get("is_error"):
            status = result.get("api_error_status")
            said = message or str(result.get("subtype") or "an error")
            http = f" (the API answered {status})" if status else ""
            return Ending("", f"{self.name}: {said[:500]}{http}", usage, self.model)
        return Ending(message, None, usage, self.model)


def _spent(usage: dict[str, Any]) -> Spent:
    """Anthropic's usage (input tokens exclusive of the cache's) as a :class:`Spent`."""

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    read, write = count("cache_read_input_tokens"), count("cache_creation_input_tokens")
    return Spent(count("input_tokens") + read + write, count("output_tokens"), None, read, write)
