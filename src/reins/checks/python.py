"""``python``: any check written as a Python function, named ``module:function``.

The function is imported when the gate loads (an import error, a missing attribute or something
that is not callable is a load error at the ``function`` parameter) and is called as
``function(ctx, params)`` with the rule's ``params`` table (a dict, ``{}`` when not given). It
returns ``None``, a :class:`~reins.values.Fact` or an iterable of facts. It raising, or
returning anything else, is the judge's failure (:class:`~reins.errors.JudgeError`): a bug in a
check never costs the generator a try. A quest folder's own modules are importable when the
loader puts the folder on ``sys.path``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError, ParamValueError, cause_of
from reins.gate.rule import Context
from reins.values import JSON, Fact

NAME = "python"


def load(ref: str) -> Callable[..., object]:
    """The callable ``module:function`` names. Raises ParamValueError with the reason."""
    module_name, colon, attr = ref.partition(":")
    if not colon or not module_name or not attr:
        raise ParamValueError(NAME, "function", f"expected module:function, got {ref!r}")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # an import runs arbitrary code: any failure is a load error
        raise ParamValueError(
            NAME, "function", f"cannot import {module_name}: {type(exc).__name__}: {exc}"
        ) from None
    target: object = module
    for part in attr.split("."):
        if not hasattr(target, part):
            raise ParamValueError(NAME, "function", f"{module_name} has no {attr}")
        target = getattr(target, part)
    if not callable(target):
        raise ParamValueError(NAME, "function", f"{ref} is not callable")
    return target


@dataclass(frozen=True, slots=True)
class PythonParams:
    function: str
    """the function, as module:function"""
    params: dict[str, JSON] = field(default_factory=dict)
    """a table passed to the function as its second argument"""


def _build(params: PythonParams) -> BuiltCheck:
    ref = params.function
    function = load(ref)
    options = dict(params.params)

    def check(ctx: Context) -> list[Fact]:
        try:
            out = function(ctx, options)
        except JudgeError:
            raise
        except Exception as exc:
            raise JudgeError(f"python check {ref}", cause_of(exc)) from exc
        return _facts(ref, out)

    return check


def _facts(ref: str, out: object) -> list[Fact]:
    if out is None:
        return []
    if isinstance(out, Fact):
        return [out]
    if isinstance(out, Iterable) and not isinstance(out, str | bytes | dict):
        facts = list(out)
        if all(isinstance(f, Fact) for f in facts):
            return facts
    raise JudgeError(f"python check {ref}", f"returned {type(out).__name__}, not facts or None")


PYTHON = CheckSpec(
    name=NAME,
    summary="a Python function module:function(ctx, params) returns facts or None",
    params=PythonParams,
    build=_build,
)
