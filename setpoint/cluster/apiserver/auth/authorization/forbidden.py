"""The 403 of a refused request, worded as kube-apiserver words it.

``configmaps is forbidden: User "system:serviceaccount:ns:sa" cannot list resource
"configmaps" in API group "" in the namespace "ns"``; ``... at the cluster scope`` for
cluster-wide requests; ``pods "p" is forbidden: ... cannot get resource "pods/log" ...`` with a
name and a subresource; ``forbidden: User "u" cannot get path "/logs"`` for non-resource URLs.
The authorizer's reason, when it has one, follows after ``: ``
(``responsewriters.Forbidden``).
"""

from __future__ import annotations

from setpoint.api.field_errors import go_quote
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.status_errors import APIError


def forbidden_message(attributes: Attributes) -> str:
    """``User "u" cannot VERB ...`` (``responsewriters.forbiddenMessage``)."""
    user = go_quote(attributes.user.username)
    if not attributes.resource_request:
        return f"User {user} cannot {attributes.verb} path {go_quote(attributes.path)}"
    resource = attributes.resource
    if attributes.subresource:
        resource = f"{resource}/{attributes.subresource}"
    where = (
        f"in the namespace {go_quote(attributes.namespace)}"
        if attributes.namespace
        else "at the cluster scope"
    )
    return (
        f"User {user} cannot {attributes.verb} resource {go_quote(resource)} "
        f"in API group {go_quote(attributes.api_group)} {where}"
    )


def forbidden(attributes: Attributes, reason: str = "") -> APIError:
    """The 403 Forbidden ``Status`` refusing ``attributes``."""
    message = forbidden_message(attributes)
    if reason:
        message = f"{message}: {reason}"
    if not attributes.resource_request or not attributes.resource:
        return APIError(403, StatusReason.FORBIDDEN, f"forbidden: {message}", details={})
    return status_errors.forbidden(
        attributes.api_group, attributes.resource, attributes.name, message
    )
