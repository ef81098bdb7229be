"""Leases (coordination.k8s.io/v1): ``acquireTime``/``renewTime`` are MicroTime.

Clients send other RFC 3339 spellings (Python's ``isoformat()`` gives ``+00:00``); upstream
decodes them and writes the canonical ``2006-01-02T15:04:05.000000Z`` form back, so this does.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.api.times import normalize_micro_time
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

_MICRO_TIME_FIELDS: Final = ("acquireTime", "renewTime")


def normalize_lease_times(resource: ServedResource, obj: dict[str, Any]) -> None:
    """Rewrite the spec's MicroTime fields canonically; 400 when one does not parse."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    for field in _MICRO_TIME_FIELDS:
        value = spec.get(field)
        if isinstance(value, str):
            try:
                spec[field] = normalize_micro_time(value)
            except ValueError as exc:
                raise status_errors.bad_request(
                    f'Lease in version "{resource.version}" cannot be handled as a Lease: '
                    f"spec.{field}: {exc}"
                ) from exc


class LeaseBehaviour(KindBehaviour):
    """Lease rules: canonical MicroTime timestamps."""

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        normalize_lease_times(resource, obj)

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        normalize_lease_times(resource, new)
