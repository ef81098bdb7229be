"""The volumes of a ``--run-pods`` pod, written to disk as the kubelet's volume plugins do.

Each volume is a directory under the pod's ``volumes/``: ``emptyDir`` (empty, writable by the
containers), ``configMap`` and ``secret`` (one file per key, or per ``items`` entry),
``downwardAPI`` (``fieldRef`` values) and ``projected`` (any of those sources plus
``serviceAccountToken``: a token the API server accepts, bound to the pod, as the
``kube-api-access-*`` volume the ServiceAccount admission adds). A container's
``volumeMounts`` then make them appear at their ``mountPath`` inside its sandbox
(:mod:`.sandbox`); ``configMap``, ``secret``, ``downwardAPI`` and ``projected`` are read-only
as upstream. Other volume types (``hostPath``, claims) are not mounted.

A token requested for 3607 s (what the admission asks) is issued for a year, as kube-apiserver
does with ``--service-account-extend-token-expiration`` (its default), so a long-running pod's
token does not lapse; other tokens get exactly what they ask for.
"""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from setpoint.cluster.controllers.kubelet.container_env import ContainerConfigError, field_value
from setpoint.cluster.controllers.kubelet.sandbox import Mount

#: ``WarnOnlyBoundTokenExpirationSeconds``: the admission's request, extended upstream.
WARN_ONLY_EXPIRATION_SECONDS: Final = 3607
#: ``ExpirationExtensionSeconds``: one year.
EXTENDED_EXPIRATION_SECONDS: Final = 365 * 24 * 3600
DEFAULT_MODE: Final = 0o644

#: Reads a stored object: (resource plural, namespace, name) -> the object or None.
Lookup = Callable[[str, str, str], Mapping[str, Any] | None]
#: Issues a token: (namespace, service account, audiences, seconds) -> the token.
IssueToken = Callable[[str, str, list[str], int], str]


def _keyed_files(
    obj: Mapping[str, Any] | None,
    source: Mapping[str, Any],
    kind: str,
    namespace: str,
) -> dict[str, bytes]:
    name = str(source.get("name", ""))
    if obj is None:
        if source.get("optional"):
            return {}
        raise ContainerConfigError(f'{kind} "{name}" not found')
    data: dict[str, bytes] = {}
    if kind == "secret":
        for key, value in (obj.get("data") or {}).items():
            data[key] = base64.b64decode(value)
    else:
        for key, value in (obj.get("data") or {}).items():
            data[key] = str(value).encode()
        for key, value in (obj.get("binaryData") or {}).items():
            data[key] = base64.b64decode(value)
    items = source.get("items")
    if not items:
        return data
    chosen: dict[str, bytes] = {}
    for item in items:
        key = str(item.get("key", ""))
        if key not in data:
            if source.get("optional"):
                continue
            shown = "ConfigMap" if kind == "configmap" else "Secret"
            raise ContainerConfigError(f"couldn't find key {key} in {shown} {namespace}/{name}")
        chosen[str(item.get("path") or key)] = data[key]
    return chosen


def _downward_files(pod: Mapping[str, Any], items: list[Any]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for item in items or []:
        ref = item.get("fieldRef") or {}
        if ref:
            files[str(item.get("path", ""))] = field_value(
                pod, str(ref.get("fieldPath", ""))
            ).encode()
    return files


def _write_files(directory: Path, files: Mapping[str, bytes], mode: int) -> None:
    for relative, content in files.items():
        target = (directory / relative).resolve()
        if directory.resolve() not in target.parents:
            raise ContainerConfigError(f"volume path {relative!r} leaves its volume")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        os.chmod(target, mode)


class PodVolumes:
    """Writes a pod's volumes under ``root`` and says where each container mounts them."""

    def __init__(
        self,
        pod: Mapping[str, Any],
        root: Path,
        lookup: Lookup,
        issue_token: IssueToken | None,
        owner: tuple[int, int] | None,
    ) -> None:
        self._pod = pod
        self._root = root
        self._lookup = lookup
        self._issue_token = issue_token
        self._owner = owner
        self._written: set[str] = set()

    def _volume(self, name: str) -> Mapping[str, Any] | None:
        for volume in (self._pod.get("spec") or {}).get("volumes") or []:
            if volume.get("name") == name:
                return volume  # type: ignore[no-any-return]
        return None

    def _prepare(self, volume: Mapping[str, Any]) -> tuple[Path, bool] | None:
        """The volume's directory (written now if not yet) and whether it is writable."""
        name = str(volume.get("name", ""))
        directory = self._root / name
        meta = self._pod.get("metadata") or {}
        namespace = str(meta.get("namespace", ""))
        if "emptyDir" in volume:
            if name not in self._written:
                directory.mkdir(parents=True, exist_ok=True)
                if self._owner is not None:
                    os.chown(directory, *self._owner)
                self._written.add(name)
            return directory, True
        files: dict[str, bytes] = {}
        mode = DEFAULT_MODE
        if "configMap" in volume or "secret" in volume:
            kind = "configmap" if "configMap" in volume else "secret"
            source = volume.get("configMap") or volume.get("secret") or {}
            ref = dict(source)
            ref.setdefault("name", source.get("secretName", ""))
            found = self._lookup(f"{kind}s", namespace, str(ref["name"]))
            files = _keyed_files(found, ref, kind, namespace)
            mode = int(source.get("defaultMode") or DEFAULT_MODE)
        elif "downwardAPI" in volume:
            source = volume["downwardAPI"] or {}
            files = _downward_files(self._pod, source.get("items") or [])
            mode = int(source.get("defaultMode") or DEFAULT_MODE)
        elif "projected" in volume:
            source = volume["projected"] or {}
            mode = int(source.get("defaultMode") or DEFAULT_MODE)
            for part in source.get("sources") or []:
                files.update(self._projected(part, namespace))
        else:
            return None  # hostPath, claims, …: not mounted
        if name not in self._written:
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir(parents=True)
            _write_files(directory, files, mode)
            self._written.add(name)
        return directory, False

    def _projected(self, part: Mapping[str, Any], namespace: str) -> dict[str, bytes]:
        if "serviceAccountToken" in part:
            token = part["serviceAccountToken"] or {}
            if self._issue_token is None:
                raise ContainerConfigError("no service account token issuer in this cluster")
            seconds = int(token.get("expirationSeconds") or 3600)
            if seconds == WARN_ONLY_EXPIRATION_SECONDS:
                seconds = EXTENDED_EXPIRATION_SECONDS
            audience = token.get("audience")
            account = str((self._pod.get("spec") or {}).get("serviceAccountName") or "default")
            issued = self._issue_token(
                namespace, account, [str(audience)] if audience else [], seconds
            )
            return {str(token.get("path", "token")): issued.encode()}
        if "configMap" in part:
            ref = part["configMap"] or {}
            found = self._lookup("configmaps", namespace, str(ref.get("name", "")))
            return _keyed_files(found, ref, "configmap", namespace)
        if "secret" in part:
            ref = part["secret"] or {}
            found = self._lookup("secrets", namespace, str(ref.get("name", "")))
            return _keyed_files(found, ref, "secret", namespace)
        if "downwardAPI" in part:
            return _downward_files(self._pod, (part["downwardAPI"] or {}).get("items") or [])
        return {}

    def mounts(self, container: Mapping[str, Any]) -> list[Mount]:
        """Where ``container``'s ``volumeMounts`` put the pod's volumes (raises
        :class:`ContainerConfigError` for a missing ConfigMap, Secret or key)."""
        mounts: list[Mount] = []
        for entry in container.get("volumeMounts") or []:
            volume = self._volume(str(entry.get("name", "")))
            if volume is None:
                continue
            prepared = self._prepare(volume)
            if prepared is None:
                continue
            directory, writable = prepared
            source = directory / str(entry["subPath"]) if entry.get("subPath") else directory
            if entry.get("subPath") and writable and not source.exists():
                source.mkdir(parents=True)
                if self._owner is not None:
                    os.chown(source, *self._owner)
            read_only = bool(entry.get("readOnly")) or not writable
            mounts.append(Mount(source, str(entry.get("mountPath", "")), read_only))
        return mounts
