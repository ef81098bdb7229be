"""The TokenRequest API: ``POST /api/v1/namespaces/NS/serviceaccounts/NAME/token``.

As kube-apiserver's ``serviceaccounts/token`` subresource (``kubectl create token``): the
ServiceAccount must exist; ``spec.audiences`` defaults to the API server's audiences and
``spec.expirationSeconds`` to 3600 (at least 600, at most 2^32); ``spec.boundObjectRef`` may
bind the token to a Pod running as that ServiceAccount, a Secret or a Node, whose deletion then
revokes it. The answer is the request with ``status.token`` and ``status.expirationTimestamp``
filled in; nothing is stored.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import (
    BoundObject,
    ObjectLookup,
    ServiceAccountTokens,
)

GROUP: Final = "authentication.k8s.io"
KIND: Final = "TokenRequest"
DEFAULT_EXPIRATION_SECONDS: Final = 3600
#: ``MinTokenAgeSec`` upstream.
MIN_EXPIRATION_SECONDS: Final = 600
MAX_EXPIRATION_SECONDS: Final = 1 << 32
#: Bound object kinds (core group) and their plural.
_BINDABLE: Final = {"Pod": "pods", "Secret": "secrets", "Node": "nodes"}


def _timestamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def create_token(
    body: dict[str, Any],
    namespace: str,
    name: str,
    tokens: ServiceAccountTokens,
    lookup: ObjectLookup,
) -> dict[str, Any]:
    """The TokenRequest ``body`` for ServiceAccount NAMESPACE/NAME, answered (or APIError)."""
    request = copy.deepcopy(body)
    metadata = request.get("metadata")
    if not isinstance(metadata, dict):
        metadata = {}
    request["metadata"] = metadata
    for key, expected, what in (
        ("name", name, "name"),
        ("namespace", namespace, "namespace"),
    ):
        given = metadata.get(key)
        if given and given != expected:
            raise status_errors.invalid(
                GROUP,
                KIND,
                name,
                [
                    fe.invalid(
                        f"metadata.{key}",
                        given,
                        f"must match the service account {what} if specified",
                    )
                ],
            )
    account = lookup("serviceaccounts", namespace, name)
    if account is None:
        raise status_errors.not_found("", "serviceaccounts", name)
    spec = request.get("spec")
    if not isinstance(spec, dict):
        spec = {}
    request["spec"] = spec
    audiences = spec.get("audiences")
    if not audiences:
        audiences = list(tokens.audiences)
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        raise status_errors.bad_request("spec.audiences: must be a list of strings")
    spec["audiences"] = audiences
    expiration = spec.get("expirationSeconds")
    if expiration is None:
        expiration = DEFAULT_EXPIRATION_SECONDS
    if not isinstance(expiration, int) or isinstance(expiration, bool):
        raise status_errors.bad_request("spec.expirationSeconds: must be an integer")
    spec["expirationSeconds"] = expiration
    metadata["name"] = name
    metadata["namespace"] = namespace
    now = tokens.now().replace(microsecond=0)
    metadata["creationTimestamp"] = _timestamp(now)
    errors = []
    if expiration < MIN_EXPIRATION_SECONDS:
        errors.append(
            fe.invalid(
                "spec.expirationSeconds",
                expiration,
                "may not specify a duration less than 10 minutes",
            )
        )
    if expiration > MAX_EXPIRATION_SECONDS:
        errors.append(
            fe.invalid(
                "spec.expirationSeconds",
                expiration,
                "may not specify a duration larger than 2^32 seconds",
            )
        )
    if errors:
        raise status_errors.invalid(GROUP, KIND, "", errors)
    bound = _bound_object(spec.get("boundObjectRef"), namespace, name, lookup)
    spec.setdefault("boundObjectRef", None)
    token = tokens.issue(account, audiences, expiration, bound, issued_at=now)
    request["kind"] = KIND
    request["apiVersion"] = f"{GROUP}/v1"
    request["status"] = {
        "token": token,
        "expirationTimestamp": _timestamp(now + datetime.timedelta(seconds=expiration)),
    }
    return request


def _bound_object(
    reference: Any, namespace: str, account_name: str, lookup: ObjectLookup
) -> BoundObject | None:
    if not isinstance(reference, dict) or not reference:
        return None
    kind = str(reference.get("kind") or "")
    api_version = str(reference.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    plural = _BINDABLE.get(kind)
    if group or plural is None:
        raise status_errors.bad_request(
            f"cannot bind token to object of type {group}/{version}, Kind={kind}"
        )
    name = str(reference.get("name") or "")
    found = lookup(plural, None if kind == "Node" else namespace, name)
    if found is None:
        raise status_errors.not_found("", plural, name)
    if kind == "Pod":
        pod_account = (found.get("spec") or {}).get("serviceAccountName")
        if pod_account != account_name:
            raise status_errors.bad_request(
                f'cannot bind token for serviceaccount "{account_name}" to pod running with '
                "different serviceaccount name."
            )
    uid = str((found.get("metadata") or {}).get("uid") or "")
    wanted = reference.get("uid")
    if wanted and wanted != uid:
        raise status_errors.conflict(
            "",
            kind,
            name,
            f"the UID in the bound object reference ({wanted}) does not match the UID in "
            "record. The object might have been deleted and then recreated",
        )
    return BoundObject(kind, name, uid)
