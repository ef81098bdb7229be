"""Persistent volumes and claims: a new one starts ``Pending`` (upstream's strategies reset the
status on create; a volume also records when its phase last changed). Binding is the
persistent-volume controller's (``setpoint.cluster.controllers.volume_binding``)."""

from __future__ import annotations

import time
from typing import Any

from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource


class VolumeBehaviour(KindBehaviour):
    """PersistentVolume and PersistentVolumeClaim rules: status ``Pending`` on create."""

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        status: dict[str, Any] = {"phase": "Pending"}
        if resource.kind == "PersistentVolume":
            status["lastPhaseTransitionTime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        obj["status"] = status
