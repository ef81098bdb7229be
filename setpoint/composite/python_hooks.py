"""Composite and decorator controllers declared in Python, the hook a plain function.

::

    @composite(op, parent=PodSet, children={kinds.Pod: "OnDelete"}, generate_selector=True)
    def sync(request: SyncRequest) -> SyncResponse:
        ...

registers, on the operator ``op``, the same controller a ``CompositeController`` declares, with
the function as its sync hook, called in-process (no HTTP, no JSON round trip). The function
gets a :class:`SyncRequest` (the parent as an instance of its model when ``parent`` is a model
class, the children by kind) and returns a :class:`SyncResponse` or the dict a webhook would
answer; the answer is checked exactly as a webhook's. ``def`` functions run on the event loop
(keep them quick and free of I/O); ``async def`` ones may await. The controller is an ordinary
reconciler of the operator, so ``setpoint generate`` writes its CRD and RBAC, ``setpoint run``
runs it, and the runtime's metrics, logs and leader election apply.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.meta import is_model
from setpoint.api.rbac import Permission
from setpoint.api.selectors import LabelSelector
from setpoint.client.typed_objects import as_dict
from setpoint.composite.composite_sync import CompositeSync
from setpoint.composite.decorator_sync import DecoratorSync
from setpoint.composite.object_maps import ObjectMap, type_key
from setpoint.composite.parent_sync import SyncEnvironment
from setpoint.composite.spec import ChildType, update_strategy
from setpoint.composite.webhooks import FunctionHook
from setpoint.controller.reconcile import Result
from setpoint.manager.kind_ref import KindRef, kind_of, model_of

__all__ = ["SyncRequest", "SyncResponse", "composite", "decorator"]


@dataclass
class SyncRequest:
    """What a Python hook receives: the parent (or decorated object), its children (or
    attachments) by kind, the related objects and whether the parent is being finalized."""

    parent: Any
    children: ObjectMap
    related: ObjectMap = field(default_factory=dict)
    finalizing: bool = False
    models: Mapping[tuple[str, str], Any] = field(default_factory=dict)

    def children_of(self, kind: KindRef) -> list[Any]:
        """The children of ``kind`` (models when ``kind`` is a model class), sorted by name."""
        api_version, kind_name = kind_of(kind, "kind")
        objects = self.children.get(type_key(api_version, kind_name), {})
        model = model_of(kind)
        ordered = [objects[name] for name in sorted(objects)]
        return [model.model_validate(obj) for obj in ordered] if model else ordered


@dataclass
class SyncResponse:
    """What a Python hook answers (the fields of a webhook's answer)."""

    children: Sequence[Any] = ()
    status: Any = None
    resync_after_seconds: float = 0.0
    finalized: bool = False
    labels: Mapping[str, str | None] | None = None
    annotations: Mapping[str, str | None] | None = None

    def to_wire(self, children_key: str = "children") -> dict[str, Any]:
        answer: dict[str, Any] = {children_key: [as_dict(child) for child in self.children]}
        if self.status is not None:
            answer["status"] = (
                self.status.model_dump(mode="json", by_alias=True, exclude_none=True)
                if is_model(self.status)
                else dict(self.status)
            )
        if self.resync_after_seconds:
            answer["resyncAfterSeconds"] = self.resync_after_seconds
        if self.finalized:
            answer["finalized"] = True
        if self.labels is not None:
            answer["labels"] = dict(self.labels)
        if self.annotations is not None:
            answer["annotations"] = dict(self.annotations)
        return answer


HookFunction = Callable[[SyncRequest], Any]


def _function_hook(
    name: str, fn: HookFunction, parent_model: Any, root: str, children_key: str
) -> FunctionHook:
    async def call(request: dict[str, Any]) -> Any:
        parent = request[root]
        typed = SyncRequest(
            parent=parent_model.model_validate(parent) if parent_model is not None else parent,
            children=request[children_key],
            related=request.get("related") or {},
            finalizing=bool(request.get("finalizing")),
        )
        answer = fn(typed)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, SyncResponse):
            return answer.to_wire(children_key)
        return answer if answer is not None else {}

    return FunctionHook(name, call)


def _child_types(
    children: Sequence[KindRef] | Mapping[KindRef, str],
) -> list[tuple[tuple[str, str], str]]:
    if isinstance(children, Mapping):
        return [(kind_of(ref, "children"), method) for ref, method in children.items()]
    return [(kind_of(ref, "children"), "OnDelete") for ref in children]


def composite(
    op: Any,
    *,
    parent: KindRef,
    children: Sequence[KindRef] | Mapping[KindRef, str],
    name: str | None = None,
    finalize: HookFunction | None = None,
    generate_selector: bool = False,
    parent_selector: Mapping[str, Any] | None = None,
    ignore_status_changes: bool = False,
    resync: float | None = None,
    max_concurrent: int = 1,
    revision_history: Sequence[str] | None = None,
) -> Callable[[HookFunction], HookFunction]:
    """Register a composite controller on ``op`` with the decorated function as sync hook.

    ``children``: the child kinds, or a mapping of kind to update method (``OnDelete``, the
    default, ``InPlace``, ``Recreate``, ...). The other options are the CompositeController's
    (``generateSelector``, ``parentResource.labelSelector``, ``ignoreStatusChanges``,
    ``resyncPeriodSeconds``, ``parentResource.revisionHistory.fieldPaths`` as
    ``revision_history``); ``finalize`` is the finalize hook. A ``Rolling`` child type keeps
    ControllerRevisions, so it needs the ``metacontroller.k8s.io`` CRDs in the cluster
    (``setpoint install metacontroller``).
    """
    parent_kind = kind_of(parent, "parent")
    declared = _child_types(children)
    for (_, kind), method in declared:
        update_strategy({"method": method}, f"children[{kind}]")
    selector = (
        LabelSelector.from_dict(parent_selector, path="parent_selector")
        if parent_selector is not None
        else LabelSelector.everything()
    )
    controller_name = name or f"{parent_kind[1].lower()}-composite"

    async def build(mapper: Any, fn: HookFunction) -> CompositeSync:
        return CompositeSync(
            name=controller_name,
            parent=await mapper.resource_for(*parent_kind),
            children=await _resolved(mapper, declared),
            sync_hook=_function_hook("sync", fn, model_of(parent), "parent", "children"),
            finalize_hook=(
                _function_hook("finalize", finalize, model_of(parent), "parent", "children")
                if finalize is not None
                else None
            ),
            generate_selector=generate_selector,
            parent_selector=selector,
            controller_object={"metadata": {"name": controller_name}},
            field_manager=op.name,
            revision_field_paths=tuple(revision_history or ("spec",)),
        )

    return _registrar(
        op,
        build,
        for_=parent,
        declared=declared,
        name=controller_name,
        ignore_status_changes=ignore_status_changes,
        resync=resync,
        max_concurrent=max_concurrent,
        permissions=(
            [REVISION_PERMISSION] if any(m.startswith("Rolling") for _, m in declared) else []
        ),
    )


def decorator(
    op: Any,
    *,
    resource: KindRef,
    attachments: Sequence[KindRef] | Mapping[KindRef, str] = (),
    name: str | None = None,
    finalize: HookFunction | None = None,
    label_selector: Mapping[str, Any] | None = None,
    annotation_selector: Mapping[str, Any] | None = None,
    ignore_status_changes: bool = False,
    resync: float | None = None,
) -> Callable[[HookFunction], HookFunction]:
    """Register a decorator controller on ``op`` for objects of ``resource``, with the
    decorated function as sync hook (it may answer ``labels``, ``annotations``, ``status`` and
    ``attachments``; :class:`SyncRequest.children` holds the attachments)."""
    resource_kind = kind_of(resource, "resource")
    declared = _child_types(attachments)
    selector = (
        LabelSelector.from_dict(label_selector, path="label_selector")
        if label_selector is not None
        else LabelSelector.everything()
    )
    controller_name = name or f"{resource_kind[1].lower()}-decorator"

    async def build(mapper: Any, fn: HookFunction) -> DecoratorSync:
        return DecoratorSync(
            name=controller_name,
            parent=await mapper.resource_for(*resource_kind),
            attachments=await _resolved(mapper, declared),
            sync_hook=_function_hook("sync", fn, model_of(resource), "object", "attachments"),
            finalize_hook=(
                _function_hook("finalize", finalize, model_of(resource), "object", "attachments")
                if finalize is not None
                else None
            ),
            label_selector=selector,
            annotation_selector=annotation_selector,
            controller_object={"metadata": {"name": controller_name}},
            field_manager=op.name,
        )

    return _registrar(
        op,
        build,
        for_=resource,
        declared=declared,
        name=controller_name,
        ignore_status_changes=ignore_status_changes,
        resync=resync,
        max_concurrent=1,
    )


async def _resolved(
    mapper: Any, declared: Sequence[tuple[tuple[str, str], str]]
) -> list[ChildType]:
    return [
        ChildType(await mapper.resource_for(*kind), *update_strategy({"method": method}, kind[1]))
        for kind, method in declared
    ]


#: The permission a composite with a Rolling child type needs for its revisions.
REVISION_PERMISSION = Permission(
    "metacontroller.k8s.io",
    "controllerrevisions",
    ("get", "list", "watch", "create", "update", "patch", "delete"),
    reason="rolling updates keep the parents' ControllerRevisions",
)


def _registrar(
    op: Any,
    build: Callable[[Any, HookFunction], Awaitable[CompositeSync | DecoratorSync]],
    *,
    for_: KindRef,
    declared: Sequence[tuple[tuple[str, str], str]],
    name: str,
    ignore_status_changes: bool,
    resync: float | None,
    max_concurrent: int,
    permissions: Sequence[Permission] = (),
) -> Callable[[HookFunction], HookFunction]:
    """The decorator that registers ``fn`` as the sync hook of a reconciler of ``op`` whose
    sync (made by ``build`` at the first reconcile, when the client can map kinds) is shared
    by composite and decorator controllers."""

    def register(fn: HookFunction) -> HookFunction:
        state: dict[str, CompositeSync | DecoratorSync] = {}

        async def reconcile(ctx: Any, request: Any) -> Result | None:
            sync = state.get("sync")
            if sync is None:
                sync = state["sync"] = await build(ctx.client.mapper, fn)
            environment = SyncEnvironment(ctx.client, ctx.cache, ctx.recorder)
            return await sync.sync(environment, request.namespace, request.name)

        predicates = []
        if ignore_status_changes:
            from setpoint.composite.controllers import IgnoreStatusChanges

            predicates.append(IgnoreStatusChanges())
        op.add_reconciler(
            reconcile,
            for_=for_,
            owns=[kind for kind, _ in declared],
            for_predicates=predicates,
            name=name,
            resync=resync,
            max_concurrent=max_concurrent,
            permissions=permissions,
            # As the HTTP hooks' controllers (see composite.controllers): one call per change.
            ignore_own_writes=True,
        )
        fn.sync_stats = lambda: state["sync"].stats if "sync" in state else None  # type: ignore[attr-defined]
        return fn

    return register
