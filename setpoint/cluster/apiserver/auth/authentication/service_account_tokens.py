"""Service account tokens: JWTs the API server signs for a ServiceAccount and later accepts.

Claims are those of kube-apiserver's bound tokens: ``iss``, ``sub``
(``system:serviceaccount:NS:NAME``), ``aud``, ``exp``, ``iat``, ``nbf``, ``jti`` and
``kubernetes.io`` (namespace, the ServiceAccount's name and uid, the bound object if any).
A token is accepted while its signature, time window (one minute of leeway, as upstream's JOSE
library) and audience hold, and while the ServiceAccount (and a bound Pod, Secret or Node) still
exists with the uid in the token: deleting the ServiceAccount revokes every token issued for
it, even if one of the same name is created again (a terminating object's tokens last until one
minute past its deletion deadline, as upstream).

Legacy tokens (issuer ``kubernetes/serviceaccount``, the token controller writes them into
Secrets of type ``kubernetes.io/service-account-token``) never expire and have no audience
(they are valid for the API server's own); they are accepted while that Secret still holds
exactly that token and the ServiceAccount still has the uid in it.
"""

from __future__ import annotations

import base64
import datetime
import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from setpoint.api.clock import SYSTEM_CLOCK, Clock
from setpoint.cluster.apiserver.auth.authentication import jws
from setpoint.cluster.apiserver.auth.identity import AUTHENTICATED_GROUP, UserInfo

log = logging.getLogger(__name__)

#: The issuer (and default audience) of the local cluster's tokens, as kubeadm and kind set it.
DEFAULT_ISSUER: Final = "https://kubernetes.default.svc.cluster.local"
#: The issuer of legacy (Secret-based) tokens.
LEGACY_ISSUER: Final = "kubernetes/serviceaccount"
_LEGACY_CLAIM: Final = "kubernetes.io/serviceaccount/"
USER_PREFIX: Final = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS_GROUP: Final = "system:serviceaccounts"
#: go-jose's ``DefaultLeeway``, which upstream's validator uses for exp and nbf.
LEEWAY: Final = datetime.timedelta(minutes=1)
#: Distinct tokens whose verified claims are remembered.
VERIFIED_CACHE_SIZE: Final = 1024
CREDENTIAL_ID_EXTRA: Final = "authentication.kubernetes.io/credential-id"
POD_NAME_EXTRA: Final = "authentication.kubernetes.io/pod-name"
POD_UID_EXTRA: Final = "authentication.kubernetes.io/pod-uid"
NODE_NAME_EXTRA: Final = "authentication.kubernetes.io/node-name"
NODE_UID_EXTRA: Final = "authentication.kubernetes.io/node-uid"

#: Finds a stored object: (plural, namespace or None, name) -> the object, or None if absent.
ObjectLookup = Callable[[str, str | None, str], dict[str, Any] | None]


class TokenRejected(ValueError):
    """A token this issuer signed (or claims to have) that is not valid now."""


@dataclass(frozen=True, slots=True)
class BoundObject:
    """The object a token is bound to: ``Pod``, ``Secret`` or ``Node``, with its uid."""

    kind: str
    name: str
    uid: str


def generate_signing_key() -> bytes:
    """A new EC P-256 private key (PEM) for signing tokens."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def service_account_username(namespace: str, name: str) -> str:
    """``system:serviceaccount:NS:NAME``."""
    return f"{USER_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups of every ServiceAccount of ``namespace`` (authenticated included)."""
    return (
        ALL_SERVICE_ACCOUNTS_GROUP,
        f"{ALL_SERVICE_ACCOUNTS_GROUP}:{namespace}",
        AUTHENTICATED_GROUP,
    )


class ServiceAccountTokens:
    """Issues and validates the cluster's service account tokens."""

    def __init__(
        self,
        signing_key_pem: bytes,
        lookup: ObjectLookup,
        *,
        issuer: str = DEFAULT_ISSUER,
        audiences: Sequence[str] = (),
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        key = serialization.load_pem_private_key(signing_key_pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey) or not isinstance(
            key.curve, ec.SECP256R1
        ):
            raise ValueError("the service account signing key is not an EC P-256 key")
        self._key = key
        self._public_key = key.public_key()
        #: Reads the ServiceAccounts (and bound objects) tokens depend on.
        self.lookup = lookup
        self.issuer = issuer
        #: What the API server accepts as a token's audience (upstream ``--api-audiences``).
        self.audiences: tuple[str, ...] = tuple(audiences) or (issuer,)
        self._clock = clock
        self._verified: dict[str, dict[str, Any]] = {}

    def now(self) -> datetime.datetime:
        """The time tokens are issued and checked at (the cluster's clock)."""
        return self._clock.now()

    def issue(
        self,
        account: dict[str, Any],
        audiences: Sequence[str],
        expiration_seconds: int,
        bound: BoundObject | None = None,
        *,
        issued_at: datetime.datetime | None = None,
    ) -> str:
        """A token for the ServiceAccount object ``account``, valid from ``issued_at``."""
        metadata = account["metadata"]
        namespace, name = metadata["namespace"], metadata["name"]
        now = int((issued_at or self.now()).timestamp())
        private: dict[str, Any] = {
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": metadata.get("uid", "")},
        }
        if bound is not None:
            private[bound.kind.lower()] = {"name": bound.name, "uid": bound.uid}
        claims = {
            "aud": list(audiences),
            "exp": now + expiration_seconds,
            "iat": now,
            "iss": self.issuer,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": private,
            "nbf": now,
            "sub": service_account_username(namespace, name),
        }
        return jws.sign(claims, self._key)

    def issue_legacy(self, account: dict[str, Any], secret_name: str) -> str:
        """A non-expiring token for ``account``, to be kept in Secret ``secret_name``."""
        metadata = account["metadata"]
        namespace, name = metadata["namespace"], metadata["name"]
        claims = {
            "iss": LEGACY_ISSUER,
            f"{_LEGACY_CLAIM}namespace": namespace,
            f"{_LEGACY_CLAIM}secret.name": secret_name,
            f"{_LEGACY_CLAIM}service-account.name": name,
            f"{_LEGACY_CLAIM}service-account.uid": metadata.get("uid", ""),
            "sub": service_account_username(namespace, name),
        }
        return jws.sign(claims, self._key)

    def is_ours(self, token: str) -> bool:
        """Whether ``token`` is a JWT naming this issuer (others are for other authenticators)."""
        try:
            claims = jws.unverified_claims(token)
        except jws.InvalidToken:
            return False
        return claims.get("iss") in (self.issuer, LEGACY_ISSUER)

    def authenticate(self, token: str) -> UserInfo:
        """The ServiceAccount user ``token`` stands for; :class:`TokenRejected` if invalid."""
        return self.review(token)[0]

    def review(self, token: str, audiences: Sequence[str] = ()) -> tuple[UserInfo, tuple[str, ...]]:
        """The user ``token`` stands for and which of ``audiences`` (default: the API
        server's) it is valid for; :class:`TokenRejected` if it is valid for none of them."""
        wanted = tuple(audiences) or self.audiences
        claims = self._verified_claims(token)
        if claims.get("iss") == LEGACY_ISSUER:
            return self._review_legacy(token, claims, wanted)
        if claims.get("iss") != self.issuer:
            raise TokenRejected("token issuer is not this API server")
        token_audiences = claims.get("aud")
        if isinstance(token_audiences, str):
            token_audiences = [token_audiences]
        if not isinstance(token_audiences, list):
            token_audiences = []
        accepted = tuple(a for a in wanted if a in token_audiences)
        if not accepted:
            raise TokenRejected(
                f"token audiences {_go_quote_list(token_audiences)} is invalid for the target "
                f"audiences {_go_quote_list(wanted)}"
            )
        self._check_times(claims)
        private = claims.get("kubernetes.io")
        if not isinstance(private, dict):
            raise TokenRejected("token has no kubernetes.io claim")
        namespace = private.get("namespace")
        account = private.get("serviceaccount")
        if not isinstance(namespace, str) or not isinstance(account, dict):
            raise TokenRejected("token names no service account")
        name, uid = account.get("name"), account.get("uid")
        if not isinstance(name, str) or not isinstance(uid, str):
            raise TokenRejected("token names no service account")
        if claims.get("sub") != service_account_username(namespace, name):
            raise TokenRejected("token subject does not match its service account")
        self._check_live("serviceaccounts", namespace, name, uid)
        extra: dict[str, tuple[str, ...]] = {}
        jti = claims.get("jti")
        if isinstance(jti, str) and jti:
            extra[CREDENTIAL_ID_EXTRA] = (f"JTI={jti}",)
        pod = private.get("pod")
        if isinstance(pod, dict):
            self._check_live("pods", namespace, str(pod.get("name")), str(pod.get("uid")))
            extra[POD_NAME_EXTRA] = (str(pod.get("name")),)
            extra[POD_UID_EXTRA] = (str(pod.get("uid")),)
        secret = private.get("secret")
        if isinstance(secret, dict):
            self._check_live("secrets", namespace, str(secret.get("name")), str(secret.get("uid")))
        node = private.get("node")
        if isinstance(node, dict):
            self._check_live("nodes", None, str(node.get("name")), str(node.get("uid")))
            extra[NODE_NAME_EXTRA] = (str(node.get("name")),)
            extra[NODE_UID_EXTRA] = (str(node.get("uid")),)
        user = UserInfo(
            service_account_username(namespace, name),
            service_account_groups(namespace),
            uid,
            dict(sorted(extra.items())),
        )
        return user, accepted

    def _verified_claims(self, token: str) -> dict[str, Any]:
        # Checking the signature is the costly part (about a millisecond); a client sends the
        # same token with every request, so verified claims are remembered. Everything that
        # can change (time, the ServiceAccount, bound objects) is still checked every time.
        claims = self._verified.get(token)
        if claims is None:
            try:
                claims = jws.verify(token, self._public_key)
            except jws.InvalidToken as error:
                raise TokenRejected(str(error)) from error
            if len(self._verified) >= VERIFIED_CACHE_SIZE:
                self._verified.clear()
            self._verified[token] = claims
        return claims

    def _review_legacy(
        self, token: str, claims: dict[str, Any], wanted: tuple[str, ...]
    ) -> tuple[UserInfo, tuple[str, ...]]:
        accepted = tuple(a for a in wanted if a in self.audiences)
        if not accepted:
            raise TokenRejected(
                f"token audiences {_go_quote_list(self.audiences)} is invalid for the target "
                f"audiences {_go_quote_list(wanted)}"
            )
        fields = [
            claims.get(f"{_LEGACY_CLAIM}{key}")
            for key in ("namespace", "secret.name", "service-account.name", "service-account.uid")
        ]
        if not all(isinstance(value, str) and value for value in fields):
            raise TokenRejected("legacy token names no service account")
        namespace, secret_name, name, uid = (str(value) for value in fields)
        if claims.get("sub") != service_account_username(namespace, name):
            raise TokenRejected("token subject does not match its service account")
        secret = self.lookup("secrets", namespace, secret_name)
        if secret is None:
            raise TokenRejected(f"secret {namespace}/{secret_name} has been deleted")
        stored = (secret.get("data") or {}).get("token")
        try:
            matches = isinstance(stored, str) and base64.b64decode(stored).decode() == token
        except (ValueError, UnicodeDecodeError):
            matches = False
        if not matches:
            raise TokenRejected("token does not match the one in its secret")
        self._check_live("secrets", namespace, secret_name, str(secret["metadata"].get("uid")))
        self._check_live("serviceaccounts", namespace, name, uid)
        user = UserInfo(
            service_account_username(namespace, name), service_account_groups(namespace), uid
        )
        return user, accepted

    def _check_times(self, claims: dict[str, Any]) -> None:
        now = self.now().timestamp()
        leeway = LEEWAY.total_seconds()
        expires, not_before, issued = claims.get("exp"), claims.get("nbf"), claims.get("iat")
        if not isinstance(expires, int) or now - leeway > expires:
            raise TokenRejected("service account token has expired")
        if isinstance(not_before, int) and now + leeway < not_before:
            raise TokenRejected("service account token is not valid yet")
        if isinstance(issued, int) and now + leeway < issued:
            raise TokenRejected("service account token is issued in the future")

    def _check_live(self, plural: str, namespace: str | None, name: str, uid: str) -> None:
        found = self.lookup(plural, namespace, name)
        kind = plural[:-1]
        where = f"{namespace}/{name}" if namespace else name
        if found is None:
            raise TokenRejected(f"{kind} {where} has been deleted")
        metadata = found.get("metadata") or {}
        if metadata.get("uid") != uid:
            raise TokenRejected(f"{kind} UID ({metadata.get('uid')}) does not match claim ({uid})")
        deleting = metadata.get("deletionTimestamp")
        if isinstance(deleting, str) and _parse_time(deleting) < self.now() - LEEWAY:
            # As upstream: a terminating object's tokens last one minute past its deadline.
            raise TokenRejected(f"{kind} {where} is being deleted")


def _go_quote_list(values: Sequence[object]) -> str:
    """A list of strings as Go's ``%q`` prints it: ``["a" "b"]``."""
    return "[" + " ".join(json.dumps(str(value)) for value in values) + "]"


def _parse_time(text: str) -> datetime.datetime:
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return datetime.datetime.min.replace(tzinfo=datetime.UTC)
    return moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC)
