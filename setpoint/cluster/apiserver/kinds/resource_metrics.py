"""``metrics.k8s.io/v1beta1``: the resource metrics API that ``kubectl top`` and the HPA read.

Upstream it is an aggregated API served by metrics-server, which scrapes every kubelet. Here
the API server asks the cluster's kubelet (:class:`UsageSource`) directly and answers
``PodMetrics`` and ``NodeMetrics`` in metrics-server's shapes: usage per container (CPU in
nanocores, ``"12345n"``; memory in kibibytes, ``"2048Ki"``), a ``timestamp`` and the
``window`` the CPU rate covers. A pod is listed once it is running and its kubelet reports it;
a node's usage is the sum of its pods' (metrics-server's also counts the node's own
processes). Only ``get`` and ``list`` are served, with label and ``metadata.name`` field
selectors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Protocol

from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver import status_errors

GROUP: Final = "metrics.k8s.io"
VERSION: Final = "v1beta1"
API_VERSION: Final = f"{GROUP}/{VERSION}"


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    """One container's usage at ``timestamp`` (epoch seconds), averaged over ``window`` s."""

    name: str
    cpu_nanocores: int
    memory_bytes: int
    timestamp: float
    window: float


class UsageSource(Protocol):
    """What reports containers' usage (the kubelet)."""

    def usage(self, pod: dict[str, Any]) -> list[ContainerUsage] | None:
        """The usage of each container of a running pod; None when it is not running here."""
        ...

    def reachable(self, node: str) -> bool:
        """Whether the kubelet of ``node`` answers (metrics-server leaves out the nodes, and
        the pods of nodes, it cannot scrape)."""
        ...


def cpu_text(nanocores: int) -> str:
    """CPU as metrics-server writes it (``"250000000n"``)."""
    return f"{nanocores}n"


def memory_text(memory_bytes: int) -> str:
    """Memory as metrics-server writes it (``"65536Ki"``)."""
    return f"{memory_bytes // 1024}Ki"


def duration_text(seconds: float) -> str:
    """A Go ``time.Duration`` string of whole milliseconds (``"15s"``, ``"10.044s"``)."""
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


def _time_text(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _metadata(obj: Mapping[str, Any], namespaced: bool) -> dict[str, Any]:
    meta = obj.get("metadata") or {}
    out: dict[str, Any] = {"name": meta.get("name", "")}
    if namespaced:
        out["namespace"] = meta.get("namespace", "")
    out["creationTimestamp"] = meta.get("creationTimestamp")
    if meta.get("labels"):
        out["labels"] = dict(meta["labels"])
    return out


def pod_metrics(pod: Mapping[str, Any], usages: Sequence[ContainerUsage]) -> dict[str, Any]:
    """A ``PodMetrics`` object."""
    newest = max((u.timestamp for u in usages), default=0.0)
    window = max((u.window for u in usages), default=0.0)
    return {
        "kind": "PodMetrics",
        "apiVersion": API_VERSION,
        "metadata": _metadata(pod, True),
        "timestamp": _time_text(newest),
        "window": duration_text(window),
        "containers": [
            {
                "name": u.name,
                "usage": {"cpu": cpu_text(u.cpu_nanocores), "memory": memory_text(u.memory_bytes)},
            }
            for u in usages
        ],
    }


def node_metrics(node: Mapping[str, Any], usages: Iterable[ContainerUsage]) -> dict[str, Any]:
    """A ``NodeMetrics`` object: the sum of the usage of the pods on it."""
    listed = list(usages)
    cpu = sum(u.cpu_nanocores for u in listed)
    memory = sum(u.memory_bytes for u in listed)
    newest = max((u.timestamp for u in listed), default=0.0)
    window = max((u.window for u in listed), default=0.0)
    if not listed:
        newest = datetime.now(UTC).timestamp()
    return {
        "kind": "NodeMetrics",
        "apiVersion": API_VERSION,
        "metadata": _metadata(node, False),
        "timestamp": _time_text(newest),
        "window": duration_text(window or 15.0),
        "usage": {"cpu": cpu_text(cpu), "memory": memory_text(memory)},
    }


class ResourceMetrics:
    """Answers ``metrics.k8s.io`` reads from stored pods and nodes and ``source()``'s usage."""

    def __init__(
        self,
        pods: Callable[[str | None], list[dict[str, Any]]],
        nodes: Callable[[], list[dict[str, Any]]],
        source: Callable[[], UsageSource | None],
    ) -> None:
        self._pods = pods
        self._nodes = nodes
        self._source = source

    def _pod_items(
        self, namespace: str | None
    ) -> list[tuple[dict[str, Any], list[ContainerUsage]]]:
        source = self._source()
        if source is None:
            return []
        items = []
        for pod in self._pods(namespace):
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            usages = source.usage(pod)
            if usages:
                items.append((pod, usages))
        return items

    def pods(
        self, namespace: str | None, selector: LabelSelector | None, name: str | None = None
    ) -> dict[str, Any]:
        """``PodMetricsList`` of the running pods ``selector`` (and ``name``) select."""
        items = [
            pod_metrics(pod, usages)
            for pod, usages in self._pod_items(namespace)
            if (name is None or pod["metadata"].get("name") == name)
            and (selector is None or selector.matches(pod["metadata"].get("labels") or {}))
        ]
        return {"kind": "PodMetricsList", "apiVersion": API_VERSION, "metadata": {}, "items": items}

    def pod(self, namespace: str | None, name: str) -> dict[str, Any]:
        """One ``PodMetrics``; 404 when the pod has none (not running, or not there)."""
        items = self.pods(namespace, None, name)["items"]
        if not items:
            raise status_errors.not_found(GROUP, "podmetrics", name)
        return dict(items[0])

    def nodes(self, selector: LabelSelector | None, name: str | None = None) -> dict[str, Any]:
        """``NodeMetricsList`` of the nodes ``selector`` (and ``name``) select."""
        nodes = []
        source = self._source()
        if source is not None:
            nodes = [
                node
                for node in self._nodes()
                if source.reachable(node["metadata"].get("name", ""))
                and (name is None or node["metadata"].get("name") == name)
                and (selector is None or selector.matches(node["metadata"].get("labels") or {}))
            ]
        per_node: dict[str, list[ContainerUsage]] = {}
        if nodes:
            for pod, usages in self._pod_items(None):
                node_name = (pod.get("spec") or {}).get("nodeName") or ""
                per_node.setdefault(node_name, []).extend(usages)
        items = [node_metrics(node, per_node.get(node["metadata"]["name"], [])) for node in nodes]
        return {
            "kind": "NodeMetricsList",
            "apiVersion": API_VERSION,
            "metadata": {},
            "items": items,
        }

    def node(self, name: str) -> dict[str, Any]:
        """One ``NodeMetrics``; 404 for a node that is not there."""
        items = self.nodes(None, name)["items"]
        if not items:
            raise status_errors.not_found(GROUP, "nodemetrics", name)
        return dict(items[0])
