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

from reins.checks._common import string
from reins.checks.spec import BuiltCheck, CheckSpec, Param, Params
from reins.errors import JudgeError, ParamValueError, cause_of
from reins.gate.rule import Context
from reins.values import Fact

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


def _build(params: Params) -> BuiltCheck:
    ref = string(params, "function")
    function = load(ref)
    given = params["params"]
    if not isinstance(given, dict):
        raise ParamValueError(NAME, "params", "expected a table")
    options = dict(given)

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
    params=(
        Param("function", "str", "the function, as module:function"),
        Param("params", "json", "a table passed to the function as its second argument", {}),
    ),
    build=_build,
)
