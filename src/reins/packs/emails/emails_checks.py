"""The emails pack's own checks, called from gate.md through the ``python`` check as
``emails_checks:function`` (the loader puts the pack's folder on ``sys.path``; the module's name
is the pack's so that two packs' checks never share a module name). Each is called as
``function(ctx, params)``; none takes parameters.

The facts are :mod:`reins.verify.mailfacts`', which the Python ``emails`` quest's rules
leave too; what counts as a mailbox of the text, and when two addresses are the same, is
:mod:`reins.verify.mailaddr`'s to say: message
ids, news routes and the users of URLs are not mailboxes, an address is in the text only whole,
the domain is compared without case and the local part with it (RFC 5321), quoting is not part
of a local part (RFC 5322). A submission is ``{"addresses": [...]}`` or a bare list; any other
shape is the ``json-shape`` rule's to report, so these checks then stay silent.
"""

from __future__ import annotations

from collections.abc import Mapping

from reins.gate.rule import Context
from reins.values import Fact
from reins.verify import mailfacts as facts

AT = "submission.addresses"  # where gate.md's paths find the list


def addresses(ctx: Context) -> list[str] | None:
    """The submitted addresses, each stripped of surrounding space; None for another shape."""
    data = ctx.submission
    if isinstance(data, dict) and set(data) == {"addresses"}:
        data = data["addresses"]
    if not isinstance(data, list):
        return None
    given = [a.strip() for a in data if isinstance(a, str)]
    return given if len(given) == len(data) else None


def syntax(ctx: Context, params: Mapping[str, object]) -> list[Fact]:
    return facts.syntax(addresses(ctx) or (), AT)


def in_source(ctx: Context, params: Mapping[str, object]) -> list[Fact]:
    return facts.in_source(addresses(ctx) or (), ctx.source, AT)


def missing(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    given = addresses(ctx)
    return None if given is None else facts.missing(given, ctx.source, AT)


def duplicate(ctx: Context, params: Mapping[str, object]) -> list[Fact]:
    return facts.duplicate(addresses(ctx) or (), AT)


def free_mail(ctx: Context, params: Mapping[str, object]) -> Fact | None:
    return facts.free_mail(addresses(ctx) or (), AT)
