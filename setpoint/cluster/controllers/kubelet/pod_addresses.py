"""Pod IPs from the cluster's pod range (kind's default ``10.244.0.0/16``)."""

from __future__ import annotations

import ipaddress
from typing import Final

POD_CIDR: Final = ipaddress.ip_network("10.244.0.0/16")


class PodAddresses:
    """Hands out pod IPs, each to one pod uid at a time; released addresses are reused last."""

    def __init__(self) -> None:
        self._by_uid: dict[str, str] = {}
        self._released: list[str] = []
        self._used: set[str] = set()
        self._next = 2  # .0.0 is the network, .0.1 the gateway

    def allocate(self, uid: str) -> str:
        """The IP of pod ``uid`` (allocated on first call)."""
        address = self._by_uid.get(uid)
        if address is not None:
            return address
        while True:
            if self._next < POD_CIDR.num_addresses - 1:
                address = str(POD_CIDR.network_address + self._next)
                self._next += 1
            elif self._released:
                address = self._released.pop(0)
            else:
                raise RuntimeError("the pod IP range 10.244.0.0/16 is exhausted")
            if address not in self._used:  # adopted pods keep theirs
                break
        self._by_uid[uid] = address
        self._used.add(address)
        return address

    def reserve(self, uid: str, address: str) -> None:
        """Keep ``address`` for ``uid`` (a pod already running when the kubelet started)."""
        self._by_uid[uid] = address
        self._used.add(address)

    def release(self, uid: str) -> None:
        """Free the IP of pod ``uid``."""
        address = self._by_uid.pop(uid, None)
        if address is not None:
            self._used.discard(address)
            self._released.append(address)
