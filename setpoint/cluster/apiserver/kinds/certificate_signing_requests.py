"""CertificateSigningRequests (``certificates.k8s.io/v1``): who asked, and what may change.

As upstream's strategy (``pkg/registry/certificates/certificates/strategy.go``): on create the
requesting user's name, uid, groups and extra attributes replace whatever ``spec`` claimed and
the status is cleared; the spec never changes afterwards; approval conditions are written
through ``/approval`` and the certificate through ``/status`` (the signer's, see
``setpoint.cluster.controllers.csr_signing``). Conditions get their timestamps when a writer
leaves them out. ``spec.request`` must be a PEM ``CERTIFICATE REQUEST`` whose signature holds,
``spec.usages`` must be given and ``expirationSeconds`` may not be under ten minutes.

And as upstream's admission plugins: a request to ``kubernetes.io/kube-apiserver-client`` may
not ask for the ``system:masters`` group (CertificateSubjectRestriction); approving or denying
needs the ``approve`` verb on ``signers`` named after the request's signer (or its
``domain/*``) in ``certificates.k8s.io`` (CertificateApproval), and writing the certificate the
``sign`` verb (CertificateSigning): else ``403``.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable
from typing import Any, Final

from cryptography import x509

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authorization.attributes import Attributes
from setpoint.cluster.apiserver.auth.authorization.authorizers import Authorizer
from setpoint.cluster.apiserver.auth.identity import ADMIN
from setpoint.cluster.apiserver.auth.request_user import acting_user
from setpoint.cluster.apiserver.registry.kind_behaviour import BuiltinValidator, KindBehaviour
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.server_clock import server_time

APPROVED: Final = "Approved"
DENIED: Final = "Denied"
FAILED: Final = "Failed"
_PEM_TYPE_MESSAGE: Final = "PEM block type must be CERTIFICATE REQUEST"
#: The shortest certificate lifetime a request may ask for.
MIN_EXPIRATION_SECONDS: Final = 600
GROUP: Final = "certificates.k8s.io"
PLURAL: Final = "certificatesigningrequests"
KUBE_APISERVER_CLIENT: Final = "kubernetes.io/kube-apiserver-client"
PRIVILEGED_GROUP: Final = "system:masters"


def parse_request(encoded: object) -> x509.CertificateSigningRequest | str:
    """The CSR in ``spec.request`` (base64 of PEM), or why it is not one."""
    if not isinstance(encoded, str):
        return _PEM_TYPE_MESSAGE
    try:
        pem = base64.b64decode(encoded, validate=False)
    except (binascii.Error, ValueError):
        return _PEM_TYPE_MESSAGE
    if b"-----BEGIN CERTIFICATE REQUEST-----" not in pem:
        return _PEM_TYPE_MESSAGE
    try:
        request = x509.load_pem_x509_csr(pem)
    except ValueError as exc:
        return f"unable to parse CSR: {exc}"
    if not request.is_signature_valid:
        return "x509: ECDSA verification failure"
    return request


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(server_time()))


def _stamp_conditions(new: dict[str, Any], old: dict[str, Any] | None) -> None:
    """``populateConditionTimestamps``: fill lastUpdateTime; lastTransitionTime from the old
    condition of the same type and status, else now."""
    conditions = (new.get("status") or {}).get("conditions")
    if not isinstance(conditions, list):
        return
    before = {
        (c.get("type"), c.get("status")): c
        for c in ((old or {}).get("status") or {}).get("conditions") or []
        if isinstance(c, dict)
    }
    now = _now()
    for condition in conditions:
        if not isinstance(condition, dict):
            continue
        condition.setdefault("status", "True")
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            previous = before.get((condition.get("type"), condition.get("status")))
            condition["lastTransitionTime"] = (previous or {}).get("lastTransitionTime") or now


def _forbidden(obj: dict[str, Any], why: str) -> status_errors.APIError:
    name = str((obj.get("metadata") or {}).get("name") or "")
    return status_errors.forbidden(GROUP, PLURAL, name, why)


def _restrict_subject(obj: dict[str, Any], spec: dict[str, Any]) -> None:
    """CertificateSubjectRestriction (a validating plugin: after the object's validation)."""
    if spec.get("signerName") != KUBE_APISERVER_CLIENT:
        return
    request = parse_request(spec.get("request"))
    if isinstance(request, str):
        raise _forbidden(obj, f"failed to parse CSR: {request}")
    organizations = request.subject.get_attributes_for_oid(x509.NameOID.ORGANIZATION_NAME)
    if any(attribute.value == PRIVILEGED_GROUP for attribute in organizations):
        raise _forbidden(
            obj,
            f"use of {KUBE_APISERVER_CLIENT} signer with {PRIVILEGED_GROUP} group is not allowed",
        )


class CertificateSigningRequestBehaviour(KindBehaviour):
    """CSR rules: the requester recorded, the spec immutable, conditions stamped, and who may
    approve and sign for which signer."""

    def __init__(
        self,
        validator: BuiltinValidator | None = None,
        authorizer: Callable[[], Authorizer] | None = None,
    ) -> None:
        super().__init__(validator)
        self._authorizer = authorizer

    def _may(self, verb: str, signer: str) -> bool:
        """``IsAuthorizedForSignerName``: ``verb`` on ``signers`` named ``signer`` or
        ``domain/*``. The server's own writes (no acting user) always may."""
        user = acting_user.get()
        if user is None or self._authorizer is None:
            return True
        authorizer = self._authorizer()
        names = [signer]
        if "/" in signer:
            names.append(signer.split("/", 1)[0] + "/*")
        return any(
            authorizer.authorize(
                Attributes(user, verb, api_group=GROUP, resource="signers", name=name)
            ).allowed
            for name in names
        )

    def prepare_create(self, resource: ServedResource, obj: dict[str, Any]) -> None:
        super().prepare_create(resource, obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        user = acting_user.get() or ADMIN
        for key in ("username", "uid", "groups", "extra"):
            spec.pop(key, None)
        spec["username"] = user.username
        if user.uid:
            spec["uid"] = user.uid
        if user.groups:
            spec["groups"] = list(user.groups)
        if user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra.items()}

    def prepare_update(
        self, resource: ServedResource, new: dict[str, Any], old: dict[str, Any]
    ) -> None:
        if "spec" in old:
            new["spec"] = old["spec"]
        _stamp_conditions(new, old)

    def kind_errors(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        subresource: str,
    ) -> list[FieldError]:
        errors: list[FieldError] = []
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        assert isinstance(spec, dict)
        signer = str(spec.get("signerName") or "")
        if subresource == "approval" and not self._may("approve", signer):
            raise _forbidden(
                obj, f'user not permitted to approve requests with signerName "{signer}"'
            )
        if (
            subresource == "status"
            and old is not None
            and (obj.get("status") or {}).get("certificate")
            != (old.get("status") or {}).get("certificate")
            and not self._may("sign", signer)
        ):
            raise _forbidden(obj, f'user not permitted to sign requests with signerName "{signer}"')
        if old is None and "request" in spec:
            parsed = parse_request(spec.get("request"))
            if isinstance(parsed, str):
                errors.append(fe.invalid("spec.request", spec.get("request"), parsed))
        if old is None and not spec.get("usages"):
            errors.append(fe.required("spec.usages", "usages must be provided"))
        expiration = spec.get("expirationSeconds")
        if old is None and isinstance(expiration, int) and expiration < MIN_EXPIRATION_SECONDS:
            errors.append(
                fe.invalid(
                    "spec.expirationSeconds",
                    expiration,
                    "may not specify a duration less than 600 seconds (10 minutes)",
                )
            )
        conditions = (obj.get("status") or {}).get("conditions") or []
        kinds = [c.get("type") for c in conditions if isinstance(c, dict)]
        for index, kind in enumerate(kinds):
            if kind == DENIED and APPROVED in kinds:
                errors.append(
                    fe.invalid(
                        f"status.conditions[{index}].type",
                        kind,
                        "Approved and Denied conditions are mutually exclusive",
                    )
                )
            if kinds.count(kind) > 1 and kinds.index(kind) != index:
                errors.append(fe.duplicate(f"status.conditions[{index}].type", kind))
        if old is None and not errors:
            _restrict_subject(obj, spec)
        return errors
