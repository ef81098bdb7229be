"""Status objects shaped exactly as kube-apiserver sends them."""

import json

from setpoint.api import (
    CauseType,
    StatusReason,
    failure_status,
    is_status,
    success_status,
)
from setpoint.api import field_errors as fe
from setpoint.api import status as st


def test_failure_status_shape_and_key_order() -> None:
    status = failure_status(
        404, StatusReason.NOT_FOUND, 'configmaps "x" not found', name="x", kind="configmaps"
    )
    assert json.dumps(status, separators=(",", ":")) == (
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"configmaps \\"x\\" not found","reason":"NotFound",'
        '"details":{"name":"x","kind":"configmaps"},"code":404}'
    )


def test_failure_status_without_details() -> None:
    assert st.bad_request("bad") == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "bad",
        "reason": "BadRequest",
        "code": 400,
    }


def test_success_status() -> None:
    assert success_status({"name": "x", "group": "", "kind": "widgets", "uid": "u"}) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "x", "kind": "widgets", "uid": "u"},
    }
    assert "details" not in success_status()


def test_not_found_and_already_exists_messages() -> None:
    assert (
        st.not_found("deployments", "web", group="apps")["message"]
        == 'deployments.apps "web" not found'
    )
    assert st.not_found("deployments", "web", group="apps")["details"] == {
        "name": "web",
        "group": "apps",
        "kind": "deployments",
    }
    exists = st.already_exists("configmaps", "c")
    assert (exists["code"], exists["reason"], exists["message"]) == (
        409,
        "AlreadyExists",
        'configmaps "c" already exists',
    )


def test_conflict_message() -> None:
    status = st.conflict(
        "widgets",
        "w",
        "the object has been modified; please apply your changes to the latest version and "
        "try again",
        group="example.com",
    )
    assert status["code"] == 409
    assert status["reason"] == StatusReason.CONFLICT
    assert status["message"] == (
        'Operation cannot be fulfilled on widgets.example.com "w": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_invalid_status_carries_causes() -> None:
    errors = [
        fe.invalid("spec.size", "string", 'spec.size in body must be of type integer: "string"'),
        fe.required("spec.name"),
    ]
    status = st.invalid("Widget", "w1", errors, group="example.com")
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == (
        'Widget.example.com "w1" is invalid: [spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string", spec.name: Required value]'
    )
    assert status["details"] == {
        "name": "w1",
        "group": "example.com",
        "kind": "Widget",
        "causes": [
            {
                "reason": CauseType.FIELD_VALUE_INVALID,
                "message": (
                    'Invalid value: "string": spec.size in body must be of type integer: "string"'
                ),
                "field": "spec.size",
            },
            {
                "reason": CauseType.FIELD_VALUE_REQUIRED,
                "message": "Required value",
                "field": "spec.name",
            },
        ],
    }
    single = st.invalid("ConfigMap", "c", [fe.invalid("metadata.name", "C", "bad")])
    assert single["message"] == 'ConfigMap "c" is invalid: metadata.name: Invalid value: "C": bad'


def test_invalid_status_with_one_error() -> None:
    error = fe.type_invalid(
        "spec.size", "string", 'spec.size in body must be of type integer: "string"'
    )
    status = st.invalid("Widget", "w1", [error], group="example.com")
    assert status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'Widget.example.com "w1" is invalid: spec.size: Invalid value: "string": '
        'spec.size in body must be of type integer: "string"',
        "reason": "Invalid",
        "details": {
            "name": "w1",
            "group": "example.com",
            "kind": "Widget",
            "causes": [
                {
                    "reason": "FieldValueTypeInvalid",
                    "message": 'Invalid value: "string": spec.size in body must be of type '
                    'integer: "string"',
                    "field": "spec.size",
                }
            ],
        },
        "code": 422,
    }


def test_invalid_status_aggregates_several_errors_in_brackets() -> None:
    errors = [fe.required("spec.a"), fe.required("spec.b"), fe.required("spec.a")]
    status = st.invalid("ConfigMap", "cm", errors)
    assert status["message"] == (
        'ConfigMap "cm" is invalid: [spec.a: Required value, spec.b: Required value]'
    )
    assert "group" not in status["details"]  # the core group is empty, omitted on the wire
    assert status["details"]["kind"] == "ConfigMap"
    assert len(status["details"]["causes"]) == 3  # causes are not deduplicated upstream


def test_invalid_status_without_errors() -> None:
    status = st.invalid("Widget", "w", [], group="example.com")
    assert status["message"] == 'Widget.example.com "w" is invalid'
    assert "causes" not in status["details"]


def test_qualified_kind_and_resource() -> None:
    assert st.qualified_kind("Widget", "example.com") == "Widget.example.com"
    assert st.qualified_kind("Pod", "") == "Pod"
    assert st.qualified_resource("deployments", "apps") == "deployments.apps"
    assert st.qualified_resource("configmaps", "") == "configmaps"


def test_cause_types_match_field_error_types() -> None:
    assert fe.required("a").cause()["reason"] == CauseType.FIELD_VALUE_REQUIRED
    assert fe.too_many("a", 2, 1).cause()["reason"] == CauseType.FIELD_VALUE_TOO_MANY


def test_expired_watch_error() -> None:
    assert st.resource_expired("too old resource version: 5 (10)") == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "too old resource version: 5 (10)",
        "reason": "Expired",
        "code": 410,
    }


def test_other_constructors() -> None:
    assert st.method_not_supported("widgets", "create", group="x.io")["message"] == (
        'create is not supported on resources of kind "widgets.x.io"'
    )
    assert st.unsupported_media_type(
        ["application/json-patch+json", "application/merge-patch+json"]
    )["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json"
    )
    assert st.not_acceptable(["application/json"])["code"] == 406
    assert (
        st.forbidden("secrets", "", 'User "x" cannot list')["message"]
        == 'secrets is forbidden: User "x" cannot list'
    )
    assert st.forbidden("secrets", "s", "no")["message"] == 'secrets "s" is forbidden: no'
    assert st.unauthorized()["message"] == "not authorized"
    assert st.too_many_requests("slow down", retry_after=2)["details"] == {"retryAfterSeconds": 2}
    assert st.timeout("took too long", 1)["message"] == "Timeout: took too long"
    internal = st.internal_error("boom")
    assert internal["message"] == "Internal error occurred: boom"
    assert internal["details"] == {"causes": [{"message": "boom"}]}
    assert st.request_entity_too_large("limit is 3145728")["code"] == 413
    assert st.service_unavailable("later")["reason"] == "ServiceUnavailable"
    assert st.gone("gone")["reason"] == "Gone"
    conflict = st.apply_conflict(
        'Apply failed with 1 conflict: conflict with "kubectl" using v1: .data.a',
        [
            {
                "reason": CauseType.FIELD_MANAGER_CONFLICT,
                "message": 'conflict with "kubectl" using v1',
                "field": ".data.a",
            }
        ],
    )
    assert conflict["details"]["causes"][0]["reason"] == "FieldManagerConflict"


def test_reason_for_code_and_is_status() -> None:
    assert st.reason_for_code(409) == "Conflict"
    assert st.reason_for_code(422) == "Invalid"
    assert st.reason_for_code(418) == ""
    assert is_status(st.not_found("pods", "p"))
    assert not is_status({"kind": "Pod", "apiVersion": "v1"})
    assert not is_status(None)
