"""The core controllers of the local cluster (the workload ones are in ``workload_controllers``)."""

from __future__ import annotations

from setpoint.cluster.controllers.csr_signing.controller import CSRSigningController
from setpoint.cluster.controllers.disruption.controller import DisruptionController
from setpoint.cluster.controllers.endpoints.endpoints_controller import EndpointsController
from setpoint.cluster.controllers.endpoints.slice_controller import EndpointSliceController
from setpoint.cluster.controllers.framework.controller import Controller
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.garbage_collector.collector import GarbageCollector
from setpoint.cluster.controllers.kubelet.kubelet import Kubelet
from setpoint.cluster.controllers.namespace.controller import NamespaceController
from setpoint.cluster.controllers.node_lifecycle.node_health import NodeLifecycleController
from setpoint.cluster.controllers.node_lifecycle.taint_eviction import TaintEvictionController
from setpoint.cluster.controllers.pod_gc.controller import PodGarbageCollector
from setpoint.cluster.controllers.resource_quota.controller import ResourceQuotaController
from setpoint.cluster.controllers.root_ca_publisher.controller import RootCAPublisher
from setpoint.cluster.controllers.scheduler.scheduler import Scheduler
from setpoint.cluster.controllers.service_accounts.controller import ServiceAccountController
from setpoint.cluster.controllers.service_accounts.token_controller import TokenController
from setpoint.cluster.controllers.volumes.controller import PersistentVolumeController
from setpoint.cluster.controllers.volumes.protection import VolumeProtectionController


def core_controller_classes(options: ControllerOptions) -> list[type[Controller]]:
    """Namespace, garbage collectors, ServiceAccounts and their token Secrets, root CA, nodes,
    scheduler, kubelet, endpoints, the certificate signer, the volume binder and protection,
    PodDisruptionBudgets, resource quotas, node lifecycle and taint eviction."""
    return [
        NamespaceController,
        GarbageCollector,
        PodGarbageCollector,
        ServiceAccountController,
        TokenController,
        RootCAPublisher,
        Kubelet,
        Scheduler,
        EndpointsController,
        EndpointSliceController,
        CSRSigningController,
        PersistentVolumeController,
        VolumeProtectionController,
        DisruptionController,
        ResourceQuotaController,
        NodeLifecycleController,
        TaintEvictionController,
    ]
