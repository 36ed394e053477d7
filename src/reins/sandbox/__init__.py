"""One sandbox for all code reins did not write: the coding agent, the judge's test runs and
the HumanEval harness each describe their run as a :class:`Policy` (what is readable, what is
writable, the network, the processes), and :func:`confine` makes it a bubblewrap sandbox.

Where bubblewrap cannot run, :func:`isolation` and :func:`reaped` give namespaces of a program's
own on the host's file system (network and processes only); a caller uses them only where the
run said ``--sandbox none``, and says so.
"""

from reins.sandbox.bwrap import confine, require, why_not
from reins.sandbox.launch import launched, needed
from reins.sandbox.policy import Policy, interpreter, reins_package
from reins.sandbox.unshare import isolation, reaped

__all__ = [
    "Policy",
    "confine",
    "interpreter",
    "isolation",
    "launched",
    "needed",
    "reaped",
    "reins_package",
    "require",
    "why_not",
]
