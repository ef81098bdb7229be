"""The webhook admission chain: which webhooks a write goes to, in which order, and what
their answers do to it.

Upstream: the ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook`` plugins
(``admission/plugin/webhook/{generic,mutating,validating}``). Mutating webhooks run one after
another, each seeing the previous one's patch; a webhook with ``reinvocationPolicy: IfNeeded``
is called once more when a later webhook changed the object. Validating webhooks run
concurrently and see the final object; the first denial (in configuration order) wins.
A denial answers ``admission webhook "<name>" denied the request: <message>`` with the
webhook's code (at least 400); a failed call answers 500 ``Internal error occurred: failed
calling webhook "<name>": …`` unless ``failurePolicy: Ignore`` lets the write through.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

import msgspec

from setpoint.api.patch import PatchError, apply_json_patch, json_equal
from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.admission.match_conditions import ConditionError, conditions_hold
from setpoint.cluster.apiserver.admission.matching import (
    EquivalentResources,
    matched_resource,
    selectors_match,
)
from setpoint.cluster.apiserver.admission.policies import Binding, Policy, check_policies
from setpoint.cluster.apiserver.admission.resources import (
    BINDING_PLURAL,
    GROUP,
    MUTATING_PLURAL,
    POLICY_PLURAL,
    VALIDATING_PLURAL,
    is_exempt,
)
from setpoint.cluster.apiserver.admission.service_endpoints import resolve_service
from setpoint.cluster.apiserver.admission.webhook_calls import (
    Endpoint,
    WebhookCallError,
    WebhookClient,
    WebhookTransportError,
    review_body,
    review_version,
)
from setpoint.cluster.apiserver.admission.webhooks import Webhook, parse_webhooks
from setpoint.cluster.apiserver.audit.admission_annotations import annotate
from setpoint.cluster.apiserver.auth.identity import PRIVILEGED_GROUP, UserInfo
from setpoint.cluster.apiserver.auth.request_user import acting_user
from setpoint.cluster.apiserver.registry.admission_point import DELETE, AdmissionRequest
from setpoint.cluster.apiserver.registry.object_operations import new_uid
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage import Storage

log = logging.getLogger(__name__)

#: Who the server's own writes (bootstrap, built-in controllers) are made as.
SERVER_USER: Final = UserInfo("system:apiserver", (PRIVILEGED_GROUP,))
_OPTIONS_KIND: Final = {
    "CREATE": "CreateOptions",
    "UPDATE": "UpdateOptions",
    DELETE: "DeleteOptions",
}
_DECODER: Final = msgspec.json.Decoder()


#: ``obj`` served through the first resource, as served through the second (equivalent) one.
ObjectConversion = Callable[
    [dict[str, Any], ServedResource, ServedResource], Awaitable[dict[str, Any]]
]


async def _no_conversion(
    obj: dict[str, Any], source: ServedResource, target: ServedResource
) -> dict[str, Any]:
    raise status_errors.internal_error(f"unable to convert to {target.api_version}")


class WebhookChain:
    """Admission by the webhooks of the stored Mutating/ValidatingWebhookConfigurations."""

    def __init__(
        self,
        storage: Storage,
        resource_of_kind: Callable[[str, str], ServedResource | None] | None = None,
    ) -> None:
        self._storage = storage
        #: The served resource of ``(apiVersion, kind)``: where a policy's params live.
        self._resource_of_kind = resource_of_kind or (lambda api_version, kind: None)
        self.client = WebhookClient()
        self._mutating: list[Webhook] = []
        self._validating: list[Webhook] = []
        self._policies: list[tuple[Policy, Binding]] = []
        self._loaded = False
        #: The resources equivalent to a resource (``matchPolicy: Equivalent``); the server
        #: sets it (none until then).
        self.equivalents: EquivalentResources = lambda resource, subresource: []
        #: Converts an object served through one resource to an equivalent one's version.
        self.convert: ObjectConversion = _no_conversion

    # -- configurations -----------------------------------------------------------------

    def reload(self) -> None:
        """Read the configurations again before the next write (one was written)."""
        self._loaded = False

    def _load(self) -> None:
        self._mutating = self._read(MUTATING_PLURAL, True)
        self._validating = self._read(VALIDATING_PLURAL, False)
        policies = {
            policy.name: policy
            for policy in (
                Policy.parse(decode(r.value))
                for r in self._storage.list(f"/{GROUP}/{POLICY_PLURAL}/")
            )
        }
        bindings = [
            Binding.parse(decode(r.value))
            for r in self._storage.list(f"/{GROUP}/{BINDING_PLURAL}/")
        ]
        self._policies = [
            (policies[binding.policy], binding)
            for binding in bindings
            if binding.policy in policies
        ]
        self._loaded = True

    def _read(self, plural: str, mutating: bool) -> list[Webhook]:
        return [
            webhook
            for record in self._storage.list(f"/{GROUP}/{plural}/")
            for webhook in parse_webhooks(decode(record.value), mutating)
        ]

    def active(self, resource: ServedResource) -> bool:
        """Whether any webhook is configured and ``resource`` may be sent to webhooks."""
        if not self._loaded:
            self._load()
        configured = self._mutating or self._validating or self._policies
        return bool(configured) and not is_exempt(resource)

    async def close(self) -> None:
        """Close the connections to webhooks."""
        await self.client.close()

    # -- admission ----------------------------------------------------------------------

    async def mutate(self, request: AdmissionRequest) -> tuple[dict[str, Any] | None, list[str]]:
        """Call the matching mutating webhooks in order, applying their patches."""
        warnings: list[str] = []
        called: list[tuple[int, Webhook]] = []
        last_change = -1
        for index, webhook in enumerate(self._mutating):
            outcome = await self._call(webhook, request)
            if outcome is None:
                continue
            called.append((index, webhook))
            changed, answer_warnings = outcome
            warnings.extend(answer_warnings)
            if changed:
                last_change = index
        # IfNeeded: called again, once, when a webhook after it changed the object.
        for index, webhook in called:
            if webhook.reinvoke_if_needed and index < last_change:
                outcome = await self._call(webhook, request)
                if outcome is not None:
                    warnings.extend(outcome[1])
        return request.object, warnings

    async def validate(self, request: AdmissionRequest) -> list[str]:
        """Evaluate the policies, then call the matching validating webhooks concurrently;
        raise the first refusal."""
        policy_warnings: list[str] = []
        if self._policies:
            namespace = self._namespace_object(request)
            policy_warnings = await check_policies(
                self._policies,
                request,
                lambda target: review_request(target, "", requested=request.resource),
                namespace,
                self._params_for,
                self.equivalents,
                self._versioned,
            )
        if not self._validating:
            return policy_warnings
        outcomes = await asyncio.gather(
            *(self._call(webhook, request) for webhook in self._validating),
            return_exceptions=True,
        )
        warnings: list[str] = policy_warnings
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome
            if outcome is not None:
                warnings.extend(outcome[1])
        return warnings

    async def _call(
        self, webhook: Webhook, request: AdmissionRequest
    ) -> tuple[bool, list[str]] | None:
        """Call ``webhook`` if it applies: (whether it changed the object, its warnings), or
        None when it was not called (or failed open)."""
        matched = matched_resource(webhook, request, self.equivalents)
        if matched is None or not selectors_match(webhook, request, self._namespace_labels):
            return None
        # Matched through an equivalent resource: the webhook sees (and patches) the object
        # in that resource's version; its patch is converted back (upstream's
        # VersionedAttributes).
        versioned = request
        if matched is not request.resource:
            versioned = await self._versioned(request, matched)
        uid = new_uid()
        review = review_request(versioned, uid, requested=request.resource)
        if webhook.match_conditions:
            try:
                if not conditions_hold(
                    webhook.match_conditions, versioned.object, versioned.old_object, review
                ):
                    return None
            except ConditionError as exc:
                if webhook.fails_open:
                    log.warning(
                        "webhook %s: match conditions failed, failing open: %s", webhook.name, exc
                    )
                    return None
                raise status_errors.forbidden(
                    request.resource.group, request.resource.plural, request.name, str(exc)
                ) from None
        if request.dry_run and webhook.side_effects not in ("None", "NoneOnDryRun"):
            raise status_errors.bad_request(
                f"admission webhook {_quote(webhook.name)} does not support dry run"
            )
        try:
            version = review_version(webhook)
            if version is None:
                raise WebhookCallError(
                    webhook.name,
                    "webhook does not accept known AdmissionReview versions (v1, v1beta1)",
                )
            endpoint = self._endpoint(webhook)
            answer = await self.client.call(webhook, endpoint, review_body(version, review), uid)
        except WebhookCallError as exc:
            if webhook.fails_open:
                log.warning("Failed calling webhook, failing open %s: %s", webhook.name, exc)
                return None
            log.warning("Failed calling webhook, failing closed %s: %s", webhook.name, exc)
            raise status_errors.internal_error(str(exc)) from None
        for key, value in answer.audit_annotations.items():
            annotate(f"{webhook.name}/{key}", value)  # upstream's key: <webhook name>/<key>
        if not answer.allowed:
            raise denial(webhook.name, answer.status)
        changed = False
        if webhook.mutating and answer.patch is not None and versioned.object is not None:
            changed = _apply_patch(webhook.name, versioned, answer.patch)
            if changed and versioned is not request:
                request.object = await self._convert(versioned.object, matched, request.resource)
        return changed, answer.warnings

    async def _versioned(
        self, request: AdmissionRequest, resource: ServedResource
    ) -> AdmissionRequest:
        """``request`` as made through the equivalent ``resource`` (objects converted)."""
        return dataclasses.replace(
            request,
            resource=resource,
            object=await self._convert(request.object, request.resource, resource),
            old_object=await self._convert(request.old_object, request.resource, resource),
        )

    async def _convert(
        self, obj: dict[str, Any] | None, source: ServedResource, target: ServedResource
    ) -> dict[str, Any] | None:
        if obj is None:
            return None
        try:
            return await self.convert(obj, source, target)
        except APIError as exc:
            # Upstream wraps the converter's error: 500 "Internal error occurred: …".
            raise status_errors.internal_error(exc.message) from None

    def _namespace_object(self, request: AdmissionRequest) -> dict[str, Any] | None:
        if not request.resource.namespaced or not request.namespace:
            return None
        record = self._storage.get(f"/core/namespaces/{request.namespace}")
        return decode(record.value) if record is not None else None

    def _params_for(
        self, kind: tuple[str, str], ref: Mapping[str, Any], namespace: str
    ) -> list[dict[str, Any]]:
        """The parameter objects a binding's ``paramRef`` names (by name or selector)."""
        resource = self._resource_of_kind(*kind)
        if resource is None:
            return []
        scope = str(ref.get("namespace") or namespace) if resource.namespaced else None
        name = ref.get("name")
        if name:
            record = self._storage.get(resource.storage_key(scope, str(name)))
            return [decode(record.value)] if record is not None else []
        try:
            selector = LabelSelector.from_dict(ref.get("selector") or {})
        except SelectorError:
            return []
        found = []
        for record in self._storage.list(resource.storage_prefix(scope)):
            obj = decode(record.value)
            if selector.matches((obj.get("metadata") or {}).get("labels") or {}):
                found.append(obj)
        return found

    def _namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        record = self._storage.get(f"/core/namespaces/{namespace}")
        if record is None:
            return None
        labels = (decode(record.value).get("metadata") or {}).get("labels")
        return labels if isinstance(labels, dict) else {}

    def _endpoint(self, webhook: Webhook) -> Endpoint:
        if webhook.url is not None:
            return Endpoint(webhook.url, webhook.url)
        assert webhook.service is not None  # validated: exactly one of url and service
        try:
            return resolve_service(self._storage, webhook.service, webhook.timeout_seconds)
        except WebhookTransportError as exc:
            raise WebhookCallError(webhook.name, exc.reason) from None


def review_request(
    request: AdmissionRequest, uid: str, *, requested: ServedResource | None = None
) -> dict[str, Any]:
    """The ``request`` of an AdmissionReview for ``request``; ``requested``: the resource the
    client wrote through, when the webhook matched an equivalent one (``requestKind``,
    ``requestResource``)."""
    resource = request.resource
    kind, gvr = _kind_and_resource(resource)
    review: dict[str, Any] = {"uid": uid, "kind": kind, "resource": gvr}
    if request.subresource:
        review["subResource"] = request.subresource
    if requested is not None and requested is not resource:
        kind, gvr = _kind_and_resource(requested)
    review["requestKind"] = kind
    review["requestResource"] = gvr
    if request.subresource:
        review["requestSubResource"] = request.subresource
    if request.name:
        review["name"] = request.name
    namespace = request.namespace
    if resource.group == "" and resource.plural == "namespaces":
        namespace = request.name  # upstream names the namespace itself
    if namespace:
        review["namespace"] = namespace
    review["operation"] = request.operation
    user = acting_user.get() or SERVER_USER
    review["userInfo"] = user.to_json()
    review["object"] = request.object
    review["oldObject"] = request.old_object
    review["dryRun"] = request.dry_run
    options = {"kind": _OPTIONS_KIND[request.operation], "apiVersion": "meta.k8s.io/v1"}
    options.update(request.options)
    review["options"] = options
    return review


def _kind_and_resource(resource: ServedResource) -> tuple[dict[str, str], dict[str, str]]:
    kind = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    gvr = {"group": resource.group, "version": resource.version, "resource": resource.plural}
    return kind, gvr


def denial(webhook: str, status: Mapping[str, Any]) -> APIError:
    """The error of a webhook's refusal (upstream's ``webhookerrors.ToStatusErr``)."""
    denied_by = f"admission webhook {_quote(webhook)} denied the request"
    code = status.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    message = status.get("message")
    reason = status.get("reason")
    if isinstance(message, str) and message:
        text = f"{denied_by}: {message}"
    elif isinstance(reason, str) and reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details = status.get("details")
    return APIError(
        code,
        reason if isinstance(reason, str) else "",
        text,
        details=details if isinstance(details, dict) else None,
    )


def _apply_patch(webhook: str, request: AdmissionRequest, patch: bytes) -> bool:
    """Apply a webhook's JSON patch to the request's object; whether it changed anything."""
    try:
        operations = _DECODER.decode(patch)
        patched = apply_json_patch(request.object, operations)
    except (msgspec.DecodeError, PatchError) as exc:
        raise status_errors.internal_error(
            f"admission webhook {_quote(webhook)} returned an invalid patch: {exc}"
        ) from None
    if not isinstance(patched, dict):
        raise status_errors.internal_error(
            f"admission webhook {_quote(webhook)} returned a patch that replaces the object"
        )
    changed = not json_equal(patched, request.object)
    request.object = patched
    return changed


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
