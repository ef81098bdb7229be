"""CRD conversion in the local cluster: objects stored in one version, read and written in any
served version, converted by the CRD's conversion webhook (``strategy: Webhook``).

The webhooks run on the test's event loop; the cluster runs on its own thread and calls them
over TLS, so every client here (kubectl, the official client) runs off the loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

import setpoint
from setpoint.client import Client
from setpoint.testing import run_operator
from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.admission.conversion_fixtures import (
    CRD_PATH,
    GROUP,
    converting,
    cronjob_crd,
    cronjob_v1,
    cronjob_v2,
    cronjobs_path,
    install_crd,
    raw_converter,
    runtime_converter,
)
from tests.cluster.raw_api import RawAPI
from tests.webhook.cronjob_versions import CronJobV1, CronJobV2

SCHEDULE_FIELDS = {"minute": "*/5", "hour": "3", "dayOfMonth": "*", "month": "*", "dayOfWeek": "*"}


@pytest.fixture(autouse=True)
async def _crd_without_webhook(api: RawAPI) -> AsyncIterator[None]:
    """Leave the shared CRD with ``strategy: None`` (its test converter is gone after a test)."""
    yield
    await install_crd(api, cronjob_crd(None))


async def kubectl(
    cluster: BackgroundCluster, cache: Path, *args: str, stdin: str | None = None
) -> tuple[int, str, str]:
    """Run the real kubectl off the event loop (the webhooks it needs run on it)."""
    process = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        str(cluster.kubeconfig_path),
        "--cache-dir",
        str(cache),
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(
        process.communicate(stdin.encode() if stdin is not None else None), 60
    )
    return process.returncode or 0, out.decode(), err.decode()


async def test_an_object_created_in_v1_reads_in_v2_through_the_runtimes_converter(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str, tmp_path: Path
) -> None:
    async with runtime_converter(tmp_path / "certs") as client_config:
        await install_crd(api, cronjob_crd(client_config))
        created = await api.request(
            "POST", cronjobs_path("v1", namespace), cronjob_v1("nightly", "*/5 3 * * *")
        )
        assert created.status == 201, created.body
        assert created.body["spec"]["schedule"] == "*/5 3 * * *"

        code, out, err = await kubectl(
            admission_cluster,
            tmp_path / "cache",
            "get",
            f"cronjobs.v2.{GROUP}",
            "nightly",
            "-n",
            namespace,
            "-o",
            "json",
        )
        assert code == 0, err
        shown = json.loads(out)
        assert shown["apiVersion"] == f"{GROUP}/v2"
        assert shown["spec"]["schedule"] == SCHEDULE_FIELDS
        assert shown["metadata"]["uid"] == created.body["metadata"]["uid"]

        # The table view converts too (the v2 printer column reads the v2 field).
        code, out, err = await kubectl(
            admission_cluster, tmp_path / "cache", "get", f"cronjobs.v2.{GROUP}", "-n", namespace
        )
        assert code == 0, err
        assert out.split("\n")[1].split()[:2] == ["nightly", "*/5"]

        def official_client_get() -> Any:
            client = kubernetes.config.new_client_from_config(
                str(admission_cluster.kubeconfig_path)
            )
            with client:
                api_instance = kubernetes.client.CustomObjectsApi(client)
                return api_instance.get_namespaced_custom_object(
                    GROUP, "v2", namespace, "cronjobs", "nightly"
                ), api_instance.list_namespaced_custom_object(GROUP, "v2", namespace, "cronjobs")

        one, listed = await asyncio.to_thread(official_client_get)
        assert one["spec"]["schedule"] == SCHEDULE_FIELDS
        assert [item["spec"]["schedule"] for item in listed["items"]] == [SCHEDULE_FIELDS]
        assert listed["apiVersion"] == f"{GROUP}/v2"

        # setpoint's own client, with the typed v2 model (the read the example's test makes).
        async with await Client.from_kubeconfig(str(admission_cluster.kubeconfig_path)) as client:
            typed = await client.get(CronJobV2, "nightly", namespace=namespace)
            assert typed.spec.schedule.minute == "*/5"
            assert typed.spec.schedule.hour == "3"

        # Reading in the stored version needs no conversion; v1 still shows the string.
        v1 = await api.request("GET", cronjobs_path("v1", namespace, "nightly"))
        assert v1.body["spec"]["schedule"] == "*/5 3 * * *"


async def test_a_list_and_a_watch_convert_in_one_review_per_batch(
    api: RawAPI, namespace: str
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        for index in range(3):
            reply = await api.request(
                "POST", cronjobs_path("v1", namespace), cronjob_v1(f"c{index}", f"{index} * * * *")
            )
            assert reply.status == 201
        assert webhook.reviews == []  # stored as sent: nothing converted

        listed = await api.request("GET", cronjobs_path("v2", namespace))
        assert listed.status == 200, listed.body
        assert [item["spec"]["schedule"]["minute"] for item in listed.body["items"]] == [
            "0",
            "1",
            "2",
        ]
        assert len(webhook.reviews) == 1
        request = webhook.reviews[0]["request"]
        assert request["desiredAPIVersion"] == f"{GROUP}/v2"
        assert [obj["metadata"]["name"] for obj in request["objects"]] == ["c0", "c1", "c2"]

        # A watch started in v2 sees the objects stored in v1, and later writes, in v2.
        watched = asyncio.ensure_future(
            api.watch(cronjobs_path("v2", namespace) + "?watch=true&timeoutSeconds=2")
        )
        await asyncio.sleep(0.5)
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("late", "7 * * * *"))
        events = await watched
        assert [(e["type"], e["object"]["spec"]["schedule"]["minute"]) for e in events] == [
            ("ADDED", "0"),
            ("ADDED", "1"),
            ("ADDED", "2"),
            ("ADDED", "7"),
        ]
        assert all(e["object"]["apiVersion"] == f"{GROUP}/v2" for e in events)


async def test_writes_are_stored_in_the_storage_version_and_answered_in_the_requests(
    api: RawAPI, namespace: str
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        created = await api.request(
            "POST", cronjobs_path("v2", namespace), cronjob_v2("two", "15", "4")
        )
        assert created.status == 201, created.body
        assert created.body["apiVersion"] == f"{GROUP}/v2"
        assert created.body["spec"]["schedule"]["minute"] == "15"
        # To v1 to store it, back to v2 to answer.
        desired = [review["request"]["desiredAPIVersion"] for review in webhook.reviews]
        assert desired == [f"{GROUP}/v1", f"{GROUP}/v2"]
        webhook.reviews.clear()
        stored = await api.request("GET", cronjobs_path("v1", namespace, "two"))
        assert stored.body["spec"]["schedule"] == "15 4 * * *"
        assert webhook.reviews == []

        # An update in v2 of the object stored in v1.
        updated = {**created.body, "spec": {"schedule": {**SCHEDULE_FIELDS, "minute": "30"}}}
        reply = await api.request("PUT", cronjobs_path("v2", "" or namespace, "two"), updated)
        assert reply.status == 200, reply.body
        assert reply.body["spec"]["schedule"]["minute"] == "30"
        assert reply.body["metadata"]["generation"] == 2
        stored = await api.request("GET", cronjobs_path("v1", namespace, "two"))
        assert stored.body["spec"]["schedule"] == "30 3 * * *"

        # A dry run converts both ways too, and stores nothing.
        webhook.reviews.clear()
        dry = await api.request(
            "POST", cronjobs_path("v2", namespace) + "?dryRun=All", cronjob_v2("dry", "1")
        )
        assert dry.status == 201, dry.body
        assert dry.body["spec"]["schedule"]["minute"] == "1"
        assert len(webhook.reviews) == 2
        missing = await api.request("GET", cronjobs_path("v1", namespace, "dry"))
        assert missing.status == 404


async def test_stored_versions_record_a_new_storage_version(api: RawAPI, namespace: str) -> None:
    async with raw_converter() as webhook:
        crd = await install_crd(api, cronjob_crd(webhook.client_config), fresh=True)
        assert crd["status"]["storedVersions"] == ["v1"]
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("old", "1 * * * *"))

        crd = await install_crd(api, cronjob_crd(webhook.client_config, storage="v2"))
        assert crd["status"]["storedVersions"] == ["v1", "v2"]
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("new", "2 * * * *"))

        # "old" stays stored in v1, "new" is stored in v2: each version's reads convert one
        # (lists are in name order).
        webhook.reviews.clear()
        for version, expected in (("v1", ["2 * * * *", "1 * * * *"]), ("v2", ["2", "1"])):
            listed = await api.request("GET", cronjobs_path(version, namespace))
            schedules = [item["spec"]["schedule"] for item in listed.body["items"]]
            got = [s if isinstance(s, str) else s["minute"] for s in schedules]
            assert got == expected
        converted = [
            [obj["metadata"]["name"] for obj in review["request"]["objects"]]
            for review in webhook.reviews
        ]
        assert converted == [["new"], ["old"]]


async def test_a_failing_conversion_webhook_breaks_reads_of_other_versions_with_upstreams_error(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str, tmp_path: Path
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("c", "1 * * * *"))

        def failure(review: dict[str, Any]) -> dict[str, Any]:
            answer = converting(review)
            answer["response"]["result"] = {"status": "Failure", "message": "no v2 for you"}
            return answer

        webhook.answer = failure
        source = f"{GROUP}/v1, Kind=CronJob"
        reply = await api.request("GET", cronjobs_path("v2", namespace, "c"))
        assert reply.status == 500
        assert reply.body["message"] == f"conversion webhook for {source} failed: no v2 for you"
        assert reply.body.get("reason", "") == ""
        listed = await api.request("GET", cronjobs_path("v2", namespace))
        assert listed.status == 500
        code, _, err = await kubectl(
            admission_cluster, tmp_path / "cache", "get", f"cronjobs.v2.{GROUP}", "-n", namespace
        )
        assert code != 0
        assert f"Error from server: conversion webhook for {source} failed: no v2 for you" in err
        # Reads in the stored version need no webhook and still work.
        current = await api.request("GET", cronjobs_path("v1", namespace, "c"))
        assert current.status == 200
        # A watch in v2 ends with an ERROR event when an event cannot be converted.
        revision = current.body["metadata"]["resourceVersion"]
        watched = asyncio.ensure_future(
            api.watch(
                cronjobs_path("v2", namespace)
                + f"?watch=true&resourceVersion={revision}&timeoutSeconds=5"
            )
        )
        await asyncio.sleep(0.3)
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("d", "2 * * * *"))
        events = await watched
        assert [event["type"] for event in events] == ["ERROR"]
        assert events[0]["object"]["code"] == 500
        assert events[0]["object"]["reason"] == "InternalError"
        assert events[0]["object"]["message"].endswith("failed: no v2 for you")

        # An answer with the wrong number of objects, then a wrong uid.
        webhook.answer = lambda review: {
            **converting(review),
            "response": {**converting(review)["response"], "convertedObjects": []},
        }
        reply = await api.request("GET", cronjobs_path("v2", namespace, "c"))
        assert (
            reply.body["message"]
            == f"conversion webhook for {source} returned 0 objects, expected 1"
        )
        webhook.answer = lambda review: {
            **converting(review),
            "response": {**converting(review)["response"], "uid": "other"},
        }
        reply = await api.request("GET", cronjobs_path("v2", namespace, "c"))
        uid = webhook.reviews[-1]["request"]["uid"]
        assert reply.body["message"] == (
            f'conversion webhook for {source} failed: expected response.uid="{uid}", got "other"'
        )

        # A write that needs conversion fails the same way and stores nothing.
        reply = await api.request("POST", cronjobs_path("v2", namespace), cronjob_v2("w", "1"))
        assert reply.status == 500
        assert (await api.request("GET", cronjobs_path("v1", namespace, "w"))).status == 404

    # The webhook is gone: the error is the connection's.
    reply = await api.request("GET", cronjobs_path("v2", namespace, "c"))
    assert reply.status == 500
    assert reply.body["message"].startswith(
        f'conversion webhook for {source} failed: Post "https://127.0.0.1:'
    )
    assert "connect: connection refused" in reply.body["message"]


async def test_a_converted_object_keeps_its_metadata_but_for_labels_and_annotations(
    api: RawAPI, namespace: str
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        await api.request(
            "POST", cronjobs_path("v1", namespace), cronjob_v1("m", "1 * * * *", labels={"a": "1"})
        )

        def relabel(review: dict[str, Any]) -> dict[str, Any]:
            answer = converting(review)
            for obj in answer["response"]["convertedObjects"]:
                obj["metadata"] = {**obj["metadata"], "labels": {"b": "2"}, "generation": 99}
            return answer

        webhook.answer = relabel
        reply = await api.request("GET", cronjobs_path("v2", namespace, "m"))
        assert reply.body["metadata"]["labels"] == {"b": "2"}
        assert reply.body["metadata"]["generation"] == 1


async def test_server_side_apply_in_a_version_other_than_the_storage_version(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str, tmp_path: Path
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        manifest = json.dumps(cronjob_v2("applied", "10", "2"))
        for minute in ("10", "20"):
            code, _, err = await kubectl(
                admission_cluster,
                tmp_path / "cache",
                "apply",
                "--server-side",
                "-n",
                namespace,
                "-f",
                "-",
                stdin=manifest.replace('"10"', f'"{minute}"'),
            )
            assert code == 0, err
        stored = await api.request("GET", cronjobs_path("v1", namespace, "applied"))
        assert stored.body["spec"]["schedule"] == "20 2 * * *"
        served = await api.request("GET", cronjobs_path("v2", namespace, "applied"))
        entries = served.body["metadata"]["managedFields"]
        assert [(e["manager"], e["operation"], e["apiVersion"]) for e in entries] == [
            ("kubectl", "Apply", f"{GROUP}/v2")
        ]
        assert "f:minute" in json.dumps(entries[0]["fieldsV1"])


async def test_strategy_none_rewrites_only_the_api_version(api: RawAPI, namespace: str) -> None:
    crd = await install_crd(api, cronjob_crd(None), fresh=True)
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("n", "5 * * * *"))
    reply = await api.request("GET", cronjobs_path("v2", namespace, "n"))
    assert reply.body["apiVersion"] == f"{GROUP}/v2"
    assert reply.body["spec"] == {"schedule": "5 * * * *"}
    # After the storage version moves to v2, the object still stored in v1 reads as v2 in v2
    # (it used to keep its stored apiVersion there).
    await install_crd(api, cronjob_crd(None, storage="v2"))
    for version in ("v2", "v1"):
        reply = await api.request("GET", cronjobs_path(version, namespace, "n"))
        assert reply.body["apiVersion"] == f"{GROUP}/{version}"
        listed = await api.request("GET", cronjobs_path(version, namespace))
        assert [item["apiVersion"] for item in listed.body["items"]] == [f"{GROUP}/{version}"]
    await api.request("DELETE", CRD_PATH)


async def test_an_apply_in_v2_conflicts_with_a_v1_manager_of_the_field_it_changes(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str, tmp_path: Path
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        created = await api.request(
            "POST",
            cronjobs_path("v1", namespace) + "?fieldManager=writer-v1",
            cronjob_v1("mixed", "0 1 * * *"),
        )
        assert created.status == 201, created.body
        manifest = json.dumps(cronjob_v2("mixed", "9", "9"))
        apply = ("apply", "--server-side", "-n", namespace, "-f", "-")
        code, _, err = await kubectl(admission_cluster, tmp_path / "c", *apply, stdin=manifest)
        # writer-v1 owns spec.schedule in v1, where the apply changes it: upstream's conflict.
        assert code != 0
        assert f'conflict with "writer-v1" using {GROUP}/v1: .spec.schedule' in err, err
        code, _, err = await kubectl(
            admission_cluster, tmp_path / "c", *apply, "--force-conflicts", stdin=manifest
        )
        assert code == 0, err
        served = await api.request("GET", cronjobs_path("v2", namespace, "mixed"))
        assert served.body["spec"]["schedule"]["minute"] == "9"
        owners = {
            entry["manager"]: entry.get("fieldsV1")
            for entry in served.body["metadata"]["managedFields"]
        }
        # Forced: writer-v1 gave up spec.schedule (its now empty entry is dropped).
        assert "f:schedule" not in json.dumps(owners.get("writer-v1") or {})
        assert "f:minute" in json.dumps(owners["kubectl"])


async def test_a_conversion_webhook_behind_a_service_is_called_at_its_endpoints(
    api: RawAPI, namespace: str
) -> None:
    host = f"convert.{namespace}.svc"
    async with raw_converter(dns_names=(host,)) as webhook:
        base = f"/api/v1/namespaces/{namespace}"
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "convert"},
            "spec": {"ports": [{"name": "https", "port": 443, "targetPort": webhook.port}]},
        }
        endpoints = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": "convert"},
            "subsets": [
                {
                    "addresses": [{"ip": "127.0.0.1"}],
                    "ports": [{"name": "https", "port": webhook.port}],
                }
            ],
        }
        assert (await api.request("POST", f"{base}/services", service)).status == 201
        assert (await api.request("POST", f"{base}/endpoints", endpoints)).status == 201
        client_config = {
            "service": {"namespace": namespace, "name": "convert", "path": "/convert"},
            "caBundle": webhook.client_config["caBundle"],
        }
        crd = await install_crd(api, cronjob_crd(client_config, review_versions=("v1beta1",)))
        # Defaulted as upstream: the service port is 443.
        assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("s", "4 * * * *"))
        reply = await api.request("GET", cronjobs_path("v2", namespace, "s"))
        assert reply.status == 200, reply.body
        assert reply.body["spec"]["schedule"]["minute"] == "4"
        # The first supported conversionReviewVersions entry is the review's version.
        assert webhook.reviews[-1]["apiVersion"] == "apiextensions.k8s.io/v1beta1"

        await api.request("DELETE", f"{base}/endpoints/convert")
        reply = await api.request("GET", cronjobs_path("v2", namespace, "s"))
        await api.request("DELETE", f"{base}/services/convert")
        gone = await api.request("GET", cronjobs_path("v2", namespace, "s"))
    failed = f'conversion webhook for {GROUP}/v1, Kind=CronJob failed: Post "https://{host}:443'
    assert reply.status == 500
    assert reply.body["message"] == (
        f'{failed}/convert?timeout=30s": no endpoints available for service "convert"'
    )
    assert gone.body["message"] == f'{failed}/convert?timeout=30s": service "convert" not found'


async def test_webhooks_local_points_the_crd_at_the_operators_converter_while_it_runs(
    admission_cluster: BackgroundCluster, api: RawAPI, namespace: str
) -> None:
    operator = setpoint.Operator("cronjob-conversion")
    operator.conversion(CronJobV1, CronJobV2)
    await install_crd(api, cronjob_crd(None))
    async with run_operator(
        operator,
        kubeconfig=admission_cluster.kubeconfig_path,
        namespace=namespace,
        webhook_port=0,
        webhooks_local=True,
    ):
        crd = (await api.request("GET", CRD_PATH)).body
        conversion = crd["spec"]["conversion"]
        assert conversion["strategy"] == "Webhook"
        assert conversion["webhook"]["clientConfig"]["url"].startswith("https://127.0.0.1:")
        assert conversion["webhook"]["clientConfig"]["url"].endswith("/convert")
        assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
        await api.request("POST", cronjobs_path("v1", namespace), cronjob_v1("l", "*/5 3 * * *"))
        reply = await api.request("GET", cronjobs_path("v2", namespace, "l"))
        assert reply.status == 200, reply.body
        assert reply.body["spec"]["schedule"] == SCHEDULE_FIELDS
    # The operator is gone: the CRD has its own conversion back, reads keep working.
    crd = (await api.request("GET", CRD_PATH)).body
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert (await api.request("GET", cronjobs_path("v2", namespace, "l"))).status == 200


async def test_an_update_in_v2_takes_the_fields_it_changes_from_a_v1_manager(
    api: RawAPI, namespace: str
) -> None:
    async with raw_converter() as webhook:
        await install_crd(api, cronjob_crd(webhook.client_config))
        applied = await api.request(
            "PATCH",
            cronjobs_path("v1", namespace, "owned") + "?fieldManager=applier-v1",
            cronjob_v1("owned", "0 1 * * *"),
            content_type="application/apply-patch+yaml",
        )
        assert applied.status == 201, applied.body
        current = await api.request("GET", cronjobs_path("v2", namespace, "owned"))
        edited = {**current.body, "spec": {"schedule": {**SCHEDULE_FIELDS, "minute": "7"}}}
        reply = await api.request(
            "PUT", cronjobs_path("v2", namespace, "owned") + "?fieldManager=editor-v2", edited
        )
        assert reply.status == 200, reply.body
        managers = {e["manager"]: e for e in reply.body["metadata"]["managedFields"]}
        # The v2 update changed spec.schedule as v1 sees it: applier-v1 no longer owns it.
        assert "f:schedule" not in json.dumps(managers.get("applier-v1", {}).get("fieldsV1"))
        assert managers["editor-v2"]["apiVersion"] == f"{GROUP}/v2"
        # So applier-v1 applying its old value again now conflicts with editor-v2.
        again = await api.request(
            "PATCH",
            cronjobs_path("v1", namespace, "owned") + "?fieldManager=applier-v1",
            cronjob_v1("owned", "0 1 * * *"),
            content_type="application/apply-patch+yaml",
        )
        assert again.status == 409, again.body
        # (editor-v2 changed, and so owns, the minute and the hour, in v2 terms).
        assert again.body["message"] == (
            f'Apply failed with 2 conflicts: conflicts with "editor-v2" using {GROUP}/v2:\n'
            "- .spec.schedule.hour\n- .spec.schedule.minute"
        )
