"""The review APIs: answers computed from an identity and the authorizer, never stored.

- ``SelfSubjectReview`` (``kubectl auth whoami``): the caller's user info.
- ``SelfSubjectAccessReview`` (``kubectl auth can-i``): may the caller do one thing (a verb
  on a resource, or on a non-resource URL).
- ``SubjectAccessReview``: may the user described in ``spec`` (user, groups, uid, extra) do it;
  ``LocalSubjectAccessReview`` asks the same within the request's namespace.
- ``SelfSubjectRulesReview`` (``kubectl auth can-i --list``): every rule that applies to the
  caller in ``spec.namespace``.

Access reviews need exactly one of ``resourceAttributes`` and ``nonResourceAttributes``, as
kube-apiserver checks; the answer is the authorizer's decision with its reason.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.auth.authorization.authorizers import Authorizer
from setpoint.cluster.apiserver.auth.identity import UserInfo

AUTHORIZATION_GROUP: Final = "authorization.k8s.io"
AUTHENTICATION_GROUP: Final = "authentication.k8s.io"
#: (group, plural) of the review resources this module answers.
REVIEW_RESOURCES: Final = frozenset(
    {
        (AUTHORIZATION_GROUP, "selfsubjectaccessreviews"),
        (AUTHORIZATION_GROUP, "selfsubjectrulesreviews"),
        (AUTHORIZATION_GROUP, "subjectaccessreviews"),
        (AUTHORIZATION_GROUP, "localsubjectaccessreviews"),
        (AUTHENTICATION_GROUP, "selfsubjectreviews"),
    }
)


def is_review(group: str, plural: str) -> bool:
    """Whether a POST to this resource is a review this module answers."""
    return (group, plural) in REVIEW_RESOURCES


def answer(
    group: str,
    plural: str,
    body: dict[str, Any],
    user: UserInfo,
    authorizer: Authorizer,
    namespace: str | None = None,
) -> dict[str, Any]:
    """The review object with its ``status`` filled in, as the create response carries it
    (``namespace``: the request's, for ``LocalSubjectAccessReview``)."""
    if plural == "selfsubjectreviews":
        return self_subject_review(body, user)
    if plural == "selfsubjectrulesreviews":
        return self_subject_rules_review(body, user, authorizer)
    if plural == "subjectaccessreviews":
        return subject_access_review(body, authorizer)
    if plural == "localsubjectaccessreviews":
        return local_subject_access_review(body, namespace or "", authorizer)
    return self_subject_access_review(body, user, authorizer)


def self_subject_rules_review(
    body: dict[str, Any], user: UserInfo, authorizer: Authorizer
) -> dict[str, Any]:
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
    found = authorizer.rules_for(user, str(namespace))
    resource_rules: list[dict[str, Any]] = []
    non_resource_rules: list[dict[str, Any]] = []
    for rule in found.rules:
        if rule.resources:
            entry: dict[str, Any] = {"verbs": list(rule.verbs)}
            if rule.api_groups:
                entry["apiGroups"] = list(rule.api_groups)
            entry["resources"] = list(rule.resources)
            if rule.resource_names:
                entry["resourceNames"] = list(rule.resource_names)
            resource_rules.append(entry)
        if rule.non_resource_urls:
            non_resource_rules.append(
                {"verbs": list(rule.verbs), "nonResourceURLs": list(rule.non_resource_urls)}
            )
    review = _echo(body)
    review["status"] = {
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": False,
    }
    if found.errors:
        errors = found.errors
        review["status"]["evaluationError"] = (
            errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        )
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


def self_subject_access_review(
    body: dict[str, Any], user: UserInfo, authorizer: Authorizer
) -> dict[str, Any]:
    """``SelfSubjectAccessReview``: may the caller do what ``spec`` describes."""
    spec = _access_spec(body, "SelfSubjectAccessReview")
    return _decide(body, _attributes(user, spec), authorizer)


def subject_access_review(body: dict[str, Any], authorizer: Authorizer) -> dict[str, Any]:
    """``SubjectAccessReview``: may the user ``spec`` describes do what it describes."""
    spec = _access_spec(body, "SubjectAccessReview")
    return _decide(body, _attributes(_subject(spec, "SubjectAccessReview", []), spec), authorizer)


def local_subject_access_review(
    body: dict[str, Any], namespace: str, authorizer: Authorizer
) -> dict[str, Any]:
    """``LocalSubjectAccessReview``: a SubjectAccessReview within the request's namespace."""
    metadata = body.get("metadata") if isinstance(body.get("metadata"), dict) else None
    body_namespace = (metadata or {}).get("namespace") or namespace
    if body_namespace != namespace:
        raise status_errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    kind = "LocalSubjectAccessReview"
    spec = _access_spec(body, kind)
    errors: list[fe.FieldError] = []
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict) and (resource.get("namespace") or "") != namespace:
        errors.append(
            fe.invalid(
                "spec.resourceAttributes.namespace",
                resource.get("namespace") or "",
                "must match metadata.namespace",
            )
        )
    if spec.get("nonResourceAttributes"):
        errors.append(
            fe.invalid(
                "spec.nonResourceAttributes",
                spec.get("nonResourceAttributes"),
                "disallowed on this kind of request",
            )
        )
    subject = _subject(spec, kind, errors)
    review = _decide(body, _attributes(subject, spec), authorizer)
    review["metadata"]["namespace"] = namespace
    return review


def _subject(spec: dict[str, Any], kind: str, errors: list[fe.FieldError]) -> UserInfo:
    """The user a (Local)SubjectAccessReview asks about; 422 with ``errors`` and its own."""
    username = spec.get("user") or ""
    groups = spec.get("groups") or []
    if not username and not groups:
        errors = [
            fe.invalid("spec.user", username, "at least one of user or group must be specified"),
            *errors,
        ]
    if errors:
        raise status_errors.invalid(AUTHORIZATION_GROUP, kind, "", errors)
    extra_value = spec.get("extra")
    extra: dict[str, Any] = extra_value if isinstance(extra_value, dict) else {}
    return UserInfo(
        str(username),
        tuple(str(group) for group in groups if isinstance(group, str)),
        str(spec.get("uid") or ""),
        {str(k): tuple(str(v) for v in values or []) for k, values in extra.items()},
    )


def _access_spec(body: dict[str, Any], kind: str) -> dict[str, Any]:
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
            kind,
            "",
            [
                fe.invalid(
                    "spec.nonResourceAttributes" if has_resource else "spec.resourceAttributes",
                    spec.get("nonResourceAttributes") if has_resource else None,
                    detail,
                )
            ],
        )
    return spec


def _attributes(user: UserInfo, spec: dict[str, Any]) -> Attributes:
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict):
        return Attributes(
            user,
            str(resource.get("verb") or ""),
            True,
            namespace=str(resource.get("namespace") or ""),
            api_group=str(resource.get("group") or ""),
            api_version=str(resource.get("version") or "*"),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            name=str(resource.get("name") or ""),
        )
    non_resource = spec.get("nonResourceAttributes") or {}
    return Attributes(
        user,
        str(non_resource.get("verb") or ""),
        False,
        path=str(non_resource.get("path") or ""),
    )


def _decide(body: dict[str, Any], attributes: Attributes, authorizer: Authorizer) -> dict[str, Any]:
    decision = authorizer.authorize(attributes)
    review = _echo(body)
    status: dict[str, Any] = {"allowed": decision.allowed}
    if decision.reason:
        status["reason"] = decision.reason
    if decision.evaluation_error:
        status["evaluationError"] = decision.evaluation_error
    review["status"] = status
    return review


def _echo(body: dict[str, Any]) -> dict[str, Any]:
    review = copy.deepcopy(body)
    metadata = review.get("metadata")
    review["metadata"] = metadata if isinstance(metadata, dict) else {}
    review["metadata"].setdefault("creationTimestamp", None)
    return review
