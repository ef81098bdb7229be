"""The root CA publisher through the official client: ``kube-root-ca.crt`` in every namespace
holds the CA the kubeconfig trusts, and is put back when deleted or edited."""

from __future__ import annotations

import base64
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.rest import ApiException

from setpoint.testing.background_cluster import BackgroundCluster
from tests.cluster.controllers.waiting import eventually_sync

NAME = "kube-root-ca.crt"


@pytest.fixture(scope="module")
def cluster_ca(local_cluster: BackgroundCluster) -> str:
    """The PEM a client of the local cluster trusts, as its kubeconfig carries it."""
    kubeconfig = yaml.safe_load(local_cluster.kubeconfig_path.read_text())
    data = kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]
    return base64.b64decode(data).decode()


def published(core_v1: client.CoreV1Api, namespace: str) -> Any:
    try:
        return core_v1.read_namespaced_config_map(NAME, namespace)
    except ApiException as exc:
        assert exc.status == 404
        return None


def current(core_v1: client.CoreV1Api, namespace: str, ca: str) -> Any:
    config_map = published(core_v1, namespace)
    return config_map if config_map is not None and config_map.data == {"ca.crt": ca} else None


@pytest.mark.parametrize("system", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_system_namespaces_have_the_root_ca(
    core_v1: client.CoreV1Api, cluster_ca: str, system: str
) -> None:
    eventually_sync(lambda: current(core_v1, system, cluster_ca), f"{NAME} in {system}")


def test_a_new_namespace_gets_the_root_ca_as_kube_controller_manager_writes_it(
    core_v1: client.CoreV1Api, namespace: str, cluster_ca: str
) -> None:
    config_map = eventually_sync(lambda: current(core_v1, namespace, cluster_ca), NAME)
    assert cluster_ca.startswith("-----BEGIN CERTIFICATE-----")
    assert config_map.metadata.annotations["kubernetes.io/description"].startswith(
        "Contains a CA bundle that can be used to verify the kube-apiserver"
    )
    assert not config_map.metadata.owner_references
    (entry,) = config_map.metadata.managed_fields
    assert (entry.manager, entry.operation) == ("kube-controller-manager", "Update")


def test_deleted_or_edited_root_ca_is_put_back(
    core_v1: client.CoreV1Api, namespace: str, cluster_ca: str
) -> None:
    first = eventually_sync(lambda: current(core_v1, namespace, cluster_ca), NAME)
    core_v1.delete_namespaced_config_map(NAME, namespace)
    again = eventually_sync(lambda: current(core_v1, namespace, cluster_ca), f"{NAME} again")
    assert again.metadata.uid != first.metadata.uid

    core_v1.patch_namespaced_config_map(
        NAME, namespace, {"data": {"ca.crt": "tampered", "extra": "x"}}
    )
    fixed = eventually_sync(lambda: current(core_v1, namespace, cluster_ca), f"{NAME} fixed")
    assert fixed.data == {"ca.crt": cluster_ca}
