"""Backends: text generators behind one small protocol (HTTP APIs, CLI agents, local models).

``resolve("ollama:qwen2.5:0.5b?temperature=0.7")`` builds the backend a model spec names; the
names come from the ``reins.backends`` entry-point group (see :mod:`reins.backends.registry`).
"""

from reins.backends.base import Backend, BackendFactory, Completion
from reins.backends.registry import Spec, known, names, parse_spec, resolve

__all__ = [
    "Backend",
    "BackendFactory",
    "Completion",
    "Spec",
    "known",
    "names",
    "parse_spec",
    "resolve",
]
