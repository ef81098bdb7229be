"""The extra variables a run gets: the CR as Operator SDK passes it to Ansible.

- the ``spec`` fields at the top level, their keys in snake_case (``sizeLimit`` ->
  ``size_limit``) unless the watch sets ``snakeCaseParameters: false``, which keeps every key as
  the CR spells it;
- ``ansible_operator_meta``: ``{name, namespace}`` of the CR;
- ``_<group>_<kind>`` (dots and dashes as ``_``, kind in lower case): the whole CR as read, and
  ``_<group>_<kind>_spec``: its spec, both with their keys untouched;
- the watch's ``vars``, then, for a finalizer run, the finalizer's ``vars`` (later ones win).

The snake_case conversion reproduces Operator SDK's, quirks included (``egressIPs`` ->
``egress_ips``, a leading capital gets a leading ``_``: ``Foo`` -> ``_foo``), so playbooks
written for it find the same names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["escape_variable_name", "make_parameters", "mark_unsafe", "to_snake"]

# Initialisms Operator SDK keeps as one word (with their plural).
_WORDS = ("HTTP", "URL", "IP")
_NUMBER_SEQUENCE = re.compile(r"([a-zA-Z])(\d+)([a-zA-Z](\d+))")


def _separate_words(value: str) -> str:
    """Put ``_`` around the first occurrence of each initialism (``egressIPs`` ->
    ``egress_IPS``), so the case-change rule below does not split it letter by letter."""
    for word in _WORDS:
        start = value.find(word)
        if start < 0:
            continue
        end = start + len(word)
        before = value[:start] + "_" if start > 0 else ""
        if end == len(value):
            value = before + word
        elif value[end] == "s":  # the plural belongs to the word
            rest = value[end + 1 :]
            value = before + word + "S" + ("_" + rest if rest else "")
        else:
            value = before + word + "_" + value[end:]
    return value


def to_snake(name: str) -> str:
    """Operator SDK's snake_case of a CR field name."""
    if not name:
        return name
    text = _NUMBER_SEQUENCE.sub(r"\1 \2 \3", name).strip(" ")
    if not text:
        return text
    prefix = "_" if text[0].isascii() and text[0].isupper() else ""
    text = _separate_words(text)
    words: list[str] = []
    current = ""
    position = -1  # index of the character within the current word
    for index, char in enumerate(text):
        position += 1
        following = text[index + 1] if index + 1 < len(text) else ""
        case_changes = (_upper(char) and _lower(following)) or (_lower(char) and _upper(following))
        if position > 0 and current and current[-1] != "_" and case_changes:
            if _upper(char):
                words.append(current.lower())
                current = char
                position = 0
            elif _lower(char):
                words.append((current + char).lower())
                current = ""
                position = -1
        elif char in " _-":
            words.append(current.lower())
            current = ""
            position = -1
        else:
            current += char
    words.append(current.lower())
    joined = "_".join(words)
    if words[0] in {word.lower() for word in _WORDS}:
        return joined
    return prefix + joined


def _upper(char: str) -> bool:
    return "A" <= char <= "Z"


def _lower(char: str) -> bool:
    return "a" <= char <= "z"


def _convert_keys(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {to_snake(str(key)): _convert_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_convert_keys(item) for item in value]
    return value


def mark_unsafe(value: Any) -> Any:
    """Wrap every string as ``{"__ansible_unsafe": s}``: Ansible then never templates it."""
    if isinstance(value, Mapping):
        return {key: mark_unsafe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [mark_unsafe(item) for item in value]
    if isinstance(value, str):
        return {"__ansible_unsafe": value}
    return value


def escape_variable_name(name: str) -> str:
    """A variable name Ansible accepts: ``.`` and ``-`` become ``_``."""
    return name.replace(".", "_").replace("-", "_")


def make_parameters(
    obj: Mapping[str, Any],
    *,
    group: str,
    kind: str,
    snake_case: bool = True,
    unsafe: bool = False,
    variables: Mapping[str, Any] | None = None,
    finalizer_variables: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The extra variables of a run for the CR ``obj`` (see the module docs)."""
    spec = obj.get("spec")
    if not isinstance(spec, Mapping):
        # Operator SDK gives a CR without a spec (a Secret, a ConfigMap) an empty one.
        spec = {}
        obj = {**obj, "spec": spec}
    parameters: dict[str, Any] = _convert_keys(spec) if snake_case else dict(spec)
    if unsafe:
        parameters = {key: mark_unsafe(value) for key, value in parameters.items()}
    metadata = obj.get("metadata") or {}
    parameters["ansible_operator_meta"] = {
        "namespace": metadata.get("namespace") or "",
        "name": metadata.get("name") or "",
    }
    object_key = escape_variable_name(f"_{group}_{kind.lower()}")
    parameters[object_key] = mark_unsafe(dict(obj)) if unsafe else dict(obj)
    parameters[f"{object_key}_spec"] = mark_unsafe(dict(spec)) if unsafe else dict(spec)
    parameters.update(variables or {})
    parameters.update(finalizer_variables or {})
    return parameters
