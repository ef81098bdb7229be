"""Protobuf request bodies: what client-go's typed clients send, decoded into JSON objects.

client-go prefers protobuf for built-in kinds, so ``kubectl create namespace|configmap|secret|
deployment ...`` and ``kubectl auth can-i`` POST ``application/vnd.kubernetes.protobuf``
bodies, and there is no fallback to JSON. Such a body is four magic bytes (``k8s\\0``) and a
``runtime.Unknown`` envelope whose ``typeMeta`` names the kind and whose ``raw`` bytes are the
kind's message as k8s.io/api's ``generated.proto`` declares it.

Nothing here is generated code: :mod:`.messages` declares each message as a table of JSON
names, field numbers and types (:mod:`.layout` is the vocabulary), :mod:`.kinds` says which
message each kind carries, :mod:`.descriptors` turns the tables into protobuf classes at run
time, and :mod:`.decoding` parses a body and walks it along the tables into the dict a JSON
body would have given; :mod:`.framing` holds what needs no decoding (the media type, the
prefix, the error), so that protobuf is imported with the first protobuf body. Answers stay
JSON, which client-go accepts. A kind or field outside the tables is refused with
:class:`ProtobufBodyError` (a 415 naming the kind), never half-decoded.
"""

from __future__ import annotations

from typing import Any

from setpoint.cluster.apiserver.http.protobuf.framing import (
    MAGIC,
    PROTOBUF_MEDIA_TYPE,
    ProtobufBodyError,
)


def decode_object(body: bytes) -> dict[str, Any]:
    """The JSON object carried by a ``application/vnd.kubernetes.protobuf`` body (see
    :func:`.decoding.decode_object`); protobuf and the tables are imported on the first call."""
    from setpoint.cluster.apiserver.http.protobuf import decoding

    return decoding.decode_object(body)


__all__ = ["MAGIC", "PROTOBUF_MEDIA_TYPE", "ProtobufBodyError", "decode_object"]
