"""Backends: text generators behind one small protocol (HTTP APIs, CLI agents, local models)."""

from reins.backends.base import Backend, BackendFactory, Completion

__all__ = ["Backend", "BackendFactory", "Completion"]
