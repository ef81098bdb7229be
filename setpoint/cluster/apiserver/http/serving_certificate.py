"""The certificates of the local API server's HTTPS listener, and the authority issuing them.

Why HTTPS at all on a loopback server: kubectl (client-go's ``clientcmd``) sends a kubeconfig's
bearer token only over TLS, so a token-protected server must offer TLS for kubectl to log in.
The server serves a certificate for ``127.0.0.1`` and ``localhost`` issued by the cluster's
certificate authority, which the kubeconfig carries and which also vouches for client
certificates. An in-memory server makes a fresh authority at every start; a server with a data
directory keeps it there (:mod:`setpoint.cluster.identity`), so clients keep trusting it across
restarts and re-issues. (:func:`generate_serving_certificate` makes a self-signed one, for
tests.)
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: A local server's certificate outlives any test session or dev loop by far.
VALIDITY: Final = datetime.timedelta(days=365)
#: Clock skew tolerated for clients whose clock is slightly behind.
BACKDATE: Final = datetime.timedelta(hours=1)
COMMON_NAME: Final = "setpoint-local-apiserver"
AUTHORITY_COMMON_NAME: Final = "setpoint-local-ca"
#: A kept authority lasts as long as any data directory is likely to.
AUTHORITY_VALIDITY: Final = datetime.timedelta(days=3650)


@dataclass(frozen=True, slots=True)
class ServingCertificate:
    """PEM certificate and key, and the PEM of the authority clients trust.

    Without ``authority_pem`` the certificate is self-signed and is its own authority.
    """

    certificate_pem: bytes
    key_pem: bytes
    authority_pem: bytes | None = None

    @property
    def trusted_pem(self) -> bytes:
        """What a client's kubeconfig carries as ``certificate-authority-data``."""
        return self.authority_pem or self.certificate_pem

    def server_context(self, client_ca_pem: bytes | None = None) -> ssl.SSLContext:
        """An SSL context serving this certificate.

        With ``client_ca_pem`` it asks clients for a certificate (without requiring one) and
        accepts only those that chain to that authority; the handshake fails for others.
        """
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        if client_ca_pem is not None:
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(cadata=client_ca_pem.decode("ascii"))
        # The ssl module loads certificates from files only; keep them on disk just long enough.
        with tempfile.TemporaryDirectory(prefix="setpoint-tls-") as directory:
            cert_path = os.path.join(directory, "tls.crt")
            key_path = os.path.join(directory, "tls.key")
            with open(cert_path, "wb") as handle:
                handle.write(self.certificate_pem)
            fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(self.key_pem)
            context.load_cert_chain(cert_path, key_path)
        return context


@dataclass(frozen=True, slots=True)
class CertificateAuthority:
    """The cluster's certificate authority: PEM certificate and key.

    It issues the serving certificate and, unless another client CA is given, is the
    authority client certificates must chain to.
    """

    certificate_pem: bytes
    key_pem: bytes

    @classmethod
    def generate(cls) -> CertificateAuthority:
        """A new authority (see :func:`generate_authority`)."""
        return cls(*generate_authority())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _serving_names() -> x509.SubjectAlternativeName:
    return x509.SubjectAlternativeName(
        [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    )


def generate_serving_certificate() -> ServingCertificate:
    """A new EC P-256 key and a self-signed certificate for 127.0.0.1 and localhost."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
        .add_extension(_serving_names(), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return ServingCertificate(
        certificate_pem=certificate.public_bytes(serialization.Encoding.PEM),
        key_pem=_key_pem(key),
    )


def generate_authority() -> tuple[bytes, bytes]:
    """A new certificate authority: (certificate PEM, key PEM), valid for ten years."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, AUTHORITY_COMMON_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + AUTHORITY_VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key)


def issue_serving_certificate(authority_pem: bytes, authority_key_pem: bytes) -> ServingCertificate:
    """A serving certificate for 127.0.0.1 and localhost, signed by the given authority."""
    authority = x509.load_pem_x509_certificate(authority_pem)
    authority_key = serialization.load_pem_private_key(authority_key_pem, password=None)
    if not isinstance(authority_key, ec.EllipticCurvePrivateKey):
        raise ValueError("the certificate authority's key is not an EC key")
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, COMMON_NAME)]))
        .issuer_name(authority.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(min(now + VALIDITY, authority.not_valid_after_utc))
        .add_extension(_serving_names(), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(authority_key, hashes.SHA256())
    )
    return ServingCertificate(
        certificate_pem=certificate.public_bytes(serialization.Encoding.PEM),
        key_pem=_key_pem(key),
        authority_pem=authority_pem,
    )


def expires_within(certificate_pem: bytes, margin: datetime.timedelta) -> bool:
    """Whether the certificate is no longer valid ``margin`` from now."""
    certificate = x509.load_pem_x509_certificate(certificate_pem)
    return certificate.not_valid_after_utc <= datetime.datetime.now(datetime.UTC) + margin
