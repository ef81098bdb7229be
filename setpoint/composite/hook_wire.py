"""What a hook answers, checked before anything is written.

A sync or finalize hook answers a JSON object. A wrong answer must not touch the children that
exist, so the whole answer is checked first and the first problem raises :class:`HookError`
with one line naming the field (``children[2].metadata.namespace``) and the reason; the caller
reports it as an Event and a condition on the parent and retries with backoff.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from setpoint.api import go_durations
from setpoint.composite.object_maps import type_key

__all__ = [
    "CompositeResponse",
    "DecoratorResponse",
    "HookError",
    "parse_composite_response",
    "parse_decorator_response",
    "parse_duration",
]

_COMPOSITE_FIELDS = frozenset({"status", "children", "resyncAfterSeconds", "finalized"})
_DECORATOR_FIELDS = frozenset(
    {"labels", "annotations", "status", "attachments", "resyncAfterSeconds", "finalized"}
)


_SINGULAR = {"children": "child", "attachments": "attachment"}


class HookError(Exception):
    """A hook could not be called, or answered something unusable (one line, names the
    hook and the problem)."""


@dataclass
class CompositeResponse:
    """A sync/finalize hook's answer for a composite parent."""

    status: dict[str, Any] | None = None
    children: list[dict[str, Any]] = field(default_factory=list)
    resync_after_seconds: float = 0.0
    finalized: bool = False


@dataclass
class DecoratorResponse:
    """A sync/finalize hook's answer for a decorated object."""

    labels: dict[str, str | None] = field(default_factory=dict)
    annotations: dict[str, str | None] = field(default_factory=dict)
    status: dict[str, Any] | None = None
    attachments: list[dict[str, Any]] = field(default_factory=list)
    resync_after_seconds: float = 0.0
    finalized: bool = False


def _common(
    answer: Any, hook: str, allowed: frozenset[str], strict: bool
) -> tuple[Mapping[str, Any], dict[str, Any] | None, float, bool]:
    if not isinstance(answer, Mapping):
        raise HookError(f"{hook} hook: the response must be a JSON object, got {_type(answer)}")
    if strict:
        unknown = sorted(set(answer) - allowed)
        if unknown:
            raise HookError(f"{hook} hook: unknown field {unknown[0]!r} in the response")
    status = answer.get("status")
    if status is not None and not isinstance(status, Mapping):
        raise HookError(f"{hook} hook: status: must be an object, got {_type(status)}")
    resync = answer.get("resyncAfterSeconds") or 0
    if isinstance(resync, bool) or not isinstance(resync, int | float) or resync < 0:
        raise HookError(f"{hook} hook: resyncAfterSeconds: must be a number >= 0, got {resync!r}")
    finalized = answer.get("finalized") or False
    if not isinstance(finalized, bool):
        raise HookError(f"{hook} hook: finalized: must be a boolean, got {_type(finalized)}")
    return answer, dict(status) if status is not None else None, float(resync), finalized


def _objects(
    answer: Mapping[str, Any],
    key: str,
    hook: str,
    declared: Mapping[str, bool],
    parent_namespace: str | None,
) -> list[dict[str, Any]]:
    """The objects of ``answer[key]``, each of a declared type and in the parent's namespace
    (defaulted to it when absent, as Metacontroller does)."""
    items = answer.get(key)
    if items is None:
        return []
    if not isinstance(items, list):
        raise HookError(f"{hook} hook: {key}: must be a list of objects, got {_type(items)}")
    result: list[dict[str, Any]] = []
    seen: set[tuple[str, str | None, str]] = set()
    for index, item in enumerate(items):
        where = f"{hook} hook: {key}[{index}]"
        if not isinstance(item, Mapping):
            raise HookError(f"{where}: must be an object, got {_type(item)}")
        api_version, kind = item.get("apiVersion"), item.get("kind")
        if not isinstance(api_version, str) or not api_version:
            raise HookError(f"{where}.apiVersion: Required value")
        if not isinstance(kind, str) or not kind:
            raise HookError(f"{where}.kind: Required value")
        if type_key(api_version, kind) not in declared:
            raise HookError(
                f"{where}: {kind} {api_version} is not a declared {_SINGULAR[key]} type "
                f"(declared: {', '.join(sorted(declared)) or 'none'})"
            )
        metadata = item.get("metadata")
        if not isinstance(metadata, Mapping):
            raise HookError(f"{where}.metadata: Required value")
        name = metadata.get("name")
        if not isinstance(name, str) or not name:
            raise HookError(f"{where}.metadata.name: Required value")
        namespace = metadata.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise HookError(f"{where}.metadata.namespace: must be a string")
        obj = dict(item)
        key_namespaced = declared.get(type_key(api_version, kind), True)
        if not key_namespaced:
            if namespace:
                raise HookError(
                    f"{where}.metadata.namespace: {kind} is cluster-scoped, it has no namespace"
                )
        elif parent_namespace:
            if namespace and namespace != parent_namespace:
                raise HookError(
                    f"{where}.metadata.namespace: {namespace!r} is not the parent's namespace "
                    f"{parent_namespace!r}"
                )
            obj["metadata"] = {**metadata, "namespace": parent_namespace}
        identity = (type_key(api_version, kind), obj["metadata"].get("namespace"), name)
        if identity in seen:
            raise HookError(f"{where}: {kind} {name!r} is returned twice")
        seen.add(identity)
        result.append(obj)
    return result


def parse_composite_response(
    answer: Any,
    *,
    hook: str,
    declared: Mapping[str, bool],
    parent_namespace: str | None,
    strict: bool = False,
) -> CompositeResponse:
    """Check a composite hook's answer; raises :class:`HookError` naming the first problem."""
    answer, status, resync, finalized = _common(answer, hook, _COMPOSITE_FIELDS, strict)
    children = _objects(answer, "children", hook, declared, parent_namespace)
    return CompositeResponse(status, children, resync, finalized)


def _string_map(answer: Mapping[str, Any], key: str, hook: str) -> dict[str, str | None]:
    value = answer.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(v, str) or v is None for v in value.values()
    ):
        raise HookError(f"{hook} hook: {key}: must be an object of strings (or null to remove)")
    return dict(value)


def parse_decorator_response(
    answer: Any,
    *,
    hook: str,
    declared: Mapping[str, bool],
    parent_namespace: str | None,
    strict: bool = False,
) -> DecoratorResponse:
    """Check a decorator hook's answer; raises :class:`HookError` naming the first problem."""
    answer, status, resync, finalized = _common(answer, hook, _DECORATOR_FIELDS, strict)
    return DecoratorResponse(
        labels=_string_map(answer, "labels", hook),
        annotations=_string_map(answer, "annotations", hook),
        status=status,
        attachments=_objects(answer, "attachments", hook, declared, parent_namespace),
        resync_after_seconds=resync,
        finalized=finalized,
    )


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def parse_duration(text: str, *, field_name: str) -> float:
    """A Go ``time.Duration`` string (``10s``, ``1m30s``, ``500ms``) in seconds; empty is 0."""
    if text == "":
        return 0.0
    try:
        return go_durations.parse_go_duration(text)
    except ValueError:
        raise ValueError(
            f"{field_name}: invalid duration {text!r} (e.g. 10s, 1m30s, 500ms)"
        ) from None
