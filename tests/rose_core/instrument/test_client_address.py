"""Whose X-Forwarded-For is believed: only a trusted proxy's, walking back over trusted proxies only."""
import pytest

from rose_core.instrument.client_address import (
    LOOPBACK, ProxyConfigError, TrustedProxies, client_address, trusted_proxies, trusted_proxies_from_env, uvicorn_rewrites_addresses,
)

NONE = TrustedProxies()
LOCAL_PROXY = trusted_proxies("127.0.0.1")


def test_default_trusts_no_proxy_so_a_header_changes_nothing():
    assert trusted_proxies_from_env({}) == NONE == trusted_proxies("") == trusted_proxies(" , ")
    assert client_address("198.51.100.4", ["203.0.113.9"], NONE) == "198.51.100.4"
    assert client_address(None, ["203.0.113.9"], NONE) == LOOPBACK      # loopback peer, header ignored


def test_a_trusted_proxy_hands_over_to_the_address_it_appended():
    # HAProxy on this host (`option forwardfor`): the peer is loopback, the header names the browser.
    assert client_address(None, ["203.0.113.9"], LOCAL_PROXY) == "203.0.113.9"
    assert client_address("127.0.0.1", ["203.0.113.9"], LOCAL_PROXY) == "203.0.113.9"


def test_what_a_client_wrote_before_the_proxy_appended_is_not_believed():
    # The client sent "X-Forwarded-For: 10.9.9.9" itself; the proxy appended the real peer after it.
    assert client_address(None, ["10.9.9.9, 203.0.113.9"], LOCAL_PROXY) == "203.0.113.9"
    assert client_address(None, ["10.9.9.9", "203.0.113.9"], LOCAL_PROXY) == "203.0.113.9"  # separate headers


def test_an_untrusted_peer_cannot_claim_an_address():
    assert client_address("198.51.100.4", ["203.0.113.9"], LOCAL_PROXY) == "198.51.100.4"


def test_a_chain_of_trusted_proxies_is_walked_back_to_the_first_untrusted_hop():
    chain = trusted_proxies("10.0.0.0/24, 127.0.0.1")
    # browser 203.0.113.9 -> TLS terminator 10.0.0.7 -> HAProxy on this host -> app
    assert client_address(None, ["203.0.113.9, 10.0.0.7"], chain) == "203.0.113.9"
    # a forged entry left of the first untrusted hop stays unread
    assert client_address(None, ["1.2.3.4, 203.0.113.9, 10.0.0.7"], chain) == "203.0.113.9"


def test_a_malformed_entry_stops_at_the_proxy_that_wrote_it():
    assert client_address("10.0.0.7", ["unknown"], trusted_proxies("10.0.0.7")) == "10.0.0.7"
    assert client_address("10.0.0.7", ["203.0.113.9, garbage"], trusted_proxies("10.0.0.7")) == "10.0.0.7"
    assert client_address(None, [], LOCAL_PROXY) == LOOPBACK


def test_ipv6_and_loopback_answers():
    v6 = trusted_proxies("::1")
    assert v6.trusts(None) and not LOCAL_PROXY.trusts("::1") and LOCAL_PROXY.trusts(None)
    assert client_address(None, ["2001:db8::7"], v6) == "2001:db8::7"
    assert client_address(None, ["127.0.0.1"], LOCAL_PROXY) == LOOPBACK  # a local browser through the proxy
    assert not NONE.trusts(None) and not NONE.trusts("127.0.0.1")


def test_a_bad_setting_is_refused_with_the_entry_named():
    with pytest.raises(ProxyConfigError, match=r"ROSE_TRUSTED_PROXIES: entry 2 'proxy\.local' is not an IP address"):
        trusted_proxies("127.0.0.1, proxy.local")
    with pytest.raises(ProxyConfigError, match="entry 1 '10.0.0.0/33'"):
        trusted_proxies_from_env({"ROSE_TRUSTED_PROXIES": "10.0.0.0/33"})


def test_uvicorn_rule_is_off_only_when_its_setting_is_empty():
    assert uvicorn_rewrites_addresses({}) and uvicorn_rewrites_addresses({"FORWARDED_ALLOW_IPS": "127.0.0.1"})
    assert not uvicorn_rewrites_addresses({"FORWARDED_ALLOW_IPS": ""})


def test_loopback_clients_share_one_address_so_the_hold_cap_applies():
    """A reverse proxy on this host that is not in ROSE_TRUSTED_PROXIES: every browser arrives over loopback.
    They were all None (no address: the per-address hold cap skipped); they are now one address, capped together."""
    for peer in (None, "127.0.0.1", "127.0.0.5", "::1"):
        assert client_address(peer, ["203.0.113.9"], NONE) == LOOPBACK
    assert client_address("::ffff:198.51.100.4", [], NONE) == "::ffff:198.51.100.4"
