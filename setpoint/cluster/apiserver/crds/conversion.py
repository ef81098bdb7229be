"""Converting custom resources between the versions of their CRD (``spec.conversion``).

With ``strategy: None`` only ``apiVersion`` changes. With ``strategy: Webhook`` the objects go
to the CRD's conversion webhook in a ``ConversionReview`` (``apiextensions.k8s.io/v1`` or
``v1beta1``, the first of ``conversionReviewVersions`` this server speaks, as upstream picks
it), and the answer is checked as apiextensions-apiserver's ``webhook_converter.go`` checks
it: same count, the desired group/version, same kind, name, namespace and uid; of the
metadata only labels and annotations may change (the rest is restored from the original).
Every failure is a :class:`ConversionFailure` whose message is upstream's
(``conversion webhook for <group/version, Kind=kind> failed: …``).

This module has no I/O: the server's HTTP client posts the review
(:class:`ConversionWebhook` says where).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from setpoint.api.field_errors import aggregate_messages
from setpoint.cluster.apiserver.crds.definition import as_mapping, as_text, as_texts, spec_of
from setpoint.cluster.apiserver.validation.selectors import validate_labels

#: ConversionReview versions this server sends, in its order of preference.
SUPPORTED_REVIEW_VERSIONS: Final = ("v1", "v1beta1")
#: Upstream's conversion webhook client timeout (the ``?timeout=30s`` of its requests).
TIMEOUT_SECONDS: Final = 30
#: Upstream's ``clientConfig.service.port`` default.
DEFAULT_SERVICE_PORT: Final = 443

_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder()


class ConversionFailure(Exception):
    """A conversion that could not be made; the message is upstream's."""


@dataclass(frozen=True, slots=True)
class ConversionService:
    """``clientConfig.service`` of a conversion webhook."""

    namespace: str
    name: str
    path: str
    port: int


@dataclass(frozen=True, slots=True)
class ConversionWebhook:
    """Where and how a CRD's objects are sent for conversion."""

    crd_name: str
    url: str | None
    service: ConversionService | None
    ca_bundle: bytes | None
    review_versions: tuple[str, ...]

    @property
    def review_version(self) -> str | None:
        """The first of ``conversionReviewVersions`` this server speaks (validated: one is)."""
        for version in self.review_versions:
            if version in SUPPORTED_REVIEW_VERSIONS:
                return version
        return None


def conversion_webhook(crd: Mapping[str, Any]) -> ConversionWebhook | None:
    """The CRD's conversion webhook, or None with ``strategy: None``."""
    conversion = as_mapping(spec_of(crd).get("conversion"))
    if conversion.get("strategy") != "Webhook":
        return None
    webhook = as_mapping(conversion.get("webhook"))
    client_config = as_mapping(webhook.get("clientConfig"))
    service = client_config.get("service")
    reference = None
    if isinstance(service, Mapping):
        port = service.get("port")
        reference = ConversionService(
            namespace=as_text(service.get("namespace")),
            name=as_text(service.get("name")),
            path=as_text(service.get("path")),
            port=port if isinstance(port, int) else DEFAULT_SERVICE_PORT,
        )
    url = client_config.get("url")
    ca_bundle = None
    encoded = client_config.get("caBundle")
    if isinstance(encoded, str) and encoded:
        try:
            ca_bundle = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            ca_bundle = None  # validated on write; a bad bundle verifies nothing
    metadata = as_mapping(crd.get("metadata"))
    return ConversionWebhook(
        crd_name=as_text(metadata.get("name")),
        url=url if isinstance(url, str) else None,
        service=reference,
        ca_bundle=ca_bundle,
        review_versions=tuple(as_texts(webhook.get("conversionReviewVersions"))),
    )


def group_version_kind(obj: Mapping[str, Any]) -> str:
    """``example.com/v1, Kind=CronTab``: how upstream prints an object's GVK in messages."""
    return f"{as_text(obj.get('apiVersion'))}, Kind={as_text(obj.get('kind'))}"


def review_body(
    review_version: str, objects: Sequence[Mapping[str, Any]], desired: str, uid: str
) -> bytes:
    """The JSON ConversionReview asking for ``objects`` in ``desired`` (``group/version``)."""
    return _ENCODER.encode(
        {
            "kind": "ConversionReview",
            "apiVersion": f"apiextensions.k8s.io/{review_version}",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": list(objects)},
        }
    )


def converted_objects(
    payload: bytes,
    review_version: str,
    uid: str,
    originals: Sequence[Mapping[str, Any]],
    desired: str,
) -> list[dict[str, Any]]:
    """The converted objects of a webhook's answer, checked and with the originals' metadata
    restored (labels and annotations excepted); :class:`ConversionFailure` if it is wrong."""
    source = group_version_kind(originals[0])
    answers = _answered_objects(payload, review_version, uid, source)
    if len(answers) != len(originals):
        raise ConversionFailure(
            f"conversion webhook for {source} returned {len(answers)} objects, "
            f"expected {len(originals)}"
        )
    single = len(originals) == 1
    converted: list[dict[str, Any]] = []
    for index, (original, answer) in enumerate(zip(originals, answers, strict=True)):
        # Upstream numbers list items from 1 here (its index was already advanced) and
        # calls a lone object "index 0"; the messages keep those numbers.
        where = (
            "invalid object at index 0"
            if single
            else f"invalid converted object at index {index + 1}"
        )
        if not isinstance(answer, dict):
            raise ConversionFailure(
                f"conversion webhook for {source} returned {where}: "
                "Object 'Kind' is missing in the object"
            )
        got_version = as_text(answer.get("apiVersion"))
        if got_version != desired:
            raise ConversionFailure(
                f"conversion webhook for {source} returned {where}: invalid groupVersion "
                f"(expected {desired}, received {got_version})"
            )
        kind, got_kind = as_text(original.get("kind")), as_text(answer.get("kind"))
        if got_kind != kind:
            raise ConversionFailure(
                f"conversion webhook for {source} returned {where}: invalid kind "
                f"(expected {kind}, received {got_kind})"
            )
        problem = _identity_problem(original, answer)
        if problem:
            shown = "invalid object" if single else f"invalid converted object at index {index + 1}"
            raise ConversionFailure(f"conversion webhook for {source} returned {shown}: {problem}")
        problem = _restore_metadata(original, answer)
        if problem:
            shown = (
                "invalid metadata" if single else f"invalid metadata in object at index {index + 1}"
            )
            raise ConversionFailure(f"conversion webhook for {source} returned {shown}: {problem}")
        converted.append(answer)
    return converted


def _answered_objects(payload: bytes, review_version: str, uid: str, source: str) -> list[Any]:
    failed = f"conversion webhook for {source} failed"
    try:
        document = _DECODER.decode(payload)
    except msgspec.DecodeError as exc:
        raise ConversionFailure(f"{failed}: {exc}") from None
    if not isinstance(document, dict):
        raise ConversionFailure(f"{failed}: the answer is not a ConversionReview object")
    if review_version == "v1":
        got = f"{as_text(document.get('apiVersion'))}, Kind={as_text(document.get('kind'))}"
        expected = "apiextensions.k8s.io/v1, Kind=ConversionReview"
        if got != expected:
            raise ConversionFailure(f"{failed}: expected webhook response of {expected}, got {got}")
    response = document.get("response")
    if not isinstance(response, dict):
        raise ConversionFailure(f"{failed}: no response provided")
    if review_version == "v1" and response.get("uid", "") != uid:
        raise ConversionFailure(
            f'{failed}: expected response.uid="{uid}", got "{as_text(response.get("uid"))}"'
        )
    result = as_mapping(response.get("result"))
    if result.get("status") != "Success":
        message = as_text(result.get("message"))
        if message:
            raise ConversionFailure(f"{failed}: {message}")
        raise ConversionFailure(
            f"{failed}: response.result.status was '{as_text(result.get('status'))}', not 'Success'"
        )
    objects = response.get("convertedObjects")
    return objects if isinstance(objects, list) else []


def _identity_problem(original: Mapping[str, Any], converted: Mapping[str, Any]) -> str:
    before, after = as_mapping(original.get("metadata")), as_mapping(converted.get("metadata"))
    for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        expected, got = as_text(before.get(field)), as_text(after.get(field))
        if expected != got:
            return f"must have the same {label}: {expected} != {got}"
    return ""


def _restore_metadata(original: Mapping[str, Any], converted: dict[str, Any]) -> str:
    """Give ``converted`` the original's metadata, keeping its labels and annotations."""
    answered = converted.get("metadata")
    if answered is None:
        return "missing metadata in converted object"
    if not isinstance(answered, dict):
        return f"invalid metadata of type {_go_type(answered)} in converted object"
    restored = _DECODER.decode(_ENCODER.encode(original.get("metadata") or {}))
    for field in ("labels", "annotations"):
        value = answered.get(field)
        if value is None:
            restored.pop(field, None)
            continue
        if not isinstance(value, dict):
            return f"invalid metadata.{field} of type {_go_type(value)} in converted object"
        for key, item in value.items():
            if not isinstance(item, str):
                return (
                    f"metadata.{field}[{key}] must be a string, but is {_go_type(item)} in "
                    "converted object"
                )
        if value != restored.get(field) and field == "labels":
            errors = validate_labels(value, "metadata.labels")
            if errors:
                return aggregate_messages(errors)
        restored[field] = value
    converted["metadata"] = restored
    return ""


def _go_type(value: Any) -> str:
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "float64" if isinstance(value, float) else "int64"
    return "string"


class ConversionCallError(Exception):
    """The review could not be posted or the webhook answered an HTTP error; the message is
    client-go's (``Post "https://…": …``)."""
