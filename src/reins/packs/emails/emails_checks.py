"""The emails pack's own checks, called from gate.md through the ``python`` check as
``emails_checks:function`` (the loader puts the pack's folder on ``sys.path``; the module's name
is the pack's so that two packs' checks never share a module name). Each is called as
``function(ctx, params)``; none takes parameters.

What counts as a mailbox of the text, and when two addresses are the same, is
:mod:`reins.verify.mailaddr`'s to say (the Python ``emails`` quest judges with it too): message
ids, news routes and the users of URLs are not mailboxes, an address is in the text only whole,
the domain is compared without case and the local part with it (RFC 5321), quoting is not part
of a local part (RFC 5322). A submission is ``{"addresses": [...]}`` or a bare list; any other
shape is the ``json-shape`` rule's to report, so these checks then stay silent.
"""

from __future__ import annotations

from collections.abc import Mapping

from reins.gate.rule import Context
from reins.values import Fact
from reins.verify import mailaddr
from reins.verify.mailaddr import FREE_MAIL


def addresses(ctx: Context) -> list[str] | None:
    """The submitted addresses, each stripped of surrounding space; None for another shape."""
    data = ctx.submission
    if isinstance(data, dict) and set(data) == {"addresses"}:
        data = data["addresses"]
    if not isinstance(data, list) or not all(isinstance(a, str) for a in data):
        return None
    return [a.strip() for a in data]


def syntax(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """The first entry that is not one well-formed address."""
    for i, address in enumerate(addresses(ctx) or ()):
        if mailaddr.parse(address) is None:
            return Fact(where=_at(i), expected="name@domain.tld", actual=address)
    return None


def in_source(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """The first entry that is not a mailbox written whole in the text, and why not."""
    found = {a.key for a in mailaddr.mailboxes(ctx.source)}
    for i, address in enumerate(addresses(ctx) or ()):
        if address and mailaddr.key(address) not in found:
            return Fact(
                where=_at(i),
                expected="an address written in the text",
                actual=f"{address}: {mailaddr.why_absent(ctx.source, address)}",
            )
    return None


def missing(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """The mailboxes of the text the submission leaves out, named."""
    given = addresses(ctx)
    if given is None:
        return None
    keys = {k for a in given if (k := mailaddr.key(a)) is not None}
    left_out = [a for a in mailaddr.addresses(ctx.source) if mailaddr.key(a) not in keys]
    if left_out:
        return Fact(
            where="submission.addresses",
            expected=f"also {', '.join(left_out)}",
            actual=f"{len(given)} address(es), {len(left_out)} missing",
        )
    return None


def duplicate(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """The first entry that names a mailbox already listed."""
    seen: set[object] = set()
    for i, address in enumerate(addresses(ctx) or ()):
        same = mailaddr.key(address) or address
        if same in seen:
            return Fact(where=_at(i), expected="each address once", actual=address)
        seen.add(same)
    return None


def free_mail(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    """The free-mail addresses of the submission, for a person to check."""
    free = [a for a in addresses(ctx) or () if a.rpartition("@")[2].lower() in FREE_MAIL]
    if free:
        return Fact(
            where="submission.addresses",
            expected="organisation addresses",
            actual=", ".join(free),
        )
    return None


def _at(i: int) -> str:
    return f"submission.addresses[{i}]"
