"""Label selectors: the string syntax, structured selectors, matching and upstream errors."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from setpoint.api import LabelSelector, Requirement, SelectorError
from tests.api.hypothesis_profile import property_test


def parse(text: str) -> LabelSelector:
    return LabelSelector.parse(text)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "web"}, True),
        ("app=web", {"app": "db"}, False),
        ("app=web", {}, False),
        ("app!=web", {"app": "db"}, True),
        ("app!=web", {}, True),  # a missing key is "not equal"
        ("app!=web", {"app": "web"}, False),
        ("env in (prod, staging)", {"env": "staging"}, True),
        ("env in (prod,staging)", {"env": "dev"}, False),
        ("env in (prod)", {}, False),
        ("env notin (prod)", {}, True),
        ("env notin (prod)", {"env": "prod"}, False),
        ("team", {"team": ""}, True),
        ("team", {}, False),
        ("!team", {}, True),
        ("!team", {"team": "a"}, False),
        ("replicas>2", {"replicas": "3"}, True),
        ("replicas>2", {"replicas": "2"}, False),
        ("replicas<2", {"replicas": "1"}, True),
        ("replicas>2", {"replicas": "many"}, False),  # a non-integer label never compares
        ("replicas>2", {}, False),
        ("app=", {"app": ""}, True),
        ("app=", {}, False),
        ("a in ()", {"a": ""}, True),
        ("a=1,b=2", {"a": "1", "b": "2"}, True),
        ("a=1,b=2", {"a": "1"}, False),
        ("", {"anything": "x"}, True),
        ("in in (in)", {"in": "in"}, True),  # keywords are identifiers where a key/value is due
    ],
)
def test_matching(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse(text).matches(labels) is expected


def test_whitespace_is_a_separator_only() -> None:
    assert parse(" a = b ,\tc\nin ( d , e ) , ! f ") == parse("a=b,c in (d,e),!f")


def test_canonical_string_sorts_requirements_and_values() -> None:
    selector = parse("z in (b,a), x!=1, !w, y")
    assert str(selector) == "!w,x!=1,y,z in (a,b)"
    assert str(parse("a==b")) == "a=b"
    assert str(parse("x in (foo,,baz),z notin ()")) == "x in (,baz,foo),z notin ()"


def test_empty_and_nothing() -> None:
    assert parse("").empty
    assert LabelSelector.everything().matches({})
    assert not parse("a").empty
    nothing = LabelSelector.from_dict(None)
    assert not nothing.empty
    assert not nothing.matches({})
    assert not nothing.matches({"a": "b"})


def test_requirements_are_exposed() -> None:
    assert parse("b in (2,1),a").requirements == (
        Requirement("a", "exists", ()),
        Requirement("b", "in", ("1", "2")),
    )


def test_requires_exact_match() -> None:
    selector = parse("app=web,env in (prod),tier in (a,b)")
    assert selector.requires_exact_match("app") == "web"
    assert selector.requires_exact_match("env") == "prod"
    assert selector.requires_exact_match("tier") is None
    assert selector.requires_exact_match("missing") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a,", "found '', expected: identifier after ','"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a=b c", "found 'c', expected: ',' or 'end of string'"),
        ("!a=b", "found '=', expected: ',' or 'end of string'"),
        (",", "found ',', expected: !, identifier, or 'end of string'"),
        ("a in (x,,)", "unable to parse requirement: found ')', expected: ',', or identifier"),
        ("a=(", "unable to parse requirement: found '(', expected: identifier"),
        ("a in )", "unable to parse requirement: found ')' expected: '('"),
        ("a in (=", "unable to parse requirement: found '=', expected: ',', ')' or identifier"),
        (
            "a>x",
            'unable to parse requirement: values[0]: Invalid value: "x": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a>99999999999999999999",
            'unable to parse requirement: values[0]: Invalid value: "99999999999999999999": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ],
)
def test_parse_errors_are_worded_like_apimachinery(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as error:
        parse(text)
    assert str(error.value) == message


def test_invalid_value_names_the_value_and_key() -> None:
    with pytest.raises(SelectorError) as error:
        parse("app=a_")
    assert str(error.value).startswith(
        'unable to parse requirement: values[0][app]: Invalid value: "a_": a valid label must be '
        "an empty string or consist of alphanumeric characters"
    )


def test_invalid_key_is_reported_against_a_nil_path_like_upstream() -> None:
    with pytest.raises(SelectorError) as error:
        parse("x/y/z=1")
    assert str(error.value).startswith(
        'unable to parse requirement: <nil>: Invalid value: "x/y/z": a qualified name must'
    )


def test_selector_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse("(")


def test_from_dict() -> None:
    selector = LabelSelector.from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod", "staging"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "tier", "operator": "NotIn", "values": ["db"]},
                {"key": "team", "operator": "Exists"},
            ],
        }
    )
    assert str(selector) == "app=web,!canary,env in (prod,staging),team,tier notin (db)"
    assert selector.matches({"app": "web", "env": "prod", "team": "x"})
    assert not selector.matches({"app": "web", "env": "prod", "team": "x", "canary": "1"})
    assert LabelSelector.from_dict({}).empty
    assert LabelSelector.from_dict({"matchLabels": {}, "matchExpressions": []}).empty


def test_from_dict_errors() -> None:
    with pytest.raises(SelectorError, match=r'^"Gt" is not a valid label selector operator$'):
        LabelSelector.from_dict({"matchExpressions": [{"key": "a", "operator": "Gt"}]})
    with pytest.raises(SelectorError) as error:
        LabelSelector.from_dict(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}
        )
    assert str(error.value) == (
        "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty"
    )
    with pytest.raises(SelectorError) as error:
        LabelSelector.from_dict(
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}
        )
    assert "values set must be empty for exists and does not exist" in str(error.value)
    with pytest.raises(SelectorError, match=r"key: Invalid value: \"a b\""):
        LabelSelector.from_dict({"matchLabels": {"a b": "x"}})


def test_from_labels() -> None:
    selector = LabelSelector.from_labels({"b": "2", "a": "1"})
    assert str(selector) == "a=1,b=2"
    assert selector.matches({"a": "1", "b": "2", "c": "3"})


def test_requirement_create_lists_all_problems() -> None:
    with pytest.raises(SelectorError) as error:
        Requirement.create("-bad", "=", ["a", "b"])
    message = str(error.value)
    assert message.startswith('[key: Invalid value: "-bad": name part must consist of')
    assert (
        'values: Invalid value: []string{"a", "b"}: exact-match compatibility requires' in message
    )
    with pytest.raises(SelectorError, match=r"operator: Unsupported value: \"~\""):
        Requirement.create("a", "~", ["b"])


# --- properties --------------------------------------------------------------------------

KEYS = ["app", "tier", "example.com/role", "in", "notin", "a.b_c-D", "k8s.io/x"]
VALUES = ["", "a", "b", "in", "x-y", "My_Value.1"]
NUMBERS = ["0", "1", "2", "10", "007"]

keys = st.sampled_from(KEYS)
values = st.sampled_from(VALUES + NUMBERS)
value_sets = st.lists(values, min_size=1, max_size=3)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(keys)
    operator = draw(st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt"]))
    if operator in ("in", "notin"):
        chosen = draw(value_sets)
    elif operator in ("exists", "!"):
        chosen = []
    elif operator in ("gt", "lt"):
        chosen = [draw(st.sampled_from(NUMBERS))]
    else:
        chosen = [draw(values)]
    return Requirement.create(key, operator, chosen)


selectors = st.lists(requirements(), max_size=4).map(lambda rs: LabelSelector(tuple(rs)))
label_sets = st.dictionaries(keys, values, max_size=5)


def spaced(selector: LabelSelector) -> str:
    """The selector written with generous whitespace around every token."""
    parts = []
    for r in selector.requirements:
        if r.operator == "exists":
            parts.append(f" {r.key} ")
        elif r.operator == "!":
            parts.append(f" ! {r.key} ")
        elif r.operator in ("in", "notin"):
            parts.append(f" {r.key}  {r.operator}\t( {' , '.join(r.values)} ) ")
        else:
            symbol = {"gt": ">", "lt": "<"}.get(r.operator, r.operator)
            parts.append(f" {r.key} {symbol} {r.values[0]} ")
    return ",".join(parts)


@property_test
@given(selectors)
def test_string_round_trip(selector: LabelSelector) -> None:
    assert parse(str(selector)) == selector


@property_test
@given(selectors)
def test_whitespace_round_trip(selector: LabelSelector) -> None:
    assert parse(spaced(selector)) == selector


@property_test
@given(selectors, label_sets)
def test_round_trip_keeps_matching(selector: LabelSelector, labels: dict[str, str]) -> None:
    assert parse(str(selector)).matches(labels) == selector.matches(labels)
    assert selector.matches(labels) == all(r.matches(labels) for r in selector.requirements)


@property_test
@given(label_sets)
def test_selector_from_labels_matches_those_labels(labels: dict[str, str]) -> None:
    selector = LabelSelector.from_labels(labels)
    assert selector.matches(labels)
    assert parse(str(selector)) == selector
    for key in labels:
        assert not selector.matches({k: v for k, v in labels.items() if k != key})


def test_to_dict() -> None:
    selector = parse("app=web,app=x,tier!=db,env in (a,b),team,!legacy")
    assert selector.to_dict() == {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "app", "operator": "In", "values": ["x"]},
            {"key": "env", "operator": "In", "values": ["a", "b"]},
            {"key": "legacy", "operator": "DoesNotExist"},
            {"key": "team", "operator": "Exists"},
            {"key": "tier", "operator": "NotIn", "values": ["db"]},
        ],
    }
    assert LabelSelector.everything().to_dict() == {}
    with pytest.raises(SelectorError, match="no structured form"):
        parse("replicas>2").to_dict()
    with pytest.raises(SelectorError, match="matches nothing"):
        LabelSelector.nothing().to_dict()


def test_add_returns_a_new_selector() -> None:
    base = parse("app=web")
    extended = base.add(Requirement.create("tier", "!=", ["db"]))
    assert str(base) == "app=web"
    assert str(extended) == "app=web,tier!=db"


@property_test
@given(selectors, label_sets)
def test_structured_form_selects_the_same_objects(
    selector: LabelSelector, labels: dict[str, str]
) -> None:
    if any(r.operator in ("gt", "lt") for r in selector.requirements):
        return
    structured = LabelSelector.from_dict(selector.to_dict())
    assert structured.matches(labels) == selector.matches(labels)


def test_from_dict_with_path_prefixes_field_names() -> None:
    with pytest.raises(SelectorError) as error:
        LabelSelector.from_dict(
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]},
            path="spec.selector",
        )
    assert str(error.value).startswith("spec.selector.matchExpressions[0].values: Invalid value")
    with pytest.raises(SelectorError, match=r"^spec\.selector\.matchLabels\.key: Invalid value"):
        LabelSelector.from_dict({"matchLabels": {"-a": "x"}}, path="spec.selector")


name_parts = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?", fullmatch=True)
prefixes = st.from_regex(r"[a-z0-9]([-a-z0-9]{0,5}[a-z0-9])?(\.[a-z0-9]{1,4}){0,2}", fullmatch=True)
random_keys = st.tuples(st.none() | prefixes, name_parts).map(
    lambda pair: f"{pair[0]}/{pair[1]}" if pair[0] else pair[1]
)
random_values = st.just("") | name_parts


@property_test
@given(
    random_keys,
    st.sampled_from(["=", "!=", "in", "notin"]),
    st.lists(random_values, min_size=1, max_size=3),
)
def test_any_valid_key_and_values_round_trip(key: str, operator: str, chosen: list[str]) -> None:
    if operator in ("=", "!="):
        chosen = chosen[:1]
    selector = LabelSelector((Requirement.create(key, operator, chosen),))
    assert parse(str(selector)) == selector


@property_test
@given(
    st.text(alphabet=st.sampled_from(list("ab=!(),<> \tin1-/._")) | st.characters(), max_size=20)
)
def test_parse_fails_only_with_selector_error(text: str) -> None:
    try:
        selector = parse(text)
    except SelectorError:
        return
    assert parse(str(selector)) == selector
