"""Lease-based leader election (coordination.k8s.io/v1), the algorithm of client-go.

Candidates race for one Lease. The holder renews it every retry period; the others watch it and
take over only once they have seen it unchanged for the lease's duration, measured on their own
monotonic clock (so clock skew between machines never matters). A leader that could not renew
for the renew deadline must stop acting: `LeaderElector.hold` raises `LeaderElectionLost`, and
because the renew deadline is shorter than the lease duration it stops before anyone else can
take over. On a clean shutdown the leader releases the Lease (holder cleared, duration 1 s) so
a successor takes over at once instead of waiting for expiry.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn

from setpoint.client.errors import ApiError, Conflict
from setpoint.manager.leader_election_defaults import (
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    default_identity,
)
from setpoint.manager.lease_lock import LEASE_API_VERSION, LEASE_KIND, LeaseLock
from setpoint.manager.metrics import LEADER_MASTER_STATUS, LEADER_SLOWPATH_TOTAL

__all__ = [
    "LEASE_DURATION",
    "RENEW_DEADLINE",
    "RETRY_PERIOD",
    "LeaderElectionConfig",
    "LeaderElectionLost",
    "LeaderElector",
    "default_identity",
    "format_micro_time",
]

log = logging.getLogger("setpoint.manager.leader_election")

# client-go's JitterFactor: candidates wait retry_period * (1 + random() * JITTER) between tries
# so that replicas started together do not hit the API server in lockstep.
JITTER_FACTOR = 1.2
# Re-reads allowed when releasing conflicts with our own last (cancelled) renewal.
RELEASE_ATTEMPTS = 3
# client-go's release writes this duration so that successors see the Lease expire at once.
RELEASED_LEASE_DURATION_SECONDS = 1


class LeaderElectionLost(Exception):
    """This process was the leader and could not renew its Lease in time; it must stop acting."""

    def __init__(self, lease: str, identity: str, reason: str) -> None:
        super().__init__(f"leader election lost: lease {lease} (identity {identity}): {reason}")
        self.lease = lease
        self.identity = identity
        self.reason = reason


def format_micro_time(moment: datetime) -> str:
    """A metav1.MicroTime: UTC with exactly six fractional digits (`...05.000000Z`)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Which Lease to contend for, as whom, and with which timings (seconds)."""

    name: str
    namespace: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("leader election: name (the Lease's name) must not be empty")
        if not self.namespace:
            raise ValueError("leader election: namespace (where the Lease lives) must not be empty")
        if not self.identity:
            raise ValueError("leader election: identity must not be empty")
        if self.retry_period <= 0:
            raise ValueError(f"leader election: retry_period must be > 0, got {self.retry_period}")
        if self.lease_duration < RELEASED_LEASE_DURATION_SECONDS:
            raise ValueError(
                f"leader election: lease_duration must be >= 1 second, got {self.lease_duration}"
            )
        # The same invariants client-go checks: the leader must give up before the Lease can
        # expire for the others, and must get several tries within the deadline.
        if self.lease_duration <= self.renew_deadline:
            raise ValueError(
                f"leader election: lease_duration ({self.lease_duration}) must be greater than "
                f"renew_deadline ({self.renew_deadline})"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(
                f"leader election: renew_deadline ({self.renew_deadline}) must be greater than "
                f"retry_period * {JITTER_FACTOR} ({JITTER_FACTOR * self.retry_period})"
            )

    @property
    def lease_duration_seconds(self) -> int:
        """The whole seconds written to `spec.leaseDurationSeconds` (an int32 in the API)."""
        return max(1, math.ceil(self.lease_duration))


class LeaderElector:
    """Acquires, renews and releases one Lease on behalf of one process (one identity)."""

    def __init__(self, lock: LeaseLock, config: LeaderElectionConfig) -> None:
        self.lock = lock
        self.config = config
        self._lease: dict[str, Any] | None = None  # the last Lease seen or written
        self._observed_spec: dict[str, Any] | None = None
        self._observed_at = 0.0  # loop.time() when _observed_spec last changed
        self._is_leader = False
        LEADER_MASTER_STATUS.labels(name=config.name).set(0)

    @property
    def identity(self) -> str:
        """Who this elector is in `spec.holderIdentity`."""
        return self.config.identity

    @property
    def is_leader(self) -> bool:
        """True between a successful acquire and a loss or release."""
        return self._is_leader

    @property
    def observed_holder(self) -> str:
        """The holder identity in the Lease as last seen ("" when free or never read)."""
        spec = self._observed_spec or {}
        return str(spec.get("holderIdentity") or "")

    @property
    def lease_description(self) -> str:
        """`namespace/name` of the Lease, for messages."""
        return f"{self.config.namespace}/{self.config.name}"

    async def acquire(self) -> None:
        """Return once this process holds the Lease; retries every retry period (jittered)."""
        log.info("attempting to acquire leader lease %s...", self.lease_description)
        while True:
            # A hung request must not block the retries forever; a slow one may take a while.
            if await self._attempt(self.config.renew_deadline):
                self._set_leader(True)
                log.info(
                    "successfully acquired lease %s as %s", self.lease_description, self.identity
                )
                return
            delay = self.config.retry_period * (1 + random.random() * JITTER_FACTOR)
            await asyncio.sleep(delay)

    async def hold(self) -> NoReturn:
        """Renew the Lease every retry period until cancelled.

        Raises `LeaderElectionLost` when no renewal succeeded within the renew deadline, or when
        another holder is found in the Lease.
        """
        loop = asyncio.get_running_loop()
        last_renew = loop.time()
        while True:
            await asyncio.sleep(self.config.retry_period)
            while True:
                remaining = last_renew + self.config.renew_deadline - loop.time()
                if remaining <= 0:
                    self._lose("failed to renew the lease within the renew deadline")
                if await self._attempt(remaining):
                    last_renew = loop.time()
                    break
                if self.observed_holder not in ("", self.identity):
                    self._lose(f"the lease is now held by {self.observed_holder}")
                await asyncio.sleep(min(self.config.retry_period, max(0.0, remaining)))

    async def release(self) -> bool:
        """Give up the Lease so a successor takes over at once; True if it was released.

        Mirrors client-go: holderIdentity "", leaseDurationSeconds 1, a fresh renewTime, the
        acquire time and transitions kept. Errors are logged, not raised: a shutdown must go on.
        """
        if not self._is_leader or self._lease is None:
            return False
        self._set_leader(False)
        try:
            async with asyncio.timeout(self.config.renew_deadline):
                released = await self._write_release(self._lease)
        except Exception as error:  # the lease simply expires later; nothing else to do
            log.warning("failed to release lease %s: %s", self.lease_description, error)
            return False
        if released:
            log.info("released lease %s", self.lease_description)
        return released

    async def _write_release(self, lease: dict[str, Any]) -> bool:
        for _ in range(RELEASE_ATTEMPTS):
            released = copy.deepcopy(lease)
            spec = released.setdefault("spec", {})
            if spec.get("holderIdentity") != self.identity:
                return False  # someone else holds it: nothing of ours to release
            spec["holderIdentity"] = ""
            spec["leaseDurationSeconds"] = RELEASED_LEASE_DURATION_SECONDS
            spec["renewTime"] = format_micro_time(datetime.now(UTC))
            try:
                self._lease = await self.lock.update(released)
                return True
            except Conflict:
                # A renewal cancelled mid-flight may have landed: read the current version.
                current = await self.lock.get()
                if current is None:
                    return False
                lease = current
        return False

    def _lose(self, reason: str) -> NoReturn:
        self._set_leader(False)
        log.error("leader election lost for lease %s: %s", self.lease_description, reason)
        raise LeaderElectionLost(self.lease_description, self.identity, reason)

    def _set_leader(self, value: bool) -> None:
        self._is_leader = value
        LEADER_MASTER_STATUS.labels(name=self.config.name).set(1 if value else 0)

    async def _attempt(self, time_limit: float) -> bool:
        """One try at acquiring or renewing, bounded so a hung request cannot outlive a deadline."""
        try:
            async with asyncio.timeout(max(time_limit, 0.001)):
                return await self._try_acquire_or_renew()
        except TimeoutError:
            log.warning("acquiring or renewing lease %s timed out", self.lease_description)
        except Exception as error:  # transport or API errors: retry on the next period
            log.warning("error acquiring or renewing lease %s: %s", self.lease_description, error)
        return False

    async def _try_acquire_or_renew(self) -> bool:
        now = datetime.now(UTC)
        now_text = format_micro_time(now)
        loop = asyncio.get_running_loop()

        # Fast path: the leader updates from its own last write, no read needed.
        if self._is_leader and self._lease is not None:
            lease = copy.deepcopy(self._lease)
            lease["spec"] = self._renewed_spec(lease.get("spec") or {}, now_text)
            try:
                self._observe(await self.lock.update(lease), loop.time())
                return True
            except ApiError as error:  # Conflict, or the Lease was deleted: read it again
                log.debug("fast-path renew of %s failed: %s", self.lease_description, error)
            LEADER_SLOWPATH_TOTAL.labels(name=self.config.name).inc()

        stored = await self.lock.get()
        if stored is None:
            lease = self._new_lease(now_text)
            try:
                self._observe(await self.lock.create(lease), loop.time())
            except Conflict:  # AlreadyExists: another candidate created it first
                return False
            return True

        spec = stored.get("spec") or {}
        if spec != self._observed_spec:
            self._observed_spec = copy.deepcopy(spec)
            self._observed_at = loop.time()
        self._lease = stored
        holder = str(spec.get("holderIdentity") or "")
        duration = _int(spec.get("leaseDurationSeconds"), self.config.lease_duration_seconds)
        if holder and holder != self.identity and self._observed_at + duration > loop.time():
            return False

        lease = copy.deepcopy(stored)
        if holder == self.identity:
            lease["spec"] = self._renewed_spec(spec, now_text)
        else:
            lease["spec"] = {
                **spec,
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.config.lease_duration_seconds,
                "acquireTime": now_text,
                "renewTime": now_text,
                "leaseTransitions": _int(spec.get("leaseTransitions"), 0) + 1,
            }
        try:
            self._observe(await self.lock.update(lease), loop.time())
        except Conflict:
            return False
        return True

    def _renewed_spec(self, spec: dict[str, Any], now_text: str) -> dict[str, Any]:
        return {
            **spec,
            "holderIdentity": self.identity,
            "leaseDurationSeconds": self.config.lease_duration_seconds,
            "acquireTime": spec.get("acquireTime") or now_text,
            "renewTime": now_text,
            "leaseTransitions": _int(spec.get("leaseTransitions"), 0),
        }

    def _new_lease(self, now_text: str) -> dict[str, Any]:
        return {
            "apiVersion": LEASE_API_VERSION,
            "kind": LEASE_KIND,
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": self.config.lease_duration_seconds,
                "acquireTime": now_text,
                "renewTime": now_text,
                "leaseTransitions": 0,
            },
        }

    def _observe(self, lease: dict[str, Any], at: float) -> None:
        self._lease = lease
        self._observed_spec = copy.deepcopy(lease.get("spec") or {})
        self._observed_at = at


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default
