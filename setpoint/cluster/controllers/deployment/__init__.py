"""The Deployment controller: Deployment → ReplicaSets, as kube-controller-manager 1.32.

A Deployment owns one *new* ReplicaSet (its template equals the Deployment's, ignoring the
``pod-template-hash`` label) and any number of *old* ones. Each sync takes one step of the
rollout — scale the new ReplicaSet up within ``maxSurge``, scale old ones down within
``maxUnavailable`` (RollingUpdate), or old to zero then new to full (Recreate) — then writes
the status and the ``Available``/``Progressing`` conditions. The ReplicaSet controller turns
the replica counts into Pods; the next sync sees the result through the watch.

- ``replica_sets``: facts about ReplicaSet dicts (replicas, revision, age, template match).
- ``rollout_arithmetic``: maxSurge/maxUnavailable, rolling and proportional scaling steps.
- ``revisions``: revision annotations, rollback history, old-ReplicaSet cleanup.
- ``deployment_status``: status fields, conditions and their upstream reasons and messages.
- ``controller``: the reconcile loop wired to the cluster's controller framework.
"""
