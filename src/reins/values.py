"""The values every layer passes: JSON, a prompt, a completion, a fact, a judge's tree; and text
made printable for a terminal. Nothing of reins imported.

They sit at the bottom so that a backend, a store or a gate can name them without loading any
other layer: ``import reins.backends.base`` must not load sqlite3, the store or turn.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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

    ``temperature`` is the sampling temperature a retry policy declares for this turn
    (``facts@0.8``), None for the backend's own. Like the seed it follows from the log and the
    recorded policy, so a replay composes the same call; a backend that cannot take it per
    call is refused before the run starts (:func:`reins.loop.generator.samples_as_told`).
    """

    system: str
    user: str
    key: str = field(default="", compare=False)
    turn: int = field(default=0, compare=False)
    temperature: float | None = field(default=None, compare=False)

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
    changed: tuple[str, ...] = ()
    """every path the recorded patch touches (both names of a rename), exactly as git has them"""
    target: str = ""
    """the git tree reins computed for the judgment (base, patch, judge's files), which
    ``path`` was proven to hold"""
    sandbox: str = "bwrap"
    """the run's ``--sandbox``: ``none`` lets the judge run unconfined where bubblewrap cannot
    run at all (it is confined wherever it can be, whatever the agent's setting)"""
    tests: tuple[str, ...] = ()
    """the judge's own test files at the base (``[workspace] judge`` and pytest's file names),
    by path from the top: what pytest collects"""
    config: str = ""
    """the base's pytest configuration file among the judge's files (path from the top; "" for
    none): the only configuration pytest reads"""
    python: str = ""
    """the project's interpreter, that the judge's tests run with ("": reins' own)"""
    environment: str = ""
    """the folder of the project's environment its setup built ("": none), read-only to runs"""
    generated: str = ""
    """the folder of the files the setup made in a tree of the base, which every tree holds"""
    plugins: tuple[str, ...] = ()
    """the pytest plugins the project's tests need (``[workspace] plugins``), loaded by name"""
    before: str = ""
    """the patch from the base of what the change goes onto when that is not the base: a land
    merge's integration before it ("": the base); what "passing before" is read on"""


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


# What a terminal must never receive raw: the C0 controls but newline and tab (ESC starts a
# cursor move, a title or a clipboard write; CR overwrites a line), DEL, the C1 controls (an
# 8-bit terminal reads U+009B as CSI), lone surrogates (a surrogateescape stream writes one as
# a raw byte) and every format character (category Cf: bidi overrides and isolates,
# zero-widths, tag characters) that makes a text read otherwise than it is. Cf is listed as of
# Unicode 15.1 (Python 3.11 knows 14.0); tests/test_printable.py checks it against unicodedata.
_UNPRINTABLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)


def _escape(found: re.Match[str]) -> str:
    code = ord(found.group())
    if code < 0x20:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # as JSON writes it: a surrogate pair
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


def printable(text: str) -> str:
    """``text`` safe for a terminal: newlines and tabs kept, every other control or format
    character written as a visible escape (``\\x1b``, ``\\u009b``, ``\\u202e``).

    Whatever a generator wrote reaches people's terminals (``reins log``, a fact's ``actual``, a
    patch, an error quoting it); the CLI writes everything through this. Every escape but a C0
    control's is JSON's own, and JSON never holds a C0 control raw, so a JSON document comes out
    as a document of the same value. Backslashes are left as they are: a text that holds
    ``\\x1b`` as four characters reads the same as one holding ESC, but both are harmless.
    """
    return _UNPRINTABLE.sub(_escape, text)


def unprintable(text: str) -> Iterator[re.Match[str]]:
    """Each character of ``text`` that :func:`printable` escapes, where it is: what a page
    (the dashboard) shows as a visible marker instead, and flags."""
    return _UNPRINTABLE.finditer(text)
