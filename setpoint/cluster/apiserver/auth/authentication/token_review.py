"""The TokenReview API: ``POST /apis/authentication.k8s.io/v1/tokenreviews``.

Webhook token authenticators and tools (kr8s's ``whoami``) ask the API server who a token
stands for. As kube-apiserver: ``spec.token`` is required (400 otherwise); ``spec.audiences``
defaults to the server's own; the answer (201) is the review with ``status.authenticated``,
``status.user`` and ``status.audiences``, or ``status.error`` (and an empty user) when the
token is not valid. The admin token, like upstream's static tokens, is valid only for the API
server's own audiences: reviewed for another, it is not authenticated (and no error is given,
as upstream's audience-agnostic wrapper says none). Nothing is stored.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authentication.authenticator import Authenticator

GROUP: Final = "authentication.k8s.io"
PLURAL: Final = "tokenreviews"


def is_token_review(group: str, plural: str) -> bool:
    """Whether a POST to this resource is a TokenReview."""
    return (group, plural) == (GROUP, PLURAL)


def review_token(body: dict[str, Any], authenticator: Authenticator) -> dict[str, Any]:
    """The TokenReview ``body`` answered."""
    review = copy.deepcopy(body)
    spec = review.get("spec")
    token = spec.get("token") if isinstance(spec, dict) else None
    if not isinstance(token, str) or not token:
        raise status_errors.bad_request("token is required for TokenReview in authentication")
    assert isinstance(spec, dict)
    audiences = spec.get("audiences") or []
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        raise status_errors.bad_request("spec.audiences: must be a list of strings")
    result = authenticator.review_token(token, audiences)
    metadata = review.get("metadata")
    review["metadata"] = metadata if isinstance(metadata, dict) else {}
    review["metadata"].setdefault("creationTimestamp", None)
    review.setdefault("kind", "TokenReview")
    review.setdefault("apiVersion", f"{GROUP}/v1")
    status: dict[str, Any] = {}
    if result.user is not None:
        status["authenticated"] = True
        status["user"] = result.user.to_json()
        if result.audiences:
            status["audiences"] = list(result.audiences)
    else:
        status["user"] = {}
        if result.error:
            status["error"] = result.error
    review["status"] = status
    return review
