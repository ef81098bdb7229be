"""A watch whose connection goes silent (a proxy that stops forwarding, nothing closed): the
reflector notices within its inactivity timeout, reports the failure, and recovers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from setpoint.cache import CacheOptions
from setpoint.cache.reflector import ReflectorOptions
from setpoint.client.client import Client
from setpoint.testing import BackgroundCluster, run_operator
from tests.faults.stalling_proxy import StallingProxy
from tests.faults.support import parent, wait_converged, write_operator

pytestmark = pytest.mark.slow

IDLE_TIMEOUT = 4.0


def proxied_kubeconfig(original: Path, port: int, target: Path) -> Path:
    config = yaml.safe_load(original.read_text())
    for cluster in config["clusters"]:
        server = urlsplit(cluster["cluster"]["server"])
        cluster["cluster"]["server"] = f"{server.scheme}://127.0.0.1:{port}"
    target.write_text(yaml.safe_dump(config))
    return target


async def test_a_silently_stalled_watch_is_noticed_and_recovered(
    tmp_path: Path, local_cluster: BackgroundCluster, client: Client, namespace: str
) -> None:
    upstream = urlsplit(local_cluster.https_url).port
    assert upstream is not None
    proxy = StallingProxy(upstream)
    await proxy.start()
    kubeconfig = proxied_kubeconfig(
        local_cluster.kubeconfig_path, proxy.port, tmp_path / "proxied.yaml"
    )
    options = CacheOptions(reflector=ReflectorOptions(idle_timeout=IDLE_TIMEOUT))
    expected = {"w1": "1"}
    try:
        async with run_operator(
            str(write_operator(tmp_path)),
            kubeconfig=kubeconfig,
            namespace=namespace,
            cache_options=options,
            cache_unready_after=1.0,
        ) as operator:
            await client.create(parent("w1", "1"), namespace=namespace)
            await wait_converged(client, namespace, expected)
            (informer,) = operator.cache.informers
            (reflector,) = informer.reflectors
            watches = reflector.watches

            loop = asyncio.get_running_loop()
            proxy.stall()
            stalled = loop.time()
            async with asyncio.timeout(IDLE_TIMEOUT * 10):
                while reflector.failing_since is None:  # noqa: ASYNC110 - polls the reflector
                    await asyncio.sleep(0.1)
            noticed = loop.time() - stalled
            assert reflector.watches > watches  # the silent watch was cut and tried again
            assert "no answer to the watch request" in str(reflector.last_error)
            await asyncio.sleep(1.5)
            outcome = await operator.readyz.run_one("informers")
            assert not outcome.healthy and "cannot list/watch" in outcome.reason

            # What changed meanwhile must reach the operator once the path works again.
            expected.update({"w1": "2", "w2": "5"})
            current = await client.get("v1", "ConfigMap", "w1", namespace=namespace)
            current["data"]["size"] = "2"
            await client.update(current)
            await client.create(parent("w2", "5"), namespace=namespace)
            proxy.resume()
            resumed = loop.time()
            await wait_converged(client, namespace, expected)
            recovered = loop.time() - resumed
            assert reflector.failing_since is None
            assert (await operator.readyz.run_one("informers")).healthy
    finally:
        await proxy.stop()
    print(
        f"FIGURES stalled watch noticed {noticed:.1f}s after the stall (idle timeout "
        f"{IDLE_TIMEOUT:g}s); converged {recovered:.1f}s after the path came back"
    )


async def test_the_idle_timeout_is_an_option_of_setpoint_run(
    local_cluster: BackgroundCluster,
) -> None:
    from setpoint.manager import Manager

    manager = Manager()
    manager.configure(kubeconfig=str(local_cluster.kubeconfig_path), watch_idle_timeout=7)
    await manager.connect()
    try:
        assert manager.cache.options.reflector.idle_timeout == 7
    finally:
        await manager.close_client()
