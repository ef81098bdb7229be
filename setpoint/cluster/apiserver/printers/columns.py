"""The building blocks of a printer: column definitions, ages, and the shared cell formats.

A :class:`Printer` is declarative: its columns (``metav1.TableColumnDefinition``) and a function
from an object to its cells. The cells are always the wide ones (the server generates wide
tables; kubectl hides ``priority > 0`` columns unless ``-o wide``). The formats are upstream's
(``pkg/printers/internalversion``, ``apimachinery/pkg/util/duration``, ``labels.FormatLabels``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, Final

from setpoint.api.selector_error import SelectorError
from setpoint.api.selectors import LabelSelector
from setpoint.api.times import parse_time
from setpoint.cluster.apiserver.validation.builtin_schemas import builtin_schemas

NONE: Final = "<none>"
UNKNOWN: Final = "<unknown>"
UNSET: Final = "<unset>"

#: ``ObjectMeta`` field descriptions (``metav1.ObjectMeta{}.SwaggerDoc()``), used by most tables.
NAME_DESCRIPTION: Final = (
    "Name must be unique within a namespace. Is required when creating resources, although some "
    "resources may allow a client to request the generation of an appropriate name "
    "automatically. Name is primarily intended for creation idempotence and configuration "
    "definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
CREATED_DESCRIPTION: Final = (
    "CreationTimestamp is a timestamp representing the server time when this object was "
    "created. It is not guaranteed to be set in happens-before order across separate "
    "operations. Clients may not set this value. It is represented in RFC3339 form and is in "
    "UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#metadata"
)
CONTAINERS_DESCRIPTION: Final = "Names of each container in the template."
IMAGES_DESCRIPTION: Final = "Images referenced by each container in the template."


@lru_cache(maxsize=512)
def api_doc(reference: str) -> str:
    """The API documentation of ``group.version.Type/field`` (``core.v1.PodStatus/podIP``,
    ``meta.v1.ObjectMeta/name``): upstream's ``SwaggerDoc()`` text, from the 1.32 schemas."""
    definition, _, name = reference.partition("/")
    prefix = "io.k8s.apimachinery.pkg.apis." if definition.startswith("meta.") else "io.k8s.api."
    return builtin_schemas().field_description(prefix + definition, name)


@dataclass(frozen=True, slots=True)
class Column:
    """One ``TableColumnDefinition``; ``doc`` names the API field whose documentation is the
    description (``core.v1.PodStatus/podIP``), as upstream takes it from ``SwaggerDoc()``."""

    name: str
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0
    doc: str = ""

    def definition(self) -> dict[str, Any]:
        """The column as sent on the wire (every field present, as upstream encodes it)."""
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description or (api_doc(self.doc) if self.doc else ""),
            "priority": self.priority,
        }


#: The cells of one object, given it and the time "now" (for ages).
CellsFunction = Callable[[dict[str, Any], datetime], list[Any]]
#: The ``conditions`` of a row (pods only upstream), or an empty list.
ConditionsFunction = Callable[[dict[str, Any]], list[dict[str, Any]]]


def _no_conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return []


@dataclass(frozen=True, slots=True)
class Printer:
    """How one kind becomes table rows: its columns and its cells."""

    columns: tuple[Column, ...]
    cells: CellsFunction
    conditions: ConditionsFunction = _no_conditions


NAME_COLUMN: Final = Column("Name", format="name", description=NAME_DESCRIPTION)
AGE_COLUMN: Final = Column("Age", description=CREATED_DESCRIPTION)


def human_duration(seconds: float) -> str:
    """A duration as kubectl shows ages (``duration.HumanDuration``): 45s, 5m3s, 3h20m, 12d."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def since(timestamp: object, now: datetime) -> str:
    """``translateTimestampSince``: the age of an RFC 3339 timestamp, ``<unknown>`` if unset."""
    if not isinstance(timestamp, str) or not timestamp:
        return UNKNOWN
    try:
        moment = parse_time(timestamp)
    except ValueError:
        return UNKNOWN
    return human_duration((now - moment).total_seconds())


def between(start: str, end: str) -> str:
    """The human duration from ``start`` to ``end`` (both RFC 3339)."""
    try:
        return human_duration((parse_time(end) - parse_time(start)).total_seconds())
    except ValueError:
        return ""


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``obj.metadata`` (an empty dict when missing)."""
    value = obj.get("metadata")
    return value if isinstance(value, dict) else {}


def field(obj: Mapping[str, Any], *path: str) -> Any:
    """``obj[path[0]][path[1]]...``, None where a step is missing or not an object."""
    value: Any = obj
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def items(obj: Mapping[str, Any], *path: str) -> list[Any]:
    """The list at ``path`` (empty when missing)."""
    value = field(obj, *path)
    return value if isinstance(value, list) else []


def mapping(obj: Mapping[str, Any], *path: str) -> dict[str, Any]:
    """The object at ``path`` (empty when missing)."""
    value = field(obj, *path)
    return value if isinstance(value, dict) else {}


def integer(value: object) -> int:
    """An int32/int64 field, 0 when unset (Go's zero value)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def text(value: object) -> str:
    """A string field, "" when unset."""
    return value if isinstance(value, str) else ""


def name_and_age(obj: Mapping[str, Any], now: datetime) -> tuple[str, str]:
    """The name and the age of ``obj``."""
    metadata = meta(obj)
    return text(metadata.get("name")), since(metadata.get("creationTimestamp"), now)


def format_labels(labels: object) -> str:
    """``labels.FormatLabels``: ``a=b,c=d`` sorted by key, ``<none>`` when empty."""
    if not isinstance(labels, Mapping) or not labels:
        return NONE
    return ",".join(f"{key}={labels[key]}" for key in sorted(labels))


def selector_string(selector: object) -> str | None:
    """The string form of a structured label selector (None if it is invalid)."""
    try:
        return str(LabelSelector.from_dict(selector if isinstance(selector, Mapping) else None))
    except (SelectorError, ValueError, TypeError):
        return None


def format_label_selector(selector: object) -> str:
    """``metav1.FormatLabelSelector``: the selector string, ``<none>`` if empty."""
    found = selector_string(selector)
    if found is None:
        return "<error>"
    return found or NONE


def container_cells(containers: Sequence[Any]) -> tuple[str, str]:
    """``layoutContainerCells``: the names and the images, comma-separated."""
    entries = [c for c in containers if isinstance(c, Mapping)]
    names = ",".join(text(c.get("name")) for c in entries)
    images = ",".join(text(c.get("image")) for c in entries)
    return names, images


def template_containers(obj: Mapping[str, Any], *path: str) -> tuple[str, str]:
    """The container cells of the pod template at ``path`` (``spec.template``...)."""
    return container_cells(items(obj, *path, "spec", "containers"))


def bool_pointer(value: object) -> str:
    """``printBoolPtr``: True/False, ``<unset>`` when nil."""
    if isinstance(value, bool):
        return "True" if value else "False"
    return UNSET
