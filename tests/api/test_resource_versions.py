"""Resource version conversions."""

import pytest

from setpoint.api import format_resource_version, parse_resource_version


@pytest.mark.parametrize(
    ("text", "value"), [("", 0), ("0", 0), ("1", 1), ("18446744073709551615", 2**64 - 1)]
)
def test_parse(text: str, value: int) -> None:
    assert parse_resource_version(text) == value


@pytest.mark.parametrize(
    "text", ["abc", "-1", "+1", " 1", "1.0", "1_000", "18446744073709551616", "\uff11"]
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid resource version") as error:
        parse_resource_version(text)
    assert text in str(error.value)


def test_format() -> None:
    assert format_resource_version(0) == "0"
    assert format_resource_version(123) == "123"
    assert parse_resource_version(format_resource_version(987654321)) == 987654321
    for bad in (-1, True, 1.0, 2**64):
        with pytest.raises(ValueError, match="invalid resource version"):
            format_resource_version(bad)  # type: ignore[arg-type]
