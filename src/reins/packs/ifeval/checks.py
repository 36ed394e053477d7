"""The ifeval pack's check: one IFEval instruction judged by Google's official checker.

``gate.md`` has one rule per instruction id, each calling :func:`instruction` through the
``python`` check with ``params = { id = "punctuation:no_comma" }``. For every place the item's
``instruction_id_list`` names that id, the official code's own evaluation functions give the
strict and the loose verdict, and the rule leaves:

- nothing when the strict reading is followed;
- a REVIEW fact when only the loose reading is (a stray first line, markdown asterisks);
- a FAIL fact when neither is;
- a REVIEW fact when the official checker is random for this instruction: it draws a parameter
  the instruction left open (a letter when the given one is not a letter, …) or its language
  detection gives different answers under different seeds. Never a lock on a coin flip.

A checker that cannot be loaded or built, or that raises, is the judge's failure
(:class:`~reins.errors.JudgeError`), never a verdict.
"""

from __future__ import annotations

import functools
import json
import random
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reins.errors import JudgeError, cause_of
from reins.gate.rule import Context
from reins.values import Fact, readable_json

__all__ = ["NOT_JUDGED", "Built", "Reading", "build", "instruction", "judge"]

# How the REVIEW fact of a coin flip begins (the official checker is random there): the pack's
# figures (figures.py) count such an instruction as not followed, strictly or loosely.
NOT_JUDGED = "not judged: "
# Seeds of langdetect's generator tried beside the default (0) before a language verdict counts.
LANGDETECT_SEEDS = (1, 2)
# langdetect's convergence threshold: a language this probable was every trial's choice.
SETTLED = 0.99999

# The official code keeps global state (Python's random, langdetect's seed): judges run in
# threads, so one instruction is judged at a time.
_LOCK = threading.RLock()


@dataclass(frozen=True, slots=True)
class Built:
    """An official checker built for one instruction's parameters."""

    description: str
    args: Mapping[str, Any]
    drawn: tuple[str, ...]
    """The parameters the official code draws at random for these kwargs (empty: none)."""

    @property
    def random(self) -> bool:
        return bool(self.drawn)


@dataclass(frozen=True, slots=True)
class Reading:
    """The official verdicts on one instruction of one response."""

    strict: bool
    loose: bool
    coin_flip: str = ""
    """Why the verdict is random on this response (empty when it is not)."""


def instruction(ctx: Context, params: Mapping[str, object]) -> list[Fact] | None:
    """The ``python`` check of every rule in the pack's ``gate.md``.

    Raises:
        JudgeError: the item is not an IFEval prompt, or the official checker failed.
    """
    instruction_id = params.get("id")
    if not isinstance(instruction_id, str):
        raise JudgeError("ifeval", "the rule's parameters must name an instruction: id = '…'")
    payload = ctx.payload
    if not isinstance(payload, Mapping):
        raise JudgeError("ifeval", f"item {ctx.key} has no IFEval payload")
    ids, all_kwargs, prompt = _instructions(ctx.key, payload)
    positions = [i for i, name in enumerate(ids) if name == instruction_id]
    if not positions:
        return None
    response = ctx.submission if isinstance(ctx.submission, str) else ctx.raw
    facts = []
    for i in positions:
        fact = judge(instruction_id, all_kwargs[i], prompt, response, key=payload.get("key", 0))
        if fact is not None:
            facts.append(fact)
    return facts or None


def judge(
    instruction_id: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    response: str,
    *,
    key: object = 0,
) -> Fact | None:
    """The fact one instruction leaves on ``response``, or None when it is followed."""
    built = build(instruction_id, kwargs, prompt)
    where = f"{instruction_id} {readable_json(dict(kwargs))}"
    if built.random:
        drawn = ", ".join(f"{name}={built.args.get(name)!r}" for name in built.drawn)
        return Fact(
            where=where,
            expected=built.description,
            actual=f"{NOT_JUDGED}the official checker draws {drawn} at random here",
            level="REVIEW",
        )
    outcome = evaluate(instruction_id, kwargs, prompt, response, key=key)
    if outcome.coin_flip:
        return Fact(
            where=where,
            expected=built.description,
            actual=f"{NOT_JUDGED}{outcome.coin_flip}",
            level="REVIEW",
        )
    if outcome.strict:
        return None
    from reins.packs.ifeval.seen import seen

    observed = seen(instruction_id, built.args, response)
    if outcome.loose:
        return Fact(
            where=where,
            expected=built.description,
            actual=f"followed only loosely (first/last line or * ignored); {observed}",
            level="REVIEW",
        )
    return Fact(where=where, expected=built.description, actual=observed, level="FAIL")


def build(instruction_id: str, kwargs: Mapping[str, Any], prompt: str) -> Built:
    """The official checker of one instruction, built as the official evaluation builds it.

    Raises:
        JudgeError: no such instruction, or its checker refuses the parameters.
    """
    return _build(instruction_id, json.dumps(dict(kwargs), sort_keys=True), prompt)


@functools.lru_cache(maxsize=4096)
def _build(instruction_id: str, kwargs_json: str, prompt: str) -> Built:
    kwargs = json.loads(kwargs_json)
    with _LOCK:
        # Random iff building consumes Python's random state: every draw of the module's
        # functions advances it. A second build confirms, so that another thread's draw in
        # between cannot pass for the checker's (that would only cost a REVIEW).
        args, description, consumed = _build_once(instruction_id, kwargs, prompt)
        if consumed:
            args, description, consumed = _build_once(instruction_id, kwargs, prompt)
    drawn: tuple[str, ...] = ()
    if consumed:
        drawn = tuple(name for name in args if kwargs.get(name) != args[name]) or ("parameters",)
    return Built(description, args, drawn)


def _build_once(
    instruction_id: str, kwargs: Mapping[str, Any], prompt: str
) -> tuple[dict[str, Any], str, bool]:
    from reins.packs.ifeval.official import load

    cls = load().instruction_class(instruction_id)
    before = random.getstate()
    try:
        checker = cls(instruction_id)
        # As the official evaluation does: drop empty values, then give the prompt to the
        # checkers that take it (repeat the request).
        description = checker.build_description(**{k: v for k, v in kwargs.items() if v})
        args = checker.get_instruction_args()
        if args and "prompt" in args:
            description = checker.build_description(prompt=prompt)
            args = checker.get_instruction_args()
    except Exception as exc:
        raise JudgeError(
            "ifeval", f"cannot build the checker of {instruction_id}: {cause_of(exc)}"
        ) from exc
    return dict(args or {}), str(description), random.getstate() != before


def evaluate(
    instruction_id: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    response: str,
    *,
    key: object = 0,
) -> Reading:
    """The strict and loose verdicts of the official evaluation functions on one instruction.

    Raises:
        JudgeError: the official checker raised on this response.
    """
    from reins.packs.ifeval.official import load

    official = load()
    with _LOCK:
        strict, loose, consumed = _verdicts(official, instruction_id, kwargs, prompt, response, key)
        if consumed:
            return Reading(strict, loose, "the official checker draws at random when it checks")
        if (
            "langdetect"
            not in official.instruction_class(instruction_id).check_following.__code__.co_names
        ):
            return Reading(strict, loose)
        if strict and _settled_language(official, response):
            return Reading(strict, loose)
        detector = official.langdetect.DetectorFactory
        seed = detector.seed
        try:
            for other in LANGDETECT_SEEDS:
                detector.seed = other
                again = _verdicts(official, instruction_id, kwargs, prompt, response, key)
                if again[:2] != (strict, loose):
                    return Reading(
                        strict,
                        loose,
                        "the official language detection (langdetect) is random on this text",
                    )
        finally:
            detector.seed = seed
    return Reading(strict, loose)


def _settled_language(official: Any, text: str) -> bool:
    """Whether langdetect's own trials all agree on ``text``: each of its trials stops when
    one language's probability passes 0.99999, so a mean that high means every trial chose
    that language. Then the strict pass (which read only ``text``) stands without asking
    other seeds; anything less is probed."""
    try:
        found = official.langdetect.detect_langs(text)
    except official.langdetect.LangDetectException:
        return False
    return bool(found) and float(found[0].prob) >= SETTLED


def _verdicts(
    official: Any,
    instruction_id: str,
    kwargs: Mapping[str, Any],
    prompt: str,
    response: str,
    key: object,
) -> tuple[bool, bool, bool]:
    evaluation = official.evaluation
    example = evaluation.InputExample(
        key=key, instruction_id_list=[instruction_id], prompt=prompt, kwargs=[dict(kwargs)]
    )
    before = random.getstate()
    try:
        strict = evaluation.test_instruction_following_strict(example, response)
        loose = evaluation.test_instruction_following_loose(example, response)
    except Exception as exc:
        raise JudgeError(
            "ifeval", f"the official checker of {instruction_id} raised {cause_of(exc)}"
        ) from exc
    return (
        bool(strict.follow_instruction_list[0]),
        bool(loose.follow_instruction_list[0]),
        random.getstate() != before,
    )


def _instructions(
    key: str, payload: Mapping[str, Any]
) -> tuple[Sequence[str], Sequence[Mapping[str, Any]], str]:
    ids = payload.get("instruction_id_list")
    all_kwargs = payload.get("kwargs")
    prompt = payload.get("prompt")
    if (
        not isinstance(ids, list)
        or not isinstance(all_kwargs, list)
        or len(ids) != len(all_kwargs)
        or not isinstance(prompt, str)
        or not all(isinstance(k, Mapping) for k in all_kwargs)
    ):
        raise JudgeError(
            "ifeval",
            f"item {key} is not an IFEval prompt "
            "(prompt, instruction_id_list and kwargs of the same length)",
        )
    return ids, all_kwargs, prompt
