"""Impersonation: acting as another user with the ``Impersonate-*`` headers (``kubectl --as``).

``Impersonate-User`` names the user (``system:serviceaccount:NS:NAME`` is that service
account, which also brings its groups unless groups are given), ``Impersonate-Group`` (one
header per group), ``Impersonate-Uid`` and ``Impersonate-Extra-<key>`` add to it. The caller
must be allowed to ``impersonate`` each part: ``users``, ``groups`` and ``serviceaccounts`` in
the core group, ``uids`` and ``userextras/<key>`` in ``authentication.k8s.io``; the first part
refused answers 403 naming it. The impersonated user is in ``system:authenticated`` (unless it
asked for ``system:unauthenticated``), as upstream's impersonation filter does.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from typing import Final

from multidict import CIMultiDictProxy

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.auth.authorization.authorizers import Authorizer
from setpoint.cluster.apiserver.auth.authorization.forbidden import forbidden
from setpoint.cluster.apiserver.auth.authorization.rbac_index import SERVICE_ACCOUNT_PREFIX
from setpoint.cluster.apiserver.auth.identity import AUTHENTICATED_GROUP, UserInfo

USER_HEADER: Final = "Impersonate-User"
GROUP_HEADER: Final = "Impersonate-Group"
UID_HEADER: Final = "Impersonate-Uid"
EXTRA_HEADER_PREFIX: Final = "Impersonate-Extra-"
UNAUTHENTICATED_GROUP: Final = "system:unauthenticated"
ANONYMOUS: Final = "system:anonymous"
SERVICE_ACCOUNTS_GROUP: Final = "system:serviceaccounts"
AUTHENTICATION_GROUP: Final = "authentication.k8s.io"
_PREFIX: Final = "impersonate-"


def wants_impersonation(headers: Mapping[str, str]) -> bool:
    """Whether a request carries any ``Impersonate-*`` header."""
    # Every request asks this and nearly none impersonates: one search (in C) of the names
    # joined and lower-cased rules them all out; a hit is checked name by name.
    if _PREFIX not in "\n".join(headers).lower():
        return False
    return any(key.lower().startswith(_PREFIX) for key in headers)


def impersonate(real: UserInfo, headers: CIMultiDictProxy[str], authorizer: Authorizer) -> UserInfo:
    """The user the headers ask for, once ``real`` is allowed to impersonate every part."""
    username = _first(headers, USER_HEADER)
    groups = headers.getall(GROUP_HEADER, [])
    uid = _first(headers, UID_HEADER)
    extra: dict[str, list[str]] = {}
    for key in sorted(set(headers.keys())):
        if key.lower().startswith(EXTRA_HEADER_PREFIX.lower()):
            extra_key = urllib.parse.unquote(key[len(EXTRA_HEADER_PREFIX) :].lower())
            extra.setdefault(extra_key, []).extend(headers.getall(key, []))
    if username is None:
        requested = [f"Group {g}" for g in groups] + [f"Extra {k}" for k in extra]
        if uid is not None:
            requested.append(f"UID {uid}")
        raise status_errors.internal_error(
            f"requested [{' '.join(requested)}] without impersonating a user"
        )
    checks: list[Attributes] = []
    if username.startswith(SERVICE_ACCOUNT_PREFIX) and username.count(":") == 3:
        _, _, namespace, name = username.split(":")
        checks.append(_check(real, "serviceaccounts", name, namespace=namespace))
        if not groups:
            groups = [SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}"]
    else:
        checks.append(_check(real, "users", username))
    checks.extend(_check(real, "groups", group) for group in headers.getall(GROUP_HEADER, []))
    for key, values in extra.items():
        checks.extend(
            _check(real, "userextras", value, group=AUTHENTICATION_GROUP, subresource=key)
            for value in values
        )
    if uid is not None:
        checks.append(_check(real, "uids", uid, group=AUTHENTICATION_GROUP))
    for attributes in checks:
        decision = authorizer.authorize(attributes)
        if not decision.allowed:
            raise forbidden(attributes, decision.reason)
    groups = list(groups)
    if username != ANONYMOUS:
        if AUTHENTICATED_GROUP not in groups and UNAUTHENTICATED_GROUP not in groups:
            groups.append(AUTHENTICATED_GROUP)
    elif UNAUTHENTICATED_GROUP not in groups:
        groups.append(UNAUTHENTICATED_GROUP)
    return UserInfo(
        username,
        tuple(groups),
        uid or "",
        {key: tuple(values) for key, values in extra.items()},
    )


def _first(headers: CIMultiDictProxy[str], name: str) -> str | None:
    values = headers.getall(name, [])
    return values[0] if values else None


def _check(
    real: UserInfo,
    resource: str,
    name: str,
    *,
    namespace: str = "",
    group: str = "",
    subresource: str = "",
) -> Attributes:
    return Attributes(
        real,
        "impersonate",
        True,
        namespace=namespace,
        api_group=group,
        resource=resource,
        subresource=subresource,
        name=name,
    )
