"""Exec credential plugins (a tiny Python script prints an ExecCredential) and in-cluster config."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from setpoint.client import Client, ClientConfig, ConfigError, TokenFile
from setpoint.client.exec_credential import ExecConfig, ExecCredentialPlugin

from .conftest import ScriptedServer, TlsMaterial, TlsServer, json_response, status_body
from .test_kubeconfig import load_kubeconfig, write_kubeconfig

V1 = "client.authentication.k8s.io/v1"
V1BETA1 = "client.authentication.k8s.io/v1beta1"

PLUGIN = """#!{python}
import json, os, sys, pathlib
state = pathlib.Path(os.environ["PLUGIN_STATE"])
runs = int(state.read_text()) + 1 if state.exists() else 1
state.write_text(str(runs))
pathlib.Path(os.environ["PLUGIN_STATE"] + ".info").write_text(os.environ["KUBERNETES_EXEC_INFO"])
if os.environ.get("PLUGIN_FAIL"):
    print("cannot log in: no network", file=sys.stderr)
    sys.exit(3)
status = {{"token": "token-%d" % runs}}
if os.environ.get("PLUGIN_EXPIRES"):
    status["expirationTimestamp"] = os.environ["PLUGIN_EXPIRES"]
if os.environ.get("PLUGIN_CERT"):
    status = {{"clientCertificateData": pathlib.Path(os.environ["PLUGIN_CERT"]).read_text(),
              "clientKeyData": pathlib.Path(os.environ["PLUGIN_KEY"]).read_text()}}
print(json.dumps({{"apiVersion": os.environ.get("PLUGIN_API", "{api}"), "kind": "ExecCredential",
                  "status": status}}))
"""


def make_plugin(tmp_path: Path) -> Path:
    script = tmp_path / "plugin.py"
    script.write_text(PLUGIN.format(python=sys.executable, api=V1))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def plugin(
    tmp_path: Path, *, api: str = V1, cluster: dict[str, Any] | None = None, **env: str
) -> ExecCredentialPlugin:
    stanza: dict[str, Any] = {
        "apiVersion": api,
        "command": str(make_plugin(tmp_path)),
        "interactiveMode": "Never",
        "env": [{"name": "PLUGIN_STATE", "value": str(tmp_path / "runs")}]
        + [{"name": k, "value": v} for k, v in env.items()],
    }
    if cluster is not None:
        stanza["provideClusterInfo"] = True
    config = ExecConfig.from_kubeconfig(stanza, where="users[u].exec", cluster_info=cluster or {})
    return ExecCredentialPlugin(config, stdin_is_terminal=False)


def rfc3339(delta: datetime.timedelta) -> str:
    when = datetime.datetime.now(datetime.UTC) + delta
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_token_is_cached_until_it_expires(tmp_path: Path) -> None:
    source = plugin(tmp_path, PLUGIN_EXPIRES=rfc3339(datetime.timedelta(hours=1)))
    assert (await source.get()).authorization == "Bearer token-1"
    assert (await source.get()).authorization == "Bearer token-1"
    assert source.runs == 1


async def test_expired_credential_reruns_the_plugin(tmp_path: Path) -> None:
    # Already (almost) expired: each use must run the plugin again.
    source = plugin(tmp_path, PLUGIN_EXPIRES=rfc3339(datetime.timedelta(seconds=1)))
    assert (await source.get()).authorization == "Bearer token-1"
    assert (await source.get()).authorization == "Bearer token-2"
    assert source.runs == 2


async def test_exec_info_carries_interactive_and_cluster(tmp_path: Path) -> None:
    cluster = {"server": "https://h:1", "config": {"audience": "x"}}
    source = plugin(tmp_path, api=V1BETA1, PLUGIN_API=V1BETA1, cluster=cluster)
    await source.get()
    info = json.loads((tmp_path / "runs.info").read_text())
    assert info == {
        "apiVersion": V1BETA1,
        "kind": "ExecCredential",
        "spec": {"interactive": False, "cluster": cluster},
    }


async def test_cluster_info_comes_from_the_kubeconfig(tmp_path: Path) -> None:
    script = make_plugin(tmp_path)
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={
            "c": {
                "server": "https://h:1",
                "tls-server-name": "k8s",
                "extensions": [
                    {"name": "client.authentication.k8s.io/exec", "extension": {"k": "v"}}
                ],
            }
        },
        users={
            "u": {
                "exec": {
                    "apiVersion": V1,
                    "command": str(script),
                    "interactiveMode": "IfAvailable",
                    "provideClusterInfo": True,
                    "env": [{"name": "PLUGIN_STATE", "value": str(tmp_path / "runs")}],
                }
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    config = load_kubeconfig(path)
    assert config.credentials is not None
    await config.credentials.get()
    info = json.loads((tmp_path / "runs.info").read_text())
    assert info["spec"]["cluster"] == {
        "server": "https://h:1",
        "tls-server-name": "k8s",
        "config": {"k": "v"},
    }


async def test_failing_plugin_reports_its_stderr(tmp_path: Path) -> None:
    source = plugin(tmp_path, PLUGIN_FAIL="1")
    with pytest.raises(ConfigError, match="exit code 3: cannot log in: no network"):
        await source.get()


async def test_plugin_answering_another_version_is_rejected(tmp_path: Path) -> None:
    source = plugin(tmp_path, PLUGIN_API=V1BETA1)
    with pytest.raises(ConfigError, match="plugin returned version"):
        await source.get()


async def test_missing_command_names_the_command(tmp_path: Path) -> None:
    config = ExecConfig(
        command=str(tmp_path / "nope"),
        api_version=V1,
        interactive_mode="Never",
        install_hint="install nope from example.test",
    )
    with pytest.raises(ConfigError, match="install nope"):
        await ExecCredentialPlugin(config).get()


async def test_always_interactive_without_a_terminal_fails(tmp_path: Path) -> None:
    config = ExecConfig(command="true", api_version=V1, interactive_mode="Always")
    with pytest.raises(ConfigError, match="not a terminal"):
        await ExecCredentialPlugin(config, stdin_is_terminal=False).get()


async def test_401_reruns_the_plugin(tmp_path: Path, scripted_server: ScriptedServer) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") == "Bearer token-1":
            return json_response(status_body(401, "Unauthorized", "Unauthorized"), 401)
        return json_response({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})

    scripted_server.on("GET", "/api/v1/namespaces/n", handler)
    source = plugin(tmp_path)  # no expiry: only the 401 can trigger a re-run
    config = ClientConfig(server=scripted_server.url, credentials=source)
    async with await Client.from_config(config) as client:
        await client.get("v1", "Namespace", "n")
    assert seen == ["Bearer token-1", "Bearer token-2"]
    assert source.runs == 2


async def test_plugin_client_certificate_is_used_for_tls(
    tmp_path: Path, tls_material: TlsMaterial, tls_server: TlsServer
) -> None:
    source = plugin(
        tmp_path, PLUGIN_CERT=str(tls_material.client_crt), PLUGIN_KEY=str(tls_material.client_key)
    )
    config = ClientConfig(
        server=f"https://localhost:{tls_server.port}",
        ca_file=str(tls_material.ca_crt),
        credentials=source,
    )
    async with await Client.from_config(config) as client:
        ns = await client.get("v1", "Namespace", "x")
    assert ns["auth"] == ""  # a certificate, no token
    assert tls_server.client_subjects[-1] == "client"


def service_account(tmp_path: Path, tls_material: TlsMaterial | None = None) -> Path:
    directory = tmp_path / "serviceaccount"
    directory.mkdir()
    (directory / "token").write_text("sa-token-1")
    (directory / "namespace").write_text("operators\n")
    if tls_material is not None:
        (directory / "ca.crt").write_bytes(tls_material.ca_crt.read_bytes())
    return directory


def test_in_cluster_reads_env_and_files(tmp_path: Path) -> None:
    directory = service_account(tmp_path)
    config = ClientConfig.in_cluster(
        service_account_dir=directory,
        environ={"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"},
    )
    assert config.server == "https://[fd00::1]:443"
    assert config.namespace == "operators"
    assert isinstance(config.credentials, TokenFile)
    assert config.ca_file is None  # no ca.crt in this directory


def test_in_cluster_outside_a_pod(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_HOST"):
        ClientConfig.in_cluster(service_account_dir=tmp_path, environ={})
    with pytest.raises(ConfigError, match="no token file"):
        ClientConfig.in_cluster(
            service_account_dir=tmp_path,
            environ={"KUBERNETES_SERVICE_HOST": "h", "KUBERNETES_SERVICE_PORT": "1"},
        )


async def test_in_cluster_token_is_reread_after_rotation(
    tmp_path: Path, tls_material: TlsMaterial, tls_server: TlsServer
) -> None:
    directory = service_account(tmp_path, tls_material)
    config = ClientConfig.in_cluster(
        service_account_dir=directory,
        environ={
            "KUBERNETES_SERVICE_HOST": "localhost",
            "KUBERNETES_SERVICE_PORT": str(tls_server.port),
        },
    )
    config.client_cert_file = str(tls_material.client_crt)  # our test server wants mutual TLS
    config.client_key_file = str(tls_material.client_key)
    assert isinstance(config.credentials, TokenFile)
    config.credentials.reread_seconds = 0  # re-read on every request (default: every 60 s)
    async with await Client.from_config(config) as client:
        first = await client.get("v1", "Namespace", "a")
        (directory / "token").write_text("sa-token-2")
        second = await client.get("v1", "Namespace", "a")
    assert first["auth"] == "Bearer sa-token-1"
    assert second["auth"] == "Bearer sa-token-2"


async def test_token_file_keeps_the_last_token_while_missing(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("t1")
    source = TokenFile(token, reread_seconds=0)
    assert (await source.get()).authorization == "Bearer t1"
    os.unlink(token)
    assert (await source.get()).authorization == "Bearer t1"
    with pytest.raises(ConfigError, match="cannot read token file"):
        await TokenFile(token).get()


async def test_concurrent_401s_run_the_plugin_once(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    async def handler(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") == "Bearer token-1":
            return json_response(status_body(401, "Unauthorized", "Unauthorized"), 401)
        return json_response({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})

    scripted_server.on("GET", "/api/v1/namespaces/n", handler)
    source = plugin(tmp_path)
    await source.get()  # every request starts with token-1
    config = ClientConfig(server=scripted_server.url, credentials=source)
    async with await Client.from_config(config) as client:
        await client.mapper.resource_for("v1", "Namespace")
        results = await asyncio.gather(*(client.get("v1", "Namespace", "n") for _ in range(5)))
    assert all(r["metadata"]["name"] == "n" for r in results)
    assert source.runs == 2
