"""The controller framework: a server-side, in-process take on client-go's machinery.

- :class:`~.informers.Informer`: one cache per resource, listed from the storage and kept
  current by a storage watch; handlers see every add, update and delete.
- :class:`~.work_queue.WorkQueue`: a deduplicating queue of object keys with delayed adds on
  the cluster clock and per-key backoff.
- :class:`~.cluster_access.ClusterAccess`: what a controller reads and writes, with its
  identity; writes go through :class:`ObjectOperations` (admission, validation, defaults).
- :class:`~.event_recorder.EventRecorder`: core/v1 Events with upstream aggregation.
- :class:`~.controller.Controller`: declare the kinds watched and ``reconcile(key)``.
- :class:`~.manager.ControllerManager`: starts informers and controllers with the server.
"""
