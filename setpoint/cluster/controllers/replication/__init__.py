"""The replication manager: keeps each ReplicationController's pods at ``spec.replicas``.

As upstream (``pkg/controller/replication``), it is the ReplicaSet controller run over
ReplicationControllers: the same claiming, slow-start creation, deletion ranking and status,
with the older kind's differences: the selector is a plain label map, owner references and
Events name ``ReplicationController`` and ``replication-controller``.
"""
