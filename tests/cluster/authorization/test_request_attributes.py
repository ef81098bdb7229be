"""Request attributes from HTTP requests, as upstream's RequestInfoFactory derives them."""

from __future__ import annotations

import pytest

from setpoint.cluster.apiserver.auth.authorization.attributes import request_attributes
from setpoint.cluster.apiserver.auth.identity import ADMIN

# (method, path, query) -> (verb, namespace, group, resource, subresource, name) or a path
CASES = [
    ("GET", "/api/v1/namespaces/ns/pods", {}, ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "true"}, ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "1"}, ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods", {"watch": "false"}, ("list", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/pods", {}, ("list", "", "", "pods", "", "")),
    ("GET", "/api/v1/namespaces/ns/pods/p", {}, ("get", "ns", "", "pods", "", "p")),
    ("HEAD", "/api/v1/namespaces/ns/pods/p", {}, ("get", "ns", "", "pods", "", "p")),
    ("GET", "/api/v1/namespaces/ns/pods/p/log", {}, ("get", "ns", "", "pods", "log", "p")),
    ("POST", "/api/v1/namespaces/ns/pods/p/exec", {}, ("create", "ns", "", "pods", "exec", "p")),
    ("POST", "/api/v1/namespaces/ns/configmaps", {}, ("create", "ns", "", "configmaps", "", "")),
    (
        "PUT",
        "/apis/apps/v1/namespaces/ns/deployments/d/status",
        {},
        ("update", "ns", "apps", "deployments", "status", "d"),
    ),
    (
        "PATCH",
        "/apis/apps/v1/namespaces/ns/deployments/d/scale",
        {},
        ("patch", "ns", "apps", "deployments", "scale", "d"),
    ),
    ("DELETE", "/api/v1/namespaces/ns/secrets/s", {}, ("delete", "ns", "", "secrets", "", "s")),
    (
        "DELETE",
        "/api/v1/namespaces/ns/secrets",
        {},
        ("deletecollection", "ns", "", "secrets", "", ""),
    ),
    ("GET", "/api/v1/watch/namespaces/ns/pods", {}, ("watch", "ns", "", "pods", "", "")),
    ("GET", "/api/v1/watch/namespaces/ns/pods/p", {}, ("watch", "ns", "", "pods", "", "p")),
    (
        "GET",
        "/api/v1/namespaces/ns/pods",
        {"fieldSelector": "metadata.name=p"},
        ("list", "ns", "", "pods", "", "p"),
    ),
    (
        "GET",
        "/api/v1/namespaces/ns/pods",
        {"fieldSelector": "metadata.name!=p"},
        ("list", "ns", "", "pods", "", ""),
    ),
    (
        "GET",
        "/api/v1/namespaces/ns/pods",
        {"watch": "true", "fieldSelector": "metadata.name==p"},
        ("watch", "ns", "", "pods", "", "p"),
    ),
    # a namespace is in its own namespace; status and finalize are its subresources
    ("GET", "/api/v1/namespaces/ns", {}, ("get", "ns", "", "namespaces", "", "ns")),
    ("GET", "/api/v1/namespaces", {}, ("list", "", "", "namespaces", "", "")),
    (
        "PUT",
        "/api/v1/namespaces/ns/finalize",
        {},
        ("update", "ns", "", "namespaces", "finalize", "ns"),
    ),
    ("GET", "/api/v1/namespaces/ns/status", {}, ("get", "ns", "", "namespaces", "status", "ns")),
    (
        "GET",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin",
        {},
        ("get", "", "rbac.authorization.k8s.io", "clusterroles", "", "admin"),
    ),
    (
        "POST",
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {},
        ("create", "", "authorization.k8s.io", "selfsubjectaccessreviews", "", ""),
    ),
]

NON_RESOURCE = [
    ("GET", "/api", "get"),
    ("GET", "/apis", "get"),
    ("GET", "/apis/apps", "get"),
    # Discovery of a group version names no resource (RequestInfoFactory: fewer than 3 parts).
    ("GET", "/api/v1", "get"),
    ("GET", "/apis/apps/v1", "get"),
    ("GET", "/version", "get"),
    ("GET", "/openapi/v2", "get"),
    ("POST", "/logs/x", "post"),
    ("GET", "/", "get"),
]


@pytest.mark.parametrize(("method", "path", "query", "expected"), CASES)
def test_resource_requests(
    method: str, path: str, query: dict[str, str], expected: tuple[str, ...]
) -> None:
    found = request_attributes(ADMIN, method, path, query)
    assert found.resource_request
    assert (
        found.verb,
        found.namespace,
        found.api_group,
        found.resource,
        found.subresource,
        found.name,
    ) == expected


@pytest.mark.parametrize(("method", "path", "verb"), NON_RESOURCE)
def test_non_resource_requests(method: str, path: str, verb: str) -> None:
    found = request_attributes(ADMIN, method, path, {})
    assert not found.resource_request
    assert (found.verb, found.path) == (verb, path)
