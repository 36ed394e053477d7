"""Agreement between reviewers: for each pair of people who decided the same answer, how many
such answers, how many they decided alike, and the items they split on.

**A decision** is a person's last ``accept`` or ``reject`` of an item in a round. A round's
answer does not change until the item is reopened (a re-judge back to REVIEW keeps it), so
two people's decisions in one round are two readings of one answer; decisions in different
rounds judged different answers and are not paired. One a person later undid still counts
(the undo sent the item back to the queue, it did not record a change of mind: a person who
changed their mind decided again, and their later word counts). A drop, a reopen and an
applied re-judge are actions, not readings of the answer, and are not counted.

Read through the store's index of a person's actions (:meth:`Store.decisions
<reins.store.protocol.Store.decisions>`), a page at a time, newest first, at most
:data:`MOST_READ` of them: the figures cost what people did, not what the ledger holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from reins.store.protocol import Store

MOST_READ = 10_000  # the newest actions read (about 0.2 s on SQLite); past it the page says so
PAGE = 500
MOST_SPLITS = 50  # items listed per pair as split on (the count says how many in all)
JUDGING = ("accept", "reject")


@dataclass(frozen=True, slots=True)
class Split:
    """An answer two people decided differently: the item, its round, each one's action,
    and the later of the two decisions' turn (the item page's anchor)."""

    key: str
    round: int
    first: str
    second: str
    turn: int


@dataclass(frozen=True, slots=True)
class Pair:
    """Two people (by name, in order), how many answers both decided, how many alike, and
    the splits (at most :data:`MOST_SPLITS`, the newest first)."""

    first: str
    second: str
    both: int
    agreed: int
    splits: tuple[Split, ...]

    @property
    def split(self) -> int:
        return self.both - self.agreed

    @property
    def percent(self) -> int:
        return round(100 * self.agreed / self.both) if self.both else 0


@dataclass(frozen=True, slots=True)
class Agreement:
    """Every pair that decided an answer in common (the most answers first), how many of
    people's actions were read, and whether the cap (``most``) stopped the reading."""

    pairs: tuple[Pair, ...]
    read: int
    capped: bool
    most: int


def agreement(store: Store, *, page: int = PAGE, most: int = MOST_READ) -> Agreement:
    """The agreement figures of the newest ``most`` of people's actions."""
    # (key, round) -> person -> (action, turn): the newest seen first, so the first kept is
    # the person's last word in that round.
    answers: dict[tuple[str, int], dict[str, tuple[str, int]]] = {}
    read, before, capped = 0, None, False
    while True:
        found = store.decisions(before=before, limit=min(page, most - read))
        for a in found.attempts:
            if a.action in JUDGING:
                answers.setdefault((a.key, a.round), {}).setdefault(a.driver, (a.action, a.turn))
        read += len(found.attempts)
        if found.next is None:
            break
        if read >= most:
            capped = True
            break
        before = found.next
    return Agreement(_pairs(answers), read, capped, most)


def _pairs(answers: dict[tuple[str, int], dict[str, tuple[str, int]]]) -> tuple[Pair, ...]:
    counts: dict[tuple[str, str], list[int]] = {}
    splits: dict[tuple[str, str], list[Split]] = {}
    for (key, round_), people in answers.items():  # newest answers first (dicts keep order)
        for one, two in combinations(sorted(people), 2):
            (said, at), (other, later) = people[one], people[two]
            count = counts.setdefault((one, two), [0, 0])
            count[0] += 1
            if said == other:
                count[1] += 1
            elif len(found := splits.setdefault((one, two), [])) < MOST_SPLITS:
                found.append(Split(key, round_, said, other, max(at, later)))
    pairs = [
        Pair(one, two, both, agreed, tuple(splits.get((one, two), ())))
        for (one, two), (both, agreed) in counts.items()
    ]
    return tuple(sorted(pairs, key=lambda p: (-p.both, p.first, p.second)))
