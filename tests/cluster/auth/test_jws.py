"""The JWS layer refuses every token not signed ES256 by the expected key."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from setpoint.cluster.apiserver.auth.authentication import jws


def _b64(document: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(document).encode()).rstrip(b"=").decode()


def test_round_trip_and_key_id() -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    token = jws.sign({"sub": "x"}, key)
    assert jws.verify(token, key.public_key()) == {"sub": "x"}
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    assert header == {"alg": "ES256", "kid": jws.key_id(key.public_key())}


@pytest.mark.parametrize(
    "forge",
    [
        lambda token, claims: f"{_b64({'alg': 'none'})}.{_b64(claims)}.",
        lambda token, claims: f"{_b64({'alg': 'HS256'})}.{_b64(claims)}.{token.split('.')[2]}",
        lambda token, claims: (
            f"{token.split('.')[0]}.{_b64({**claims, 'sub': 'y'})}.{token.split('.')[2]}"
        ),
        lambda token, claims: token + "x",
        lambda token, claims: "a.b",
        lambda token, claims: "!!.@@.##",
    ],
)
def test_forgeries_are_refused(forge: object) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    claims = {"sub": "x"}
    token = jws.sign(claims, key)
    assert callable(forge)
    with pytest.raises(jws.InvalidToken):
        jws.verify(forge(token, claims), key.public_key())


def test_another_key_is_refused() -> None:
    token = jws.sign({"sub": "x"}, ec.generate_private_key(ec.SECP256R1()))
    with pytest.raises(jws.InvalidToken, match="invalid signature"):
        jws.verify(token, ec.generate_private_key(ec.SECP256R1()).public_key())
