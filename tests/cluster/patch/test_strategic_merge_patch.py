"""Strategic merge patch: the documented cases of apimachinery's ``strategicpatch`` tests, as
facts (schema metadata from the upstream OpenAPI definitions), and the HTTP contract."""

from __future__ import annotations

import re
from typing import Any

import pytest

from setpoint.cluster.apiserver.patch.merge_schema import builtin_root
from setpoint.cluster.apiserver.patch.strategic import StrategicPatchError, strategic_merge_patch
from tests.cluster.patch.conftest import SMP, Gadgets
from tests.cluster.raw_api import RawAPI


def _smp(api_version: str, kind: str, live: dict[str, Any], patch: dict[str, Any]) -> Any:
    root = builtin_root(api_version, kind)
    assert root is not None
    return strategic_merge_patch(live, patch, root)


APP = {"name": "app", "image": "app:1"}
SIDE = {"name": "side", "image": "side:1"}
POD_LIVE = {"spec": {"containers": [APP, SIDE]}}

# (description, kind, live, patch, expected)
CASES: list[tuple[str, tuple[str, str], dict[str, Any], dict[str, Any], dict[str, Any]]] = [
    (
        "maps merge; null deletes a key",
        ("v1", "ConfigMap"),
        {"data": {"a": "1", "b": "2"}},
        {"data": {"b": None, "c": "3"}},
        {"data": {"a": "1", "c": "3"}},
    ),
    (
        "a null for a missing key is ignored",
        ("v1", "ConfigMap"),
        {"data": {"a": "1"}},
        {"data": {"z": None}},
        {"data": {"a": "1"}},
    ),
    (
        "merge lists match by key; new elements come in patch order before server-only ones",
        ("v1", "Pod"),
        POD_LIVE,
        {"spec": {"containers": [{"name": "app", "image": "app:2"}, {"name": "new"}]}},
        {"spec": {"containers": [{"name": "app", "image": "app:2"}, {"name": "new"}, SIDE]}},
    ),
    (
        "$patch: delete removes one element",
        ("v1", "Pod"),
        POD_LIVE,
        {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}},
        {"spec": {"containers": [APP]}},
    ),
    (
        "$patch: replace in a list keeps only the other patch elements",
        ("v1", "Pod"),
        POD_LIVE,
        {"spec": {"containers": [{"name": "only"}, {"$patch": "replace"}]}},
        {"spec": {"containers": [{"name": "only"}]}},
    ),
    (
        "$patch: replace in a map replaces the map",
        ("v1", "ConfigMap"),
        {"data": {"a": "1"}},
        {"data": {"$patch": "replace", "z": "9"}},
        {"data": {"z": "9"}},
    ),
    (
        "$patch: delete in a map empties it",
        ("v1", "ConfigMap"),
        {"data": {"a": "1"}},
        {"data": {"$patch": "delete"}},
        {"data": {}},
    ),
    (
        "primitive merge lists (finalizers) are a union",
        ("v1", "ConfigMap"),
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"finalizers": ["b", "c"]}},
        {"metadata": {"finalizers": ["a", "b", "c"]}},
    ),
    (
        "$deleteFromPrimitiveList removes values",
        ("v1", "ConfigMap"),
        {"metadata": {"finalizers": ["a", "b"]}},
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
        {"metadata": {"finalizers": ["b"]}},
    ),
    (
        "lists without a merge strategy are replaced (tolerations, args)",
        ("v1", "Pod"),
        {"spec": {"tolerations": [{"key": "a"}], "containers": [{"name": "c", "args": ["1"]}]}},
        {"spec": {"tolerations": [{"key": "b"}], "containers": [{"name": "c", "args": ["2"]}]}},
        {"spec": {"tolerations": [{"key": "b"}], "containers": [{"name": "c", "args": ["2"]}]}},
    ),
    (
        "owner references merge by uid",
        ("v1", "ConfigMap"),
        {"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}},
        {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]}},
        {"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}, {"uid": "1", "name": "a"}]}},
    ),
    (
        "$retainKeys drops the keys it does not list",
        ("apps/v1", "Deployment"),
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
        {"spec": {"strategy": {"type": "Recreate"}}},
    ),
    (
        "without $retainKeys the other union member stays",
        ("apps/v1", "Deployment"),
        {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}},
        {"spec": {"strategy": {"type": "Recreate"}}},
        {"spec": {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}},
    ),
    (
        "a replace-strategy struct (PDB selector) is replaced",
        ("policy/v1", "PodDisruptionBudget"),
        {"spec": {"selector": {"matchLabels": {"a": "1"}}}},
        {"spec": {"selector": {"matchLabels": {"b": "2"}}}},
        {"spec": {"selector": {"matchLabels": {"b": "2"}}}},
    ),
    (
        "$setElementOrder orders the listed elements",
        ("v1", "Pod"),
        {"spec": {"containers": [APP, SIDE]}},
        {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "app"}]}},
        {"spec": {"containers": [SIDE, APP]}},
    ),
    (
        "a value of another JSON type replaces",
        ("v1", "ConfigMap"),
        {"metadata": {"labels": {"a": "1"}}},
        {"metadata": {"labels": None}},
        {"metadata": {}},
    ),
]


@pytest.mark.parametrize(
    ("kind", "live", "patch", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_strategic_merge_patch_cases(
    kind: tuple[str, str], live: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert _smp(*kind, live, patch) == expected


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        (
            {"spec": {"containers": [{"image": "x"}]}},
            "map: map[image:x] does not contain declared merge key: name",
        ),
        (
            {"spec": {"containers": [{"name": "app", "$patch": "bogus"}]}},
            "unknown patch type: bogus in map: map[$patch:bogus name:app]",
        ),
        ({"spec": {"$patch": "bogus"}}, "unknown patch type: bogus in map: map[$patch:bogus]"),
    ],
)
def test_bad_patches(patch: dict[str, Any], message: str) -> None:
    with pytest.raises(StrategicPatchError, match="^" + re.escape(message)):
        _smp("v1", "Pod", POD_LIVE, patch)


async def test_http_strategic_merge_patch_on_a_deployment(
    api_only: RawAPI, api_only_namespace: str
) -> None:
    # The API server alone: no deployment controller adds its own managedFields entries.
    api = api_only
    path = f"/apis/apps/v1/namespaces/{api_only_namespace}/deployments"
    deployment = {
        "metadata": {"name": "d", "finalizers": ["example.com/a"]},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "app", "image": "app:1"}]},
            },
        },
    }
    assert (await api.request("POST", path, deployment)).status == 201
    reply = await api.request(
        "PATCH",
        path + "/d",
        {
            "metadata": {"finalizers": ["example.com/b"]},
            "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "s:1"}]}}},
        },
        content_type=SMP,
    )
    assert reply.status == 200, reply.body
    assert sorted(reply.body["metadata"]["finalizers"]) == ["example.com/a", "example.com/b"]
    names = [c["name"] for c in reply.body["spec"]["template"]["spec"]["containers"]]
    assert sorted(names) == ["app", "side"]
    # No fieldManager: the manager is the User-Agent's first word (aiohttp sends "Python/3...").
    assert {e["manager"] for e in reply.body["metadata"]["managedFields"]} == {"Python"}
    cleanup = await api.request(
        "PATCH",
        path + "/d",
        {"metadata": {"$deleteFromPrimitiveList/finalizers": ["example.com/a", "example.com/b"]}},
        content_type=SMP,
    )
    assert cleanup.body["metadata"].get("finalizers", []) == []


async def test_http_bad_strategic_patch_is_400(api: RawAPI, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert (await api.request("POST", path, pod)).status == 201
    reply = await api.request(
        "PATCH", path + "/p", {"spec": {"containers": [{"image": "x"}]}}, content_type=SMP
    )
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")


async def test_custom_resources_refuse_strategic_merge_patch(gadgets: Gadgets) -> None:
    await gadgets.apply(gadgets.manifest("g", size=1), "alice")
    reply = await gadgets.api.request(
        "PATCH", gadgets.path("g"), {"spec": {"size": 2}}, content_type=SMP
    )
    assert (reply.status, reply.body["reason"]) == (415, "UnsupportedMediaType")
    assert reply.body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
