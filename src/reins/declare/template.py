"""Prompt templates: Jinja2's sandboxed environment with ``StrictUndefined``.

The context is ``item`` (the payload) and ``key``. A field the payload lacks is an error, never
an empty string in a prompt. Jinja2 is imported on first use, not when the quest loads: a
``submit`` judges without rendering anything, and agents start reins once per turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from reins.errors import ConfigError, DocumentError
from reins.values import JSON


@dataclass(eq=False)
class Template:
    """A template read from ``path`` (its text starting at ``line``), compiled on first use.

    Args:
        samples: (key, payload) pairs rendered once when the template compiles (the quest's
            examples), so that a field they lack is a load error at the template's position.
    """

    text: str
    path: str
    line: int = 1
    samples: Sequence[tuple[str, JSON]] = ()
    _compiled: Callable[..., str] | None = field(default=None, init=False, repr=False)

    def check(self) -> None:
        """Compile the template and render every sample.

        Raises:
            DocumentError: a syntax error, or a sample that names what it lacks.
        """
        if self._compiled is not None:
            return
        from jinja2 import StrictUndefined, TemplateSyntaxError
        from jinja2.sandbox import SandboxedEnvironment

        env = SandboxedEnvironment(
            undefined=StrictUndefined, keep_trailing_newline=True, autoescape=False
        )
        try:
            compiled = env.from_string(self.text)
        except TemplateSyntaxError as exc:
            raise DocumentError(
                self.path, self.line + (exc.lineno or 1) - 1, 0, f"template: {exc.message}"
            ) from None
        self._compiled = compiled.render
        for key, payload in self.samples:
            try:
                self.render(key, payload)
            except ConfigError as exc:
                raise DocumentError(self.path, self.line, 0, f"example {key!r}: {exc}") from None

    def render(self, key: str, payload: JSON) -> str:
        """The prompt text for one item.

        Raises:
            ConfigError: the template reads a field the payload lacks, or fails otherwise.
        """
        if self._compiled is None:
            self.check()
        assert self._compiled is not None
        try:
            return self._compiled(item=payload, key=key)
        except Exception as exc:  # an UndefinedError, a sandbox refusal, a filter's error
            raise ConfigError(
                f"{self.path}: the template cannot render item {key!r}: {type(exc).__name__}: {exc}"
            ) from None
