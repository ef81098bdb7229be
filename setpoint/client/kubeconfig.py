"""Reading kubeconfig files into a :class:`~setpoint.client.config.ClientConfig`.

Follows client-go's loading rules (``clientcmd/loader.go``):

* an explicit path must exist; otherwise ``$KUBECONFIG`` lists files (``os.pathsep``-separated)
  whose missing entries are skipped, else ``~/.kube/config``;
* when merging, the first file that defines a cluster, user or context name wins, and the first
  file that sets ``current-context`` wins;
* relative paths (certificate files, token files, exec commands containing a ``/``) are relative
  to the file that defined them.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from setpoint.client.credentials import BasicAuth, CredentialSource, StaticToken, TokenFile
from setpoint.client.errors import ConfigError
from setpoint.client.namespaces import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from setpoint.client.exec_credential import ExecConfig

#: What a loader's ``build`` makes: ``ClientConfig`` (taken as a parameter so that this module
#: never imports the class whose constructors call it).
Config = TypeVar("Config")

__all__ = ["KubeConfig", "kubeconfig_paths", "load_kubeconfig"]

DEFAULT_KUBECONFIG = Path("~/.kube/config")
EXEC_EXTENSION_NAME = "client.authentication.k8s.io/exec"  # cluster extension passed to exec
# libyaml's safe loader when PyYAML has it: the same documents, 8-20x faster here than the pure
# Python one (a kubeconfig with embedded certificates takes ~10 ms there).
_SAFE_LOADER: type[yaml.SafeLoader] | type[yaml.CSafeLoader] = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)


@dataclass(slots=True)
class _Entry:
    """One named stanza (cluster, user or context) and the directory of its file."""

    body: Mapping[str, Any]
    base_dir: Path
    source: Path


@dataclass(slots=True)
class KubeConfig:
    """The merged content of one or more kubeconfig files."""

    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)
    current_context: str | None = None
    sources: list[Path] = field(default_factory=list)

    def merge_file(self, path: Path) -> None:
        """Add one file's stanzas; names already present are kept (first file wins)."""
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read kubeconfig {path}: {exc.strerror or exc}") from exc
        try:
            document = yaml.load(text, Loader=_SAFE_LOADER)
        except yaml.YAMLError as exc:
            raise ConfigError(f"kubeconfig {path} is not valid YAML: {exc}") from exc
        if document is None:
            document = {}
        if not isinstance(document, Mapping):
            raise ConfigError(f"kubeconfig {path}: the document must be a mapping")
        self.sources.append(path)
        base_dir = path.parent
        for section, inner, target in (
            ("clusters", "cluster", self.clusters),
            ("users", "user", self.users),
            ("contexts", "context", self.contexts),
        ):
            items = document.get(section) or []
            if not isinstance(items, list):
                raise ConfigError(f"kubeconfig {path}: {section} must be a list")
            for index, item in enumerate(items):
                if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                    raise ConfigError(f"kubeconfig {path}: {section}[{index}].name is required")
                body = item.get(inner) or {}
                if not isinstance(body, Mapping):
                    raise ConfigError(
                        f"kubeconfig {path}: {section}[{item['name']}].{inner} must be a mapping"
                    )
                target.setdefault(item["name"], _Entry(body, base_dir, path))
        current = document.get("current-context")
        if self.current_context is None and isinstance(current, str) and current:
            self.current_context = current

    def _where(self) -> str:
        return ", ".join(str(p) for p in self.sources) or "<no kubeconfig>"

    def client_config(self, context: str | None, build: Callable[..., Config]) -> Config:
        """The config of ``context`` (None: ``current-context``), made by ``build``
        (``ClientConfig``) from its fields."""
        name = context or self.current_context
        if not name:
            raise ConfigError(
                f"no context chosen: current-context is not set in {self._where()}; "
                "pass context=..."
            )
        ctx_entry = self.contexts.get(name)
        if ctx_entry is None:
            known = ", ".join(sorted(self.contexts)) or "none"
            raise ConfigError(
                f'context "{name}" does not exist in {self._where()} (contexts: {known})'
            )
        ctx = ctx_entry.body
        cluster_name = ctx.get("cluster")
        if not isinstance(cluster_name, str) or cluster_name not in self.clusters:
            raise ConfigError(
                f'context "{name}" in {ctx_entry.source}: cluster {cluster_name!r} does not exist'
            )
        user_name = ctx.get("user")
        user_entry: _Entry | None = None
        if user_name:
            user_entry = self.users.get(str(user_name))
            if user_entry is None:
                raise ConfigError(
                    f'context "{name}" in {ctx_entry.source}: user {user_name!r} does not exist'
                )
        namespace = ctx.get("namespace") or DEFAULT_NAMESPACE
        return _build_config(
            build,
            context=name,
            namespace=str(namespace),
            cluster=self.clusters[cluster_name],
            cluster_name=cluster_name,
            user=user_entry,
            user_name=str(user_name or ""),
        )


def _resolve(base_dir: Path, value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: must be a non-empty string")
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else base_dir / path)


def _b64(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: must be a base64 string")
    try:
        return base64.b64decode(value, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise ConfigError(f"{where}: invalid base64: {exc}") from exc


def _build_config(
    build: Callable[..., Config],
    *,
    context: str,
    namespace: str,
    cluster: _Entry,
    cluster_name: str,
    user: _Entry | None,
    user_name: str,
) -> Config:
    c = cluster.body
    cw = f"{cluster.source}: clusters[{cluster_name}].cluster"
    server = c.get("server")
    if not isinstance(server, str) or not server:
        raise ConfigError(f"{cw}.server: required")
    ca_file = ca_data = None
    if c.get("certificate-authority-data"):
        ca_data = _b64(c["certificate-authority-data"], f"{cw}.certificate-authority-data")
    elif c.get("certificate-authority"):
        ca_file = _resolve(
            cluster.base_dir, c["certificate-authority"], f"{cw}.certificate-authority"
        )
    insecure = bool(c.get("insecure-skip-tls-verify", False))
    tls_server_name = c.get("tls-server-name") or None
    proxy_url = c.get("proxy-url") or None

    credentials: CredentialSource | None = None
    cert_file = key_file = None
    cert_data = key_data = None
    if user is not None:
        u = user.body
        uw = f"{user.source}: users[{user_name}].user"
        if u.get("client-certificate-data"):
            cert_data = _b64(u["client-certificate-data"], f"{uw}.client-certificate-data")
        elif u.get("client-certificate"):
            cert_file = _resolve(user.base_dir, u["client-certificate"], f"{uw}.client-certificate")
        if u.get("client-key-data"):
            key_data = _b64(u["client-key-data"], f"{uw}.client-key-data")
        elif u.get("client-key"):
            key_file = _resolve(user.base_dir, u["client-key"], f"{uw}.client-key")
        if bool(cert_data or cert_file) != bool(key_data or key_file):
            raise ConfigError(
                f"{uw}: client-certificate(-data) and client-key(-data) must be set together"
            )
        if u.get("exec"):
            exec_stanza = u["exec"]
            if not isinstance(exec_stanza, Mapping):
                raise ConfigError(f"{uw}.exec: must be a mapping")
            # Imported only for a user with an exec plugin: most kubeconfigs have none.
            from setpoint.client.exec_credential import (
                ExecConfig,
                ExecCredentialPlugin,
                cluster_info_for_exec,
            )

            extension = _exec_extension(c)
            ca_for_exec = ca_data
            if ca_for_exec is None and ca_file:
                try:
                    ca_for_exec = Path(ca_file).read_bytes()
                except OSError:
                    ca_for_exec = None
            exec_config = ExecConfig.from_kubeconfig(
                exec_stanza,
                where=f"{uw}.exec",
                cluster_info=cluster_info_for_exec(
                    server=server,
                    ca_data=ca_for_exec,
                    insecure_skip_tls_verify=insecure,
                    tls_server_name=tls_server_name,
                    proxy_url=proxy_url,
                    extension=extension,
                ),
            )
            command = exec_config.command
            if os.sep in command or "/" in command:
                command = _resolve(user.base_dir, command, f"{uw}.exec.command")
                exec_config = _with_command(exec_config, command)
            credentials = ExecCredentialPlugin(exec_config)
        elif u.get("tokenFile"):
            credentials = TokenFile(_resolve(user.base_dir, u["tokenFile"], f"{uw}.tokenFile"))
        elif u.get("token"):
            credentials = StaticToken(str(u["token"]))
        elif u.get("username") or u.get("password"):
            credentials = BasicAuth(str(u.get("username", "")), str(u.get("password", "")))
        elif u.get("auth-provider"):
            provider = u["auth-provider"]
            provider_name = provider.get("name") if isinstance(provider, Mapping) else provider
            raise ConfigError(
                f"{uw}.auth-provider: {provider_name!r} is not supported by setpoint; "
                "use an exec plugin, or ClientConfig.from_official_client() with the "
                "'kubernetes' package installed"
            )
    impersonation = _impersonation(user.body if user else {}, user_name)
    return build(
        **impersonation,
        server=server,
        namespace=namespace,
        credentials=credentials,
        ca_file=ca_file,
        ca_data=ca_data,
        insecure_skip_tls_verify=insecure,
        tls_server_name=str(tls_server_name) if tls_server_name else None,
        proxy_url=str(proxy_url) if proxy_url else None,
        disable_compression=bool(c.get("disable-compression", False)),
        client_cert_file=cert_file,
        client_key_file=key_file,
        client_cert_data=cert_data,
        client_key_data=key_data,
        context=context,
    )


def _impersonation(user: Mapping[str, Any], user_name: str) -> dict[str, Any]:
    where = f"users[{user_name}].user"
    result: dict[str, Any] = {}
    if user.get("as"):
        result["impersonate_user"] = str(user["as"])
    if user.get("as-uid"):
        result["impersonate_uid"] = str(user["as-uid"])
    groups = user.get("as-groups") or []
    if not isinstance(groups, list):
        raise ConfigError(f"{where}.as-groups: must be a list of strings")
    if groups:
        result["impersonate_groups"] = tuple(str(g) for g in groups)
    extra = user.get("as-user-extra") or {}
    if not isinstance(extra, Mapping):
        raise ConfigError(f"{where}.as-user-extra: must be a mapping of lists")
    if extra:
        result["impersonate_extra"] = {
            str(k): tuple(str(v) for v in (vals if isinstance(vals, list) else [vals]))
            for k, vals in extra.items()
        }
    return result


def _exec_extension(cluster: Mapping[str, Any]) -> Any:
    for item in cluster.get("extensions") or []:
        if isinstance(item, Mapping) and item.get("name") == EXEC_EXTENSION_NAME:
            return item.get("extension")
    return None


def _with_command(config: ExecConfig, command: str) -> ExecConfig:
    from dataclasses import replace

    return replace(config, command=command)


def kubeconfig_paths(
    path: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The files to merge: ``path`` alone, else existing ``$KUBECONFIG`` entries, else default."""
    if path is not None:
        explicit = Path(path).expanduser()
        if not explicit.is_file():
            raise ConfigError(f"kubeconfig {explicit} does not exist")
        return [explicit]
    env = os.environ if environ is None else environ
    listed = env.get("KUBECONFIG", "")
    if listed:
        seen: list[Path] = []
        for item in listed.split(os.pathsep):
            if not item:
                continue
            candidate = Path(item).expanduser()
            if candidate.is_file() and candidate not in seen:
                seen.append(candidate)
        if not seen:
            raise ConfigError(f"none of the files in KUBECONFIG exist: {listed}")
        return seen
    default = DEFAULT_KUBECONFIG.expanduser()
    if not default.is_file():
        raise ConfigError(
            f"no kubeconfig: {default} does not exist and KUBECONFIG is not set "
            "(inside a pod, use ClientConfig.in_cluster())"
        )
    return [default]


def load_kubeconfig(
    path: str | os.PathLike[str] | None = None,
    *,
    context: str | None = None,
    environ: Mapping[str, str] | None = None,
    build: Callable[..., Config],
) -> Config:
    """Merge the kubeconfig files (see :func:`kubeconfig_paths`) and make the context's config
    with ``build`` (``ClientConfig``: its constructor gets the fields as keywords)."""
    merged = KubeConfig()
    for item in kubeconfig_paths(path, environ=environ):
        merged.merge_file(item)
    return merged.client_config(context, build)
