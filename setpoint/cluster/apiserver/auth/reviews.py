"""The review APIs: answers computed from the caller's identity, never stored.

``SelfSubjectReview`` returns the caller's user info. ``SelfSubjectAccessReview`` asks whether
the caller may do one thing (a verb on a resource, or a non-resource URL); members of
``system:masters`` may do everything, which is all this server has today, so the answer is
"allowed" for the admin and "denied" (with no opinion) for anyone else.
``SelfSubjectRulesReview`` (``kubectl auth can-i --list``) lists what the caller may do: the
wildcard rules of ``system:masters``, and for every authenticated user the rules upstream's
bootstrap roles grant them (``system:basic-user``, ``system:discovery``,
``system:public-info-viewer``). The request is checked
as kube-apiserver checks it: exactly one of ``resourceAttributes`` and
``nonResourceAttributes``.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.identity import PRIVILEGED_GROUP, UserInfo

AUTHORIZATION_GROUP: Final = "authorization.k8s.io"
AUTHENTICATION_GROUP: Final = "authentication.k8s.io"
#: (group, plural) of the review resources this module answers.
REVIEW_RESOURCES: Final = frozenset(
    {
        (AUTHORIZATION_GROUP, "selfsubjectaccessreviews"),
        (AUTHORIZATION_GROUP, "selfsubjectrulesreviews"),
        (AUTHENTICATION_GROUP, "selfsubjectreviews"),
    }
)
#: What ``system:masters`` may do (the ``cluster-admin`` role).
_EVERYTHING_RESOURCE_RULES: Final = ({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},)
_EVERYTHING_NON_RESOURCE_RULES: Final = ({"verbs": ["*"], "nonResourceURLs": ["*"]},)
#: What every authenticated user may do (``system:basic-user``).
_AUTHENTICATED_RESOURCE_RULES: Final = (
    {
        "verbs": ["create"],
        "apiGroups": [AUTHENTICATION_GROUP],
        "resources": ["selfsubjectreviews"],
    },
    {
        "verbs": ["create"],
        "apiGroups": [AUTHORIZATION_GROUP],
        "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    },
)
#: ``system:discovery`` and ``system:public-info-viewer``.
_AUTHENTICATED_NON_RESOURCE_RULES: Final = (
    {
        "verbs": ["get"],
        "nonResourceURLs": [
            "/api",
            "/api/*",
            "/apis",
            "/apis/*",
            "/healthz",
            "/livez",
            "/openapi",
            "/openapi/*",
            "/readyz",
            "/version",
            "/version/",
        ],
    },
    {
        "verbs": ["get"],
        "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
    },
)


def is_review(group: str, plural: str) -> bool:
    """Whether a POST to this resource is a review this module answers."""
    return (group, plural) in REVIEW_RESOURCES


def answer(group: str, plural: str, body: dict[str, Any], user: UserInfo) -> dict[str, Any]:
    """The review object with its ``status`` filled in, as the create response carries it."""
    if plural == "selfsubjectreviews":
        return self_subject_review(body, user)
    if plural == "selfsubjectrulesreviews":
        return self_subject_rules_review(body, user)
    return self_subject_access_review(body, user)


def self_subject_rules_review(body: dict[str, Any], user: UserInfo) -> dict[str, Any]:
    """``SelfSubjectRulesReview``: everything the caller may do in ``spec.namespace``."""
    spec = body.get("spec")
    namespace = spec.get("namespace") if isinstance(spec, dict) else None
    if not namespace:
        raise status_errors.invalid(
            AUTHORIZATION_GROUP,
            "SelfSubjectRulesReview",
            "",
            [fe.required("spec.namespace", "")],
        )
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    if PRIVILEGED_GROUP in user.groups:
        resource_rules.extend(copy.deepcopy(list(_EVERYTHING_RESOURCE_RULES)))
        non_resource_rules.extend(copy.deepcopy(list(_EVERYTHING_NON_RESOURCE_RULES)))
    resource_rules.extend(copy.deepcopy(list(_AUTHENTICATED_RESOURCE_RULES)))
    non_resource_rules.extend(copy.deepcopy(list(_AUTHENTICATED_NON_RESOURCE_RULES)))
    review = copy.deepcopy(body)
    metadata = review.get("metadata")
    review["metadata"] = metadata if isinstance(metadata, dict) else {}
    review["metadata"].setdefault("creationTimestamp", None)
    review["status"] = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": False,
    }
    return review


def self_subject_review(body: dict[str, Any], user: UserInfo) -> dict[str, Any]:
    """``SelfSubjectReview``: who the caller is."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "kind": "SelfSubjectReview",
        "apiVersion": body.get("apiVersion") or f"{AUTHENTICATION_GROUP}/v1",
        "metadata": {"creationTimestamp": now},
        "status": {"userInfo": user.to_json()},
    }


def self_subject_access_review(body: dict[str, Any], user: UserInfo) -> dict[str, Any]:
    """``SelfSubjectAccessReview``: may the caller do what ``spec`` describes."""
    spec = body.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    has_resource = bool(spec.get("resourceAttributes"))
    has_non_resource = bool(spec.get("nonResourceAttributes"))
    if has_resource == has_non_resource:
        detail = (
            "cannot be specified in combination with resourceAttributes"
            if has_resource
            else "exactly one of nonResourceAttributes or resourceAttributes must be specified"
        )
        raise status_errors.invalid(
            AUTHORIZATION_GROUP,
            "SelfSubjectAccessReview",
            "",
            [
                fe.invalid(
                    "spec.nonResourceAttributes" if has_resource else "spec.resourceAttributes",
                    spec.get("nonResourceAttributes") if has_resource else None,
                    detail,
                )
            ],
        )
    review = copy.deepcopy(body)
    metadata = review.get("metadata")
    review["metadata"] = metadata if isinstance(metadata, dict) else {}
    review["metadata"].setdefault("creationTimestamp", None)
    review["status"] = {"allowed": PRIVILEGED_GROUP in user.groups}
    return review
