"""A self-signed serving certificate for the local API server's HTTPS listener.

Why HTTPS at all on a loopback server: kubectl (client-go's ``clientcmd``) sends a kubeconfig's
bearer token only over TLS, so a token-protected server must offer TLS for kubectl to log in.
The certificate is made fresh at every start, for ``127.0.0.1`` and ``localhost``, and the
kubeconfig carries it as its certificate authority.
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


@dataclass(frozen=True, slots=True)
class ServingCertificate:
    """PEM certificate and key; the certificate is also the clients' CA."""

    certificate_pem: bytes
    key_pem: bytes

    def server_context(self) -> ssl.SSLContext:
        """An SSL context serving this certificate."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
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
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return ServingCertificate(
        certificate_pem=certificate.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
