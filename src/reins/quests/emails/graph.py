"""The e-mail quest's defeat graph: a malformed address explains why it is not in the text.

Edges: ``address-syntax`` supersedes ``address-in-source`` (and ``address-mx``), since an address
that is not well formed cannot be found verbatim or have a domain worth looking up; a
``json-shape`` rule, when one is given, supersedes every other rule. ``free-mail`` stays a REVIEW
counter. With ``mx=True`` one more FAIL counter, ``address-mx``, reads the MX ground of every
domain; it is judged only when no cheaper FAIL already decides the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

from reins.errors import ConfigError
from reins.gate import Context, Fact, Level, Rule, rule
from reins.gate.graph import Graph
from reins.gate.ground import Resolver, Snapshot, require_dnspython
from reins.verify.mailfacts import addresses

MX = "mx"
REQUIRED = ("address-syntax", "address-in-source", "free-mail")


def domains(ctx: Context) -> list[str]:
    """The domains of the submitted addresses, lower-cased, each once.

    Raises:
        TypeError: the submission is not a list of addresses (the MX ground then fails closed).
    """
    found = (a.rpartition("@")[2].strip().lower() for a in addresses(ctx.submission) if "@" in a)
    return list(dict.fromkeys(d for d in found if d))


def mx_ground(ctx: Context, snapshot: Snapshot) -> dict[str, bool]:
    """Domain → whether it has an MX record, for every domain of the submission."""
    return {domain: snapshot.mx(domain) for domain in domains(ctx)}


@rule("address-mx", Level.FAIL, "every address's domain accepts mail (has an MX record)")
def address_mx(ctx: Context) -> list[Fact]:
    """A fact for each address whose domain has no MX record."""
    records = ctx.grounds[MX]
    out = []
    for i, address in enumerate(addresses(ctx.submission)):
        domain = address.rpartition("@")[2].strip().lower()
        if domain and not records[domain]:
            out.append(
                Fact(
                    where=f"addresses[{i}]",
                    expected="a domain that accepts mail (an MX record)",
                    actual=f"{address}: {domain} has no MX record",
                )
            )
    return out


def build_graph(
    rules: Sequence[Rule], *, mx: bool = False, resolver: Resolver | None = None
) -> Graph:
    """The quest's graph gate over ``rules`` (looked up by id; others join as plain counters).

    Args:
        mx: add the ``address-mx`` counter and its MX ground (off by default: it is slow and
            needs the network, or a ``resolver`` that fakes it).
        resolver: what the MX ground is looked up through; dnspython when None.

    Raises:
        ConfigError: a required rule is missing, ``free-mail`` is not a REVIEW rule, or ``mx``
            is on with no resolver and dnspython is not installed.
    """
    ids = [r.id for r in rules]
    absent = [i for i in REQUIRED if i not in ids]
    if absent:
        raise ConfigError(
            f"emails graph: no rule {', '.join(absent)} among {', '.join(ids) or 'no rules'}"
        )
    if next(r for r in rules if r.id == "free-mail").level is not Level.REVIEW:
        raise ConfigError("emails graph: free-mail must be a REVIEW rule")
    supersedes: dict[str, list[str]] = {"address-syntax": ["address-in-source"]}
    if "json-shape" in ids:
        supersedes["json-shape"] = [i for i in ids if i != "json-shape"]
    if not mx:
        return Graph.from_rules(rules, supersedes=supersedes, resolver=resolver)
    if address_mx.id in ids:
        raise ConfigError(f"emails graph: {address_mx.id} is added by mx=True; do not pass it")
    if resolver is None:
        require_dnspython()
    supersedes["address-syntax"].append(address_mx.id)
    if "json-shape" in supersedes:
        supersedes["json-shape"].append(address_mx.id)
    return Graph.from_rules(
        [*rules, address_mx],
        supersedes=supersedes,
        needs={address_mx.id: [MX]},
        grounds={MX: mx_ground},
        resolver=resolver,
    )
