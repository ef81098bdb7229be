"""One JSON line per request, in kube-apiserver's ``audit.k8s.io/v1`` Event shape.

The handler calls :meth:`AuditLog.begin` when a request arrives and :meth:`AuditLog.complete`
with its response; the server makes its requests with :meth:`AuditLog.request_factory`, whose
requests tell the log when their response starts (to add the ``Audit-Id`` header before it is
sent, and to write the ``ResponseStarted`` line of a streamed answer).

What an Event holds comes from what the server already knows: the verb, namespace, group,
resource and name as authorization reads them (:mod:`..auth.authorization.attributes`), the
user (:mod:`..auth.request_user`; with ``Impersonate-*`` headers ``user`` is the caller and
``impersonatedUser`` whom it acted as), and the authorizer's decision and reason as the
``authorization.k8s.io/decision`` and ``/reason`` annotations. Health and version probes are
not logged (they are open to anyone and would drown the rest).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, Final

import msgspec
import yaml
from aiohttp import web

from setpoint.cluster.apiserver.audit.admission_annotations import begin_request
from setpoint.cluster.apiserver.auth.authorization.access_control import (
    AUTHENTICATED_USER_KEY,
    DECISION_KEY,
)
from setpoint.cluster.apiserver.auth.authorization.attributes import request_attributes
from setpoint.cluster.apiserver.auth.identity import UserInfo
from setpoint.cluster.apiserver.auth.request_user import request_user
from setpoint.cluster.apiserver.http import protobuf
from setpoint.cluster.apiserver.http.request_body import REQUEST_BODY_KEY

log = logging.getLogger(__name__)

METADATA: Final = "Metadata"
REQUEST: Final = "Request"
#: The levels ``--audit-level`` accepts (upstream's ``Metadata`` and ``Request``).
AUDIT_LEVELS: Final = (METADATA, REQUEST)
#: The response header carrying the request's audit ID (as kube-apiserver sends it).
AUDIT_ID_HEADER: Final = "Audit-Id"
#: A new audit log file's mode (kube-apiserver creates it 0600).
AUDIT_FILE_MODE: Final = 0o600
#: Lines are written to the file at most this long after their request.
FLUSH_INTERVAL_SECONDS: Final = 1.0
#: The file's write buffer: most requests cost a copy into it, not a system call.
BUFFER_BYTES: Final = 1 << 16
#: Paths that are not logged (anyone may read them; probes poll them).
UNLOGGED_PATHS: Final = frozenset({"/healthz", "/livez", "/readyz", "/version"})
#: ``metav1.Status`` fields the Event keeps from an error answer (``LogResponseObject``).
_STATUS_FIELDS: Final = ("status", "message", "reason", "details", "code")
_JSON_BODY_TYPES: Final = ("json",)
_YAML_BODY_TYPES: Final = ("yaml",)

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()


class AuditLogError(OSError):
    """The audit log file cannot be opened."""


class _Record:
    """One request on its way through the server."""

    __slots__ = ("annotations", "audit_id", "completed", "received", "stream")

    def __init__(self) -> None:
        self.audit_id = _uuid4()
        self.received = time.time()
        self.completed = False
        #: The response sent while the handler still ran (a watch's), once it started.
        self.stream: web.StreamResponse | None = None
        #: Annotations admission added (webhooks' auditAnnotations).
        self.annotations: dict[str, str] = {}


_RECORD_KEY: Final = web.RequestKey("setpoint.audit", _Record)


class AuditLog:
    """Writes the audit Events of one server to ``path`` (appended), at ``level``.

    ``omit_groups``: requests acting as a member of one of these groups are not logged (as an
    upstream audit policy rule of level ``None`` on ``userGroups``); the testing kit leaves out
    ``system:masters``, the admin's own requests, to keep only what operators do.
    """

    def __init__(
        self, path: str | Path, level: str = METADATA, omit_groups: Iterable[str] = ()
    ) -> None:
        if level not in AUDIT_LEVELS:
            raise ValueError(
                f"audit level: must be one of {', '.join(AUDIT_LEVELS)}, got {level!r}"
            )
        self.path = Path(path)
        self.level = level
        self.omit_groups = frozenset(omit_groups)
        self._file: IO[bytes] | None = None
        self._flush_handle: asyncio.TimerHandle | None = None

    # ----- lifetime -----

    def open(self) -> None:
        """Open the file for appending (its directory must exist), created 0600; an existing
        file keeps its mode."""
        if self._file is None:
            try:
                # Owner only, as kube-apiserver's log file: it names every user and object, and
                # at the Request level it holds the bodies written (Secret values included).
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, AUDIT_FILE_MODE)
                self._file = os.fdopen(fd, "ab", buffering=BUFFER_BYTES)
            except OSError as error:
                raise AuditLogError(
                    f"cannot open the audit log {self.path}: {error.strerror or error} "
                    "(does its directory exist, and may this user write there?)"
                ) from error

    def flush(self) -> None:
        """Write the buffered lines to the file now."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None

    # ----- the hooks -----

    def request_factory(self) -> Callable[..., web.BaseRequest]:
        """``web.Server(request_factory=...)``: requests that tell the log when they answer."""
        loop = asyncio.get_running_loop()

        def make(*args: Any) -> web.BaseRequest:
            return _AuditedRequest(self, *args, loop)

        return make

    def begin(self, request: web.BaseRequest) -> None:
        """Note that ``request`` arrived (its audit ID and time)."""
        if request.path not in UNLOGGED_PATHS:
            record = _Record()
            record.annotations = begin_request()
            request[_RECORD_KEY] = record

    def complete(self, request: web.BaseRequest, response: web.StreamResponse) -> None:
        """Write the ``ResponseComplete`` Event of ``request``."""
        record = request.get(_RECORD_KEY)
        if record is None:
            return
        record.completed = True
        if not response.prepared:
            response.headers[AUDIT_ID_HEADER] = record.audit_id
        if not self._omitted(request):
            self._write(self._event(request, record, response, "ResponseComplete"))

    def response_started(self, request: web.BaseRequest, response: web.StreamResponse) -> None:
        """Add the ``Audit-Id`` header; a response sent while its handler still runs (a
        stream) gets its ``ResponseStarted`` Event."""
        record = request.get(_RECORD_KEY)
        if record is None:
            return
        response.headers[AUDIT_ID_HEADER] = record.audit_id
        if not record.completed and record.stream is None:
            record.stream = response
            if not self._omitted(request):
                self._write(self._event(request, record, response, "ResponseStarted"))

    def abandoned(self, request: web.BaseRequest) -> None:
        """The handler of ``request`` was cancelled (the client went away): a stream that had
        started still gets its ``ResponseComplete`` Event."""
        record = request.get(_RECORD_KEY)
        if record is not None and record.stream is not None and not record.completed:
            record.completed = True
            if self._omitted(request):
                return
            self._write(self._event(request, record, record.stream, "ResponseComplete"))

    def audit_id(self, request: web.BaseRequest) -> str | None:
        """The audit ID given to ``request`` (None when it is not logged)."""
        record = request.get(_RECORD_KEY)
        return record.audit_id if record is not None else None

    def _omitted(self, request: web.BaseRequest) -> bool:
        return bool(self.omit_groups) and not self.omit_groups.isdisjoint(
            request_user(request).groups
        )

    # ----- the Event -----

    def _event(
        self, request: web.BaseRequest, record: _Record, response: web.StreamResponse, stage: str
    ) -> dict[str, Any]:
        code = response.status
        acting = request_user(request)
        authenticated = request.get(AUTHENTICATED_USER_KEY)
        attributes = request_attributes(acting, request.method, request.path, request.query)
        event: dict[str, Any] = {
            "kind": "Event",
            "apiVersion": "audit.k8s.io/v1",
            "level": self.level,
            "auditID": record.audit_id,
            "stage": stage,
            "requestURI": request.path_qs,
            "verb": attributes.verb,
        }
        if code == 401:
            event["user"] = {}  # authentication failed: nobody
        elif authenticated is not None:
            event["user"] = _user(authenticated)
            if acting is not authenticated:
                event["impersonatedUser"] = _user(acting)
        else:
            event["user"] = _user(acting)
        event["sourceIPs"] = [request.remote or ""]
        agent = request.headers.get("User-Agent")
        if agent:
            event["userAgent"] = agent
        if attributes.resource_request and attributes.resource:
            event["objectRef"] = _object_reference(attributes)
        event["responseStatus"] = self._status(response, code)
        if self.level == REQUEST:
            requested = _request_object(request)
            if requested is not None:
                event["requestObject"] = requested
        event["requestReceivedTimestamp"] = _timestamp(record.received)
        event["stageTimestamp"] = _timestamp(time.time())
        annotations = _annotations(request, code, authenticated, acting)
        if record.annotations:
            annotations = {**annotations, **record.annotations}
        if annotations:
            event["annotations"] = annotations
        return event

    @staticmethod
    def _status(response: web.StreamResponse, code: int) -> dict[str, Any]:
        status: dict[str, Any] = {"metadata": {}}
        body = getattr(response, "body", None)
        if code >= 300 and isinstance(body, bytes) and body.startswith(b"{"):
            try:
                answer = _DECODER.decode(body)
            except msgspec.DecodeError:
                answer = None
            if isinstance(answer, dict) and answer.get("kind") == "Status":
                status.update((key, answer[key]) for key in _STATUS_FIELDS if key in answer)
        status["code"] = code
        return status

    def _write(self, event: dict[str, Any]) -> None:
        if self._file is None:
            return
        try:
            self._file.write(_ENCODER.encode(event) + b"\n")
        except (OSError, ValueError) as error:  # a full disk must not fail the request
            log.warning("audit log %s: cannot write: %s", self.path, error)
            return
        if self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(FLUSH_INTERVAL_SECONDS, self.flush)


class _AuditedRequest(web.BaseRequest):
    """A request that tells its :class:`AuditLog` when its response is about to be sent."""

    def __init__(self, audit: AuditLog, *args: Any) -> None:
        super().__init__(*args)
        self._audit = audit

    async def _prepare_hook(self, response: web.StreamResponse) -> None:
        # aiohttp calls this after the headers are made and before they are sent.
        self._audit.response_started(self, response)


def _user(user: UserInfo) -> dict[str, Any]:
    info: dict[str, Any] = {"username": user.username}
    if user.uid:
        info["uid"] = user.uid
    if user.groups:
        info["groups"] = list(user.groups)
    if user.extra:
        info["extra"] = {key: list(values) for key, values in user.extra.items()}
    return info


def _object_reference(attributes: Any) -> dict[str, str]:
    reference = {"resource": attributes.resource}
    if attributes.namespace:
        reference["namespace"] = attributes.namespace
    if attributes.name:
        reference["name"] = attributes.name
    if attributes.api_group:
        reference["apiGroup"] = attributes.api_group
    reference["apiVersion"] = attributes.api_version
    if attributes.subresource:
        reference["subresource"] = attributes.subresource
    return reference


def _annotations(
    request: web.BaseRequest, code: int, authenticated: UserInfo | None, acting: UserInfo
) -> dict[str, str]:
    decision = request.get(DECISION_KEY)
    if decision is not None:
        return {
            "authorization.k8s.io/decision": "allow" if decision.allowed else "forbid",
            "authorization.k8s.io/reason": decision.reason,
        }
    if code == 401 or (authenticated is not None and acting is authenticated):
        return {}  # not authenticated, or impersonation refused: authorization never ran
    # system:masters is allowed before any authorizer is asked (kube-apiserver's first one).
    return {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}


def _request_object(request: web.BaseRequest) -> Any:
    body = request.get(REQUEST_BODY_KEY)
    if not body:
        return None
    media = request.headers.get("Content-Type", "").split(";", 1)[0].lower()
    try:
        if any(kind in media for kind in _JSON_BODY_TYPES):
            return _DECODER.decode(body)
        if any(kind in media for kind in _YAML_BODY_TYPES):
            return yaml.safe_load(body)
        if media == protobuf.PROTOBUF_MEDIA_TYPE:
            return protobuf.decode_object(body)
    except (msgspec.DecodeError, yaml.YAMLError, protobuf.ProtobufBodyError):
        return None
    return None


def new_audit_id() -> str:
    """A fresh audit ID (a version 4 UUID)."""
    return _uuid4()


def rfc3339_micro(seconds: float) -> str:
    """``seconds`` (a Unix time) in RFC 3339 with microseconds, as upstream's ``MicroTime``."""
    return _timestamp(seconds)


def _uuid4() -> str:
    """A random (version 4) UUID, as ``str(uuid.uuid4())`` but several times cheaper: not
    for secrets, only to tell requests apart."""
    bits = _random_bits(128) & ~(0xF000 << 64) & ~(0xC000 << 48) | (0x4000 << 64) | (0x8000 << 48)
    text = f"{bits:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


_random_bits = random.Random().getrandbits


def _timestamp(seconds: float) -> str:
    """RFC 3339 with microseconds, as upstream's ``MicroTime``."""
    whole = int(seconds)
    return f"{_second(whole)}.{int((seconds - whole) * 1_000_000):06d}Z"


@functools.lru_cache(maxsize=16)
def _second(whole: int) -> str:
    # Formatting a second costs more than the rest of the event: most events share theirs.
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
