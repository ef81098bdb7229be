"""Pod IPs: unique, reused after release, never one an adopted pod already holds."""

from __future__ import annotations

from setpoint.cluster.controllers.kubelet.pod_addresses import PodAddresses


def test_addresses_are_unique_and_skip_adopted_ones() -> None:
    addresses = PodAddresses()
    addresses.reserve("adopted", "10.244.0.3")

    first = addresses.allocate("a")
    second = addresses.allocate("b")

    assert first == "10.244.0.2"
    assert second == "10.244.0.4"
    assert addresses.allocate("a") == first
    addresses.release("a")
    assert addresses.allocate("c") not in {second, "10.244.0.3"}
