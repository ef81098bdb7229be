"""The merge-relevant shape of an object type: structs, maps, lists and how lists merge.

Strategic merge patch reads ``x-kubernetes-patch-strategy`` (``merge``, ``replace``,
``retainKeys`` or a comma list) and ``x-kubernetes-patch-merge-key``; server-side apply reads
``x-kubernetes-list-type`` (``atomic``/``set``/``map``), ``x-kubernetes-list-map-keys`` and
``x-kubernetes-map-type`` (``atomic``/``granular``). A built-in list with a merge strategy but no
list type is a map list keyed by its merge key (a set without one), as kube-openapi's schema
conversion does. Lists of custom resources are atomic unless the CRD says otherwise.

Nodes are built lazily: only the paths a request touches are ever resolved, and recursive
definitions (JSONSchemaProps) cost nothing until used. A part of an object without a schema
(``x-kubernetes-preserve-unknown-fields``) gets the *deduced* node: maps merge per key, lists
are atomic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec

from setpoint.cluster.apiserver.upstream_schema_files import kubernetes_json_schema_root

KUBERNETES_SCHEMA_VERSION: Final = "v1.32.0"
_REF_PREFIXES: Final = ("/api/_definitions.json#/$defs/", "#/$defs/", "#/definitions/")

_NOT_BUILT: Final[Any] = object()


class MergeNode:
    """One node of a merge schema (lazily resolved children)."""

    __slots__ = (
        "_children",
        "_item",
        "_resolver",
        "_schema",
        "atomic",
        "deduced",
        "is_list",
        "is_map",
        "is_struct",
        "list_type",
        "map_keys",
        "merge_key",
        "patch_strategies",
        "required",
    )

    def __init__(
        self,
        schema: Mapping[str, Any] | None,
        resolver: _Resolver | None,
        extensions: Mapping[str, Any] | None = None,
        *,
        builtin: bool = False,
    ) -> None:
        self._schema = schema or {}
        self._resolver = resolver
        self._children: dict[str, MergeNode] = {}
        self._item: Any = _NOT_BUILT
        ext = extensions if extensions is not None else self._schema
        body = self._schema
        self.deduced = schema is None
        types = body.get("type")
        type_set = {types} if isinstance(types, str) else set(types or ())
        self.is_list = "array" in type_set or "items" in body
        has_properties = isinstance(body.get("properties"), Mapping)
        extra = body.get("additionalProperties")
        self.is_struct = has_properties
        required = body.get("required")
        self.required: frozenset[str] = (
            frozenset(str(r) for r in required) if isinstance(required, list) else frozenset()
        )
        self.is_map = not has_properties and isinstance(extra, Mapping)
        if (
            not self.is_list
            and not has_properties
            and not self.is_map
            and (
                "object" in type_set
                or body.get("x-kubernetes-preserve-unknown-fields") is True
                or body.get("x-kubernetes-embedded-resource") is True
            )
            and not body.get("x-kubernetes-int-or-string")
        ):
            self.deduced = True
        map_type = ext.get("x-kubernetes-map-type") or body.get("x-kubernetes-map-type")
        self.atomic = map_type == "atomic"
        strategy = ext.get("x-kubernetes-patch-strategy")
        self.patch_strategies: frozenset[str] = (
            frozenset(s.strip() for s in str(strategy).split(",") if s.strip())
            if strategy
            else frozenset()
        )
        merge_key = ext.get("x-kubernetes-patch-merge-key")
        self.merge_key = str(merge_key) if merge_key else ""
        list_type = ext.get("x-kubernetes-list-type")
        keys = ext.get("x-kubernetes-list-map-keys")
        self.map_keys: tuple[str, ...] = tuple(str(k) for k in keys) if keys else ()
        if isinstance(list_type, str):
            self.list_type = list_type
        elif builtin and "merge" in self.patch_strategies:
            self.list_type = "map" if self.merge_key else "set"
            if self.merge_key and not self.map_keys:
                self.map_keys = (self.merge_key,)
        else:
            self.list_type = "atomic"
        if self.list_type == "map" and not self.map_keys and self.merge_key:
            self.map_keys = (self.merge_key,)

    # -- children --------------------------------------------------------------------

    def child(self, key: str) -> MergeNode:
        """The node of field (or map key) ``key``; the deduced node when unknown."""
        node = self._children.get(key)
        if node is not None:
            return node
        node = self._build_child(key)
        self._children[key] = node
        return node

    def _build_child(self, key: str) -> MergeNode:
        if self.deduced or self._resolver is None:
            return DEDUCED
        properties = self._schema.get("properties")
        if isinstance(properties, Mapping) and key in properties:
            return self._resolver.node(properties[key])
        extra = self._schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return self._resolver.node(extra)
        if key in ("apiVersion", "kind"):
            return SCALAR
        return DEDUCED

    def has_field(self, key: str) -> bool:
        """Whether ``key`` is a declared struct field (not a map key)."""
        properties = self._schema.get("properties")
        return isinstance(properties, Mapping) and key in properties

    @property
    def item(self) -> MergeNode:
        """The node of list items."""
        if self._item is _NOT_BUILT:
            items = self._schema.get("items")
            if isinstance(items, Mapping) and self._resolver is not None:
                self._item = self._resolver.node(items)
            else:
                self._item = DEDUCED
        node: MergeNode = self._item
        return node

    @property
    def is_granular_map(self) -> bool:
        """Whether values merge per key (structs, maps, deduced objects) rather than whole."""
        return not self.atomic and (self.is_struct or self.is_map or self.deduced)


class _Resolver:
    """Turns schema dicts (with ``$ref`` to shared definitions) into nodes, once each."""

    def __init__(self, definitions: Mapping[str, Any], *, builtin: bool) -> None:
        self._definitions = definitions
        self._builtin = builtin
        # Keyed by identity; the schema is kept so that its id is never reused.
        self._by_id: dict[int, tuple[Any, MergeNode]] = {}

    def node(self, schema: Any) -> MergeNode:
        if not isinstance(schema, Mapping):
            return DEDUCED
        known = self._by_id.get(id(schema))
        if known is not None:
            return known[1]
        body: Mapping[str, Any] = schema
        ref = schema.get("$ref")
        if ref is None:
            all_of = schema.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], Mapping):
                ref = all_of[0].get("$ref")
        if isinstance(ref, str):
            name = ref
            for prefix in _REF_PREFIXES:
                if name.startswith(prefix):
                    name = name[len(prefix) :]
                    break
            target = self._definitions.get(name)
            body = target if isinstance(target, Mapping) else {}
        node = MergeNode(body, self, schema, builtin=self._builtin)
        self._by_id[id(schema)] = (schema, node)
        return node


DEDUCED: Final = MergeNode(None, None)
SCALAR: Final = MergeNode({"type": "string"}, None)


class BuiltinMergeSchemas:
    """Merge schemas of the built-in kinds, from the upstream definitions of one version."""

    def __init__(self, version: str = KUBERNETES_SCHEMA_VERSION) -> None:
        self.version = version
        self._resolver: _Resolver | None = None
        self._by_gvk: dict[tuple[str, str], str] = {}
        self._roots: dict[tuple[str, str], MergeNode] = {}
        self._definitions: Mapping[str, Any] = {}

    def _load(self) -> _Resolver:
        if self._resolver is None:
            path = kubernetes_json_schema_root() / f"{self.version}-local" / "_definitions.json"
            document = msgspec.json.decode(path.read_bytes())
            definitions = document.get("$defs") or document.get("definitions") or {}
            for name, schema in definitions.items():
                for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                    group, version = str(gvk.get("group", "")), str(gvk.get("version", ""))
                    api_version = f"{group}/{version}" if group else version
                    key = (api_version, str(gvk.get("kind")))
                    if key not in self._by_gvk or name.endswith("." + key[1]):
                        self._by_gvk[key] = name
            self._resolver = _Resolver(definitions, builtin=True)
            self._definitions = definitions
        return self._resolver

    def definitions(self) -> Mapping[str, Any]:
        """The raw upstream definitions (loaded on first use)."""
        self._load()
        return self._definitions

    def root(self, api_version: str, kind: str) -> MergeNode | None:
        """The node of a kind's objects, or None if there is no upstream definition."""
        key = (api_version, kind)
        node = self._roots.get(key)
        if node is not None:
            return node
        resolver = self._load()
        name = self._by_gvk.get(key)
        if name is None:
            return None
        node = resolver.node({"$ref": f"#/$defs/{name}"})
        self._roots[key] = node
        return node


_BUILTINS: BuiltinMergeSchemas | None = None


def builtin_root(api_version: str, kind: str) -> MergeNode | None:
    """The shared merge schema of a built-in kind (None when upstream has none)."""
    global _BUILTINS
    if _BUILTINS is None:
        _BUILTINS = BuiltinMergeSchemas()
    return _BUILTINS.root(api_version, kind)


_OBJECT_META_REF: Final = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}


def custom_root(openapi_schema: Mapping[str, Any] | None) -> MergeNode:
    """The merge schema of a custom resource from its CRD version's ``openAPIV3Schema``.

    ``metadata`` always has ObjectMeta's shape (labels are maps, finalizers a set, owner
    references keyed by uid), whatever the CRD declares for it.
    """
    schema = dict(openapi_schema or {"type": "object"})
    properties = dict(schema.get("properties") or {})
    properties["metadata"] = _OBJECT_META_REF
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    schema["properties"] = properties
    schema.setdefault("type", "object")
    global _BUILTINS
    if _BUILTINS is None:
        _BUILTINS = BuiltinMergeSchemas()
    return _CustomResolver(_BUILTINS.definitions()).node(schema)


class _CustomResolver(_Resolver):
    """CRD schemas: no ``$ref`` except the injected ObjectMeta, which is a built-in type."""

    def __init__(self, definitions: Mapping[str, Any]) -> None:
        super().__init__(definitions, builtin=False)
        self._meta = _Resolver(definitions, builtin=True)

    def node(self, schema: Any) -> MergeNode:
        if schema is _OBJECT_META_REF:
            return self._meta.node(schema)
        return super().node(schema)
