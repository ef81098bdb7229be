"""`Metacontroller`: runs every CompositeController and DecoratorController it finds.

It is a controller of the two ``metacontroller.k8s.io`` kinds: for each object (that matches
``target_label_selector``, which splits the controllers across instances as Metacontroller's
``--target-label-selector`` does) it builds the runtime controller of the declaration and starts
it; a change of the object's ``spec`` (its ``generation``) rebuilds it, and a deleted or
deselected object stops it. A declaration that cannot run (an unknown resource, a bad field) is
reported as a Warning Event on it and retried with backoff, since the resource may be created
later. Add it to an operator of your own with ``op.add(Metacontroller(op))``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from setpoint.api.gvk import ObjectKey, ResourceInfo
from setpoint.api.selectors import LabelSelector
from setpoint.composite.composite_sync import CompositeSync, SyncStats
from setpoint.composite.controllers import build_controller, owner_mapper, selector_mapper
from setpoint.composite.crds import GROUP, VERSION
from setpoint.composite.decorator_sync import DecoratorSync
from setpoint.composite.related import RelatedResources
from setpoint.composite.spec import ChildType, selector_or_everything, update_strategy
from setpoint.composite.webhooks import Hook, WebhookHook, make_hook
from setpoint.controller.controller import Controller
from setpoint.controller.handlers import EnqueueRequestsFromMapFunc
from setpoint.controller.reconcile import RetryLater
from setpoint.controller.source import KindSource
from setpoint.manager.manager import Manager

__all__ = ["Metacontroller"]

log = logging.getLogger("setpoint.composite")

API_VERSION = f"{GROUP}/{VERSION}"
#: Keys of the runner's queue: (kind marker, name); both kinds are cluster-scoped.
_KINDS = {"composite": "CompositeController", "decorator": "DecoratorController"}


@dataclass
class _Running:
    generation: int
    uid: str
    controllers: list[Controller]
    hooks: list[Hook]
    syncs: list[CompositeSync | DecoratorSync]


class Metacontroller:
    """Runs the CompositeControllers and DecoratorControllers of the cluster (see module docs)."""

    needs_leader_election = True

    def __init__(
        self,
        manager: Manager,
        *,
        target_label_selector: str | None = None,
        workers_per_controller: int = 1,
    ) -> None:
        self.manager = manager
        self.selector = (
            LabelSelector.parse(target_label_selector)
            if target_label_selector
            else LabelSelector.everything()
        )
        self.workers = workers_per_controller
        self.running: dict[ObjectKey, _Running] = {}
        self._controller: Controller | None = None

    def for_manager(self, manager: Manager) -> Metacontroller:
        """The same runner (selector, workers) for another manager: `Operator.fresh()` (and
        so the testing kit's ``run_operator``) copies it with this."""
        twin = Metacontroller(manager, workers_per_controller=self.workers)
        twin.selector = self.selector
        return twin

    async def start(self) -> None:
        cache = self.manager.cache
        sources = [
            KindSource(
                cache,
                API_VERSION,
                kind,
                EnqueueRequestsFromMapFunc(
                    lambda obj, marker=marker: [ObjectKey(marker, obj.name)]  # type: ignore[misc]
                ),
            )
            for marker, kind in _KINDS.items()
        ]
        self._controller = Controller(
            "metacontroller",
            self,
            sources=sources,
            max_concurrent_reconciles=4,
            clock=self.manager.clock,
            cache_sync_timeout=self.manager.cache_sync_timeout,
        )
        await self._controller.start()

    async def stop(self) -> None:
        if self._controller is not None:
            await self._controller.stop()
        for key in list(self.running):
            await self._stop(key)

    def sync_stats(self, kind: str, name: str) -> list[SyncStats]:
        """The hook calls, writes and failures of a running declaration (one per parent
        resource); empty when it is not running."""
        running = self.running.get(ObjectKey(_marker(kind), name))
        return [] if running is None else [sync.stats for sync in running.syncs]

    async def reconcile(self, request: ObjectKey) -> None:
        marker, name = request.namespace, request.name
        kind = _KINDS[str(marker)]
        obj = await self.manager.cache.get(API_VERSION, kind, name)
        running = self.running.get(request)
        if obj is None or not self.selector.matches(obj["metadata"].get("labels") or {}):
            if running is not None:
                await self._stop(request)
            return
        metadata = obj["metadata"]
        generation = int(metadata.get("generation") or 0)
        if (
            running is not None
            and running.generation == generation
            and running.uid == metadata["uid"]
        ):
            return
        if running is not None:
            await self._stop(request)
        recorder = self.manager.get_event_recorder("metacontroller")
        try:
            controllers, hooks, syncs = await self._build(kind, obj)
        except (ValueError, LookupError) as error:
            recorder.warning(obj, "CreateError", f"Cannot create new controller: {error}")
            raise RetryLater(f"{kind} {name}: {error}") from None
        for controller in controllers:
            await controller.start()
        self.running[request] = _Running(generation, metadata["uid"], controllers, hooks, syncs)
        recorder.normal(obj, "Started", f"Started controller: {name}")
        log.info("%s %s started", kind, name)

    async def _stop(self, key: ObjectKey) -> None:
        running = self.running.pop(key, None)
        if running is None:
            return
        for controller in running.controllers:
            await controller.stop()
        for hook in running.hooks:
            await hook.close()
        log.info("%s %s stopped", _KINDS[str(key.namespace)], key.name)

    async def _resource(self, rule: Mapping[str, Any], where: str) -> ResourceInfo:
        api_version, resource = rule.get("apiVersion"), rule.get("resource")
        if not api_version or not resource:
            raise ValueError(f"{where}: apiVersion and resource are required")
        try:
            return await self.manager.client.mapper.resource_for_plural(
                str(api_version), str(resource)
            )
        except Exception as error:
            raise LookupError(f"{where}: {error}") from None

    async def _hooks(self, spec: Mapping[str, Any]) -> dict[str, Hook | None]:
        """The sync, finalize and customize hooks, their connection settings read. (A
        CompositeController's ``preUpdateChild``/``postUpdateChild`` are declared by
        Metacontroller's API but never called by it; they are ignored here too.)"""
        hooks = spec.get("hooks") or {}
        endpoint_configs = spec.get("endpointConfigs") or []
        built = {
            name: make_hook(name, hooks.get(name), self.manager.client, endpoint_configs)
            for name in ("sync", "finalize", "customize")
        }
        for hook in built.values():
            if isinstance(hook, WebhookHook):
                await hook.resolve()
        return built

    async def _child_types(self, rules: Any, field_name: str) -> list[ChildType]:
        types = []
        for index, rule in enumerate(rules or []):
            where = f"spec.{field_name}[{index}]"
            resource = await self._resource(rule, where)
            method, checks = update_strategy(rule.get("updateStrategy"), where)
            types.append(ChildType(resource, method, checks))
        return types

    async def _build(
        self, kind: str, obj: Mapping[str, Any]
    ) -> tuple[list[Controller], list[Hook], list[CompositeSync | DecoratorSync]]:
        spec = obj.get("spec") or {}
        name = obj["metadata"]["name"]
        hooks = await self._hooks(spec)
        built = [hook for hook in hooks.values() if hook is not None]
        related = (
            RelatedResources(hooks["customize"], obj) if hooks["customize"] is not None else None
        )
        resync = spec.get("resyncPeriodSeconds")
        resync_period = float(resync) if resync else None
        if kind == "CompositeController":
            parent_rule = spec.get("parentResource") or {}
            parent = await self._resource(parent_rule, "spec.parentResource")
            children = await self._child_types(spec.get("childResources"), "childResources")
            sync = CompositeSync(
                name=name,
                parent=parent,
                children=children,
                sync_hook=hooks["sync"],
                finalize_hook=hooks["finalize"],
                related=related,
                generate_selector=bool(spec.get("generateSelector")),
                parent_selector=selector_or_everything(
                    parent_rule.get("labelSelector"), "spec.parentResource.labelSelector"
                ),
                controller_object=obj,
                revision_field_paths=_field_paths(parent_rule.get("revisionHistory")),
            )
            controller = await build_controller(
                self.manager,
                f"compositecontroller-{name}",
                parent=parent,
                child_types=children,
                sync=sync.sync,
                map_child=lambda informer: selector_mapper(sync, informer),
                related=related,
                ignore_status_changes=bool(parent_rule.get("ignoreStatusChanges")),
                resync_period=resync_period,
                max_concurrent=self.workers,
            )
            return [controller], built, [sync]
        attachments = await self._child_types(spec.get("attachments"), "attachments")
        controllers: list[Controller] = []
        syncs: list[CompositeSync | DecoratorSync] = []
        for index, rule in enumerate(spec.get("resources") or []):
            where = f"spec.resources[{index}]"
            parent = await self._resource(rule, where)
            decorator = DecoratorSync(
                name=name,
                parent=parent,
                attachments=attachments,
                sync_hook=hooks["sync"],
                finalize_hook=hooks["finalize"],
                related=related,
                label_selector=selector_or_everything(
                    rule.get("labelSelector"), f"{where}.labelSelector"
                ),
                annotation_selector=rule.get("annotationSelector"),
                controller_object=obj,
            )
            controller = await build_controller(
                self.manager,
                f"decoratorcontroller-{name}-{parent.resource}.{parent.group or 'core'}",
                parent=parent,
                child_types=attachments,
                sync=decorator.sync,
                map_child=lambda informer, parent=parent: owner_mapper(parent),  # type: ignore[misc]
                related=related,
                ignore_status_changes=bool(rule.get("ignoreStatusChanges")),
                resync_period=resync_period,
                max_concurrent=self.workers,
            )
            controllers.append(controller)
            syncs.append(decorator)
        if not controllers:
            raise ValueError("spec.resources: Required value")
        return controllers, built, syncs


def _field_paths(history: Any) -> tuple[str, ...]:
    """``revisionHistory.fieldPaths`` (absent or empty: ``spec``, as Metacontroller)."""
    paths = (history or {}).get("fieldPaths") if isinstance(history, Mapping) else None
    if paths is None:
        return ("spec",)
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ValueError(
            "spec.parentResource.revisionHistory.fieldPaths: must be a list of dotted field paths"
        )
    return tuple(paths) or ("spec",)


def _marker(kind: str) -> str:
    for marker, name in _KINDS.items():
        if name == kind:
            return marker
    raise ValueError(f"unknown kind {kind!r}")
