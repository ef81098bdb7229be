"""What a request asks to do, in the terms authorizers decide on (``authorizer.Attributes``).

:func:`request_attributes` reads them off an HTTP request exactly as upstream's
``RequestInfoFactory`` does: paths under ``/api`` and ``/apis/GROUP/VERSION`` are resource
requests, everything else is a non-resource request whose verb is the lower-cased method.
A GET of a collection is ``list`` (``watch`` with ``watch=true``), a DELETE of a collection is
``deletecollection``, ``/watch/`` paths are ``watch``, and a list or watch selecting one
``metadata.name`` names that object.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, NamedTuple

from setpoint.cluster.apiserver.auth.identity import UserInfo

#: HTTP methods as resource verbs (anything else has the empty verb, which no rule grants).
_METHOD_VERBS: Final = {
    "POST": "create",
    "GET": "get",
    "HEAD": "get",
    "PUT": "update",
    "PATCH": "patch",
    "DELETE": "delete",
}
#: Path prefixes that turn the rest of the path into a verb (``/api/v1/watch/...``).
_SPECIAL_VERBS: Final = frozenset({"proxy", "watch"})
#: ``/namespaces/NAME/<this>`` addresses the namespace itself, not a resource inside it.
_NAMESPACE_SUBRESOURCES: Final = frozenset({"status", "finalize"})
_TRUE_VALUES: Final = frozenset({"true", "1", "t", "True", "TRUE", "T"})
#: A name a path segment may carry (``path.IsValidPathSegmentName``).
_BAD_SEGMENT: Final = re.compile(r"^\.\.?$|[/%]")


class Attributes(NamedTuple):
    """One request as an authorizer sees it (a tuple: made once per request, cheaply)."""

    user: UserInfo
    verb: str
    resource_request: bool = True
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    #: The URL path of a non-resource request.
    path: str = ""


def request_attributes(
    user: UserInfo, method: str, path: str, query: Mapping[str, str]
) -> Attributes:
    """The attributes of ``method path?query`` made by ``user`` (``RequestInfoFactory``)."""
    parts = [part for part in path.split("/") if part]
    if (
        not parts
        or parts[0] not in ("api", "apis")
        # Discovery (/api/v1, /apis/GROUP/VERSION) names no resource: a non-resource request.
        or len(parts) < (4 if parts[0] == "apis" else 3)
    ):
        return Attributes(user, method.lower(), resource_request=False, path=path)
    if parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        group, version, rest = "", parts[1], parts[2:]
    verb = _METHOD_VERBS.get(method.upper(), "")
    if rest and rest[0] in _SPECIAL_VERBS:
        verb = rest[0]
        rest = rest[1:]
    namespace = ""
    if rest and rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    resource = rest[0] if rest else ""
    name = rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name and verb == "get":
        verb = "watch" if query.get("watch", "") in _TRUE_VALUES else "list"
        selected = _selected_name(query.get("fieldSelector", ""))
        if selected:
            name = selected
    if not name and verb == "delete":
        verb = "deletecollection"
    return Attributes(
        user,
        verb,
        True,
        namespace=namespace,
        api_group=group,
        api_version=version,
        resource=resource,
        subresource=subresource,
        name=name,
    )


def _selected_name(selector: str) -> str:
    """The name a field selector requires exactly (``metadata.name=x`` or ``==``), else ''."""
    found = ""
    for term in selector.split(","):
        term = term.strip()
        for operator in ("==", "="):
            key, sep, value = term.partition(operator)
            if sep and not key.endswith("!"):
                if key.strip() == "metadata.name":
                    found = value.strip()
                break
    return found if found and not _BAD_SEGMENT.search(found) else ""
