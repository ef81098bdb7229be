"""Whatever a client sends, the server answers with a Status (never a 5xx) and keeps serving."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.testing.background_cluster import BackgroundCluster

NAMESPACE = "robustness"
PATHS = (
    f"/api/v1/namespaces/{NAMESPACE}/configmaps",
    f"/api/v1/namespaces/{NAMESPACE}/configmaps/x",
    f"/api/v1/namespaces/{NAMESPACE}/pods",
    f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments",
    f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/x/scale",
    f"/api/v1/namespaces/{NAMESPACE}/events",
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    f"/api/v1/namespaces/{NAMESPACE}/finalize",
)
KEYS = st.sampled_from(
    [
        "metadata",
        "spec",
        "status",
        "data",
        "name",
        "labels",
        "finalizers",
        "replicas",
        "containers",
        "template",
        "kind",
        "apiVersion",
        "generateName",
        "ownerReferences",
        "resourceVersion",
        "involvedObject",
        "eventTime",
        "versions",
        "names",
        "group",
    ]
)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12,
)


def _send(cluster: BackgroundCluster, method: str, path: str, body: Any, content_type: str) -> int:
    request = urllib.request.Request(
        cluster.url + path,
        data=json.dumps(body).encode(),
        method=method,
        headers={"Authorization": f"Bearer {cluster.token}", "Content-Type": content_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        status = json.loads(error.read())
        assert status["kind"] == "Status"
        assert status["code"] == error.code
        return int(error.code)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    method=st.sampled_from(["POST", "PUT", "PATCH", "DELETE"]),
    path=st.sampled_from(PATHS),
    body=JSON,
    content_type=st.sampled_from(
        ["application/json", "application/merge-patch+json", "application/json-patch+json"]
    ),
)
def test_arbitrary_bodies_never_break_the_server(
    robust_cluster: BackgroundCluster, method: str, path: str, body: Any, content_type: str
) -> None:
    assert _send(robust_cluster, method, path, body, content_type) < 500
