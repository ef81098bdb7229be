"""Failure Status objects as kube-apiserver writes them: empty fields left out (``omitempty``)."""

from __future__ import annotations

from setpoint.cluster.apiserver.status_errors import APIError


def test_an_error_without_a_reason_writes_no_reason() -> None:
    # A webhook may deny with a code of its own and no reason; metav1.Status omits both
    # reason and message when empty.
    status = APIError(418, "", "").to_status()

    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "code": 418,
    }


def test_an_error_keeps_kube_apiservers_key_order() -> None:
    status = APIError(404, "NotFound", 'configmaps "x" not found').to_status()

    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "code"]
