"""Loading kubeconfig files: merging, contexts, credentials, TLS settings and their errors."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from setpoint.client import (
    BasicAuth,
    Client,
    ClientConfig,
    ConfigError,
    ConnectionFailed,
    StaticToken,
    TokenFile,
    kubeconfig,
)
from setpoint.client.exec_credential import ExecCredentialPlugin

from .conftest import ScriptedServer, TlsMaterial, TlsServer, json_response


def load_kubeconfig(*args: Any, **kwargs: Any) -> ClientConfig:
    """The loader as ``ClientConfig.from_kubeconfig`` calls it, with ``environ`` for tests."""
    return kubeconfig.load_kubeconfig(*args, build=ClientConfig, **kwargs)


def write_kubeconfig(
    path: Path,
    *,
    clusters: dict[str, dict[str, Any]] | None = None,
    users: dict[str, dict[str, Any]] | None = None,
    contexts: dict[str, dict[str, Any]] | None = None,
    current: str | None = None,
) -> Path:
    document: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": k, "cluster": v} for k, v in (clusters or {}).items()],
        "users": [{"name": k, "user": v} for k, v in (users or {}).items()],
        "contexts": [{"name": k, "context": v} for k, v in (contexts or {}).items()],
    }
    if current:
        document["current-context"] = current
    path.write_text(yaml.safe_dump(document))
    return path


def simple(path: Path, **user: Any) -> Path:
    return write_kubeconfig(
        path,
        clusters={"c": {"server": "https://example.test:6443"}},
        users={"u": user or {"token": "abc"}},
        contexts={"ctx": {"cluster": "c", "user": "u", "namespace": "team-a"}},
        current="ctx",
    )


async def test_token_namespace_and_server(tmp_path: Path) -> None:
    config = load_kubeconfig(simple(tmp_path / "config"))
    assert config.server == "https://example.test:6443"
    assert config.namespace == "team-a"
    assert config.context == "ctx"
    assert isinstance(config.credentials, StaticToken)
    assert (await config.credentials.get()).authorization == "Bearer abc"


def test_namespace_defaults_to_default(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": "http://h:1"}},
        contexts={"ctx": {"cluster": "c"}},
        current="ctx",
    )
    config = load_kubeconfig(path)
    assert config.namespace == "default"
    assert config.credentials is None


def test_kubeconfig_env_merges_first_wins(tmp_path: Path) -> None:
    first = write_kubeconfig(
        tmp_path / "one",
        clusters={"shared": {"server": "https://first:1"}},
        contexts={"a": {"cluster": "shared", "namespace": "from-first"}},
        current="a",
    )
    second = write_kubeconfig(
        tmp_path / "two",
        clusters={"shared": {"server": "https://second:2"}, "own": {"server": "https://own:3"}},
        contexts={"a": {"cluster": "own"}, "b": {"cluster": "own", "namespace": "nb"}},
        current="b",
    )
    missing = tmp_path / "missing"
    environ = {"KUBECONFIG": f"{missing}:{first}:{second}"}
    config = load_kubeconfig(environ=environ)
    assert config.server == "https://first:1"  # first file's cluster and current-context win
    assert config.namespace == "from-first"
    other = load_kubeconfig(context="b", environ=environ)
    assert other.server == "https://own:3"
    assert other.namespace == "nb"


def test_relative_paths_are_relative_to_their_file(tmp_path: Path) -> None:
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "token").write_text("from-file\n")
    path = write_kubeconfig(
        sub / "config",
        clusters={"c": {"server": "https://h:1", "certificate-authority": "ca.crt"}},
        users={"u": {"tokenFile": "token"}},
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    config = load_kubeconfig(path)
    assert config.ca_file == str(sub / "ca.crt")
    assert isinstance(config.credentials, TokenFile)
    assert config.credentials.path == sub / "token"


def test_tls_fields_are_read(tmp_path: Path) -> None:
    ca = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={
            "c": {
                "server": "https://10.0.0.1:6443",
                "certificate-authority-data": ca,
                "tls-server-name": "kubernetes",
                "proxy-url": "http://proxy:3128",
                "disable-compression": True,
            }
        },
        users={"u": {"username": "admin", "password": "secret"}},
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    config = load_kubeconfig(path)
    assert config.ca_data == b"-----BEGIN CERTIFICATE-----\n"
    assert config.tls_server_name == "kubernetes"
    assert config.proxy_url == "http://proxy:3128"
    assert config.disable_compression
    assert isinstance(config.credentials, BasicAuth)


@pytest.mark.parametrize(
    ("user", "cluster", "message"),
    [
        ({"token": "t"}, {}, "server: required"),
        ({"auth-provider": {"name": "oidc"}}, {"server": "https://h:1"}, "from_official_client"),
        ({"client-certificate": "c.crt"}, {"server": "https://h:1"}, "client-key"),
        (
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x"}},
            {"server": "https://h:1"},
            "interactiveMode: required",
        ),
        (
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}},
            {"server": "https://h:1"},
            "is not supported",
        ),
        ({"token": "t"}, {"server": "ftp://h"}, "not a valid URL"),
        ({"token": "t"}, {"server": "https://h:1", "proxy-url": "socks5://p:1"}, "proxy-url"),
    ],
)
def test_bad_kubeconfigs_name_the_problem(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any], message: str
) -> None:
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": cluster},
        users={"u": user},
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    with pytest.raises(ConfigError, match=message):
        load_kubeconfig(path)


def test_unknown_context_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r'context "nope" does not exist.*contexts: ctx'):
        load_kubeconfig(simple(tmp_path / "config"), context="nope")


def test_missing_explicit_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_kubeconfig(tmp_path / "absent")
    bad = tmp_path / "bad"
    bad.write_text("clusters: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_kubeconfig(bad)


def test_no_current_context(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": "https://h:1"}},
        contexts={"x": {"cluster": "c"}},
    )
    with pytest.raises(ConfigError, match="current-context is not set"):
        load_kubeconfig(path)


def test_exec_command_with_a_slash_is_relative_to_the_file(tmp_path: Path) -> None:
    path = simple(
        tmp_path / "config",
        exec={
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "./bin/plugin",
            "interactiveMode": "Never",
        },
    )
    config = load_kubeconfig(path)
    assert isinstance(config.credentials, ExecCredentialPlugin)
    assert config.credentials.config.command == str(tmp_path / "bin" / "plugin")


async def test_mutual_tls_with_certificate_data(
    tmp_path: Path, tls_material: TlsMaterial, tls_server: TlsServer
) -> None:
    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    path = write_kubeconfig(
        tmp_path / "config",
        clusters={
            "c": {
                "server": f"https://localhost:{tls_server.port}",
                "certificate-authority-data": b64(tls_material.ca_crt),
            }
        },
        users={
            "u": {
                "client-certificate-data": b64(tls_material.client_crt),
                "client-key-data": b64(tls_material.client_key),
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    async with await Client.from_kubeconfig(str(path)) as client:
        ns = await client.get("v1", "Namespace", "kube-system")
    assert ns["metadata"]["name"] == "kube-system"
    assert tls_server.client_subjects[-1] == "client"


async def test_tls_server_name_and_certificate_files(
    tls_material: TlsMaterial, tls_server: TlsServer
) -> None:
    # The certificate is for "localhost" only; 127.0.0.1 verifies thanks to tls-server-name.
    config = ClientConfig(
        server=f"https://127.0.0.1:{tls_server.port}",
        ca_file=str(tls_material.ca_crt),
        client_cert_file=str(tls_material.client_crt),
        client_key_file=str(tls_material.client_key),
        tls_server_name="localhost",
    )
    async with await Client.from_config(config) as client:
        assert (await client.get("v1", "Namespace", "a"))["metadata"]["name"] == "a"


async def test_wrong_server_name_fails_without_retries(
    tls_material: TlsMaterial, tls_server: TlsServer
) -> None:
    config = ClientConfig(
        server=f"https://127.0.0.1:{tls_server.port}",
        ca_file=str(tls_material.ca_crt),
        client_cert_file=str(tls_material.client_crt),
        client_key_file=str(tls_material.client_key),
    )
    async with await Client.from_config(config) as client:
        with pytest.raises(ConnectionFailed, match=r"127\.0\.0\.1"):
            await client.server_version()


async def test_insecure_skip_tls_verify(tls_material: TlsMaterial, tls_server: TlsServer) -> None:
    config = ClientConfig(
        server=f"https://127.0.0.1:{tls_server.port}",
        insecure_skip_tls_verify=True,
        client_cert_file=str(tls_material.client_crt),
        client_key_file=str(tls_material.client_key),
    )
    async with await Client.from_config(config) as client:
        assert (await client.get("v1", "Namespace", "b"))["metadata"]["name"] == "b"


def test_unreadable_ca_is_a_config_error(tmp_path: Path) -> None:
    config = ClientConfig(server="https://h:1", ca_file=str(tmp_path / "absent.crt"))
    with pytest.raises(ConfigError, match=r"absent\.crt"):
        config.ssl_context()


async def test_impersonation_headers_are_sent(
    tmp_path: Path, scripted_server: ScriptedServer
) -> None:
    seen: list[list[tuple[str, str]]] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append([(k, v) for k, v in request.headers.items() if k.startswith("Impersonate")])
        return json_response({"major": "1", "minor": "32"})

    scripted_server.on("GET", "/version", handler)
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": scripted_server.url}},
        users={
            "u": {
                "token": "t",
                "as": "jane",
                "as-groups": ["devs", "ops"],
                "as-user-extra": {"scopes/x": ["a"]},
            }
        },
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    async with await Client.from_kubeconfig(path) as client:
        await client.server_version()
    assert seen == [
        [
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "devs"),
            ("Impersonate-Group", "ops"),
            ("Impersonate-Extra-scopes%2Fx", "a"),
        ]
    ]


def test_insecure_with_a_ca_is_rejected(tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={
            "c": {
                "server": "https://h:1",
                "insecure-skip-tls-verify": True,
                "certificate-authority-data": "Zm9v",
            }
        },
        contexts={"x": {"cluster": "c"}},
        current="x",
    )
    with pytest.raises(ConfigError, match="insecure-skip-tls-verify"):
        load_kubeconfig(path)


async def test_disable_compression_asks_for_identity(scripted_server: ScriptedServer) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Accept-Encoding", ""))
        return json_response({"major": "1"})

    scripted_server.on("GET", "/version", handler)
    for disable in (False, True):
        config = ClientConfig(server=scripted_server.url, disable_compression=disable)
        async with await Client.from_config(config) as client:
            await client.server_version()
    assert "gzip" in seen[0]
    assert seen[1] == "identity"


async def test_unusable_ca_fails_when_the_client_opens(tmp_path: Path) -> None:
    bad = tmp_path / "ca.crt"
    bad.write_text("not a certificate")
    config = ClientConfig(server="https://h:1", ca_file=str(bad))
    with pytest.raises(ConfigError, match=r"ca\.crt"):
        await Client.from_config(config)


def test_config_repr_never_shows_key_material() -> None:
    config = ClientConfig(
        server="https://h:1",
        ca_data=b"CA-PEM",
        client_cert_data=b"CERT-PEM",
        client_key_data=b"SECRET-KEY-PEM",
        credentials=StaticToken("SECRET-TOKEN"),
    )
    text = repr(config)
    assert "https://h:1" in text
    for secret in ("SECRET-KEY-PEM", "SECRET-TOKEN", "CERT-PEM", "CA-PEM"):
        assert secret not in text


async def test_a_closed_client_says_so(scripted_server: ScriptedServer) -> None:
    client = await Client.from_config(ClientConfig(server=scripted_server.url))
    await client.close()
    with pytest.raises(RuntimeError, match="closed"):
        await client.server_version()
