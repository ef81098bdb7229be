"""Every built-in controller the local cluster runs, in start order.

Add a controller here to have ``setpoint cluster serve``, ``LocalCluster``,
``BackgroundCluster`` and the pytest plugin run it.
"""

from __future__ import annotations

from setpoint.cluster.controllers.framework.controller import Controller
from setpoint.cluster.controllers.framework.options import ControllerOptions


def controller_classes(options: ControllerOptions) -> list[type[Controller]]:
    """The controller classes to run with ``options``."""
    classes: list[type[Controller]] = []
    # -- core controllers (namespace, GC, nodes, scheduler, kubelet, SA, endpoints) --------
    from setpoint.cluster.controllers.core_controllers import core_controller_classes

    classes.extend(core_controller_classes(options))
    # -- workload controllers (ReplicaSet, Deployment, StatefulSet, DaemonSet, Job, CronJob) --
    from setpoint.cluster.controllers.workload_controllers import workload_controller_classes

    classes.extend(workload_controller_classes())
    return classes
