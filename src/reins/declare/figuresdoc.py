"""quest.toml's ``[report]`` table: the quest's own figures for ``reins report``.

``figures = "module:function"`` names a function of :class:`reins.figures.LedgerView` that
returns :class:`reins.figures.Figure` values. It is imported and its signature checked when
the document loads, so a typo fails the first command that loads the quest (at file:line:column),
not the ``report`` at the end of a run; it is called only by ``report``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

from reins.errors import ConfigError, DocumentError

if TYPE_CHECKING:
    from reins.figures import FigureFunction

_FUNCTION = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")
EXPECTED = 'figures = "module:function" (a function of the ledger\'s view, returning figures)'


class Doc(Protocol):
    """What ``[report]`` is read from: :class:`reins.declare.questdoc.Doc` is one."""

    path: str
    text: str
    data: dict[str, Any]

    def get(self, table: str, key: str, kind: type, default: Any) -> Any: ...

    def line_of(self, table: str, key: str = "") -> int: ...


def read_figures(doc: Doc) -> FigureFunction:
    """The function ``[report] figures`` names, imported.

    Raises:
        DocumentError: no ``figures``, not a ``module:function`` string, a module that does
            not import, a name that is not a function, or one that cannot take the view.
    """
    if "figures" not in doc.data["report"]:
        line = doc.line_of("report")
        raise DocumentError(doc.path, line, 1 if line else 0, f"[report] needs {EXPECTED}")
    ref = doc.get("report", "figures", str, "")
    line, column = _position(doc)
    if not _FUNCTION.fullmatch(ref):
        raise DocumentError(doc.path, line, column, f"expected {EXPECTED}, not {ref!r:.80}")
    from reins.declare.refs import import_ref

    try:
        function = import_ref(ref)
    except ConfigError as exc:
        raise DocumentError(doc.path, line, column, f"figures: {exc}") from None
    import inspect

    try:
        inspect.signature(function).bind(object())
    except TypeError:
        raise DocumentError(
            doc.path,
            line,
            column,
            f"figures: {ref} must take one argument, the ledger's view (reins.figures.LedgerView)",
        ) from None
    except ValueError:  # a builtin without a signature: it is called as it is
        pass
    return function


def _position(doc: Doc) -> tuple[int, int]:
    """The line of ``figures =`` and the column (1-based) where its value starts."""
    line = doc.line_of("report", "figures")
    if not line:
        return 0, 0
    text = doc.text.splitlines()[line - 1]
    _, sep, rest = text.partition("=")
    start = len(text) - len(rest) + (len(rest) - len(rest.lstrip()))
    return line, start + 1 if sep else 0
