"""The audit log (``--audit-log``): one audit.k8s.io/v1 Event per request, as kube-apiserver's."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster.local_cluster import LocalCluster
from setpoint.generate.rbac import Rule
from setpoint.generate.rbac_suggest import missing_rules, suggest
from tests.cluster.kubectl_runner import Kubectl
from tests.cluster.raw_api import raw_api
from tests.cluster.serve_process import ServeProcess, connection_of

SA = "system:serviceaccount:default:robot"
AS_SA = {"Impersonate-User": SA}


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_metadata_events_name_user_verb_object_status_and_decision(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with (
        LocalCluster(controllers=False, audit_log=log) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        created = await api.request(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
        )
        denied = await api.request("GET", "/api/v1/namespaces/default/secrets/s", headers=AS_SA)
        probe = await api.request("GET", "/healthz")
        unauthenticated = await api.request(
            "GET", "/api/v1/pods", headers={"Authorization": "Bearer wrong"}
        )
        cluster.flush_audit_log()
        logged = events(log)
    assert [created.status, denied.status, probe.status, unauthenticated.status] == [
        201, 403, 200, 401,
    ]  # fmt: skip
    assert "Audit-Id" not in probe.headers
    assert len(logged) == 3, "health probes are not logged"
    create, get, failed = logged
    assert create["auditID"] == created.headers["Audit-Id"]
    assert get["auditID"] == denied.headers["Audit-Id"] != create["auditID"]
    assert {key: create[key] for key in ("kind", "apiVersion", "level", "stage", "verb")} == {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "stage": "ResponseComplete",
        "verb": "create",
    }
    assert create["requestURI"] == "/api/v1/namespaces/default/configmaps"
    assert create["user"]["username"] == "setpoint-admin"
    assert "system:masters" in create["user"]["groups"]
    assert "impersonatedUser" not in create
    assert create["objectRef"] == {
        "resource": "configmaps",
        "namespace": "default",
        "apiVersion": "v1",
    }
    assert create["responseStatus"] == {"metadata": {}, "code": 201}
    assert create["annotations"]["authorization.k8s.io/decision"] == "allow"
    assert create["sourceIPs"] == ["127.0.0.1"]
    assert create["userAgent"]
    assert "requestObject" not in create
    assert create["requestReceivedTimestamp"] <= create["stageTimestamp"]
    assert create["stageTimestamp"].endswith("Z")
    # Impersonated: the caller is "user", whom it acted as "impersonatedUser".
    assert get["user"]["username"] == "setpoint-admin"
    assert get["impersonatedUser"]["username"] == SA
    assert "system:serviceaccounts:default" in get["impersonatedUser"]["groups"]
    assert (get["verb"], get["objectRef"]["resource"], get["objectRef"]["name"]) == (
        "get", "secrets", "s",
    )  # fmt: skip
    assert get["annotations"]["authorization.k8s.io/decision"] == "forbid"
    assert get["responseStatus"]["code"] == 403
    assert get["responseStatus"]["reason"] == "Forbidden"
    assert 'cannot get resource "secrets"' in get["responseStatus"]["message"]
    # A failed authentication has no user and no authorization decision.
    assert failed["user"] == {}
    assert failed["responseStatus"]["code"] == 401
    assert "annotations" not in failed


async def test_request_level_adds_the_request_object(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    async with (
        LocalCluster(controllers=False, audit_log=log, audit_level="Request") as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        await api.request("POST", "/api/v1/namespaces/default/configmaps", config_map)
        await api.request(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/c",
            {"data": {"k": "v"}},
            content_type="application/merge-patch+json",
        )
    create, patch = events(log)  # stopping flushes the log
    assert create["level"] == "Request"
    assert create["requestObject"] == config_map
    assert (patch["verb"], patch["objectRef"]["name"]) == ("patch", "c")
    assert patch["requestObject"] == {"data": {"k": "v"}}


async def test_a_watch_is_logged_when_it_starts_and_when_it_ends(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with LocalCluster(controllers=False, audit_log=log) as cluster:
        async with raw_api(cluster.url, cluster.token) as api:
            path = f"{cluster.url}/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1"
            async with api.session.get(path) as response:
                assert response.status == 200
                cluster.flush_audit_log()
                (started,) = events(log)
                assert started["stage"] == "ResponseStarted"
                assert started["auditID"] == response.headers["Audit-Id"]
                assert (started["verb"], started["objectRef"]["resource"]) == ("watch", "pods")
                await response.read()  # the server ends it after timeoutSeconds
            await asyncio.sleep(0.1)
        cluster.flush_audit_log()
    stages = [event["stage"] for event in events(log)]
    assert stages[:2] == ["ResponseStarted", "ResponseComplete"]


def test_kubectl_as_a_service_account_is_audited_and_suggest_reads_it(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"

    async def scenario() -> None:
        async with LocalCluster(controllers=False, audit_log=log) as cluster:
            kubectl = Kubectl(cluster.kubeconfig_path, tmp_path / "cache")
            await asyncio.to_thread(
                kubectl.run, "get", "configmaps", "-n", "default", "--as", SA, check=False
            )
            await asyncio.to_thread(kubectl.run, "get", "namespaces", "--as", SA, check=False)

    asyncio.run(scenario())
    suggestion = suggest(events(log), SA)
    assert missing_rules([Rule("", ("namespaces",), ("list",))], suggestion) == [
        ("", "configmaps", "list")
    ]
    assert [rule.resources for rule in suggestion.namespaced_rules["default"]] == [("configmaps",)]


@pytest.mark.slow
def test_serve_audit_log_option(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    server = ServeProcess(
        tmp_path / "kubeconfig", "--in-memory", "--audit-log", str(log), "--audit-level", "Request"
    )
    try:
        config = server.wait_for_kubeconfig()
        kubectl = Kubectl(tmp_path / "kubeconfig", tmp_path / "cache")
        kubectl.run("create", "configmap", "x", "-n", "default", "--from-literal=a=b")
        connection_of(config)
    finally:
        assert server.terminate(signal.SIGTERM) == 0
    (create,) = [event for event in events(log) if event["verb"] == "create"]
    assert create["requestObject"]["data"] == {"a": "b"}
    assert create["userAgent"].startswith("kubectl")


async def test_a_watch_the_client_leaves_is_logged_complete(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with LocalCluster(controllers=False, audit_log=log) as cluster:
        async with raw_api(cluster.url, cluster.token) as api:
            path = f"{cluster.url}/api/v1/namespaces/default/configmaps?watch=true"
            async with api.session.get(path) as response:
                assert response.status == 200
            # The client hung up without reading to the end.
        stages: list[str] = []
        for _ in range(100):
            cluster.flush_audit_log()
            stages = [event["stage"] for event in events(log)]
            if "ResponseComplete" in stages:
                break
            await asyncio.sleep(0.1)
    assert stages == ["ResponseStarted", "ResponseComplete"]


async def test_requests_of_omitted_groups_are_left_out(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with (
        LocalCluster(
            controllers=False, audit_log=log, audit_omit_groups=["system:masters"]
        ) as cluster,
        raw_api(cluster.url, cluster.token) as api,
    ):
        await api.request("GET", "/api/v1/namespaces/default/configmaps")
        await api.request("GET", "/api/v1/namespaces/default/configmaps", headers=AS_SA)
    (only,) = events(log)
    assert only["impersonatedUser"]["username"] == SA


def test_an_audit_log_that_cannot_be_opened_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "audit.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "setpoint", "cluster", "serve", "--in-memory",
         "--kubeconfig", str(tmp_path / "kc"), "--audit-log", str(missing)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: cannot open the audit log {missing}: No such file or directory (does its "
        "directory exist, and may this user write there?)"
    )
    assert "Traceback" not in done.stderr
