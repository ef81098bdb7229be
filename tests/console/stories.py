"""What the fake endpoints tell: a Foo's life as the audit feed and an operator's trace
would record it (a kubectl create, a reconcile creating its Deployment, a kubectl patch of
``spec.replicas`` and the reconcile it caused, then a failing reconcile in backoff)."""

from __future__ import annotations

from typing import Any

from tests.console.contract_fake import ContractFake, controller

FOO = "samplecontroller.k8s.io/v1alpha1"
CONTROLLER = "foo"
ERROR = 'Resource "taken" already exists and is not managed by Foo'


def _ref(namespace: str, name: str, uid: str, resource: str = "foos") -> dict[str, Any]:
    return {
        "apiVersion": FOO,
        "resource": resource,
        "kind": "Foo",
        "namespace": namespace,
        "name": name,
        "uid": uid,
        "subresource": None,
    }


def _obj(namespace: str, name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": FOO, "kind": "Foo", "namespace": namespace, "name": name, "uid": uid}


def reconcile(
    fake: ContractFake,
    namespace: str,
    name: str,
    uid: str,
    number: int,
    *,
    cause: dict[str, Any],
    writes: list[dict[str, Any]] = (),  # type: ignore[assignment]
    error: str | None = None,
) -> None:
    """One pass: watch event, enqueue with its cause, dequeue, reconcile, writes, end."""
    key = f"{namespace}/{name}"
    obj = _obj(namespace, name, uid)
    rid = f"r{number}"
    fake.add_trace(
        {
            "type": "watch",
            "controller": CONTROLLER,
            "object": obj,
            "eventType": cause.get("eventType") or "MODIFIED",
            "resourceVersion": str(100 + number),
            "ownWrite": False,
        }
    )
    fake.add_trace(
        {
            "type": "enqueue",
            "controller": CONTROLLER,
            "object": obj,
            "key": key,
            "cause": cause,
            "ownWrite": False,
            "deduplicated": False,
        }
    )
    fake.add_trace(
        {
            "type": "dequeue",
            "controller": CONTROLLER,
            "object": obj,
            "key": key,
            "queueWaitSeconds": 0.0021,
            "retries": 1 if error else 0,
        },
        after=0.002,
    )
    fake.add_trace(
        {
            "type": "reconcileStart",
            "controller": CONTROLLER,
            "object": obj,
            "key": key,
            "reconcileId": rid,
        }
    )
    for write in writes:
        fake.add_trace(
            {"type": "write", "controller": CONTROLLER, "reconcileId": rid, **write}, after=0.004
        )
    if error:
        fake.add_trace(
            {
                "type": "event",
                "controller": CONTROLLER,
                "object": obj,
                "reconcileId": rid,
                "eventType": "Warning",
                "reason": "ErrResourceExists",
                "message": error,
            }
        )
    fake.add_trace(
        {
            "type": "reconcileEnd",
            "controller": CONTROLLER,
            "object": obj,
            "key": key,
            "reconcileId": rid,
            "durationSeconds": 0.012,
            "result": "error" if error else "success",
            "requeueAfterSeconds": None,
            "error": error,
            "backoffSeconds": 0.01 if error else None,
        },
        after=0.012,
    )


def foo_story(fake: ContractFake, namespace: str, name: str, uid: str) -> None:
    """Create, first reconcile (creates the Deployment), patch replicas, its reconcile, then
    a failing reconcile; the controller shows the key in backoff."""
    fake.controllers = [
        controller(
            CONTROLLER,
            f"{FOO}/Foo",
            queue={
                "depth": 1,
                "oldestAgeSeconds": 0.4,
                "inBackoff": [
                    {
                        "key": f"{namespace}/{name}",
                        "retries": 3,
                        "nextAttemptInSeconds": 0.08,
                        "lastError": ERROR,
                    }
                ],
            },
            workers={"max": 2, "busy": 1},
            reconciles={
                "total": 5,
                "errors": 3,
                "requeues": 0,
                "perSecond1m": 0.08,
                "latencySeconds": {"p50": 0.011, "p90": 0.02, "p99": 0.03},
            },
        )
    ]
    fake.add_audit(
        {
            "verb": "create",
            "objectRef": _ref(namespace, name, uid),
            "fieldManager": "kubectl-client-side-apply",
            "responseCode": 201,
            "object": {
                "apiVersion": FOO,
                "kind": "Foo",
                "metadata": {"name": name, "namespace": namespace, "uid": uid},
                "spec": {"deploymentName": name, "replicas": 1},
            },
        }
    )
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "namespace": namespace,
        "name": name,
        "uid": "d-1",
    }
    reconcile(
        fake,
        namespace,
        name,
        uid,
        1,
        cause={"kind": "event", "handler": None, "source": None, "eventType": "ADDED"},
        writes=[
            {
                "verb": "apply",
                "object": deployment,
                "resourceVersion": "200",
                "fieldManager": "sample-controller",
                "diff": None,
            }
        ],
    )
    fake.add_audit(
        {
            "verb": "create",
            "user": {"username": "system:serviceaccount:op:foo", "groups": []},
            "fieldManager": "sample-controller",
            "responseCode": 201,
            "objectRef": {
                **_ref(namespace, name, "d-1", "deployments"),
                "apiVersion": "apps/v1",
                "kind": "Deployment",
            },
            "object": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "uid": "d-1",
                    "ownerReferences": [{"uid": uid, "kind": "Foo", "name": name}],
                },
            },
        }
    )
    fake.add_audit(
        {
            "verb": "patch",
            "objectRef": _ref(namespace, name, uid),
            "fieldManager": "kubectl-patch",
            "resourceVersion": "300",
            "diff": [{"op": "replace", "path": "/spec/replicas", "value": 3}],
        },
        after=1.0,
    )
    reconcile(
        fake,
        namespace,
        name,
        uid,
        2,
        cause={"kind": "event", "handler": None, "source": None, "eventType": "MODIFIED"},
        writes=[
            {
                "verb": "patch",
                "object": deployment,
                "resourceVersion": "301",
                "fieldManager": "sample-controller",
                "diff": [{"op": "replace", "path": "/spec/replicas", "value": 3}],
            }
        ],
    )
    fake.add_audit(
        {
            "verb": "patch",
            "objectRef": {**_ref(namespace, name, uid), "subresource": "status"},
            "user": {"username": "system:serviceaccount:op:foo", "groups": []},
            "fieldManager": "sample-controller",
            "resourceVersion": "302",
            "diff": [{"op": "replace", "path": "/status/availableReplicas", "value": 3}],
        }
    )
    fake.add_audit(
        {
            "verb": "patch",
            "objectRef": _ref(namespace, name, uid),
            "fieldManager": "kubectl-patch",
            "resourceVersion": "310",
            "diff": [{"op": "replace", "path": "/spec/deploymentName", "value": "taken"}],
        },
        after=1.0,
    )
    for number in (3, 4):
        reconcile(
            fake,
            namespace,
            name,
            uid,
            number,
            error=ERROR,
            cause={
                "kind": "backoff" if number == 4 else "event",
                "handler": None,
                "source": None,
                "eventType": None if number == 4 else "MODIFIED",
            },
        )
