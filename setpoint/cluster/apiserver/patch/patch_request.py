"""PATCH requests: the patch type from the Content-Type, then the mechanism that applies it.

As ``handlers/patch.go``: the media type is checked first (415, listing the accepted types,
before the object is even read), then the options (``fieldManager`` is required for apply,
``force`` only allowed there), then the patch is applied to the live object and the result
written with update semantics. An apply patch on a missing object creates it.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
import yaml
from aiohttp import web

from setpoint.api import field_errors as fe
from setpoint.api.patch import PatchError, PatchTestFailed, apply_json_patch
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http import body_limits, request_body
from setpoint.cluster.apiserver.patch.apply_across_versions import settle_other_versions
from setpoint.cluster.apiserver.patch.merge_patch import merge_patch_in_place
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode
from setpoint.cluster.apiserver.patch.noop_applies import noop_applies
from setpoint.cluster.apiserver.patch.server_side_apply import MissingKeyField, server_side_apply
from setpoint.cluster.apiserver.patch.strategic import StrategicPatchError, strategic_merge_patch
from setpoint.cluster.apiserver.registry.builtin_defaults import apply_builtin_defaults
from setpoint.cluster.apiserver.registry.object_operations import (
    ObjectOperations,
    Result,
    WriteOptions,
    converts,
    now_timestamp,
)
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError

#: Patch types of built-in resources, in upstream's order (the 415 message lists them).
BUILTIN_PATCH_TYPES: Final = (
    request_body.JSON_PATCH,
    request_body.MERGE_PATCH,
    request_body.STRATEGIC_MERGE_PATCH,
    request_body.APPLY_PATCH,
)
#: Custom resources have no strategic merge patch.
CUSTOM_PATCH_TYPES: Final = (
    request_body.JSON_PATCH,
    request_body.MERGE_PATCH,
    request_body.APPLY_PATCH,
)
#: Upstream's reply when a JSON patch cannot be applied (422, message without the detail).
PATCH_REJECTED_MESSAGE: Final = "the server rejected our request due to an error in our request"
#: Longest accepted ``fieldManager`` (``ValidateFieldManager``).
FIELD_MANAGER_MAX_LENGTH: Final = 128

_JSON_DECODE: Final = msgspec.json.Decoder().decode


def accepted_patch_types(resource: ServedResource) -> tuple[str, ...]:
    """The patch media types ``resource`` accepts."""
    return CUSTOM_PATCH_TYPES if resource.is_custom else BUILTIN_PATCH_TYPES


def patch_type(request: web.BaseRequest, resource: ServedResource) -> str:
    """The request's patch type; 415 when the resource does not accept it."""
    kind = request_body.media_type(request)
    accepted = accepted_patch_types(resource)
    if kind not in accepted:
        raise status_errors.unsupported_media_type(kind, accepted)
    return kind


def check_patch_options(request: web.BaseRequest, kind: str) -> bool:
    """Validate ``fieldManager``/``force`` for a patch of ``kind``; the value of ``force``."""
    query = request.query
    errors = []
    manager = query.get("fieldManager", "")
    force_text = query.get("force")
    force = force_text is not None and force_text.lower() in ("true", "1")
    if kind == request_body.APPLY_PATCH:
        if not manager:
            errors.append(fe.required("fieldManager", "is required for apply patch"))
    elif force_text is not None:
        errors.append(fe.forbidden("force", "may not be specified for non-apply patch"))
    if len(manager) > FIELD_MANAGER_MAX_LENGTH:
        errors.append(fe.too_long("fieldManager", FIELD_MANAGER_MAX_LENGTH))
    if errors:
        raise status_errors.invalid("meta.k8s.io", "PatchOptions", "", errors)
    return force


def decode_apply_body(body: bytes) -> dict[str, Any]:
    """An apply patch: YAML (JSON is YAML too); 400 when it is not an object."""
    if body.lstrip()[:1] == b"{":
        # Most clients send JSON: decode it as such, much faster than the YAML loader.
        try:
            decoded = _JSON_DECODE(body)
        except msgspec.DecodeError:
            pass
        except RecursionError:
            raise body_limits.too_deep() from None
        else:
            if isinstance(decoded, dict):
                # Everything after (apply, pruning, validation) walks it recursively.
                if body.count(b"{") + body.count(b"[") > body_limits.MAX_NESTING_DEPTH:
                    body_limits.check_depth(decoded)
                return decoded
    try:
        # The same depth and alias limits as a YAML create (upstream decodes both alike).
        value = body_limits.load_yaml(body)
    except yaml.YAMLError as exc:
        raise status_errors.bad_request(f"error decoding YAML: {exc}") from exc
    if not isinstance(value, dict):
        raise status_errors.bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot "
            "unmarshal into Go value of type map[string]interface {}"
        )
    return value


def apply_patch_body(
    kind: str,
    current: dict[str, Any],
    body: bytes,
    schema: MergeNode | None,
    *,
    current_shallow: bool = False,
) -> Any:
    """``current`` (owned by the caller: a merge patch changes it) with a JSON, merge or strategic
    merge patch applied.

    ``current_shallow``: the caller knows ``current`` nests at most
    :data:`~body_limits.MAX_NESTING_DEPTH` deep.
    """
    if kind == request_body.MERGE_PATCH:
        patched = merge_patch_in_place(current, request_body.decode_json(body))
        if current_shallow:
            # A merge patch nests no deeper than the deeper of its target and itself, and
            # decode_json already refused a patch nested too deep: nothing to walk.
            return patched
        return body_limits.checked_patch_result(patched)
    if kind == request_body.JSON_PATCH:
        operations = request_body.decode_json(body)
        if not isinstance(operations, list):
            raise status_errors.bad_request(
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
            )
        body_limits.check_patch_operations(len(operations))
        try:
            patched = apply_json_patch(
                current, operations, max_copy_bytes=body_limits.MAX_PATCH_COPY_BYTES
            )
        except (PatchTestFailed, PatchError) as exc:
            raise _patch_rejected(str(exc)) from exc
        return body_limits.checked_patch_result(patched)
    if kind == request_body.STRATEGIC_MERGE_PATCH and schema is not None:
        try:
            patched = strategic_merge_patch(current, request_body.decode_json(body), schema)
        except StrategicPatchError as exc:
            raise status_errors.bad_request(str(exc)) from exc
        return body_limits.checked_patch_result(patched)
    raise status_errors.unsupported_media_type(kind, (request_body.MERGE_PATCH,))


def _patch_rejected(detail: str) -> APIError:
    return APIError(
        422,
        StatusReason.INVALID,
        PATCH_REJECTED_MESSAGE,
        details={"causes": [{"reason": "FieldValueInvalid", "message": detail}]},
    )


def check_apply_identity(resource: ServedResource, config: dict[str, Any], name: str) -> None:
    """The applied object must be of the URL's version, kind and name, without managedFields."""
    api_version = config.get("apiVersion")
    if api_version != resource.api_version:
        raise status_errors.bad_request(
            "Incorrect version specified in apply patch. Specified patch version: "
            f"{api_version or ''}, expected: {resource.api_version}"
        )
    kind = config.get("kind")
    if kind != resource.kind:
        raise status_errors.bad_request(
            f"Incorrect kind specified in apply patch. Specified patch kind: {kind or ''}, "
            f"expected: {resource.kind}"
        )
    metadata = config.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise status_errors.bad_request("metadata must be an object")
    metadata = metadata or {}
    if metadata.get("managedFields") is not None:
        raise status_errors.bad_request("metadata.managedFields must be nil")
    body_name = metadata.get("name") or ""
    if body_name and body_name != name:
        raise status_errors.bad_request(
            f"the name of the object ({body_name}) does not match the name on the URL ({name})"
        )


async def patch_object(
    ops: ObjectOperations,
    resource: ServedResource,
    namespace: str | None,
    name: str,
    subresource: str,
    request: web.BaseRequest,
    options: WriteOptions,
) -> Result:
    """Serve a PATCH of one object (or its ``status``)."""
    kind = patch_type(request, resource)
    force = check_patch_options(request, kind)
    body = await request_body.read_body(request)
    crd_name = resource.crd_name if resource.is_custom else ""
    root = ops.merge_schemas.root(resource.group, resource.version, resource.kind, crd_name)
    if kind == request_body.APPLY_PATCH:
        return await _apply(ops, resource, namespace, name, subresource, body, force, options, root)
    record = ops.get_record(resource, namespace, name)
    value = record.value
    current = await ops.present_object(resource, decode(value))
    revision = current["metadata"].get("resourceVersion")
    # Each level of nesting opens a bracket: few brackets in the stored JSON, shallow object.
    shallow = (
        not converts(resource)
        and value.count(b"{") + value.count(b"[") <= body_limits.MAX_NESTING_DEPTH
    )
    patched = apply_patch_body(
        kind, current, body, None if resource.is_custom else root, current_shallow=shallow
    )
    if not isinstance(patched, dict):
        raise status_errors.bad_request("the patch did not result in a JSON object")
    metadata = patched.get("metadata")
    if isinstance(metadata, dict) and not metadata.get("resourceVersion"):
        metadata["resourceVersion"] = revision
    return await ops.update(resource, namespace, name, patched, options, subresource)


async def _apply(
    ops: ObjectOperations,
    resource: ServedResource,
    namespace: str | None,
    name: str,
    subresource: str,
    body: bytes,
    force: bool,
    options: WriteOptions,
    root: MergeNode,
) -> Result:
    record = ops.storage.get(resource.storage_key(namespace, name))
    memo = noop_applies(ops)
    memo_key = None
    if record is not None and not options.dry_run:
        memo_key = memo.key(
            record.key, subresource, options.field_manager, force, options.field_validation, body
        )
        warnings = memo.lookup(memo_key, record.revision, root)
        if warnings is not None:
            return Result(200, await ops.present(resource, record.value), warnings)
    config = decode_apply_body(body)
    check_apply_identity(resource, config, name)
    live = await ops.present_object(resource, decode(record.value)) if record is not None else None
    if live is None and subresource:
        raise status_errors.not_found(resource.group, resource.plural, name)
    try:
        result = server_side_apply(
            root,
            live,
            config,
            manager=options.field_manager,
            api_version=resource.api_version,
            subresource=subresource,
            force=force,
            now=now_timestamp(),
            builtin=not resource.is_custom,
            has_status=resource.has_status,
            defaulter=None if resource.is_custom else apply_builtin_defaults,
        )
    except MissingKeyField as exc:
        # A plain error upstream: 500 with no reason (kubectl prints "Error from server: ...").
        metadata = config.get("metadata") or {}
        identity = (
            f"{metadata.get('namespace', '')}/{metadata.get('name', name)}; "
            f"{resource.group}/{resource.version}, Kind={resource.kind}"
        )
        raise APIError(
            500, StatusReason.UNKNOWN, f"failed to create typed patch object ({identity}): {exc}"
        ) from exc
    if live is not None and resource.is_custom:
        await settle_other_versions(
            result,
            live,
            api_version=resource.api_version,
            manager=options.field_manager,
            subresource=subresource,
            force=force,
            has_status=resource.has_status,
            convert=lambda objects, version: ops.convert_objects(resource, objects, version),
            schema_of=lambda version: ops.merge_schemas.root(
                resource.group, version, resource.kind, resource.crd_name
            ),
        )
    options.managed_fields = result.managed_fields
    obj = result.obj
    metadata = obj.setdefault("metadata", {})
    if live is None or record is None:
        metadata["name"] = name
        metadata.pop("managedFields", None)
        return await ops.create(resource, namespace, obj, options)
    if not metadata.get("resourceVersion"):
        metadata["resourceVersion"] = live["metadata"].get("resourceVersion")
    answer = await ops.update(resource, namespace, name, obj, options, subresource)
    if memo_key is not None and answer.code == 200:
        after = ops.storage.get(record.key)
        if after is not None and after.revision == record.revision:
            memo.remember(memo_key, record.revision, root, answer.warnings)
    return answer
