"""What the adapters of real agent CLIs share: finding the program, the key, the options, prices.

- **The program**: ``?bin=PATH`` if given; else the first of its names on ``PATH``; else in
  ``node_modules/.bin`` of the folder reins runs in or of a folder above it (a project that
  pins the CLIs in its package.json, as reins' own tests do).
- **The key**: read from the user's environment by name and passed through by name only
  (:attr:`~reins.coders.protocol.Launch.pass_env`); checked before any run, so a missing key
  is one clear error, not one generation error per item.
- **Prices**: the tokens an agent's stream reports as it runs are priced so that ``--max-cost``
  can kill it before its own total arrives: at ``?price_in=`` / ``?price_out=`` (USD per million
  tokens; cache reads at a tenth of the input price and cache writes at 1.25 times it,
  Anthropic's list ratios and an upper bound for OpenAI's cached input) when given, else at the
  one price table, :mod:`reins.backends.prices`, which the text backends read too.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence

from reins.backends.prices import Price, lookup
from reins.coders.protocol import Spent
from reins.errors import ConfigError
from reins.sandbox.allow import of_url

CACHE_READ, CACHE_WRITE = 0.1, 1.25
"""A cache read's and a cache write's share of the input price set by ``?price_in``."""
PRICE_OPTIONS = {
    "price_in": "USD per million input tokens, to meter cost as the agent runs",
    "price_out": "USD per million output tokens, to meter cost as the agent runs",
}
CLAUDE_STUB = 1_000_000
"""Bytes under which Claude Code's ``bin/claude.exe`` is npm's placeholder, not the program
(its postinstall, which links the native binary there, did not run)."""


def node_bin(name: str, start: str | None = None) -> str | None:
    """``node_modules/.bin/NAME`` of ``start`` (default: the working folder) or a folder above."""
    folder = os.path.abspath(start or os.getcwd())
    while True:
        candidate = os.path.join(folder, "node_modules", ".bin", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def locate(names: Sequence[str]) -> str | None:
    """The program: the first of ``names`` on ``PATH``, else in a ``node_modules/.bin``."""
    for name in names:
        found = shutil.which(name)
        if found is not None:
            return _unstub(found)
    for name in names:
        found = node_bin(name)
        if found is not None:
            return _unstub(found)
    return None


def _unstub(path: str) -> str:
    """Claude Code's native binary where npm left only its placeholder (scripts blocked)."""
    real = os.path.realpath(path)
    if not real.endswith(os.path.join("claude-code", "bin", "claude.exe")):
        return path
    try:
        if os.path.getsize(real) >= CLAUDE_STUB:
            return path
    except OSError:
        return path
    scope = os.path.dirname(os.path.dirname(os.path.dirname(real)))  # node_modules/@anthropic-ai
    machine = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(os.uname().machine, "")
    native = os.path.join(scope, f"claude-code-linux-{machine}", "claude")
    return native if os.path.isfile(native) else path


def program(agent: str, names: Sequence[str], given: str | None, install: str) -> str:
    """The program to run: ``given`` (``?bin=``) or :func:`locate`'s.

    Raises:
        ConfigError: not found, saying how to install it.
    """
    if given:
        path = os.path.abspath(os.path.expanduser(given))
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            raise ConfigError(f"agent {agent}: bin {given!r} is not an executable file")
        return _unstub(path)
    found = locate(names)
    if found is None:
        raise ConfigError(
            f"agent {agent}: {names[0]!r} was not found on PATH nor in a node_modules/.bin: "
            f"install it ({install}), or give its path with ?bin=PATH"
        )
    return found


def require_key(agent: str, names: Sequence[str], what: str) -> None:
    """Refuse to start when none of the variables ``names`` is set (their values stay unread).

    Raises:
        ConfigError: none is set.
    """
    if not any(os.environ.get(name) for name in names):
        said = " or ".join(names)
        raise ConfigError(
            f"agent {agent}: {said} is not set: export {names[0]} ({what}); reins passes it to "
            "the agent by name and never records it"
        )


def base_url(agent: str, value: str) -> str:
    """A model server's URL, checked.

    Raises:
        ConfigError: not an http(s) URL.
    """
    url = value.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or any(c in url for c in "\"'\\ \n"):
        raise ConfigError(f"agent {agent}: base_url {value!r} is not an http:// or https:// URL")
    return url


PROVIDER_HOSTS = {
    "openai": "api.openai.com",
    "anthropic": "api.anthropic.com",
    "gemini": "generativelanguage.googleapis.com",
    "openrouter": "openrouter.ai",
    "deepseek": "api.deepseek.com",
    "groq": "api.groq.com",
    "mistral": "api.mistral.ai",
}
"""The API host of each provider a model name may start with (``openai/gpt-4.1``): what a
sandboxed agent of that model may reach without the quest naming it."""


def reach(url: str) -> str:
    """The ``host:port`` an agent at model server ``url`` must reach (a checked base URL)."""
    return str(of_url(url))


def provider_host(model: str) -> tuple[str, ...]:
    """The API host of a model's provider, as its name says (``anthropic/…``, ``claude-…``,
    ``gpt-…``), with HTTPS's port; () when the name does not say."""
    prefix = model.split("/", 1)[0] if "/" in model else None
    if prefix is None:
        prefix = "anthropic" if model.startswith("claude") else "openai"
    host = PROVIDER_HOSTS.get(prefix)
    return (f"{host}:443",) if host else ()


def whole(agent: str, options: Mapping[str, str], key: str, default: int) -> int:
    """A whole number option (0 or more).

    Raises:
        ConfigError: not one.
    """
    text = options.get(key)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"agent {agent}: {key} must be a whole number, 0 or more: {text!r}")
    return value


def priced(price: Price, spent: Spent) -> Spent:
    """``spent`` with its cost at ``price`` (cache reads and writes at their own rates)."""
    cost = price.cost(
        spent.input_tokens,
        spent.output_tokens,
        cache_read=spent.cache_read_tokens,
        cache_write=spent.cache_write_tokens,
    )
    return Spent(
        spent.input_tokens, spent.output_tokens, cost, spent.cache_read_tokens,
        spent.cache_write_tokens,
    )  # fmt: skip


def listed(provider: str, model: str) -> Price | None:
    """The price table's price of ``model`` at ``provider`` (:mod:`reins.backends.prices`)."""
    return lookup(provider, model)


def price(agent: str, options: Mapping[str, str]) -> Price | None:
    """The price ``?price_in=`` / ``?price_out=`` give, or None.

    Raises:
        ConfigError: a price that is not a number of 0 or more.
    """
    values = []
    for key in ("price_in", "price_out"):
        text = options.get(key)
        try:
            value = float(text) if text is not None else None
        except ValueError:
            value = -1.0
        if value is not None and not value >= 0:
            raise ConfigError(f"agent {agent}: {key} must be a number of USD, 0 or more: {text!r}")
        values.append(value)
    if values == [None, None]:
        return None
    given_in, given_out = values[0] or 0.0, values[1] or 0.0
    return Price(
        input=given_in, output=given_out, cache_read=given_in * CACHE_READ,
        cache_write=given_in * CACHE_WRITE, date="", note="rates set by ?price_in / ?price_out",
    )  # fmt: skip


def last_words(stderr: str, limit: int = 300) -> str:
    """The last non-empty line of ``stderr``, bounded: what a failed CLI said last."""
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    return said[-1][:limit] if said else ""


def status(returncode: int) -> str:
    return f"killed by signal {-returncode}" if returncode < 0 else f"exit code {returncode}"
