"""The coding agents: model specs whose name is an agent's (``cmd:./fix.py``), and their factories.

Agents are found in :data:`CODERS`, a :class:`reins.registry.Registry` over the ``reins.coders``
entry-point group (built-ins registered there the same way as plugins). The group was called
``reins.agents`` before; a plugin still registered only there is found, with a deprecation
warning, until the next release. A spec is written as for a backend, ``name:model?key=value&…``.

Which registry answers is the quest's to say (:func:`reins.loop.generator.choose_generator`): a
quest with a ``[workspace]`` runs an agent in a repository of its own per item, so
``reins loop --model codex:…`` on it means the Codex agent; a quest without one asks the text
backends, where ``codex:…`` is the single-shot, tools-off backend. A name only one registry
knows is refused by the other with the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reins.backends import registry as backends
from reins.registry import Registry, takes_options

if TYPE_CHECKING:
    from reins.coders.protocol import Agent, AgentFactory

ENTRY_POINT_GROUP = "reins.coders"
FORMER_GROUP = "reins.agents"
"""The group's name until it was renamed; read for one release more."""


def missing(name: str) -> str:
    """Why ``name`` is no agent: a text backend's name says so."""
    known = CODERS.known_text()
    if name in backends.BACKENDS:
        return (
            f"{name!r} is a text backend (single-shot, no tools); a quest with a "
            f"[workspace] runs a coding agent in each item's workspace. Known agents: {known}."
        )
    return f"No coding agent named {name!r}. Known agents: {known}."


CODERS: Registry[AgentFactory] = Registry(
    "coding agent", ENTRY_POINT_GROUP, takes_options, formerly=(FORMER_GROUP,), missing=missing
)
"""The coding agents: the ``reins.coders`` entry points (and, for now, ``reins.agents``)."""


def resolve_agent(spec: str | backends.Spec) -> Agent:
    """Build the agent a model spec names.

    Raises:
        ConfigError: a malformed spec, an unknown option, or a value the agent refuses.
        NotFound: an unknown agent (a text backend's name says so).
    """
    parsed = backends.parse_spec(spec) if isinstance(spec, str) else spec
    agent_factory = CODERS.find(parsed.backend)
    backends.check_options(parsed.backend, agent_factory.options, parsed.options)
    return agent_factory(parsed.model, dict(parsed.options))


def not_an_agent(name: str) -> str | None:
    """For a text quest given an agent's name: why it cannot run there (None: not an agent)."""
    if name in CODERS and name not in backends.BACKENDS:
        return (
            f"{name!r} is a coding agent: it works in a git repository, so it needs a quest "
            "with a [workspace] (see docs/agents.md); this quest's submissions are text"
        )
    return None
