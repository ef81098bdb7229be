"""The Ansible operator's own Prometheus metrics, under Operator SDK's names.

Operator SDK's ``ansible-operator`` (``internal/ansible/metrics``) exports, beside the
controller-runtime metrics every setpoint operator serves:

- ``ansible_operator_build_info{commit, version}`` 1;
- ``ansible_operator_reconcile_result{GVK, result}``: a gauge that only goes up, one per run
  whose status was written (``result`` is ``succeeded`` or ``failed``), ``GVK`` in Go's form
  (``cache.example.com/v1alpha1, Kind=Memcached``; ``/v1, Kind=Secret`` for the core group);
- ``ansible_operator_reconciles{GVK}``: a histogram of run durations in seconds, with Go's
  default buckets.

They live in the manager's registry (``setpoint.client.metrics.REGISTRY``), so ``/metrics``
serves them. User-defined metrics (the ``osdk_metric`` module) are in :mod:`.user_metrics`.
"""

from __future__ import annotations

from prometheus_client import Gauge, Histogram

from setpoint import __version__
from setpoint.ansible.watches import GroupVersionKind
from setpoint.client.metrics import REGISTRY

__all__ = [
    "BUILD_INFO",
    "GO_DEFAULT_BUCKETS",
    "RECONCILES",
    "RECONCILE_RESULT",
    "gvk_label",
    "record_build_info",
    "record_result",
]

#: prometheus.DefBuckets of Go's client (Python's default adds 0.075, 0.75 and 7.5).
GO_DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

BUILD_INFO = Gauge(
    "ansible_operator_build_info",
    "Build information for the ansible-operator binary",
    ["commit", "version"],
    registry=REGISTRY,
)

RECONCILE_RESULT = Gauge(
    "ansible_operator_reconcile_result",
    "Gauge of reconciles and their results.",
    ["GVK", "result"],
    registry=REGISTRY,
)

RECONCILES = Histogram(
    "ansible_operator_reconciles",
    "How long in seconds a reconcile takes.",
    ["GVK"],
    buckets=GO_DEFAULT_BUCKETS,
    registry=REGISTRY,
)


def gvk_label(gvk: GroupVersionKind) -> str:
    """``schema.GroupVersionKind.String()`` of Go: ``group/version, Kind=Kind``."""
    return f"{gvk.group}/{gvk.version}, Kind={gvk.kind}"


def record_build_info() -> None:
    """Set ``ansible_operator_build_info`` (setpoint's version; no commit is known)."""
    BUILD_INFO.labels(commit="", version=__version__).set(1)


def record_result(gvk: GroupVersionKind, succeeded: bool) -> None:
    """Count one run's result, as Operator SDK does when it writes the run's status."""
    RECONCILE_RESULT.labels(gvk_label(gvk), "succeeded" if succeeded else "failed").inc()
