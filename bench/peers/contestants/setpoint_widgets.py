"""The Widget operator written with setpoint's public API, as docs/runtime.md recommends.

    setpoint run bench/peers/contestants/setpoint_widgets.py -n NAMESPACE

``ctx.get()`` reads the Widget from the cache, ``ctx.apply_owned`` server-side applies the child
(nothing is sent when the cached child already matches) and ``ctx.patch_status`` merge-patches
the status (nothing is sent when it already holds). ``$BENCH_WORKERS`` sets ``max_concurrent``
(default 16); ``$BENCH_IGNORE_OWN_WRITES=1`` opts in to ``ignore_own_writes`` (by default the
events of the reconcile's own writes wake it again).
"""

from __future__ import annotations

import os

import setpoint
from bench.peers.widget_logic import API_VERSION, KIND, child_data, child_name, ready_status

WORKERS = int(os.environ.get("BENCH_WORKERS", "16"))
IGNORE_OWN_WRITES = os.environ.get("BENCH_IGNORE_OWN_WRITES") == "1"

op = setpoint.Operator("bench-widgets")


@op.reconciler(
    for_=(API_VERSION, KIND),
    owns=[("v1", "ConfigMap")],
    max_concurrent=WORKERS,
    ignore_own_writes=IGNORE_OWN_WRITES,
)
async def reconcile(ctx: setpoint.Context, request: setpoint.Request) -> None:
    """Make the child ConfigMap match the spec, then report it in the status."""
    widget = await ctx.get()
    if widget is None:
        return
    child = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": child_name(request.name)},
        "data": child_data(widget.get("spec") or {}),
    }
    await ctx.apply_owned(child)
    await ctx.patch_status(ready_status(widget["metadata"]["generation"]))
