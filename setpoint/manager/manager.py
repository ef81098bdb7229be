"""The manager: one client, one shared cache, and every controller of a process, run together.

Start order (controller-runtime's): the metrics and probe servers, the cache and the runnables
that do not need leadership (so a standby replica keeps a warm cache and fails over fast), then
leader election, then the controllers once this process leads. Stop order is the reverse:
controllers first (they stop taking work and finish in-flight reconciles within the graceful
shutdown timeout), then the other runnables, the cache, the Lease (released so a successor takes
over at once), the servers and the client.

Losing leadership is fatal, as in controller-runtime: the controllers are stopped without grace
(a former leader must not act) and `run()` / `wait()` raise `LeaderElectionLost`; the process is
expected to exit non-zero and be restarted.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import time
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.cache import Cache, CacheOptions
from setpoint.cache.options import DEFAULT_SYNC_TIMEOUT_S
from setpoint.client.client import Client
from setpoint.client.cluster_clock import CLUSTER_CLOCK_PATH, ClusterFollowingClock
from setpoint.client.errors import ApiError, ClientError
from setpoint.controller.controller import Controller
from setpoint.controller.source import KindSource
from setpoint.controller.trace import ReconcileTrace
from setpoint.manager.cache_health import (
    DEFAULT_UNHEALTHY_AFTER_S,
    DEFAULT_UNREADY_AFTER_S,
    CacheHealth,
)
from setpoint.manager.health import HealthCheck, HealthChecks, build_probe_app
from setpoint.manager.http_endpoint import HttpEndpoint, parse_bind_address
from setpoint.manager.leader_election_defaults import (
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    default_identity,
)
from setpoint.manager.runnable import (
    ManagedRunnable,
    Runnable,
    RunnableFunction,
    cancel_and_wait,
)
from setpoint.manager.signals import ShutdownSignals

if TYPE_CHECKING:
    # Imported where used: an operator without leader election, Events or a metrics server
    # does not load them (setpoint run's start-up).
    from setpoint.controller.recorder import EventRecorder
    from setpoint.manager.leader_election import LeaderElectionConfig, LeaderElector
    from setpoint.webhook import Converter, WebhookServer
    from setpoint.webhook.configurations import WebhookDeclaration
    from setpoint.webhook.handlers import AdmissionHandler
    from setpoint.webhook.local_registration import LocalWebhookRegistration

__all__ = [
    "GRACEFUL_SHUTDOWN_TIMEOUT",
    "AddressInUse",
    "Manager",
    "ManagerError",
    "RunnableFailed",
]

log = logging.getLogger("setpoint.manager")

# controller-runtime's default: in-flight reconciles get this long to finish on shutdown; it fits
# inside Kubernetes' default 30 s terminationGracePeriodSeconds together with the lease release.
GRACEFUL_SHUTDOWN_TIMEOUT = 30.0
# Bounds the last steps of a shutdown (lease release, servers, client) so a dead API server
# cannot keep a terminating process alive.
CLEANUP_TIMEOUT = 5.0
#: What a stopping manager waits after closing its TLS client, for its connections to close.
TLS_CLOSE_GRACE_SECONDS = 0.05
#: The webhook server's port: kubebuilder's 9443; -1 turns the server off.
WEBHOOK_PORT = 9443
WEBHOOKS_OFF = -1


class ManagerError(Exception):
    """The manager was misconfigured or used in the wrong state."""


class AddressInUse(ManagerError, OSError):
    """A metrics or probe server's address is taken (an ``OSError`` too, as before)."""


class RunnableFailed(ManagerError):
    """A runnable (a controller, a server, ...) raised; the manager stopped because of it."""

    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(f"runnable {name} failed: {type(error).__name__}: {error}")
        self.name = name
        self.error = error


class Manager:
    """Runs a shared cache and controllers with leader election, probes, metrics and shutdown.

    Give it a `Client`, or let it make one when it connects (and close it when it stops):
    `kubeconfig`/`context` pick a kubeconfig; with neither, a pod uses its service account and
    anything else `$KUBECONFIG` or `~/.kube/config`. Add controllers with the controller
    `Builder(manager)` (or `add()` any runnable), then `await manager.run()`; or use
    `async with Manager(...) as manager:` to run it in the background of a block.
    Several managers can run in one process; each has its own client, cache and Lease.

    Options: `namespaces` limits the cache (default: all namespaces). `leader_election` with
    `leader_election_id` (the Lease name) and `leader_election_namespace` (default: the
    client's namespace); `lease_duration`/`renew_deadline`/`retry_period` (15/10/2 s);
    `leader_election_release_on_cancel` releases the Lease on a clean stop; `identity` defaults
    to hostname_uuid; `warm_up_caches` starts the controllers' informers before leadership.
    `metrics_bind_address` / `health_probe_bind_address` (`"0"` = off, `":8080"`,
    `"127.0.0.1:0"`). `graceful_shutdown_timeout`: seconds in-flight reconciles get on stop.
    `cache_sync_timeout`: how long `setpoint run` waits for the API server to answer and
    an `Operator`'s controllers wait for their caches (controller-runtime's 2 min).
    `cache_unready_after` / `cache_unhealthy_after` (30 s / 180 s): an informer that cannot
    list or watch that long fails `/readyz`, then `/healthz` (check `informers`).
    `clock` (default: the system clock) times the controllers' delayed re-runs and is what
    `impersonate_user`/`impersonate_groups` make the client it makes act as that user (as
    `kubectl --as`), e.g. `system:serviceaccount:NS:NAME` to run with that ServiceAccount's
    RBAC. `clock` (default: the system clock) times the controllers' delayed re-runs and is what
    `ctx.now()` reads; pass a `FakeClock` to test time-based logic without sleeping.
    `follow_cluster_clock` makes that clock follow a setpoint local cluster's clock (read
    over HTTP from `/debug/setpoint/clock`; `setpoint run --follow-cluster-clock`), so a
    cluster served with `--clock manual` moves the operator's time too.
    `trace_capacity`: keep a trace of the last that many reconcile steps (watch events,
    enqueues, reconciles, writes, Events) and serve it on the metrics endpoint under
    `/debug/setpoint/trace` (default None: off; see `setpoint.controller.trace`).
    """

    def __init__(
        self,
        client: Client | None = None,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        namespaces: Sequence[str] | None = None,
        leader_election: bool = False,
        leader_election_id: str | None = None,
        leader_election_namespace: str | None = None,
        lease_duration: float = LEASE_DURATION,
        renew_deadline: float = RENEW_DEADLINE,
        retry_period: float = RETRY_PERIOD,
        leader_election_release_on_cancel: bool = True,
        identity: str | None = None,
        metrics_bind_address: str = "0",
        health_probe_bind_address: str = "0",
        cache_options: CacheOptions | None = None,
        graceful_shutdown_timeout: float = GRACEFUL_SHUTDOWN_TIMEOUT,
        warm_up_caches: bool = False,
        clock: Clock = SYSTEM_CLOCK,
        cache_sync_timeout: float = DEFAULT_SYNC_TIMEOUT_S,
        cache_unready_after: float = DEFAULT_UNREADY_AFTER_S,
        cache_unhealthy_after: float = DEFAULT_UNHEALTHY_AFTER_S,
        impersonate_user: str | None = None,
        impersonate_groups: Sequence[str] = (),
        webhook_port: int = WEBHOOK_PORT,
        webhook_host: str = "",
        webhook_cert_dir: str | None = None,
        webhooks_local: bool = False,
        follow_cluster_clock: bool = False,
        trace_capacity: int | None = None,
    ) -> None:
        if client is not None and kubeconfig is not None:
            raise ManagerError("Manager: pass either client or kubeconfig, not both")
        if isinstance(namespaces, str):
            raise ManagerError(
                f"Manager: namespaces must be a list of names, got the string {namespaces!r}"
            )
        if graceful_shutdown_timeout < 0:
            raise ManagerError(
                f"Manager: graceful_shutdown_timeout must be >= 0 seconds, "
                f"got {graceful_shutdown_timeout}"
            )
        self._metrics_address = parse_bind_address(
            metrics_bind_address, option="metrics_bind_address"
        )
        self._probe_address = parse_bind_address(
            health_probe_bind_address, option="health_probe_bind_address"
        )
        self._client = client
        self._owns_client = client is None
        self._kubeconfig = kubeconfig
        self._context = context
        self._impersonation: tuple[str | None, tuple[str, ...]] = (None, ())
        self._set_impersonation(impersonate_user, impersonate_groups)
        self._namespaces = list(namespaces) if namespaces is not None else None
        self._cache_options = cache_options
        self._cache: Cache | None = None
        if client is not None:
            # No I/O: with a client given, the cache exists at once so that controllers can be
            # built (Builder(manager)) before the manager starts.
            self._cache = Cache(client, self._effective_cache_options())
        self.leader_election = leader_election
        self.leader_election_id = leader_election_id
        self.leader_election_namespace = leader_election_namespace
        self._timings = (lease_duration, renew_deadline, retry_period)
        self._release_on_cancel = leader_election_release_on_cancel
        self.identity = identity or default_identity()
        if leader_election:
            # Checked now, not at start, so a bad combination fails where it is written.
            self._check_leader_election_id()
            self._election_config(leader_election_id or "")
        self.graceful_shutdown_timeout = float(graceful_shutdown_timeout)
        self.warm_up_caches = warm_up_caches
        self.clock = clock
        if follow_cluster_clock:
            self._follow_cluster_clock(clock)
        self.cache_sync_timeout = _positive(cache_sync_timeout, "cache_sync_timeout")

        self.healthz = HealthChecks("healthz")
        self.readyz = HealthChecks("readyz")
        self.readyz.add("cache-sync", self._cache_synced_check)
        self.cache_health = CacheHealth(
            lambda: self._cache.informers if self._cache is not None else [],
            unready_after=_positive(cache_unready_after, "cache_unready_after"),
            unhealthy_after=_positive(cache_unhealthy_after, "cache_unhealthy_after"),
        )
        self.readyz.add("informers", self.cache_health.readiness_check)
        self._webhook_options = (webhook_host, _webhook_port(webhook_port), webhook_cert_dir)
        self._webhook_handlers: dict[str, AdmissionHandler] = {}
        self._webhook_converters: dict[str, Converter] = {}
        #: Make certificates and register the webhook configurations (url: 127.0.0.1) at
        #: start; remove them on stop (``setpoint run --webhooks-local``).
        self.webhooks_local = webhooks_local
        self._local_registration: LocalWebhookRegistration | None = None
        #: The admission webhook server (made at start when webhooks were added).
        self.webhook_server: WebhookServer | None = None
        self.healthz.add("informers", self.cache_health.liveness_check)
        self._health_monitor: asyncio.Task[None] | None = None
        self._runnables: list[ManagedRunnable] = []
        self._recorders: dict[str, EventRecorder] = {}
        self._endpoints: list[HttpEndpoint] = []
        self.metrics_endpoint: HttpEndpoint | None = None
        self.probe_endpoint: HttpEndpoint | None = None
        self.elector: LeaderElector | None = None
        self._election_task: asyncio.Task[None] | None = None
        self._elected = asyncio.Event()
        self._done = asyncio.Event()
        self._failure: BaseException | None = None
        self._started = False
        self._stopped = False
        self._cleaned_up = False
        self._abort_task: asyncio.Task[None] | None = None
        self._stop_lock = asyncio.Lock()
        #: The reconcile trace (None: off, the default).
        self.trace: ReconcileTrace | None = _trace(trace_capacity)
        #: Other managers of this process whose controllers this one's debug endpoints show.
        self.debug_peers: list[Manager] = []
        #: When `start()` was called (a Unix time; None before).
        self.start_time: float | None = None

    # ----- what the manager holds -----

    @property
    def client(self) -> Client:
        """The API client: writes go straight to the API server through it."""
        if self._client is None:
            raise ManagerError(
                "Manager.client: the manager makes its client when it connects; pass client= "
                "or `await manager.connect()` (start() and run() connect too) first"
            )
        return self._client

    @property
    def cache(self) -> Cache:
        """The shared informer cache: reads come from it."""
        if self._cache is None:
            raise ManagerError(
                "Manager.cache: the cache exists once the manager has a client; "
                "`await manager.connect()` (start() and run() connect too) first"
            )
        return self._cache

    @property
    def connected(self) -> bool:
        """True once the manager has its client and cache (after `connect()`)."""
        return self._cache is not None

    @property
    def started(self) -> bool:
        """True between `start()` and `stop()`."""
        return self._started and not self._stopped

    @property
    def is_leader(self) -> bool:
        """True while the leader-election runnables may run (once started, always so without
        leader election)."""
        return self._elected.is_set()

    async def wait_for_leadership(self) -> None:
        """Return once this manager leads (at once without leader election)."""
        await self._elected.wait()

    def add(
        self, runnable: Runnable | RunnableFunction, *, needs_leader_election: bool | None = None
    ) -> None:
        """Run `runnable` with the manager: an object with async `start()`/`stop()` or an
        async function (run until cancelled).

        It needs leader election unless it has `needs_leader_election = False` or the argument
        says so. Added to a running manager, it starts at once (or when leadership comes).
        """
        if self._stopped:
            raise ManagerError("Manager.add: the manager has stopped")
        if needs_leader_election is None:
            # Both spellings: setpoint's Controller says need_leader_election.
            needs_leader_election = bool(
                getattr(
                    runnable,
                    "needs_leader_election",
                    getattr(runnable, "need_leader_election", True),
                )
            )
        if self.trace is not None and isinstance(runnable, Controller) and not runnable.started:
            runnable.attach_trace(self.trace)
        managed = ManagedRunnable(runnable, needs_leader_election)
        self._runnables.append(managed)
        if self._started and (not needs_leader_election or self._elected.is_set()):
            managed.start(self._runnable_failed)

    def get_event_recorder(self, name: str) -> EventRecorder:
        """The event recorder reporting as `name` (e.g. `example.com/widget`), made once per
        name; it is flushed and stopped when the manager stops. Needs a client (see `client`)."""
        recorder = self._recorders.get(name)
        if recorder is None:
            from setpoint.controller.recorder import EventRecorder

            following = isinstance(self.clock, ClusterFollowingClock)
            recorder = EventRecorder(
                self.client, name, wall_clock=self.clock.now if following else None
            )
            recorder.trace = self.trace
            self._recorders[name] = recorder
        return recorder

    def add_webhook(self, path: str, handler: AdmissionHandler) -> None:
        """Serve an admission ``handler`` at ``path`` on the webhook server (port 9443 unless
        ``webhook_port`` says otherwise; not served with ``webhook_port=-1``). Before start."""
        if self._started:
            raise ManagerError("Manager.add_webhook: add webhooks before the manager starts")
        if not path.startswith("/") or path in self._webhook_handlers:
            raise ManagerError(f"Manager.add_webhook: {path!r} is not a new path starting with /")
        if not self._webhook_handlers and not self._webhook_converters:
            self.readyz.add("webhook", self._webhook_ready_check)
        self._webhook_handlers[path] = handler

    def add_conversion_webhook(self, path: str, converter: Converter) -> None:
        """Serve ``converter`` (CRD conversion) at ``path`` on the webhook server."""
        if self._started:
            raise ManagerError("Manager.add_conversion_webhook: add it before the manager starts")
        if not path.startswith("/") or path in self._webhook_converters:
            raise ManagerError(f"Manager.add_conversion_webhook: {path!r} is not a new path")
        if not self._webhook_handlers and not self._webhook_converters:
            self.readyz.add("webhook", self._webhook_ready_check)
        self._webhook_converters[path] = converter

    @property
    def serves_webhooks(self) -> bool:
        """Whether an admission or conversion webhook was added (the manager then starts the
        webhook server, unless ``webhook_port=-1``)."""
        return bool(self._webhook_handlers or self._webhook_converters)

    def _webhook_declarations(self) -> list[WebhookDeclaration]:
        """What ``webhooks_local`` registers (an ``Operator`` knows its typed handlers)."""
        return []

    def _webhook_configuration_name(self) -> str:
        return str(getattr(self, "name", "") or "setpoint")

    def _webhook_ready_check(self) -> None:
        if self._webhook_options[1] == WEBHOOKS_OFF:
            return
        if self.webhook_server is None or not self.webhook_server.ready:
            raise ManagerError("the webhook server is not serving yet")

    @property
    def controllers(self) -> list[Controller]:
        """The controllers added to this manager."""
        return [m.target for m in self._runnables if isinstance(m.target, Controller)]

    def add_debug_peer(self, peer: Manager) -> None:
        """Show `peer`'s controllers and informers on this manager's debug endpoints, and
        record its reconciles in this manager's trace (for several operators in one process,
        which serve one metrics endpoint). Call it before either starts."""
        if self._started or peer._started:
            raise ManagerError("Manager.add_debug_peer: call it before the managers start")
        self.debug_peers.append(peer)
        peer.trace = self.trace
        if self.trace is not None:
            for controller in peer.controllers:
                controller.attach_trace(self.trace)

    def add_healthz_check(self, name: str, check: HealthCheck) -> None:
        """Add a liveness check (`/healthz`): a callable, sync or async, that raises or
        returns False when the process should be restarted."""
        self.healthz.add(name, check)

    def add_readyz_check(self, name: str, check: HealthCheck) -> None:
        """Add a readiness check (`/readyz`), next to the built-in `cache-sync` check."""
        self.readyz.add(name, check)

    def configure(
        self,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        namespaces: Sequence[str] | None = None,
        leader_election: bool | None = None,
        leader_election_id: str | None = None,
        leader_election_namespace: str | None = None,
        metrics_bind_address: str | None = None,
        health_probe_bind_address: str | None = None,
        graceful_shutdown_timeout: float | None = None,
        warm_up_caches: bool | None = None,
        cache_sync_timeout: float | None = None,
        cache_unready_after: float | None = None,
        cache_unhealthy_after: float | None = None,
        watch_idle_timeout: float | None = None,
        impersonate_user: str | None = None,
        impersonate_groups: Sequence[str] = (),
        webhook_port: int | None = None,
        webhook_cert_dir: str | None = None,
        webhooks_local: bool | None = None,
        follow_cluster_clock: bool | None = None,
        trace_capacity: int | None = None,
    ) -> None:
        """Override settings before the manager starts (what `setpoint run`'s flags do);
        None leaves a setting as it is (`trace_capacity=0` turns the trace off)."""
        if self._started:
            raise ManagerError("Manager.configure: the manager has already started")
        if trace_capacity is not None:
            if any(controller.trace is not None for controller in self.controllers):
                raise ManagerError(
                    "Manager.configure: trace_capacity cannot change once controllers record "
                    "into the trace; pass trace_capacity= to the Manager instead"
                )
            self.trace = _trace(trace_capacity)
        if kubeconfig is not None or context is not None:
            if not self._owns_client:
                raise ManagerError(
                    "Manager.configure: kubeconfig/context cannot apply: a client was given"
                )
            self._kubeconfig = kubeconfig if kubeconfig is not None else self._kubeconfig
            self._context = context if context is not None else self._context
        if namespaces is not None:
            if isinstance(namespaces, str):
                raise ManagerError(
                    f"Manager: namespaces must be a list of names, got the string {namespaces!r}"
                )
            if self._cache is not None and (list(namespaces) or None) != self._namespaces:
                raise ManagerError(
                    "Manager.configure: namespaces cannot change once the cache exists "
                    "(the manager was given a client); pass namespaces= to Manager instead"
                )
            self._namespaces = list(namespaces) or None
        if leader_election_id is not None:
            self.leader_election_id = leader_election_id
        if leader_election_namespace is not None:
            self.leader_election_namespace = leader_election_namespace
        if leader_election is not None:
            self.leader_election = leader_election
        if self.leader_election:
            self._check_leader_election_id()
            self._election_config(self.leader_election_id or "")
        if metrics_bind_address is not None:
            self._metrics_address = parse_bind_address(
                metrics_bind_address, option="metrics_bind_address"
            )
        if health_probe_bind_address is not None:
            self._probe_address = parse_bind_address(
                health_probe_bind_address, option="health_probe_bind_address"
            )
        if graceful_shutdown_timeout is not None:
            if graceful_shutdown_timeout < 0:
                raise ManagerError(
                    f"Manager: graceful_shutdown_timeout must be >= 0 seconds, "
                    f"got {graceful_shutdown_timeout}"
                )
            self.graceful_shutdown_timeout = float(graceful_shutdown_timeout)
        if warm_up_caches is not None:
            self.warm_up_caches = warm_up_caches
        if cache_sync_timeout is not None:
            self.cache_sync_timeout = _positive(cache_sync_timeout, "cache_sync_timeout")
        if watch_idle_timeout is not None:
            if self._cache is not None:
                raise ManagerError(
                    "Manager.configure: watch_idle_timeout cannot change once the cache exists; "
                    "pass cache_options=CacheOptions(reflector=ReflectorOptions(idle_timeout=...))"
                )
            options = self._cache_options or CacheOptions()
            reflector = dataclasses.replace(
                options.reflector, idle_timeout=_positive(watch_idle_timeout, "watch_idle_timeout")
            )
            self._cache_options = dataclasses.replace(options, reflector=reflector)
        if cache_unready_after is not None:
            self.cache_health.unready_after = _positive(cache_unready_after, "cache_unready_after")
        if cache_unhealthy_after is not None:
            self.cache_health.unhealthy_after = _positive(
                cache_unhealthy_after, "cache_unhealthy_after"
            )
        if impersonate_user is not None or impersonate_groups:
            self._set_impersonation(impersonate_user, impersonate_groups)
        if webhooks_local is not None:
            self.webhooks_local = webhooks_local
        if follow_cluster_clock and not isinstance(self.clock, ClusterFollowingClock):
            self._follow_cluster_clock(self.clock)
        if webhook_port is not None or webhook_cert_dir is not None:
            host, port, cert_dir = self._webhook_options
            self._webhook_options = (
                host,
                _webhook_port(webhook_port if webhook_port is not None else port),
                webhook_cert_dir if webhook_cert_dir is not None else cert_dir,
            )

    def _set_impersonation(self, user: str | None, groups: Sequence[str]) -> None:
        if user is None and not groups:
            return
        if user is None:
            raise ManagerError("Manager: impersonate_groups needs impersonate_user (as --as-group)")
        if not self._owns_client:
            raise ManagerError(
                "Manager: impersonate_user cannot apply: a client was given (open it with "
                "Client.from_kubeconfig(..., impersonate_user=...) instead)"
            )
        self._impersonation = (user, tuple(groups))

    # ----- the cluster's clock -----

    def _follow_cluster_clock(self, clock: Clock) -> None:
        if clock is not SYSTEM_CLOCK:
            raise ManagerError(
                "Manager: pass either clock or follow_cluster_clock, not both (following "
                "the cluster's clock replaces the manager's clock)"
            )
        self.clock = ClusterFollowingClock()

    async def _start_following(self, clock: ClusterFollowingClock) -> None:
        """Take the cluster's time now, then keep following it in the background."""
        try:
            await clock.sync(self.client)
        except ApiError as error:
            if error.code == 404:
                raise ManagerError(
                    f"follow_cluster_clock: the cluster serves no clock at "
                    f"{CLUSTER_CLOCK_PATH} (only a setpoint local cluster does)"
                ) from None
            raise
        clock.start(self.client)

    # ----- lifecycle -----

    async def connect(self) -> None:
        """Make the client (when none was given) and the cache; idempotent."""
        if self._client is None:
            if self._kubeconfig is None and self._context is None:
                # In a pod: the service account; elsewhere $KUBECONFIG or ~/.kube/config.
                user, groups = self._impersonation
                self._client = await Client.from_environment(
                    impersonate_user=user, impersonate_groups=groups
                )
            else:
                user, groups = self._impersonation
                self._client = await Client.from_kubeconfig(
                    self._kubeconfig,
                    context=self._context,
                    impersonate_user=user,
                    impersonate_groups=groups,
                )
        if self._cache is None:
            self._cache = Cache(self._client, self._effective_cache_options())

    async def start(self) -> None:
        """Start everything and return; controllers start once this manager leads.

        Raises OSError when a server's address is taken, or the client's error when the
        cluster cannot be reached.
        """
        if self._started:
            raise ManagerError("Manager.start: the manager was already started")
        self._started = True
        self.start_time = time.time()
        try:
            await self.connect()
            if isinstance(self.clock, ClusterFollowingClock):
                await self._start_following(self.clock)
            await self._start_endpoints()
            await self.cache.start()
        except BaseException:
            await self._cleanup()
            raise
        self._health_monitor = asyncio.create_task(
            self.cache_health.monitor(), name="cache health monitor"
        )
        for managed in self._runnables:
            if not managed.needs_leader_election:
                managed.start(self._runnable_failed)
        if self.leader_election:
            if self.warm_up_caches:
                await self._warm_up_caches()
            from setpoint.manager.leader_election import LeaderElector
            from setpoint.manager.lease_lock import ClientLeaseLock

            self.elector = LeaderElector(
                ClientLeaseLock(self.client, *self._lease_location()),
                self._election_config(self.leader_election_id or ""),
            )
            self._election_task = asyncio.create_task(self._lead(self.elector))
        else:
            self._become_leader()

    async def wait(self) -> None:
        """Wait until the manager stops: `stop()` was called (returns), leadership was lost
        (raises `LeaderElectionLost`) or a runnable failed (raises `RunnableFailed`)."""
        await self._done.wait()
        if self._failure is not None:
            raise self._failure

    def request_stop(self) -> None:
        """Ask a `run()` to stop gracefully (what SIGTERM does); returns at once."""
        self._done.set()

    async def stop(self) -> None:
        """Stop gracefully: controllers finish in-flight work within the graceful shutdown
        timeout, then the rest shuts down and the Lease is released. Idempotent."""
        async with self._stop_lock:
            if self._stopped:
                return
            self._stopped = True
            self._done.set()
            lost = self._leadership_lost(self._failure)
            grace = 0.0 if lost else self.graceful_shutdown_timeout
            loop = asyncio.get_running_loop()
            deadline = loop.time() + grace
            leaders = [r for r in self._runnables if r.needs_leader_election]
            others = [r for r in self._runnables if not r.needs_leader_election]
            if self._election_task is not None and (not self._elected.is_set() or lost):
                await _cancel(self._election_task)
            await asyncio.gather(*(r.stop(grace) for r in leaders))
            await asyncio.gather(*(r.stop(max(0.0, deadline - loop.time())) for r in others))
            self._elected.clear()
            await self._cleanup()
            log.info("manager stopped")

    async def run(self, *, handle_signals: bool = True) -> None:
        """Start, wait until stopped, and stop gracefully.

        With `handle_signals`, the first SIGTERM/SIGINT stops gracefully and a second exits at
        once. Raises `LeaderElectionLost` when leadership is lost (exit non-zero then), or
        `RunnableFailed` when a runnable failed.
        """
        signals = ShutdownSignals(self.request_stop) if handle_signals else None
        if signals is not None:
            signals.install()
        try:
            await self.start()
            await self._done.wait()
        finally:
            try:
                await self.stop()
            finally:
                if signals is not None:
                    signals.remove()
        if self._failure is not None:
            raise self._failure

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.stop()

    # ----- internals -----

    def _effective_cache_options(self) -> CacheOptions | None:
        if self._namespaces is None:
            return self._cache_options
        options = self._cache_options or CacheOptions()
        if options.namespaces and set(options.namespaces) != set(self._namespaces):
            raise ManagerError(
                "Manager: namespaces and cache_options.namespaces disagree; set only one"
            )
        return dataclasses.replace(options, namespaces=frozenset(self._namespaces))

    def _check_leader_election_id(self) -> None:
        lease_name = self.leader_election_id
        if not lease_name:
            raise ManagerError(
                "Manager: leader_election_id (the name of the Lease) is required when "
                "leader_election is on"
            )
        from setpoint.api.names import validate_dns1123_subdomain

        problems = validate_dns1123_subdomain(lease_name)
        if problems:
            raise ManagerError(
                f"Manager: leader_election_id {lease_name!r} is not a valid Lease name: "
                f"{'; '.join(problems)}"
            )

    def _lease_location(self) -> tuple[str, str]:
        namespace = self.leader_election_namespace or self.client.default_namespace
        return namespace, self.leader_election_id or ""

    def _election_config(self, name: str) -> LeaderElectionConfig:
        from setpoint.manager.leader_election import LeaderElectionConfig

        lease_duration, renew_deadline, retry_period = self._timings
        namespace = self.leader_election_namespace or "default"
        if self._client is not None and not self.leader_election_namespace:
            namespace = self._client.default_namespace
        try:
            return LeaderElectionConfig(
                name=name,
                namespace=namespace,
                identity=self.identity,
                lease_duration=lease_duration,
                renew_deadline=renew_deadline,
                retry_period=retry_period,
                release_on_cancel=self._release_on_cancel,
            )
        except ValueError as error:
            raise ManagerError(f"Manager: {error}") from None

    async def _warm_up_caches(self) -> None:
        """Start the informers the controllers will use, before leadership (controller-runtime
        #3220): a standby then holds a synced cache and fails over without a full relist."""
        for managed in self._runnables:
            if not managed.needs_leader_election:
                continue
            for source in getattr(managed.target, "sources", ()):
                if not isinstance(source, KindSource) or source.cache is not self._cache:
                    continue
                try:
                    await self.cache.informer_for(
                        source.api_version, source.kind, metadata_only=source.metadata_only
                    )
                except Exception as error:  # the controller reports it when it starts
                    log.warning("cannot warm up the cache for %r: %s", source, error)

    async def _lead(self, elector: LeaderElector) -> None:
        try:
            await elector.acquire()
            self._become_leader()
            await elector.hold()
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self._fail(error)

    def _leadership_lost(self, error: BaseException | None) -> bool:
        # Only this manager's elector raises LeaderElectionLost (a runnable's error is wrapped
        # in RunnableFailed), so without one the module need not be imported to tell.
        if self.elector is None:
            return False
        from setpoint.manager.leader_election import LeaderElectionLost

        return isinstance(error, LeaderElectionLost)

    def _become_leader(self) -> None:
        self._elected.set()
        for managed in self._runnables:
            if managed.needs_leader_election:
                managed.start(self._runnable_failed)

    def _runnable_failed(self, managed: ManagedRunnable, error: BaseException) -> None:
        # A client error (the server unreachable, RBAC) says all in its message; a traceback
        # is for bugs.
        expected = isinstance(error, ClientError)
        log.error(
            "runnable %s failed: %s", managed.name, error, exc_info=None if expected else error
        )
        self._fail(RunnableFailed(managed.name, error))

    def _fail(self, error: BaseException) -> None:
        if self._failure is None and not self._stopped:
            self._failure = error
        elif self._stopped and self._leadership_lost(error):
            # Lost while controllers drain gracefully: a former leader must not keep acting.
            log.error("leadership lost during shutdown; aborting in-flight work")
            self._abort_task = asyncio.create_task(self._abort_leader_runnables())
        self._done.set()

    async def _abort_leader_runnables(self) -> None:
        await asyncio.gather(
            *(managed.abort() for managed in self._runnables if managed.needs_leader_election)
        )

    async def _start_endpoints(self) -> None:
        served = {**self._webhook_handlers, **self._webhook_converters}
        if served and self._webhook_options[1] != WEBHOOKS_OFF:
            from setpoint.webhook import WebhookServer

            host, port, cert_dir = self._webhook_options
            ca_pem = None
            if self.webhooks_local:
                from setpoint.webhook.local_registration import (
                    local_certificate_directory,
                    make_local_certificates,
                )

                local = local_certificate_directory(self._webhook_configuration_name())
                ca_pem = make_local_certificates(local)
                cert_dir = str(local)
            server = WebhookServer(host=host, port=port, cert_dir=cert_dir)
            for path, handler in self._webhook_handlers.items():
                server.register(path, handler)
            for path, converter in self._webhook_converters.items():
                server.register_conversion(path, converter)
            self.webhook_server = server
            await server.start()
            if ca_pem is not None:
                from setpoint.webhook.local_registration import LocalWebhookRegistration

                self._local_registration = LocalWebhookRegistration(
                    self.client,
                    self._webhook_configuration_name(),
                    self._webhook_declarations(),
                    server.port,
                    ca_pem,
                    [
                        (path, next(iter(converter.versions)), converter.kind)
                        for path, converter in self._webhook_converters.items()
                    ],
                )
                await self._local_registration.register()
        elif served:
            log.info("webhook server off (webhook port -1): %s not served", ", ".join(served))
        if self._metrics_address is not None:
            from setpoint.manager.debug_endpoints import add_debug_routes
            from setpoint.manager.metrics_endpoint import build_metrics_app

            app = build_metrics_app()
            add_debug_routes(app, self)
            self.metrics_endpoint = HttpEndpoint(app, self._metrics_address)
            await _start_endpoint(self.metrics_endpoint, "metrics", "metrics_bind_address")
            self._endpoints.append(self.metrics_endpoint)
            log.info(
                "serving metrics on %s/metrics%s",
                self.metrics_endpoint.url,
                _scope(self.metrics_endpoint),
            )
        if self._probe_address is not None:
            self.probe_endpoint = HttpEndpoint(
                build_probe_app(self.healthz, self.readyz), self._probe_address
            )
            await _start_endpoint(self.probe_endpoint, "health probes", "health_probe_bind_address")
            self._endpoints.append(self.probe_endpoint)
            log.info(
                "serving health probes on %s%s",
                self.probe_endpoint.url,
                _scope(self.probe_endpoint),
            )

    async def _cleanup(self) -> None:
        """Stop the cache, release the Lease, stop servers, close an owned client. Once."""
        if self._cleaned_up:
            return
        self._cleaned_up = True
        if self._local_registration is not None:
            # First: a cluster must not keep Fail webhooks pointing at a stopped process.
            try:
                async with asyncio.timeout(CLEANUP_TIMEOUT):
                    await self._local_registration.unregister()
            except Exception:
                log.exception("could not remove the local webhook configurations")
        if self._abort_task is not None:
            with contextlib.suppress(Exception):
                await self._abort_task
        if self._election_task is not None:
            await _cancel(self._election_task)
        if self._health_monitor is not None:
            await _cancel(self._health_monitor)
        if isinstance(self.clock, ClusterFollowingClock):
            await self.clock.stop()
        if self._cache is not None:
            try:
                async with asyncio.timeout(CLEANUP_TIMEOUT):
                    await self._cache.stop()
            except Exception:
                log.exception("error stopping the cache")
        for recorder in self._recorders.values():
            try:
                await recorder.stop(flush_timeout=CLEANUP_TIMEOUT)
            except Exception:
                log.exception("error stopping event recorder %s", recorder.reporting_controller)
        if self.elector is not None and self.elector.config.release_on_cancel:
            await self.elector.release()
        for endpoint in self._endpoints:
            with contextlib.suppress(Exception):
                await endpoint.stop()
        self._endpoints.clear()
        if self.webhook_server is not None:
            with contextlib.suppress(Exception):
                await self.webhook_server.stop()
        if self._owns_client and self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()
            if self._client.config.uses_tls:
                # A TLS connection closes in a few loop turns (close_notify both ways): give
                # them those, so a caller closing its loop next leaves no socket behind
                # (aiohttp's graceful-shutdown advice).
                await asyncio.sleep(TLS_CLOSE_GRACE_SECONDS)

    async def close_client(self) -> None:
        """Close the client this manager made (for a manager that never started)."""
        if self._owns_client and self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()

    def _cache_synced_check(self) -> None:
        if self._cache is None or not self._started:
            raise ManagerError("the manager has not started")
        unsynced = [repr(informer) for informer in self._cache.informers if not informer.has_synced]
        if unsynced:
            raise ManagerError(f"informers not synced: {', '.join(unsynced)}")


def _webhook_port(port: int) -> int:
    if port != WEBHOOKS_OFF and not 0 <= port <= 65535:
        raise ManagerError(f"Manager: webhook_port must be 0..65535 or -1 (off), got {port}")
    return port


def _scope(endpoint: HttpEndpoint) -> str:
    return " (listening on all interfaces)" if endpoint.address.host is None else ""


async def _start_endpoint(endpoint: HttpEndpoint, what: str, option: str) -> None:
    try:
        await endpoint.start()
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        host = endpoint.address.host or ""
        address = f"{host}:{endpoint.address.port}"
        flag = "--" + option.replace("_", "-")
        raise AddressInUse(
            f"cannot serve {what} on {address}: address already in use; choose another with "
            f"{option} ({flag} for setpoint run), e.g. '127.0.0.1:0', or '0' to disable"
        ) from error


def _trace(capacity: int | None) -> ReconcileTrace | None:
    """The trace of `trace_capacity` (None or 0: none)."""
    if capacity is None or capacity == 0:
        return None
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
        raise ManagerError(
            f"Manager: trace_capacity must be a whole number of records (0: off), got {capacity!r}"
        )
    return ReconcileTrace(capacity)


def _positive(value: float, option: str) -> float:
    if not value > 0:
        raise ManagerError(f"Manager: {option} must be > 0 seconds, got {value}")
    return float(value)


async def _cancel(task: asyncio.Task[Any]) -> None:
    await cancel_and_wait(task)
