"""Which address a browser connects from: the TCP peer, or, when that peer is a proxy we trust, the address the
proxy says it forwarded for (`X-Forwarded-For`).

Addresses feed the experimenter sign-in lockout and log and the per-address cap on held items. A header is only
as good as whoever wrote it: anybody can send `X-Forwarded-For`, so it is read only when the connection comes
from a proxy named in `ROSE_TRUSTED_PROXIES` (addresses or networks, comma-separated; default: none). Streamlit's
`st.context.ip_address` is None for a loopback peer; this module's answer is then `LOOPBACK`, one address that
every loopback client shares: behind a reverse proxy on this host that is not named in `ROSE_TRUSTED_PROXIES`,
all its browsers are one client, capped together, never uncapped.

The app server (uvicorn) has its own version of this rule, on by default for loopback peers; the launchers switch
it off (`FORWARDED_ALLOW_IPS` set empty, `UVICORN_PROXY_ENV`) so that this module sees the real peer and is the
only place that decides.
"""
from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import Mapping, Sequence

TRUSTED_PROXIES_ENV = "ROSE_TRUSTED_PROXIES"
UVICORN_PROXY_ENV = "FORWARDED_ALLOW_IPS"
LOOPBACK = "loopback"  # every client that connects over loopback, as one address (127.0.0.0/8 and ::1)
_LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class ProxyConfigError(ValueError):
    """ROSE_TRUSTED_PROXIES names something that is not an address or a network."""


@dataclass(frozen=True)
class TrustedProxies:
    """The proxies whose `X-Forwarded-For` is believed."""

    networks: tuple[Network, ...] = ()

    def trusts(self, address: str | None) -> bool:
        """`address` None is a loopback peer (as Streamlit reports it)."""
        if address is None:
            return any(net.overlaps(lo) for net in self.networks for lo in _LOOPBACK if net.version == lo.version)
        ip = _ip(address)
        return ip is not None and any(ip in net for net in self.networks)


def trusted_proxies(value: str | None) -> TrustedProxies:
    """Parse `ROSE_TRUSTED_PROXIES`: e.g. `127.0.0.1`, `10.0.0.5, 10.0.1.0/24, ::1`; empty or unset: none."""
    nets: list[Network] = []
    for k, raw in enumerate((value or "").split(","), start=1):
        entry = raw.strip()
        if not entry:
            continue
        try:
            nets.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ProxyConfigError(
                f"{TRUSTED_PROXIES_ENV}: entry {k} {entry!r} is not an IP address or network (expected e.g. "
                f"'127.0.0.1' or '10.0.0.0/24', comma-separated)") from None
    return TrustedProxies(tuple(nets))


def trusted_proxies_from_env(env: Mapping[str, str] | None = None) -> TrustedProxies:
    return trusted_proxies((os.environ if env is None else env).get(TRUSTED_PROXIES_ENV))


def client_address(peer: str | None, forwarded_for: Sequence[str], trusted: TrustedProxies) -> str:
    """The browser's address. `peer`: the connection's TCP peer (None: loopback); `forwarded_for`: every
    `X-Forwarded-For` header value, in order. Walking from the right (each proxy appends the address it received
    the request from), every hop that is a trusted proxy hands over to the address it wrote; the first hop that
    is not trusted is the client. An entry that is not an IP address ends the walk at the proxy that wrote it.
    Loopback addresses come back as `LOOPBACK`: not None, which the per-address hold cap and the sign-in
    lockout would read as "no address" and skip."""
    address = peer
    hops = [h.strip() for value in forwarded_for for h in value.split(",")]
    for hop in reversed(hops):
        if not trusted.trusts(address):
            break
        ip = _ip(hop)
        if ip is None:
            break
        address = str(ip)
    return LOOPBACK if address is None or _is_loopback(address) else address


def uvicorn_rewrites_addresses(env: Mapping[str, str] | None = None) -> bool:
    """True when the app server itself takes client addresses from `X-Forwarded-For` (uvicorn's default for
    loopback peers, unless `FORWARDED_ALLOW_IPS` is set): then this module never sees the real peer."""
    value = (os.environ if env is None else env).get(UVICORN_PROXY_ENV)
    return value is None or value.strip() != ""


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _is_loopback(address: str) -> bool:
    ip = _ip(address)
    return ip is not None and ip.is_loopback
