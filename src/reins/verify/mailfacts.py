"""The facts the emails judgement leaves, shared by the Python ``emails`` quest's rules and the
``emails`` pack's checks, so the two cannot drift apart (both import it from here, below them).

Each function reads the submitted addresses (already stripped) and, where it needs it, the
text. A rule about entries leaves one fact per offending entry, so an answer learns of all its
bad entries at once, not of one per try. ``at`` is where the list sits in the submission
(``addresses`` for the Python quest, whose ``prepare`` unwraps it; ``submission.addresses`` for
the pack's paths).
"""

from __future__ import annotations

from collections.abc import Sequence

from reins.values import JSON, Fact
from reins.verify import mailaddr
from reins.verify.mailaddr import FREE_MAIL


def addresses(given: JSON) -> list[str]:
    """The addresses of a prepared submission: a list of strings (``prepare`` made it one).

    Raises:
        TypeError: the submission is not a list of addresses, so a rule over it fails closed.
    """
    if isinstance(given, list):
        found = [a for a in given if isinstance(a, str)]
        if len(found) == len(given):
            return found
    raise TypeError(f"expected a list of addresses, got {type(given).__name__}")


def syntax(given: Sequence[str], at: str) -> list[Fact]:
    """A fact for each entry that is not one well-formed address."""
    return [
        Fact(where=f"{at}[{i}]", expected="name@domain.tld", actual=address)
        for i, address in enumerate(given)
        if mailaddr.parse(address) is None
    ]


def in_source(given: Sequence[str], source: str, at: str) -> list[Fact]:
    """A fact for each entry that is not a mailbox written whole in the text, saying why not."""
    found = {a.key for a in mailaddr.mailboxes(source)}
    return [
        Fact(
            where=f"{at}[{i}]",
            expected="an address written in the text",
            actual=f"{address}: {mailaddr.why_absent(source, address)}",
        )
        for i, address in enumerate(given)
        if address and mailaddr.key(address) not in found
    ]


def missing(given: Sequence[str], source: str, at: str) -> Fact | None:
    """The mailboxes of the text the submission leaves out, named."""
    keys = {k for a in given if (k := mailaddr.key(a)) is not None}
    left_out = [a for a in mailaddr.addresses(source) if mailaddr.key(a) not in keys]
    if left_out:
        return Fact(
            where=at,
            expected=f"also {', '.join(left_out)}",
            actual=f"{len(given)} address(es), {len(left_out)} missing",
        )
    return None


def duplicate(given: Sequence[str], at: str) -> list[Fact]:
    """A fact for each entry that names a mailbox already listed."""
    seen: set[object] = set()
    out = []
    for i, address in enumerate(given):
        same = mailaddr.key(address) or address
        if same in seen:
            out.append(Fact(where=f"{at}[{i}]", expected="each address once", actual=address))
        seen.add(same)
    return out


def free_mail(given: Sequence[str], at: str) -> Fact | None:
    """The free-mail addresses of the submission, for a person to check."""
    free = [a for a in given if a.rpartition("@")[2].strip().lower() in FREE_MAIL]
    if free:
        return Fact(where=at, expected="organisation addresses", actual=", ".join(free))
    return None
