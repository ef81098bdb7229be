"""``componentstatuses``: the deprecated health view of the control plane's parts.

kube-apiserver computes them on every read (``pkg/registry/core/componentstatus``), never
stores them, and serves only ``get`` and ``list``. Here every part runs in the serving
process, so each is healthy whenever the server answers: the scheduler, the controller
manager and the storage (reported as ``etcd-0``, the name kubectl users know).
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.cluster.apiserver import status_errors

#: The parts kube-apiserver reports, in its order.
COMPONENTS: Final = ("scheduler", "controller-manager", "etcd-0")
#: The warning upstream sends with every componentstatuses request.
DEPRECATION_WARNING: Final = "v1 ComponentStatus is deprecated in v1.19+"


def component_status(name: str) -> dict[str, Any]:
    """One healthy ComponentStatus."""
    return {
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
    }


def component_status_list() -> dict[str, Any]:
    """The ComponentStatusList of ``GET /api/v1/componentstatuses``."""
    return {
        "kind": "ComponentStatusList",
        "apiVersion": "v1",
        "metadata": {},
        "items": [component_status(name) for name in COMPONENTS],
    }


def get_component_status(name: str) -> dict[str, Any]:
    """``GET /api/v1/componentstatuses/NAME``; 404 for a part that does not exist."""
    if name not in COMPONENTS:
        raise status_errors.not_found("", "componentstatuses", name)
    return component_status(name)
