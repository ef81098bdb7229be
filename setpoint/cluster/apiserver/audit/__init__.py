"""The audit log: who did what, one ``audit.k8s.io/v1`` Event per request (``--audit-log``).

Off unless asked for. When on, :class:`~.audit_log.AuditLog` follows each API request from
arrival to answer: it gives the request an ``auditID`` (returned in the ``Audit-Id`` header, as
kube-apiserver does), and writes one JSON line when the answer is complete — plus one when a
long-running answer (a watch, a log stream) starts — with the verb, the user (and the user it
impersonated), the object addressed, the status code and the authorization decision, exactly
as kube-apiserver's ``Metadata`` level does; the ``Request`` level adds the request's body.
Lines are buffered and flushed within a second, so auditing costs the event loop little.

``setpoint rbac suggest`` reads such a log (:mod:`setpoint.generate.rbac_suggest`).
"""

from setpoint.cluster.apiserver.audit.audit_log import AUDIT_LEVELS, AuditLog, AuditLogError

__all__ = ["AUDIT_LEVELS", "AuditLog", "AuditLogError"]
