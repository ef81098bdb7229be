"""The DaemonSet controller: one pod per eligible Node (``pkg/controller/daemon``).

A Node is eligible when the template's ``nodeSelector`` matches its labels and the pod
tolerates its NoSchedule/NoExecute taints (daemon pods tolerate the node-condition taints
upstream adds). Each pod is created unscheduled with a required node affinity on
``metadata.name`` for its node, so the scheduler binds it there. Extra pods, pods on nodes
that are no longer eligible and failed pods are deleted; a RollingUpdate replaces outdated
pods one node at a time (``maxUnavailable: 1``).
"""
