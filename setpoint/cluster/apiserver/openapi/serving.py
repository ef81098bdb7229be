"""HTTP answers for ``/openapi/v2``, ``/openapi/v3`` and ``/openapi/v3/<group-version>``.

As kube-openapi's handlers do: a group-version document asked for with its current ``hash``
is immutable (``Cache-Control: public, immutable`` and an ``Expires`` a year ahead); asked for
with a stale hash it redirects (301) to the current one; asked for without a hash it must be
revalidated (``Cache-Control: no-cache, private``). Every answer carries an ``ETag`` (the hash,
quoted) and ``If-None-Match`` gets 304. v3 documents are JSON only (kubectl asks v3 for JSON; a
client accepting only the protobuf form gets 406); v2 is JSON or gnostic protobuf, which
kubectl 1.27 and 1.28 ask for.
"""

from __future__ import annotations

import datetime
from email.utils import format_datetime
from typing import Final
from urllib.parse import quote

from aiohttp import web

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.openapi.documents import Document, OpenAPIDocuments
from setpoint.cluster.apiserver.openapi.v2_protobuf import MEDIA_TYPE as V2_PROTOBUF
from setpoint.cluster.apiserver.openapi.v2_protobuf import RESPONSE_MEDIA_TYPE as V2_RESPONSE_TYPE
from setpoint.cluster.apiserver.status_errors import APIError

JSON: Final = "application/json"
IMMUTABLE: Final = "public, immutable"
REVALIDATE: Final = "no-cache, private"
#: How long a document named by its hash may be cached.
IMMUTABLE_LIFETIME: Final = datetime.timedelta(days=365)
_JSON_ACCEPTS: Final = frozenset({"", "*/*", "application/*", JSON})


def server_relative_url(path: str, document_hash: str) -> str:
    """``/openapi/v3/apis/apps/v1?hash=H``."""
    return f"/openapi/v3/{quote(path)}?hash={document_hash}"


def negotiate(accept: str | None, producible: tuple[str, ...]) -> str | None:
    """The first media type of ``Accept`` (in the client's order) that can be produced."""
    if not accept:
        return JSON
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if any(p.replace(" ", "") in ("q=0", "q=0.0") for p in params):
            continue
        media = media.lower()
        if media in _JSON_ACCEPTS:
            return JSON
        if media in producible:
            return media
    return None


def _answer(
    request: web.BaseRequest,
    document: Document,
    cache_control: str,
    *,
    expires: bool = False,
    content_type: str = JSON,
) -> web.Response:
    etag = f'"{document.hash}"'
    headers = {"ETag": etag, "Cache-Control": cache_control, "Vary": "Accept"}
    if expires:
        moment = datetime.datetime.now(datetime.UTC) + IMMUTABLE_LIFETIME
        headers["Expires"] = format_datetime(moment, usegmt=True)
    if etag in (request.headers.get("If-None-Match") or ""):
        return web.Response(status=304, headers=headers)
    body = b"" if request.method == "HEAD" else document.body
    response = web.Response(status=200, body=body, headers=headers)
    response.headers["Content-Type"] = content_type
    return response


def serve_openapi(
    request: web.BaseRequest, parts: list[str], documents: OpenAPIDocuments
) -> web.Response:
    """Answer a request under ``/openapi`` (``parts`` are the path segments)."""
    if request.method not in ("GET", "HEAD"):
        raise APIError(
            405,
            StatusReason.METHOD_NOT_ALLOWED,
            "the server does not allow this method on the requested resource",
        )
    if len(parts) < 2 or parts[1] not in ("v2", "v3"):
        raise status_errors.path_not_found()
    if parts[1] == "v2":
        if len(parts) > 2:
            raise status_errors.path_not_found()
        media = negotiate(request.headers.get("Accept"), (V2_PROTOBUF,))
        if media is None:
            raise status_errors.not_acceptable([JSON, V2_PROTOBUF])
        if media == V2_PROTOBUF:
            return _answer(
                request, documents.v2_protobuf(), REVALIDATE, content_type=V2_RESPONSE_TYPE
            )
        return _answer(request, documents.v2(), REVALIDATE)
    if negotiate(request.headers.get("Accept"), ()) is None:
        raise status_errors.not_acceptable([JSON])
    if len(parts) == 2:
        return _answer(request, documents.index(server_relative_url), REVALIDATE)
    path = "/".join(parts[2:])
    document = documents.group_version(path)
    if document is None:
        raise status_errors.path_not_found()
    asked = request.query.get("hash")
    if asked is None or asked == "":
        return _answer(request, document, REVALIDATE)
    if asked != document.hash:
        location = server_relative_url(path, document.hash)
        return web.Response(status=301, headers={"Location": location, "Cache-Control": REVALIDATE})
    return _answer(request, document, IMMUTABLE, expires=True)
