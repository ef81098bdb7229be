"""Options of write requests: create/update/patch query parameters, DeleteOptions, patches.

DeleteOptions come from the body (kubectl sends ``{"propagationPolicy":"Background"}``) or from
query parameters; patches are applied by their Content-Type (merge patch and JSON patch; the
strategic merge and apply patch types are answered with 415 until they are served).
"""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from setpoint.api import field_errors as fe
from setpoint.api.patch import PatchError, PatchTestFailed, apply_json_patch, apply_merge_patch
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http import body_limits, request_body
from setpoint.cluster.apiserver.http.list_options import parse_bool
from setpoint.cluster.apiserver.http.query_integers import int64_option
from setpoint.cluster.apiserver.registry.object_operations import DeleteOptions, WriteOptions
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.status_errors import APIError

DRY_RUN_ALL: Final = "All"
FIELD_VALIDATION_DIRECTIVES: Final = ("Ignore", "Warn", "Strict")
#: Upstream's reply when a JSON patch cannot be applied (422, message without the detail).
PATCH_REJECTED_MESSAGE: Final = "the server rejected our request due to an error in our request"


def write_options(request: web.BaseRequest) -> WriteOptions:
    """``dryRun``, ``fieldValidation`` and ``fieldManager`` of a create/update/patch."""
    query = request.query
    dry_run = query.getall("dryRun", [])
    errors = []
    for value in dry_run:
        if value != DRY_RUN_ALL:
            errors.append(fe.not_supported("dryRun", value, [DRY_RUN_ALL]))
    validation = query.get("fieldValidation", "") or "Warn"
    if validation not in FIELD_VALIDATION_DIRECTIVES:
        raise status_errors.bad_request(
            f"fieldValidation must be one of {', '.join(FIELD_VALIDATION_DIRECTIVES)}; "
            f"got {validation!r}"
        )
    if errors:
        raise status_errors.invalid("meta.k8s.io", "CreateOptions", "", errors)
    return WriteOptions(
        dry_run=bool(dry_run),
        field_validation=validation,
        field_manager=query.get("fieldManager", ""),
    )


async def delete_options(request: web.BaseRequest) -> DeleteOptions:
    """DeleteOptions from the body (as kubectl sends them) or the query."""
    query = request.query
    body_bytes = await request_body.read_body(request)
    body: dict[str, Any] = {}
    if body_bytes.strip():
        decoded = request_body.decode_json(body_bytes)
        if not isinstance(decoded, dict):
            raise status_errors.bad_request("DeleteOptions must be a JSON object")
        body = decoded
    options = DeleteOptions()
    grace = body.get("gracePeriodSeconds", query.get("gracePeriodSeconds"))
    if grace is not None and grace != "":
        options.grace_period_seconds = int64_option(grace, "gracePeriodSeconds")
    policy = body.get("propagationPolicy", query.get("propagationPolicy"))
    if policy:
        options.propagation_policy = str(policy)
    orphan = body.get("orphanDependents", query.get("orphanDependents"))
    if orphan is not None and orphan != "":
        options.orphan_dependents = orphan if isinstance(orphan, bool) else parse_bool(str(orphan))
    preconditions = body.get("preconditions")
    if isinstance(preconditions, dict):
        if preconditions.get("uid"):
            options.precondition_uid = str(preconditions["uid"])
        if preconditions.get("resourceVersion"):
            options.precondition_resource_version = str(preconditions["resourceVersion"])
    dry_run = body.get("dryRun") or query.getall("dryRun", [])
    if dry_run:
        values = dry_run if isinstance(dry_run, list) else [dry_run]
        bad = [v for v in values if v != DRY_RUN_ALL]
        if bad:
            raise status_errors.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [fe.not_supported("dryRun", bad[0], [DRY_RUN_ALL])],
            )
        options.dry_run = True
    return options


def apply_patch(
    request: web.BaseRequest,
    resource: ServedResource,
    current: dict[str, Any],
    body: bytes,
    *,
    scale_patch: bool = False,
) -> Any:
    """The object after applying the request's patch, by its Content-Type."""
    kind = request_body.media_type(request)
    accepted = (
        request_body.CUSTOM_PATCH_TYPES
        if resource.is_custom
        else (request_body.BUILTIN_PATCH_TYPES)
    )
    if kind == request_body.MERGE_PATCH:
        patch = request_body.decode_json(body)
        return body_limits.checked_patch_result(apply_merge_patch(current, patch))
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
            return body_limits.checked_patch_result(patched)
        except PatchTestFailed as exc:
            raise _patch_rejected(str(exc)) from exc
        except PatchError as exc:
            raise _patch_rejected(str(exc)) from exc
    raise status_errors.unsupported_media_type(kind, accepted)


def _patch_rejected(detail: str) -> APIError:
    return APIError(
        422,
        StatusReason.INVALID,
        PATCH_REJECTED_MESSAGE,
        details={"causes": [{"reason": "FieldValueInvalid", "message": detail}]},
    )
