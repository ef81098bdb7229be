"""Handlers map cache events to the requests of primary objects."""

from __future__ import annotations

import logging

import pytest

from setpoint.api.gvk import ObjectKey
from setpoint.controller.handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
)
from setpoint.controller.reconcile import Request

from .objects import cached, owner_ref


class Recorder:
    def __init__(self) -> None:
        self.keys: list[Request] = []

    def add(self, key: Request) -> None:
        self.keys.append(key)


def test_for_object_enqueues_the_object_itself() -> None:
    queue = Recorder()
    handler = EnqueueRequestForObject()
    handler.on_create(cached("a", "ns1"), queue)
    handler.on_update(cached("b", "ns1"), cached("b", "ns1"), queue)
    handler.on_delete(cached("c", None, kind="Namespace"), queue)
    assert queue.keys == [ObjectKey("ns1", "a"), ObjectKey("ns1", "b"), ObjectKey(None, "c")]


async def test_for_owner_follows_the_controller_reference_of_matching_group_and_kind() -> None:
    queue = Recorder()
    handler = EnqueueRequestForOwner("example.com/v1", "Widget", namespaced=True)
    child = cached(
        "child",
        "ns1",
        owners=[
            owner_ref("not-controller", controller=False),
            owner_ref("other-kind", kind="Gadget"),
            owner_ref("other-group", api_version="other.io/v1"),
            owner_ref("w1", api_version="example.com/v2"),  # another version of the same group
        ],
    )
    handler.on_create(child, queue)
    assert queue.keys == [ObjectKey("ns1", "w1")]


def test_for_owner_without_only_controller_follows_every_matching_reference() -> None:
    queue = Recorder()
    handler = EnqueueRequestForOwner("example.com/v1", "Widget", only_controller=False)
    child = cached("child", "ns1", owners=[owner_ref("a", controller=False), owner_ref("b")])
    handler.on_create(child, queue)
    assert queue.keys == [ObjectKey("ns1", "a"), ObjectKey("ns1", "b")]


def test_for_owner_update_enqueues_old_and_new_owner() -> None:
    queue = Recorder()
    handler = EnqueueRequestForOwner("example.com/v1", "Widget")
    old = cached("child", "ns1", owners=[owner_ref("w-old")])
    new = cached("child", "ns1", owners=[owner_ref("w-new")])
    handler.on_update(old, new, queue)
    assert queue.keys == [ObjectKey("ns1", "w-old"), ObjectKey("ns1", "w-new")]


def test_for_owner_of_core_group() -> None:
    queue = Recorder()
    handler = EnqueueRequestForOwner("v1", "ConfigMap")
    child = cached("child", "ns1", owners=[owner_ref("cm", api_version="v1", kind="ConfigMap")])
    handler.on_delete(child, queue)
    assert queue.keys == [ObjectKey("ns1", "cm")]


async def test_for_owner_cluster_scoped_owner_gets_no_namespace() -> None:
    async def resolve_scope(api_version: str, kind: str) -> bool:
        assert (api_version, kind) == ("example.com/v1", "Widget")
        return False

    queue = Recorder()
    handler = EnqueueRequestForOwner("example.com/v1", "Widget")
    await handler.prepare(resolve_scope)
    handler.on_create(cached("child", "ns1", owners=[owner_ref("w1")]), queue)
    assert queue.keys == [ObjectKey(None, "w1")]


async def test_for_owner_scope_lookup_failure_falls_back_to_child_namespace(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def resolve_scope(api_version: str, kind: str) -> bool:
        raise LookupError("no such kind")

    queue = Recorder()
    handler = EnqueueRequestForOwner("example.com/v1", "Widget")
    with caplog.at_level(logging.WARNING):
        await handler.prepare(resolve_scope)
    handler.on_create(cached("child", "ns1", owners=[owner_ref("w1")]), queue)
    assert queue.keys == [ObjectKey("ns1", "w1")]
    assert "namespaced" in caplog.text


def test_map_function_results_are_enqueued_and_failures_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = Recorder()

    def referencing(obj: object) -> list[Request]:
        name = getattr(obj, "name", "")
        if name == "boom":
            raise RuntimeError("mapper bug")
        if name == "none":
            return []
        return [ObjectKey("ns1", f"{name}-user-1"), ObjectKey("ns1", f"{name}-user-2")]

    handler = EnqueueRequestsFromMapFunc(referencing)
    handler.on_create(cached("secret"), queue)
    handler.on_create(cached("none"), queue)
    with caplog.at_level(logging.ERROR):
        handler.on_create(cached("boom"), queue)
    assert queue.keys == [ObjectKey("ns1", "secret-user-1"), ObjectKey("ns1", "secret-user-2")]
    assert "mapper bug" in caplog.text


def test_map_function_returning_wrong_type_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    queue = Recorder()
    handler = EnqueueRequestsFromMapFunc(lambda obj: ["ns/name"])  # type: ignore[list-item]
    with caplog.at_level(logging.ERROR):
        handler.on_create(cached(), queue)
    assert queue.keys == []
    assert "expected Request" in caplog.text
    with pytest.raises(TypeError, match="callable"):
        EnqueueRequestsFromMapFunc("nope")  # type: ignore[arg-type]
