"""Client certificates: a user is whoever the cluster's client CA says it is.

A certificate signed by the client CA authenticates its subject: the common name is the user
name and each organization a group (``system:authenticated`` is added), as kube-apiserver's
``--client-ca-file`` authenticator reads it. The TLS listener *requests* a certificate without
requiring one, so token clients are unaffected; the TLS layer checks the chain, and this module
reads the verified certificate. :func:`issue_client_certificate` signs one for a user (for a
kubeconfig, or a test).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from setpoint.cluster.apiserver.auth.identity import AUTHENTICATED_GROUP, UserInfo

#: A user certificate from the local cluster's CA lasts a year, as kubeadm's.
CLIENT_VALIDITY: Final = datetime.timedelta(days=365)
#: Clock skew tolerated for servers whose clock is slightly behind.
BACKDATE: Final = datetime.timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class ClientCertificate:
    """A user's PEM certificate and private key."""

    certificate_pem: bytes
    key_pem: bytes


def issue_client_certificate(
    authority_pem: bytes,
    authority_key_pem: bytes,
    user: str,
    groups: Sequence[str] = (),
    *,
    validity: datetime.timedelta = CLIENT_VALIDITY,
) -> ClientCertificate:
    """A client certificate for ``user`` (CN) in ``groups`` (O), signed by the authority."""
    if not user:
        raise ValueError("a client certificate needs a user name (its common name)")
    authority = x509.load_pem_x509_certificate(authority_pem)
    authority_key = serialization.load_pem_private_key(authority_key_pem, password=None)
    if not isinstance(authority_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the certificate authority's key is not an EC key")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, group) for group in groups]
        + [x509.NameAttribute(NameOID.COMMON_NAME, user)]
    )
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(authority.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + validity, authority.not_valid_after_utc))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(authority_key.public_key()),
            critical=False,
        )
        .sign(authority_key, hashes.SHA256())
    )
    return ClientCertificate(
        certificate.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def certificate_user(der: bytes) -> UserInfo | None:
    """The user a verified client certificate names (None without a common name or when it
    is not meant for client authentication)."""
    certificate = x509.load_der_x509_certificate(der)
    try:
        usage = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        usage = None
    if usage is not None and ExtendedKeyUsageOID.CLIENT_AUTH not in usage:
        return None
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    user = str(names[0].value) if names else ""
    if not user:
        return None
    groups = [
        str(attribute.value)
        for attribute in certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    ]
    if AUTHENTICATED_GROUP not in groups:
        groups.append(AUTHENTICATED_GROUP)
    return UserInfo(user, tuple(groups))
