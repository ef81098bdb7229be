"""Name, label key and label value validators with upstream wording."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from setpoint.api import (
    validate_dns1035_label,
    validate_dns1123_label,
    validate_dns1123_subdomain,
    validate_label_value,
    validate_qualified_name,
)
from setpoint.api.names import is_dns1123_subdomain

SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.',"
    " and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


@pytest.mark.parametrize("name", ["a", "my-app", "example.com", "a1.b-2.c", "0", "x" * 253])
def test_valid_subdomains(name: str) -> None:
    assert validate_dns1123_subdomain(name) == []


def test_subdomain_bad_characters_message_is_upstream() -> None:
    assert validate_dns1123_subdomain("My_App") == [SUBDOMAIN_MESSAGE]


@pytest.mark.parametrize("name", ["", "-a", "a-", "a..b", "A", "a_b", "a b", "a\n", ".a"])
def test_invalid_subdomains(name: str) -> None:
    assert validate_dns1123_subdomain(name) == [SUBDOMAIN_MESSAGE]


def test_too_long_subdomain_reports_length_and_pattern_separately() -> None:
    assert validate_dns1123_subdomain("a" * 254) == ["must be no more than 253 characters"]
    assert validate_dns1123_subdomain("A" * 254) == [
        "must be no more than 253 characters",
        SUBDOMAIN_MESSAGE,
    ]


def test_dns1123_label() -> None:
    assert validate_dns1123_label("default") == []
    assert validate_dns1123_label("a" * 64) == ["must be no more than 63 characters"]
    (message,) = validate_dns1123_label("a.b")
    assert message.startswith("a lowercase RFC 1123 label must consist of lower case alphanumeric")
    assert "(e.g. 'my-name',  or '123-abc', regex used for validation is" in message


def test_dns1035_label() -> None:
    assert validate_dns1035_label("svc-1") == []
    (message,) = validate_dns1035_label("1svc")
    assert message.startswith("a DNS-1035 label must consist of lower case alphanumeric characters")


@pytest.mark.parametrize(
    "key",
    ["app", "app.kubernetes.io/name", "example.com/My_Key.1", "a", "A-b_c.D", "x" * 63],
)
def test_valid_qualified_names(key: str) -> None:
    assert validate_qualified_name(key) == []


def test_qualified_name_problems_name_the_part() -> None:
    assert validate_qualified_name("/a") == ["prefix part must be non-empty"]
    assert validate_qualified_name("a/") == [
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and "
        "end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
        "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]
    assert validate_qualified_name("x" * 64) == ["name part must be no more than 63 characters"]
    (prefix_problem,) = validate_qualified_name("Bad_Prefix/a")
    assert prefix_problem.startswith("prefix part a lowercase RFC 1123 subdomain")
    (too_many,) = validate_qualified_name("a/b/c")
    assert too_many.startswith("a qualified name must consist of")
    assert too_many.endswith(
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )


@pytest.mark.parametrize("value", ["", "a", "My_Value-1.2", "x" * 63, "123"])
def test_valid_label_values(value: str) -> None:
    assert validate_label_value(value) == []


@pytest.mark.parametrize("value", ["-a", "a-", "a b", "a/b", "é"])
def test_invalid_label_values(value: str) -> None:
    (message,) = validate_label_value(value)
    assert message.startswith("a valid label must be an empty string or consist of alphanumeric")


def test_label_value_length_counts_bytes() -> None:
    assert validate_label_value("x" * 64) == ["must be no more than 63 characters"]


_NAME_CHARACTERS = st.sampled_from([*"ab0-.", "A", "_", "\n", "\u00e9", "\udc80"])


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(_NAME_CHARACTERS, max_size=12),
        st.builds(
            lambda n, tail: "a" * n + tail,
            st.integers(240, 260),
            st.text(_NAME_CHARACTERS, max_size=3),
        ),
    )
)
def test_the_subdomain_yes_or_no_agrees_with_the_messages(name: str) -> None:
    """``is_dns1123_subdomain`` (the validators' fast yes) is true exactly when the full
    check finds no problem: near the length limit, with non-ASCII characters (longer in bytes
    than in characters), a lone surrogate, a trailing newline."""
    assert is_dns1123_subdomain(name) == (validate_dns1123_subdomain(name) == [])
