"""``aider:MODEL``: aider, non-interactively, in the item's worktree.

The run is ``aider --model MODEL --message-file /dev/stdin --yes-always --no-auto-commits …``
with the prompt on stdin, then stdin closed: aider answers it once (its edits applied to the
files) and exits; reins commits what it changed. ``MODEL`` is aider's (litellm's) name:
``aider:openai/gpt-4.1``, ``aider:anthropic/claude-sonnet-4-5``. Its keys come from your
environment by name: ``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY`` and those ``?env=`` names.
``?base_url=`` is an OpenAI-compatible server (``--openai-api-base``, with its /v1).

Which files it may edit: those ``?files=`` names (paths in the worktree, comma-separated), and
any its model asks for (``--yes-always`` says yes). Its repository map is off by default
(``?map_tokens=0``): the map's cache is written into the worktree, and would be part of the
diff. Its history files go to the run's HOME, it adds nothing to ``.gitignore``, and it checks
for no update and sends no analytics; litellm reads its bundled price list, never the
network's. ``?price_in=`` / ``?price_out=`` give aider the model's price (a metadata file in
the run's HOME), so it prints the cost of each request.

aider has no machine-readable output: reins reads its plain stdout, where each model request
ends with ``Tokens: 900 sent, 60 received. Cost: $0.0010 message, …`` (metered as it comes, so
budgets can kill it in flight), and whose text, those lines left out, is the final message. A
litellm error it printed, with no request that succeeded, is a generation error quoting it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import ClassVar

from reins.coders import clis
from reins.coders.protocol import Ending, Event, Launch, Session, Spent
from reins.errors import ConfigError

NAMES = ("aider",)
INSTALL = "pip install aider-chat (in a virtual environment of its own)"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
MESSAGE_CAP = 16_000
QUIET = (
    "--yes-always",
    "--no-auto-commits",
    "--no-dirty-commits",
    "--no-gitignore",
    "--no-check-update",
    "--no-show-release-notes",
    "--analytics-disable",
    "--no-pretty",
    "--no-stream",
    "--no-fancy-input",
)
TOKENS = re.compile(r"^Tokens: (?P<parts>.+? received)\.(?: Cost: \$(?P<cost>[\d.]+) message)?")
COUNT = re.compile(r"([\d.]+)(k?) (sent|received|cache write|cache hit)")
FAILURE = re.compile(r"^(litellm\.\w*Error|\w*Error): ")


class AiderAgent:
    """aider (--message-file /dev/stdin, --yes-always) in the item's worktree."""

    name = "aider"
    options: ClassVar[dict[str, str]] = {
        "base_url": "an OpenAI-compatible server's URL, with its /v1 (--openai-api-base)",
        "bin": "the aider program (default: aider on PATH)",
        "files": "files of the worktree aider may edit from the start, comma-separated",
        "map_tokens": "tokens of aider's repository map (default 0: off; its cache is written "
        "into the worktree)",
        "edit_format": "aider's edit format (diff, whole, udiff, …; default: the model's)",
        "env": "more variables of your environment passed through, by name (comma-separated)",
        **clis.PRICE_OPTIONS,
    }

    def __init__(self, model: str, options: dict[str, str]) -> None:
        name = self.name
        self.model = model.strip()
        self.program = clis.program(name, NAMES, options.get("bin"), INSTALL)
        more = tuple(n.strip() for n in options.get("env", "").split(",") if n.strip())
        for variable in more:
            if not variable.isidentifier():
                raise ConfigError(f"agent {name}: env {variable!r} is not a variable name")
        self.pass_env = (*KEYS, *more)
        clis.require_key(name, self.pass_env, "the API key of the model's provider")
        self.base_url = clis.base_url(name, options["base_url"]) if "base_url" in options else None
        self.files = tuple(f.strip() for f in options.get("files", "").split(",") if f.strip())
        for path in self.files:
            if path.startswith(("/", "-")) or ".." in path.split("/"):
                raise ConfigError(f"agent {name}: files: {path!r} is not a path in the worktree")
        self.map_tokens = clis.whole(name, options, "map_tokens", 0)
        self.edit_format = options.get("edit_format")
        self.price = clis.price(name, options)

    @staticmethod
    def locate() -> str | None:
        return clis.locate(NAMES)

    def __repr__(self) -> str:
        return f"AiderAgent({self.model!r})"

    def launch(self, session: Session) -> Launch:
        home = session.home
        argv = [self.program, "--model", self.model, *QUIET]
        argv += ["--map-tokens", str(self.map_tokens), "--message-file", "/dev/stdin"]
        argv += ["--input-history-file", f"{home}/.aider/input.history"]
        argv += ["--chat-history-file", f"{home}/.aider/chat.history.md"]
        files: dict[str, str] = {".aider/.keep": ""}
        if self.base_url is not None:
            argv += ["--openai-api-base", self.base_url]
        if self.edit_format:
            argv += ["--edit-format", self.edit_format]
        if self.price is not None:
            meta = {
                self.model: {
                    "max_input_tokens": 1_000_000,
                    "max_output_tokens": 64_000,
                    "input_cost_per_token": self.price.input / 1e6,
                    "output_cost_per_token": self.price.output / 1e6,
                    "litellm_provider": self.model.split("/", 1)[0]
                    if "/" in self.model
                    else "openai",
                    "mode": "chat",
                }
            }
            files[".aider/models.json"] = json.dumps(meta)
            argv += ["--model-metadata-file", f"{home}/.aider/models.json"]
        argv += ["--", *self.files] if self.files else []
        prompt = session.prompt
        text = f"{prompt.system}\n\n{prompt.user}" if prompt.system else prompt.user
        # a wide "terminal": aider wraps what it prints at COLUMNS, final message included
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "10000"}
        where = (clis.reach(self.base_url),) if self.base_url else clis.provider_host(self.model)
        return Launch(argv=tuple(argv), stdin=text, env=env, pass_env=self.pass_env, files=files,
                      network=where)  # fmt: skip

    def parser(self) -> AiderParser:
        return AiderParser(self.name, self.model)


class AiderParser:
    """Reads aider's plain stdout: the token lines, the failures, the rest as the message."""

    def __init__(self, name: str, model: str) -> None:
        self.name, self.model = name, model
        self.kept: list[str] = []
        self.size = 0
        self.requests = 0
        self.failure: str | None = None

    def line(self, text: str) -> Iterable[Event]:
        found = TOKENS.match(text)
        if found is not None:
            self.requests += 1
            return [_spent(found.group("parts"), found.group("cost"))]
        if self.failure is None and FAILURE.match(text):
            self.failure = text.strip()[:500]
        self.kept.append(text)
        self.size += len(text) + 1
        while self.size > 2 * MESSAGE_CAP and len(self.kept) > 1:
            self.size -= len(self.kept.pop(0)) + 1
        return []

    def end(self, returncode: int, stderr: str) -> Ending:
        message = "\n".join(self.kept).strip()[-MESSAGE_CAP:]
        if returncode != 0:
            said = self.failure or clis.last_words(stderr)
            why = f": {said}" if said else ""
            return Ending(message, f"{self.name}: {clis.status(returncode)}{why}", None, self.model)
        if self.requests == 0 and self.failure is not None:
            return Ending(message, f"{self.name}: {self.failure}", None, self.model)
        return Ending(message, None, None, self.model)


def _spent(parts: str, cost: str | None) -> Spent:
    """``900 sent, 10 cache write, 2.0k cache hit, 60 received`` (and the cost) as a Spent."""
    counts = {"sent": 0, "received": 0, "cache write": 0, "cache hit": 0}
    for number, thousands, what in COUNT.findall(parts):
        counts[what] = round(float(number) * (1000 if thousands else 1))
    read, write = counts["cache hit"], counts["cache write"]
    return Spent(
        counts["sent"] + read + write,
        counts["received"],
        float(cost) if cost is not None else None,
        read,
        write,
    )
