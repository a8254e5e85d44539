"""The one answer to "is this host this machine's loopback?" for every server and client
the project starts (the policy server, the web table, Ray): 127.0.0.0/8, ``::1`` and
``localhost`` are; anything else (an outside address, a name) is not."""
from __future__ import annotations

import ipaddress


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` (an IP address, ``[::1]``, or ``localhost``) is on the loopback.

    No name is resolved: a host name other than ``localhost`` is not loopback."""
    if not host:
        return False
    host = host.strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
