"""Audit annotations added while a request is admitted (webhooks' ``auditAnnotations``).

The audit log gives each logged request a dict here (:func:`begin_request`); admission, which
has no request at hand, adds to the current one with :func:`annotate`, and the log writes them
into the request's Event. Without an audit log nothing is collected.
"""

from __future__ import annotations

from contextvars import ContextVar

#: The annotations of the request being served in this task (None: not audited).
_CURRENT: ContextVar[dict[str, str] | None] = ContextVar("setpoint_audit_annotations", default=None)


def begin_request() -> dict[str, str]:
    """A fresh dict for the request served in the current task."""
    annotations: dict[str, str] = {}
    _CURRENT.set(annotations)
    return annotations


def annotate(key: str, value: str) -> None:
    """Record ``key: value`` on the current request's audit Event (if it is audited)."""
    annotations = _CURRENT.get()
    if annotations is not None:
        annotations[key] = value
