"""The ``reins`` command line: thin click commands over the library."""

from __future__ import annotations

from reins.cli.app import for_quest, make_group


def main() -> None:
    """Entry point of the ``reins`` console script."""
    make_group()(prog_name="reins")


__all__ = ["for_quest", "main", "make_group"]
