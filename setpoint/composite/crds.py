"""The ``metacontroller.k8s.io/v1alpha1`` CustomResourceDefinitions.

``CompositeController`` and ``DecoratorController`` (cluster-scoped, status subresource) and
``ControllerRevision`` (namespaced), with the names, short names and field names of
Metacontroller's API, so that Metacontroller's own manifests apply unchanged. The schemas are
written here from the API's field list, with its defaults; the CompositeController hooks
``preUpdateChild`` and ``postUpdateChild``, which Metacontroller declares but never calls, are
accepted and kept (and not called either).
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["GROUP", "METACONTROLLER_CRDS", "VERSION", "metacontroller_crds"]

GROUP = "metacontroller.k8s.io"
VERSION = "v1alpha1"

_STRING: dict[str, Any] = {"type": "string"}
_BOOL: dict[str, Any] = {"type": "boolean"}
_INT32: dict[str, Any] = {"type": "integer", "format": "int32"}
_OPEN: dict[str, Any] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
_STRINGS: dict[str, Any] = {"type": "array", "items": _STRING}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


_LABEL_SELECTOR = _object(
    {
        "matchLabels": {"type": "object", "additionalProperties": _STRING},
        "matchExpressions": {
            "type": "array",
            "items": _object(
                {"key": _STRING, "operator": _STRING, "values": _STRINGS}, ["key", "operator"]
            ),
        },
    }
)
_KEY_REF = _object(
    {"name": _STRING, "namespace": _STRING, "key": {"type": "string", "default": "ca.crt"}},
    ["name", "namespace"],
)
_SECRET_REF = _object({"name": _STRING, "namespace": _STRING}, ["name", "namespace"])
_CONNECTION = {
    "caBundle": _object({"inline": _STRING, "secretRef": _KEY_REF, "configMapRef": _KEY_REF}),
    "authorization": _object(
        {
            "type": {"type": "string", "default": "Bearer"},
            "secretRef": _object(
                {"name": _STRING, "namespace": _STRING, "key": _STRING},
                ["key", "name", "namespace"],
            ),
        },
        ["secretRef"],
    ),
    "basicAuth": _object(
        {
            "secretRef": _SECRET_REF,
            "usernameKey": {"type": "string", "default": "username"},
            "passwordKey": {"type": "string", "default": "password"},
        },
        ["secretRef"],
    ),
    "clientTLS": _object(
        {
            "secretRef": _SECRET_REF,
            "certKey": {"type": "string", "default": "tls.crt"},
            "privateKeyKey": {"type": "string", "default": "tls.key"},
        },
        ["secretRef"],
    ),
}
_ENDPOINT_CONFIGS = {
    "type": "array",
    "items": _object({"host": _STRING, **_CONNECTION}, ["host"]),
}
_WEBHOOK = _object(
    {
        "url": _STRING,
        "path": _STRING,
        "timeout": _STRING,
        "service": _object(
            {"name": _STRING, "namespace": _STRING, "port": _INT32, "protocol": _STRING},
            ["name", "namespace"],
        ),
        "etag": _object(
            {"enabled": _BOOL, "cacheTimeoutSeconds": _INT32, "cacheCleanupSeconds": _INT32}
        ),
        "responseUnMarshallMode": {"type": "string", "enum": ["loose", "strict"]},
        **_CONNECTION,
    }
)
_HOOK = _object({"version": {"type": "string", "enum": ["v1", "v2"]}, "webhook": _WEBHOOK})
_RESOURCE_RULE = {"apiVersion": _STRING, "resource": _STRING}
_UPDATE_METHOD = {
    "type": "string",
    "enum": ["OnDelete", "Recreate", "InPlace", "RollingRecreate", "RollingInPlace"],
}
_HOOKS = _object({"sync": _HOOK, "finalize": _HOOK, "customize": _HOOK})
# Declared by Metacontroller's API, never called by it (nor here): kept so manifests apply.
_COMPOSITE_HOOKS = _object(
    {
        "sync": _HOOK,
        "finalize": _HOOK,
        "customize": _HOOK,
        "preUpdateChild": _HOOK,
        "postUpdateChild": _HOOK,
    }
)

_COMPOSITE_SPEC = _object(
    {
        "parentResource": _object(
            {
                **_RESOURCE_RULE,
                "revisionHistory": _object({"fieldPaths": _STRINGS}),
                "labelSelector": _LABEL_SELECTOR,
                "ignoreStatusChanges": _BOOL,
            },
            ["apiVersion", "resource"],
        ),
        "childResources": {
            "type": "array",
            "items": _object(
                {
                    **_RESOURCE_RULE,
                    "updateStrategy": _object(
                        {
                            "method": _UPDATE_METHOD,
                            "statusChecks": _object(
                                {
                                    "conditions": {
                                        "type": "array",
                                        "items": _object(
                                            {"type": _STRING, "status": _STRING, "reason": _STRING},
                                            ["type"],
                                        ),
                                    }
                                }
                            ),
                        }
                    ),
                },
                ["apiVersion", "resource"],
            ),
        },
        "hooks": _COMPOSITE_HOOKS,
        "endpointConfigs": _ENDPOINT_CONFIGS,
        "resyncPeriodSeconds": _INT32,
        "generateSelector": _BOOL,
    },
    ["parentResource"],
)

_DECORATOR_SPEC = _object(
    {
        "resources": {
            "type": "array",
            "items": _object(
                {
                    **_RESOURCE_RULE,
                    "labelSelector": _LABEL_SELECTOR,
                    "annotationSelector": _object(
                        {
                            "matchAnnotations": {"type": "object", "additionalProperties": _STRING},
                            "matchExpressions": _LABEL_SELECTOR["properties"]["matchExpressions"],
                        }
                    ),
                    "ignoreStatusChanges": _BOOL,
                },
                ["apiVersion", "resource"],
            ),
        },
        "attachments": {
            "type": "array",
            "items": _object(
                {**_RESOURCE_RULE, "updateStrategy": _object({"method": _UPDATE_METHOD})},
                ["apiVersion", "resource"],
            ),
        },
        "hooks": _HOOKS,
        "endpointConfigs": _ENDPOINT_CONFIGS,
        "resyncPeriodSeconds": _INT32,
    },
    ["resources"],
)

_REVISION = _object(
    {
        "apiVersion": _STRING,
        "kind": _STRING,
        "metadata": {"type": "object"},
        "parentPatch": _OPEN,
        "children": {
            "type": "array",
            "items": _object(
                {"apiGroup": _STRING, "kind": _STRING, "names": _STRINGS},
                ["apiGroup", "kind", "names"],
            ),
        },
    },
    ["parentPatch"],
)


def _crd(
    kind: str,
    plural: str,
    scope: str,
    schema: dict[str, Any],
    short_names: list[str],
    status: bool,
) -> dict[str, Any]:
    names: dict[str, Any] = {
        "kind": kind,
        "listKind": f"{kind}List",
        "plural": plural,
        "singular": kind.lower(),
    }
    if short_names:
        names["shortNames"] = short_names
    version: dict[str, Any] = {
        "name": VERSION,
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
    }
    if status:
        version["subresources"] = {"status": {}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{plural}.{GROUP}",
            "annotations": {"api-approved.kubernetes.io": "unapproved, request not yet submitted"},
        },
        "spec": {"group": GROUP, "names": names, "scope": scope, "versions": [version]},
    }


def _top(spec: dict[str, Any]) -> dict[str, Any]:
    return _object(
        {
            "apiVersion": _STRING,
            "kind": _STRING,
            "metadata": {"type": "object"},
            "spec": spec,
            "status": _OPEN,
        },
        ["spec"],
    )


METACONTROLLER_CRDS: tuple[dict[str, Any], ...] = (
    _crd(
        "CompositeController",
        "compositecontrollers",
        "Cluster",
        _top(_COMPOSITE_SPEC),
        ["cc", "cctl"],
        True,
    ),
    _crd(
        "DecoratorController",
        "decoratorcontrollers",
        "Cluster",
        _top(_DECORATOR_SPEC),
        ["dec", "decorators"],
        True,
    ),
    _crd("ControllerRevision", "controllerrevisions", "Namespaced", _REVISION, [], True),
)


def metacontroller_crds() -> list[dict[str, Any]]:
    """Fresh copies of the three CRD manifests (safe to change)."""
    return copy.deepcopy(list(METACONTROLLER_CRDS))
