"""``--run-pods`` isolation: a pod sees only what it is given.

A ServiceAccount allowed only to create pods and read their logs runs a pod that tries the
server's data directory, the admin token, the CA key, another pod's files and the user's home,
for reading and for writing; none is there. The service-account files of the upstream
``kube-api-access-*`` projected volume are, with ``KUBERNETES_SERVICE_HOST``/``PORT``, and the
token works as that ServiceAccount. Where isolation is unavailable only admins may create pods.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster import local_cluster
from setpoint.cluster.controllers.kubelet.sandbox import Isolation, detect_isolation
from setpoint.cluster.local_cluster import LocalCluster
from tests.cluster.controllers.waiting import eventually
from tests.cluster.raw_api import RawAPI, raw_api

PODS = "/api/v1/namespaces/default/pods"
ISOLATION = detect_isolation()
needs_isolation = pytest.mark.skipif(
    not ISOLATION.available, reason=f"no pod isolation here: {ISOLATION.reason}"
)
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str, script: str, **spec: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "busybox", "command": ["sh", "-c", script]}
    if "mounts" in spec:
        container["volumeMounts"] = spec.pop("mounts")
    return {
        "metadata": {"name": name},
        "spec": {"restartPolicy": "Never", "containers": [container], **spec},
    }


async def finished(api: RawAPI, name: str) -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        body = (await api.request("GET", f"{PODS}/{name}")).body
        status = body.get("status") or {}
        return status if status.get("phase") in ("Succeeded", "Failed") else None

    return await eventually(probe, f"pod {name} finished")


async def service_account_api(
    admin: RawAPI, cluster: LocalCluster, rules: list[dict[str, Any]]
) -> AsyncIterator[RawAPI]:
    await admin.request(
        "POST", "/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "runner"}}
    )
    rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default"
    await admin.request("POST", f"{rbac}/roles", {"metadata": {"name": "runner"}, "rules": rules})
    binding = {
        "metadata": {"name": "runner"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "runner"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": "default"}],
    }
    await admin.request("POST", f"{rbac}/rolebindings", binding)
    answer = await admin.request(
        "POST", "/api/v1/namespaces/default/serviceaccounts/runner/token", {"spec": {}}
    )
    async with raw_api(cluster.url, answer.body["status"]["token"]) as api:
        yield api


RUNNER_RULES = [{"apiGroups": [""], "resources": ["pods", "pods/log"], "verbs": ["create", "get"]}]


@needs_isolation
async def test_a_service_accounts_pod_cannot_reach_the_data_dir_credentials_or_other_pods(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with (
        LocalCluster(data_dir=data, in_memory=False, run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as admin,
    ):
        other = pod("other", "echo s3cret > private.txt; sleep 300")
        await admin.request("POST", PODS, other)
        kubelet: Any = cluster.server.pod_runtime if cluster.server else None

        async def other_file() -> Path | None:
            uid = (await admin.request("GET", f"{PODS}/other")).body["metadata"]["uid"]
            log_path = kubelet.container_log_path(uid, "app")
            found = log_path.parents[2] / "work" / "private.txt" if log_path else None
            return found if found is not None and found.exists() else None

        other_private = await eventually(other_file, "the other pod's file")
        home = Path.home()
        targets = [
            data / "admin.token",
            data / "pki" / "ca.key",
            data,
            other_private,
            other_private.parent,
            home,
        ]
        script = "; ".join(
            [f"cat {t} >/dev/null 2>&1 && echo READ {t}" for t in targets]
            + [f"ls {t} >/dev/null 2>&1 && echo LISTED {t}" for t in targets]
            + [f"touch {data}/planted 2>/dev/null && echo WROTE {data}"]
            + [f"(echo x >> {other_private}) 2>/dev/null && echo WROTE {other_private}"]
            + ["echo done"]
        )
        async for api in service_account_api(admin, cluster, RUNNER_RULES):
            assert (await api.request("POST", PODS, pod("probe", script))).status == 201
            await finished(api, "probe")
            output = (await api.request("GET", f"{PODS}/probe/log")).raw.decode()

        assert output == "done\n"
        assert not (data / "planted").exists()
        assert other_private.read_text() == "s3cret\n"


@needs_isolation
async def test_the_projected_service_account_volume_is_mounted_and_its_token_works() -> None:
    volume = {
        "name": "kube-api-access-x7k2p",
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {
                    "configMap": {
                        "name": "kube-root-ca.crt",
                        "items": [{"key": "ca.crt", "path": "ca.crt"}],
                    }
                },
                {
                    "downwardAPI": {
                        "items": [
                            {
                                "path": "namespace",
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                            }
                        ]
                    }
                },
            ],
        },
    }
    mount = {"name": volume["name"], "mountPath": SA_DIR, "readOnly": True}
    # The in-cluster configuration every client uses: the token, the CA and the service env.
    script = (
        f"cat {SA_DIR}/namespace; echo; head -1 {SA_DIR}/ca.crt; "
        f"echo $KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT; "
        f'curl -s -o /dev/null -w "%{{http_code}} " --cacert {SA_DIR}/ca.crt '
        f'-H "Authorization: Bearer $(cat {SA_DIR}/token)" '
        "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"
        "/api/v1/namespaces/default/pods/incluster; "
        f'curl -s -o /dev/null -w "%{{http_code}}" --cacert {SA_DIR}/ca.crt '
        f'-H "Authorization: Bearer $(cat {SA_DIR}/token)" '
        "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"
        "/api/v1/namespaces/default/secrets; "
        f"echo; touch {SA_DIR}/x 2>/dev/null || echo read-only"
    )
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as admin,
    ):
        async for api in service_account_api(admin, cluster, RUNNER_RULES):
            spec = {"serviceAccountName": "runner", "volumes": [volume], "mounts": [mount]}
            assert (await api.request("POST", PODS, pod("incluster", script, **spec))).status == 201
            status = await finished(api, "incluster")
            output = (await api.request("GET", f"{PODS}/incluster/log")).raw.decode()

        lines = output.splitlines()
        assert lines[0] == "default"
        assert lines[1] == "-----BEGIN CERTIFICATE-----"
        assert lines[2] == f"127.0.0.1:{cluster.server.https_port if cluster.server else ''}"
        assert lines[3] == "200 403"  # the ServiceAccount's own RBAC: pods yes, secrets no
        assert lines[4] == "read-only"
        assert status["phase"] == "Succeeded"


async def test_without_isolation_only_admins_may_create_pods_unless_unsafe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    unavailable = Isolation(False, "bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(local_cluster, "detect_isolation", lambda: unavailable)
    async with (
        LocalCluster(run_pods=True) as cluster,
        raw_api(cluster.url, cluster.token) as admin,
    ):
        async for api in service_account_api(admin, cluster, RUNNER_RULES):
            refused = await api.request("POST", PODS, pod("mine", "true"))
        allowed = await admin.request("POST", PODS, pod("admins", "true"))

    assert refused.status == 403
    assert refused.body["reason"] == "Forbidden"
    assert refused.body["message"].startswith(
        "pods is forbidden: --run-pods cannot isolate pods on this machine "
        "(bubblewrap (bwrap) is not installed)"
    )
    assert "--run-pods=unsafe" in refused.body["message"]
    assert allowed.status == 201

    async with (
        LocalCluster(run_pods="unsafe") as cluster,
        raw_api(cluster.url, cluster.token) as admin,
    ):
        async for api in service_account_api(admin, cluster, RUNNER_RULES):
            assert (await api.request("POST", PODS, pod("mine", "true"))).status == 201


def test_pods_run_as_nobody_when_the_server_is_root() -> None:
    if not ISOLATION.available:
        pytest.skip(ISOLATION.reason)
    expected = 65534 if os.geteuid() == 0 else None
    assert ISOLATION.uid == expected


@needs_isolation
async def test_a_sandbox_can_be_entered_as_soon_as_it_is_started() -> None:
    """An exec (or probe, or hook) right after the start enters the finished sandbox: bwrap
    reports its child before the child has entered the user namespace mapping ``nobody``, and
    ``nsenter`` then failed with ``setgid failed: Invalid argument`` (seen as a first liveness
    probe failing with that message on a loaded machine; here most starts of 20 hit it)."""
    from setpoint.api.clock import SYSTEM_CLOCK
    from setpoint.cluster.controllers.kubelet.process_pod import ProcessPod

    # As the kubelet's pods directory: the sandbox's user must be able to reach its workdir.
    root = Path(tempfile.mkdtemp(prefix="setpoint-pods-"))
    os.chmod(root, 0o711)
    spec = {"metadata": {"uid": "u", "name": "p", "namespace": "default"}, "spec": {}}
    pod = ProcessPod(
        spec, root / "p", "10.0.0.1", "10.0.0.1", SYSTEM_CLOCK, dict, lambda: None,
        isolation=ISOLATION,
    )  # fmt: skip
    env = {"PATH": "/usr/bin:/bin"}
    failures: list[str] = []
    for _ in range(20):
        sandbox, init = await pod.spawn(["sleep", "30"], env, [])
        try:
            entered, _ = await pod.spawn(["true"], env, [], inside=init)
            _, err = await entered.communicate()
            if entered.returncode != 0:
                failures.append(err.decode().strip())
        finally:
            with contextlib.suppress(ProcessLookupError):
                sandbox.kill()
            await sandbox.wait()
    shutil.rmtree(root, ignore_errors=True)
    assert failures == []
