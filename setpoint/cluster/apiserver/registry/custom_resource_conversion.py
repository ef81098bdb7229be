"""Custom resources served in one version and stored in another: the conversion step.

Every read (get, list, watch, tables, metadata-only views) and every write of a custom
resource passes through :class:`CustomResourceConverter` when the CRD has more than one
version in play: objects already in the wanted version pass untouched; the others are
converted together — one ``ConversionReview`` for a whole list page or watch burst, as
upstream's converter batches a list — by the CRD's webhook (``strategy: Webhook``) or by
rewriting ``apiVersion`` (``strategy: None``). The webhook call is awaited on the server's
event loop, so a slow converter holds only the requests that need it, for at most its
timeout. A conversion that fails answers upstream's ``500`` (no reason, the converter's
message): as upstream, a broken conversion webhook breaks every read that needs it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from setpoint.cluster.apiserver.crds.conversion import (
    ConversionCallError,
    ConversionFailure,
    ConversionWebhook,
    converted_objects,
    group_version_kind,
    review_body,
)
from setpoint.cluster.apiserver.status_errors import APIError

#: Posts a ConversionReview body to a CRD's conversion webhook; the answer's body.
ConversionPoster = Callable[[ConversionWebhook, bytes], Awaitable[bytes]]
#: A fresh request uid (the server's uid source).
UidSource = Callable[[], str]

#: The code of a failed conversion: upstream hands the converter's plain error to the
#: response writer, which answers 500 with no reason.
CONVERSION_FAILED_CODE: Final = 500


class CustomResourceConverter:
    """Converts the objects of one CRD between its versions."""

    def __init__(
        self,
        group: str,
        webhook: ConversionWebhook | None,
        post: ConversionPoster | None,
        new_uid: UidSource,
    ) -> None:
        self._group = group
        self._webhook = webhook
        self._post = post
        self._new_uid = new_uid

    @property
    def calls_webhook(self) -> bool:
        """Whether conversions go to a webhook (``strategy: Webhook``)."""
        return self._webhook is not None

    async def convert(
        self, objects: Sequence[dict[str, Any]], version: str
    ) -> list[dict[str, Any]]:
        """``objects`` in ``version`` (same order; those already in it are returned as is).

        Raises :class:`APIError` (500) with upstream's message when the webhook fails.
        """
        desired = f"{self._group}/{version}"
        pending = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != desired]
        result = list(objects)
        if not pending:
            return result
        if self._webhook is None:
            for index in pending:
                result[index] = {**objects[index], "apiVersion": desired}
            return result
        originals = [objects[i] for i in pending]
        try:
            converted = await self._call(self._webhook, originals, desired)
        except ConversionFailure as exc:
            raise conversion_failed(str(exc)) from None
        for index, obj in zip(pending, converted, strict=True):
            result[index] = obj
        return result

    async def _call(
        self, webhook: ConversionWebhook, originals: list[dict[str, Any]], desired: str
    ) -> list[dict[str, Any]]:
        review_version = webhook.review_version
        if review_version is None or self._post is None:
            raise ConversionFailure("no supported conversion review versions")
        uid = self._new_uid()
        body = review_body(review_version, originals, desired, uid)
        try:
            payload = await self._post(webhook, body)
        except ConversionCallError as exc:
            source = group_version_kind(originals[0])
            raise ConversionFailure(f"conversion webhook for {source} failed: {exc}") from None
        return converted_objects(payload, review_version, uid, originals, desired)


def conversion_failed(message: str) -> APIError:
    """The error a failed conversion answers (``500``, no reason, the converter's text)."""
    return APIError(CONVERSION_FAILED_CODE, "", message)
