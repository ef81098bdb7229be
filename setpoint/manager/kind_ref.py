"""`KindRef`: how the runtime's user-facing API names a kind.

Any of: an ``(api_version, kind)`` pair such as ``("apps/v1", "Deployment")``, a constant of
``setpoint.kinds`` (a named pair: ``kinds.Deployment``), or a pydantic model class recognised by
``setpoint.client.typed_objects.static_type_fields`` (the user's CRD models). When a model
class names the kind, reads of that kind through a reconcile's context return instances of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

from setpoint.api.meta import is_model_class
from setpoint.client.typed_objects import static_type_fields

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["KindRef", "kind_of", "model_of"]

#: A kind as `(api_version, kind)` (or a `setpoint.kinds` constant), or a model class.
KindRef: TypeAlias = "tuple[str, str] | type[BaseModel]"


def kind_of(ref: KindRef | Any, option: str) -> tuple[str, str]:
    """`(api_version, kind)` of a `KindRef`; raises TypeError naming `option`."""
    if is_model_class(ref):
        try:
            return static_type_fields(ref)
        except ValueError as error:
            raise TypeError(f"{option}: {error}") from None
    if (
        isinstance(ref, tuple)
        and len(ref) == 2
        and all(isinstance(part, str) and part for part in ref)
    ):
        return str(ref[0]), str(ref[1])
    raise TypeError(
        f"{option}: expected (api_version, kind) such as ('apps/v1', 'Deployment'), a "
        f"setpoint.kinds constant or a model class, got {ref!r}"
    )


def model_of(ref: KindRef | Any) -> type[BaseModel] | None:
    """The model class when `ref` is one, else None."""
    if is_model_class(ref):
        return ref
    return None
