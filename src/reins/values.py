"""The values every layer passes: JSON, a prompt, a completion, a fact, a judge's tree. Nothing of
reins imported.

They sit at the bottom so that a backend, a store or a gate can name them without loading any
other layer: ``import reins.backends.base`` must not load sqlite3, the store or turn.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

JSON: TypeAlias = bool | int | float | str | list["JSON"] | dict[str, "JSON"] | None
"""A JSON value as ``json.loads`` returns it: an item's payload, a decoded submission, a seed.

Named once so that every layer says the same thing. It is a type, not a check: nothing
validates a value against it at run time (the data is validated where it enters).
"""


@dataclass(frozen=True, slots=True)
class Prompt:
    """What a generator is asked: system text and user text.

    ``system`` is the shared prefix: what every prompt of a quest carries in the same bytes
    (the manual, the worked examples), and nothing that depends on the item or its log, which
    is all in ``user``. A backend may therefore place a provider's prompt-cache marker at the
    end of ``system`` without looking inside either text; ``text()`` puts it first.

    ``key`` and ``turn`` say which item and turn it was composed for (empty and 0 for a
    prompt built by hand). They are not part of the text: two prompts are equal when their
    texts are.
    """

    system: str
    user: str
    key: str = field(default="", compare=False)
    turn: int = field(default=0, compare=False)

    def text(self) -> str:
        """The prompt as one text, as ``reins next`` prints it."""
        if not self.system:
            return self.user
        return f"{self.system}\n\n{self.user}"

    def digest(self) -> str:
        """A short fingerprint, recorded on each attempt."""
        import hashlib  # here, not at import: `reins next` prints text and needs no digest

        data = self.system.encode("utf-8", "surrogatepass")
        data += b"\x00" + self.user.encode("utf-8", "surrogatepass")
        return hashlib.sha256(data).hexdigest()[:16]

    @property
    def seed(self) -> int:
        """The seed of the backend call for this prompt: :func:`call_seed` of key and turn."""
        return call_seed(self.key, self.turn)


def call_seed(key: str, turn: int) -> int:
    """The sampling seed for turn ``turn`` of item ``key``: the same in every process.

    A hash (BLAKE2b), never Python's salted ``hash()``, cut to 31 bits so that every backend
    takes it (some keep seeds in a signed 32-bit integer, llama.cpp reads 0xFFFFFFFF as
    "random").
    """
    import hashlib

    digest = hashlib.blake2b(f"{key}\x00{turn}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & 0x7FFF_FFFF


@dataclass(frozen=True, slots=True)
class Completion:
    """One generation: the text, the model that wrote it, and its usage when known.

    ``input_tokens`` counts every prompt token the provider billed, whatever its own
    convention (docs/backends.md says each one's). ``cache_read_tokens`` and
    ``cache_write_tokens`` are the part of them read from and written to the provider's prompt
    cache, as the provider reports them (None: it said nothing). ``batch`` says the call went
    through the provider's batch API, billed at its batch price. ``cost`` is what the call was
    billed; ``list_cost`` what the same tokens cost at the provider's list price, with no batch
    discount and every input token at the uncached rate (None: the same as ``cost``).
    """

    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency: float | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    batch: bool = False
    list_cost: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Fact:
    """A located, checkable statement left by a rule that fired. ``rule`` is stamped by the gate.

    ``level`` is what this one fact weighs (``"FAIL"`` or ``"REVIEW"``); empty means the rule's
    level. A rule may leave several facts of different weights (an instruction that fails its
    strict reading is FAIL, one that passes only its loose reading is REVIEW), and the gate
    never lets a fact weigh more than its rule's level.
    """

    where: str
    expected: str
    actual: str
    rule: str = ""
    level: str = ""

    def to_dict(self) -> dict[str, str]:
        data = {
            "rule": self.rule,
            "where": self.where,
            "expected": self.expected,
            "actual": self.actual,
        }
        if self.level:
            data["level"] = self.level
        return data


@dataclass(frozen=True, slots=True)
class JudgeTree:
    """The tree a coding item's gate judges in, as a turn hands it to the gate.

    reins built it, not the agent: ``path`` (absolute) holds the ``base`` commit, the recorded
    patch applied to it, the judge's own files taken from the base and the ``hidden`` tests
    copied in. ``facts`` are what reins found in the patch as it built the tree (a judge's file
    changed, a link out of the tree); each is a FAIL. ``branch`` is the item's branch, ``root``
    the folder of reins' own for the quest (its base store, its other trees). ``runs`` holds
    what checks of one judgment share (one pytest run read by several rules), never compared.
    """

    path: str
    base: str
    branch: str
    root: str
    hidden: str | None = None
    facts: tuple[Fact, ...] = ()
    runs: dict[tuple[str, ...], object] = field(default_factory=dict, compare=False)


def readable_json(value: object) -> str:
    """``value`` as compact JSON that keeps Unicode readable where UTF-8 can carry it.

    A lone surrogate (a generator's hostile output, decoded from an escape) cannot be written
    as UTF-8; then the whole document is written with ASCII escapes, which lose nothing.
    """
    import json

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text
