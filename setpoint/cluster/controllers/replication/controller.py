"""ReplicationController sync: the ReplicaSet sync with the older kind's selector and names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from setpoint.api.selectors import LabelSelector
from setpoint.cluster.controllers.replicaset.controller import ReplicaSetController

RESOURCE: Final = "replicationcontrollers"
COMPONENT: Final = "replication-controller"


class ReplicationManager(ReplicaSetController):
    """Keeps each ReplicationController's active pods at ``spec.replicas``."""

    resource = RESOURCE
    kind = "ReplicationController"
    component = COMPONENT

    def selector_of(self, rs: Mapping[str, Any]) -> LabelSelector:
        """A ReplicationController selects by equality on every label of ``spec.selector``
        (defaulted from the template's labels); an empty selector selects nothing."""
        labels = (rs.get("spec") or {}).get("selector")
        if not isinstance(labels, dict) or not labels:
            return LabelSelector.nothing()
        try:
            return LabelSelector.from_dict({"matchLabels": labels})
        except ValueError:
            return LabelSelector.nothing()
