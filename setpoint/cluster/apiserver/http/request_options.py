"""Options of write requests: create/update/patch query parameters, DeleteOptions, patches.

DeleteOptions come from the body (kubectl sends ``{"propagationPolicy":"Background"}``) or from
query parameters. Patches are applied by :mod:`setpoint.cluster.apiserver.patch`.
"""

from __future__ import annotations

from typing import Any, Final

from aiohttp import web

from setpoint.api import field_errors as fe
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http import request_body
from setpoint.cluster.apiserver.http.list_options import parse_bool
from setpoint.cluster.apiserver.http.query_integers import int64_option
from setpoint.cluster.apiserver.patch import patch_request
from setpoint.cluster.apiserver.patch.merge_schema import builtin_root
from setpoint.cluster.apiserver.registry.object_operations import DeleteOptions, WriteOptions
from setpoint.cluster.apiserver.registry.served_resources import ServedResource

DRY_RUN_ALL: Final = "All"
FIELD_VALIDATION_DIRECTIVES: Final = ("Ignore", "Warn", "Strict")


def write_options(request: web.BaseRequest) -> WriteOptions:
    """``dryRun``, ``fieldValidation`` and ``fieldManager`` of a create/update/patch."""
    if not request.query_string:  # most writes: every option at its default
        return WriteOptions(user_agent=request.headers.get("User-Agent", ""))
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
        user_agent=request.headers.get("User-Agent", ""),
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
    """The object after applying the request's patch, by its Content-Type (for ``/scale``)."""
    kind = request_body.media_type(request)
    accepted = tuple(
        t for t in patch_request.accepted_patch_types(resource) if t != request_body.APPLY_PATCH
    )
    if kind not in accepted:
        raise status_errors.unsupported_media_type(kind, accepted)
    schema = builtin_root("autoscaling/v1", "Scale") if scale_patch else None
    return patch_request.apply_patch_body(kind, current, body, schema)
