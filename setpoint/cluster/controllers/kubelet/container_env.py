"""A container's environment from its pod: ``env`` values and ``valueFrom`` references.

Resolved as the kubelet does (``kubelet_pods.go`` makeEnvironmentVariables): ``fieldRef`` to
the pod's metadata, spec and status, ``configMapKeyRef`` and ``secretKeyRef`` (``optional``
honoured), ``envFrom`` ConfigMaps and Secrets, and ``$(VAR)`` expansion of earlier variables.
A missing reference is a :class:`ContainerConfigError` with upstream's message (the container
then waits with reason ``CreateContainerConfigError``).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from typing import Any

Lookup = Callable[[str, str, str], Mapping[str, Any] | None]
_REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


class ContainerConfigError(Exception):
    """A reference the container's environment cannot be built without."""


def field_value(pod: Mapping[str, Any], path: str) -> str:
    """The value of a downward API ``fieldPath`` of ``pod`` (empty when unknown)."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    match = re.fullmatch(r"metadata\.(labels|annotations)\['(.+)'\]", path)
    if match:
        return str((meta.get(match.group(1)) or {}).get(match.group(2), ""))
    simple = {
        "metadata.name": meta.get("name"),
        "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"),
        "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"),
        "status.hostIP": status.get("hostIP"),
        "status.podIP": status.get("podIP"),
    }
    return str(simple.get(path) or "")


def _data(obj: Mapping[str, Any], secret: bool) -> dict[str, str]:
    data = dict(obj.get("data") or {})
    if secret:
        decoded = {k: base64.b64decode(v).decode(errors="replace") for k, v in data.items()}
        decoded.update(obj.get("stringData") or {})
        return decoded
    return {k: str(v) for k, v in data.items()}


def _expand(value: str, env: Mapping[str, str]) -> str:
    return _REFERENCE.sub(lambda m: env.get(m.group(1), m.group(0)), value)


def container_env(
    pod: Mapping[str, Any], container: Mapping[str, Any], lookup: Lookup
) -> dict[str, str]:
    """The environment variables of ``container``; ``lookup(resource, ns, name)`` reads a
    ConfigMap (``configmaps``) or Secret (``secrets``)."""
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        prefix = source.get("prefix") or ""
        for key, resource, kind in (
            ("configMapRef", "configmaps", "configmap"),
            ("secretRef", "secrets", "secret"),
        ):
            ref = source.get(key)
            if not ref:
                continue
            obj = lookup(resource, namespace, ref.get("name", ""))
            if obj is None:
                if ref.get("optional"):
                    continue
                raise ContainerConfigError(f'{kind} "{ref.get("name", "")}" not found')
            for name, value in _data(obj, resource == "secrets").items():
                env[prefix + name] = value
    for var in container.get("env") or []:
        name = var.get("name", "")
        if "value" in var or not var.get("valueFrom"):
            env[name] = _expand(str(var.get("value") or ""), env)
            continue
        source = var["valueFrom"]
        if source.get("fieldRef"):
            env[name] = field_value(pod, source["fieldRef"].get("fieldPath", ""))
            continue
        for key, resource, kind, shown in (
            ("configMapKeyRef", "configmaps", "configmap", "ConfigMap"),
            ("secretKeyRef", "secrets", "secret", "Secret"),
        ):
            ref = source.get(key)
            if not ref:
                continue
            obj = lookup(resource, namespace, ref.get("name", ""))
            optional = bool(ref.get("optional"))
            if obj is None:
                if optional:
                    break
                raise ContainerConfigError(f'{kind} "{ref.get("name", "")}" not found')
            data = _data(obj, resource == "secrets")
            if ref.get("key") not in data:
                if optional:
                    break
                raise ContainerConfigError(
                    f"couldn't find key {ref.get('key')} in {shown} {namespace}/{ref.get('name')}"
                )
            env[name] = data[ref["key"]]
            break
    return env
