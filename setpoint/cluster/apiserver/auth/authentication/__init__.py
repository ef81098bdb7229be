"""Authentication: who is calling.

The :class:`~.authenticator.Authenticator` turns a request into a
:class:`~setpoint.cluster.apiserver.auth.identity.UserInfo`, or a 401 ``Status``. It knows three
credentials, as a kubeadm cluster does: the admin bearer token of the kubeconfig (user
``setpoint-admin`` in ``system:masters``); service account tokens, JWTs this server signs
through the TokenRequest API (:mod:`.token_request`, ``kubectl create token``) and checks
(:mod:`.service_account_tokens`, :mod:`.jws`); and client certificates signed by the client
CA (:mod:`.client_certificates`). The user found is stored on the request, read back with
:func:`~.authenticator.request_user`, for authorization and the review APIs.
"""

from setpoint.cluster.apiserver.auth.authentication.authenticator import (
    USER_KEY,
    Authenticator,
    request_user,
)

__all__ = ["USER_KEY", "Authenticator", "request_user"]
