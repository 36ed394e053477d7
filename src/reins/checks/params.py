"""A check's parameters: a rule's TOML table read into the check's frozen dataclass.

Everything is derived from the dataclass: the names a rule may write (its fields), which are
required (those without a default), the type each must have (the field's annotation) and the
help ``docs/checks.md`` shows (the docstring under the field). The types TOML can give are
``str``, ``int``, ``float`` (a whole number is taken too), ``bool`` (never a number: TOML's
``true`` is not ``1``), a :class:`~reins.checks.paths.Path` (written as a string, parsed
here), a ``Literal`` of strings, :data:`~reins.values.JSON` (any value), ``tuple[X, ...]`` and
``list[X]`` (an array), ``dict[str, X]`` (a table), and unions of them; ``X | None`` with a
``None`` default is an optional parameter (TOML has no null, so None means "not given").

Every type is checked before any value, so a document learns of a wrong type first; a value
that is well-typed but unusable (a path with a syntax error, a string outside its ``Literal``)
is a :class:`~reins.errors.ParamValueError`, as a check's own ``build`` raises.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, get_args, get_origin

from reins.checks.paths import Path, parse
from reins.checks.spec import BASE, REQUIRED, Param, QuestFolder
from reins.errors import ConfigError, ParamError, ParamValueError
from reins.values import JSON

if TYPE_CHECKING:
    from reins.checks.spec import CheckSpec

P = TypeVar("P")
_NONE = type(None)
_SCALARS: dict[object, tuple[type, ...]] = {
    str: (str,),
    int: (int,),
    float: (int, float),
    bool: (bool,),
    Path: (str,),
}
_NAMES: dict[object, tuple[str, str, str]] = {  # label, one, several
    str: ("str", "a string", "strings"),
    int: ("int", "a whole number", "whole numbers"),
    float: ("float", "a number", "numbers"),
    bool: ("bool", "true or false", "booleans"),
    Path: ("path", 'a path such as "submission.who" or "item.date"', "paths"),
}
_SUPPORTED = (
    "str, int, float, bool, Path, JSON, a Literal of strings, tuple[X, ...], list[X], "
    "dict[str, X] or a union of them"
)


@dataclasses.dataclass(frozen=True, slots=True)
class Field:
    """One field of a parameters dataclass: its name, resolved type and default."""

    name: str
    hint: Any
    default: object = REQUIRED

    @property
    def reserved(self) -> bool:
        """Whether the loader fills it (the quest folder): a rule never writes it."""
        return self.hint is QuestFolder


def validate(spec: CheckSpec[P], given: Mapping[str, object]) -> P:
    """The parameters for ``spec``: ``given`` read into its dataclass, defaults filled in.

    Raises:
        ParamError: a parameter is unknown, missing or of the wrong type.
        ParamValueError: a value is well-typed but unusable (a path that does not parse, a
            string outside the field's ``Literal``), or the dataclass's ``__post_init__``
            refused it.
        ConfigError: the dataclass declares a type TOML cannot give (the check's own bug).
    """
    fields = fields_of(spec.params)
    written = [f for f in fields if not f.reserved]
    for name in given:
        if name != BASE and all(f.name != name for f in written):
            names = ", ".join(f.name for f in written) or "none"
            raise ParamError(spec.name, name, f"unknown parameter (this check takes: {names})")
    for f in written:  # every type first: a document learns of a wrong type before a value
        if f.name not in given:
            if f.default is REQUIRED:
                raise ParamError(spec.name, f.name, f"missing; expected {describe(f.hint)}")
        elif not fits(f.hint, given[f.name]):
            value = given[f.name]
            got = f"{type(value).__name__} {value!r:.60}"
            raise ParamError(spec.name, f.name, f"expected {describe(f.hint)}, got {got}")
    values = {
        f.name: _convert(spec.name, f.name, f.hint, given[f.name])
        for f in written
        if f.name in given
    }
    base = given.get(BASE)
    for f in fields:
        if f.reserved:
            values[f.name] = QuestFolder(base if isinstance(base, str) and base else ".")
    return spec.params(**values)


def fields_of(cls: type) -> tuple[Field, ...]:
    """The fields of the parameters dataclass ``cls``, their annotations resolved.

    Raises:
        ConfigError: ``cls`` is not a frozen dataclass, or a field has a type TOML cannot give.
    """
    return _fields(cls)


@functools.cache  # a gate loads each check many times: resolve its annotations once
def _fields(cls: type) -> tuple[Field, ...]:
    params = getattr(cls, "__dataclass_params__", None)
    if not isinstance(cls, type) or params is None or not params.frozen:
        raise ConfigError(f"parameters {cls!r}: expected a frozen dataclass")
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        hint = _resolve(cls, f)
        if hint is not QuestFolder and not _supported(hint):
            raise ConfigError(
                f"parameters {cls.__qualname__}: field {f.name} has the type {f.type}, which "
                f"TOML cannot give; use {_SUPPORTED}"
            )
        default: object = REQUIRED
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        out.append(Field(f.name, hint, default))
    return tuple(out)


def declared(cls: type) -> tuple[Param, ...]:
    """The parameters a rule may write, with their labels and help, as the docs list them."""
    helps = _docstrings(cls)
    return tuple(
        Param(f.name, label(f.hint), helps.get(f.name, ""), f.default)
        for f in fields_of(cls)
        if not f.reserved
    )


def fits(hint: Any, value: object) -> bool:
    """Whether ``value`` (as TOML gives it) has the type ``hint``; values are not judged."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is JSON:
        return True
    if origin in (Union, types.UnionType):
        return any(fits(a, value) for a in args)
    if origin is Literal:
        return any(fits(type(a), value) for a in args)
    if origin in (tuple, list):
        return isinstance(value, list | tuple) and all(fits(args[0], v) for v in value)
    if origin is dict:
        return isinstance(value, dict) and all(fits(args[1], v) for v in value.values())
    kinds = _SCALARS.get(hint)
    if kinds is None or (isinstance(value, bool) and hint is not bool):  # true is not 1
        return False
    return isinstance(value, kinds)


def describe(hint: Any) -> str:
    """What a value of type ``hint`` is, for a message: ``a string or an array of strings``."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is JSON:
        return "any TOML value"
    if origin in (Union, types.UnionType):
        parts = [describe(a) for a in args if a is not _NONE]
        if len(parts) < 3:
            return " or ".join(parts)
        return ", ".join(parts[:-1]) + ", or " + parts[-1]  # "true or false" is one part
    if origin is Literal:
        return describe(type(args[0]))
    if origin in (tuple, list):
        several = _NAMES.get(args[0])
        return f"an array of {several[2]}" if several else "an array"
    if origin is dict:
        return "a table"
    return _NAMES[hint][1]


def label(hint: Any) -> str:
    """How ``docs/checks.md`` writes the type ``hint``: ``str``, ``path``, ``list[str]``…"""
    origin, args = get_origin(hint), get_args(hint)
    if hint is JSON:
        return "json"
    if origin in (Union, types.UnionType):
        return " | ".join(label(a) for a in args if a is not _NONE)
    if origin is Literal:
        return label(type(args[0]))
    if origin in (tuple, list):
        return f"list[{label(args[0])}]"
    if origin is dict:
        return "table"
    return _NAMES[hint][0]


def _convert(check: str, name: str, hint: Any, value: Any) -> object:
    """``value``, which :func:`fits` ``hint``, as the dataclass holds it."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is JSON:
        return value
    if origin in (Union, types.UnionType):
        first = next(a for a in args if fits(a, value))
        return _convert(check, name, first, value)
    if origin is Literal:
        if not any(type(a) is type(value) and a == value for a in args):
            allowed = ", ".join(map(str, args))
            raise ParamValueError(check, name, f"expected one of {allowed}, got {value!r}")
        return value
    if origin in (tuple, list):
        return origin(_convert(check, name, args[0], v) for v in value)
    if origin is dict:
        return {k: _convert(check, name, args[1], v) for k, v in value.items()}
    if hint is float:
        return float(value)
    if hint is Path:
        try:
            return parse(value)
        except ValueError as exc:
            raise ParamValueError(check, name, str(exc)) from None
    return value


def _resolve(cls: type, f: dataclasses.Field[Any]) -> Any:
    """The annotation of ``f``, evaluated in the module of the class that declared it.

    Not ``typing.get_type_hints``: it rebuilds a union that names a forward reference, and
    :data:`~reins.values.JSON` is then no longer itself."""
    if not isinstance(f.type, str):
        return f.type
    owner = next((c for c in cls.__mro__ if f.name in vars(c).get("__annotations__", {})), cls)
    module = sys.modules.get(owner.__module__)
    try:
        return eval(f.type, dict(vars(module)) if module else {})
    except Exception as exc:  # a name the module does not define, a typo
        raise ConfigError(
            f"parameters {cls.__qualname__}: cannot read the type {f.type!r} of {f.name}: {exc}"
        ) from None


def _supported(hint: Any) -> bool:
    origin, args = get_origin(hint), get_args(hint)
    if hint is JSON or hint in _SCALARS:
        return True
    if origin in (Union, types.UnionType):
        return all(a is _NONE or _supported(a) for a in args) and any(a is not _NONE for a in args)
    if origin is Literal:
        return bool(args) and all(isinstance(a, str) for a in args)
    if origin is tuple:
        return len(args) == 2 and args[1] is Ellipsis and _supported(args[0])
    if origin is list:
        return len(args) == 1 and _supported(args[0])
    if origin is dict:
        return len(args) == 2 and args[0] is str and _supported(args[1])
    return False


def _docstrings(cls: type) -> dict[str, str]:
    """Field name → the docstring written under it, in ``cls`` and the classes it extends
    (the nearest wins). Read from the source: only the docs need it."""
    import ast
    import inspect
    import textwrap

    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):  # object has no fields
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):  # no source: a class built at run time
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                out[node.target.id] = " ".join(after.value.value.split())
    return out
