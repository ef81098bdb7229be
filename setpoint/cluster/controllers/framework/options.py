"""What the controllers of one local cluster are told at start (flags of ``cluster serve``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from setpoint.api.clock import SYSTEM_CLOCK, Clock

if TYPE_CHECKING:
    from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import (
        ServiceAccountTokens,
    )
    from setpoint.cluster.apiserver.http.serving_certificate import CertificateAuthority
    from setpoint.cluster.controllers.kubelet.sandbox import Isolation

#: The one node of a default local cluster.
DEFAULT_NODE_NAME: Final = "setpoint-node"


@dataclass(slots=True)
class ControllerOptions:
    """Options shared by every controller, the scheduler and the kubelet."""

    clock: Clock = field(default_factory=lambda: SYSTEM_CLOCK)
    #: The clock of failure back-offs and "again at once" retries: real time, even when
    #: ``clock`` is a FakeClock (tests of the back-off itself pass a FakeClock here too).
    retry_clock: Clock = field(default_factory=lambda: SYSTEM_CLOCK)
    #: Node objects to create: ``setpoint-node`` for 1, ``setpoint-node-0..N-1`` for more.
    nodes: int = 1
    #: Run containers' commands as local processes (``--run-pods``) instead of simulating.
    run_pods: bool = False
    #: Seconds a simulated container with a command that ends by itself runs before it exits 0.
    simulated_run_seconds: float = 1.0
    #: Working directories of ``--run-pods`` pods ('' for a temporary directory).
    pods_dir: str = ""
    #: How ``--run-pods`` confines pods (None: detect at start); unavailable isolation (or
    #: ``--run-pods=unsafe``) runs them as the server's user.
    isolation: Isolation | None = None
    #: ``--run-pods=unsafe``: run pods unconfined even where isolation is available.
    run_pods_unconfined: bool = False
    #: Host paths a sandbox must never show (the data directory).
    protected_paths: tuple[str, ...] = ()
    #: The kubelet's ``--container-log-max-size`` (bytes) and ``--container-log-max-files``.
    container_log_max_size: int = 10 * 1024 * 1024
    container_log_max_files: int = 5
    #: Where pods reach the API server (``KUBERNETES_SERVICE_HOST``/``PORT``): the HTTPS
    #: listener, filled in by the controller manager.
    api_host: str = "127.0.0.1"
    api_port: Callable[[], int] = field(default=lambda: 0)
    #: Signs legacy token Secrets' tokens (the controller manager sets the server's).
    service_account_tokens: ServiceAccountTokens | None = None
    #: The certificate authority clients trust, as PEM (``kube-root-ca.crt``); the manager
    #: fills it in from the server's HTTPS certificate. Empty: none published.
    root_ca_pem: bytes = b""
    #: Signs approved CertificateSigningRequests (``--cluster-signing-cert-file``): the
    #: manager sets the server's CA when that CA is the one client certificates chain to.
    signing_authority: CertificateAuthority | None = None
    #: Where the host-path provisioner makes volumes ('' for ``$TMPDIR/setpoint-volumes``).
    volumes_dir: str = ""
    #: Finished pods kept before the pod garbage collector deletes the oldest (0: no limit).
    terminated_pod_gc_threshold: int = 12500

    def node_names(self) -> list[str]:
        """The names of the nodes this cluster has."""
        if self.nodes <= 1:
            return [DEFAULT_NODE_NAME] if self.nodes == 1 else []
        return [f"{DEFAULT_NODE_NAME}-{index}" for index in range(self.nodes)]
