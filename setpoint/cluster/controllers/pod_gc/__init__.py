"""The pod garbage collector (kube-controller-manager's ``pod-garbage-collector``).

Two of upstream's sweeps: a pod bound to a Node that does not exist is, after a quarantine of
40 s on the cluster clock (and a fresh read confirming the Node is still absent), marked
``Failed`` with condition ``DisruptionTarget`` (reason ``DeletionByPodGC``) and deleted at once;
and every 20 s, when more finished (``Succeeded``/``Failed``) pods exist than the threshold
(``--terminated-pod-gc-threshold``, 12,500 by default), the oldest of them are deleted.
"""
