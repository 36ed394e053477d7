"""Which addresses a fetch may reach: global unicast only, an IPv4 wrapped in IPv6 included.

The judgement rests on the standard library's own properties (``is_global``, ``is_private``,
``is_site_local``, …). What it adds is unwrapping: an IPv6 address can carry an IPv4 one in
several standard ways, and traffic to it reaches that IPv4 host — 6to4 ``2002:7f00:1::`` is
127.0.0.1 — so the IPv4 address is judged as well.
"""

from __future__ import annotations

import ipaddress

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# the NAT64 prefixes, as integers
_NAT64 = 0x0064_FF9B_0000_0000_0000_0000  # 64:ff9b::/96, the well-known prefix (RFC 6052)
_NAT64_LOCAL = 0x0064_FF9B_0001  # 64:ff9b:1::/48, the local-use prefix (RFC 8215)


def forbidden(ip: Address) -> str:
    """The kind of non-public address ``ip`` is, or "" for a global unicast address.

    An IPv6 address that carries an IPv4 one (mapped, compatible, 6to4, NAT64, Teredo) reaches
    that IPv4 host, so the IPv4 address is judged first, then the IPv6 address itself: both must
    be global unicast.
    """
    inner = embedded(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    if inner is not None and (kind := forbidden(inner)):
        return kind
    for kind, flag in (
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("site-local", getattr(ip, "is_site_local", False)),  # IPv6 only: fec0::/10
        ("multicast", ip.is_multicast),
        ("unspecified", ip.is_unspecified),
        ("reserved", ip.is_reserved),
        ("private", ip.is_private),
    ):
        if flag:
            return kind
    return "" if ip.is_global else "non-global"


def embedded(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address wraps, or None."""
    if ip.ipv4_mapped is not None:  # ::ffff:a.b.c.d
        return ip.ipv4_mapped
    if ip.sixtofour is not None:  # 2002:AABB:CCDD::/48
        return ip.sixtofour
    if ip.teredo is not None:  # 2001::/32: (server, client); traffic goes to the client
        return ip.teredo[1]
    if int(ip) >> 32 == _NAT64 or int(ip) >> 80 == _NAT64_LOCAL:  # IPv4 in the low 32 bits
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if int(ip) >> 32 == 0 and int(ip) > 1:  # ::a.b.c.d, deprecated "IPv4-compatible"
        return ipaddress.IPv4Address(int(ip))
    return None
