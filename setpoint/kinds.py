"""Constants for the built-in kinds: ``setpoint.kinds.Deployment``, ``Pod``, ``ConfigMap`` ...

Each is a :class:`Kind`, a named ``(api_version, kind)`` tuple, so it works wherever a kind is
accepted (``for_=``, ``owns=``, ``ctx.list(...)``, ``ctx.owned(...)``, ``client.list(*kind)``)
and a typo is an ``AttributeError`` at import time instead of a 404 at run time::

    from setpoint import kinds

    @op.reconciler(for_=Foo, owns=[kinds.Deployment])
    async def reconcile(ctx, request):
        deployments = await ctx.owned(kinds.Deployment)

Reads of a kind named by its constant return dicts. ``kinds.Deployment.model`` is the typed
model of the kind (``setpoint.models.Deployment``); name it instead
(``owns=[kinds.Deployment.model]``) and reads return instances of it. The models are imported
on first use of ``.model``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from setpoint.api.models import KubeObject

__all__ = [
    "ClusterRole",
    "ClusterRoleBinding",
    "ConfigMap",
    "CronJob",
    "CustomResourceDefinition",
    "DaemonSet",
    "Deployment",
    "Endpoints",
    "Event",
    "Ingress",
    "Job",
    "Kind",
    "Lease",
    "Namespace",
    "Node",
    "PersistentVolumeClaim",
    "Pod",
    "ReplicaSet",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
]


class Kind(NamedTuple):
    """A kind of object: ``Kind("apps/v1", "Deployment")``; unpacks as ``(api_version, kind)``."""

    api_version: str
    kind: str

    @property
    def group(self) -> str:
        """The API group ("" for the core group)."""
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        """The API version without the group."""
        return self.api_version.rpartition("/")[2]

    @property
    def model(self) -> type[KubeObject]:
        """The typed model of this kind (``setpoint.models.Deployment`` for ``Deployment``);
        ``LookupError`` for a kind without one."""
        from setpoint.api.models import model_for

        return model_for(self.api_version, self.kind)

    def __str__(self) -> str:
        return f"{self.kind}.{self.api_version}"


Pod = Kind("v1", "Pod")
ConfigMap = Kind("v1", "ConfigMap")
Secret = Kind("v1", "Secret")
Service = Kind("v1", "Service")
ServiceAccount = Kind("v1", "ServiceAccount")
Namespace = Kind("v1", "Namespace")
Node = Kind("v1", "Node")
Endpoints = Kind("v1", "Endpoints")
PersistentVolumeClaim = Kind("v1", "PersistentVolumeClaim")
Deployment = Kind("apps/v1", "Deployment")
ReplicaSet = Kind("apps/v1", "ReplicaSet")
StatefulSet = Kind("apps/v1", "StatefulSet")
DaemonSet = Kind("apps/v1", "DaemonSet")
Job = Kind("batch/v1", "Job")
CronJob = Kind("batch/v1", "CronJob")
Event = Kind("events.k8s.io/v1", "Event")
Ingress = Kind("networking.k8s.io/v1", "Ingress")
Lease = Kind("coordination.k8s.io/v1", "Lease")
Role = Kind("rbac.authorization.k8s.io/v1", "Role")
RoleBinding = Kind("rbac.authorization.k8s.io/v1", "RoleBinding")
ClusterRole = Kind("rbac.authorization.k8s.io/v1", "ClusterRole")
ClusterRoleBinding = Kind("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
CustomResourceDefinition = Kind("apiextensions.k8s.io/v1", "CustomResourceDefinition")
