"""The Widget operator written with Kopf, as its documentation shows.

    kopf run --standalone -n NAMESPACE bench/peers/contestants/kopf_widgets.py

One handler for create, update and resume; the child is built as a dict, adopted with
``kopf.adopt`` and created with the official ``kubernetes`` client (patched when it exists); the
status is set through the handler's ``patch``. Posting Kubernetes Events for handler outcomes
is turned off: the other contestants post none, and it is logging, not the operator's logic.
``$BENCH_WORKERS``, when set, bounds the threads that run the (sync) handler; by default Kopf's
own default applies.
"""

from __future__ import annotations

import os
from typing import Any

import kopf
import kubernetes

from bench.peers.widget_logic import GROUP, PLURAL, VERSION, child_data, child_name, ready_status


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Load the kubeconfig for the kubernetes client; no Events for handler outcomes."""
    settings.posting.enabled = False
    if os.environ.get("BENCH_WORKERS"):
        settings.execution.max_workers = int(os.environ["BENCH_WORKERS"])
    kubernetes.config.load_kube_config()


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
def reconcile(spec: Any, name: str, namespace: str, meta: Any, patch: kopf.Patch, **_: Any) -> None:
    """Create (or patch) the child ConfigMap, then set the status."""
    child: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": child_name(name)},
        "data": child_data(dict(spec)),
    }
    kopf.adopt(child)
    api = kubernetes.client.CoreV1Api()
    try:
        api.create_namespaced_config_map(namespace=namespace, body=child)
    except kubernetes.client.ApiException as error:
        if error.status != 409:
            raise
        api.patch_namespaced_config_map(child_name(name), namespace, {"data": child["data"]})
    for key, value in ready_status(meta["generation"]).items():
        patch.status[key] = value
