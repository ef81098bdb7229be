"""The horizontal pod autoscaler: scales a workload's ``/scale`` to keep resource usage on target.

kube-controller-manager's ``horizontal-pod-autoscaler`` controller for ``autoscaling/v2``
``Resource`` and ``ContainerResource`` metrics (CPU and memory of the pods, or of one of their
containers, as ``Utilization`` of the requests or as an ``AverageValue``); ``Pods``, ``Object``
and ``External`` metrics fail as upstream's do without the custom and external metrics APIs
(:mod:`.absent_metrics_apis`). Every 15 s on the cluster clock it reads the target's
``scale``, the pods its selector picks and their usage from the resource metrics API (the
kubelet's, see ``kinds.resource_metrics``), computes the replica count that brings usage to target
(:mod:`.replica_calculator`, with upstream's 10 % tolerance and its treatment of unready and
missing pods), smooths it with the stabilization window and the scaling policies
(:mod:`.scaling_rules`), writes the ``scale`` subresource and the HPA's status and conditions,
and records ``SuccessfulRescale`` Events. Any kind with a ``scale`` subresource can be the
target: Deployments, ReplicaSets, StatefulSets, ReplicationControllers and custom resources.
"""
