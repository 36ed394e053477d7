"""The ifeval pack: the 541 IFEval prompts judged by Google's official checkers.

The documents (``quest.toml``, ``gate.md``) and the prompts (``items.jsonl``) sit beside this
module; :mod:`reins.packs.ifeval.checks` is the check every rule calls.
"""
