"""Reconciles Foos: each keeps a Deployment of nginx named ``spec.deploymentName``.

sample-controller's ``syncHandler`` step by step: nothing to do without a deployment name; create
the Deployment, or bring its spec back to what the Foo says; refuse (a Warning Event, then a
retry with backoff) to touch a Deployment of that name that the Foo does not control; copy the
Deployment's available replicas into the Foo's status; a ``Synced`` Event.
"""

from __future__ import annotations

from typing import Any, Final

import setpoint
from sample_controller_operator.api.v1alpha1.foo import Foo
from sample_controller_operator.operator import op
from setpoint import kinds
from setpoint.api.rbac import Permission

#: sample-controller's messages, word for word.
MESSAGE_RESOURCE_EXISTS = 'Resource "{name}" already exists and is not managed by Foo'
MESSAGE_SYNCED = "Foo synced successfully"


def deployment_spec(foo: Foo) -> dict[str, Any]:
    """``newDeployment(foo)``'s spec: nginx, labelled with the Foo's name."""
    labels = {"app": "nginx", "controller": foo.metadata.name}
    return {
        "replicas": foo.spec.replicas if foo.spec.replicas is not None else 1,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
        },
    }


GROUP: Final = "samplecontroller.k8s.io"
#: Exactly what this reconciler does (sample-controller's least privilege), instead of all
#: that `for_` and `owns` could imply.
PERMISSIONS: Final = [
    Permission(GROUP, "foos", ["get", "list", "watch"]),
    Permission(GROUP, "foos/status", ["get", "update", "patch"]),
    # The Deployment's owner reference blocks the Foo's deletion (blockOwnerDeletion), which
    # the OwnerReferencesPermissionEnforcement admission plugin allows only to this.
    Permission(GROUP, "foos/finalizers", ["update"]),
    Permission("apps", "deployments", ["get", "list", "watch", "create", "update"]),
]


@op.reconciler(for_=Foo, owns=[kinds.Deployment], infer_permissions=False, permissions=PERMISSIONS)
async def reconcile_foo(ctx: setpoint.Context, request: setpoint.Request) -> None:
    foo: Foo | None = await ctx.get()
    if foo is None:
        return  # deleted: the garbage collector deletes its Deployment
    name = foo.spec.deployment_name
    if not name:
        ctx.log.warning("%s: deployment name must be specified", request)
        return  # as the original: no retry until the Foo changes

    def mutate(deployment: dict[str, Any]) -> None:
        deployment["spec"] = deployment_spec(foo)

    skeleton = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}}
    try:
        _, deployment = await ctx.create_or_update(skeleton, mutate, adopt=False)
    except setpoint.NotControlledError:
        message = MESSAGE_RESOURCE_EXISTS.format(name=name)
        ctx.recorder.warning(foo, "ErrResourceExists", message)
        raise setpoint.RetryLater(message) from None
    available = (deployment.get("status") or {}).get("availableReplicas") or 0
    await ctx.patch_status({"availableReplicas": available})
    ctx.recorder.normal(foo, "Synced", MESSAGE_SYNCED)
