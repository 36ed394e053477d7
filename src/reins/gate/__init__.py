"""The gate: rules that leave facts, and the verdict their aggregation yields."""

from reins.gate.evaluate import evaluate, excerpt, fire
from reins.gate.rule import CatalogEntry, Context, Fact, Level, Rule, rule
from reins.gate.verdict import Outcome, Verdict, render

__all__ = [
    "CatalogEntry",
    "Context",
    "Fact",
    "Level",
    "Outcome",
    "Rule",
    "Verdict",
    "evaluate",
    "excerpt",
    "fire",
    "render",
    "rule",
]
