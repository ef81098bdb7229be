"""Services, ConfigMaps and Secrets (``pkg/apis/core/validation``, 1.32): ports, protocols,
types and selectors of Services; key names, the 1 MiB size limit and immutability of ConfigMaps
and Secrets, and the keys each Secret type requires."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.names import (
    max_length_message,
    regex_message,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_qualified_name,
)
from setpoint.cluster.apiserver.validation import go_values
from setpoint.cluster.apiserver.validation.object_meta import ValidMemo
from setpoint.cluster.apiserver.validation.ports import (
    PROTOCOLS,
    port_name_problems,
    port_number_problems,
)
from setpoint.cluster.apiserver.validation.selectors import IMMUTABLE, validate_labels

#: ``core.MaxSecretSize``: the summed size of a ConfigMap's or Secret's values.
MAX_DATA_SIZE: Final = 1024 * 1024
_CONFIG_KEY: Final = re.compile(r"^[-._a-zA-Z0-9]+$")
_CONFIG_KEY_MESSAGE: Final = regex_message(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    "[-._a-zA-Z0-9]+",
    "key.name",
    "KEY_NAME",
    "key-name",
)
_SERVICE_TYPES: Final = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_SESSION_AFFINITIES: Final = ("ClientIP", "None")
_IMMUTABLE_SET: Final = "field is immutable when `immutable` is set"
#: Keys each Secret type requires (``core.SecretType*``).
_SERVICE_ACCOUNT_NAME: Final = "kubernetes.io/service-account.name"


def _config_key_problems(key: str) -> list[str]:
    problems = []
    if len(key) > 253:
        problems.append(max_length_message(253))
    if not _CONFIG_KEY.match(key):
        problems.append(_CONFIG_KEY_MESSAGE)
    if key == ".":
        problems.append("must not be '.'")
    elif key == "..":
        problems.append("must not be '..'")
    elif key.startswith(".."):
        problems.append("must not start with '..'")
    return problems


#: ``IsConfigMapKey``: the problems with a ConfigMap/Secret key (valid keys remembered).
config_key_problems: Final = ValidMemo(_config_key_problems)


def _service_port(
    port: Mapping[str, Any], path: str, require_name: bool, names: set[str]
) -> list[FieldError]:
    errors: list[FieldError] = []
    name = port.get("name") or ""
    if require_name and not name:
        errors.append(fe.required(f"{path}.name", ""))
    elif name:
        errors.extend(fe.invalid(f"{path}.name", name, p) for p in validate_dns1123_label(name))
        if name in names:
            errors.append(fe.duplicate(f"{path}.name", name))
        names.add(name)
    number = port.get("port")
    errors.extend(fe.invalid(f"{path}.port", number, p) for p in port_number_problems(number))
    protocol = port.get("protocol")
    if not protocol:
        errors.append(fe.required(f"{path}.protocol", ""))
    elif protocol not in PROTOCOLS:
        errors.append(fe.not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    target = port.get("targetPort")
    if isinstance(target, str):
        errors.extend(
            fe.invalid(f"{path}.targetPort", target, p) for p in port_name_problems(target)
        )
    elif target is not None:
        errors.extend(
            fe.invalid(f"{path}.targetPort", target, p) for p in port_number_problems(target)
        )
    app_protocol = port.get("appProtocol")
    if isinstance(app_protocol, str):
        errors.extend(
            fe.invalid(f"{path}.appProtocol", app_protocol, p)
            for p in validate_qualified_name(app_protocol)
        )
    return errors


def validate_service(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateService`` (the spec rules; clusterIP immutability lives in ``kinds.services``)."""
    spec = obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    errors: list[FieldError] = []
    kind = spec.get("type")
    ports = [p for p in spec.get("ports") or [] if isinstance(p, Mapping)]
    cluster_ips = spec.get("clusterIPs") or []
    headless = spec.get("clusterIP") == "None"
    if not ports and not headless and kind != "ExternalName":
        errors.append(fe.required("spec.ports", ""))
    if kind in ("LoadBalancer", "NodePort") and headless:
        errors.append(
            fe.invalid(
                "spec.clusterIPs[0]", "None", f"may not be set to 'None' for {kind} services"
            )
        )
    elif kind == "ExternalName":
        if cluster_ips:
            errors.append(
                fe.forbidden("spec.clusterIPs", "may not be set for ExternalName services")
            )
        if spec.get("ipFamilies"):
            errors.append(
                fe.forbidden("spec.ipFamilies", "may not be set for ExternalName services")
            )
        if spec.get("ipFamilyPolicy") is not None:
            errors.append(
                fe.forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services")
            )
        external = str(spec.get("externalName") or "").removesuffix(".")
        if external:
            errors.extend(
                fe.invalid("spec.externalName", external, p)
                for p in validate_dns1123_subdomain(external)
            )
        else:
            errors.append(fe.required("spec.externalName", ""))
    names: set[str] = set()
    for index, port in enumerate(ports):
        errors += _service_port(port, f"spec.ports[{index}]", len(ports) > 1, names)
    if spec.get("selector") is not None:
        errors += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity")
    if not affinity:
        errors.append(fe.required("spec.sessionAffinity", ""))
    elif affinity not in _SESSION_AFFINITIES:
        errors.append(fe.not_supported("spec.sessionAffinity", affinity, _SESSION_AFFINITIES))
    if not kind:
        errors.append(fe.required("spec.type", ""))
    elif kind not in _SERVICE_TYPES:
        errors.append(fe.not_supported("spec.type", kind, _SERVICE_TYPES))
    if kind == "ClusterIP":
        for index, port in enumerate(ports):
            if port.get("nodePort"):
                errors.append(
                    fe.forbidden(
                        f"spec.ports[{index}].nodePort",
                        "may not be used when `type` is 'ClusterIP'",
                    )
                )
    node_ports: set[tuple[object, object]] = set()
    for index, port in enumerate(ports):
        node_port = port.get("nodePort")
        if not node_port:
            continue
        key = (port.get("protocol"), node_port)
        if key in node_ports:
            errors.append(fe.duplicate(f"spec.ports[{index}].nodePort", node_port))
        node_ports.add(key)
    seen: set[tuple[object, object]] = set()
    for index, port in enumerate(ports):
        key = (port.get("protocol"), port.get("port"))
        if key in seen:
            number = port.get("port")
            errors.append(
                fe.duplicate(
                    f"spec.ports[{index}]",
                    go_values.service_port_key(
                        number if isinstance(number, int) else 0, str(port.get("protocol") or "")
                    ),
                )
            )
        seen.add(key)
    return errors


def _decoded_size(value: object) -> int:
    if not isinstance(value, str):
        return 0
    try:
        return len(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return len(value)


def validate_config_map(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateConfigMap`` / ``ValidateConfigMapUpdate``."""
    errors: list[FieldError] = []
    data = obj.get("data")
    data = data if isinstance(data, dict) else {}
    binary = obj.get("binaryData")
    binary = binary if isinstance(binary, dict) else {}
    total = 0
    for key, value in data.items():
        problems = config_key_problems(key)
        if problems:
            errors.extend(fe.invalid(f"data[{key}]", key, p) for p in problems)
        if binary and key in binary:
            errors.append(fe.invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        if value.__class__ is str:
            total += len(value) if value.isascii() else len(value.encode())
    for key, value in binary.items():
        errors.extend(fe.invalid(f"binaryData[{key}]", key, p) for p in config_key_problems(key))
        total += _decoded_size(value)
    if total > MAX_DATA_SIZE:
        errors.append(fe.too_long("[]", MAX_DATA_SIZE))
    if old is not None and old.get("immutable") is True:
        if obj.get("immutable") is not True:
            errors.append(fe.forbidden("immutable", _IMMUTABLE_SET))
        if (old.get("data") or {}) != data:
            errors.append(fe.forbidden("data", _IMMUTABLE_SET))
        if (old.get("binaryData") or {}) != binary:
            errors.append(fe.forbidden("binaryData", _IMMUTABLE_SET))
    return errors


def _docker_config_errors(data: Mapping[str, Any], key: str) -> list[FieldError]:
    if key not in data:
        return [fe.required(f"data[{key}]", "")]
    try:
        document = json.loads(base64.b64decode(str(data[key])))
    except (ValueError, binascii.Error) as error:
        return [fe.invalid(f"data[{key}]", "<secret contents redacted>", str(error))]
    if not isinstance(document, dict):
        return [
            fe.invalid(
                f"data[{key}]",
                "<secret contents redacted>",
                "json: cannot unmarshal into Go value of type map[string]interface {}",
            )
        ]
    return []


def _secret_type_errors(secret: Mapping[str, Any], data: Mapping[str, Any]) -> list[FieldError]:
    kind = secret.get("type") or ""
    if kind == "kubernetes.io/service-account-token":
        metadata = secret.get("metadata")
        annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
        if not (annotations or {}).get(_SERVICE_ACCOUNT_NAME):
            return [fe.required(f"metadata.annotations[{_SERVICE_ACCOUNT_NAME}]", "")]
    elif kind == "kubernetes.io/dockercfg":
        return _docker_config_errors(data, ".dockercfg")
    elif kind == "kubernetes.io/dockerconfigjson":
        return _docker_config_errors(data, ".dockerconfigjson")
    elif kind == "kubernetes.io/basic-auth":
        if "username" not in data and "password" not in data:
            return [fe.required("data[username]", ""), fe.required("data[password]", "")]
    elif kind == "kubernetes.io/ssh-auth":
        if not data.get("ssh-privatekey"):
            return [fe.required("data[ssh-privatekey]", "")]
    elif kind == "kubernetes.io/tls":
        return [
            fe.required(f"data[{key}]", "") for key in ("tls.crt", "tls.key") if key not in data
        ]
    return []


def validate_secret(obj: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
    """``ValidateSecret`` / ``ValidateSecretUpdate``."""
    data = obj.get("data")
    data = data if isinstance(data, dict) else {}
    errors: list[FieldError] = []
    if old is not None:
        if old.get("type") != obj.get("type"):
            errors.append(fe.invalid("type", obj.get("type") or "", IMMUTABLE))
        if old.get("immutable") is True:
            if obj.get("immutable") is not True:
                errors.append(fe.forbidden("immutable", _IMMUTABLE_SET))
            if (old.get("data") or {}) != data:
                errors.append(fe.forbidden("data", _IMMUTABLE_SET))
    total = 0
    for key, value in data.items():
        errors.extend(fe.invalid(f"data[{key}]", key, p) for p in config_key_problems(key))
        total += _decoded_size(value)
    if total > MAX_DATA_SIZE:
        errors.append(fe.too_long("data", MAX_DATA_SIZE))
    return errors + _secret_type_errors(obj, data)
