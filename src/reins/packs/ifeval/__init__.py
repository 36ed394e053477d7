"""The ifeval pack: the 541 IFEval prompts judged by Google's official checkers.

The documents (``quest.toml``, ``gate.md``) and the prompts (``items.jsonl``) sit beside this
module; :mod:`reins.packs.ifeval.checks` is the check every rule calls.

:func:`offline_nltk` is public: it puts NLTK's English sentence splitter where NLTK finds it,
with no download, for any NLTK-based checker a user wraps (IFBench's, say).
"""

from reins.packs.ifeval.official import offline_nltk

__all__ = ["offline_nltk"]
