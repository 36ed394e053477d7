"""The generator of a loop run: what makes a turn's answer, chosen in the library.

A quest's answers come from a text backend (:class:`~reins.backends.base.Backend`: a prompt in,
a completion out) or, for a quest with a ``[workspace]``, from a coding agent
(:class:`~reins.coders.protocol.Agent`) run in the item's own repository. Which one a model spec
names is the quest's to say, and :func:`choose_generator` says it for every caller alike (the
CLI, ``report --retry-compare``, the benchmarks, a program; replay generates nothing): the same
spec, ``codex:…``, is the single-shot backend on a text quest and the Codex agent on a coding
one.

The engine sees one protocol, :class:`Generator`: a name, whether it works in a repository, and
:meth:`Generator.make`, given what the run lends it (:class:`Bench`). Each kind wraps its own
object with its own type: no union and no cast between them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from reins.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from reins.backends.base import Backend
    from reins.coders.protocol import Agent
    from reins.loop.agentturn import AgentTurn
    from reins.loop.generate import GenerationError
    from reins.loop.inflight import InFlight
    from reins.loop.workshop import Workshop
    from reins.quest import Quest
    from reins.store.model import Attempt, Item
    from reins.store.protocol import Store
    from reins.values import Completion, Prompt

NEEDS_WORKSPACE = "it works in a git repository, so it needs a quest with a [workspace]"


class Site(Protocol):
    """Where a run's turns are made, told of the run's start, stops, locks and end: the
    workshop of a quest with a workspace, or :class:`TextSite`, which has nothing to do."""

    def gate_threads(self, concurrency: int) -> int:
        """How many threads the gate gets."""
        ...

    def slots(self, concurrency: int) -> int:
        """How many slots work items for ``concurrency`` generations at once."""
        ...

    def open(self, store: Store) -> list[str]:
        """Set up (on the ledger thread); the notes to show."""
        ...

    def stop(self, reason: str) -> None: ...

    def locked(self, item: Item, attempt: Attempt | None, say: Callable[[str], None]) -> None:
        """An item locked (its result is landed off the turn's path)."""
        ...

    def close(self) -> None: ...


class TextSite:
    """A text quest's site: generations need nothing set up or put away."""

    def gate_threads(self, concurrency: int) -> int:
        return min(4, concurrency)  # gates may be slow: judged off the event loop

    def slots(self, concurrency: int) -> int:
        return concurrency

    def open(self, store: Store) -> list[str]:
        return []

    def stop(self, reason: str) -> None:
        pass

    def locked(self, item: Item, attempt: Attempt | None, say: Callable[[str], None]) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass(frozen=True, slots=True)
class Bench:
    """What a run lends its generators: the calls in flight (and the hard stop that drops
    them), the timeout of a text call, and, on a quest with a workspace, the workshop."""

    inflight: InFlight
    timeout: float
    workshop: Workshop | None = None


class Generator(Protocol):
    """What a loop run asks for each turn's answer."""

    @property
    def name(self) -> str:
        """The name recorded with the turn (the backend's or the agent's)."""
        ...

    @property
    def workspace(self) -> bool:
        """Whether it works in a repository (so needs a quest with a ``[workspace]``)."""
        ...

    async def make(
        self, bench: Bench, item: Item, log: Sequence[Attempt], prompt: Prompt
    ) -> Completion | GenerationError | AgentTurn | None:
        """This turn's answer, or None when a hard stop dropped it (not a turn)."""
        ...


@dataclass(frozen=True, slots=True)
class TextGenerator:
    """A text backend's completion of the turn's prompt."""

    backend: Backend

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def workspace(self) -> bool:
        return False

    async def make(
        self, bench: Bench, item: Item, log: Sequence[Attempt], prompt: Prompt
    ) -> Completion | GenerationError | None:
        return await bench.inflight.generate(self.backend, prompt, timeout=bench.timeout)


@dataclass(frozen=True, slots=True)
class AgentGenerator:
    """A coding agent's run in the item's workspace, its change taken by reins."""

    agent: Agent

    @property
    def name(self) -> str:
        return self.agent.name

    @property
    def workspace(self) -> bool:
        return True

    async def make(
        self, bench: Bench, item: Item, log: Sequence[Attempt], prompt: Prompt
    ) -> AgentTurn | None:
        if bench.workshop is None:
            raise ConfigError(f"{self.name!r} is a coding agent: {NEEDS_WORKSPACE}")
        if bench.inflight.hard_stopped:
            return None
        return await bench.workshop.turn(item, log, self.agent, prompt)


def choose_generator(spec: str, quest: Quest) -> Generator:
    """The generator ``spec`` names for ``quest``: a coding agent (:data:`reins.coders.registry
    .CODERS`) for a quest with a ``[workspace]``, else a text backend (:func:`text_backend`).

    Raises:
        ConfigError: a malformed spec, an unknown option, a value the generator refuses, or a
            coding agent named for a text quest (the message says why it cannot run there).
        NotFound: a name the quest's registry does not know (the other one's says so).
    """
    if quest.workspace is not None:
        from reins.coders.registry import resolve_agent

        return AgentGenerator(resolve_agent(spec))
    return TextGenerator(text_backend(spec))


def text_backend(spec: str) -> Backend:
    """The text backend ``spec`` names (:data:`reins.backends.registry.BACKENDS`): what a text
    quest's turns and every batch round are sent to.

    Raises:
        ConfigError: as :func:`choose_generator`; a coding agent's name says it needs a quest
            with a ``[workspace]``.
        NotFound: an unknown backend.
    """
    from reins.backends.registry import parse_spec, resolve
    from reins.coders.registry import not_an_agent

    parsed = parse_spec(spec)
    reason = not_an_agent(parsed.backend)
    if reason is not None:
        raise ConfigError(reason)
    return resolve(parsed)


def samples_as_told(generator: Generator, policy: str, *, batch: bool = False) -> None:
    """Refuse a retry policy that declares a temperature (``facts@0.8``) when the generator
    cannot sample at one per call (a CLI backend, a coding agent; a batch round, which does not
    record it): the declared temperature would be recorded and not used.

    Raises:
        ConfigError: naming the policy and the generator.
    """
    from reins.retry import parse_retry

    if not parse_retry(policy).temperatures:
        return
    backend = generator.backend if isinstance(generator, TextGenerator) else None
    if batch or backend is None or getattr(backend, "takes_temperature", False) is not True:
        where = "a batch round" if batch else repr(generator.name)
        raise ConfigError(
            f"retry policy {policy!r} declares a temperature, which {where} cannot take per "
            "call (the local and HTTP backends can, one call at a time): drop the @TEMPERATURE"
        )


def suits(generator: Generator, quest: Quest) -> None:
    """Refuse a generator that cannot work ``quest``: an agent on a text quest, a text
    backend on a quest whose items live in a repository.

    Raises:
        ConfigError: saying what the quest needs.
    """
    if generator.workspace and quest.workspace is None:
        raise ConfigError(f"{generator.name!r} is a coding agent: {NEEDS_WORKSPACE}")
    if not generator.workspace and quest.workspace is not None:
        raise ConfigError(
            f"quest {quest.name} has a [workspace]: it needs a coding agent (cmd:, "
            f"claude-code:, codex:, aider:), and {generator.name!r} is a text backend "
            "(see `reins backends`)"
        )
