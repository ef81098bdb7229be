"""The scheduler: binds pending pods to nodes as kube-scheduler's default profile would, for
the filters a local cluster needs (node readiness and ``unschedulable``, ``nodeSelector``,
required node affinity on labels, taints and tolerations, resource requests against
allocatable, pod count), spreading pods over the nodes that fit. A pod no node fits keeps
``PodScheduled=False`` with reason ``Unschedulable`` and the upstream-shaped message, with a
``FailedScheduling`` Event, and is retried when nodes or pods change.
"""
