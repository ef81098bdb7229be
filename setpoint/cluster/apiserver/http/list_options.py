"""Query parameters of list and watch requests, parsed and checked as kube-apiserver does.

Covers ``labelSelector``, ``fieldSelector``, ``limit``, ``continue``, ``resourceVersion``,
``resourceVersionMatch``, ``timeoutSeconds``, ``allowWatchBookmarks`` and
``sendInitialEvents``; invalid combinations get the upstream 400/422 errors.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.selectors import FieldSelector, LabelSelector, SelectorError
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.query_integers import INT64_MAX, parse_int64
from setpoint.cluster.apiserver.status_errors import APIError

MATCH_EXACT = "Exact"
MATCH_NOT_OLDER_THAN = "NotOlderThan"
#: The API version kube-apiserver writes into continue tokens.
_CONTINUE_TOKEN_VERSION = "meta.k8s.io/v1"

_TRUE_VALUES = frozenset({"true", "1", "True", "TRUE", "t", "T"})


class ContinueToken(msgspec.Struct):
    """The decoded ``continue`` token: the list's revision and the last key returned."""

    v: str
    rv: int
    start: str


def encode_continue(revision: int, last_key: str) -> str:
    """An opaque token that resumes a list after ``last_key`` at ``revision``."""
    raw = msgspec.json.encode(ContinueToken(_CONTINUE_TOKEN_VERSION, revision, last_key))
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_continue(token: str) -> ContinueToken:
    """Decode a token from :func:`encode_continue`; 400 BadRequest when it is not one."""
    try:
        padded = token + "=" * (-len(token) % 4)
        decoded = msgspec.json.decode(base64.urlsafe_b64decode(padded), type=ContinueToken)
    except (binascii.Error, ValueError, msgspec.DecodeError) as exc:
        raise status_errors.bad_request(f"continue key is not valid: {exc}") from exc
    if decoded.v != _CONTINUE_TOKEN_VERSION:
        raise status_errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion "
            f"(version {decoded.v})"
        )
    return decoded


def parse_bool(value: str | None) -> bool:
    """A boolean query parameter as Go's ``strconv.ParseBool`` reads it (absent = false)."""
    return value is not None and value in _TRUE_VALUES


@dataclass(frozen=True, slots=True)
class ListOptions:
    """The parsed options of one list or watch request."""

    label_selector: LabelSelector | None = None
    field_selector: FieldSelector | None = None
    limit: int = 0
    continue_token: ContinueToken | None = None
    continue_raw: str = ""
    resource_version: str = ""
    resource_version_match: str = ""
    watch: bool = False
    timeout_seconds: int | None = None
    allow_bookmarks: bool = False
    send_initial_events: bool | None = None


def _invalid_list_options(errors: list[FieldError]) -> APIError:
    return status_errors.invalid("meta.k8s.io", "ListOptions", "", errors)


def _int_param(query: Mapping[str, str], name: str) -> int | None:
    raw = query.get(name)
    if raw is None or raw == "":
        return None
    return parse_int64(raw, name)


def parse_list_options(query: Mapping[str, str], *, watch: bool = False) -> ListOptions:
    """Parse and validate list/watch query parameters; raises :class:`APIError`."""
    labels: LabelSelector | None = None
    fields: FieldSelector | None = None
    try:
        raw_labels = query.get("labelSelector")
        if raw_labels:
            labels = LabelSelector.parse(raw_labels)
            if labels.empty:
                labels = None
        raw_fields = query.get("fieldSelector")
        if raw_fields:
            fields = FieldSelector.parse(raw_fields)
            if fields.empty:
                fields = None
    except SelectorError as exc:
        raise status_errors.bad_request(str(exc)) from exc
    watch = watch or parse_bool(query.get("watch"))
    limit = _int_param(query, "limit") or 0
    timeout = _int_param(query, "timeoutSeconds")
    continue_raw = query.get("continue", "")
    token = decode_continue(continue_raw) if continue_raw and not watch else None
    resource_version = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    initial_raw = query.get("sendInitialEvents")
    send_initial = None if initial_raw is None else parse_bool(initial_raw)
    allow_bookmarks = parse_bool(query.get("allowWatchBookmarks"))
    errors: list[FieldError] = []
    if match:
        if match not in (MATCH_EXACT, MATCH_NOT_OLDER_THAN):
            errors.append(
                fe.not_supported("resourceVersionMatch", match, [MATCH_EXACT, MATCH_NOT_OLDER_THAN])
            )
        elif watch and send_initial is None:
            errors.append(
                fe.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch "
                    "unless sendInitialEvents is provided",
                )
            )
        elif watch and match != MATCH_NOT_OLDER_THAN:
            errors.append(fe.not_supported("resourceVersionMatch", match, [MATCH_NOT_OLDER_THAN]))
        elif not resource_version and not watch:
            errors.append(
                fe.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        elif continue_raw:
            errors.append(
                fe.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        elif match == MATCH_EXACT and resource_version == "0":
            errors.append(
                fe.forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if send_initial is not None:
        if not watch:
            errors.append(
                fe.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
            )
        elif send_initial and not allow_bookmarks:
            errors.append(
                fe.forbidden(
                    "allowWatchBookmarks",
                    "allowWatchBookmarks must be set to true when sendInitialEvents is specified",
                )
            )
        elif match != MATCH_NOT_OLDER_THAN:
            errors.append(
                fe.forbidden(
                    "resourceVersionMatch",
                    "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                )
            )
    if limit < 0:
        limit = 0
    if errors:
        raise _invalid_list_options(errors)
    return ListOptions(
        label_selector=labels,
        field_selector=fields,
        limit=limit,
        continue_token=token,
        continue_raw=continue_raw,
        resource_version=resource_version,
        resource_version_match=match,
        watch=watch,
        timeout_seconds=timeout,
        allow_bookmarks=allow_bookmarks,
        send_initial_events=send_initial,
    )


def parse_resource_version(value: str, *, what: str = "resourceVersion") -> int:
    """A resourceVersion as the integer revision; 400 when it is not one."""
    # ASCII digits only (str.isdigit alone also takes other scripts' digits).
    revision = int(value) if value.isascii() and value.isdigit() else -1
    if not 0 <= revision <= INT64_MAX:
        raise status_errors.bad_request(f"invalid resource version: {value}") from None
    return revision


def query_dict(pairs: Any) -> dict[str, str]:
    """The first value of every query parameter (aiohttp's MultiDict flattened)."""
    result: dict[str, str] = {}
    for key, value in pairs.items():
        result.setdefault(key, value)
    return result
