"""Google's archived GPT-4 IFEval run, as the ifeval pack's tests use it, and the guard they
start with: the ``ifeval`` extra is needed; outside CI its absence skips the module, in CI
(where the Makefile installs it) it is a failure, so the agreement tests cannot vanish."""

from __future__ import annotations

import os
from importlib.util import find_spec
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "ifeval"
INPUTS = DATA / "input_data_gpt4_20231107_145030.jsonl"
RESPONSES = DATA / "input_response_data_gpt4_20231107_145030.jsonl"
# The prompts whose official checker draws a letter at random (their "letter" is "#" and "!").
RANDOM_KEYS = {"1122", "1129"}


def need_the_extra() -> None:
    """Skip the calling test module without the ``ifeval`` extra (fail in CI instead)."""
    missing = [m for m in ("lm_eval", "nltk", "punkt", "langdetect") if find_spec(m) is None]
    if not missing:
        return
    if os.environ.get("CI"):
        raise RuntimeError(f"CI installs the ifeval extra, but {', '.join(missing)} is missing")
    said = ", ".join(missing)
    pytest.skip(f"the ifeval extra is not installed ({said})", allow_module_level=True)
