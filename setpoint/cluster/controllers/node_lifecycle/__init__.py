"""Node failure as kube-controller-manager handles it: unreachable nodes and their pods.

Two controllers. The **node lifecycle** controller watches each node's heartbeats (its Lease in
``kube-node-lease`` and its ``Ready`` condition): a node silent for longer than the grace
period (``--node-monitor-grace-period``, 50 s) has its conditions set ``Unknown`` ("Kubelet
stopped posting node status."), its pods marked not ready, and the taints
``node.kubernetes.io/unreachable`` (``NoSchedule`` and ``NoExecute``) — or
``node.kubernetes.io/not-ready`` for a node that reports ``Ready=False``; the taints go when it
is ready again. The **taint eviction** controller deletes the pods on a node with ``NoExecute``
taints they do not tolerate, at once or after their ``tolerationSeconds``, with the
``DisruptionTarget`` condition; their controllers then replace them on other nodes.
"""
