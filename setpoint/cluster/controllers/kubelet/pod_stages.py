"""Pods moved through kwok Stages by the simulated kubelet, on the cluster clock.

When Stages for pods exist (:mod:`setpoint.cluster.simulation`), the kubelet stops running its
pods itself and does what kwok's controller does instead: for each of its pods, it draws the
Stage that matches the pod as it is now, waits that Stage's delay, then plays its ``next`` —
an Event, finalizer changes, the status its template renders (merged as a strategic merge
patch, as kwok patches it) or the deletion. The write brings the pod back with its new
content, and the next Stage is drawn. A pod that changed while it waited is matched again.
Without Stages nothing here runs and the kubelet simulates pods as before.

A template or a write that fails is reported as a Warning Event on the pod (reason
``StageFailed``) naming the Stage, and the pod stays as it was.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import yaml

from setpoint.cluster.apiserver.patch.merge_schema import builtin_root
from setpoint.cluster.apiserver.patch.strategic import strategic_merge_patch
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.controllers.framework.cluster_access import ClusterAccess
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.workload_context import WriteError
from setpoint.cluster.simulation.go_template import GoTemplate, TemplateError
from setpoint.cluster.simulation.stage_crd import PLURAL
from setpoint.cluster.simulation.stages import (
    GROUP,
    CompiledStage,
    StageError,
    Subject,
    choose_stage,
    compile_stage,
    template_text,
)

log = logging.getLogger(__name__)

#: libyaml's safe loader when PyYAML was built with it (templates render YAML per pod step).
_YAML_LOADER: Final = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: How controllers name the Stage resource.
STAGES_RESOURCE: Final = f"{GROUP}/{PLURAL}"


def go_time(moment: datetime) -> str:
    """Go's ``time.RFC3339Nano`` in UTC (trailing zeros of the fraction dropped)."""
    moment = moment.astimezone(UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


@dataclass(frozen=True, slots=True)
class _Pending:
    stage: CompiledStage
    resource_version: str
    due: datetime


class PodStages:
    """The kubelet's Stage runner for pods (see the module docstring)."""

    def __init__(
        self,
        access: ClusterAccess,
        node_ip: Callable[[str], str],
        pod_ip: Callable[[Mapping[str, Any]], str],
        rng: random.Random | None = None,
    ) -> None:
        self.access = access
        self._node_ip = node_ip
        self._pod_ip = pod_ip
        self._rng = rng or random.Random()
        self._compiled: dict[str, CompiledStage] = {}
        self._pending: dict[ObjectKey, _Pending] = {}
        self._started = access.clock.now()
        self._pod_schema = builtin_root("v1", "Pod")
        #: Compiled status templates, by their text (a Stage's rarely changes).
        self._templates: dict[str, GoTemplate] = {}

    def served(self) -> bool:
        """Whether the cluster serves Stages (the CRD exists)."""
        try:
            self.access.resource(STAGES_RESOURCE)
        except KeyError:
            return False
        return True

    def watch(self, on_change: Callable[[Object | None, Object | None], None]) -> None:
        """Call ``on_change`` when a Stage is added, changed or removed."""
        self.access.informers.informer(STAGES_RESOURCE).add_handler(on_change)

    def stages(self) -> list[CompiledStage]:
        """The Stages for pods, compiled (a Stage that cannot run is logged and skipped)."""
        if not self.served():
            return []
        found: list[CompiledStage] = []
        names = set()
        for stage in self.access.list(STAGES_RESOURCE):
            meta = stage.get("metadata") or {}
            name = str(meta.get("name") or "")
            names.add(name)
            compiled = self._compiled.get(name)
            if compiled is None or compiled.resource_version != meta.get("resourceVersion"):
                try:
                    compiled = compile_stage(stage)
                except StageError as error:
                    log.warning("%s; ignored", error)
                    continue
                self._compiled[name] = compiled
            if compiled.applies_to("v1", "Pod"):
                found.append(compiled)
        for gone in set(self._compiled) - names:
            del self._compiled[gone]
        return sorted(found, key=lambda stage: stage.name)

    def forget(self, key: ObjectKey) -> None:
        """Drop what waits for pod ``key``."""
        self._pending.pop(key, None)

    async def step(
        self, key: ObjectKey, pod: Mapping[str, Any], node: str, stages: list[CompiledStage]
    ) -> float | None:
        """Move pod ``key`` on: seconds until its next Stage is due, or None (nothing waits)."""
        now = self.access.clock.now()
        version = str((pod.get("metadata") or {}).get("resourceVersion") or "")
        pending = self._pending.get(key)
        if pending is None or pending.resource_version != version:
            subject = Subject(pod)
            stage = choose_stage(stages, subject, self._rng)
            if stage is None:
                self._pending.pop(key, None)
                return None
            delay = stage.delay_of(subject, now, self._rng)
            pending = _Pending(stage, version, now + timedelta(seconds=delay))
            self._pending[key] = pending
        wait = (pending.due - now).total_seconds()
        if wait > 0:
            return wait
        del self._pending[key]
        await self._play(pending.stage, pod, node)
        return None

    async def _play(self, stage: CompiledStage, pod: Mapping[str, Any], node: str) -> None:
        meta = pod["metadata"]
        pods = self.access.resource("pods")
        namespace, name, uid = str(meta["namespace"]), str(meta["name"]), str(meta["uid"])
        try:
            if stage.event:
                self.access.recorder.record(
                    pod,
                    stage.event.get("type") or "Normal",
                    stage.event.get("reason", ""),
                    stage.event.get("message", ""),
                    "kubelet",
                    host=node,
                )
            if stage.finalizers:
                finalizers = _finalizers(meta.get("finalizers") or [], stage.finalizers)
                if finalizers != list(meta.get("finalizers") or []):
                    patch = {"metadata": {"finalizers": finalizers or None}}
                    await self.access.patch_in(pods, namespace, name, patch)
            if stage.delete:
                await self.access.delete_in(pods, namespace, name, uid=uid, grace_period_seconds=0)
                return
            if stage.status_template:
                status = self._render(stage, pod, node)
                if status:
                    current = decode(json.dumps(dict(pod)).encode())
                    patched = strategic_merge_patch(current, {"status": status}, self._schema())
                    await self.access.write_status_in(
                        pods, namespace, name, patched.get("status") or {}, uid=uid
                    )
        except (TemplateError, StageError, WriteError, yaml.YAMLError) as error:
            text = getattr(error, "message", None) or str(error)
            message = f'stage "{stage.name}": {text}'.splitlines()[0]
            log.warning("pod %s/%s: %s", namespace, name, message)
            self.access.recorder.record(
                pod, "Warning", "StageFailed", message, "kubelet", host=node
            )

    def _schema(self) -> Any:
        if self._pod_schema is None:
            raise StageError("no merge schema for pods")
        return self._pod_schema

    def _render(self, stage: CompiledStage, pod: Mapping[str, Any], node: str) -> dict[str, Any]:
        now = self.access.clock.now()

        def pod_ip(node_name: Any, host_network: Any = False, *_: Any) -> str:
            return self._node_ip(str(node_name)) if host_network is True else self._pod_ip(pod)

        functions: dict[str, Callable[..., Any]] = {
            "Now": lambda: go_time(now),
            "StartTime": lambda: go_time(self._started),
            "Quote": template_text,
            "YAML": lambda value, *_: yaml.safe_dump(value, default_flow_style=False),
            "Version": lambda: "setpoint",
            "NodeIPWith": lambda node_name: self._node_ip(str(node_name)),
            "NodeIPsWith": lambda node_name: [self._node_ip(str(node_name))],
            "PodIPWith": pod_ip,
            "PodIPsWith": lambda *args: [pod_ip(*args)],
            "NodeConditions": list,
        }
        template = self._templates.get(stage.status_template)
        if template is None:
            template = GoTemplate(stage.status_template, functions)
            self._templates[stage.status_template] = template
        text = template.render(decode(json.dumps(dict(pod)).encode()), functions)
        rendered = yaml.load(text, Loader=_YAML_LOADER)
        if rendered is None:
            return {}
        if not isinstance(rendered, dict):
            raise StageError(f"statusTemplate rendered a {type(rendered).__name__}, not a map")
        return rendered


def _finalizers(current: Iterable[str], change: Mapping[str, Any]) -> list[str]:
    """kwok's finalizer step: empty, then remove, then add (keeping order, no duplicates)."""
    found = [] if change.get("empty") else list(current)
    removed = {
        str(item.get("value")) for item in change.get("remove") or [] if isinstance(item, dict)
    }
    found = [name for name in found if name not in removed]
    for item in change.get("add") or []:
        value = str(item.get("value")) if isinstance(item, dict) else ""
        if value and value not in found:
            found.append(value)
    return found
