"""Compact JSON Web Signatures with ES256 (ECDSA P-256, SHA-256), on ``cryptography``.

Only what service account tokens need: sign a claims object, and verify a token against one
public key, refusing every other algorithm (no ``none``, no HMAC confusion). The key id is
derived from the public key as kube-apiserver derives it: base64url of the SHA-256 of its DER
encoding, so a token names the key that can check it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import (
    decode_dss_signature,
    encode_dss_signature,
)

ALGORITHM: Final = "ES256"
#: Bytes of each of r and s in an ES256 signature (RFC 7518 3.4).
_COORDINATE_BYTES: Final = 32


class InvalidToken(ValueError):
    """The token is not a well-formed ES256 JWS signed by the expected key."""


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise InvalidToken("malformed base64url") from error


def key_id(public_key: ec.EllipticCurvePublicKey) -> str:
    """The ``kid`` of tokens signed with this key's private half."""
    der = public_key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return _b64encode(hashlib.sha256(der).digest())


def sign(claims: dict[str, Any], key: ec.EllipticCurvePrivateKey) -> str:
    """``claims`` as a compact JWS signed with ``key``."""
    header = {"alg": ALGORITHM, "kid": key_id(key.public_key())}
    signing_input = (
        _b64encode(json.dumps(header, separators=(",", ":")).encode())
        + "."
        + _b64encode(json.dumps(claims, separators=(",", ":")).encode())
    )
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    signature = r.to_bytes(_COORDINATE_BYTES, "big") + s.to_bytes(_COORDINATE_BYTES, "big")
    return f"{signing_input}.{_b64encode(signature)}"


def unverified_claims(token: str) -> dict[str, Any]:
    """The claims of a compact JWS, not checked (to see whether it is ours at all)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("not a compact JWS")
    return _json_object(_b64decode(parts[1]))


def verify(token: str, public_key: ec.EllipticCurvePublicKey) -> dict[str, Any]:
    """The claims of ``token`` once its ES256 signature by ``public_key`` is checked."""
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("not a compact JWS")
    header = _json_object(_b64decode(parts[0]))
    if header.get("alg") != ALGORITHM:
        raise InvalidToken(f"unexpected signing algorithm {header.get('alg')!r}")
    signature = _b64decode(parts[2])
    if len(signature) != 2 * _COORDINATE_BYTES:
        raise InvalidToken("malformed signature")
    r = int.from_bytes(signature[:_COORDINATE_BYTES], "big")
    s = int.from_bytes(signature[_COORDINATE_BYTES:], "big")
    try:
        public_key.verify(
            encode_dss_signature(r, s),
            f"{parts[0]}.{parts[1]}".encode(),
            ec.ECDSA(hashes.SHA256()),
        )
    except InvalidSignature as error:
        raise InvalidToken("invalid signature") from error
    return _json_object(_b64decode(parts[1]))


def _json_object(data: bytes) -> dict[str, Any]:
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, ValueError) as error:
        raise InvalidToken("malformed JSON") from error
    if not isinstance(value, dict):
        raise InvalidToken("not a JSON object")
    return value
