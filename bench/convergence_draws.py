"""``bench_convergence.py --draws K``: answer 3 drawn K more times, so that one draw's luck
weighs less.

On 0-44 the policies differ by 0-2 problems at answer 3, within what one draw per problem can
say. So after the policies ran, each policy's answer-3 prompt of every problem that reached
answer 3 under both it and ``fresh`` (both failed answers 1 and 2) is sent K more times, with
the seeds ``1001 … 1000+K`` (the same for every prompt, declared in the output), each at that
prompt's own temperature (the policy's declared step temperature, else the backend's), through
a backend that keeps each completion in the same file: a rerun is free, but for a prompt whose
facts include a ``time`` fact (its wording follows the machine's load, so the prompt is new).
Each draw is judged as the loop judges an answer: the quest's ``prepare``, then its gate
(:func:`reins.turn.judge`).

The estimate of "solved by answer 3" is the problems solved by answer 2 (still one draw) plus,
over the drawn problems, passes / K, plus the one-draw answer 3 of the problems that reached
answer 3 under the policy alone (``fresh`` solved them by answer 2: not drawn, so counted as
today; none under a schedule that starts with ``fresh``, whose answers 1 and 2 are ``fresh``'s).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reins.backends.base import Backend
from reins.gate import Outcome, Verdict
from reins.loop.compare import PolicyRun
from reins.loop.paired import solved_by
from reins.quest import Quest
from reins.store.model import Item, State
from reins.turn.judge import judge
from reins.values import JSON, Prompt

SEED_BASE = 1000
"""Draw k (1 … K) uses seed 1000 + k, for every prompt: not one of reins' own seeds but by a
31-bit hash's chance (those hash the key and turn). The scratch run of bench/CONVERGENCE.md's
second pass used the same."""


def draw_seeds(k: int) -> list[int]:
    return [SEED_BASE + n for n in range(1, k + 1)]


@dataclass(frozen=True, slots=True)
class Drawn:
    """One problem's answer-3 prompt drawn K times: how many of them the gate passed."""

    key: str
    passes: int
    draws: int
    temperature: float


@dataclass(frozen=True, slots=True)
class PolicyDraws:
    """One policy's draws, and its estimate of the problems solved by answer 3."""

    policy: str
    by_two: int
    """Solved by answer 2: one draw, as the table above."""
    by_three: int
    """Solved by answer 3, one draw (the figure the estimate stands beside)."""
    drawn: tuple[Drawn, ...]
    alone: tuple[str, ...] = ()
    """Reached answer 3 under this policy only (fresh solved them by answer 2): not drawn."""
    alone_solved: int = 0
    """Of ``alone``, those its one answer 3 solved: counted in the estimate as today."""

    @property
    def passes(self) -> int:
        return sum(d.passes for d in self.drawn)

    @property
    def draws(self) -> int:
        return sum(d.draws for d in self.drawn)

    @property
    def estimate(self) -> float:
        return self.by_two + sum(d.passes / d.draws for d in self.drawn) + self.alone_solved

    def to_json(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "solved_by_2": self.by_two,
            "solved_by_3_one_draw": self.by_three,
            "solved_by_3_estimate": round(self.estimate, 4),
            "draws": self.draws,
            "draws_passed": self.passes,
            "drawn": {d.key: {"passes": d.passes, "draws": d.draws} for d in self.drawn},
            "temperature": sorted({d.temperature for d in self.drawn}),
            "answer3_alone_not_drawn": list(self.alone),
            "answer3_alone_solved_one_draw": self.alone_solved,
        }


def last_answers(calls: Mapping[str, Sequence[Prompt]], answers: int) -> dict[str, Prompt]:
    """Each key's last answered prompt, for the keys that got ``answers`` answers or more.

    ``calls`` holds the prompts of the calls that returned a completion, per key in order. A
    prompt's ``turn`` is the item's turn number, which is its answer's number only when no
    generation failed before it (a failed call takes a turn and no answer), so the last
    answered prompt is taken rather than the one of turn 3: for an item that failed its
    answers 1 and 2, it is the prompt of its answer 3.
    """
    return {key: p[-1] for key, p in calls.items() if len(p) >= answers}


def answer3_prompts(
    run: PolicyRun, calls: Mapping[str, Sequence[Prompt]], answers: int
) -> dict[str, Prompt]:
    """The answer-3 prompts of the problems ``run`` did not solve by answer 2."""
    early = solved_by(run, answers - 1)
    return {k: p for k, p in last_answers(calls, answers).items() if k not in early}


def passed(quest: Quest, key: str, payload: JSON, text: str) -> bool:
    """Whether the quest's gate passes ``text`` for ``key``, judged as the loop judges it."""
    verdict, _ = judge(quest, Item(key, State.TODO, 0, payload), text)
    if not isinstance(verdict, Verdict):  # the judge itself broke: no figure to give
        raise SystemExit(f"draws: the judge failed on {key}: {verdict}")
    return verdict.outcome is Outcome.PASS


async def _draw(
    backend: Backend, prompt: Prompt, seeds: Sequence[int], timeout: float
) -> list[str]:
    return [(await backend.complete(prompt, seed=s, timeout=timeout)).text for s in seeds]


@dataclass(frozen=True, slots=True)
class Drawer:
    """What every draw shares: the quest that judges, the items' payloads, the backend that
    keeps each completion, the seeds and the call timeout."""

    quest: Quest
    payloads: Mapping[str, JSON]
    backend: Backend
    seeds: Sequence[int]
    timeout: float
    default_temperature: float

    def draw(self, policy: str, prompt: Prompt) -> Drawn:
        """``prompt`` drawn with every seed and judged; one progress line."""
        start = time.perf_counter()
        texts = asyncio.run(_draw(self.backend, prompt, self.seeds, self.timeout))
        wins = sum(passed(self.quest, prompt.key, self.payloads[prompt.key], t) for t in texts)
        t = self.default_temperature if prompt.temperature is None else prompt.temperature
        print(f"  draws {policy} {prompt.key} @{t:g}: {wins}/{len(texts)} passed · "
              f"{time.perf_counter() - start:.0f} s", flush=True)  # fmt: skip
        return Drawn(prompt.key, wins, len(texts), t)

    def policy(self, run: PolicyRun, mine: Mapping[str, Prompt], fresh: set[str]) -> PolicyDraws:
        """``run``'s answer-3 prompts (``mine``) drawn on the problems ``fresh`` also took to
        answer 3."""
        drawn = tuple(self.draw(run.policy, mine[k]) for k in sorted(mine) if k in fresh)
        alone = tuple(sorted(set(mine) - fresh))
        solved = solved_by(run, 3)
        return PolicyDraws(
            run.policy,
            by_two=len(solved_by(run, 2)),
            by_three=len(solved),
            drawn=drawn,
            alone=alone,
            alone_solved=len(solved.intersection(alone)),
        )


def draw_all(
    drawer: Drawer,
    runs: Sequence[PolicyRun],
    calls: Sequence[Mapping[str, Sequence[Prompt]]],
    answers: int,
) -> list[PolicyDraws]:
    """Every run's draws (``calls[i]``: run ``i``'s answered prompts by key), ``fresh`` first:
    its draws cover every problem it took to answer 3, so its estimate is whole."""
    prompts = [answer3_prompts(r, c, answers) for r, c in zip(runs, calls, strict=True)]
    base = next(i for i, r in enumerate(runs) if r.policy == "fresh")
    fresh = set(prompts[base])
    order = [base] + [i for i in range(len(runs)) if i != base]
    done = {i: drawer.policy(runs[i], prompts[i], fresh) for i in order}
    return [done[i] for i in range(len(runs))]


def draws_json(rows: Sequence[PolicyDraws], seeds: Sequence[int]) -> dict[str, Any]:
    """The draws for ``--json``: the seeds, and each policy's with its estimate less fresh's."""
    base = next(r for r in rows if r.policy == "fresh")
    out: dict[str, Any] = {"k": len(seeds), "seeds": list(seeds), "answer_2": "one draw"}
    out["runs"] = [
        r.to_json() | {"estimate_minus_fresh": round(r.estimate - base.estimate, 4)} for r in rows
    ]
    return out


def draw_table(rows: Sequence[PolicyDraws], seeds: Sequence[int]) -> list[str]:
    """The draws as a Markdown table, with what it means under it."""
    base = next(r for r in rows if r.policy == "fresh")
    k = len(seeds)
    lines = [
        f"Answer 3 drawn {k} more times (seeds {seeds[0]}…{seeds[-1]}, each at its prompt's "
        "temperature) on the problems that reached answer 3 under the policy and `fresh`:",
        "",
        "| `--retry` | problems drawn | draws passed | problems with passes (passes) "
        "| by answer 3, one draw | by answer 3, estimate | estimate − fresh |",
        "|---|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        wins = ", ".join(f"{d.key.removeprefix('HumanEval/')} ({d.passes})"
                         for d in r.drawn if d.passes) or "—"  # fmt: skip
        vs = "—" if r is base else f"{r.estimate - base.estimate:+.2f}"
        lines.append(f"| `{r.policy}` | {len(r.drawn)} | {r.passes} / {r.draws} | {wins} | "
                     f"{r.by_three} | {r.estimate:.2f} | {vs} |")  # fmt: skip
    lines += [
        "",
        f"(estimate: solved by answer 2, which is still one draw, + passes / {k} over the "
        "drawn problems",
    ]
    alone = [r for r in rows if r.alone]
    for r in alone:
        lines.append(f" + `{r.policy}`'s one-draw answer 3 on the {len(r.alone)} problems "
                     f"fresh solved by answer 2: {r.alone_solved}")  # fmt: skip
    lines[-1] += ")"
    return lines
