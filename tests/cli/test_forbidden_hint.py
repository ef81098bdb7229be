"""A refusal by RBAC names the missing rule, as a reconciler's ``permissions=`` declares it."""

from __future__ import annotations

from setpoint.cli.run_errors import describe_failure
from setpoint.client.errors import Forbidden, error_from_status


def forbidden(message: str) -> Forbidden:
    error = error_from_status({"kind": "Status", "code": 403, "reason": "Forbidden",
                               "message": message})  # fmt: skip
    assert isinstance(error, Forbidden)
    return error


def test_the_missing_permission_is_read_from_kube_apiservers_message() -> None:
    namespaced = forbidden(
        'pods "p" is forbidden: User "system:serviceaccount:ns:op" cannot get resource '
        '"pods/log" in API group "" in the namespace "ns"'
    )
    assert namespaced.missing_permission == 'Permission("", "pods/log", ["get"])'
    cluster_wide = forbidden(
        'nodes is forbidden: User "u" cannot list resource "nodes" in API group "" at the '
        "cluster scope"
    )
    assert cluster_wide.missing_permission == 'Permission("", "nodes", ["list"])'
    assert forbidden("denied by an admission webhook").missing_permission == ""


def test_setpoint_run_names_it_in_its_one_line() -> None:
    error = forbidden(
        'leases.coordination.k8s.io is forbidden: User "u" cannot create resource "leases" in '
        'API group "coordination.k8s.io" in the namespace "ops"'
    )
    line = describe_failure(error)
    assert line is not None and "\n" not in line
    assert 'missing permission: Permission("coordination.k8s.io", "leases", ["create"])' in line
