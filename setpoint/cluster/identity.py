"""What makes a local cluster the same cluster after a restart: its token, keys, TLS and ports.

With a data directory, the first start creates a certificate authority, a serving certificate
issued by it, the key that signs service account tokens and the admin bearer token, and writes
them there (``pki/ca.crt``, ``pki/ca.key``, ``pki/apiserver.crt``, ``pki/apiserver.key``,
``pki/sa.key``, ``admin.token``; every file mode 0600, the ``pki`` directory 0700), with the
ports the server listened on (``serving.json``). Later starts read them back: clients holding
the old kubeconfig (an operator that kept running, kubectl), a service account token or a
client certificate still trust the certificate and still authenticate, on the same ports when
they are free. A
serving certificate close to expiry is re-issued by the same authority, which clients already
trust. Without a data directory (``--in-memory``) nothing is kept: every start is a new
cluster.
"""

from __future__ import annotations

import datetime
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from setpoint.cluster.apiserver.auth.authentication.client_certificates import (
    issue_client_certificate,
)
from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import (
    generate_signing_key,
)
from setpoint.cluster.apiserver.http.serving_certificate import (
    CertificateAuthority,
    ServingCertificate,
    expires_within,
    generate_authority,
    issue_serving_certificate,
)
from setpoint.cluster.data_directory import private_data_dir
from setpoint.cluster.kubeconfig_file import write_user_kubeconfig

PKI_DIR: Final = "pki"
AUTHORITY_CERT: Final = "ca.crt"
AUTHORITY_KEY: Final = "ca.key"
SERVING_CERT: Final = "apiserver.crt"
SERVING_KEY: Final = "apiserver.key"
#: The service account token signing key (kubeadm's name).
SERVICE_ACCOUNT_KEY: Final = "sa.key"
TOKEN_FILE: Final = "admin.token"
PORTS_FILE: Final = "serving.json"
#: Bytes of randomness in a generated bearer token (256 bits).
TOKEN_BYTES: Final = 32
#: A serving certificate this close to its end is replaced at start.
RENEW_BEFORE: Final = datetime.timedelta(days=30)


class IdentityError(RuntimeError):
    """The identity files of a data directory cannot be read or written."""


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    """A cluster's admin token, keys, certificates and last ports."""

    token: str
    certificate: ServingCertificate
    authority: CertificateAuthority
    service_account_key_pem: bytes
    port: int = 0
    https_port: int = 0


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, readable by the owner only."""
    temporary = path.with_name(f".{path.name}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise IdentityError(f"cannot read {path}: {error.strerror or error}") from error


def load_or_create_identity(directory: str | Path) -> ClusterIdentity:
    """The identity kept in ``directory``, created (and written) where parts are missing."""
    # Private before the first file goes in (refused if another user owns it).
    root = private_data_dir(directory)
    pki = root / PKI_DIR
    try:
        pki.mkdir(mode=0o700, exist_ok=True)
        os.chmod(pki, 0o700)
        return _load_or_create(root, pki)
    except OSError as error:
        raise IdentityError(
            f"cannot keep the cluster identity in {root}: {error.strerror or error}"
        ) from error
    except ValueError as error:  # unreadable PEM
        raise IdentityError(
            f"the certificates in {pki} cannot be read ({error}); remove that directory to "
            "make new ones (clients then need the new kubeconfig)"
        ) from error


def _load_or_create(root: Path, pki: Path) -> ClusterIdentity:
    authority = _read(pki / AUTHORITY_CERT)
    authority_key = _read(pki / AUTHORITY_KEY)
    if authority is None or authority_key is None:
        authority, authority_key = generate_authority()
        _write_private(pki / AUTHORITY_KEY, authority_key)
        _write_private(pki / AUTHORITY_CERT, authority)
        for stale in (SERVING_CERT, SERVING_KEY):
            (pki / stale).unlink(missing_ok=True)
    serving = _read(pki / SERVING_CERT)
    serving_key = _read(pki / SERVING_KEY)
    if serving is None or serving_key is None or expires_within(serving, RENEW_BEFORE):
        issued = issue_serving_certificate(authority, authority_key)
        _write_private(pki / SERVING_KEY, issued.key_pem)
        _write_private(pki / SERVING_CERT, issued.certificate_pem)
        certificate = issued
    else:
        certificate = ServingCertificate(serving, serving_key, authority)
    service_account_key = _read(pki / SERVICE_ACCOUNT_KEY)
    if service_account_key is None:
        service_account_key = generate_signing_key()
        _write_private(pki / SERVICE_ACCOUNT_KEY, service_account_key)
    token_bytes = _read(root / TOKEN_FILE)
    token = token_bytes.decode().strip() if token_bytes else ""
    if not token:
        token = secrets.token_urlsafe(TOKEN_BYTES)
        _write_private(root / TOKEN_FILE, token.encode() + b"\n")
    port, https_port = _read_ports(root / PORTS_FILE)
    return ClusterIdentity(
        token,
        certificate,
        CertificateAuthority(authority, authority_key),
        service_account_key,
        port,
        https_port,
    )


def _read_ports(path: Path) -> tuple[int, int]:
    raw = _read(path)
    if raw is None:
        return 0, 0
    try:
        document = json.loads(raw)
        port, https_port = int(document["port"]), int(document["httpsPort"])
    except (ValueError, KeyError, TypeError):
        return 0, 0  # a damaged record only costs the old ports
    return port, https_port


def remember_ports(directory: str | Path, port: int, https_port: int) -> None:
    """Record the ports a server listens on, to listen on them again after a restart."""
    document = json.dumps({"port": port, "httpsPort": https_port}).encode()
    _write_private(Path(directory).expanduser() / PORTS_FILE, document + b"\n")


def write_user_kubeconfig_for(
    directory: str | Path, output: str | Path, user: str, groups: tuple[str, ...] = ()
) -> Path:
    """Write a kubeconfig for ``user`` in ``groups`` of the cluster kept in ``directory``.

    The client certificate is signed by that cluster's CA and the server is its last HTTPS
    port; the cluster must have been started once (its identity exists), and must not have
    been given another ``--client-ca``.
    """
    root = Path(directory).expanduser()
    if root.exists():
        private_data_dir(root)  # a CA key another user planted must not sign for us
    pki = root / PKI_DIR
    authority = _read(pki / AUTHORITY_CERT)
    authority_key = _read(pki / AUTHORITY_KEY)
    _, https_port = _read_ports(root / PORTS_FILE)
    if authority is None or authority_key is None or not https_port:
        raise IdentityError(
            f"no cluster has run with --data-dir {root} yet: start "
            f"'setpoint cluster serve --data-dir {root}' once first"
        )
    try:
        issued = issue_client_certificate(authority, authority_key, user, groups)
    except ValueError as error:
        raise IdentityError(f"cannot sign a certificate with the CA in {pki}: {error}") from error
    return write_user_kubeconfig(
        output,
        f"https://127.0.0.1:{https_port}",
        authority,
        issued.certificate_pem,
        issued.key_pem,
    )
