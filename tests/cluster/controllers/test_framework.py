"""The controller framework: watches become keys, writes go through the API, Events aggregate."""

from __future__ import annotations

import asyncio
from typing import Any

from setpoint.api.clock import FakeClock
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informer_set import InformerSet
from setpoint.cluster.controllers.framework.informers import ObjectKey
from setpoint.cluster.controllers.framework.manager import ControllerManager
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.workload_pods.ownership import CONTROLLER_INDEX, controller_index
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import raw_api


class Stamper(Controller):
    """Copies data.want of a ConfigMap into an annotation and records an Event."""

    name = "stamper"

    def watches(self) -> list[Watch]:
        return [Watch("configmaps")]

    async def reconcile(self, key: ObjectKey) -> float | None:
        obj = self.access.get("configmaps", key.namespace, key.name)
        if obj is None:
            return None
        want = (obj.get("data") or {}).get("want", "")
        if (obj["metadata"].get("annotations") or {}).get("stamp") == want:
            return None
        await self.access.patch(
            "configmaps", key.namespace, key.name, {"metadata": {"annotations": {"stamp": want}}}
        )
        self.access.event(obj, "Normal", "Stamped", "stamped the config map")
        return 30.0  # asks to be called again on the (fake) clock


async def test_controller_writes_through_the_api_and_records_aggregated_events() -> None:
    clock = FakeClock()
    async with LocalCluster(controllers=False) as cluster:
        assert cluster.server is not None
        manager = ControllerManager(cluster.server, ControllerOptions(clock=clock), [Stamper])
        await manager.start()
        try:
            async with raw_api(cluster.url, cluster.token) as api:
                base = "/api/v1/namespaces/default/configmaps"
                await api.request(
                    "POST", base, {"metadata": {"name": "c"}, "data": {"want": "one"}}
                )

                async def stamped() -> Any:
                    body = (await api.request("GET", f"{base}/c")).body
                    return (body["metadata"].get("annotations") or {}).get("stamp") == "one"

                await eventually(stamped)
                await api.request(
                    "PATCH",
                    f"{base}/c",
                    {"data": {"want": "two"}},
                    content_type="application/merge-patch+json",
                )

                async def stamped_two() -> Any:
                    body = (await api.request("GET", f"{base}/c")).body
                    return (body["metadata"].get("annotations") or {}).get("stamp") == "two"

                await eventually(stamped_two)
                await manager.recorder.flush()
                events = (await api.request("GET", "/api/v1/namespaces/default/events")).body[
                    "items"
                ]
                stamped_events = [e for e in events if e["reason"] == "Stamped"]
                assert len(stamped_events) == 1
                event = stamped_events[0]
                assert event["count"] == 2
                assert event["source"] == {"component": "stamper-controller"}
                assert event["involvedObject"]["name"] == "c"
                assert event["involvedObject"]["kind"] == "ConfigMap"
        finally:
            await manager.stop()


class Impatient(Controller):
    """Asks to be called again at once, every time."""

    name = "impatient"
    calls = 0

    def watches(self) -> list[Watch]:
        return [Watch("configmaps")]

    async def reconcile(self, key: ObjectKey) -> float | None:
        if key.name == "again":
            type(self).calls += 1
            return 0.0
        return None


async def test_again_at_once_is_rate_limited_on_the_clock() -> None:
    clock = FakeClock()
    async with LocalCluster(controllers=False) as cluster:
        assert cluster.server is not None
        options = ControllerOptions(clock=clock, retry_clock=clock)
        manager = ControllerManager(cluster.server, options, [Impatient])
        await manager.start()
        try:
            async with raw_api(cluster.url, cluster.token) as api:
                path = "/api/v1/namespaces/default/configmaps"
                await api.request("POST", path, {"metadata": {"name": "again"}})

                async def called(times: int) -> bool:
                    return Impatient.calls >= times

                await eventually(lambda: called(1), "the first reconcile")
                for _ in range(20):  # let the loop run: nothing may happen without the clock
                    await asyncio.sleep(0)
                assert Impatient.calls == 1
                clock.advance(0.005)  # the first back-off step
                await eventually(lambda: called(2), "the second reconcile")
                clock.advance(0.005)  # not yet: the back-off doubled to 10 ms
                for _ in range(20):
                    await asyncio.sleep(0)
                assert Impatient.calls == 2
        finally:
            await manager.stop()


async def test_a_metadata_only_informer_keeps_no_data_until_someone_reads_whole_objects() -> None:
    """The garbage collector and the root CA publisher watch every ConfigMap for its metadata:
    the shared informer holds no `data`, and turns whole when a controller reads objects."""
    async with LocalCluster() as cluster:
        assert cluster.server is not None and cluster.controllers is not None
        async with raw_api(cluster.url, cluster.token) as api:
            await api.request(
                "POST",
                "/api/v1/namespaces/default/configmaps",
                {"metadata": {"name": "big", "labels": {"a": "b"}}, "data": {"k": "x" * 4096}},
            )
            informers = cluster.controllers.informers
            configmaps = informers.informer("configmaps", metadata_only=True)

            async def cached() -> Any:
                return configmaps.get("default", "big")

            obj = await eventually(cached)
            assert configmaps.metadata_only
            assert set(obj) == {"apiVersion", "kind", "metadata"}
            assert obj["metadata"]["labels"] == {"a": "b"}

            # A user that reads whole objects makes it list again, fully.
            assert informers.informer("configmaps") is configmaps
            assert not configmaps.metadata_only
            whole = configmaps.get("default", "big")
            assert whole is not None and whole["data"] == {"k": "x" * 4096}
            assert whole["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


async def test_a_metadata_only_informer_hands_out_fresh_metadata_and_old_states() -> None:
    """Kept packed, an object is decoded for each reader: a reader's edit changes nobody
    else's copy, and an update's handler sees the state before it."""
    async with LocalCluster() as cluster:
        assert cluster.server is not None and cluster.controllers is not None
        async with raw_api(cluster.url, cluster.token) as api:
            path = "/api/v1/namespaces/default/configmaps"
            await api.request("POST", path, {"metadata": {"name": "m", "labels": {"v": "1"}}})
            informer = cluster.controllers.informers.informer("configmaps", metadata_only=True)
            seen: list[tuple[Any, Any]] = []

            async def cached() -> Any:
                return informer.get("default", "m")

            first = await eventually(cached)
            informer.add_handler(lambda new, old: seen.append((new, old)))
            first["metadata"]["labels"]["v"] = "edited by a reader"
            again = informer.get("default", "m")
            assert again is not None and again["metadata"]["labels"] == {"v": "1"}
            (listed,) = [o for o in informer.list("default") if o["metadata"]["name"] == "m"]
            assert listed["metadata"]["labels"] == {"v": "1"}
            assert "managedFields" not in again["metadata"]

            await api.request(
                "PATCH",
                f"{path}/m",
                {"metadata": {"labels": {"v": "2"}}},
                content_type="application/merge-patch+json",
            )

            async def updated() -> Any:
                return [(n, o) for n, o in seen if o is not None]

            ((new, old),) = await eventually(updated)
            assert new["metadata"]["labels"] == {"v": "2"}
            assert old["metadata"]["labels"] == {"v": "1"}
            assert int(new["metadata"]["resourceVersion"]) > int(old["metadata"]["resourceVersion"])


async def test_the_index_by_controller_follows_adds_updates_and_deletes() -> None:
    """What the ReplicaSet and Job controllers read: always the same as filtering every pod."""

    def owner(uid: str) -> list[dict[str, Any]]:
        return [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": uid, "uid": uid, "controller": True}
        ]

    async with LocalCluster(controllers=False) as cluster:
        assert cluster.server is not None
        async with raw_api(cluster.url, cluster.token) as api:
            path = "/api/v1/namespaces/default/configmaps"
            await api.request(
                "POST", path, {"metadata": {"name": "a", "ownerReferences": owner("u1")}}
            )
            informers = InformerSet(cluster.server.storage, cluster.server.registry)
            informer = informers.informer("configmaps")
            informer.start()
            informer.add_index(CONTROLLER_INDEX, controller_index)  # after objects exist
            for name, uid in (("b", "u1"), ("c", "u2"), ("d", "")):
                refs = owner(uid) if uid else []
                await api.request(
                    "POST", path, {"metadata": {"name": name, "ownerReferences": refs}}
                )
            await api.request(
                "PATCH",
                f"{path}/a",
                {"metadata": {"ownerReferences": owner("u2")}},
                content_type="application/merge-patch+json",
            )
            await api.request("DELETE", f"{path}/b")

            def names(value: str) -> list[str]:
                return sorted(
                    o["metadata"]["name"] for o in informer.by_index(CONTROLLER_INDEX, value)
                )

            async def caught_up() -> bool:
                return informer.get("default", "b") is None and names("default/u2") == ["a", "c"]

            await eventually(caught_up, "the informer to see the writes")
            assert names("default/u1") == []
            assert names("default/") == sorted(
                o["metadata"]["name"]
                for o in informer.list("default")
                if not o["metadata"].get("ownerReferences")
            )
            assert "d" in names("default/")
            await informer.stop()
