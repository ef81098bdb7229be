"""Posting a CRD's ConversionReview to its conversion webhook.

Conversion webhooks are configured like admission webhooks (``clientConfig.url`` or
``clientConfig.service``, ``caBundle``) and are called with the same client: one connection
pool, the same certificate checks and the same Service lookup. What the review says and how
its answer is checked is :mod:`..crds.conversion`'s business.
"""

from __future__ import annotations

from setpoint.cluster.apiserver.admission.service_endpoints import resolve_service
from setpoint.cluster.apiserver.admission.webhook_calls import (
    Endpoint,
    WebhookClient,
    WebhookTransportError,
)
from setpoint.cluster.apiserver.admission.webhooks import ServiceReference
from setpoint.cluster.apiserver.crds.conversion import (
    TIMEOUT_SECONDS,
    ConversionCallError,
    ConversionWebhook,
)
from setpoint.cluster.apiserver.storage import Storage


class ConversionWebhookCaller:
    """Sends ConversionReviews with the admission chain's webhook client."""

    def __init__(self, client: WebhookClient, storage: Storage) -> None:
        self._client = client
        self._storage = storage

    async def post(self, webhook: ConversionWebhook, body: bytes) -> bytes:
        """POST ``body`` to ``webhook``: the answer's body, or :class:`ConversionCallError`
        with client-go's description of the failure."""
        try:
            return await self._client.post(
                self._endpoint(webhook), body, webhook.ca_bundle, TIMEOUT_SECONDS
            )
        except WebhookTransportError as exc:
            raise ConversionCallError(exc.description) from None

    def _endpoint(self, webhook: ConversionWebhook) -> Endpoint:
        if webhook.url is not None:
            return Endpoint(webhook.url, webhook.url)
        service = webhook.service
        if service is None:  # validated on write: exactly one of url and service
            raise WebhookTransportError("no url or service to call")
        reference = ServiceReference(service.namespace, service.name, service.path, service.port)
        return resolve_service(self._storage, reference, TIMEOUT_SECONDS)
