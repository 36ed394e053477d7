"""``python -m reins.cli``: the reins command line, as the ``reins`` script runs it."""

from reins.cli import main

main()
