"""The JSON names of a custom resource's fields: camelCase by default, checked at generate time.

Kubernetes APIs name fields in lowerCamelCase (kubebuilder's JSON tags: ``DeploymentName
string `json:"deploymentName"```), Python in snake_case. A resource declared with
``CustomResource`` therefore gives every field of its models without an alias of its own the
camelCase name (``deployment_name`` is ``deploymentName`` in the CRD, in YAML and on the wire)
while Python code keeps the snake_case attribute, and either name is accepted on input. A
``Field(alias=...)`` wins; a model whose ``model_config`` names an ``alias_generator`` (even
``None``) keeps its own naming; ``camel_case=False`` in the class statement keeps the Python
names for the whole resource (the JSON names of resources made before camelCase became the
default).

:func:`field_name_problems` finds what would silently go wrong in a CRD: a field name starting
with ``_`` (pydantic makes it a private attribute: it is neither stored nor in the schema), a
name that shadows a pydantic ``BaseModel`` attribute (``schema``, ``copy`` ...), and a JSON name
that is not one (a space, a slash ...).
"""

from __future__ import annotations

import re
import typing
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic.alias_generators import to_camel

__all__ = ["apply_camel_case", "field_name_problems", "models_of"]

# A JSON field name kubectl, JSONPath and CEL can all address (letters, digits, '_', '-', '.',
# '$'; not starting with a digit or '-').
_JSON_NAME = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$.-]*$")
# The fields every object has; their names are Kubernetes' already.
_OBJECT_FIELDS = frozenset({"api_version", "kind", "metadata"})


def _nested_models(annotation: Any) -> Iterator[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    for argument in typing.get_args(annotation):
        yield from _nested_models(argument)


def models_of(resource: type[BaseModel]) -> list[type[BaseModel]]:
    """The models a resource's fields use, innermost first (each once), without the
    resource and its metadata."""
    ordered: list[type[BaseModel]] = []
    seen: set[type[BaseModel]] = set()

    def visit(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            if model is resource and name in _OBJECT_FIELDS:
                continue
            for nested in _nested_models(field.annotation):
                visit(nested)
        if model is not resource:
            ordered.append(model)

    visit(resource)
    return ordered


def _names_itself(model: type[BaseModel]) -> bool:
    """The model chose its JSON names (an alias generator, even None), or is setpoint's own."""
    if "alias_generator" in model.model_config:
        return True
    return model.__module__.startswith("setpoint.")


def _camel_case_fields(model: type[BaseModel], skip: frozenset[str]) -> bool:
    changed = False
    for name, field in model.model_fields.items():
        if name in skip or field.alias_priority is not None:
            continue
        camel = to_camel(name)
        if camel == name:
            continue
        field.alias = field.validation_alias = field.serialization_alias = camel
        field.alias_priority = 1
        changed = True
    if changed:
        # Both names on input: Python code builds models with the attribute names.
        model.model_config["populate_by_name"] = True
    return changed


def apply_camel_case(resource: type[BaseModel]) -> None:
    """Give the fields of ``resource`` and of the models it uses their camelCase JSON names
    (see the module's documentation), then rebuild the models innermost first."""
    rebuilt: set[type[BaseModel]] = set()
    for model in models_of(resource):
        if _names_itself(model):
            continue
        renamed = _camel_case_fields(model, frozenset())
        # A model embeds the schemas of the models it uses when it is built: one whose own
        # names are already right must still be rebuilt when a model it uses was.
        uses_rebuilt = any(
            nested in rebuilt
            for field in model.model_fields.values()
            for nested in _nested_models(field.annotation)
        )
        if renamed or uses_rebuilt:
            model.model_rebuild(force=True)
            rebuilt.add(model)
    _camel_case_fields(resource, _OBJECT_FIELDS)
    resource.model_rebuild(force=True)


def field_name_problems(resource: type[BaseModel]) -> list[str]:
    """One line per field of ``resource`` (or of the models it uses) that would silently be
    wrong in a CRD, naming the model and the field."""
    problems: list[str] = []
    for model in (*models_of(resource), resource):
        for name in getattr(model, "__private_attributes__", {}):
            if name.startswith("__"):
                continue
            problems.append(
                f"{model.__name__}.{name}: a name starting with '_' is a private attribute "
                f"in pydantic, never stored nor in the CRD; name it {name.lstrip('_')!r}"
            )
        for name, field in model.model_fields.items():
            if model is resource and name in _OBJECT_FIELDS:
                continue
            if hasattr(BaseModel, name):
                problems.append(
                    f"{model.__name__}.{name}: the name shadows pydantic's BaseModel.{name}; "
                    f"name the attribute otherwise and keep the JSON name with "
                    f"Field(alias={field.alias or name!r})"
                )
            json_name = field.serialization_alias or field.alias or name
            if not _JSON_NAME.match(json_name):
                problems.append(
                    f"{model.__name__}.{name}: JSON name {json_name!r} is not a valid field "
                    "name (letters, digits, '_', '-', '.', '$'; not starting with a digit)"
                )
    return problems
