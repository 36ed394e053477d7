"""``codex:MODEL``: the Codex CLI (``codex exec``) with its tools on, in the item's worktree.

The run is ``codex exec --json --ephemeral -s workspace-write -`` with the prompt on stdin, then
stdin closed (Codex waits forever on an open one). Each run gets a ``CODEX_HOME`` of its own
below the run's HOME, holding the ``config.toml`` reins writes: ``MODEL``, one model provider
(``base_url``, default OpenAI's; ``wire_api = "responses"``; its key read from
``OPENAI_API_KEY`` or ``?key_env=``, by name: the key itself is never written), retries
bounded, the update check and analytics off (offline, analytics stalls on a DNS look-up).
Project config (``.codex/`` in the worktree) is not trusted, so its hooks do not run.

Sandbox: ``workspace-write`` is Codex's own (it lets the agent write its worktree and temporary
folder; ``.git`` stays read-only, so the agent cannot commit: reins commits its work). Under
``--sandbox bwrap``, or with ``?sandbox=bypass``, Codex runs with
``--dangerously-bypass-approvals-and-sandbox`` (inside bubblewrap, a second sandbox is not
needed and cannot nest).

What reins reads from the JSONL stream: ``item.completed`` of an ``agent_message`` (the final
message is the last one); ``turn.completed``'s ``usage`` (input, cached, output tokens: Codex
reports them once, when its turn ends, so a budget kill can only act then; priced at
``?price_in``/``?price_out`` when given, else at the price table's price of the model, else
recorded as tokens only: Codex reports no cost);
``turn.failed`` (a generation error quoting it); a top-level ``error`` line saying it is
reconnecting (the server is unreachable: Codex would retry forever, so it is killed at once).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any, ClassVar

from reins.backends.prices import Price
from reins.coders import clis
from reins.coders.protocol import Abort, Ending, Event, Launch, Session, Spent
from reins.errors import ConfigError

NAMES = ("codex",)
INSTALL = "npm install -g @openai/codex"
OPENAI = "https://api.openai.com/v1"
PROVIDER = "reins"


class CodexAgent:
    """The Codex CLI (codex exec --json) with its tools on, in the item's worktree."""

    name = "codex"
    options: ClassVar[dict[str, str]] = {
        "base_url": f"the model provider's URL, with its /v1 (default: {OPENAI})",
        "bin": "the codex program (default: codex on PATH, else node_modules/.bin/codex)",
        "key_env": "the variable holding the provider's API key (default: OPENAI_API_KEY)",
        "sandbox": "workspace-write (default: Codex's own sandbox) or bypass (none of its own)",
        "retries": "retries of a failed request or stream (default 2)",
        "stream_idle": "seconds a started reply may stall before Codex fails the turn",
        **clis.PRICE_OPTIONS,
    }

    def __init__(self, model: str, options: dict[str, str]) -> None:
        name = self.name
        self.model = model.strip()
        self.program = clis.program(name, NAMES, options.get("bin"), INSTALL)
        self.key_env = options.get("key_env", "OPENAI_API_KEY")
        if not self.key_env.isidentifier():
            raise ConfigError(f"agent {name}: key_env {self.key_env!r} is not a variable name")
        clis.require_key(name, (self.key_env,), "the provider's API key")
        self.base_url = clis.base_url(name, options.get("base_url", OPENAI))
        self.sandbox = options.get("sandbox", "workspace-write")
        if self.sandbox not in ("workspace-write", "bypass"):
            raise ConfigError(f"agent {name}: sandbox must be workspace-write or bypass, not "
                              f"{self.sandbox!r}")  # fmt: skip
        self.retries = clis.whole(name, options, "retries", 2)
        self.stream_idle = clis.whole(name, options, "stream_idle", 0)
        self.price = clis.price(name, options)

    @staticmethod
    def locate() -> str | None:
        return clis.locate(NAMES)

    def __repr__(self) -> str:
        return f"CodexAgent({self.model!r})"

    def config(self) -> str:
        """The run's ``config.toml`` (JSON strings are TOML basic strings)."""
        provider = [
            f"[model_providers.{PROVIDER}]",
            f'name = "{PROVIDER}"',
            f"base_url = {json.dumps(self.base_url)}",
            'wire_api = "responses"',
            f"env_key = {json.dumps(self.key_env)}",
            f"request_max_retries = {self.retries}",
            f"stream_max_retries = {self.retries}",
        ]
        if self.stream_idle:
            provider.append(f"stream_idle_timeout_ms = {self.stream_idle * 1000}")
        lines = [
            f"model = {json.dumps(self.model)}",
            f'model_provider = "{PROVIDER}"',
            "check_for_update_on_startup = false",
            "",
            *provider,
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[features]",
            "plugins = false",
        ]
        return "\n".join(lines) + "\n"

    def launch(self, session: Session) -> Launch:
        argv = [self.program, "exec", "--json", "--ephemeral", "--color", "never"]
        if self.sandbox == "bypass" or session.sandbox == "bwrap":
            argv.append("--dangerously-bypass-approvals-and-sandbox")
        else:
            argv += ["-s", "workspace-write"]
        argv.append("-")  # the prompt: from stdin
        prompt = session.prompt
        text = f"{prompt.system}\n\n{prompt.user}" if prompt.system else prompt.user
        return Launch(
            argv=tuple(argv),
            stdin=text,
            env={"CODEX_HOME": os.path.join(session.home, ".codex")},
            pass_env=(self.key_env,),
            files={".codex/config.toml": self.config()},
            network=(clis.reach(self.base_url),),
        )

    def parser(self) -> CodexParser:
        return CodexParser(self.name, self.model, self.price)


class CodexParser:
    """Reads one run's JSONL events."""

    def __init__(self, name: str, model: str, price: Price | None) -> None:
        self.name, self.model, self.price = name, model, price
        self.message = ""
        self.usage: Spent | None = None
        self.failed: str | None = None
        self.errors: list[str] = []

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
        if kind == "item.completed" and isinstance(data.get("item"), dict):
            item = data["item"]
            if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                self.message = item["text"]
        elif kind == "turn.completed" and isinstance(data.get("usage"), dict):
            spent = _spent(data["usage"])
            price = self.price or clis.listed("openai", self.model)
            if price is not None:
                spent = clis.priced(price, spent)
            self.usage = spent if self.usage is None else self.usage + spent
            return [spent]
        elif kind == "turn.failed":
            self.failed = _said(data.get("error")) or "the turn failed"
        elif kind == "error":
            said = _said(data) or "an error"
            if said.startswith("Reconnecting"):
                return [Abort(f"the model server is unreachable ({said[:200]})")]
            self.errors.append(said)
        return []

    def end(self, returncode: int, stderr: str) -> Ending:
        if self.failed is not None:
            return Ending(self.message, f"{self.name}: {self.failed[:500]}", self.usage, self.model)
        if returncode != 0:
            said = self.errors[-1] if self.errors else clis.last_words(stderr)
            why = f": {said[:300]}" if said else ""
            error = f"{self.name}: {clis.status(returncode)}{why}"
            return Ending(self.message, error, self.usage, self.model)
        return Ending(self.message, None, self.usage, self.model)


def _said(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return ""


def _spent(usage: dict[str, Any]) -> Spent:
    """Codex's turn usage (input tokens inclusive of the cached ones) as a :class:`Spent`."""

    def count(key: str) -> int:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    return Spent(
        count("input_tokens"),
        count("output_tokens"),
        None,
        count("cached_input_tokens"),
        count("cache_write_input_tokens"),
    )
