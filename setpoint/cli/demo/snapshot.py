"""One reading of the demo's world: the samples, their children, recent Events, reconciles."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from setpoint.cli.demo.observation import Observation, observe
from setpoint.client import Client, NotFound

__all__ = ["Snapshot", "take_snapshot"]

NAMESPACE = "default"
#: How many of the latest Events the view shows.
EVENTS_SHOWN = 6


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the view draws; ``observations`` follow the samples' order."""

    observations: list[Observation]
    deployments: list[tuple[str, str]] = field(default_factory=list)
    pods: dict[str, int] = field(default_factory=dict)
    events: list[tuple[str, str, str, str]] = field(default_factory=list)
    reconciles: dict[str, int] = field(default_factory=dict)

    @property
    def converged(self) -> bool:
        """Every sample has converged."""
        return all(observation.converged for observation in self.observations)


async def _observe_sample(client: Client, sample: dict[str, Any]) -> Observation:
    kind = str(sample.get("kind"))
    name = str(sample["metadata"]["name"])
    try:
        obj = await client.get(str(sample["apiVersion"]), kind, name, namespace=NAMESPACE)
    except NotFound:
        return Observation(kind, name, "missing", False)
    return observe(obj)


def _event_time(event: dict[str, Any]) -> str:
    return str(
        event.get("lastTimestamp")
        or event.get("eventTime")
        or event["metadata"].get("creationTimestamp")
        or ""
    )


async def _reconciles(session: aiohttp.ClientSession, metrics_url: str) -> dict[str, int]:
    try:
        async with session.get(metrics_url, timeout=aiohttp.ClientTimeout(total=2)) as reply:
            text = await reply.text()
    except (aiohttp.ClientError, TimeoutError):
        return {}
    counts: Counter[str] = Counter()
    for family in text_string_to_metric_families(text):
        if family.name != "controller_runtime_reconcile":
            continue
        for sample in family.samples:
            if sample.name.endswith("_total"):
                counts[sample.labels.get("controller", "?")] += int(sample.value)
    return dict(sorted(counts.items()))


async def take_snapshot(
    client: Client,
    samples: list[dict[str, Any]],
    http: aiohttp.ClientSession,
    metrics_url: str,
) -> Snapshot:
    """Read everything the view shows (each read is a plain API request)."""
    observations = [await _observe_sample(client, sample) for sample in samples]
    deployments = [
        (
            deployment["metadata"]["name"],
            f"{(deployment.get('status') or {}).get('availableReplicas') or 0}"
            f"/{(deployment.get('spec') or {}).get('replicas', 1)}",
        )
        for deployment in await client.list("apps/v1", "Deployment", namespace=NAMESPACE)
    ]
    pods = Counter(
        str((pod.get("status") or {}).get("phase") or "Pending")
        for pod in await client.list("v1", "Pod", namespace=NAMESPACE)
    )
    events = sorted(await client.list("v1", "Event", namespace=NAMESPACE), key=_event_time)
    latest = [
        (
            str(event.get("type") or ""),
            str(event.get("reason") or ""),
            f"{event['involvedObject'].get('kind')}/{event['involvedObject'].get('name')}",
            str(event.get("message") or "").splitlines()[0][:70] if event.get("message") else "",
        )
        for event in events[-EVENTS_SHOWN:]
    ]
    return Snapshot(
        observations,
        deployments,
        dict(sorted(pods.items())),
        latest,
        await _reconciles(http, metrics_url),
    )
