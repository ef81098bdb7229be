"""Content negotiation of responses: JSON (the default) or YAML, chosen from ``Accept``.

kube-apiserver answers in the first media type of the client's ``Accept`` (by ``q``, then order)
that it can produce. This server produces ``application/json`` and, for everything but watch
streams, ``application/yaml``; ``meta.k8s.io`` Tables (``;as=Table``) are JSON made by the
``printers`` package; PartialObjectMetadata (``;as=PartialObjectMetadata``) and protobuf are not
produced yet, so a client that accepts only those gets 406 NotAcceptable. Clients that prefer
protobuf but also accept JSON (client-go's protobuf config) get JSON.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec
import yaml

JSON_MEDIA_TYPE: Final = "application/json"
YAML_MEDIA_TYPE: Final = "application/yaml"
#: What this server can answer with, in its order of preference (the 406 message lists them).
PRODUCIBLE_MEDIA_TYPES: Final = (JSON_MEDIA_TYPE, YAML_MEDIA_TYPE)
#: Accept patterns answered with JSON, the preferred type.
_JSON_PATTERNS: Final = frozenset({"", "*/*", "application/*", JSON_MEDIA_TYPE})
#: Distinct Accept headers remembered (clients repeat theirs; the bound keeps memory fixed).
ACCEPT_CACHE_SIZE: Final = 256

# The C emitter is several times faster; the pure-Python one gives the same output.
_YAML_DUMPER: Final[Any] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_JSON_DECODER: Final = msgspec.json.Decoder()


def _quality(params: list[str]) -> float:
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def _is_table(media: str, params: list[str]) -> bool:
    """Whether an ``Accept`` entry asks for a ``meta.k8s.io`` Table this server can make."""
    return (
        media.lower() == JSON_MEDIA_TYPE
        and "as=Table" in params
        and "g=meta.k8s.io" in params
        and ("v=v1" in params or "v=v1beta1" in params)
    )


def negotiate_media_type(accept: str | None) -> str | None:
    """The media type to answer a request with ``Accept: accept``; None if none can be made."""
    if not accept:
        return JSON_MEDIA_TYPE
    candidates: list[tuple[float, str]] = []
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        compact = [p.replace(" ", "") for p in params]
        if any(p.startswith("as=") for p in compact):
            if not _is_table(media, compact):
                continue  # PartialObjectMetadata: not produced yet
            media = JSON_MEDIA_TYPE  # a Table, in JSON (see the printers package)
        quality = _quality(params)
        if quality > 0:
            candidates.append((quality, media.lower()))
    # sorted() is stable: equal quality keeps the client's order.
    for _quality_value, media in sorted(candidates, key=lambda c: -c[0]):
        if media in _JSON_PATTERNS:
            return JSON_MEDIA_TYPE
        if media == YAML_MEDIA_TYPE:
            return YAML_MEDIA_TYPE
    return None


class MediaTypeCache:
    """:func:`negotiate_media_type` remembered per ``Accept`` header."""

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def negotiate(self, accept: str | None) -> str | None:
        """The media type to answer with (None: 406)."""
        if not accept:
            return JSON_MEDIA_TYPE
        try:
            return self._known[accept]
        except KeyError:
            media = negotiate_media_type(accept)
            if len(self._known) < ACCEPT_CACHE_SIZE:
                self._known[accept] = media
            return media


def json_to_yaml(body: bytes) -> bytes:
    """A JSON document as YAML, keys sorted as kube-apiserver's YAML serializer writes them."""
    document = _JSON_DECODER.decode(body)
    text: str = yaml.dump(
        document, Dumper=_YAML_DUMPER, default_flow_style=False, allow_unicode=True
    )
    return text.encode()
