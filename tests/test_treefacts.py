"""Links are followed as the kernel follows them: ``treefacts.resolve``, which reads a tree's
links from git's entries, agrees with the file system itself on where every link leads."""

from __future__ import annotations

import errno
import os
import tempfile

from hypothesis import given, settings
from hypothesis import strategies as st

from reins.workspace.treefacts import escaping, resolve

NAMES = ("a", "b", "c", "d")
STEPS = st.sampled_from([".", "..", *NAMES])
TARGETS = st.lists(STEPS, min_size=1, max_size=5).map("/".join)


def kernel_escapes(top: str, name: str) -> bool:
    """Whether the link ``name`` of the folder ``top`` leads out of it, as the kernel says (a
    loop counts as out: the judge cannot read through it either)."""
    try:
        os.stat(os.path.join(top, name))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return True
    real = os.path.realpath(os.path.join(top, name))
    return not (real == top or real.startswith(top + os.sep))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES), TARGETS, min_size=1))
def test_where_a_link_leads_is_where_the_kernel_says(links: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        top = os.path.realpath(os.path.join(scratch, "tree"))
        os.mkdir(top)
        for name in NAMES:  # each name a folder or a link, so every step of a path exists
            if name in links:
                os.symlink(links[name], os.path.join(top, name))
            else:
                os.mkdir(os.path.join(top, name))
        for name in links:
            out, said = kernel_escapes(top, name), resolve(name, links) is None
            # never inside where the kernel leads out; out where it does not only for a link
            # that leads nowhere the kernel can read (through a folder that is not there)
            assert said == out or (said and not os.path.exists(os.path.join(top, name))), (
                name, links)  # fmt: skip
        outward = {n for n in links if kernel_escapes(top, n)}
        dangling = {n for n in links if not os.path.exists(os.path.join(top, n))}
        assert outward <= set(escaping(links, links)) <= outward | dangling


def test_an_absolute_target_and_a_chain_that_climbs_out_lead_out() -> None:
    links = {"d": ".", "esc": "d/../x", "abs": "/etc/passwd", "ok": "d/calc.py"}
    assert resolve("esc", links) is None and resolve("abs", links) is None
    assert resolve("ok", links) == "calc.py"
    assert resolve("loop", {"loop": "loop"}) is None
