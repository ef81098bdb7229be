"""Field selectors: parsing, escaping, matching."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from setpoint.api import FieldSelector, SelectorError
from setpoint.api.selectors import escape_field_value, unescape_field_value
from tests.api.hypothesis_profile import property_test


def test_parse_terms() -> None:
    selector = FieldSelector.parse("metadata.name=web,status.phase!=Running,spec.nodeName==n1")
    assert selector.requirements == (
        ("metadata.name", "=", "web"),
        ("spec.nodeName", "=", "n1"),
        ("status.phase", "!=", "Running"),
    )
    assert str(selector) == "metadata.name=web,spec.nodeName=n1,status.phase!=Running"


def test_kubectl_describe_events_selector() -> None:
    selector = FieldSelector.parse(
        "involvedObject.namespace=ns,involvedObject.uid=u-1,involvedObject.name=p1"
    )
    fields = {
        "involvedObject.namespace": "ns",
        "involvedObject.uid": "u-1",
        "involvedObject.name": "p1",
    }
    assert selector.matches(fields)
    assert not selector.matches({**fields, "involvedObject.uid": "u-2"})


def test_matching_treats_missing_fields_as_empty() -> None:
    assert FieldSelector.parse("spec.nodeName=").matches({})
    assert FieldSelector.parse("spec.nodeName!=n1").matches({})
    assert not FieldSelector.parse("spec.nodeName=n1").matches({})


def test_empty_selector() -> None:
    assert FieldSelector.parse("").empty
    assert FieldSelector.parse(",,").empty
    assert FieldSelector.parse("").matches({"a": "b"})
    assert str(FieldSelector.everything()) == ""


def test_escapes() -> None:
    selector = FieldSelector.parse(r"a=x\,y\=z\\w,b!=\\")
    assert selector.requirements == (("a", "=", "x,y=z\\w"), ("b", "!=", "\\"))
    assert str(selector) == r"a=x\,y\=z\\w,b!=\\"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("abc", "invalid selector: 'abc'; can't understand 'abc'"),
        ("a=1,b", "invalid selector: 'a=1,b'; can't understand 'b'"),
        ("a=b=c", "invalid field selector: unescaped character in value: ="),
        (r"a=b\x", r"invalid field selector: invalid escape sequence: \x"),
        ("a=b\\", "invalid field selector: invalid escape sequence: \\"),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as error:
        FieldSelector.parse(text)
    assert str(error.value) == message


def test_requires_exact_match() -> None:
    selector = FieldSelector.parse("metadata.name=p1,spec.nodeName!=n")
    assert selector.requires_exact_match("metadata.name") == "p1"
    assert selector.requires_exact_match("spec.nodeName") is None


def test_from_fields_and_bad_operator() -> None:
    assert str(FieldSelector.from_fields({"b": "1", "a": "x,y"})) == r"a=x\,y,b=1"
    with pytest.raises(SelectorError, match="operator"):
        FieldSelector((("a", "<", "1"),))


field_names = st.from_regex(r"[a-zA-Z][a-zA-Z0-9.]{0,12}", fullmatch=True)
field_values = st.text(max_size=12) | st.sampled_from(["", ",", "=", "\\", "!=", "a\\,b", "=="])
field_selectors = st.lists(
    st.tuples(field_names, st.sampled_from(["=", "!="]), field_values), max_size=4
).map(lambda reqs: FieldSelector(tuple(reqs)))


@property_test
@given(field_values)
def test_escape_round_trip(value: str) -> None:
    assert unescape_field_value(escape_field_value(value)) == value


@property_test
@given(field_selectors)
def test_string_round_trip(selector: FieldSelector) -> None:
    assert FieldSelector.parse(str(selector)) == selector


@property_test
@given(field_selectors, st.dictionaries(field_names, field_values, max_size=4))
def test_round_trip_keeps_matching(selector: FieldSelector, fields: dict[str, str]) -> None:
    assert FieldSelector.parse(str(selector)).matches(fields) == selector.matches(fields)


@property_test
@given(st.text(alphabet=st.sampled_from(list("ab=!,\\ .")) | st.characters(), max_size=20))
def test_parse_fails_only_with_selector_error(text: str) -> None:
    try:
        selector = FieldSelector.parse(text)
    except SelectorError:
        return
    for field, _, value in selector.requirements:
        assert isinstance(field, str) and isinstance(value, str)
