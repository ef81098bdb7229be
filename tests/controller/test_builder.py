"""The builder wires sources, handlers and predicates into a controller for a manager."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from setpoint.api.gvk import ObjectKey, ResourceInfo
from setpoint.controller.builder import Builder
from setpoint.controller.controller import Controller
from setpoint.controller.predicates import GenerationChanged, predicate_for
from setpoint.controller.rate_limiters import ItemExponentialFailureRateLimiter
from setpoint.controller.reconcile import Request

from .fake_informer import FakeCache
from .objects import cached, owner_ref
from .waiting import wait_until

WIDGET = ("example.com/v1", "Widget")


class FakeMapper:
    def __init__(self, cluster_scoped: set[str] | None = None) -> None:
        self.cluster_scoped = cluster_scoped or set()

    async def resource_for(self, api_version: str, kind: str) -> ResourceInfo:
        group, _, version = api_version.rpartition("/")
        return ResourceInfo(
            group=group,
            version=version,
            kind=kind,
            resource=kind.lower() + "s",
            namespaced=kind not in self.cluster_scoped,
            list_kind=kind + "List",
        )


class FakeClient:
    def __init__(self, mapper: FakeMapper) -> None:
        self.mapper = mapper


class FakeManager:
    """The minimal manager the builder protocol asks for."""

    def __init__(self, cluster_scoped: set[str] | None = None) -> None:
        self.cache = FakeCache()
        self.client = FakeClient(FakeMapper(cluster_scoped))
        self.controllers: list[Controller] = []

    def add(self, controller: Controller) -> None:
        self.controllers.append(controller)


def recorder() -> tuple[list[Request], Callable[[Request], Awaitable[None]]]:
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    return seen, reconcile


async def test_for_owns_and_watches_enqueue_the_primary_key() -> None:
    manager = FakeManager()
    seen, reconcile = recorder()

    def secret_to_widgets(obj: object) -> list[Request]:
        return [ObjectKey("ns1", "w-from-secret")]

    controller = (
        Builder(manager)
        .for_(*WIDGET)
        .owns("apps/v1", "Deployment")
        .watches("v1", "Secret", secret_to_widgets)
        .with_options(rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01))
        .complete(reconcile)
    )
    assert manager.controllers == [controller]
    assert controller.name == "widget"
    async with controller:
        manager.cache.informer(*WIDGET).upsert(
            cached("w1", "ns1", api_version=WIDGET[0], kind=WIDGET[1])
        )
        manager.cache.informer("apps/v1", "Deployment").upsert(
            cached(
                "child", "ns1", api_version="apps/v1", kind="Deployment", owners=[owner_ref("w2")]
            )
        )
        manager.cache.informer("v1", "Secret").upsert(cached("s", "ns1", kind="Secret"))
        await wait_until(lambda: len(seen) == 3)
    assert sorted(str(r) for r in seen) == ["ns1/w-from-secret", "ns1/w1", "ns1/w2"]


async def test_owns_resolves_cluster_scoped_owners_through_the_mapper() -> None:
    manager = FakeManager(cluster_scoped={"Widget"})
    seen, reconcile = recorder()
    controller = Builder(manager).for_(*WIDGET).owns("v1", "ConfigMap").complete(reconcile)
    async with controller:
        manager.cache.informer("v1", "ConfigMap").upsert(
            cached("c", "ns1", owners=[owner_ref("w")])
        )
        await wait_until(lambda: len(seen) == 1)
    assert seen == [ObjectKey(None, "w")]


async def test_event_filter_applies_to_every_watch_and_for_predicates_to_for_only() -> None:
    manager = FakeManager()
    seen, reconcile = recorder()
    controller = (
        Builder(manager)
        .for_(*WIDGET, predicates=[GenerationChanged()])
        .owns("v1", "ConfigMap")
        .with_event_filter(predicate_for(lambda o: o.labels.get("skip") != "yes"))
        .complete(reconcile)
    )
    widgets = manager.cache.informer(*WIDGET)
    config_maps = manager.cache.informer("v1", "ConfigMap")
    async with controller:
        widgets.upsert(cached("w1", "ns1", generation=1, api_version=WIDGET[0], kind=WIDGET[1]))
        widgets.upsert(
            cached("w2", "ns1", labels={"skip": "yes"}, api_version=WIDGET[0], kind=WIDGET[1])
        )
        await wait_until(lambda: len(seen) == 1)
        # A status-only change of the Widget (same generation) is filtered out...
        widgets.upsert(
            cached(
                "w1",
                "ns1",
                generation=1,
                resource_version="2",
                api_version=WIDGET[0],
                kind=WIDGET[1],
            )
        )
        # ...but a child update is not subject to GenerationChanged.
        config_maps.upsert(cached("c", "ns1", owners=[owner_ref("w1")]))
        config_maps.upsert(cached("c", "ns1", resource_version="2", owners=[owner_ref("w1")]))
        await wait_until(lambda: len(seen) >= 2)
    assert {str(r) for r in seen} == {"ns1/w1"}


def test_builder_validation_errors_name_the_problem() -> None:
    manager = FakeManager()
    _, reconcile = recorder()
    with pytest.raises(ValueError, match="owns\\(\\) needs for_"):
        Builder(manager).owns("v1", "ConfigMap").named("x").complete(reconcile)
    with pytest.raises(ValueError, match="named"):
        Builder(manager).watches("v1", "Secret", lambda o: []).complete(reconcile)
    with pytest.raises(ValueError, match="already called"):
        Builder(manager).for_(*WIDGET).for_("v1", "ConfigMap")
    with pytest.raises(ValueError, match="api_version"):
        Builder(manager).for_("a/b/c", "Widget")
    with pytest.raises(ValueError, match="kind"):
        Builder(manager).for_("v1", "")
    with pytest.raises(ValueError, match="not a valid controller name"):
        Builder(manager).named("has space")
    with pytest.raises(TypeError, match="predicate_for"):
        Builder(manager).for_(*WIDGET, predicates=[lambda o: True])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="handler"):
        Builder(manager).watches("v1", "Secret", 42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        Builder(manager).for_(*WIDGET).with_options(max_concurrent_reconciles=0).complete(reconcile)
    assert manager.controllers == []


def test_named_and_options_reach_the_controller() -> None:
    manager = FakeManager()
    _, reconcile = recorder()
    controller = (
        Builder(manager)
        .for_(*WIDGET)
        .named("widget-ctl")
        .with_options(
            max_concurrent_reconciles=3, reconcile_timeout=5.0, need_leader_election=False
        )
        .complete(reconcile)
    )
    assert controller.name == "widget-ctl"
    assert controller.max_concurrent_reconciles == 3
    assert controller.reconcile_timeout == 5.0
    assert controller.need_leader_election is False
    assert len(controller.sources) == 1
