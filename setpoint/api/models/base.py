"""The base classes of the built-in kinds' models, and the small types many kinds share."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)
from pydantic.alias_generators import to_camel

from setpoint.api.resources.custom_resource import ObjectMeta as _ObjectMeta
from setpoint.api.resources.custom_resource import fill_type_fields

__all__ = [
    "Condition",
    "KubeModel",
    "KubeObject",
    "LabelSelector",
    "LabelSelectorRequirement",
    "LocalObjectReference",
    "Metadata",
    "ObjectMeta",
    "ObjectReference",
    "Quantity",
]

#: A resource quantity ("100m", "1Gi", 2): the server answers with strings.
Quantity = int | float | str

_ABSENT: Any = object()
# The (attribute, JSON) names of each model's fields, read on every serialization.
_FIELD_NAMES: dict[type[BaseModel], tuple[tuple[str, str], ...]] = {}


def _field_names(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    names = _FIELD_NAMES.get(model)
    if names is None:
        names = tuple((name, field.alias or name) for name, field in model.model_fields.items())
        _FIELD_NAMES[model] = names
    return names


class KubeModel(BaseModel):
    """Base of every part of a built-in object.

    Python names in snake_case, JSON names in camelCase (``pod_ip`` is ``podIP``); every field
    the model does not declare is kept (``extra="allow"``), so a read-modify-write sends back
    what a newer server added. Lists, maps and nested parts default to empty values so that
    ``deployment.spec.template.spec.containers`` needs no ``None`` checks; a field that was
    neither read nor set is left out of the serialized form, so nothing the caller did not
    choose is sent.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")

    @model_serializer(mode="wrap")
    def _omit_unset_empty(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> Any:
        data = handler(self)
        if not isinstance(data, dict):
            return data
        fields_set = self.model_fields_set
        by_alias = bool(info.by_alias)
        for name, alias in _field_names(type(self)):
            if name in fields_set:
                continue
            key = alias if by_alias else name
            value = data.get(key, _ABSENT)
            # An empty default edited in place (``containers.append``) is no longer empty.
            if value is None or (isinstance(value, list | dict) and not value):
                del data[key]
        return data


class ObjectMeta(_ObjectMeta, KubeModel):
    """The ``metadata`` of an object (``setpoint.api.resources.ObjectMeta``, the same fields
    as custom resources have), serialized without the fields that were neither read nor set."""


def _metadata_from_any_model(value: Any) -> Any:
    # The ObjectMeta of custom resources (the parent class) is accepted as its fields.
    if isinstance(value, _ObjectMeta) and not isinstance(value, ObjectMeta):
        return value.model_dump(by_alias=True, exclude_unset=True)
    return value


#: ``metadata``: an :class:`ObjectMeta`, a dict, or the ``ObjectMeta`` of custom resources.
Metadata = Annotated[ObjectMeta, BeforeValidator(_metadata_from_any_model)]


class KubeObject(KubeModel):
    """Base of the built-in kinds: ``apiVersion``, ``kind`` and ``metadata``.

    A subclass names its type in the class statement (``class Pod(KubeObject,
    api_version="v1", kind="Pod")``); ``apiVersion`` and ``kind`` are filled in on
    construction and checked on decoding.
    """

    __api_version__: ClassVar[str] = ""
    __kind__: ClassVar[str] = ""

    api_version: str = ""
    kind: str = ""
    metadata: Metadata = Field(default_factory=ObjectMeta)

    def __init_subclass__(cls, api_version: str = "", kind: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if api_version and kind:
            cls.__api_version__ = api_version
            cls.__kind__ = kind

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        # The type keywords were consumed by __init_subclass__.
        super().__pydantic_init_subclass__()

    @model_validator(mode="before")
    @classmethod
    def _fill_type_fields(cls, data: Any) -> Any:
        if not cls.__kind__ or not isinstance(data, dict):
            return data
        return fill_type_fields(data, cls.__api_version__, cls.__kind__)


class ObjectReference(KubeModel):
    """A reference to an object (``involvedObject``, ``regarding``, a ServiceAccount's
    secrets)."""

    api_version: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class LocalObjectReference(KubeModel):
    """The name of an object in the same namespace (``imagePullSecrets``)."""

    name: str | None = None


class LabelSelectorRequirement(KubeModel):
    """One ``matchExpressions`` term: ``key`` ``operator`` (In, NotIn, Exists, DoesNotExist)
    ``values``."""

    key: str
    operator: str
    values: list[str] = Field(default_factory=list)


class LabelSelector(KubeModel):
    """A label selector: every ``matchLabels`` pair and every expression must hold."""

    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = Field(default_factory=list)


class Condition(KubeModel):
    """A status condition, with the fields of every built-in kind's condition type
    (``metav1.Condition``, ``PodCondition``, ``DeploymentCondition`` ...)."""

    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    last_update_time: str | None = None
    last_probe_time: str | None = None
    observed_generation: int | None = None
