"""The ``reins`` command line: thin click commands over the library."""

from __future__ import annotations

import sys

from reins._lazy import lazy_names as _lazy_names

TYPE_CHECKING = False  # typing itself costs `reins --version` a fifth of its start
if TYPE_CHECKING:
    from reins.cli.app import make_group
    from reins.cli.forquest import for_quest

VERSION_FLAGS = (["--version"], ["-V"])


def main() -> None:
    """Entry point of the ``reins`` console script."""
    if sys.argv[1:] in VERSION_FLAGS:
        # What click's --version prints, without importing click: that import alone costs
        # twice a bare interpreter's start, and the version needs nothing of it.
        from reins._version import __version__

        print(f"reins, version {__version__}")
        return
    from reins.cli.app import make_group

    make_group()(prog_name="reins")


__all__ = ["for_quest", "main", "make_group"]

__getattr__, __dir__ = _lazy_names(
    "reins.cli",
    {"for_quest": "reins.cli.forquest", "make_group": "reins.cli.app"},
    globals(),
    __all__,
)
