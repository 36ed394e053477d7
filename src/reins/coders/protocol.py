"""The Agent protocol: what an adapter of a coding agent supplies, and what reins does for it.

An adapter (``cmd:``, and the adapters of real CLIs) says two things, and nothing more:

- how to start one run: :meth:`Agent.launch` turns a :class:`Session` (the prompt, the
  worktree, an empty HOME of the run's own) into a :class:`Launch` — the argument vector, the
  text for stdin, the variables to set, the names of the variables to pass through from reins'
  own environment (API keys) and the files to write below HOME first (a config file);
- how to read its output: :meth:`Agent.parser` gives a fresh :class:`Parser` per run, which
  turns each line of stdout, as it arrives, into events (:class:`Spent`: tokens and cost used
  since the last one; :class:`Abort`: the agent is stuck, kill it now; :class:`Done`: it has
  said its last word, so a CLI that then hangs instead of exiting is ended, not waited for),
  and the end of the run into an :class:`Ending` (the final message, or the error).

Everything else is done once, by :func:`reins.coders.runner.run_agent`, for every agent: stdin
closed after the prompt (never an argument), a clean environment, the working folder, the
idle-output watchdog and the wall-time limit, the budgets checked at every :class:`Spent`, the
kill of the whole process tree, the optional bubblewrap confinement. An adapter never sleeps,
never kills and never decides that an item is done: only the gate does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from reins.values import Prompt

__all__ = [
    "Abort",
    "Agent",
    "AgentFactory",
    "Done",
    "Ending",
    "Event",
    "Launch",
    "Parser",
    "Session",
    "Spent",
]


@dataclass(frozen=True, slots=True)
class Session:
    """One run of an agent, as reins hands it to :meth:`Agent.launch`.

    Args:
        prompt: what to do (system and user text, composed from the log like any prompt).
        cwd: the item's worktree, the agent's working folder (absolute).
        home: an empty folder of this run's own, its ``HOME`` (absolute); removed after it.
        sandbox: ``none``, or ``bwrap`` when the run is confined to ``cwd`` and ``home``
            (an adapter may then switch off the agent's own sandbox, or its git commits).
        seed: the turn's seed (an adapter may pass it on where its CLI takes one).
        timeout: seconds the whole run may take; reins enforces it, an adapter may tell its
            CLI too.
    """

    prompt: Prompt
    cwd: str
    home: str
    sandbox: str = "none"
    seed: int = 0
    timeout: float = 0.0


@dataclass(frozen=True, slots=True)
class Launch:
    """How to start one run of an agent.

    Args:
        argv: the program (absolute, or found on ``PATH``) and its arguments; never the prompt,
            which every local user could read in the process list.
        stdin: text written to the agent's stdin, which is then closed (the prompt, for most
            CLIs); None: stdin is ``/dev/null``. Either way the agent never waits on an open
            stdin.
        env: variables to set for the run, on top of the clean environment (``PATH``,
            ``HOME``, ``TMPDIR``, ``LANG``). Not for secrets.
        pass_env: names of variables copied from reins' own environment when they are set (an
            API key). Their values are never logged, recorded or put in an error.
        files: files to write below ``home`` before the run, relative path → text (a config).
        network: where the agent's model is (``host:port`` or ``host``, as its base URL or
            provider says): under reins' sandbox the agent reaches only these and the hosts
            the quest allows (``[workspace] network``), through reins' egress proxy.
    """

    argv: tuple[str, ...]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    pass_env: tuple[str, ...] = ()
    files: Mapping[str, str] = field(default_factory=dict)
    network: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Spent:
    """Usage the agent's own event stream reported: an increment while it runs (what a
    :class:`Parser` yields), or a run's totals (an :class:`Ending`'s ``usage``).

    ``input_tokens`` counts every prompt token the provider billed, cached or not;
    ``cache_read_tokens`` and ``cache_write_tokens`` are the part of them its prompt cache read
    and wrote (zero where the agent does not say).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Spent) -> Spent:
        cost = (
            None
            if self.cost is None and other.cost is None
            else (self.cost or 0.0) + (other.cost or 0.0)
        )
        return Spent(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            cost,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass(frozen=True, slots=True)
class Abort:
    """The agent is stuck in a way it will not end by itself (a CLI that waits forever for
    the network, say): reins kills it now, a generation error saying ``reason``."""

    reason: str


@dataclass(frozen=True, slots=True)
class Done:
    """The agent has said its last word (Claude Code's ``result`` line): the run is over, and
    reins ends the agent if it has not exited :attr:`~reins.backends.process.Watchdogs.linger`
    seconds later (CLIs have hung after their result). Not an error: the work is judged."""


Event = Spent | Abort | Done


@dataclass(frozen=True, slots=True)
class Ending:
    """How a run ended, as the adapter reads it.

    Args:
        message: the agent's final message (reins bounds it).
        error: why the run failed (the CLI said so, or its exit code): a generation error, no
            try used. None: it finished, and its work is judged.
        usage: the totals the agent reported at the end, if any. Each of tokens and cost
            recorded is the larger of these and what the run's events added up to, so an
            agent that under-reports cannot lower what reins metered.
        model: the model the agent says it used.
    """

    message: str
    error: str | None = None
    usage: Spent | None = None
    model: str | None = None


class Parser(Protocol):
    """Reads one run's output. A fresh one per run: it may keep state between lines."""

    def line(self, text: str) -> Iterable[Event]:
        """One line of stdout (without its newline), as it arrives: the events it reports."""
        ...

    def end(self, returncode: int, stderr: str) -> Ending:
        """The run is over (``returncode`` of its process, the tail of its stderr)."""
        ...


class Agent(Protocol):
    """A coding agent reins can run in a worktree: how to start it, how to read it."""

    name: str

    def launch(self, session: Session) -> Launch: ...

    def parser(self) -> Parser: ...


class AgentFactory(Protocol):
    """What a ``reins.coders`` entry point names: builds an agent from a model spec.

    ``reins loop --model cmd:./agent.py`` on a quest with a workspace calls the factory
    registered as ``cmd`` with ``model="./agent.py"``; ``options`` maps each allowed query key
    to a one-line help text, and unknown keys are refused before the factory is called.
    """

    options: dict[str, str]

    def __call__(self, model: str, options: dict[str, str]) -> Agent: ...
