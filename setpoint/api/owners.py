"""Owner references: who owns an object, and which owner is its controller.

An object's ``metadata.ownerReferences`` lists the objects it belongs to; the garbage collector
deletes it when they are all gone. At most one reference has ``controller: true``: the object
that manages it, whose controller reconciles it. These helpers follow controller-runtime's
``controllerutil``: a controller reference is refused when another controller already owns the
object, and owners must live in the object's namespace (or be cluster-scoped), since the API
resolves owner references only within the object's own namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

from setpoint.api import meta
from setpoint.api.gvk import parse_api_version

if TYPE_CHECKING:
    from pydantic import BaseModel

    from setpoint.api.field_errors import FieldError

__all__ = [
    "AlreadyOwnedError",
    "CrossNamespaceOwnerError",
    "controller_of",
    "controller_reference",
    "is_controlled_by",
    "owner_reference",
    "owner_reference_errors",
    "reference_from",
    "set_controller_reference",
    "set_owner_reference",
    "validate_owner_references",
]

OWNER_REFERENCES_PATH = "metadata.ownerReferences"


class AlreadyOwnedError(ValueError):
    """The object already has a different controller; ``existing`` is its reference."""

    def __init__(self, obj: Mapping[str, Any], existing: Mapping[str, Any]) -> None:
        self.existing = dict(existing)
        super().__init__(
            f"Object {meta.namespace(obj) or ''}/{meta.name(obj) or ''} is already owned by "
            f"another {existing.get('kind', '')} controller {existing.get('name', '')}"
        )


class CrossNamespaceOwnerError(ValueError):
    """The owner is namespaced and the object is in another namespace or cluster-scoped."""


def _required(owner: Mapping[str, Any], field: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"owner has no {field}: it must be set to build an owner reference")
    return value


ObjectOrModel: TypeAlias = "Mapping[str, Any] | BaseModel"


def owner_reference(
    owner: ObjectOrModel, *, controller: bool = False, block_owner_deletion: bool = False
) -> dict[str, Any]:
    """A reference to ``owner``: ``{apiVersion, kind, name, uid}`` plus the optional flags.

    ``controller`` and ``blockOwnerDeletion`` are included only when True, as clients send them.
    Raises ``ValueError`` naming the missing field when ``owner`` lacks one (e.g. an owner that
    was never created has no ``uid``).
    """
    owner = meta.as_mapping(owner)
    return reference_from(
        _required(owner, "apiVersion", owner.get("apiVersion")),
        _required(owner, "kind", owner.get("kind")),
        _required(owner, "metadata.name", meta.name(owner)),
        _required(owner, "metadata.uid", meta.uid(owner)),
        controller=controller,
        block_owner_deletion=block_owner_deletion,
    )


def reference_from(
    api_version: str,
    kind: str,
    name: str,
    uid: str,
    *,
    controller: bool = False,
    block_owner_deletion: bool = False,
) -> dict[str, Any]:
    """The owner reference :func:`owner_reference` gives, from the owner's four fields (which
    the caller has checked are non-empty)."""
    reference: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid}
    if controller:
        reference["controller"] = True
    if block_owner_deletion:
        reference["blockOwnerDeletion"] = True
    return reference


def controller_reference(owner: ObjectOrModel) -> dict[str, Any]:
    """A controller reference to ``owner`` (``controller`` and ``blockOwnerDeletion`` True)."""
    return owner_reference(owner, controller=True, block_owner_deletion=True)


def controller_of(obj: ObjectOrModel) -> dict[str, Any] | None:
    """The owner reference with ``controller: true``, or None."""
    for reference in meta.owner_references(meta.as_mapping(obj)):
        if reference.get("controller") is True:
            return reference
    return None


def is_controlled_by(obj: ObjectOrModel, owner: ObjectOrModel) -> bool:
    """Whether ``owner`` (matched by uid) is the controller of ``obj``."""
    reference = controller_of(obj)
    owner_uid = meta.uid(meta.as_mapping(owner))
    return reference is not None and owner_uid is not None and reference.get("uid") == owner_uid


def _group(api_version: Any) -> str | None:
    try:
        return parse_api_version(api_version).group if isinstance(api_version, str) else None
    except ValueError:
        return None


def _same_owner(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same uid, or same group, kind and name (a re-created owner replaces its stale reference)."""
    if a.get("uid") and a.get("uid") == b.get("uid"):
        return True
    return (
        _group(a.get("apiVersion")) == _group(b.get("apiVersion"))
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def _check_namespaces(owner: Mapping[str, Any], obj: Mapping[str, Any]) -> None:
    owner_namespace = meta.namespace(owner)
    if owner_namespace is None:
        return
    obj_namespace = meta.namespace(obj)
    if obj_namespace is None:
        raise CrossNamespaceOwnerError(
            "cluster-scoped resource must not have a namespace-scoped owner, "
            f"owner's namespace {owner_namespace}"
        )
    if obj_namespace != owner_namespace:
        raise CrossNamespaceOwnerError(
            "cross-namespace owner references are disallowed, "
            f"owner's namespace {owner_namespace}, obj's namespace {obj_namespace}"
        )


def _upsert(obj: MutableMapping[str, Any], reference: dict[str, Any]) -> bool:
    meta_dict = obj.setdefault("metadata", {})
    references = meta_dict.get("ownerReferences")
    if references is None:
        references = meta_dict["ownerReferences"] = []
    if not isinstance(references, list):
        raise ValueError(f"{OWNER_REFERENCES_PATH} must be a list")
    for index, existing in enumerate(references):
        if isinstance(existing, Mapping) and _same_owner(existing, reference):
            if existing == reference:
                return False
            references[index] = reference
            return True
    references.append(reference)
    return True


def _on_model(
    owner: ObjectOrModel,
    obj: BaseModel,
    setter: Callable[[Mapping[str, Any], MutableMapping[str, Any]], bool],
) -> bool:
    view: dict[str, Any] = {"metadata": dict(meta.metadata(obj))}
    changed = setter(meta.as_mapping(owner), view)
    if changed:
        meta.write_back_metadata(obj, view["metadata"])
    return changed


def set_controller_reference(
    owner: ObjectOrModel, obj: MutableMapping[str, Any] | BaseModel
) -> bool:
    """Make ``owner`` the controller of ``obj``; returns True when ``obj`` changed.

    Either may be a dict or a pydantic model. Raises :class:`AlreadyOwnedError` when another
    controller is set, and :class:`CrossNamespaceOwnerError` when a namespaced owner is not in
    ``obj``'s namespace.
    """
    if meta.is_model(obj):
        return _on_model(owner, obj, set_controller_reference)
    owner = meta.as_mapping(owner)
    _check_namespaces(owner, obj)
    reference = controller_reference(owner)
    existing = controller_of(obj)
    if existing is not None and not _same_owner(existing, reference):
        raise AlreadyOwnedError(obj, existing)
    return _upsert(obj, reference)


def set_owner_reference(owner: ObjectOrModel, obj: MutableMapping[str, Any] | BaseModel) -> bool:
    """Add ``owner`` as a (non-controller) owner of ``obj``, or refresh its reference.

    A reference to the same owner (same uid, or same group, kind and name) is replaced, keeping
    its ``controller`` and ``blockOwnerDeletion`` flags. Returns True when ``obj`` changed.
    """
    if meta.is_model(obj):
        return _on_model(owner, obj, set_owner_reference)
    owner = meta.as_mapping(owner)
    _check_namespaces(owner, obj)
    reference = owner_reference(owner)
    for existing in meta.owner_references(obj):
        if _same_owner(existing, reference):
            for flag in ("controller", "blockOwnerDeletion"):
                if flag in existing:
                    reference[flag] = existing[flag]
    return _upsert(obj, reference)


def owner_reference_errors(
    references: Iterable[Mapping[str, Any]], path: str = OWNER_REFERENCES_PATH
) -> list[FieldError]:
    """The API server's checks of ``metadata.ownerReferences``, as field errors."""
    # The API server's side: an operator setting owner references never loads field errors.
    from setpoint.api import field_errors as fe

    errors: list[FieldError] = []
    first_controller = ""
    refs: Sequence[Mapping[str, Any]] = list(references)
    for reference in refs:
        api_version = reference.get("apiVersion") or ""
        version = ""
        if isinstance(api_version, str) and api_version:
            version = api_version.rsplit("/", 1)[-1]
        if not version:
            errors.append(
                fe.invalid(f"{path}.apiVersion", api_version, "version must not be empty")
            )
        for field in ("kind", "name", "uid"):
            value = reference.get(field) or ""
            if not value:
                errors.append(fe.invalid(f"{path}.{field}", value, f"{field} must not be empty"))
        if reference.get("controller") is True:
            current = f"{reference.get('kind', '')}/{reference.get('name', '')}"
            if first_controller:
                errors.append(
                    fe.invalid(
                        path,
                        [dict(r) for r in refs],
                        'Only one reference can have Controller set to true. Found "true" in '
                        f"references for {first_controller} and {current}",
                    )
                )
            else:
                first_controller = current
    return errors


def validate_owner_references(references: Iterable[Mapping[str, Any]]) -> list[str]:
    """Problems with ``references`` as upstream words them; an empty list when valid."""
    return [str(error) for error in owner_reference_errors(references)]
