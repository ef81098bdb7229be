"""proxy-url, login through the official client's loader, choosing config from the environment."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from aiohttp import web

from setpoint.client import Client, ClientConfig, ConfigError

from .conftest import ScriptedServer, json_response
from .test_kubeconfig import write_kubeconfig


async def test_requests_go_through_the_proxy(scripted_server: ScriptedServer) -> None:
    seen: list[str] = []

    async def proxy(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers["Host"])
        return json_response({"major": "1", "minor": "32"})

    scripted_server.on("GET", "/version", proxy)
    config = ClientConfig(server="http://apiserver.invalid:6443", proxy_url=scripted_server.url)
    async with await Client.from_config(config) as client:
        assert (await client.server_version())["minor"] == "32"
    assert seen == ["apiserver.invalid:6443"]


@pytest.mark.skipif(
    importlib.util.find_spec("kubernetes") is None, reason="the official client is not installed"
)
async def test_login_through_the_official_client(
    scripted_server: ScriptedServer, tmp_path: Path
) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization", ""))
        return json_response({"major": "1", "minor": "32"})

    scripted_server.on("GET", "/version", handler)
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": scripted_server.url}},
        users={"u": {"token": "official-token"}},
        contexts={"x": {"cluster": "c", "user": "u"}},
        current="x",
    )
    config = await ClientConfig.from_official_client(str(path))
    assert config.server == scripted_server.url
    async with await Client.from_config(config) as client:
        await client.server_version()
    assert seen == ["Bearer official-token"]


async def test_official_client_errors_become_config_errors(tmp_path: Path) -> None:
    if importlib.util.find_spec("kubernetes") is None:
        pytest.skip("the official client is not installed")
    with pytest.raises(ConfigError, match="official client"):
        await ClientConfig.from_official_client(str(tmp_path / "absent"))


async def test_from_environment_prefers_kubeconfig_outside_pods(
    scripted_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_kubeconfig(
        tmp_path / "config",
        clusters={"c": {"server": scripted_server.url}},
        contexts={"x": {"cluster": "c", "namespace": "envns"}},
        current="x",
    )
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    async with await Client.from_environment() as client:
        assert client.default_namespace == "envns"


async def test_official_client_token_is_refreshed_through_its_hook() -> None:
    from setpoint.client.official_client_login import OfficialClientToken

    class FakeConfiguration:
        """The attributes the official Configuration exposes after load_kube_config."""

        def __init__(self) -> None:
            self.api_key: dict[str, str] = {"BearerToken": "Bearer first"}
            self.api_key_prefix: dict[str, str] = {}
            self.refreshes = 0

        def refresh_api_key_hook(self, configuration: FakeConfiguration) -> None:
            configuration.refreshes += 1
            if configuration.refreshes > 1:
                configuration.api_key["BearerToken"] = "Bearer second"

    source = OfficialClientToken(FakeConfiguration())
    assert (await source.get()).authorization == "Bearer first"
    assert (await source.get()).authorization == "Bearer second"
    assert source.invalidate()
