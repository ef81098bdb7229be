"""``LocalCluster``: the local control plane in-process, for tests and tools.

::

    async with LocalCluster(in_memory=True) as cluster:
        cluster.url, cluster.token, cluster.kubeconfig_path

It runs in the caller's event loop. ``url`` is plain HTTP; the kubeconfig points at a second,
HTTPS listener with a certificate from the cluster's CA (its data is in the kubeconfig), because
kubectl sends bearer tokens only over TLS. Both need the token (or another credential).

With ``data_dir`` the objects live in SQLite there and survive restarts, and so does the
cluster's identity (token, certificate authority and serving certificate, ports: see
:mod:`setpoint.cluster.identity`), so clients of the old server trust and reach the new one;
otherwise they are kept in memory and each start is a new cluster. Without ``kubeconfig_path``
a kubeconfig is written to a temporary directory
that is removed on exit.

The built-in controllers, scheduler and (simulated) kubelet run with the server unless
``controllers=False``; ``nodes``, ``run_pods``, ``clock`` and ``simulated_run_seconds`` (how long
a simulated container whose command ends by itself runs) configure them. ``run_pods=True`` (or
``"isolated"``) runs containers' commands in sandboxes; where this machine cannot sandbox them
only ``system:masters`` may create pods, unless ``run_pods="unsafe"`` (see
:mod:`setpoint.cluster.controllers.kubelet.sandbox`). ``container_log_max_size`` (bytes) and
``container_log_max_files`` rotate their logs. ``clock`` is also the
API server's, for the times of service account tokens.

With the simulated kubelet (controllers on, no ``run_pods``) the cluster serves kwok's
``Stage`` kind (a CRD it installs, :mod:`setpoint.cluster.simulation`): Stages for pods make
the kubelet move pods through them on the cluster clock.

``authorization`` is ``"RBAC"`` (the default: Roles and bindings are enforced, the admin token
is in ``system:masters`` and may do anything) or ``"AlwaysAllow"``. ``faults`` (a SPEC, off by
default) injects errors, resets and latency into API requests; tests change them at run time
through :attr:`LocalCluster.faults`.

Clients may also log in with a client certificate: signed by the cluster's CA (see
:meth:`LocalCluster.write_user_kubeconfig`), or by the CA of ``client_ca`` (a PEM file) instead;
or as a ServiceAccount (:meth:`LocalCluster.write_service_account_kubeconfig`).

``audit_log`` (a file path; off by default) makes the server append one ``audit.k8s.io/v1``
Event per request to it, at ``audit_level`` ``"Metadata"`` (default) or ``"Request"``, except
requests by members of ``audit_omit_groups`` (:mod:`setpoint.cluster.apiserver.audit`).
``audit_feed_size`` (default 10,000; 0: off) is how many recent writes, with their diffs, the
server keeps for ``GET /debug/setpoint/audit`` (:mod:`~.apiserver.audit.audit_feed`).
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import socket
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Final

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.cluster.apiserver.audit.audit_feed import DEFAULT_AUDIT_FEED_SIZE
from setpoint.cluster.apiserver.auth.authentication.token_request import (
    DEFAULT_EXPIRATION_SECONDS,
    create_token,
)
from setpoint.cluster.apiserver.auth.authorization.unconfined_pods import UnconfinedPodsGate
from setpoint.cluster.apiserver.http.fault_injection import FaultInjector, parse_fault_spec
from setpoint.cluster.apiserver.registry.object_operations import WriteOptions
from setpoint.cluster.apiserver.server import APIServer
from setpoint.cluster.apiserver.storage import MemoryStorage, Storage
from setpoint.cluster.apiserver.storage.sqlite import SqliteStorage
from setpoint.cluster.controllers.framework.manager import ControllerManager
from setpoint.cluster.controllers.framework.options import ControllerOptions
from setpoint.cluster.controllers.kubelet.log_files import DEFAULT_MAX_FILES, DEFAULT_MAX_SIZE
from setpoint.cluster.controllers.kubelet.sandbox import Isolation, detect_isolation
from setpoint.cluster.data_directory import private_data_dir
from setpoint.cluster.identity import (
    ClusterIdentity,
    IdentityError,
    load_or_create_identity,
    remember_ports,
)
from setpoint.cluster.kubeconfig_file import write_kubeconfig, write_user_kubeconfig
from setpoint.cluster.simulation.stage_crd import CRD_NAME as STAGE_CRD_NAME
from setpoint.cluster.simulation.stage_crd import stage_crd
from setpoint.cluster.simulation.stages import GROUP as STAGE_GROUP
from setpoint.cluster.simulation.stages import KIND as STAGE_KIND
from setpoint.cluster.simulation.stages import stage_field_errors

log = logging.getLogger(__name__)

#: The SQLite file inside ``--data-dir``.
DATA_FILE_NAME: Final = "setpoint.db"


def open_storage(data_dir: str | Path | None) -> Storage:
    """SQLite storage under ``data_dir``, or in-memory storage when it is None.

    In memory, revisions start at the wall clock in microseconds: above every revision an
    earlier in-memory server could have handed out (unless it averaged a million writes a
    second), so a client resuming from one is told its revision is too old and relists.
    """
    if data_dir is None:
        return MemoryStorage(start_revision=time.time_ns() // 1000)
    return SqliteStorage(private_data_dir(data_dir) / DATA_FILE_NAME)


def _port_free(port: int) -> bool:
    """Whether ``port`` on 127.0.0.1 can be listened on now (0 is never "free": no record)."""
    if port <= 0:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def _install_stage_crd(server: APIServer) -> None:
    """Serve kwok's ``Stage`` kind (once: a data directory keeps it) for the simulated kubelet."""
    crds = server.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    assert crds is not None
    if server.storage.get(crds.storage_key(None, STAGE_CRD_NAME)) is None:
        await server.operations.create(crds, None, stage_crd(), WriteOptions())


class LocalCluster:
    """An API server on 127.0.0.1 with a kubeconfig, as an async context manager."""

    def __init__(
        self,
        *,
        in_memory: bool = True,
        data_dir: str | Path | None = None,
        port: int = 0,
        https_port: int | None = 0,
        kubeconfig_path: str | Path | None = None,
        token: str | None = None,
        controllers: bool = True,
        nodes: int = 1,
        run_pods: bool | str = False,
        container_log_max_size: int = DEFAULT_MAX_SIZE,
        container_log_max_files: int = DEFAULT_MAX_FILES,
        clock: Clock = SYSTEM_CLOCK,
        simulated_run_seconds: float = 1.0,
        authorization: str = "RBAC",
        faults: str | None = None,
        client_ca: str | Path | None = None,
        audit_log: str | Path | None = None,
        audit_level: str = "Metadata",
        audit_omit_groups: Sequence[str] = (),
        audit_feed_size: int = DEFAULT_AUDIT_FEED_SIZE,
    ) -> None:
        if faults is not None:
            parse_fault_spec(faults)  # a bad SPEC fails here, before anything starts
        self._faults_spec = faults
        if data_dir is not None and in_memory and data_dir:
            in_memory = False
        self._data_dir = None if in_memory else data_dir
        if not in_memory and data_dir is None:
            raise ValueError("data_dir: required unless in_memory=True")
        self._port = port
        self._https_port = https_port
        self._token = token
        self._authorization = authorization
        self._clock = clock
        self._client_ca = Path(client_ca).expanduser() if client_ca is not None else None
        self._audit = (audit_log, audit_level, tuple(audit_omit_groups))
        self._audit_feed_size = audit_feed_size
        self._requested_kubeconfig = kubeconfig_path
        self._temporary_dir: str | None = None
        if run_pods not in (False, True, "isolated", "unsafe"):
            raise ValueError(f"run_pods: {run_pods!r} is not False, True, 'isolated' or 'unsafe'")
        self._run_pods = run_pods
        #: How --run-pods confines pods here (None: pods are simulated, or run unsafe).
        self.pod_isolation: Isolation | None = None
        self._controller_options = (
            ControllerOptions(
                clock=clock,
                nodes=nodes,
                run_pods=bool(run_pods),
                run_pods_unconfined=run_pods == "unsafe",
                simulated_run_seconds=simulated_run_seconds,
                container_log_max_size=container_log_max_size,
                container_log_max_files=container_log_max_files,
                protected_paths=(str(data_dir),) if data_dir else (),
            )
            if controllers
            else None
        )
        self.server: APIServer | None = None
        #: The running controllers (None when started with ``controllers=False``).
        self.controllers: ControllerManager | None = None
        self.storage: Storage | None = None
        self.kubeconfig_path: Path = Path()

    @property
    def clock(self) -> Clock:
        """The cluster clock (a ``FakeClock`` moves only when told to; see
        :mod:`setpoint.cluster.apiserver.http.clock_endpoint`)."""
        return self._clock

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return self._running().url

    @property
    def https_url(self) -> str:
        """``https://127.0.0.1:PORT``: the TLS listener the kubeconfig points at."""
        return self._running().https_url

    @property
    def certificate_authority_pem(self) -> bytes | None:
        """The PEM certificate clients of :attr:`https_url` trust (None without HTTPS)."""
        certificate = self._running().certificate
        return certificate.trusted_pem if certificate is not None else None

    @property
    def faults(self) -> FaultInjector:
        """Fault injection (off by default): ``cluster.faults.set("503=0.2;seed=1")``,
        ``cluster.faults.clear()``, ``cluster.faults.total()``; see
        :mod:`setpoint.cluster.apiserver.http.fault_injection`."""
        return self._running().faults

    @property
    def token(self) -> str:
        """The bearer token clients must send."""
        return self._running().token

    def _running(self) -> APIServer:
        if self.server is None:
            raise RuntimeError("the local cluster is not running; use 'async with LocalCluster()'")
        return self.server

    async def start(self) -> None:
        """Open the storage, start the server, then write the kubeconfig."""
        identity: ClusterIdentity | None = None
        if self._data_dir is not None:
            identity = load_or_create_identity(self._data_dir)
        client_ca_pem = self._read_client_ca()
        self.storage = open_storage(self._data_dir)
        port, https_port = self._port, self._https_port
        if identity is not None:
            # Back on the ports of the last run when they are free: clients keep their URL.
            if port == 0 and _port_free(identity.port):
                port = identity.port
            if https_port == 0 and _port_free(identity.https_port):
                https_port = identity.https_port
        self.server = APIServer(
            self.storage,
            port=port,
            https_port=https_port,
            token=self._token or (identity.token if identity else None),
            certificate=identity.certificate if identity else None,
            authorization=self._authorization,
            authority=identity.authority if identity else None,
            client_ca_pem=client_ca_pem,
            service_account_key_pem=identity.service_account_key_pem if identity else None,
            clock=self._clock,
            audit_log=self._audit[0],
            audit_level=self._audit[1],
            audit_omit_groups=self._audit[2],
            audit_feed_size=self._audit_feed_size,
        )
        self.server.custom_resource_checks[(STAGE_GROUP, STAGE_KIND)] = stage_field_errors
        if self._faults_spec:
            self.server.faults.set(self._faults_spec)
        options = self._controller_options
        if options is not None and options.run_pods and not options.run_pods_unconfined:
            self.pod_isolation = await asyncio.to_thread(detect_isolation)
            options.isolation = self.pod_isolation
            if not self.pod_isolation.available:
                log.warning(
                    "--run-pods: pods cannot be isolated on this machine (%s); only "
                    "system:masters may create pods (--run-pods=unsafe lets everyone)",
                    self.pod_isolation.reason,
                )
                self.server.unconfined_pods = UnconfinedPodsGate(self.pod_isolation.reason)
        try:
            await self.server.start()
            if self._data_dir is not None:
                remember_ports(self._data_dir, self.server.port, self.server.https_port)
            if self._controller_options is not None and not self._controller_options.run_pods:
                await _install_stage_crd(self.server)
            if self._controller_options is not None:
                self.controllers = ControllerManager(self.server, self._controller_options)
                await self.controllers.start()
            if self._requested_kubeconfig is None:
                self._temporary_dir = tempfile.mkdtemp(prefix="setpoint-cluster-")
                path: str | Path = Path(self._temporary_dir) / "kubeconfig"
            else:
                path = self._requested_kubeconfig
            server = self.server
            if server.certificate is not None:
                self.kubeconfig_path = write_kubeconfig(
                    path, server.https_url, server.token, server.certificate.trusted_pem
                )
            else:
                self.kubeconfig_path = write_kubeconfig(path, server.url, server.token)
        except BaseException:
            await self.stop()
            raise

    def _read_client_ca(self) -> bytes | None:
        if self._client_ca is None:
            return None
        try:
            pem = self._client_ca.read_bytes()
        except OSError as error:
            raise IdentityError(
                f"cannot read the client CA {self._client_ca}: {error.strerror or error}"
            ) from error
        if b"-----BEGIN CERTIFICATE-----" not in pem:
            raise IdentityError(f"the client CA {self._client_ca} holds no PEM certificate")
        return pem

    def write_user_kubeconfig(
        self, path: str | Path, user: str, groups: tuple[str, ...] = ()
    ) -> Path:
        """Write a kubeconfig that logs in as ``user`` in ``groups`` with a client certificate.

        The certificate is signed by the cluster's CA; ``ValueError`` when the cluster checks
        client certificates against another CA (``client_ca``).
        """
        server = self._running()
        if server.certificate is None:
            raise ValueError("client certificates need the HTTPS listener (https_port=None)")
        issued = server.issue_client_certificate(user, groups)
        return write_user_kubeconfig(
            path,
            server.https_url,
            server.certificate.trusted_pem,
            issued.certificate_pem,
            issued.key_pem,
        )

    async def write_service_account_kubeconfig(
        self,
        path: str | Path,
        namespace: str,
        name: str,
        *,
        expiration_seconds: int = DEFAULT_EXPIRATION_SECONDS,
    ) -> Path:
        """Write a kubeconfig that logs in as ServiceAccount NAMESPACE/NAME.

        The token is issued as the TokenRequest API issues it (``APIError`` 404 when the
        ServiceAccount does not exist; at least 600 seconds), for the API server's audience.
        """
        server = self._running()
        tokens = server.authenticator.service_accounts
        assert tokens is not None
        answer = create_token(
            {"spec": {"expirationSeconds": expiration_seconds}},
            namespace,
            name,
            tokens,
            tokens.lookup,
        )
        token = answer["status"]["token"]
        if server.certificate is not None:
            return write_kubeconfig(path, server.https_url, token, server.certificate.trusted_pem)
        return write_kubeconfig(path, server.url, token)

    async def create_namespace(self, name: str) -> None:
        """Create namespace ``name`` (409 APIError if it exists) and, with the controllers,
        wait until they have set it up as kube-controller-manager does (its ``default``
        ServiceAccount and ``kube-root-ca.crt`` ConfigMap exist)."""
        await self._running().create_namespace(name)
        if self.controllers is not None:
            await self.controllers.namespace_set_up(name)

    def flush_audit_log(self) -> None:
        """Write the audit log's buffered lines to its file now (no-op without one)."""
        if self.server is not None and self.server.audit is not None:
            self.server.audit.flush()

    async def stop(self) -> None:
        """Stop the controllers and the server, close the storage, remove temporary files."""
        if self.controllers is not None:
            await self.controllers.stop()
            self.controllers = None
        if self.server is not None:
            await self.server.stop()
        if self.storage is not None:
            await self.storage.close()
        self.server = None
        self.storage = None
        if self._temporary_dir is not None:
            shutil.rmtree(self._temporary_dir, ignore_errors=True)
            self._temporary_dir = None

    async def __aenter__(self) -> LocalCluster:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()
