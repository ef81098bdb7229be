"""Quota quantities print as Go's ``resource.Quantity.String()`` prints them."""

from __future__ import annotations

import pytest

from setpoint.cluster.apiserver.schema.quantities import Quantity, pretty


@pytest.mark.parametrize(
    ("text", "printed"),
    [
        ("0", "0"),
        ("1", "1"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("2000000", "2M"),
        ("0.5", "500m"),
        ("0.1", "100m"),
        ("100m", "100m"),
        ("1000m", "1"),
        ("1500m", "1500m"),
        ("1u", "1u"),
        ("512", "512"),
        ("1Ki", "1Ki"),
        ("1024Mi", "1Gi"),
        ("1536Mi", "1536Mi"),
        ("1.5Gi", "1536Mi"),
        ("10Gi", "10Gi"),
        # A binary value that is not a whole number of KiB prints as a decimal one.
        ("0.5Ki", "512"),
        ("1000Ki", "1000Ki"),
    ],
)
def test_a_quantity_prints_in_its_canonical_form(text: str, printed: str) -> None:
    quantity = Quantity.parse(text)
    assert quantity is not None
    assert str(quantity) == printed


def test_a_sum_keeps_the_format_of_its_first_term() -> None:
    def q(text: str) -> Quantity:
        value = Quantity.parse(text)
        assert value is not None
        return value

    assert str(q("100m") + q("200m")) == "300m"
    assert str(q("500m") + q("500m")) == "1"
    assert str(q("128Mi") + q("64Mi")) == "192Mi"
    assert str(q("1") + q("500m")) == "1500m"
    assert str(q("1Gi") + q("1")) == "1073741825"


def test_not_a_quantity_is_none() -> None:
    assert Quantity.parse("ten") is None
    assert Quantity.parse(None) is None
    assert Quantity.parse(True) is None


def test_pretty_sorts_by_name() -> None:
    values = {"requests.cpu": Quantity.parse("600m"), "pods": Quantity.parse("1")}
    assert pretty({k: v for k, v in values.items() if v is not None}) == "pods=1,requests.cpu=600m"
