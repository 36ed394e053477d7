"""``from = "files"``: one item per tracked file of the base whose path matches the globs.

The patterns are those of ``[workspace] judge`` (:mod:`reins.workspace.globs`): one without a
``/`` matches a name in any folder, one with a ``/`` the path from the top, ``**`` any number
of folders. A file matching ``exclude`` is left out. The key and the payload's ``path`` are the
file's path from the top.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from reins.errors import ConfigError
from reins.quest import Seed
from reins.workspace.globs import Globs, check
from reins.workspace.site import BaseTree


@dataclass(frozen=True, slots=True)
class MatchingFiles:
    """The files matching ``include`` and not ``exclude``."""

    include: Sequence[str]
    exclude: Sequence[str] = ()
    kind: str = "files"

    def __post_init__(self) -> None:
        if not self.include:
            raise ConfigError('items from files: give include = ["src/**/*.py"] (one glob or more)')
        for pattern in (*self.include, *self.exclude):
            wrong = check(pattern)
            if wrong is not None:
                raise ConfigError(f"items from files: pattern {pattern!r}: {wrong}")

    def scan(self, tree: BaseTree) -> Iterator[Seed]:
        wanted, unwanted = Globs.of(self.include), Globs.of(self.exclude)
        for path in tree.files():
            if wanted.match(path) and not unwanted.match(path):
                yield Seed(path, {"path": path})
