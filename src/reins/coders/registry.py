"""The agent registry: model specs whose backend names a coding agent (``cmd:./fix.py``).

Agents are found through the ``reins.agents`` entry-point group, read lazily and once, like the
text backends of ``reins.backends`` (built-ins registered there the same way as plugins). A
spec is written as for a backend, ``name:model?key=value&…``.

Which registry answers is the quest's to say: a quest with a ``[workspace]`` runs an agent in a
worktree per item, so ``reins loop --model codex:…`` on it means the Codex agent; a quest
without one asks the text backends, where ``codex:…`` is the single-shot, tools-off backend. A
name only one registry knows is refused by the other with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from reins.backends import registry as backends
from reins.errors import ConfigError, NotFound

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from reins.coders.protocol import Agent, AgentFactory

ENTRY_POINT_GROUP = "reins.agents"

_entry_points: dict[str, EntryPoint] | None = None
_factories: dict[str, AgentFactory] = {}
_registered: dict[str, AgentFactory] = {}


def _group() -> dict[str, EntryPoint]:
    global _entry_points
    if _entry_points is None:
        from importlib.metadata import entry_points

        _entry_points = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
    return _entry_points


def names() -> list[str]:
    """Every registered agent's name, sorted, without importing any of them."""
    return sorted({*_group(), *_registered})


def factory(name: str) -> AgentFactory:
    """The factory registered as agent ``name``, loaded on first use.

    Raises:
        NotFound: no agent has that name (the message says when a text backend has it).
        ConfigError: the entry point cannot be imported or does not name a factory.
    """
    if name in _registered:
        return _registered[name]
    if name in _factories:
        return _factories[name]
    ep = _group().get(name)
    known = ", ".join(names()) or "none installed"
    if ep is None:
        if name in backends.names():
            raise NotFound(
                f"{name!r} is a text backend (single-shot, no tools); a quest with a "
                f"[workspace] runs a coding agent in each item's worktree. Known agents: {known}."
            )
        raise NotFound(f"No agent named {name!r}. Known agents: {known}.")
    try:
        obj: Any = ep.load()
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"agent {name!r} ({ep.value}) cannot be loaded: {exc}") from exc
    if not callable(obj) or not isinstance(getattr(obj, "options", None), dict):
        raise ConfigError(
            f"agent {name!r} ({ep.value}) is not an agent factory: it needs to be callable as "
            "(model, options) with an `options` dict"
        )
    loaded = cast("AgentFactory", obj)
    _factories[name] = loaded
    return loaded


def target(name: str) -> str | None:
    """Where the entry point named ``name`` points (``module:attr``), or None if not one."""
    if name in _registered:
        obj = _registered[name]
        return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', repr(obj))}"
    ep = _group().get(name)
    return ep.value if ep is not None else None


def register(name: str, agent_factory: AgentFactory) -> None:
    """Register an agent factory under ``name`` in this process (tests, programs)."""
    if not backends._NAME.match(name):
        raise ConfigError(f"{name!r} is not an agent name")
    _registered[name] = agent_factory


def unregister(name: str) -> None:
    """Forget a factory added with :func:`register`."""
    _registered.pop(name, None)


def resolve_agent(spec: str | backends.Spec) -> Agent:
    """Build the agent a model spec names.

    Raises:
        ConfigError: a malformed spec, an unknown option, or a value the agent refuses.
        NotFound: an unknown agent (a text backend's name says so).
    """
    parsed = backends.parse_spec(spec) if isinstance(spec, str) else spec
    agent_factory = factory(parsed.backend)
    backends.check_options(parsed.backend, agent_factory.options, parsed.options)
    return agent_factory(parsed.model, dict(parsed.options))


def not_an_agent(name: str) -> str | None:
    """For a text quest given an agent's name: why it cannot run there (None: not an agent)."""
    if name in names() and name not in backends.names():
        return (
            f"{name!r} is a coding agent: it works in a git worktree, so it needs a quest with "
            "a [workspace] (see docs/agents.md); this quest's submissions are text"
        )
    return None
