"""The reviewer's desk: what a review card adds to an item's text, submission and facts.

- **Marks**: a fact's ``actual`` where it occurs in the item's text or the submission, so the
  value that raised the doubt stands out where it was found (:func:`marked`).
- **The rules**: each fact's rule with the level its facts were raised at (a FAIL rule's fact
  may weigh only REVIEW), its description in words (a code reference apart), and the coaching
  the quest gives a generator after a FAIL on it, only where a fact was raised at FAIL
  (:func:`rule_notes`).
- **What a decision does**: Accept locks PASS, Reject locks DONE; either can be undone by
  whoever decided for :data:`UNDO_WINDOW` seconds (their ``undo``, recorded as such: the item
  is REVIEW again in the same round, waiting in the queue).
- **Claims**: a person's lease on a REVIEW item (:mod:`reins.store.people`) for
  :data:`CLAIM_TTL` seconds, which others see (who, until when: :func:`clock`).
- **Search**: the words a queue's search was for, marked where a word starts with them
  (:func:`highlighted`).
- **Hidden characters**: a bidirectional control, a zero-width or a control character (those
  :func:`reins.values.printable` escapes for a terminal) would make a text read otherwise than
  it is ("9876-5432-1000" shown as "-6789 0001-2345"): a page shows each as a marker naming it
  (:func:`visible`), the character itself left out, and a card that holds any says so
  (:func:`hidden`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from markupsafe import Markup, escape

from reins.errors import ReinsError
from reins.gate.rule import CatalogEntry
from reins.quest import Quest
from reins.store.model import Attempt, Item
from reins.values import Fact, unprintable

UNDO_WINDOW = 600.0  # seconds after a decision during which its banner offers to undo it
CLAIM_TTL = 1800.0  # seconds a claim lasts unless renewed, released or ended by a decision
MOST_MARKS = 200  # marks in one text: a value that occurs everywhere marks nothing useful
SHORTEST = 2  # characters a value needs to be marked (a lone letter would mark every word)


@dataclass(frozen=True, slots=True)
class Part:
    """A run of a text, ``hit`` when it is a flagged value, ``found`` when it is a word the
    queue's search was for."""

    text: str
    hit: bool = False
    found: bool = False


@dataclass(frozen=True, slots=True)
class RuleNote:
    """A rule behind the facts: its id, the ``level`` its facts were raised at (``counts``: the
    rule's own level, when it is another), its ``description`` in words with its code
    ``reference`` apart ("" for none), and the coaching the quest gives a generator after a
    FAIL on it, only when one of its facts was raised at FAIL (else None)."""

    rule: str
    level: str
    description: str
    coaching: str | None
    counts: str = ""
    reference: str = ""


@dataclass(frozen=True, slots=True)
class Hold:
    """Who holds a live claim on an item, and until when (a Unix time)."""

    owner: str
    until: float


def marked(text: str, facts: Iterable[Fact]) -> tuple[Part, ...]:
    """``text`` in runs, each occurrence of a fact's ``actual`` a hit (the longest first)."""
    values = sorted({f.actual.strip() for f in facts} - {""}, key=len, reverse=True)
    values = [v for v in values if len(v) >= SHORTEST]
    if not values or not text:
        return (Part(text),)
    pattern = re.compile("|".join(map(re.escape, values)))
    parts: list[Part] = []
    at = 0
    for n, found in enumerate(pattern.finditer(text)):
        if n >= MOST_MARKS:
            break
        if found.start() > at:
            parts.append(Part(text[at : found.start()]))
        parts.append(Part(found.group(0), hit=True))
        at = found.end()
    parts.append(Part(text[at:]))
    return tuple(p for p in parts if p.text)


def highlighted(parts: tuple[Part, ...], searched: Iterable[str]) -> tuple[Part, ...]:
    """``parts`` with each searched word marked ``found`` where a word of the text starts with
    it, in any case: where the store's search found it (:mod:`reins.store.search`)."""
    wanted = sorted(set(searched) - {""}, key=len, reverse=True)
    if not wanted:
        return parts
    # A word starts where no letter or digit comes before (the search's own reading of words).
    pattern = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, wanted)) + ")", re.I)
    out: list[Part] = []
    for part in parts:
        at = 0
        for n, hit in enumerate(pattern.finditer(part.text)):
            if n >= MOST_MARKS:
                break
            if hit.start() > at:
                out.append(Part(part.text[at : hit.start()], part.hit))
            out.append(Part(hit.group(0), part.hit, found=True))
            at = hit.end()
        if at < len(part.text) or not at:
            out.append(Part(part.text[at:], part.hit))
    return tuple(p for p in out if p.text)


def rule_notes(quest: Quest | None, last: Attempt | None) -> tuple[RuleNote, ...]:
    """The rules of ``last``'s facts (its root cause first), as the quest's catalog says
    them; nothing without the quest."""
    if quest is None or last is None:
        return ()
    named = [f.rule for f in last.facts if f.rule]
    if last.root_cause:
        named.insert(0, last.root_cause)
    catalog = {e.id: e for e in quest.judge.catalog()}
    notes = []
    for rule in dict.fromkeys(named):
        entry = catalog.get(rule)
        own = entry.level.value if entry is not None else "?"
        # The gate stamps each fact with the level it counts at; an older ledger's are blank.
        raised = {f.level for f in last.facts if f.rule == rule and f.level}
        level = ("FAIL" if "FAIL" in raised else "REVIEW") if raised else own
        said, reference = described(entry) if entry is not None else ("not in the current gate", "")
        coaching = (quest.coaching or {}).get(rule) if level == "FAIL" else None
        counts = own if own not in (level, "?") else ""
        notes.append(RuleNote(rule, level, said, coaching, counts, reference))
    return tuple(notes)


_REFERENCE = re.compile(r"`([^`\n]+)`:\s*(\S.*)", re.S)


def described(entry: CatalogEntry) -> tuple[str, str]:
    """A rule's description in words, and the code it names apart: a description that starts
    with a code reference ("`punctuation:no_comma`: no comma anywhere") is split there; a
    declared rule given none (its check and parameters as written) is its check's summary."""
    text = entry.description
    if entry.check:
        from reins.declare.rules import default_description

        if text == default_description(entry.check, entry.parameters):
            return _summary(entry.check, entry.parameters) or text, text
    found = _REFERENCE.fullmatch(text)
    if found is not None:
        return found.group(2).replace("`", ""), found.group(1)
    return text.replace("`", ""), ""


def _summary(check: str, parameters: str) -> str | None:
    """What a library check does, in its own summary's words; a ``python`` check's function
    says it in its docstring's first paragraph (the summary only says it is a function)."""
    from reins.checks import spec_of

    try:
        summary = spec_of(check).summary
    except ReinsError:
        return None
    if check != "python":
        return summary
    try:
        import inspect
        import tomllib

        from reins.checks.python import load

        given = tomllib.loads(f"t = {{ {parameters} }}")["t"]
        doc = inspect.getdoc(load(str(given["function"]))) or ""
    except (ReinsError, ValueError, KeyError, TypeError):
        return None
    first = " ".join(doc.split("\n\n", 1)[0].split()).replace("`", "")
    return first or None


def visible(text: object) -> Markup:
    """``text`` for a page, escaped, each hidden character a marker that names it (``U+202E``,
    its name on hover) in its place; the character itself is left out, so it acts on nothing
    around it."""
    said = "" if text is None else str(text)
    out: list[Markup] = []
    at = 0
    for found in unprintable(said):
        out += [escape(said[at : found.start()]), _marker(found.group())]
        at = found.end()
    out.append(escape(said[at:]))
    return Markup("").join(out)


def _marker(char: str) -> Markup:
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")  # a control character has none
    title = f"{name} ({code}): a hidden character" if name else f"{code}: a hidden character"
    return Markup('<span class="hidden-char" title="{}">{}</span>').format(title, code)


def hidden(*texts: str | None) -> int:
    """How many hidden characters ``texts`` hold (each shown by :func:`visible` as a marker)."""
    return sum(sum(1 for _ in unprintable(t)) for t in texts if t)


def fact_texts(facts: Iterable[Fact]) -> list[str]:
    """What a page shows of ``facts``: each one's rule, where, expected and actual."""
    return [t for f in facts for t in (f.rule, f.where, f.expected, f.actual)]


def clock(when: float) -> str:
    """A Unix time as the time of day, UTC: ``14:03 UTC``."""
    return datetime.fromtimestamp(when, UTC).strftime("%H:%M UTC")


def hold(item: Item, now: float) -> Hold | None:
    """The live claim on ``item``, if any (a lease on a REVIEW item is a person's claim)."""
    if item.lease_owner is None or (item.lease_expires or 0) <= now:
        return None
    return Hold(item.lease_owner, item.lease_expires or now)
