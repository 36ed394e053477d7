"""What a turn can end in besides a verdict: the generator's failure, or the judge's own.

Neither is a verdict. Neither uses a try, locks an item or reaches a prompt; each is recorded so
that the log says what happened, and a run of them stops the loop (two separate breakers: judge
errors in a row, generation errors on N items in a row; one item's alone only set it aside).
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.gate import Verdict


@dataclass(frozen=True, slots=True)
class GenerationFailure:
    """The generator produced nothing usable: its cause (already redacted)."""

    error: str


@dataclass(frozen=True, slots=True)
class JudgeFailure:
    """The judge itself failed on a submission: what failed (a rule id, ``quest.prepare``, a
    ground) and the exception's type and message. Never a verdict, never a prompt."""

    where: str
    cause: str

    @property
    def error(self) -> str:
        return f"{self.where}: {self.cause}"


Result = Verdict | GenerationFailure | JudgeFailure
