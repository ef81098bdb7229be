"""The disruption controller: keeps each PodDisruptionBudget's status true to its pods.

kube-controller-manager's ``disruption`` controller, which the ``pods/eviction`` subresource
relies on: for each budget it counts the pods its selector matches, works out how many must
stay healthy (``minAvailable`` as a number; or, for ``maxUnavailable`` and percentages, from
the replica counts of the pods' controllers), and writes ``currentHealthy``,
``desiredHealthy``, ``expectedPods``, ``disruptionsAllowed``, ``disruptedPods`` and the
``DisruptionAllowed`` condition. Evictions that the API server approved are not counted as
healthy for two minutes, or until the pod goes.
"""
