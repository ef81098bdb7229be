"""The authenticator: a request in, the :class:`UserInfo` behind it out, or 401.

Tried in kube-apiserver's order: a client certificate the TLS layer verified against the
client CA, then the bearer token (the admin token, then service account tokens). Anything else
is ``401 Unauthorized`` with a ``Status`` body whose message is ``Unauthorized``, as upstream,
which never says why; the reason is logged at debug level.
"""

from __future__ import annotations

import hmac
import logging
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from aiohttp import web

from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.auth.authentication.client_certificates import certificate_user
from setpoint.cluster.apiserver.auth.authentication.service_account_tokens import (
    DEFAULT_ISSUER,
    ServiceAccountTokens,
    TokenRejected,
)
from setpoint.cluster.apiserver.auth.identity import ADMIN, UserInfo
from setpoint.cluster.apiserver.auth.request_user import (
    REQUEST_USER_KEY,
    request_user,
    set_request_user,
)

__all__ = ["USER_KEY", "Authenticator", "request_user"]

log = logging.getLogger(__name__)


#: Where the authenticated user is kept on the request (read it with :func:`request_user`).
USER_KEY: Final = REQUEST_USER_KEY
#: Distinct client certificates whose user is remembered (one parse per certificate).
_CERTIFICATE_CACHE_SIZE: Final = 256


def bearer_token(request: web.BaseRequest) -> str | None:
    """The token of an ``Authorization: Bearer TOKEN`` header (scheme case-insensitive)."""
    parts = request.headers.get("Authorization", "").split()
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    return parts[1]


def _has_client_certificate(request: web.BaseRequest) -> bool:
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    return isinstance(ssl_object, ssl.SSLObject) and bool(ssl_object.getpeercert(binary_form=True))


@dataclass(frozen=True, slots=True)
class TokenReviewResult:
    """A token's user (None: not authenticated), the audiences it is valid for, the error."""

    user: UserInfo | None
    audiences: tuple[str, ...] = ()
    error: str = ""


class Authenticator:
    """Authenticates requests with the admin token, service account tokens and client certs."""

    def __init__(
        self, admin_token: str, service_accounts: ServiceAccountTokens | None = None
    ) -> None:
        self._expected_admin = admin_token.encode()
        #: Issues and validates service account tokens (None: not accepted).
        self.service_accounts = service_accounts
        self._certificate_users: dict[bytes, UserInfo | None] = {}

    def authenticate(self, request: web.BaseRequest) -> UserInfo:
        """The user behind ``request``, also stored on it; ``APIError`` 401 if none."""
        user = self._certificate(request) or self._token(request)
        if user is None:
            raise status_errors.unauthorized()
        set_request_user(request, user)
        return user

    def authenticate_if_credentials(self, request: web.BaseRequest) -> None:
        """For paths anyone may read (``/version``, ``/healthz``): a request without
        credentials passes as anonymous, but one whose bearer token or client certificate fails
        is 401 there too, as upstream (the anonymous authenticator only takes requests that
        carry no credentials)."""
        if bearer_token(request) is None and not _has_client_certificate(request):
            return
        self.authenticate(request)

    def _certificate(self, request: web.BaseRequest) -> UserInfo | None:
        transport = request.transport
        ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
        if not isinstance(ssl_object, ssl.SSLObject):
            return None
        # Returned only when the client sent one and it chained to the client CA.
        der = ssl_object.getpeercert(binary_form=True)
        if not der:
            return None
        if der not in self._certificate_users:
            if len(self._certificate_users) >= _CERTIFICATE_CACHE_SIZE:
                self._certificate_users.clear()
            self._certificate_users[der] = certificate_user(der)
        user = self._certificate_users[der]
        if user is None:
            log.debug("client certificate names no user or is not for client authentication")
        return user

    def review_token(self, token: str, audiences: Sequence[str] = ()) -> TokenReviewResult:
        """What the token authenticators say of ``token`` (the TokenReview API)."""
        accounts = self.service_accounts
        if hmac.compare_digest(token.encode(), self._expected_admin):
            # Upstream wraps static tokens as audience-agnostic: they stand for the API
            # server's own audiences only, so a review for another audience (a token handed
            # to a third party, say) is not authenticated, and says no more.
            own = accounts.audiences if accounts is not None else (DEFAULT_ISSUER,)
            wanted = tuple(audiences) or own
            accepted = tuple(a for a in wanted if a in own)
            return TokenReviewResult(ADMIN, accepted) if accepted else TokenReviewResult(None)
        if accounts is not None and accounts.is_ours(token):
            try:
                user, accepted = accounts.review(token, audiences)
            except TokenRejected as error:
                return TokenReviewResult(None, (), str(error))
            return TokenReviewResult(user, accepted)
        return TokenReviewResult(None, (), "invalid bearer token")

    def _token(self, request: web.BaseRequest) -> UserInfo | None:
        token = bearer_token(request)
        if token is None:
            return None
        if hmac.compare_digest(token.encode(), self._expected_admin):
            return ADMIN
        accounts = self.service_accounts
        if accounts is not None and accounts.is_ours(token):
            try:
                return accounts.authenticate(token)
            except TokenRejected as error:
                log.debug("service account token rejected: %s", error)
                return None
        log.debug("bearer token not recognised")
        return None
