"""``changed_files``: which paths a coding item's change may touch, read from git, not the diff.

The check reads the paths the recorded patch touches as git itself lists them
(:attr:`~reins.values.JudgeTree.changed`: both names of a rename, unquoted), never the patch's
text. A rule over the text (``regex`` on ``^diff --git a/…``) misses every name git quotes in
its headers (a tab, a ``"``, a backslash, a byte above ASCII: ``"a/tests/t\\303\\251st.py"``),
so a change outside the allowed paths would pass it.

A changed path outside every ``allow`` pattern (when ``allow`` is given), or inside a ``deny``
pattern, is a FAIL fact naming it; the patterns are those of ``[workspace] judge``
(:mod:`reins.workspace.globs`). ``{key}`` and ``{item.FIELD}`` in a pattern stand for the
item's key and a field of its payload, each matching itself alone (a ``*`` in an item's path
is no wildcard). A turn without a judge's tree is the judge's error, never a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from reins.checks._common import blanked, excerpt, filled, has_fields
from reins.checks.spec import BuiltCheck, CheckSpec
from reins.errors import JudgeError, ParamValueError
from reins.gate.rule import Context
from reins.values import Fact
from reins.workspace import globs
from reins.workspace.globs import Globs

NAME = "changed_files"
SHOWN = 20
"""Paths named by a fact of their own; more are counted in one fact."""
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


@dataclass(frozen=True, slots=True)
class ChangedFilesParams:
    allow: tuple[str, ...] = ()
    """the only paths the change may touch, as patterns of [workspace] judge (textkit/**,
    /{item.path}); {key} and {item.FIELD} match the item's own values"""
    deny: tuple[str, ...] = ()
    """paths the change may not touch, even under allow (same patterns)"""


def _build(params: ChangedFilesParams) -> BuiltCheck:
    if not params.allow and not params.deny:
        raise ParamValueError(NAME, "allow", "expected patterns in allow, deny or both")
    for name, patterns in (("allow", params.allow), ("deny", params.deny)):
        for pattern in patterns:
            why = globs.check(blanked(pattern))
            if why is not None:
                raise ParamValueError(NAME, name, why)
    return ChangedFiles(params.allow, params.deny)


@dataclass(frozen=True, slots=True)
class ChangedFiles:
    """The built check."""

    allow: tuple[str, ...]
    deny: tuple[str, ...]

    def __call__(self, ctx: Context) -> list[Fact] | None:
        tree = ctx.workspace
        if tree is None:
            raise JudgeError(
                NAME,
                "this rule reads the paths the recorded patch of a coding item changes, and "
                "this turn has none: only `reins loop` with a coding agent makes one",
            )
        allow, deny = self._own(self.allow, ctx), self._own(self.deny, ctx)
        allowed, denied = Globs.of(allow), Globs.of(deny)
        refused = [
            path
            for path in tree.changed
            if (allow and not allowed.match(path)) or denied.match(path)
        ]
        return _named(refused, _expected(allow, deny)) or None

    @staticmethod
    def _own(patterns: tuple[str, ...], ctx: Context) -> tuple[str, ...]:
        """``patterns`` with the item's values written in, each matching itself alone.

        Raises:
            JudgeError: a value makes no usable pattern (the item's fault: no try is used).
        """
        own = []
        for pattern in patterns:
            if has_fields(pattern):
                pattern = filled(pattern, ctx, check=NAME, escape=globs.escape)
                why = globs.check(pattern)
                if why is not None:
                    raise JudgeError(NAME, f"item {ctx.key!r}: {why}")
            own.append(pattern)
        return tuple(own)


def _expected(allow: tuple[str, ...], deny: tuple[str, ...]) -> str:
    only = f"a change only to paths matching {', '.join(allow)}" if allow else ""
    none = f"no change to paths matching {', '.join(deny)}" if deny else ""
    return excerpt(f"{only}, and {none}" if only and none else only or none, 400)


def _named(paths: list[str], expected: str) -> list[Fact]:
    facts = [Fact(where=f"file {shown(path)}", expected=expected, actual="changed by the patch")
             for path in paths[:SHOWN]]  # fmt: skip
    if len(paths) > SHOWN:
        more = f"{len(paths) - SHOWN} more files like these changed by the patch"
        facts.append(Fact(where="the change", expected=expected, actual=more))
    return facts


def shown(path: str) -> str:
    """``path`` as a fact prints it: as it is when every character shows as itself, else in
    double quotes with each other character escaped (a byte that is not UTF-8 as ``\\xNN``),
    so no name can hide, reorder or break the line it is printed on."""
    if path.isprintable() and path == path.strip() and not any(c in _ESCAPES for c in path):
        return excerpt(path, 300)
    out = []
    for c in path:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif "\udc80" <= c <= "\udcff":  # a byte git's name holds that is not UTF-8
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        elif c.isprintable():
            out.append(c)
        else:
            out.append(f"\\u{ord(c):04x}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08x}")
    return excerpt('"' + "".join(out) + '"', 300)


CHANGED_FILES = CheckSpec(
    name=NAME,
    summary="the paths a coding item's change touches must match allow and none of deny",
    params=ChangedFilesParams,
    build=_build,
)
