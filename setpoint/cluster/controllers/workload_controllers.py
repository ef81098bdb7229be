"""The workload controllers as framework :class:`Controller` s: ReplicaSet, ReplicationController,
Deployment, Job, CronJob (and, when present, StatefulSet and DaemonSet).

Each wraps a sync class written against :class:`WorkloadContext` (which
:class:`ClusterAccess` implements): the primary kind's own changes enqueue its key, a child's
changes enqueue its controller owner's key (``owner_keys``), and ``reconcile`` returns the
sync's requeue delay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Protocol

from setpoint.cluster.controllers.cronjob.controller import CronJobController
from setpoint.cluster.controllers.daemonset.controller import DaemonSetController
from setpoint.cluster.controllers.deployment.controller import DeploymentController
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess, Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.job.controller import JobController
from setpoint.cluster.controllers.podautoscaler.controller import (
    HorizontalPodAutoscalerController,
)
from setpoint.cluster.controllers.replicaset.controller import ReplicaSetController
from setpoint.cluster.controllers.replication.controller import ReplicationManager
from setpoint.cluster.controllers.statefulset.controller import StatefulSetController
from setpoint.cluster.controllers.workload_context import WorkloadContext

__all__ = [
    "CronJobs",
    "DaemonSets",
    "Deployments",
    "Jobs",
    "ReplicaSets",
    "ReplicationControllers",
    "StatefulSets",
    "workload_controller_classes",
]


class _Sync(Protocol):
    resource: str
    watches: tuple[str, ...]

    def owner_keys(self, resource: str, obj: Mapping[str, Any]) -> list[tuple[str, str]]: ...

    async def sync(self, namespace: str, name: str) -> float | None: ...


class _WorkloadController(Controller):
    """Runs one workload sync class inside the controller framework."""

    sync_class: ClassVar[type[Any]]
    workers: ClassVar[int] = 2

    def __init__(self, access: ClusterAccess, options: ControllerOptions) -> None:
        super().__init__(access, options)
        context: WorkloadContext = access
        self.sync: _Sync = self.sync_class(context)

    def _mapper(self, resource: str) -> Any:
        def keys(obj: Object) -> Iterable[ObjectKey]:
            return [ObjectKey(ns, name) for ns, name in self.sync.owner_keys(resource, obj)]

        return keys

    def watches(self) -> list[Watch]:
        return [
            Watch(self.sync.resource),
            *(Watch(resource, self._mapper(resource)) for resource in self.sync.watches),
        ]

    async def reconcile(self, key: ObjectKey) -> float | None:
        clock = self.access.clock
        started = clock.monotonic()
        delay = await self.sync.sync(key.namespace, key.name)
        if delay is None:
            return None
        # The delay was computed from the time the sync started; a test may have advanced a
        # FakeClock while the sync awaited its writes.
        return max(0.0, delay - (clock.monotonic() - started))


class ReplicaSets(_WorkloadController):
    """kube-controller-manager's ``replicaset`` controller."""

    name = "replicaset"
    sync_class = ReplicaSetController


class ReplicationControllers(_WorkloadController):
    """kube-controller-manager's ``replicationcontroller`` controller (service account
    ``replication-controller``)."""

    name = "replicationcontroller"
    sync_class = ReplicationManager

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:replication-controller",
            field_manager="kube-controller-manager",
            component="replication-controller",
        )


class Deployments(_WorkloadController):
    """kube-controller-manager's ``deployment`` controller."""

    name = "deployment"
    sync_class = DeploymentController


class Jobs(_WorkloadController):
    """kube-controller-manager's ``job`` controller (with ttl-after-finished)."""

    name = "job"
    sync_class = JobController


class CronJobs(_WorkloadController):
    """kube-controller-manager's ``cronjob`` controller."""

    name = "cronjob"
    sync_class = CronJobController


class StatefulSets(_WorkloadController):
    """kube-controller-manager's ``statefulset`` controller."""

    name = "statefulset"
    sync_class = StatefulSetController


class DaemonSets(_WorkloadController):
    """kube-controller-manager's ``daemonset`` controller."""

    name = "daemonset"
    sync_class = DaemonSetController


def workload_controller_classes() -> list[type[Controller]]:
    """The workload controllers, in start order."""
    return [
        ReplicaSets,
        ReplicationControllers,
        Deployments,
        StatefulSets,
        DaemonSets,
        Jobs,
        CronJobs,
        HorizontalPodAutoscalerController,
    ]
