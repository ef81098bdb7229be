"""The resource quota controller: each ResourceQuota's ``status.hard`` and ``status.used``.

As upstream's ``pkg/controller/resourcequota``: ``status.hard`` is the quota's ``spec.hard``
and ``status.used`` what the namespace's objects use of each of those resources (see
:mod:`setpoint.cluster.apiserver.quota.usage`), recounted when the quota changes, when a pod,
Service, claim, ConfigMap, Secret or ReplicationController of its namespace changes or goes,
and every :data:`~.controller.RESYNC_SECONDS` for the other kinds' ``count/`` resources. The
admission plugin charges creates between two recounts.
"""
