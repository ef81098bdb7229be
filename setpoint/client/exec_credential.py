"""Exec credential plugins (``users[].user.exec`` in a kubeconfig).

The plugin is a program that prints an ``ExecCredential``
(``client.authentication.k8s.io/v1`` or ``v1beta1``) with a bearer token or a client certificate
and key, optionally with ``expirationTimestamp``. It is run on first use, again when the
credential expires, and again when the server answers 401. ``KUBERNETES_EXEC_INFO`` tells the
plugin whether it may talk to the user (``spec.interactive``) and, with ``provideClusterInfo``,
which cluster it is for (``spec.cluster``).
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from setpoint.client.credentials import AuthInfo
from setpoint.client.errors import ConfigError

__all__ = ["ExecConfig", "ExecCredentialPlugin", "cluster_info_for_exec"]

SUPPORTED_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
# Renew this long before the stated expiry so an in-flight request never carries a dead token.
EXPIRY_SKEW_SECONDS = 10.0
# A non-interactive plugin that hangs (e.g. waiting for a browser) must not block forever.
DEFAULT_EXEC_TIMEOUT_SECONDS = 120.0
INTERACTIVE_MODES = ("Never", "IfAvailable", "Always")


@dataclass(frozen=True, slots=True)
class ExecConfig:
    """The ``exec`` stanza of a kubeconfig user, with paths already resolved."""

    command: str
    api_version: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # may hold secrets
    install_hint: str = ""
    provide_cluster_info: bool = False
    interactive_mode: str = "IfAvailable"
    # spec.cluster for KUBERNETES_EXEC_INFO; only sent when provide_cluster_info is set.
    cluster_info: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_kubeconfig(
        cls, stanza: Mapping[str, Any], *, where: str, cluster_info: Mapping[str, Any]
    ) -> ExecConfig:
        """Validate an ``exec`` stanza; ``where`` names it in errors (``users[alice].exec``)."""
        command = stanza.get("command")
        if not isinstance(command, str) or not command:
            raise ConfigError(f"{where}.command: required, must be a non-empty string")
        api_version = stanza.get("apiVersion")
        if api_version not in SUPPORTED_API_VERSIONS:
            raise ConfigError(
                f"{where}.apiVersion: {api_version!r} is not supported; "
                f"use one of {', '.join(SUPPORTED_API_VERSIONS)}"
            )
        args = stanza.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"{where}.args: must be a list of strings")
        env_pairs: list[tuple[str, str]] = []
        for index, item in enumerate(stanza.get("env") or []):
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise ConfigError(f"{where}.env[{index}]: must have a string name and value")
            env_pairs.append((item["name"], str(item.get("value", ""))))
        default_mode = "IfAvailable" if api_version.endswith("v1beta1") else None
        mode = stanza.get("interactiveMode") or default_mode
        if mode is None:
            raise ConfigError(
                f"{where}.interactiveMode: required for {api_version}; "
                f"one of {', '.join(INTERACTIVE_MODES)}"
            )
        if mode not in INTERACTIVE_MODES:
            raise ConfigError(
                f"{where}.interactiveMode: {mode!r} is invalid; "
                f"one of {', '.join(INTERACTIVE_MODES)}"
            )
        return cls(
            command=command,
            api_version=api_version,
            args=tuple(args),
            env=tuple(env_pairs),
            install_hint=str(stanza.get("installHint") or ""),
            provide_cluster_info=bool(stanza.get("provideClusterInfo", False)),
            interactive_mode=mode,
            cluster_info=dict(cluster_info),
        )


@dataclass(frozen=True, slots=True)
class _Credential:
    info: AuthInfo
    expires_at: datetime.datetime | None


def _parse_timestamp(value: str, *, where: str) -> datetime.datetime:
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError as exc:
        raise ConfigError(f"{where}: invalid RFC 3339 time {value!r}") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return parsed


class ExecCredentialPlugin:
    """Runs an exec plugin and caches its credential until expiry or a 401."""

    def __init__(
        self,
        config: ExecConfig,
        *,
        timeout: float = DEFAULT_EXEC_TIMEOUT_SECONDS,
        stdin_is_terminal: bool | None = None,
    ) -> None:
        self.config = config
        self.timeout = timeout
        self._stdin_is_terminal = stdin_is_terminal
        self._credential: _Credential | None = None
        self._lock = asyncio.Lock()
        self.runs = 0  # how many times the plugin was executed (observable for diagnostics)

    def _interactive(self) -> bool:
        tty = self._stdin_is_terminal
        if tty is None:
            try:
                tty = sys.stdin is not None and sys.stdin.isatty()
            except (ValueError, OSError):
                tty = False
        mode = self.config.interactive_mode
        if mode == "Never":
            return False
        if mode == "Always" and not tty:
            raise ConfigError(
                f"exec plugin {self.config.command!r} is configured with interactiveMode "
                "Always, but standard input is not a terminal"
            )
        return tty

    def _exec_info(self, interactive: bool) -> str:
        spec: dict[str, Any] = {"interactive": interactive}
        if self.config.provide_cluster_info:
            spec["cluster"] = dict(self.config.cluster_info)
        info = {"apiVersion": self.config.api_version, "kind": "ExecCredential", "spec": spec}
        return msgspec.json.encode(info).decode()

    def _fresh(self, now: datetime.datetime) -> bool:
        credential = self._credential
        if credential is None:
            return False
        if credential.expires_at is None:
            return True
        return (credential.expires_at - now).total_seconds() > EXPIRY_SKEW_SECONDS

    async def get(self) -> AuthInfo:
        """The cached credential, re-running the plugin when absent or about to expire."""
        now = datetime.datetime.now(datetime.UTC)
        if self._fresh(now) and self._credential is not None:
            return self._credential.info
        async with self._lock:
            now = datetime.datetime.now(datetime.UTC)
            if not self._fresh(now) or self._credential is None:
                self._credential = await self._run()
            return self._credential.info

    def invalidate(self, used: AuthInfo | None = None) -> bool:
        """Drop the cached credential so the next request re-runs the plugin.

        When ``used`` is older than the cached credential (a concurrent request already re-ran
        the plugin), the fresh credential is kept: one 401 storm runs the plugin once.
        """
        credential = self._credential
        if used is None or credential is None or credential.info == used:
            self._credential = None
        return True

    async def _run(self) -> _Credential:
        interactive = self._interactive()
        env = dict(os.environ)
        env.update(self.config.env)
        env["KUBERNETES_EXEC_INFO"] = self._exec_info(interactive)
        command = self.config.command
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *self.config.args,
                env=env,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=None if interactive else asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            hint = f"\n{self.config.install_hint}" if self.config.install_hint else ""
            raise ConfigError(
                f"exec plugin: cannot run {command!r}: {exc.strerror or exc}{hint}"
            ) from exc
        self.runs += 1
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(), None if interactive else self.timeout
            )
        except TimeoutError as exc:
            process.kill()
            await process.wait()
            raise ConfigError(
                f"exec plugin {command!r} did not finish within {self.timeout:g} s"
            ) from exc
        if process.returncode != 0:
            detail = (stderr or b"").decode("utf-8", errors="replace").strip()
            raise ConfigError(
                f"exec plugin {command!r} failed with exit code {process.returncode}"
                + (f": {detail}" if detail else "")
            )
        return self._parse(stdout)

    def _parse(self, output: bytes) -> _Credential:
        command = self.config.command
        try:
            decoded = msgspec.json.decode(output)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"exec plugin {command!r} printed invalid JSON: {exc}") from exc
        if not isinstance(decoded, dict) or decoded.get("kind") != "ExecCredential":
            raise ConfigError(f"exec plugin {command!r} did not print an ExecCredential object")
        if decoded.get("apiVersion") != self.config.api_version:
            raise ConfigError(
                f"exec plugin {command!r} is configured to use API version "
                f"{self.config.api_version}, plugin returned version {decoded.get('apiVersion')}"
            )
        status = decoded.get("status")
        if not isinstance(status, dict):
            raise ConfigError(f"exec plugin {command!r} returned no status")
        token = status.get("token")
        cert = status.get("clientCertificateData")
        key = status.get("clientKeyData")
        if bool(cert) != bool(key):
            raise ConfigError(
                f"exec plugin {command!r}: status.clientCertificateData and status.clientKeyData "
                "must both be set or both be empty"
            )
        if not token and not cert:
            raise ConfigError(
                f"exec plugin {command!r}: status has neither token nor clientCertificateData"
            )
        expires_at = None
        raw_expiry = status.get("expirationTimestamp")
        if raw_expiry:
            if not isinstance(raw_expiry, str):
                raise ConfigError(f"exec plugin {command!r}: expirationTimestamp must be a string")
            expires_at = _parse_timestamp(raw_expiry, where="status.expirationTimestamp")
        info = AuthInfo(
            authorization=f"Bearer {token}" if token else None,
            client_cert_pem=str(cert).encode() if cert else None,
            client_key_pem=str(key).encode() if key else None,
        )
        return _Credential(info=info, expires_at=expires_at)


def cluster_info_for_exec(
    *,
    server: str,
    ca_data: bytes | None,
    insecure_skip_tls_verify: bool,
    tls_server_name: str | None,
    proxy_url: str | None,
    extension: Any = None,
) -> dict[str, Any]:
    """``spec.cluster`` as client-go sends it (CA data base64, extension as ``config``)."""
    info: dict[str, Any] = {"server": server}
    if tls_server_name:
        info["tls-server-name"] = tls_server_name
    if insecure_skip_tls_verify:
        info["insecure-skip-tls-verify"] = True
    if ca_data:
        info["certificate-authority-data"] = base64.b64encode(ca_data).decode("ascii")
    if proxy_url:
        info["proxy-url"] = proxy_url
    if extension is not None:
        info["config"] = extension
    return info
