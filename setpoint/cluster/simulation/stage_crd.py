"""The ``stages.kwok.x-k8s.io`` CustomResourceDefinition the local cluster installs.

Why a CRD and not a built-in kind: kwok serves Stage as a CRD too, so ``kubectl get stages``,
``kubectl explain stage`` and ``kubectl apply -f`` of kwok's stage files behave as on a kwok
cluster; discovery keeps listing exactly kube-apiserver 1.32's built-in resources; and a
user who does not want it can see and delete it like any CRD. The schema keeps ``spec``
open (kwok's fields are many and growing); the API server checks what the simulation can run
with :func:`setpoint.cluster.simulation.stages.stage_field_errors` when a Stage is written.
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.cluster.simulation.stages import GROUP, KIND

VERSION: Final = "v1alpha1"
PLURAL: Final = "stages"
CRD_NAME: Final = f"{PLURAL}.{GROUP}"


def stage_crd() -> dict[str, Any]:
    """The CRD manifest (cluster-scoped ``Stage``, version ``v1alpha1``, status subresource)."""
    open_object: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": CRD_NAME,
            "labels": {"app.kubernetes.io/managed-by": "setpoint"},
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": PLURAL,
                "singular": "stage",
            },
            "scope": "Cluster",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "schema": {
                        "openAPIV3Schema": {
                            "description": "Stage: a staged change of the objects a selector "
                            "matches, run by the local cluster's simulated kubelet (kwok's API).",
                            "type": "object",
                            "required": ["spec"],
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": {
                                    **open_object,
                                    "required": ["resourceRef"],
                                    "properties": {
                                        "resourceRef": {
                                            "type": "object",
                                            "required": ["kind"],
                                            "properties": {
                                                "apiGroup": {"type": "string"},
                                                "kind": {"type": "string"},
                                            },
                                        },
                                    },
                                },
                                "status": open_object,
                            },
                        }
                    },
                }
            ],
        },
    }
