"""AdmissionReview in and out: the request a handler reads, the response it gives.

A review arrives as ``admission.k8s.io/v1`` or ``v1beta1`` and is answered in the same version
with the request's ``uid``. :class:`MalformedReview` marks a body that is not a review at all
(the server answers 400); :class:`Denied` is what a handler raises to refuse a write.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import msgspec

from setpoint.api.field_errors import FieldError
from setpoint.api.status import invalid as invalid_status

REVIEW_VERSIONS: Final = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
_ENCODE: Final = msgspec.json.Encoder().encode


class MalformedReview(ValueError):
    """The body is not an AdmissionReview with a request (answered with HTTP 400)."""


class Denied(Exception):
    """Raised by a handler to refuse the write: ``message``, ``reason`` and HTTP ``code``.

    The API server tells the client ``admission webhook "<name>" denied the request:
    <message>`` with this code (403 by default, as controller-runtime's ``Denied``), and passes
    ``details`` (a ``StatusDetails``: ``group``, ``kind``, ``name``, ``causes``) on as they are.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str = "Forbidden",
        code: int = 403,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.code = code
        self.details = details

    @classmethod
    def invalid(
        cls, kind: str, name: str, errors: Sequence[FieldError], *, group: str = ""
    ) -> Denied:
        """apimachinery's ``NewInvalid``: 422 ``<Kind>.<group> "<name>" is invalid: <errors>``
        with one cause per error, what a Go webhook returns for a list of field errors
        (kubectl then prints ``The <Kind> "<name>" is invalid: <field>: ...``)."""
        status = invalid_status(kind, name, errors, group=group)
        return cls(status["message"], reason=status["reason"], code=422, details=status["details"])


@dataclass(frozen=True, slots=True)
class AdmissionRequest:
    """The ``request`` of an AdmissionReview, with the fields handlers use by name."""

    uid: str
    api_version: str
    operation: str
    group: str
    version: str
    kind: str
    resource: str
    sub_resource: str
    namespace: str
    name: str
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    dry_run: bool
    user_info: dict[str, Any]
    #: The whole ``request`` as sent.
    raw: dict[str, Any]

    @classmethod
    def from_review(cls, review: Any) -> AdmissionRequest:
        """Read a decoded AdmissionReview; :class:`MalformedReview` when it is not one."""
        if not isinstance(review, dict):
            raise MalformedReview("the body is not a JSON object")
        api_version = review.get("apiVersion")
        if review.get("kind") != "AdmissionReview" or api_version not in REVIEW_VERSIONS:
            raise MalformedReview(
                f"expected an admission.k8s.io/v1 AdmissionReview, got apiVersion "
                f"{api_version!r} kind {review.get('kind')!r}"
            )
        request = review.get("request")
        if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
            raise MalformedReview("the AdmissionReview has no request with a uid")
        kind = request.get("kind") or {}
        resource = request.get("resource") or {}
        obj = request.get("object")
        old = request.get("oldObject")
        user = request.get("userInfo")
        return cls(
            uid=request["uid"],
            api_version=str(api_version),
            operation=str(request.get("operation") or ""),
            group=str(kind.get("group") or ""),
            version=str(kind.get("version") or ""),
            kind=str(kind.get("kind") or ""),
            resource=str(resource.get("resource") or ""),
            sub_resource=str(request.get("subResource") or ""),
            namespace=str(request.get("namespace") or ""),
            name=str(request.get("name") or ""),
            object=obj if isinstance(obj, dict) else None,
            old_object=old if isinstance(old, dict) else None,
            dry_run=request.get("dryRun") is True,
            user_info=user if isinstance(user, dict) else {},
            raw=request,
        )


@dataclass(slots=True)
class AdmissionResponse:
    """What a handler answers: allowed or not, a JSON patch, warnings."""

    allowed: bool = True
    message: str = ""
    reason: str = ""
    code: int = 200
    patch: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The refusal's ``status.details`` (see :meth:`Denied.invalid`).
    details: dict[str, Any] | None = None

    @classmethod
    def denied(cls, denial: Denied, warnings: list[str] | None = None) -> AdmissionResponse:
        """The response of a refusal."""
        return cls(
            allowed=False,
            message=denial.message,
            reason=denial.reason,
            code=denial.code,
            warnings=list(warnings or []),
            details=denial.details,
        )

    def to_review(self, request_uid: str, api_version: str) -> dict[str, Any]:
        """The AdmissionReview answering the request ``request_uid``, in ``api_version``."""
        response: dict[str, Any] = {"uid": request_uid, "allowed": self.allowed}
        status: dict[str, Any] = {"code": self.code}
        if self.message:
            status["message"] = self.message
        if self.reason:
            status["reason"] = self.reason
        if self.details:
            status["details"] = self.details
        response["status"] = status
        if self.patch:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(_ENCODE(self.patch)).decode("ascii")
        if self.warnings:
            response["warnings"] = list(self.warnings)
        return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}
