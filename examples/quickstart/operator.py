"""ConfigMap mirror: the quickstart operator of setpoint (see docs/runtime.md, "5-minute tutorial").

For every ConfigMap labelled ``setpoint.dev/mirror=true`` it keeps a child ConfigMap named
``<name>-mirror`` in the same namespace whose ``data`` equals the source's. The child is owned by
the source (a controller ownerReference), so:

- editing the source's data updates the mirror;
- editing or deleting the mirror by hand puts it back (its events re-reconcile the source);
- removing the label deletes the mirror; deleting the source lets the garbage collector delete it.

Run it with ``setpoint run examples/quickstart/operator.py --kubeconfig KUBECONFIG``.
"""

from __future__ import annotations

from typing import Any

import setpoint
from setpoint.controller import create_or_patch, set_controller_reference

#: The label that asks for a mirror.
MIRROR_LABEL = "setpoint.dev/mirror"
#: The label every mirror carries: the name of its source (so `kubectl get -l` finds mirrors).
MIRROR_OF_LABEL = "setpoint.dev/mirror-of"
MIRROR_SUFFIX = "-mirror"

op = setpoint.Operator("configmap-mirror")


# The primary kind and the child kind are both ConfigMaps: events of a mirror re-reconcile its
# source (its controller owner), events of any other ConfigMap reconcile that ConfigMap itself.
@op.reconciler(for_=("v1", "ConfigMap"), owns=[("v1", "ConfigMap")])
async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> setpoint.Result | None:
    source = await ctx.get()  # from the cache, as a fresh dict; None once deleted
    if source is None:
        return None  # the garbage collector deletes the mirror with its owner
    labels = source["metadata"].get("labels") or {}
    if labels.get(MIRROR_LABEL) != "true":
        # Not (or no longer) asking for a mirror: delete the mirrors it controls, if any.
        for child in await ctx.owned("v1", "ConfigMap"):
            await ctx.client.delete(child, missing_ok=True)
        return None

    mirror: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": request.name + MIRROR_SUFFIX, "namespace": request.namespace},
    }

    def mutate(obj: dict[str, Any]) -> None:
        # Only the fields this operator owns; create_or_patch writes only when they differ.
        obj["metadata"].setdefault("labels", {})[MIRROR_OF_LABEL] = request.name
        obj["data"] = dict(source.get("data") or {})
        set_controller_reference(source, obj)

    outcome, _ = await create_or_patch(ctx.client, mirror, mutate)
    if outcome != "unchanged":
        ctx.log.info("mirror %s %s", mirror["metadata"]["name"], outcome)
    return None
