"""Label and field selectors: parse, match, print, exactly as Kubernetes does.

A **label selector** is a comma-separated AND of requirements on an object's labels::

    app=web, tier!=db, env in (prod,staging), release notin (canary), team, !legacy, replicas>2

It also comes as a structured ``LabelSelector`` (``matchLabels`` + ``matchExpressions``) inside
objects such as Deployments; :meth:`LabelSelector.from_dict` reads that form. Keys must be
qualified names and values valid label values; errors are worded like apimachinery's parser
(``unable to parse requirement: ...``, ``found 'x', expected: ...``).

A **field selector** is a comma-separated AND of ``field=value``, ``field==value`` or
``field!=value``; ``\\,``, ``\\=`` and ``\\\\`` escape those characters inside values. A field
that an object does not have reads as the empty string.

Both selectors are immutable values: ``str(selector)`` is a canonical form that parses back to an
equal selector, so selectors can be used as cache keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from setpoint.api.field_selectors import (
    FieldRequirement,
    FieldSelector,
    escape_field_value,
    unescape_field_value,
)
from setpoint.api.go_format import go_quote
from setpoint.api.label_requirements import (
    DOUBLE_EQUALS,
    EQUALS,
    EXPRESSION_OPERATORS,
    IN,
    NOT_EQUALS,
    NOT_IN,
    Requirement,
    child_path,
)
from setpoint.api.label_selector_parser import parse_requirements
from setpoint.api.selector_error import SelectorError

# Field selectors live in their own module; they are re-exported so that one import serves both.
__all__ = [
    "FieldRequirement",
    "FieldSelector",
    "LabelSelector",
    "Requirement",
    "SelectorError",
    "escape_field_value",
    "unescape_field_value",
]


def _canonical(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    return tuple(sorted(requirements, key=lambda r: (r.key, r.operator, r.values)))


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """An AND of label requirements. The empty selector matches everything.

    ``LabelSelector.nothing()`` (what a missing structured selector means upstream) matches no
    object at all; it prints as ``""`` like upstream, so it does not round-trip through ``parse``.
    """

    requirements: tuple[Requirement, ...] = ()
    matches_nothing: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", _canonical(self.requirements))

    @classmethod
    def everything(cls) -> LabelSelector:
        """The selector that matches every object."""
        return cls()

    @classmethod
    def nothing(cls) -> LabelSelector:
        """The selector that matches no object."""
        return cls((), matches_nothing=True)

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """Parse the Kubernetes string syntax; raises :class:`SelectorError` naming the problem."""
        if not isinstance(text, str):
            raise SelectorError(f"label selector must be a string, not {type(text).__name__}")
        return cls(tuple(parse_requirements(text)))

    @classmethod
    def from_labels(cls, labels: Mapping[str, str]) -> LabelSelector:
        """A selector requiring each ``key=value`` of ``labels`` (validated)."""
        return cls(tuple(Requirement.create(k, EQUALS, (v,)) for k, v in labels.items()))

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any] | None, *, path: str = "") -> LabelSelector:
        """Read a structured ``LabelSelector`` (``matchLabels``, ``matchExpressions``).

        ``None`` selects nothing and ``{}`` selects everything, as upstream. ``path`` prefixes
        field names in error messages (e.g. ``spec.selector``).
        """
        if selector is None:
            return cls.nothing()
        if not isinstance(selector, Mapping):
            raise SelectorError(f"{path or 'selector'}: label selector must be an object")
        requirements: list[Requirement] = []
        match_labels = selector.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            raise SelectorError(f"{child_path(path, 'matchLabels')}: must be an object of strings")
        for key, value in match_labels.items():
            if not isinstance(value, str):
                raise SelectorError(
                    f"{child_path(path, 'matchLabels')}[{key}]: Invalid value: must be a string"
                )
            labels_path = child_path(path, "matchLabels") if path else ""
            requirements.append(Requirement.create(key, EQUALS, (value,), path=labels_path))
        expressions = selector.get("matchExpressions") or []
        if not isinstance(expressions, Sequence) or isinstance(expressions, str):
            raise SelectorError(f"{child_path(path, 'matchExpressions')}: must be a list")
        for index, expression in enumerate(expressions):
            item_path = f"{child_path(path, 'matchExpressions')}[{index}]"
            if not isinstance(expression, Mapping):
                raise SelectorError(f"{item_path}: must be an object")
            raw_operator = expression.get("operator")
            operator = (
                EXPRESSION_OPERATORS.get(raw_operator) if isinstance(raw_operator, str) else None
            )
            if operator is None:
                raise SelectorError(
                    f"{go_quote(str(raw_operator or ''))} is not a valid label selector operator"
                )
            key = expression.get("key")
            values = expression.get("values") or []
            if not isinstance(key, str):
                raise SelectorError(f"{item_path}.key: Required value: must be a string")
            if (
                not isinstance(values, Sequence)
                or isinstance(values, str)
                or not all(isinstance(v, str) for v in values)
            ):
                raise SelectorError(f"{item_path}.values: must be a list of strings")
            # Without a path, messages are upstream's (``values: Invalid value: ...``).
            requirements.append(
                Requirement.create(key, operator, values, path=item_path if path else "")
            )
        return cls(tuple(requirements))

    def to_dict(self) -> dict[str, Any]:
        """The structured form (``matchLabels`` / ``matchExpressions``) selecting the same objects.

        ``key=v`` becomes a ``matchLabels`` entry (or ``In`` when the key is already there) and
        ``key!=v`` becomes ``NotIn``, which means the same. ``gt``/``lt`` have no structured form
        and raise :class:`SelectorError`, as does :meth:`nothing`.
        """
        if self.matches_nothing:
            raise SelectorError("a selector that matches nothing has no structured form")
        match_labels: dict[str, str] = {}
        expressions: list[dict[str, Any]] = []
        names = {value: name for name, value in EXPRESSION_OPERATORS.items()}
        for requirement in self.requirements:
            key, operator, values = requirement.key, requirement.operator, requirement.values
            if operator in (EQUALS, DOUBLE_EQUALS) and key not in match_labels:
                match_labels[key] = values[0]
                continue
            if operator in (EQUALS, DOUBLE_EQUALS):
                operator = IN
            elif operator == NOT_EQUALS:
                operator = NOT_IN
            if operator not in names:
                raise SelectorError(
                    f"requirement '{requirement}' has no structured form: "
                    "matchExpressions support only In, NotIn, Exists and DoesNotExist"
                )
            expression: dict[str, Any] = {"key": key, "operator": names[operator]}
            if operator in (IN, NOT_IN):
                expression["values"] = list(values)
            expressions.append(expression)
        result: dict[str, Any] = {}
        if match_labels:
            result["matchLabels"] = match_labels
        if expressions:
            result["matchExpressions"] = expressions
        return result

    def add(self, *requirements: Requirement) -> LabelSelector:
        """A new selector that also requires ``requirements``."""
        return LabelSelector(self.requirements + requirements, self.matches_nothing)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (matches every object)."""
        return not self.requirements and not self.matches_nothing

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """Whether an object with ``labels`` is selected."""
        if self.matches_nothing:
            return False
        have = labels or {}
        return all(requirement.matches(have) for requirement in self.requirements)

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have (``key=v`` or ``key in (v)``), else None."""
        for requirement in self.requirements:
            if requirement.key == key:
                if requirement.operator in (EQUALS, IN) and len(requirement.values) == 1:
                    return requirement.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)
