"""How to reach and authenticate to one API server: :class:`ClientConfig`.

Build one from a kubeconfig (:meth:`ClientConfig.from_kubeconfig`), from the pod's service
account (:meth:`ClientConfig.in_cluster`), through the official ``kubernetes`` package's loader
for exotic auth providers (:meth:`ClientConfig.from_official_client`), or by hand. A config is
plain data plus a :class:`~setpoint.client.credentials.CredentialSource`; the transport turns it
into an ``ssl.SSLContext`` and headers.
"""

from __future__ import annotations

import os
import ssl
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

from setpoint.client.credentials import CredentialSource
from setpoint.client.errors import ConfigError
from setpoint.client.namespaces import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from setpoint.client.exec_credential import ExecCredentialPlugin

__all__ = ["DEFAULT_USER_AGENT", "ClientConfig"]


def _default_user_agent() -> str:
    # "setpoint/<version>": the API server names the default field manager after the part
    # before the "/", so writes show up as made by "setpoint".
    # The version is `setpoint.__version__` (pyproject.toml reads it too), read from the
    # already imported package: importlib.metadata would cost `setpoint run` tens of
    # milliseconds of start-up, and importing `setpoint` here would cross the layers.
    version = getattr(sys.modules.get("setpoint"), "__version__", None)
    return f"setpoint/{version}" if isinstance(version, str) else "setpoint"


DEFAULT_USER_AGENT = _default_user_agent()
# TLS contexts kept per client: the static one plus a few generations of exec-plugin
# certificates (each rotation adds one).
MAX_CACHED_SSL_CONTEXTS = 4


@dataclass(slots=True)
class ClientConfig:
    """Connection settings for one API server.

    ``ca_data``, ``client_cert_data`` and ``client_key_data`` are PEM bytes (already
    base64-decoded from a kubeconfig); the ``*_file`` fields are paths. ``credentials`` supplies
    the ``Authorization`` header (token, token file, exec plugin, basic auth) or None.
    """

    server: str
    namespace: str = DEFAULT_NAMESPACE
    credentials: CredentialSource | None = None
    ca_file: str | None = None
    ca_data: bytes | None = field(default=None, repr=False)
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
    proxy_url: str | None = None
    disable_compression: bool = False  # ask for uncompressed answers (faster on fast networks)
    client_cert_file: str | None = None
    client_key_file: str | None = None
    client_cert_data: bytes | None = field(default=None, repr=False)
    client_key_data: bytes | None = field(default=None, repr=False)  # never print private keys
    user_agent: str = DEFAULT_USER_AGENT
    context: str | None = None  # the kubeconfig context this came from, for messages
    # Impersonation (kubeconfig "as", "as-uid", "as-groups", "as-user-extra").
    impersonate_user: str | None = None
    impersonate_uid: str | None = None
    impersonate_groups: tuple[str, ...] = ()
    impersonate_extra: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _ssl_cache: dict[tuple[bytes, bytes] | None, ssl.SSLContext] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        parts = urlsplit(self.server)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(
                f"server: {self.server!r} is not a valid URL; expected https://host:port"
            )
        self.server = self.server.rstrip("/")
        if self.insecure_skip_tls_verify and (self.ca_file or self.ca_data):
            raise ConfigError(
                "insecure-skip-tls-verify: cannot be combined with a certificate authority "
                "(certificate-authority or certificate-authority-data)"
            )
        if self.impersonate_user is None and (self.impersonate_groups or self.impersonate_extra):
            raise ConfigError('as-groups / as-user-extra: require "as" (the user to impersonate)')
        if self.proxy_url is not None:
            scheme = urlsplit(self.proxy_url).scheme
            if scheme not in ("http", "https"):
                raise ConfigError(
                    f"proxy-url: scheme {scheme!r} is not supported (only http and https proxies)"
                )

    def impersonation_headers(self) -> list[tuple[str, str]]:
        """``Impersonate-*`` headers for every request (empty without impersonation)."""
        headers: list[tuple[str, str]] = []
        if self.impersonate_user:
            headers.append(("Impersonate-User", self.impersonate_user))
        if self.impersonate_uid:
            headers.append(("Impersonate-Uid", self.impersonate_uid))
        headers.extend(("Impersonate-Group", group) for group in self.impersonate_groups)
        for key, values in self.impersonate_extra.items():
            headers.extend((f"Impersonate-Extra-{quote(key, safe='')}", v) for v in values)
        return headers

    @property
    def host(self) -> str:
        """``host:port`` of the server, as used in metric labels."""
        return urlsplit(self.server).netloc

    @property
    def uses_tls(self) -> bool:
        """Whether the server URL is ``https``."""
        return self.server.startswith("https://")

    def with_namespace(self, namespace: str) -> ClientConfig:
        """A copy with another default namespace."""
        return replace(self, namespace=namespace)

    def with_user_agent(self, user_agent: str) -> ClientConfig:
        """A copy with another ``User-Agent`` (default field managers are named after it)."""
        return replace(self, user_agent=user_agent)

    # --- constructors -------------------------------------------------------------------------

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike[str] | None = None, *, context: str | None = None
    ) -> ClientConfig:
        """Load from a kubeconfig file, or from ``$KUBECONFIG`` (merged) / ``~/.kube/config``.

        ``context`` overrides ``current-context``. Raises :class:`ConfigError` naming the file
        and the field when something is missing or malformed.
        """
        from setpoint.client.kubeconfig import load_kubeconfig

        return load_kubeconfig(path, context=context, build=cls)

    @classmethod
    def in_cluster(
        cls,
        *,
        service_account_dir: str | os.PathLike[str] | None = None,
        environ: dict[str, str] | None = None,
    ) -> ClientConfig:
        """Configure from inside a pod: ``KUBERNETES_SERVICE_HOST/PORT`` and the service account.

        The token file is re-read periodically (it rotates). ``service_account_dir`` and
        ``environ`` exist for tests and unusual mounts.
        """
        from setpoint.client.in_cluster import load_in_cluster

        return load_in_cluster(service_account_dir=service_account_dir, environ=environ, build=cls)

    @classmethod
    async def from_official_client(
        cls, path: str | None = None, *, context: str | None = None
    ) -> ClientConfig:
        """Log in through the official ``kubernetes`` (or ``kubernetes_asyncio``) loader.

        For auth providers setpoint does not implement itself (e.g. legacy ``auth-provider``
        plugins). Raises :class:`ConfigError` when neither package is installed.
        """
        from setpoint.client.official_client_login import load_via_official_client

        return await load_via_official_client(path, context=context, build=cls)

    # --- TLS ----------------------------------------------------------------------------------

    def ssl_context(self, dynamic_cert: tuple[bytes, bytes] | None = None) -> ssl.SSLContext:
        """The TLS context for this server; ``dynamic_cert`` is a (cert, key) PEM pair from exec.

        Contexts are cached per certificate so connections can be pooled.
        """
        cached = self._ssl_cache.get(dynamic_cert)
        if cached is not None:
            return cached
        context = self._build_ssl_context(dynamic_cert)
        if len(self._ssl_cache) >= MAX_CACHED_SSL_CONTEXTS:
            self._ssl_cache.clear()  # rotated exec certificates: old contexts are dead weight
        self._ssl_cache[dynamic_cert] = context
        return context

    def _build_ssl_context(self, dynamic_cert: tuple[bytes, bytes] | None) -> ssl.SSLContext:
        if self.insecure_skip_tls_verify:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        else:
            try:
                if self.ca_file or self.ca_data:
                    context = ssl.create_default_context(
                        cafile=self.ca_file,
                        cadata=self.ca_data.decode("ascii") if self.ca_data else None,
                    )
                else:
                    context = ssl.create_default_context()
            except (ssl.SSLError, OSError, UnicodeDecodeError, ValueError) as exc:
                where = self.ca_file or "certificate-authority-data"
                raise ConfigError(f"cannot load the CA certificate from {where}: {exc}") from exc
        if dynamic_cert is not None:
            _load_cert_pem(context, dynamic_cert[0], dynamic_cert[1], "exec plugin")
        elif self.client_cert_file or self.client_cert_data:
            if self.client_cert_file and (self.client_key_file or not self.client_key_data):
                if not self.client_key_file:
                    raise ConfigError("client-key: required together with client-certificate")
                try:
                    context.load_cert_chain(self.client_cert_file, self.client_key_file)
                except (ssl.SSLError, OSError) as exc:
                    raise ConfigError(
                        f"cannot load client certificate {self.client_cert_file} "
                        f"with key {self.client_key_file}: {exc}"
                    ) from exc
            else:
                cert = self.client_cert_data or _read_bytes(self.client_cert_file)
                key = self.client_key_data or _read_bytes(self.client_key_file)
                if not key:
                    raise ConfigError("client-key-data: required together with the certificate")
                _load_cert_pem(context, cert, key, "kubeconfig")
        return context


def _read_bytes(path: str | None) -> bytes:
    if not path:
        return b""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _load_cert_pem(context: ssl.SSLContext, cert: bytes, key: bytes, origin: str) -> None:
    # ssl can only load certificates from files: write a private temporary file, load, delete.
    import tempfile  # only for client certificates given as data: keep start-up light

    fd, name = tempfile.mkstemp(prefix="setpoint-cert-", suffix=".pem")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(cert.rstrip(b"\n") + b"\n" + key)
        context.load_cert_chain(name)
    except ssl.SSLError as exc:
        raise ConfigError(f"cannot load the client certificate from {origin}: {exc}") from exc
    finally:
        os.unlink(name)


def exec_plugin_of(config: ClientConfig) -> ExecCredentialPlugin | None:
    """The exec plugin behind a config's credentials, if any (for diagnostics and tests)."""
    from setpoint.client.exec_credential import ExecCredentialPlugin

    source = config.credentials
    return source if isinstance(source, ExecCredentialPlugin) else None
