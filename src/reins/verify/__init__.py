"""Verification primitives for rules: text anchoring and structured time."""

from reins.verify.temporal import Kind, Resolved, TimeSpec, resolve, unanchored
from reins.verify.textmatch import contains, missing, normalize

__all__ = [
    "Kind",
    "Resolved",
    "TimeSpec",
    "contains",
    "missing",
    "normalize",
    "resolve",
    "unanchored",
]
