"""A local cluster on its own thread and event loop, usable from any test or synchronous code.

Tests with function-scoped event loops (pytest-asyncio's default) cannot share a server that
lives in one of those loops; this one lives in a loop of its own, so one server per session
serves every test, sync or async.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Final, TypeVar

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.cluster.apiserver.http.fault_injection import FaultInjector
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.local_cluster import LocalCluster

T = TypeVar("T")

#: How long starting the server may take before the test session gives up.
START_TIMEOUT_SECONDS: Final = 30.0
STOP_TIMEOUT_SECONDS: Final = 10.0


class BackgroundCluster:
    """A :class:`LocalCluster` served from a daemon thread; ``start()``/``stop()`` are sync."""

    def __init__(
        self,
        *,
        in_memory: bool = True,
        data_dir: str | Path | None = None,
        kubeconfig_path: str | Path | None = None,
        controllers: bool = True,
        nodes: int = 1,
        run_pods: bool | str = False,
        clock: Clock = SYSTEM_CLOCK,
        simulated_run_seconds: float = 1.0,
        authorization: str = "RBAC",
        faults: str | None = None,
        client_ca: str | Path | None = None,
        audit_log: str | Path | None = None,
        audit_level: str = "Metadata",
        audit_omit_groups: Sequence[str] = (),
    ) -> None:
        self._options: dict[str, Any] = {
            "faults": faults,
            "client_ca": client_ca,
            "in_memory": in_memory,
            "data_dir": data_dir,
            "kubeconfig_path": kubeconfig_path,
            "controllers": controllers,
            "nodes": nodes,
            "run_pods": run_pods,
            "clock": clock,
            "simulated_run_seconds": simulated_run_seconds,
            "authorization": authorization,
            "audit_log": audit_log,
            "audit_level": audit_level,
            "audit_omit_groups": tuple(audit_omit_groups),
        }
        #: The audit log file (None: not kept); see :meth:`flush_audit_log`.
        self.audit_log_path = Path(audit_log) if audit_log is not None else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.cluster: LocalCluster | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self._cluster().url

    @property
    def https_url(self) -> str:
        """``https://127.0.0.1:PORT``: the TLS listener the kubeconfig points at."""
        return self._cluster().https_url

    @property
    def faults(self) -> FaultInjector:
        """The server's fault injection: ``faults.set(...)`` / ``clear()`` from any thread."""
        return self._cluster().faults

    @property
    def token(self) -> str:
        """The bearer token."""
        return self._cluster().token

    @property
    def kubeconfig_path(self) -> Path:
        """The kubeconfig file (cluster, user and context named ``setpoint``)."""
        return self._cluster().kubeconfig_path

    def _cluster(self) -> LocalCluster:
        if self.cluster is None:
            raise RuntimeError("the background cluster is not running")
        return self.cluster

    def start(self) -> BackgroundCluster:
        """Start the thread and wait until the server answers."""
        self._thread = threading.Thread(
            target=self._run, name="setpoint-local-cluster", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_SECONDS):
            raise TimeoutError("the local cluster did not start in time")
        if self._error is not None:
            raise RuntimeError("the local cluster failed to start") from self._error
        return self

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:
            self._error = exc
            self._ready.set()
        finally:
            loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with LocalCluster(**self._options) as cluster:
            self.cluster = cluster
            self._ready.set()
            await self._stop.wait()
        self.cluster = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` in the server's loop and return its result (from another thread)."""
        if self._loop is None:
            raise RuntimeError("the background cluster is not running")
        future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result()

    def create_namespace(self, name: str) -> None:
        """Create namespace ``name`` in the running server; with the controllers, return once
        its ``default`` ServiceAccount and ``kube-root-ca.crt`` ConfigMap exist."""
        self.run(self._cluster().create_namespace(name))

    def delete_namespace(self, name: str) -> None:
        """Delete namespace ``name`` (and its content) in the running server."""
        self.run(self._server().delete_namespace(name))

    def write_user_kubeconfig(
        self, path: str | Path, user: str, groups: tuple[str, ...] = ()
    ) -> Path:
        """A kubeconfig logging in as ``user`` in ``groups`` with a client certificate."""
        return self._cluster().write_user_kubeconfig(path, user, groups)

    def write_service_account_kubeconfig(
        self, path: str | Path, namespace: str, name: str, *, expiration_seconds: int = 3600
    ) -> Path:
        """A kubeconfig logging in as ServiceAccount NAMESPACE/NAME with a fresh token."""
        cluster = self._cluster()
        return self.run(
            cluster.write_service_account_kubeconfig(
                path, namespace, name, expiration_seconds=expiration_seconds
            )
        )

    def _server(self) -> APIServer:
        server = self._cluster().server
        if server is None:
            raise RuntimeError("the background cluster is not running")
        return server

    def flush_audit_log(self) -> None:
        """Write the audit log's buffered lines to its file now (call before reading it)."""
        cluster = self._cluster()

        async def flush() -> None:
            cluster.flush_audit_log()

        self.run(flush())

    def stop(self) -> None:
        """Stop the server and join the thread."""
        if self._loop is not None and self._stop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT_SECONDS)
            self._thread = None

    def __enter__(self) -> BackgroundCluster:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
