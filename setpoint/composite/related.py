"""The ``customize`` hook: which other objects a parent's sync hook receives as ``related``.

The hook is asked once per sync with ``{"controller", "parent"}`` and answers
``{"relatedResources": [{"apiVersion", "resource", "labelSelector", "namespace", "names"}]}``.
The objects are read from the shared cache; for a namespaced parent only its own namespace is
searched. Each related type is watched once it is first named, and a change to an object a
parent's rules select syncs that parent again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.gvk import ObjectKey
from setpoint.api.selectors import LabelSelector
from setpoint.cache import CachedObject
from setpoint.composite.hook_wire import HookError
from setpoint.composite.webhooks import Hook

__all__ = ["RelatedResources", "RelatedRule"]


@dataclass(frozen=True)
class RelatedRule:
    api_version: str
    kind: str
    namespace: str | None
    selector: LabelSelector | None
    names: frozenset[str]

    def selects(self, obj: CachedObject) -> bool:
        if self.namespace is not None and obj.namespace != self.namespace:
            return False
        if self.names and obj.name not in self.names:
            return False
        return self.selector is None or self.selector.matches(obj.labels)


@dataclass
class RelatedResources:
    """Runs the customize hook and reads what it names (see the module docs)."""

    hook: Hook
    controller_object: Mapping[str, Any]
    #: Called with (apiVersion, kind) the first time a type is named: start watching it.
    watch: Callable[[str, str], Awaitable[None]] | None = None
    rules: dict[ObjectKey, tuple[RelatedRule, ...]] = field(default_factory=dict)
    watched: set[tuple[str, str]] = field(default_factory=set)

    async def objects_for(
        self, env: Any, parent: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
        """The related objects of ``parent`` and the types its rules name."""
        metadata = parent["metadata"]
        answer = await self.hook.call(
            {"controller": self.controller_object, "parent": parent}, root_uid=metadata["uid"]
        )
        if not isinstance(answer, Mapping):
            raise HookError(f"{self.hook.name} hook: the response must be a JSON object")
        raw_rules = answer.get("relatedResources") or []
        if not isinstance(raw_rules, list):
            raise HookError(f"{self.hook.name} hook: relatedResources: must be a list")
        parent_namespace = metadata.get("namespace")
        rules: list[RelatedRule] = []
        for index, raw in enumerate(raw_rules):
            where = f"{self.hook.name} hook: relatedResources[{index}]"
            if not isinstance(raw, Mapping) or not raw.get("apiVersion") or not raw.get("resource"):
                raise HookError(f"{where}: apiVersion and resource are required")
            try:
                resource = await env.client.mapper.resource_for_plural(
                    str(raw["apiVersion"]), str(raw["resource"])
                )
            except Exception as error:
                raise HookError(f"{where}: {error}") from None
            selector = None
            if raw.get("labelSelector") is not None:
                try:
                    selector = LabelSelector.from_dict(
                        raw["labelSelector"], path=f"{where}.labelSelector"
                    )
                except ValueError as error:
                    raise HookError(str(error)) from None
            names = frozenset(str(n) for n in raw.get("names") or [])
            if selector is not None and names:
                raise HookError(f"{where}: labelSelector and names are mutually exclusive")
            namespace = None
            if resource.namespaced:
                namespace = parent_namespace or raw.get("namespace") or None
            rules.append(
                RelatedRule(resource.api_version, resource.kind, namespace, selector, names)
            )
        key = ObjectKey(parent_namespace, metadata["name"])
        self.rules[key] = tuple(rules)
        objects: list[dict[str, Any]] = []
        types: list[tuple[str, str]] = []
        for rule in rules:
            kind = (rule.api_version, rule.kind)
            if kind not in types:
                types.append(kind)
            if kind not in self.watched and self.watch is not None:
                self.watched.add(kind)
                await self.watch(*kind)
            for obj in await env.cache.list_cached(rule.api_version, rule.kind, rule.namespace):
                if rule.selects(obj):
                    objects.append(obj.to_dict())
        return objects, types

    def parents_of(self, kind: tuple[str, str], obj: CachedObject) -> list[ObjectKey]:
        """The parents whose rules select ``obj``, of type ``kind`` (a watch's map function)."""
        return [
            key
            for key, rules in self.rules.items()
            if any((rule.api_version, rule.kind) == kind and rule.selects(obj) for rule in rules)
        ]
