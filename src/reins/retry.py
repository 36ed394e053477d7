"""Retry policies: what a retry's prompt shows of the log, answer by answer, and how it samples.

A policy is written as one word or a schedule of them, one per retry::

    facts                 every retry shows the last FAIL's facts
    fresh,facts           answer 2 is a new sample, answer 3 shows the facts (the last step
                          repeats for any answer after)
    fresh,facts@0.8       ... and answer 3 is sampled at temperature 0.8

Each step is a kind of feedback (:data:`RETRY_POLICIES`) and, after ``@``, a sampling
temperature declared for that retry (the backend's own when none is given; the first answer
always samples at the backend's own, so it is the same under every policy). The policy is
recorded on every attempt as written here (:meth:`RetryPolicy.__str__`, the canonical form), and
the step a turn uses follows from that text and the item's count of FAILs: compose stays a
pure function of the log, and a replay composes the same call.

This module imports nothing of reins but its errors: the CLI checks a ``--retry`` with it
before anything heavier loads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from reins.errors import ConfigError

RETRY_POLICIES = ("facts", "facts+previous", "fresh")
"""The kinds of feedback a retry can show: the last FAIL's facts, the facts and the submission
that failed, or nothing (a new sample)."""

MAX_TEMPERATURE = 2.0
"""The highest temperature a step may declare (what the providers' APIs accept)."""

SYNTAX = "FEEDBACK[@TEMPERATURE][,FEEDBACK[@TEMPERATURE]…]"


@dataclass(frozen=True, slots=True)
class RetryStep:
    """One retry's policy: its feedback and, when declared, its sampling temperature."""

    feedback: str
    temperature: float | None = None

    def __str__(self) -> str:
        if self.temperature is None:
            return self.feedback
        return f"{self.feedback}@{self.temperature:g}"


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """A schedule of retry steps: ``steps[0]`` makes answer 2, ``steps[1]`` answer 3, and the
    last step every answer after."""

    steps: tuple[RetryStep, ...]

    def __str__(self) -> str:
        return ",".join(map(str, self.steps))

    def step(self, retry: int) -> RetryStep:
        """The step of the ``retry``-th retry (1: answer 2)."""
        return self.steps[min(max(retry, 1), len(self.steps)) - 1]

    @property
    def temperatures(self) -> bool:
        """Whether a step declares a temperature (the backend must take one per call)."""
        return any(s.temperature is not None for s in self.steps)


def parse_retry(text: str) -> RetryPolicy:
    """The policy ``text`` writes (:data:`SYNTAX`).

    Raises:
        ConfigError: an unknown feedback, a temperature that is not a number from 0 to
            :data:`MAX_TEMPERATURE`, or an empty step; the message names the step.
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(
            f"a retry policy is {SYNTAX}, e.g. facts or fresh,facts@0.8; got {text!r}"
        )
    return RetryPolicy(tuple(_step(part.strip(), text) for part in text.split(",")))


def _step(part: str, text: str) -> RetryStep:
    feedback, at, temperature = part.partition("@")
    feedback = feedback.strip()
    if feedback not in RETRY_POLICIES:
        what = f"step {part!r} of {text!r}" if "," in text or at else repr(part)
        raise ConfigError(
            f"unknown retry policy {what}: each step is one of {', '.join(RETRY_POLICIES)}, "
            f"optionally @TEMPERATURE (fresh,facts@0.8)"
        )
    if not at:
        return RetryStep(feedback)
    try:
        value = float(temperature)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= MAX_TEMPERATURE:  # nan and inf fail here too
        raise ConfigError(
            f"retry policy {text!r}: the temperature after @ in {part!r} must be a number "
            f"from 0 to {MAX_TEMPERATURE:g}"
        )
    return RetryStep(feedback, value)


def canonical_retry(text: str) -> str:
    """``text`` as every attempt records it (``facts @ 0.80`` → ``facts@0.8``).

    Raises:
        ConfigError: as :func:`parse_retry`.
    """
    return str(parse_retry(text))
