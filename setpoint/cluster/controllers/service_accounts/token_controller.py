"""Fills legacy ServiceAccount token Secrets, and deletes those of gone ServiceAccounts."""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from setpoint.cluster.controllers.framework.cluster_access import Identity
from setpoint.cluster.controllers.framework.controller import Controller, Watch
from setpoint.cluster.controllers.framework.informers import Object, ObjectKey
from setpoint.cluster.controllers.workload_context import WriteError

TOKEN_SECRET_TYPE: Final = "kubernetes.io/service-account-token"
NAME_ANNOTATION: Final = "kubernetes.io/service-account.name"
UID_ANNOTATION: Final = "kubernetes.io/service-account.uid"


def _namespace_key(obj: Object) -> Iterable[ObjectKey]:
    meta = obj.get("metadata") or {}
    if obj.get("kind") == "Secret" and obj.get("type") != TOKEN_SECRET_TYPE:
        return ()
    return (ObjectKey("", meta.get("namespace") or ""),)


def _b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


class TokenController(Controller):
    """kube-controller-manager's tokens controller, per namespace.

    A Secret of type ``kubernetes.io/service-account-token`` annotated with
    ``kubernetes.io/service-account.name`` gets ``data.token`` (a non-expiring token),
    ``data["ca.crt"]`` and ``data.namespace``, and the ServiceAccount's uid as annotation. A
    Secret whose ServiceAccount is gone (or has another uid) is deleted.
    """

    name: ClassVar[str] = "serviceaccount-token"

    @classmethod
    def identity(cls) -> Identity:
        return Identity(
            user="system:kube-controller-manager",
            field_manager="kube-controller-manager",
            component="serviceaccount-token-controller",
        )

    def watches(self) -> list[Watch]:
        return [Watch("secrets", _namespace_key), Watch("serviceaccounts", _namespace_key)]

    async def reconcile(self, key: ObjectKey) -> float | None:
        if self.options.service_account_tokens is None:
            return None
        for secret in self.access.list("secrets", key.name):
            if secret.get("type") == TOKEN_SECRET_TYPE:
                await self._sync(secret)
        return None

    async def _sync(self, secret: Mapping[str, Any]) -> None:
        tokens = self.options.service_account_tokens
        assert tokens is not None
        meta = secret["metadata"]
        annotations = meta.get("annotations") or {}
        account_name = annotations.get(NAME_ANNOTATION)
        if not account_name:
            return
        namespace = meta["namespace"]
        # Read past the cache: the ServiceAccount may have been created a moment ago.
        account = self.access.read_stored(
            self.access.resource("serviceaccounts"), namespace, account_name
        )
        wanted_uid = annotations.get(UID_ANNOTATION)
        if (
            account is None
            or (wanted_uid and account["metadata"].get("uid") != wanted_uid)
            or account["metadata"].get("deletionTimestamp")
        ):
            try:
                await self.access.delete("secrets", namespace, meta["name"], uid=meta.get("uid"))
            except WriteError as exc:
                if exc.code not in (404, 409):
                    raise
            return
        data = dict(secret.get("data") or {})
        root_ca = self.options.root_ca_pem
        wanted = {"namespace": _b64(namespace)}
        if root_ca:
            wanted["ca.crt"] = _b64(root_ca)
        if not data.get("token"):
            wanted["token"] = _b64(tokens.issue_legacy(account, meta["name"]))
        missing = {k: v for k, v in wanted.items() if not data.get(k)}
        if not missing and wanted_uid:
            return
        updated: dict[str, Any] = {**secret, "data": {**data, **missing}}
        updated["metadata"] = {
            **meta,
            "annotations": {**annotations, UID_ANNOTATION: account["metadata"].get("uid", "")},
        }
        await self.access.update("secrets", updated)
