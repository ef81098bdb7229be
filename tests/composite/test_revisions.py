"""Rolling updates through ControllerRevisions, as Metacontroller's CompositeController does
them: a change of a ``revisionHistory`` field path moves the children to the new revision one
at a time, each only once the children already moved pass the ``statusChecks``; other changes
reach every child at once; the revisions go away with the parent."""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from setpoint.api.gvk import ResourceInfo
from setpoint.client import Client
from setpoint.composite.hook_wire import HookError
from setpoint.composite.revisions import (
    apply_field_patch,
    field_patch,
    go_json,
    revision_name,
)
from setpoint.composite.spec import ConditionCheck
from setpoint.testing import install_crds, wait_for

from .conftest import GROUP, THING_CRD, HookServer, RunningMetacontroller
from .test_composite_webhooks import THINGS, create_thing, thing_status

REVISIONS = ("metacontroller.k8s.io/v1alpha1", "ControllerRevision")
PART_CRD = copy.deepcopy(THING_CRD)
PART_CRD["metadata"]["name"] = f"parts.{GROUP}"
PART_CRD["spec"]["names"] = {
    "kind": "Part",
    "listKind": "PartList",
    "plural": "parts",
    "singular": "part",
}
PARTS = [f"p-{i}" for i in range(3)]


def parts_of(request: dict[str, Any]) -> dict[str, Any]:
    spec = request["parent"]["spec"]
    return {
        "children": [
            {
                "apiVersion": f"{GROUP}/v1",
                "kind": "Part",
                "metadata": {"name": name},
                "spec": {"size": spec["size"], "note": spec.get("note", "")},
            }
            for name in PARTS
        ],
        "status": {"size": spec["size"]},
    }


def rolling_spec(hooks: HookServer) -> dict[str, Any]:
    return {
        "generateSelector": True,
        "parentResource": {**THINGS, "revisionHistory": {"fieldPaths": ["spec.size"]}},
        "childResources": [
            {
                "apiVersion": f"{GROUP}/v1",
                "resource": "parts",
                "updateStrategy": {
                    "method": "RollingInPlace",
                    "statusChecks": {"conditions": [{"type": "Ready", "status": "True"}]},
                },
            }
        ],
        "hooks": {"sync": {"webhook": {"url": hooks.url + "/sync"}}},
    }


async def parts(client: Client, namespace: str) -> dict[str, tuple[Any, Any]]:
    found = await client.list(f"{GROUP}/v1", "Part", namespace=namespace)
    return {p["metadata"]["name"]: (p["spec"].get("size"), p["spec"].get("note")) for p in found}


async def revisions(client: Client, namespace: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await client.list(*REVISIONS, namespace=namespace)
    return found


def updated(status: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == "Updated"), None)


async def make_ready(client: Client, namespace: str, name: str) -> None:
    await client.patch(
        f"{GROUP}/v1",
        "Part",
        name,
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        namespace=namespace,
        subresource="status",
        patch_type="merge",
    )


async def test_a_change_of_a_revision_field_rolls_child_by_child_behind_the_status_checks(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    await install_crds(client, PART_CRD)
    hooks.handlers["/sync"] = parts_of
    await metacontroller.declare("CompositeController", "things", rolling_spec(hooks))
    thing = await create_thing(client, namespace, size=1)
    uid = thing["metadata"]["uid"]
    await wait_for(
        lambda: parts(client, namespace),
        lambda found: found == dict.fromkeys(PARTS, (1, "")),
        timeout=10,
        what="3 parts of size 1",
    )
    # One revision, named, labelled and owned as Metacontroller does, holding every child.
    first_name = (
        f"things.{GROUP}-" + hashlib.sha1((uid + '{"spec":{"size":1}}').encode()).hexdigest()
    )
    (first,) = await wait_for(
        lambda: revisions(client, namespace), lambda found: len(found) == 1, timeout=10
    )
    assert first["metadata"]["name"] == first_name
    assert first["metadata"]["labels"] == {
        "controller-uid": uid,
        "metacontroller.k8s.io/apiGroup": GROUP,
        "metacontroller.k8s.io/resource": "things",
    }
    (owner,) = first["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Thing",
        "a",
        uid,
        True,
    )
    assert first["parentPatch"] == {"spec": {"size": 1}}
    assert first["children"] == [{"apiGroup": GROUP, "kind": "Part", "names": PARTS}]
    status = await thing_status(client, namespace, lambda s: updated(s))
    assert updated(status["status"]) == {
        "type": "Updated",
        "status": "True",
        "reason": "OnLatestRevision",
        "message": f"latest ControllerRevision: {first_name}",
    }

    # A field outside the revision's field paths reaches every child at once.
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"note": "x"}}, namespace=namespace)
    await wait_for(
        lambda: parts(client, namespace),
        lambda found: found == dict.fromkeys(PARTS, (1, "x")),
        timeout=10,
        what="the note on every part",
    )
    assert [r["metadata"]["name"] for r in await revisions(client, namespace)] == [first_name]

    # A revision field: a second revision; the first child moves, then waits for Ready.
    await client.patch(f"{GROUP}/v1", "Thing", "a", {"spec": {"size": 2}}, namespace=namespace)
    status = await thing_status(
        client, namespace, lambda s: (updated(s) or {}).get("reason") == "RolloutWaiting"
    )
    assert updated(status["status"])["message"] == (
        'child Part p-0 failed status check: required condition type missing: "Ready"'
    )
    assert await parts(client, namespace) == {"p-0": (2, "x"), "p-1": (1, "x"), "p-2": (1, "x")}
    held = {r["metadata"]["name"]: r for r in await revisions(client, namespace)}
    assert len(held) == 2
    assert held[first_name]["children"] == [
        {"apiGroup": GROUP, "kind": "Part", "names": ["p-1", "p-2"]}
    ]
    (latest,) = [r for name, r in held.items() if name != first_name]
    assert latest["parentPatch"] == {"spec": {"size": 2}}
    assert latest["children"] == [{"apiGroup": GROUP, "kind": "Part", "names": ["p-0"]}]
    # The old revision's hook call saw the parent as it was in that revision.
    sizes_seen = {call["parent"]["spec"]["size"] for call in hooks.calls["/sync"][-2:]}
    assert sizes_seen == {1, 2}

    await make_ready(client, namespace, "p-0")
    await wait_for(
        lambda: parts(client, namespace),
        lambda found: found == {"p-0": (2, "x"), "p-1": (2, "x"), "p-2": (1, "x")},
        timeout=10,
        what="p-1 rolled once p-0 is Ready",
    )
    await make_ready(client, namespace, "p-1")
    await wait_for(
        lambda: parts(client, namespace),
        lambda found: found == dict.fromkeys(PARTS, (2, "x")),
        timeout=10,
        what="every part rolled",
    )
    # The first revision holds no child any more: it is deleted.
    (last,) = await wait_for(
        lambda: revisions(client, namespace), lambda found: len(found) == 1, timeout=10
    )
    assert last["metadata"]["name"] == latest["metadata"]["name"]
    assert last["children"] == [{"apiGroup": GROUP, "kind": "Part", "names": PARTS}]
    status = await thing_status(
        client, namespace, lambda s: (updated(s) or {}).get("reason") == "OnLatestRevision"
    )
    assert status["status"]["size"] == 2

    # The revisions are garbage-collected with the parent.
    await client.delete(status)

    async def no_revisions() -> bool:
        return not await revisions(client, namespace)

    await wait_for(no_revisions, timeout=10, what="the revisions garbage-collected")


def test_field_patches_and_revision_names_are_metacontroller_s() -> None:
    parent = {"metadata": {"uid": "u"}, "spec": {"a": {"b": 1, "c": "<&>"}, "d": [1]}}
    patch = field_patch(parent, ["spec.a.c", "spec.d", "spec.missing.x"])
    assert patch == {"spec": {"a": {"c": "<&>"}, "d": [1]}}
    # Go's json.Marshal: sorted keys, no spaces, HTML characters escaped.
    assert go_json(patch) == b'{"spec":{"a":{"c":"\\u003c\\u0026\\u003e"},"d":[1]}}'
    older = copy.deepcopy(parent)
    apply_field_patch(older, {"spec": {"a": {"c": "old"}}}, ["spec.a.c", "spec.d"])
    assert older["spec"] == {"a": {"b": 1, "c": "old"}, "d": [1]}
    with pytest.raises(HookError, match=r"fieldPaths: spec\.d\.x: spec\.d is not an object"):
        field_patch(parent, ["spec.d.x"])
    pods = ResourceInfo("", "v1", "Pod", "pods", True, "PodList")
    name = revision_name(pods, "u", b"{}")
    assert name == "pods.core-" + hashlib.sha1(b"u{}").hexdigest()


def test_status_checks_say_why_a_child_fails_as_metacontroller() -> None:
    check = ConditionCheck("Ready", "True", "Done")
    assert check.failure({}) == 'required condition type missing: "Ready"'
    child = {"status": {"conditions": [{"type": "Ready", "status": "False"}]}}
    assert check.failure(child) == '"Ready" condition status is "False" (want "True")'
    child["status"]["conditions"][0].update(status="True", reason="Soon")
    assert check.failure(child) == '"Ready" condition reason is "Soon" (want "Done")'
    child["status"]["conditions"][0]["reason"] = "Done"
    assert check.failure(child) is None


async def test_an_uncontrolled_revision_matching_the_parent_selector_is_adopted(
    client: Client, namespace: str, hooks: HookServer, metacontroller: RunningMetacontroller
) -> None:
    # A parent with spec.selector: its revisions carry its spec.template.metadata.labels.
    await install_crds(client, PART_CRD)
    labels = {"app": "a"}
    parent_spec = {
        "size": 1,
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels}},
    }

    def sync(request: dict[str, Any]) -> dict[str, Any]:
        answer = parts_of(request)
        for child in answer["children"]:
            child["metadata"]["labels"] = labels
        return answer

    hooks.handlers["/sync"] = sync
    body = rolling_spec(hooks)
    body.pop("generateSelector")
    body["parentResource"]["revisionHistory"] = {"fieldPaths": ["spec.size"]}
    # Left behind by a parent deleted with --cascade=orphan, say.
    left = await client.create(
        {
            "apiVersion": REVISIONS[0],
            "kind": REVISIONS[1],
            "metadata": {
                "name": "things-left-behind",
                "namespace": namespace,
                "labels": {
                    **labels,
                    "metacontroller.k8s.io/apiGroup": GROUP,
                    "metacontroller.k8s.io/resource": "things",
                },
            },
            "parentPatch": {"spec": {"size": 1}},
        }
    )
    await metacontroller.declare("CompositeController", "things", body)
    thing = await create_thing(client, namespace, **parent_spec)
    adopted = await wait_for(
        lambda: client.get(*REVISIONS, "things-left-behind", namespace=namespace),
        lambda revision: revision.get("children"),
        timeout=10,
        what="the revision adopted and holding the children",
    )
    assert adopted["metadata"]["uid"] == left["metadata"]["uid"]
    (owner,) = adopted["metadata"]["ownerReferences"]
    assert (owner["uid"], owner["controller"]) == (thing["metadata"]["uid"], True)
    assert adopted["children"] == [{"apiGroup": GROUP, "kind": "Part", "names": PARTS}]
    assert len(await revisions(client, namespace)) == 1  # no second revision for size 1
