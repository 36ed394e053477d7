"""Model specs, the entry-point registry, and the ``reins backends`` command."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reins.backends import registry
from reins.backends.base import Completion
from reins.backends.registry import Spec, parse_spec
from reins.errors import ConfigError, NotFound
from reins.values import Prompt
from tests.kit import Cli

BUILT_IN = {
    "anthropic": "reins.backends.anthropic:AnthropicBackend",
    "claude": "reins.backends.cli:ClaudeCLI",
    "codex": "reins.backends.cli:CodexCLI",
    "gemini": "reins.backends.gemini:GeminiBackend",
    "gemini-cli": "reins.backends.cli:GeminiCLI",
    "grok": "reins.backends.cli:GrokCLI",
    "ollama": "reins.backends.ollama:OllamaBackend",
    "openai": "reins.backends.openai:OpenAIBackend",
}


class Echo:
    """A minimal factory-and-backend, as a plugin author would write one."""

    options = {"prefix": "text put before the answer"}  # noqa: RUF012

    def __init__(self, model: str, options: dict[str, str]) -> None:
        self.name = "echo"
        self.model = model
        self.prefix = options.get("prefix", "")

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        return Completion(self.prefix + prompt.user, self.model)


@pytest.fixture
def echo() -> Iterator[None]:
    registry.register("echo", Echo)
    yield
    registry.unregister("echo")


# -- parsing -------------------------------------------------------------------------------


def test_the_model_may_contain_colons_and_values_are_percent_decoded() -> None:
    spec = parse_spec("ollama:qwen2.5:0.5b?temperature=0.2&stop=a%26b%3Dc&base_url=http://h:1/v1")
    assert spec == Spec(
        "ollama",
        "qwen2.5:0.5b",
        {"temperature": "0.2", "stop": "a&b=c", "base_url": "http://h:1/v1"},
    )
    assert parse_spec("local:/models/my%20model.gguf").model == "/models/my model.gguf"
    assert parse_spec("x:m?a=1+2").options == {"a": "1+2"}  # a plus is a plus
    assert parse_spec("x:m?").options == {} and parse_spec("x:m?k=").options == {"k": ""}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "llama3",
            r"names no backend: write backend:model, e.g. ollama:llama3 \(backends: .*ollama",
        ),
        (":llama3", "names no backend before the ':'"),
        ("ollama:", r"names no model: write ollama:MODEL"),
        ("ollama:  ?a=1", "names no model"),
        ("Ollama:x", "'Ollama' is not a backend name"),
        ("ollama:x?temperature", "bad option 'temperature'; write key=value pairs"),
        ("ollama:x?a=1&&b=2", "bad option ''"),
        ("ollama:x?=1", "bad option '=1'"),
        ("ollama:x?a=1&a=2", "option 'a' is given twice"),
    ],
)
def test_malformed_specs_are_refused_with_a_hint(spec: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_spec(spec)


_keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


@given(
    backend=st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True),
    model=_text.filter(lambda m: m.strip() != ""),
    options=st.dictionaries(_keys, _text, max_size=4),
)
def test_a_spec_survives_its_own_string_form(
    backend: str, model: str, options: dict[str, str]
) -> None:
    spec = Spec(backend, model, options)
    assert parse_spec(str(spec)) == spec


# -- lookup ----------------------------------------------------------------------------------


def test_built_ins_are_registered_through_the_entry_point_group() -> None:
    names = registry.names()
    assert set(BUILT_IN) <= set(names) and names == sorted(names)
    for name, target in BUILT_IN.items():
        assert registry.BACKENDS.target(name) == target
        factory = registry.factory(name)
        assert isinstance(factory.options, dict) and factory.options
        assert all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in factory.options.items()
        )
    assert set(BUILT_IN) <= set(registry.known())


def test_an_unknown_backend_lists_the_known_ones() -> None:
    with pytest.raises(NotFound) as info:
        registry.resolve("olama:llama3")
    known = ", ".join(registry.names())
    assert str(info.value) == f"No backend named 'olama'. Known: {known}."


def test_an_unknown_option_lists_the_allowed_ones() -> None:
    with pytest.raises(ConfigError) as info:
        registry.resolve("ollama:llama3?temprature=0.2")
    allowed = ", ".join(sorted(registry.factory("ollama").options))
    assert str(info.value).startswith(
        f"backend 'ollama' has no option 'temprature'. Allowed: {allowed}."
    )


def test_a_registered_factory_gets_the_model_and_decoded_options(echo: None) -> None:
    import asyncio

    backend = registry.resolve("echo:tiny:1?prefix=%3E%20")
    assert isinstance(backend, Echo) and backend.model == "tiny:1"
    done = asyncio.run(backend.complete(Prompt("", "hi"), seed=0, timeout=1))
    assert done.text == "> hi"
    assert "echo" in registry.names() and registry.BACKENDS.target("echo") == f"{__name__}:Echo"
    with pytest.raises(ConfigError, match="Allowed: prefix"):
        registry.resolve("echo:m?nope=1")


@pytest.mark.slow  # a fresh interpreter
def test_resolving_a_backend_imports_no_http_client() -> None:
    code = (
        "import sys, reins.backends.registry as r\n"
        "for s in ('ollama:m', 'openai:m?base_url=http://127.0.0.1:9'): r.resolve(s)\n"
        "print('httpx' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the command -----------------------------------------------------------------------------


def test_reins_backends_lists_each_backend_and_its_options(cli: Cli) -> None:
    out = cli("backends", quest=None)
    assert out.exit_code == 0
    assert "ollama  (reins.backends.ollama:OllamaBackend)" in out.stdout
    assert "  ?num_ctx" in out.stdout and "  ?key_env" in out.stdout
    assert "Anthropic Messages: anthropic:claude" in out.stdout  # rst markup stripped


def test_reins_backends_json_is_for_programs(cli: Cli) -> None:
    rows = json.loads(cli("backends", "--json", quest=None).stdout)
    by_name = {r["name"]: r for r in rows}
    assert set(BUILT_IN) <= set(by_name)
    ollama = by_name["ollama"]
    assert ollama["target"] == BUILT_IN["ollama"] and ollama["error"] is None
    assert "think" in ollama["options"] and ollama["summary"]
    only = json.loads(cli("backends", "openai", "claude", "--json", quest=None).stdout)
    assert [r["name"] for r in only] == ["claude", "openai"]


def test_reins_backends_with_an_unknown_name_exits_2(cli: Cli) -> None:
    out = cli("backends", "olama", quest=None)
    assert out.exit_code == 2
    assert "error: No backend named 'olama'. Known: " in out.stderr
