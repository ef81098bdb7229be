"""The LimitRanger admission plugin: a namespace's LimitRanges applied to new pods and claims.

On a pod's create, each ``Container`` item's ``default`` fills the limits and its
``defaultRequest`` the requests a container leaves out (init containers too), and the pod is
annotated ``kubernetes.io/limit-ranger`` with what was set. Then every item is enforced:
``min``, ``max`` and ``maxLimitRequestRatio`` per container (``Container``) and over the whole
pod (``Pod``), and ``min``/``max`` of a claim's storage request (``PersistentVolumeClaim``).
A violation is a 403 naming every constraint broken, with upstream's messages
(``plugin/pkg/admission/limitranger``). Pod updates are not checked, as upstream: containers'
resources cannot change.

Before any of this, as upstream's pod defaulting does, a container's requests default to its
limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Final

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.kinds.pods import PodBehaviour
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator
from setpoint.cluster.apiserver.registry.namespaced_index import NamespacedIndex
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.schema.cel_quantity_url import parse_quantity
from setpoint.cluster.apiserver.storage import Storage

LIMIT_RANGES_ROOT: Final = "/core/limitranges/"
ANNOTATION: Final = "kubernetes.io/limit-ranger"
_CONTAINER_KEYS: Final = (("initContainers", "init container"), ("containers", "container"))


def _value(text: object) -> Decimal:
    parsed = parse_quantity(str(text)) if text is not None else None
    return parsed if parsed is not None else Decimal(0)


def _resources(container: dict[str, Any]) -> dict[str, Any]:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        resources = container["resources"] = {}
    return resources


def default_requests_from_limits(pod: dict[str, Any]) -> None:
    """``SetDefaults_Pod``: a container's missing requests are its limits."""
    for key, _ in _CONTAINER_KEYS:
        for container in (pod.get("spec") or {}).get(key) or []:
            if not isinstance(container, dict):
                continue
            resources = _resources(container)
            limits = resources.get("limits")
            if isinstance(limits, dict) and limits:
                requests = resources.setdefault("requests", {})
                if isinstance(requests, dict):
                    for name, value in limits.items():
                        requests.setdefault(name, value)


def _limit_items(obj: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [i for i in (obj.get("spec") or {}).get("limits") or [] if isinstance(i, dict)]


class LimitRangeIndex(NamespacedIndex[list[dict[str, Any]]]):
    """The items of each namespace's LimitRanges (kept current by an
    :class:`IndexedKindBehaviour` of LimitRanges)."""

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage, LIMIT_RANGES_ROOT, _limit_items)

    def items(self, namespace: str) -> dict[str, list[dict[str, Any]]]:
        """The items of the namespace's LimitRanges, by type."""
        found: dict[str, list[dict[str, Any]]] = {}
        for items in self.in_namespace(namespace).values():
            for item in items:
                found.setdefault(str(item.get("type")), []).append(item)
        return found


def _min_error(kind: str, name: str, enforced: object, request: Any, limit: Any) -> str | None:
    if request is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if _value(request) < _value(enforced):
        return f"minimum {name} usage per {kind} is {enforced}, but request is {request}"
    if limit is not None and _value(limit) < _value(enforced):
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {limit}"
    return None


def _max_error(kind: str, name: str, enforced: object, request: Any, limit: Any) -> str | None:
    if limit is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if _value(limit) > _value(enforced):
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {limit}"
    if request is not None and _value(request) > _value(enforced):
        return f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
    return None


def _ratio_error(kind: str, name: str, enforced: object, request: Any, limit: Any) -> str | None:
    if request is None or _value(request) == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, but no request is "
            "specified or request is 0"
        )
    if limit is None or _value(limit) == 0:
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is "
            "specified or limit is 0"
        )
    ratio = _value(limit) / _value(request)
    if ratio > _value(enforced):
        return (
            f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio "
            f"is {float(ratio):f}"
        )
    return None


def _check(
    kind: str, item: dict[str, Any], requests: dict[str, Any], limits: dict[str, Any]
) -> list[str]:
    errors: list[str] = []
    checks = (("min", _min_error), ("max", _max_error), ("maxLimitRequestRatio", _ratio_error))
    for key, check in checks:
        for name, enforced in sorted((item.get(key) or {}).items()):
            error = check(kind, name, enforced, requests.get(name), limits.get(name))
            if error is not None:
                errors.append(error)
    return errors


def _pod_totals(pod: dict[str, Any], which: str) -> dict[str, Any]:
    """The pod's total requests or limits: the containers' sum, or the largest init
    container's when bigger (``podRequests``/``podLimits``); absent when no container sets it."""
    spec = pod.get("spec") or {}
    totals: dict[str, Decimal] = {}
    # A total made of one container's value keeps that value's spelling (upstream adds
    # Quantities, keeping their format); a real sum is written as a plain number.
    texts: dict[str, str] = {}
    for container in spec.get("containers") or []:
        for name, value in ((container.get("resources") or {}).get(which) or {}).items():
            texts[name] = str(value) if name not in totals else ""
            totals[name] = totals.get(name, Decimal(0)) + _value(value)
    for container in spec.get("initContainers") or []:
        for name, value in ((container.get("resources") or {}).get(which) or {}).items():
            if _value(value) > totals.get(name, Decimal(-1)):
                totals[name] = _value(value)
                texts[name] = str(value)
    return {name: texts.get(name) or f"{value.normalize():f}" for name, value in totals.items()}


def _forbidden(plural: str, name: str, errors: list[str]) -> status_errors.APIError:
    message = errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"
    return status_errors.forbidden("", plural, name, message)


class LimitRanger:
    """Applies the LimitRanges of ``index`` to new pods and claims."""

    def __init__(self, index: LimitRangeIndex) -> None:
        self._index = index

    def admit_pod(self, pod: dict[str, Any]) -> None:
        """Default a new pod's resources from its namespace's LimitRanges, then enforce them
        (``APIError`` 403 when it breaks one)."""
        default_requests_from_limits(pod)
        meta = pod.get("metadata") or {}
        namespace = str(meta.get("namespace") or "")
        found = self._index.items(namespace)
        if not found:
            return
        container_items = found.get("Container", [])
        pod_items = found.get("Pod", [])
        self._default(pod, container_items)
        errors: list[str] = []
        spec = pod.get("spec") or {}
        for item in container_items:
            for key, _ in _CONTAINER_KEYS:
                for container in spec.get(key) or []:
                    resources = container.get("resources") or {}
                    errors += _check(
                        "Container",
                        item,
                        resources.get("requests") or {},
                        resources.get("limits") or {},
                    )
        for item in pod_items:
            errors += _check("Pod", item, _pod_totals(pod, "requests"), _pod_totals(pod, "limits"))
        if errors:
            raise _forbidden("pods", str(meta.get("name") or ""), errors)

    @staticmethod
    def _default(pod: dict[str, Any], items: list[dict[str, Any]]) -> None:
        limits_default: dict[str, Any] = {}
        requests_default: dict[str, Any] = {}
        for item in items:
            limits_default.update(item.get("default") or {})
            requests_default.update(item.get("defaultRequest") or {})
        if not limits_default and not requests_default:
            return
        notes: list[str] = []
        spec = pod.get("spec") or {}
        for key, label in _CONTAINER_KEYS:
            for container in spec.get(key) or []:
                if not isinstance(container, dict):
                    continue
                resources = _resources(container)
                set_requests = _fill(resources, "requests", requests_default)
                set_limits = _fill(resources, "limits", limits_default)
                name = container.get("name")
                if set_requests:
                    notes.append(f"{', '.join(sorted(set_requests))} request for {label} {name}")
                if set_limits:
                    notes.append(f"{', '.join(sorted(set_limits))} limit for {label} {name}")
        if notes:
            meta = pod.setdefault("metadata", {})
            annotations = meta.get("annotations")
            if not isinstance(annotations, dict):
                annotations = meta["annotations"] = {}
            annotations[ANNOTATION] = f"LimitRanger plugin set: {'; '.join(notes)}"

    def admit_claim(self, claim: dict[str, Any]) -> None:
        """Enforce ``PersistentVolumeClaim`` items on a new claim's storage request."""
        meta = claim.get("metadata") or {}
        items = self._index.items(str(meta.get("namespace") or "")).get("PersistentVolumeClaim", [])
        requests = ((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}
        errors: list[str] = []
        kind = "PersistentVolumeClaim"
        for item in items:
            for name, enforced in sorted((item.get("min") or {}).items()):
                error = _min_error(kind, name, enforced, requests.get(name), None)
                if error is not None:
                    errors.append(error)
            for name, enforced in sorted((item.get("max") or {}).items()):
                request = requests.get(name)
                if request is None:
                    errors.append(
                        f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
                    )
                elif _value(request) > _value(enforced):
                    errors.append(
                        f"maximum {name} usage per {kind} is {enforced}, but request is {request}"
                    )
        if errors:
            raise _forbidden("persistentvolumeclaims", str(meta.get("name") or ""), errors)


def _fill(resources: dict[str, Any], which: str, defaults: dict[str, Any]) -> list[str]:
    """Set the missing entries of ``resources[which]`` from ``defaults``; the names set."""
    if not defaults:
        return []
    current = resources.get(which)
    if not isinstance(current, dict):
        current = {}
    missing = [name for name in defaults if name not in current]
    if missing:
        resources[which] = {**current, **{name: defaults[name] for name in missing}}
    return missing


class LimitRangedPodBehaviour(PodBehaviour):
    """Pod rules with the LimitRanger plugin run on every new pod."""

    def __init__(
        self,
        limit_ranger: LimitRanger,
        validator: BuiltinValidator | None = None,
        storage: Storage | None = None,
    ) -> None:
        super().__init__(validator, storage)
        self._limit_ranger = limit_ranger

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        self._limit_ranger.admit_pod(obj)
        super().prepare_create(resource, obj)
