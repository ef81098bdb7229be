"""Signs approved CertificateSigningRequests with the cluster's certificate authority."""

from __future__ import annotations

import base64
import datetime
from typing import Any, ClassVar, Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from setpoint.cluster.apiserver.kinds.certificate_signing_requests import (
    APPROVED,
    DENIED,
    FAILED,
    parse_request,
)
from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import ObjectKey
from setpoint.cluster.controllers.framework.timestamps import time_text
from setpoint.cluster.controllers.workload_context import WriteError

CSRS: Final = "certificates.k8s.io/certificatesigningrequests"
#: The signers this controller serves and the usages each allows (upstream's
#: ``csrsigning`` validators).
CLIENT_USAGES: Final = frozenset({"digital signature", "key encipherment", "client auth"})
SIGNERS: Final = {
    "kubernetes.io/kube-apiserver-client": CLIENT_USAGES,
    "kubernetes.io/kube-apiserver-client-kubelet": CLIENT_USAGES,
}
#: ``--cluster-signing-duration``'s default: a year.
MAX_DURATION: Final = datetime.timedelta(days=365)
#: The shortest ``expirationSeconds`` upstream honours.
MIN_DURATION: Final = datetime.timedelta(seconds=600)
#: Certificates start this much in the past, for clocks slightly behind (upstream: 5 min).
BACKDATE: Final = datetime.timedelta(minutes=5)


def _has(csr: dict[str, Any], kind: str) -> bool:
    return any(
        isinstance(c, dict) and c.get("type") == kind and c.get("status", "True") == "True"
        for c in (csr.get("status") or {}).get("conditions") or []
    )


def _key_usage(usages: set[str]) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature="digital signature" in usages,
        content_commitment=False,
        key_encipherment="key encipherment" in usages,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def sign(
    request: x509.CertificateSigningRequest,
    usages: set[str],
    authority_pem: bytes,
    authority_key_pem: bytes,
    expiration_seconds: int | None,
    now: datetime.datetime,
) -> bytes:
    """The PEM certificate for ``request`` signed by the authority."""
    authority = x509.load_pem_x509_certificate(authority_pem)
    key = serialization.load_pem_private_key(authority_key_pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
        raise ValueError("the certificate authority's key cannot sign")
    duration = MAX_DURATION
    if expiration_seconds is not None:
        duration = max(MIN_DURATION, min(duration, datetime.timedelta(seconds=expiration_seconds)))
    builder = (
        x509.CertificateBuilder()
        .subject_name(request.subject)
        .issuer_name(authority.subject)
        .public_key(request.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + duration, authority.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(usages), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False
        )
    )
    if "client auth" in usages:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


class CSRSigningController(Controller):
    """Issues certificates for approved requests to the signers it serves."""

    name: ClassVar[str] = "csrsigning"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:serviceaccount:kube-system:certificate-controller",
            field_manager="kube-controller-manager",
            component="csrsigning-controller",
        )

    def watches(self) -> list[Watch]:
        if self.options.signing_authority is None:
            return []
        return [Watch(CSRS)]

    async def reconcile(self, key: ObjectKey) -> float | None:
        authority = self.options.signing_authority
        current = self.access.get(CSRS, "", key.name)
        if authority is None or current is None:
            return None
        spec = current.get("spec") or {}
        allowed = SIGNERS.get(spec.get("signerName") or "")
        status = current.get("status") or {}
        if (
            allowed is None
            or status.get("certificate")
            or not _has(dict(current), APPROVED)
            or _has(dict(current), DENIED)
            or _has(dict(current), FAILED)
        ):
            return None
        csr = dict(current)
        usages = {u for u in spec.get("usages") or [] if isinstance(u, str)}
        request = parse_request(spec.get("request"))
        problem = ""
        if isinstance(request, str):
            problem = request
        elif not usages <= allowed or "client auth" not in usages:
            problem = f"invalid usage for client certificate: {', '.join(sorted(usages - allowed))}"
            if "client auth" not in usages:
                problem = "missing required usages: client auth"
        new_status = dict(status)
        if problem or isinstance(request, str):
            now = time_text(self.access.clock)
            failed = {
                "type": FAILED,
                "status": "True",
                "reason": "SignerValidationFailure",
                "message": problem,
                "lastUpdateTime": now,
                "lastTransitionTime": now,
            }
            new_status["conditions"] = [*(status.get("conditions") or []), failed]
        else:
            expiration = spec.get("expirationSeconds")
            pem = sign(
                request,
                usages,
                authority.certificate_pem,
                authority.key_pem,
                expiration if isinstance(expiration, int) else None,
                datetime.datetime.now(datetime.UTC),
            )
            new_status["certificate"] = base64.b64encode(pem).decode()
        csr["status"] = new_status
        try:
            await self.access.update_status(CSRS, csr)
        except WriteError as exc:
            if exc.code not in (404, 409):
                raise
        return None
