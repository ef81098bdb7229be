"""SPDY/3.1 frames: reading them from a byte stream and writing the ones a server sends.

kubectl speaks SPDY/3.1 (through the ``moby/spdystream`` library) for port-forward, and for
exec, attach and cp before 1.30: control frames (``SYN_STREAM`` opens a stream with a header
block, ``SYN_REPLY`` accepts it, ``RST_STREAM``, ``SETTINGS``, ``PING``, ``GOAWAY``,
``WINDOW_UPDATE``) and data frames (a stream id, ``FIN``, bytes). Header blocks are compressed
with one zlib stream per direction, primed with the dictionary the SPDY/3 draft defines
(section 2.6.10.1): length-prefixed common header names, then common values.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final

VERSION: Final = 3
SYN_STREAM, SYN_REPLY, RST_STREAM, SETTINGS = 1, 2, 3, 4
PING, GOAWAY, HEADERS, WINDOW_UPDATE = 6, 7, 8, 9
FLAG_FIN: Final = 0x01
#: ``RST_STREAM`` status codes used here.
PROTOCOL_ERROR, INVALID_STREAM, REFUSED_STREAM, CANCEL = 1, 2, 3, 5
#: Largest payload of one frame (24-bit length).
MAX_PAYLOAD: Final = (1 << 24) - 1
#: The ``SETTINGS`` id of a stream's initial flow-control window.
SETTINGS_INITIAL_WINDOW_SIZE: Final = 7

_WORDS: Final = (
    "options",
    "head",
    "post",
    "put",
    "delete",
    "trace",
    "accept",
    "accept-charset",
    "accept-encoding",
    "accept-language",
    "accept-ranges",
    "age",
    "allow",
    "authorization",
    "cache-control",
    "connection",
    "content-base",
    "content-encoding",
    "content-language",
    "content-length",
    "content-location",
    "content-md5",
    "content-range",
    "content-type",
    "date",
    "etag",
    "expect",
    "expires",
    "from",
    "host",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "if-range",
    "if-unmodified-since",
    "last-modified",
    "location",
    "max-forwards",
    "pragma",
    "proxy-authenticate",
    "proxy-authorization",
    "range",
    "referer",
    "retry-after",
    "server",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "vary",
    "via",
    "warning",
    "www-authenticate",
    "method",
    "get",
    "status",
    "200 OK",
    "version",
    "HTTP/1.1",
    "url",
    "public",
    "set-cookie",
    "keep-alive",
    "origin",
)
_TAIL: Final = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Una"
    "uthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service"
    " UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, "
    "Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,applicat"
    "ion/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf"
    "-8charset=iso-8859-1,utf-,*,enq=0."
)
#: The SPDY/3 header compression dictionary (1,423 bytes).
DICTIONARY: Final = (
    b"".join(struct.pack(">I", len(word)) + word.encode() for word in _WORDS) + _TAIL.encode()
)


class ProtocolError(Exception):
    """The peer sent something that is not SPDY/3.1."""


@dataclass(slots=True)
class Frame:
    """One frame: a control frame (``kind`` > 0) or a data frame (``kind`` 0)."""

    kind: int
    flags: int
    stream_id: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    data: bytes = b""
    #: PING id, RST_STREAM / GOAWAY status, WINDOW_UPDATE delta.
    value: int = 0
    #: SETTINGS: value per setting id.
    settings: dict[int, int] = field(default_factory=dict)

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


class HeaderCodec:
    """The two zlib streams of a connection's header blocks (one per direction)."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zdict=DICTIONARY)

    def decode(self, block: bytes) -> dict[str, str]:
        """A received header block (names lower-case; repeated values joined by NUL)."""
        try:
            raw = self._inflate.decompress(block)
        except zlib.error as exc:
            raise ProtocolError(f"header block: {exc}") from exc
        headers: dict[str, str] = {}
        try:
            (count,) = struct.unpack_from(">I", raw, 0)
            offset = 4
            for _ in range(count):
                (size,) = struct.unpack_from(">I", raw, offset)
                name = raw[offset + 4 : offset + 4 + size].decode()
                offset += 4 + size
                (size,) = struct.unpack_from(">I", raw, offset)
                value = raw[offset + 4 : offset + 4 + size].decode()
                offset += 4 + size
                headers[name.lower()] = value
        except (struct.error, UnicodeDecodeError) as exc:
            raise ProtocolError(f"header block: {exc}") from exc
        return headers

    def encode(self, headers: Mapping[str, str]) -> bytes:
        """A header block to send."""
        raw = [struct.pack(">I", len(headers))]
        for name, value in headers.items():
            for part in (name.lower().encode(), value.encode()):
                raw.append(struct.pack(">I", len(part)) + part)
        return self._deflate.compress(b"".join(raw)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


class FrameReader:
    """Cuts frames out of the bytes of a connection as they arrive."""

    def __init__(self, codec: HeaderCodec) -> None:
        self._codec = codec
        self._buffer = bytearray()

    def feed(self, data: bytes) -> Iterator[Frame]:
        """The frames completed by ``data``."""
        self._buffer += data
        while len(self._buffer) >= 8:
            first, flags_length = struct.unpack_from(">II", self._buffer, 0)
            length = flags_length & 0xFFFFFF
            if len(self._buffer) < 8 + length:
                return
            payload = bytes(self._buffer[8 : 8 + length])
            del self._buffer[: 8 + length]
            flags = flags_length >> 24
            if first & 0x80000000:
                version = (first >> 16) & 0x7FFF
                if version != VERSION:
                    raise ProtocolError(f"SPDY version {version} is not supported (3 is)")
                yield self._control(first & 0xFFFF, flags, payload)
            else:
                yield Frame(0, flags, stream_id=first & 0x7FFFFFFF, data=payload)

    def _control(self, kind: int, flags: int, payload: bytes) -> Frame:
        try:
            if kind == SYN_STREAM:
                (stream_id,) = struct.unpack_from(">I", payload, 0)
                headers = self._codec.decode(payload[10:])
                return Frame(kind, flags, stream_id & 0x7FFFFFFF, headers=headers)
            if kind in (SYN_REPLY, HEADERS):
                (stream_id,) = struct.unpack_from(">I", payload, 0)
                return Frame(kind, flags, stream_id & 0x7FFFFFFF, self._codec.decode(payload[4:]))
            if kind in (RST_STREAM, WINDOW_UPDATE):
                stream_id, value = struct.unpack_from(">II", payload, 0)
                return Frame(kind, flags, stream_id & 0x7FFFFFFF, value=value)
            if kind == PING:
                (ping_id,) = struct.unpack_from(">I", payload, 0)
                return Frame(kind, flags, value=ping_id)
            if kind == GOAWAY:
                last, status = struct.unpack_from(">II", payload, 0)
                return Frame(kind, flags, last & 0x7FFFFFFF, value=status)
            if kind == SETTINGS:
                (count,) = struct.unpack_from(">I", payload, 0)
                settings = {}
                for index in range(count):
                    id_word, value = struct.unpack_from(">II", payload, 4 + 8 * index)
                    settings[id_word & 0xFFFFFF] = value
                return Frame(kind, flags, settings=settings)
        except struct.error as exc:
            raise ProtocolError(f"control frame {kind}: {exc}") from exc
        return Frame(kind, flags)  # anything unknown: nothing to act on


def control_frame(kind: int, flags: int, payload: bytes) -> bytes:
    """A control frame's bytes."""
    return struct.pack(">HHI", 0x8000 | VERSION, kind, (flags << 24) | len(payload)) + payload


def data_frames(stream_id: int, data: bytes, fin: bool = False) -> bytes:
    """The data frames carrying ``data`` (one ``FIN`` frame when ``data`` is empty)."""
    out = []
    offset = 0
    while True:
        piece = data[offset : offset + MAX_PAYLOAD]
        offset += len(piece)
        last = offset >= len(data)
        flags = FLAG_FIN if fin and last else 0
        out.append(struct.pack(">II", stream_id & 0x7FFFFFFF, (flags << 24) | len(piece)) + piece)
        if last:
            return b"".join(out)


def syn_reply(codec: HeaderCodec, stream_id: int, headers: Mapping[str, str]) -> bytes:
    """``SYN_REPLY`` accepting stream ``stream_id``."""
    return control_frame(SYN_REPLY, 0, struct.pack(">I", stream_id) + codec.encode(headers))


def rst_stream(stream_id: int, status: int) -> bytes:
    """``RST_STREAM``."""
    return control_frame(RST_STREAM, 0, struct.pack(">II", stream_id, status))


def ping(ping_id: int) -> bytes:
    """``PING`` (a reply repeats the peer's id)."""
    return control_frame(PING, 0, struct.pack(">I", ping_id))


def window_update(stream_id: int, delta: int) -> bytes:
    """``WINDOW_UPDATE``: ``delta`` more bytes may be sent on ``stream_id`` (0: the session)."""
    return control_frame(WINDOW_UPDATE, 0, struct.pack(">II", stream_id, delta))


def settings(values: dict[int, int]) -> bytes:
    """``SETTINGS`` with ``values`` (setting id -> value, no flags)."""
    entries = b"".join(struct.pack(">II", key, value) for key, value in values.items())
    return control_frame(SETTINGS, 0, struct.pack(">I", len(values)) + entries)


def goaway(last_stream_id: int, status: int = 0) -> bytes:
    """``GOAWAY``."""
    return control_frame(GOAWAY, 0, struct.pack(">II", last_stream_id, status))
