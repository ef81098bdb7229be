"""What the server knows of a Kubernetes protobuf body without decoding it: its media type, its
four-byte prefix, and the error refusing one that cannot be decoded. Kept apart from
:mod:`.decoding` so that a server imports protobuf only when a protobuf body arrives."""

from __future__ import annotations

from typing import Final

#: The media type of Kubernetes protobuf bodies.
PROTOBUF_MEDIA_TYPE: Final = "application/vnd.kubernetes.protobuf"
#: The four bytes that open every Kubernetes protobuf body ("k8s" and a NUL).
MAGIC: Final = b"k8s\x00"


class ProtobufBodyError(ValueError):
    """A protobuf body this server cannot decode; the message says why and what to do."""

    def __init__(self, reason: str, kind: str = "") -> None:
        super().__init__(reason)
        self.kind = kind
