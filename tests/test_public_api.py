"""The public API: ``reins.__all__`` is exactly the public names, and imports stay light."""

from __future__ import annotations

import subprocess
import sys

import reins


def test_all_is_sorted_and_exactly_the_public_names() -> None:
    public = {
        n
        for n in vars(reins)
        if not n.startswith("_") and not isinstance(getattr(reins, n), type(sys))
    }
    assert reins.__all__ == sorted(reins.__all__)
    assert set(reins.__all__) == public | {"__version__"}


def test_importing_reins_pulls_in_no_http_client() -> None:
    code = "import sys, reins, reins.cli; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
