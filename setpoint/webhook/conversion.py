"""Conversion between the versions of one kind (controller-runtime's Hub and Convertible).

One version is the *hub*; every other version (a *spoke*) converts to and from it:

::

    class CronJobV1(CustomResource, group=..., version="v1", kind="CronJob"):   # the hub
        ...

    class CronJobV2(CustomResource, group=..., version="v2", kind="CronJob", storage=True):
        def convert_to(self) -> CronJobV1: ...
        @classmethod
        def convert_from(cls, hub: CronJobV1) -> CronJobV2: ...

Any version converts to any other through the hub. :class:`Converter` answers the API
server's ``ConversionReview`` (``apiextensions.k8s.io/v1`` or ``v1beta1``, answered in kind):
the same objects in the same order, each in the desired version, with the metadata as sent
(the API server only lets conversion change labels and annotations, so none is taken from the
conversion functions). A failure answers ``result.status: Failure`` with a message.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Final

from prometheus_client import Counter
from pydantic import ValidationError

from setpoint.api.resources import CustomResource
from setpoint.client.metrics import REGISTRY
from setpoint.webhook.handlers import one_line

log = logging.getLogger(__name__)

CONVERSION_REVIEW_VERSIONS: Final = ("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1")


CONVERSION_PANICS_TOTAL = Counter(
    "controller_runtime_conversion_webhook_panics_total",
    "Total number of conversion webhook panics",
    registry=REGISTRY,
)


class ConversionError(Exception):
    """A conversion that cannot be made (answered as ``result.status: Failure``)."""


class MalformedConversionReview(ValueError):
    """The body is not a ConversionReview with a request."""


class Converter:
    """Converts objects of one kind between ``hub`` and the ``spokes``' versions."""

    def __init__(self, hub: type[CustomResource], spokes: Sequence[type[CustomResource]]) -> None:
        hub_declaration = hub.declaration()
        self.hub = hub
        self.group = hub_declaration.group
        self.kind = hub_declaration.kind
        self.versions: dict[str, type[CustomResource]] = {hub_declaration.api_version: hub}
        for spoke in spokes:
            declaration = spoke.declaration()
            if (declaration.group, declaration.kind) != (self.group, self.kind):
                raise TypeError(
                    f"Converter: {spoke.__name__} is {declaration.kind}.{declaration.group}, "
                    f"not {self.kind}.{self.group}"
                )
            for method in ("convert_to", "convert_from"):
                if not callable(getattr(spoke, method, None)):
                    raise TypeError(
                        f"Converter: {spoke.__name__} must define {method} (to and from the "
                        f"hub {hub.__name__})"
                    )
            self.versions[declaration.api_version] = spoke

    def convert(self, obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        """``obj`` in ``desired_api_version``; :class:`ConversionError` when impossible."""
        source = self.versions.get(str(obj.get("apiVersion")))
        target = self.versions.get(desired_api_version)
        if source is None or target is None:
            unknown = obj.get("apiVersion") if source is None else desired_api_version
            raise ConversionError(
                f"{self.kind}.{self.group}: no model for apiVersion {unknown!r} (known: "
                + ", ".join(sorted(self.versions))
                + ")"
            )
        if obj.get("kind") != self.kind:
            raise ConversionError(f"expected kind {self.kind}, got {obj.get('kind')!r}")
        if source is target:
            return {**obj, "apiVersion": desired_api_version}
        try:
            typed = source.model_validate(obj)
            hub = typed if source is self.hub else typed.convert_to()  # type: ignore[attr-defined]
            converted = hub if target is self.hub else target.convert_from(hub)  # type: ignore[attr-defined]
        except ValidationError as exc:
            first = exc.errors()[0]
            location = ".".join(str(part) for part in first.get("loc", ()))
            raise ConversionError(f"{location}: {first.get('msg')}") from None
        result: dict[str, Any] = converted.model_dump(mode="json", by_alias=True, exclude_none=True)
        result["apiVersion"] = desired_api_version
        result["kind"] = self.kind
        result["metadata"] = obj.get("metadata", {})
        return result

    def review(self, review: Any) -> dict[str, Any]:
        """The ConversionReview answering ``review``.

        Raises :class:`MalformedConversionReview` when ``review`` is not one; a failed
        conversion (a :class:`ConversionError` or any exception of a conversion function)
        is answered as ``Failure`` with its message.
        """
        if not isinstance(review, dict) or review.get("kind") != "ConversionReview":
            raise MalformedConversionReview("the body is not a ConversionReview")
        api_version = review.get("apiVersion")
        if api_version not in CONVERSION_REVIEW_VERSIONS:
            raise MalformedConversionReview(f"unsupported apiVersion {api_version!r}")
        request = review.get("request")
        if not isinstance(request, dict) or not isinstance(request.get("uid"), str):
            raise MalformedConversionReview("the ConversionReview has no request with a uid")
        desired = str(request.get("desiredAPIVersion") or "")
        objects = request.get("objects") or []
        response: dict[str, Any] = {"uid": request["uid"]}
        try:
            response["convertedObjects"] = [self.convert(obj, desired) for obj in objects]
            response["result"] = {"status": "Success"}
        except ConversionError as exc:
            response["convertedObjects"] = []
            response["result"] = {"status": "Failure", "message": str(exc)}
        except Exception as exc:  # a conversion function's bug: a Failure, never a crash
            CONVERSION_PANICS_TOTAL.inc()
            log.exception("conversion of %s.%s to %s failed", self.kind, self.group, desired)
            response["convertedObjects"] = []
            response["result"] = {"status": "Failure", "message": one_line(exc)}
        return {"apiVersion": api_version, "kind": "ConversionReview", "response": response}
