"""The string formats kube-apiserver checks in CRD schemas, and the ones it ignores."""

from __future__ import annotations

import pytest

from setpoint.cluster.apiserver.schema.formats import format_checker


@pytest.mark.parametrize(
    ("name", "good", "bad"),
    [
        ("date", ["2024-02-29", "1999-12-31"], ["2023-02-29", "2024-13-01", "24-01-01", "x"]),
        (
            "date-time",
            ["2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123+01:00"],
            ["2024-01-02", "2024-01-02T25:00:00Z", "2024-01-02T03:04:05", "now"],
        ),
        ("datetime", ["2024-01-02T03:04:05Z"], ["2024-01-02 03:04:05"]),
        ("duration", ["1h30m", "5s", "1.5h", "3 days", "0"], ["", "forever", "5 parsecs"]),
        ("byte", ["aGVsbG8=", "AAAA"], ["hello!", "aGVsbG8", ""]),
        (
            "uuid",
            ["123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000"],
            ["123"],
        ),
        (
            "uuid4",
            ["123e4567-e89b-42d3-a456-426614174000"],
            ["123e4567-e89b-12d3-a456-426614174000"],
        ),
        ("ipv4", ["10.0.0.1", "010.000.000.001", "::ffff:1.2.3.4"], ["10.0.0", "256.1.1.1", "::1"]),
        ("ipv6", ["::1", "fe80::1", "::ffff:1.2.3.4"], ["10.0.0.1", "fe80::1%eth0", ":::"]),
        ("cidr", ["10.0.0.0/8", "fd00::/64"], ["10.0.0.0", "10.0.0.0/33", "x/8"]),
        (
            "mac",
            ["00:1a:2b:3c:4d:5e", "00-1A-2B-3C-4D-5E", "001a.2b3c.4d5e"],
            ["00:1a:2b", "zz:1a:2b:3c:4d:5e"],
        ),
        (
            "hostname",
            ["example.com", "localhost", "a-b.example.org"],
            ["-bad.com", "bad_host.com", "a" * 64],
        ),
        ("email", ["me@example.com", "Me <me@example.com>"], ["me", "me@", "@example.com"]),
        (
            "uri",
            ["https://example.com/x", "/relative/path", "urn:isbn:123"],
            ["", "relative", "http://a b"],
        ),
        ("hexcolor", ["#fff", "A0B1C2"], ["#ffff", "red"]),
        ("rgbcolor", ["rgb(255,0, 10)"], ["rgb(256,0,0)", "rgb(1,2)"]),
        ("ssn", ["123-45-6789", "123456789"], ["12-345-6789"]),
        ("isbn10", ["0321751043"], ["0321751044"]),
        ("isbn13", ["978-0321751041"], ["978-0321751042"]),
        ("isbn", ["0321751043", "9780321751041"], ["123"]),
        ("creditcard", ["4111 1111 1111 1111"], ["4111 1111 1111 1112"]),
        ("bsonobjectid", ["507f1f77bcf86cd799439011"], ["507f1f77bcf86cd79943901"]),
        ("password", ["anything at all"], []),
    ],
)
def test_supported_format(name: str, good: list[str], bad: list[str]) -> None:
    checker = format_checker(name)
    assert checker is not None
    for value in good:
        assert checker(value), value
    for value in bad:
        assert not checker(value), value


@pytest.mark.parametrize("name", ["int32", "int64", "float", "double", "quantity", "k8s-name"])
def test_unsupported_formats_are_ignored(name: str) -> None:
    assert format_checker(name) is None
