"""Every resource kube-apiserver 1.32 serves by default, as the real kubectl lists it.

``tests/cluster/data/kube-apiserver-1.32-api-resources.txt`` is upstream's list (its header
names the sources); ``kubectl api-resources -o wide`` against the local cluster must print the
same rows: names, short names, group/version, scope, kind, verbs and categories.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.kubectl_runner import Kubectl

UPSTREAM_LIST = Path(__file__).parent / "data" / "kube-apiserver-1.32-api-resources.txt"

Row = tuple[str, str, str, str, str, str, str]


def _upstream_rows() -> set[Row]:
    rows: set[Row] = set()
    for line in UPSTREAM_LIST.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, short, api_version, namespaced, kind, verbs, categories = line.split()
        rows.add(
            (
                name,
                "" if short == "-" else short,
                api_version,
                namespaced,
                kind,
                verbs,
                "" if categories == "-" else categories,
            )
        )
    return rows


def _kubectl_rows(listing: str) -> set[Row]:
    """Rows of kubectl's table, cut at the header's column starts (empty cells are blank)."""
    header, *lines = listing.splitlines()
    names = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES"]
    starts = [header.index(name) for name in names]
    rows: set[Row] = set()
    for line in lines:
        cells = [
            line[start:end].strip() for start, end in zip(starts, [*starts[1:], None], strict=True)
        ]
        rows.add((cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]))
    return rows


@pytest.fixture
def kubectl(local_cluster: BackgroundCluster, tmp_path: Path) -> Kubectl:
    return Kubectl(local_cluster.kubeconfig_path, tmp_path / "kube-cache")


def test_kubectl_api_resources_lists_what_kube_apiserver_1_32_serves(kubectl: Kubectl) -> None:
    upstream = _upstream_rows()
    served = _kubectl_rows(kubectl.run("api-resources", "-o", "wide").stdout)
    # CRDs installed by other tests of the session are the only extra rows allowed.
    builtin_groups = {row[2] for row in _upstream_rows()}
    served_builtins = {row for row in served if row[2] in builtin_groups}
    assert sorted(upstream - served_builtins) == []
    assert sorted(served_builtins - upstream) == []
