"""Resource quotas: what a ResourceQuota counts, how a write is charged, how usage is written.

A ResourceQuota caps what a namespace may hold: object counts (``pods``, ``configmaps``,
``count/deployments.apps`` ...), the compute resources its pods request and limit
(``requests.cpu``, ``limits.memory`` ...) and its claims' storage. Three parts work together,
as upstream's:

- :mod:`~setpoint.cluster.apiserver.quota.usage` says what one object uses of each quota
  resource and whether a quota's scopes select it (upstream's evaluators in
  ``pkg/quota/v1/evaluator/core``);
- :mod:`~setpoint.cluster.apiserver.quota.admission` charges each create against the
  namespace's quotas: refused with upstream's ``exceeded quota`` 403 when it does not fit,
  otherwise the quota's ``status.used`` grows before the object is stored (the
  ``ResourceQuota`` admission plugin);
- the resource quota controller (``setpoint.cluster.controllers.resource_quota``) writes each
  quota's ``status.hard`` and recounts ``status.used`` from what is stored, so that deletions
  and pods that finished give their share back.

:mod:`~setpoint.cluster.apiserver.schema.quantities` adds and prints ``resource.Quantity``
values as Go does (``500m``, ``1Gi``, ``1500``), so that ``status.used`` and the 403 messages
read as upstream's.
"""
