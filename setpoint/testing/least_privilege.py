"""Running an operator under its own RBAC in a test, and checking that RBAC against what it did.

::

    async def test_my_operator_needs_only_its_role(client, namespace, kubeconfig, local_cluster):
        rbac = await install_rbac(client, "config/rbac", namespace=namespace)
        try:
            async with run_operator(op, kubeconfig=kubeconfig, namespace=namespace,
                                    service_account=rbac.service_account):
                ...  # the scenario; a missing permission fails it (403 in the log)
        finally:
            await rbac.remove(client)
        observed = observed_rbac(local_cluster, rbac.user)
        assert not missing_rules(rbac.rules, observed)

:func:`install_rbac` creates a ServiceAccount in the test's namespace and binds it to the
Roles and ClusterRoles of generated manifests (``config/rbac/role.yaml``, and the leader
election Role): ClusterRoles are copied under a name unique to the namespace, so that tests in
parallel namespaces do not share them. :func:`observed_rbac` reads the session cluster's audit
log (the ``local_cluster`` fixture keeps one) and returns what ``setpoint rbac suggest`` would
print for a user.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from setpoint.client.client import Client
from setpoint.client.errors import NotFound
from setpoint.generate.rbac import Rule
from setpoint.generate.rbac_suggest import Suggestion, read_audit_log, suggest
from setpoint.testing.background_cluster import BackgroundCluster
from setpoint.testing.operators import DEFAULT_WAIT_TIMEOUT, wait_for

__all__ = [
    "InstalledRBAC",
    "install_rbac",
    "observed_rbac",
    "rules_of",
    "service_account_user",
]

RBAC_API: Final = "rbac.authorization.k8s.io/v1"
#: What ``install_rbac`` binds by default: the roles ``setpoint generate`` writes.
DEFAULT_ROLE_FILES: Final = ("role.yaml", "leader_election_role.yaml")
DEFAULT_SERVICE_ACCOUNT: Final = "controller-manager"


def service_account_user(namespace: str, name: str) -> str:
    """``system:serviceaccount:NAMESPACE:NAME``: the user a ServiceAccount authenticates as."""
    return f"system:serviceaccount:{namespace}:{name}"


def rules_of(roles: Iterable[Mapping[str, Any]]) -> list[Rule]:
    """The resource rules of Role/ClusterRole manifests, one :class:`Rule` per API group."""
    rules: list[Rule] = []
    for role in roles:
        for rule in role.get("rules") or []:
            for group in rule.get("apiGroups") or []:
                rules.append(
                    Rule(
                        str(group),
                        tuple(rule.get("resources") or ()),
                        tuple(rule.get("verbs") or ()),
                        tuple(rule.get("resourceNames") or ()),
                    )
                )
    return rules


@dataclass
class InstalledRBAC:
    """What :func:`install_rbac` created; :meth:`remove` deletes what outlives the namespace."""

    namespace: str
    service_account: str
    roles: list[dict[str, Any]]
    created: list[tuple[str, str, str, str | None]] = field(default_factory=list)

    @property
    def user(self) -> str:
        """The ServiceAccount's user name (for ``run_operator`` and :func:`observed_rbac`)."""
        return service_account_user(self.namespace, self.service_account)

    @property
    def rules(self) -> list[Rule]:
        """Every rule granted (for ``missing_rules`` and ``unused_rules``)."""
        return rules_of(self.roles)

    async def remove(self, client: Client) -> None:
        """Delete the ClusterRoles and ClusterRoleBindings (namespaced objects go with the
        namespace)."""
        for api_version, kind, name, namespace in reversed(self.created):
            if namespace is not None:
                continue
            try:
                await client.delete(api_version, kind, name)
            except NotFound:
                pass


def _role_documents(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for item in paths:
        path = Path(item)
        files = [path / name for name in DEFAULT_ROLE_FILES] if path.is_dir() else [path]
        for file in files:
            if not file.exists():
                if path.is_dir():
                    continue
                raise FileNotFoundError(f"install_rbac: no such file: {file}")
            for document in yaml.safe_load_all(file.read_text()):
                if isinstance(document, dict) and document.get("kind") in ("Role", "ClusterRole"):
                    documents.append(document)
    return documents


async def install_rbac(
    client: Client,
    *roles: str | Path,
    namespace: str,
    service_account: str = DEFAULT_SERVICE_ACCOUNT,
    timeout: float = DEFAULT_WAIT_TIMEOUT,  # noqa: ASYNC109 - an upper bound, then fail
) -> InstalledRBAC:
    """Create ServiceAccount ``service_account`` in ``namespace`` and bind it to the Roles and
    ClusterRoles in ``roles`` (YAML files, or a ``config/rbac`` directory: its ``role.yaml``
    and ``leader_election_role.yaml``). Returns once the server enforces the bindings."""
    documents = _role_documents(roles)
    if not documents:
        raise ValueError(f"install_rbac: no Role or ClusterRole in {', '.join(map(str, roles))}")
    installed = InstalledRBAC(namespace, service_account, documents)
    subject = {"kind": "ServiceAccount", "name": service_account, "namespace": namespace}

    async def create(manifest: dict[str, Any]) -> None:
        await client.create(manifest)
        metadata = manifest["metadata"]
        installed.created.append(
            (manifest["apiVersion"], manifest["kind"], metadata["name"], metadata.get("namespace"))
        )

    await create(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": service_account, "namespace": namespace},
        }
    )
    for document in documents:
        cluster_wide = document["kind"] == "ClusterRole"
        original = document["metadata"]["name"]
        name = f"{namespace}-{original}" if cluster_wide else original
        metadata: dict[str, Any] = {"name": name}
        if not cluster_wide:
            metadata["namespace"] = namespace
        await create(
            {
                "apiVersion": RBAC_API,
                "kind": document["kind"],
                "metadata": metadata,
                "rules": document.get("rules") or [],
            }
        )
        await create(
            {
                "apiVersion": RBAC_API,
                "kind": "ClusterRoleBinding" if cluster_wide else "RoleBinding",
                "metadata": dict(metadata),
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": document["kind"],
                            "name": name},
                "subjects": [subject],
            }
        )  # fmt: skip
    await _wait_until_enforced(client, installed, timeout)
    return installed


async def _wait_until_enforced(
    client: Client,
    installed: InstalledRBAC,
    timeout: float,  # noqa: ASYNC109 - an upper bound, then fail
) -> None:
    """Wait until the server's authorizer has seen the bindings (it follows them by watch)."""
    probe = next((rule for rule in installed.rules if rule.resources and rule.verbs), None)
    if probe is None:
        return
    resource, _, subresource = probe.resources[0].partition("/")
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": installed.user,
            "groups": [
                "system:serviceaccounts",
                f"system:serviceaccounts:{installed.namespace}",
                "system:authenticated",
            ],
            "resourceAttributes": {
                "namespace": installed.namespace,
                "verb": probe.verbs[0],
                "group": probe.api_group,
                "resource": resource,
                "subresource": subresource,
            },
        },
    }

    async def allowed() -> bool:
        answer = await client.create(review)
        return bool((answer.get("status") or {}).get("allowed"))

    await wait_for(allowed, timeout=timeout, what=f"RBAC of {installed.user} to be enforced")


def observed_rbac(
    cluster: BackgroundCluster, username: str, *, cluster_wide: bool = False
) -> Suggestion:
    """What ``setpoint rbac suggest --user USERNAME`` prints for the session cluster's audit
    log so far: the least RBAC covering every request ``username`` made (allowed or not)."""
    path = cluster.audit_log_path
    if path is None:
        raise RuntimeError(
            "observed_rbac: this cluster keeps no audit log; start it with "
            "BackgroundCluster(audit_log=PATH) (the local_cluster fixture does)"
        )
    cluster.flush_audit_log()
    return suggest(read_audit_log(path), username, cluster_wide=cluster_wide)
