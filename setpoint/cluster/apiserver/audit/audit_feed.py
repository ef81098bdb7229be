"""`/debug/setpoint/audit`: the recent writes to the local cluster, with what each one changed.

An in-memory ring (default 10,000 records) of every mutating request — create, update, patch,
delete, deletecollection — successful or not: who sent it (user, User-Agent, field manager),
what it addressed, the answer's code, and, for an update or a patch, a JSON patch from the
object as it was stored before to the object stored after (``managedFields`` and
``resourceVersion`` left out). A create keeps the created object instead. Secret values are
redacted (:mod:`setpoint.api.secret_redaction`). The ``auditID`` is the audit log's when
``--audit-log`` is on.

Served as JSON (``GET /debug/setpoint/audit?since=&resource=&group=&namespace=&name=&limit=``)
and as Server-Sent Events (``watch=1``). It is a non-resource URL: reading it needs ``get`` on
``/debug/setpoint/audit`` (members of ``system:masters`` may always).

Per write, the feed costs a context variable, the old object encoded to JSON (in C) and one
record; diffs are made when a record is first read.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl

import msgspec
from aiohttp import web

from setpoint.api.patch import create_json_patch
from setpoint.api.record_ring import RecordRing
from setpoint.api.secret_redaction import redact_patch, redact_secret
from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.audit.audit_log import new_audit_id, rfc3339_micro
from setpoint.cluster.apiserver.auth.authorization.attributes import request_attributes
from setpoint.cluster.apiserver.auth.request_user import request_user
from setpoint.cluster.apiserver.registry.write_capture import (
    WRITE_CAPTURE,
    WriteCapture,
    stored_identity,
)

__all__ = [
    "AUDIT_FEED_PATH",
    "DEFAULT_AUDIT_FEED_SIZE",
    "AuditFeed",
    "AuditRecord",
]

AUDIT_FEED_PATH: Final = "/debug/setpoint/audit"
#: Records kept by default: the writes of a busy few minutes.
DEFAULT_AUDIT_FEED_SIZE: Final = 10_000
#: Methods whose requests the feed records (create, update, patch, delete, deletecollection).
MUTATING_METHODS: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_RECORDED_VERBS: Final = frozenset({"create", "update", "patch", "delete", "deletecollection"})
#: A stream with nothing to send writes a comment this often.
KEEPALIVE_SECONDS: Final = 15.0
#: Metadata fields left out of diffs and objects: they change on every write.
_NOISE: Final = ("managedFields", "resourceVersion")

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
#: What :meth:`AuditFeed.begin` hands to :meth:`AuditFeed.complete`: the request's capture and
#: the token that sets it back.
Recording = tuple[WriteCapture, contextvars.Token[WriteCapture | None]]


class AuditRecord:
    """One mutating request, as the feed keeps it: what the request and its answer were, kept
    as they came (a few references), made into the contract's JSON when first read."""

    __slots__ = (
        "_document",
        "_json",
        "audit_id",
        "capture",
        "method",
        "path",
        "query",
        "status",
        "time",
        "user",
        "user_agent",
    )

    def __init__(
        self,
        request: web.BaseRequest,
        status: int,
        capture: WriteCapture | None,
        audit_id: str | None,
    ) -> None:
        self.time = time.time()
        self.method = request.method
        self.path = request.path
        self.query = request.query_string
        self.user = request_user(request)
        self.user_agent = request.headers.get("User-Agent")
        self.status = status
        self.capture = capture
        self.audit_id = audit_id
        self._document: dict[str, Any] | None = None
        self._json: bytes | None = None

    def document(self) -> dict[str, Any] | None:
        """The record's fields (None when the request is not one the feed shows)."""
        document = self._document
        if document is not None:
            return document or None
        query = dict(parse_qsl(self.query, keep_blank_values=True))
        attributes = request_attributes(self.user, self.method, self.path, query)
        if not attributes.resource_request or attributes.verb not in _RECORDED_VERBS:
            self._document = {}
            return None
        capture = self.capture
        written = capture is not None and capture.writes > 0
        resource = capture.resource if capture is not None and written else None
        name, uid = attributes.name, None
        if capture is not None and written and attributes.verb != "deletecollection":
            # A create names its object in the body; a deletecollection names none (the
            # capture holds only the first object it deleted).
            name, uid = _identity(capture, name)
        api_version = (
            f"{attributes.api_group}/{attributes.api_version}"
            if attributes.api_group
            else attributes.api_version
        )
        user = self.user
        document = self._document = {
            "time": rfc3339_micro(self.time),
            "auditID": self.audit_id or new_audit_id(),
            "verb": attributes.verb,
            "user": {"username": user.username, "groups": list(user.groups)},
            "userAgent": self.user_agent,
            "fieldManager": query.get("fieldManager"),
            "objectRef": {
                "apiVersion": api_version,
                "apiGroup": attributes.api_group,
                "resource": attributes.resource,
                "kind": resource.kind if resource is not None else None,
                "namespace": attributes.namespace or None,
                "name": name or None,
                "uid": uid,
                "subresource": attributes.subresource or None,
            },
            "responseCode": self.status,
            "resourceVersion": str(capture.revision)
            if capture is not None and written and attributes.verb != "deletecollection"
            else None,
            "diff": None,
        }
        if capture is not None and written:
            self._settle(document, capture)
        self.capture = None
        return document

    def to_json(self, seq: int) -> bytes:
        """The record as JSON (made once: the diff is computed on the first read)."""
        encoded = self._json
        if encoded is None:
            document = self.document() or {}
            encoded = self._json = _ENCODER.encode({"seq": seq, **document})
        return encoded

    @staticmethod
    def _settle(document: dict[str, Any], capture: WriteCapture) -> None:
        """Fill in the diff (or the created object) from the captured JSON."""
        verb = document["verb"]
        if verb == "create" and capture.before is None and capture.after is not None:
            document["object"] = redact_secret(_without_noise(_DECODER.decode(capture.after)))
        elif (
            verb in ("update", "patch") and capture.before is not None and capture.after is not None
        ):
            before = _without_noise(_DECODER.decode(capture.before))
            after = _without_noise(_DECODER.decode(capture.after))
            patch = create_json_patch(before, after)
            if after.get("kind") == "Secret" or before.get("kind") == "Secret":
                patch = redact_patch(patch)
            document["diff"] = patch

    def shown(self) -> bool:
        """Whether the feed shows this request (a mutating request on a resource)."""
        return self.document() is not None

    def matches(self, query: Mapping[str, str]) -> bool:
        """Whether the record passes the query's ``resource``/``group``/``namespace``/``name``."""
        document = self.document()
        if document is None:
            return False
        ref = document["objectRef"]
        for parameter, field in _FILTERS:
            wanted = query.get(parameter)
            if wanted is not None and (ref.get(field) or "") != wanted:
                return False
        return True


_FILTERS: Final = (
    ("resource", "resource"),
    ("group", "apiGroup"),
    ("namespace", "namespace"),
    ("name", "name"),
)


class AuditFeed:
    """The ring of recent mutating requests of one API server."""

    def __init__(
        self,
        size: int = DEFAULT_AUDIT_FEED_SIZE,
        *,
        audit_id: Callable[[web.BaseRequest], str | None] | None = None,
    ) -> None:
        self.ring: RecordRing[AuditRecord] = RecordRing(size)
        # Set when the server stops: open streams end.
        self._closing = False
        #: The audit log's ID of a request (None: no audit log, no IDs).
        self._audit_id = audit_id

    # -- recording ----------------------------------------------------------------------------

    def begin(self, request: web.BaseRequest) -> Recording | None:
        """Start capturing the write of a mutating ``request``; pass the result to
        :meth:`complete` (or, when the request is abandoned, to :meth:`abandon`)."""
        if request.method not in MUTATING_METHODS:
            return None
        capture = WriteCapture()
        return capture, WRITE_CAPTURE.set(capture)

    @staticmethod
    def abandon(recording: Recording) -> None:
        """Stop capturing without a record (the client left before an answer was made)."""
        WRITE_CAPTURE.reset(recording[1])

    def complete(
        self, request: web.BaseRequest, response: web.StreamResponse, recording: Recording
    ) -> None:
        """Record ``request`` with its answer (what it was is worked out when it is read)."""
        capture, token = recording
        WRITE_CAPTURE.reset(token)
        written = capture.writes > 0
        audit_id = self._audit_id
        record = AuditRecord(
            request,
            response.status,
            capture if written else None,
            audit_id(request) if audit_id is not None else None,
        )
        if written and _is_secret(capture):
            record.document()  # now: Secret values must not stay in memory
        self.ring.append(record)

    # -- serving ------------------------------------------------------------------------------

    def close_streams(self) -> None:
        """End the open streams (the server is stopping)."""
        self._closing = True
        self.ring.wake()

    async def serve(self, request: web.BaseRequest) -> web.StreamResponse:
        """``GET /debug/setpoint/audit`` (list, or a stream with ``watch=1``)."""
        if request.method not in ("GET", "HEAD"):
            raise status_errors.APIError(
                405,
                StatusReason.METHOD_NOT_ALLOWED,
                "the server does not allow this method on the requested resource",
            )
        query = request.query
        since = _whole(query, "since", 0) or 0
        limit = _whole(query, "limit", None)
        filtered = any(query.get(parameter) is not None for parameter, _ in _FILTERS)
        match = (lambda record: record.matches(query)) if filtered else AuditRecord.shown
        if query.get("watch") in ("1", "true"):
            return await self._stream(request, since, match)
        ring = self.ring
        last_seq = ring.last_seq
        records, _ = ring.since(since, match, limit)
        body = b"".join(
            (
                b'{"lastSeq":%d,"records":[' % last_seq,
                b",".join(record.to_json(seq) for seq, record in records),
                b"]}\n",
            )
        )
        return web.Response(body=body, content_type="application/json")

    async def _stream(
        self,
        request: web.BaseRequest,
        since: int,
        match: Callable[[AuditRecord], bool],
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        ring = self.ring
        last = since
        with contextlib.suppress(ConnectionResetError):
            while not self._closing:
                records, _ = ring.since(last)
                if records:
                    last = records[-1][0]
                    chunk = b"".join(
                        b"id: %d\nevent: audit\ndata: %s\n\n" % (seq, record.to_json(seq))
                        for seq, record in records
                        if match(record)
                    )
                    if chunk:
                        await response.write(chunk)
                    continue
                if not await ring.wait_after(last, KEEPALIVE_SECONDS) and not self._closing:
                    await response.write(b": keepalive\n\n")
        return response


def _whole(query: Mapping[str, str], name: str, default: int | None) -> int | None:
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0 or (name == "limit" and value < 1):
        raise status_errors.bad_request(f"{name}: must be a whole number, got {text!r}")
    return value


def _identity(capture: WriteCapture, name: str) -> tuple[str, str | None]:
    """The written object's name and uid."""
    stored = capture.after if capture.after is not None else capture.before
    if stored is None:
        return name, None
    found_name, _, uid = stored_identity(stored)
    return found_name or name, uid or None


def _is_secret(capture: WriteCapture) -> bool:
    resource = capture.resource
    return resource is not None and resource.kind == "Secret" and not resource.group


def _without_noise(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict):
        obj["metadata"] = {k: v for k, v in metadata.items() if k not in _NOISE}
    return obj
