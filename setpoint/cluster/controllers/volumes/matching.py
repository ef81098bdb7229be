"""Which volume satisfies a claim (``pkg/controller/volume/persistentvolume/index.go``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from setpoint.api.selectors import LabelSelector, SelectorError
from setpoint.cluster.controllers.scheduler.quantities import quantity


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def requested_storage(claim: Mapping[str, Any]) -> Decimal:
    """The storage a claim asks for (``spec.resources.requests.storage``)."""
    requests = (_spec(claim).get("resources") or {}).get("requests") or {}
    return quantity(requests.get("storage", "0"))


def volume_storage(volume: Mapping[str, Any]) -> Decimal:
    """The storage a volume offers (``spec.capacity.storage``)."""
    return quantity((_spec(volume).get("capacity") or {}).get("storage", "0"))


def claim_class(claim: Mapping[str, Any]) -> str:
    """The claim's class name ('' for none)."""
    return str(_spec(claim).get("storageClassName") or "")


def prebound_to(volume: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """Whether the volume's ``claimRef`` names this claim (and, if it has a uid, this one)."""
    ref = _spec(volume).get("claimRef")
    if not isinstance(ref, Mapping):
        return False
    meta = claim.get("metadata") or {}
    return (
        ref.get("name") == meta.get("name")
        and ref.get("namespace") == meta.get("namespace")
        and ref.get("uid") in (None, "", meta.get("uid"))
    )


def satisfies(volume: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    """Whether ``volume`` can hold ``claim`` (class, mode, size, access modes, selector)."""
    spec = _spec(volume)
    wanted = _spec(claim)
    if str(spec.get("storageClassName") or "") != claim_class(claim):
        return False
    if (spec.get("volumeMode") or "Filesystem") != (wanted.get("volumeMode") or "Filesystem"):
        return False
    if volume_storage(volume) < requested_storage(claim):
        return False
    if not set(wanted.get("accessModes") or ()) <= set(spec.get("accessModes") or ()):
        return False
    selector = wanted.get("selector")
    if selector:
        try:
            parsed = LabelSelector.from_dict(selector)
        except (SelectorError, ValueError):
            return False
        if not parsed.matches((volume.get("metadata") or {}).get("labels") or {}):
            return False
    return True


def best_volume(
    volumes: Iterable[Mapping[str, Any]], claim: Mapping[str, Any]
) -> Mapping[str, Any] | None:
    """The volume pre-bound to the claim, else the smallest free one that satisfies it."""
    free: list[Mapping[str, Any]] = []
    for volume in volumes:
        if (volume.get("metadata") or {}).get("deletionTimestamp"):
            continue
        if prebound_to(volume, claim):
            return volume
        if _spec(volume).get("claimRef") is None and satisfies(volume, claim):
            free.append(volume)
    if not free:
        return None
    return min(free, key=volume_storage)
