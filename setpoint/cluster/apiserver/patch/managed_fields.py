"""``metadata.managedFields``: which manager owns which fields, kept on every write.

Each entry is ``{manager, operation, apiVersion, time, fieldsType: FieldsV1, fieldsV1,
subresource?}``. Update entries are identified by (manager, operation, apiVersion,
subresource), Apply entries by (manager, operation, subresource) — an applier keeps one entry
whatever version it applies through (``BuildManagerIdentifier``).

On an Update (create, PUT, non-apply PATCH) the manager takes every field it added or changed,
those fields leave every other manager, removed fields leave everyone, and the entry's time is
set only when the write took some field (``managedfieldsupdater.go``). At most ten Update
entries are kept; older ones merge into ``ancient-changes`` (``capmanagers.go``). A request whose
``managedFields`` is ``[]`` clears tracking; one that sends other valid entries replaces them
(kubectl's client-side-apply → server-side-apply upgrade relies on that).

The manager of a non-apply request is its ``fieldManager`` parameter, else the User-Agent up to
the first ``/`` (``kubectl``, ``OpenAPI-Generator``), else ``unknown``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Final, cast

from setpoint.api.times import normalize_time
from setpoint.cluster.apiserver.patch.created_fields_memo import remembered_created_fields
from setpoint.cluster.apiserver.patch.field_paths import (
    FieldSet,
    RepeatedElementError,
    compare,
    decode_fields,
    encode_fields,
    strip_untracked,
    trie_holds,
)
from setpoint.cluster.apiserver.patch.merge_schema import MergeNode, builtin_root, custom_root

APPLY: Final = "Apply"
UPDATE: Final = "Update"
MAX_UPDATE_MANAGERS: Final = 10
ANCIENT_CHANGES: Final = "ancient-changes"
BEFORE_FIRST_APPLY: Final = "before-first-apply"
UNKNOWN_MANAGER: Final = "unknown"
FIELDS_V1: Final = "FieldsV1"


def manager_from_user_agent(user_agent: str) -> str:
    """The default manager of a request: the User-Agent up to its first ``/``."""
    name = user_agent.split("/", 1)[0].strip()
    return name or UNKNOWN_MANAGER


class ManagerEntry:
    """One managedFields entry and its field set.

    An entry read from a stored object keeps its FieldsV1 trie (``encoded``): its field set is
    decoded only when needed, and an entry a write leaves alone is written back as it was
    instead of re-encoded. Change ``fields`` only through :meth:`discard`, :meth:`take` and
    :meth:`replace_fields`, which forget the trie once it no longer matches.
    """

    __slots__ = ("_fields", "api_version", "encoded", "manager", "operation", "subresource", "time")

    def __init__(
        self,
        manager: str,
        operation: str,
        api_version: str,
        time: str,
        fields: FieldSet | None,
        subresource: str = "",
        encoded: dict[str, Any] | None = None,
    ) -> None:
        """``fields`` None: decoded from ``encoded`` when first needed."""
        self.manager = manager
        self.operation = operation
        self.api_version = api_version
        self.time = time
        self._fields = fields
        self.subresource = subresource
        self.encoded = encoded

    def __repr__(self) -> str:
        return (
            f"ManagerEntry({self.manager!r}, {self.operation!r}, {self.api_version!r}, "
            f"{self.time!r}, {self.fields!r}, {self.subresource!r})"
        )

    @property
    def fields(self) -> FieldSet:
        """The paths this manager owns."""
        fields = self._fields
        if fields is None:
            fields = self._fields = decode_fields(self.encoded or {})
        return fields

    def has_fields(self) -> bool:
        """Whether it owns anything (a stored trie is empty exactly when its set is)."""
        if self._fields is None:
            return bool(self.encoded)
        return bool(self._fields)

    def owned(self, paths: FieldSet) -> FieldSet:
        """Which of ``paths`` it owns (looked up in the trie while it is not decoded)."""
        if self._fields is None and self.encoded is not None:
            trie = self.encoded
            return {path for path in paths if trie_holds(trie, path)}
        return self.fields & paths

    def discard(self, paths: FieldSet) -> None:
        """Give up ``paths``."""
        if not paths:
            return
        if self._fields is None and self.encoded is not None:
            trie = self.encoded
            if not any(trie_holds(trie, path) for path in paths):
                return  # none of them is ours: nothing to decode, nothing changes
        fields = self.fields
        size = len(fields)
        fields -= paths
        if len(fields) != size:
            self.encoded = None

    def take(self, paths: FieldSet) -> None:
        """Own ``paths`` as well."""
        fields = self.fields
        size = len(fields)
        fields |= paths
        if len(fields) != size:
            self.encoded = None

    def replace_fields(self, paths: FieldSet) -> None:
        """Own exactly ``paths``."""
        if paths != self.fields:
            self.encoded = None
        self._fields = paths

    @property
    def identifier(self) -> str:
        """Upstream's manager identifier (JSON; the apiVersion only for Update entries)."""
        encoded: dict[str, Any] = {"manager": self.manager, "operation": self.operation}
        if self.operation == UPDATE:
            encoded["apiVersion"] = self.api_version
        if self.subresource:
            encoded["subresource"] = self.subresource
        return json.dumps(encoded, separators=(",", ":"))

    def describe(self) -> str:
        """The manager as conflict messages print it."""
        text = json.dumps(self.manager)
        if self.subresource:
            text += f" with subresource {json.dumps(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text

    def to_json(self) -> dict[str, Any]:
        """The entry as stored in ``metadata.managedFields``."""
        entry: dict[str, Any] = {
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "time": self.time,
            "fieldsType": FIELDS_V1,
            "fieldsV1": self.encoded if self.encoded is not None else encode_fields(self.fields),
        }
        if self.subresource:
            entry["subresource"] = self.subresource
        return entry


def decode_entries(value: Any, *, stored: bool = False) -> list[ManagerEntry] | None:
    """Entries from a ``managedFields`` value; None if it is not a valid list of entries.

    ``stored``: the value is the server's own encoding (read from a stored object), so an entry
    whose fields stay unchanged may be written back as it is.
    """
    if not isinstance(value, list):
        return None
    entries: list[ManagerEntry] = []
    for raw in value:
        if not isinstance(raw, dict):
            return None
        operation = raw.get("operation")
        if operation not in (APPLY, UPDATE) or raw.get("fieldsType", FIELDS_V1) != FIELDS_V1:
            return None
        trie = raw.get("fieldsV1") or {}
        entries.append(
            ManagerEntry(
                manager=str(raw.get("manager") or ""),
                operation=str(operation),
                api_version=str(raw.get("apiVersion") or ""),
                time=str(raw.get("time") or ""),
                fields=None if stored and isinstance(trie, dict) else decode_fields(trie),
                subresource=str(raw.get("subresource") or ""),
                encoded=trie if stored and isinstance(trie, dict) else None,
            )
        )
    return entries


def canonical_times(value: Any) -> Any:
    """``managedFields`` sent by a client with each entry's ``time`` as the server writes it.

    Upstream decodes the entries (``metav1.Time``) before comparing them with the live ones, so
    ``2026-11-27T13:06:57+00:00`` (what the official Python client re-serializes) is the same
    time as ``2026-11-27T13:06:57Z``; a time that does not parse is left for validation.
    """
    if not isinstance(value, list):
        return value
    for entry in value:
        stamp = entry.get("time") if isinstance(entry, dict) else None
        if isinstance(stamp, str) and not (
            len(stamp) == len("2006-01-02T15:04:05Z") and stamp[-1] == "Z"
        ):
            try:
                entry["time"] = normalize_time(stamp)
            except ValueError:
                continue
    return value


def is_reset(value: Any) -> bool:
    """``[]`` or ``[{}]``: the request clears all tracking (``isResetManagedFields``)."""
    return isinstance(value, list) and (value == [] or value == [{}])


def encode_entries(entries: Iterable[ManagerEntry]) -> list[dict[str, Any]]:
    """Entries in upstream's order (operation, time, manager, apiVersion, subresource)."""
    kept = [entry for entry in entries if entry.has_fields()]
    kept.sort(key=lambda e: (e.operation, e.time, e.manager, e.api_version, e.subresource))
    return [entry.to_json() for entry in kept]


def cap_update_managers(entries: list[ManagerEntry]) -> list[ManagerEntry]:
    """At most :data:`MAX_UPDATE_MANAGERS` Update entries (``capmanagers.go``): the oldest are
    merged, per apiVersion, into an ``ancient-changes`` entry (the first of a version becomes
    the bucket when a second one joins it), which takes the time of the last one merged."""
    updates = [e for e in entries if e.operation == UPDATE]
    count = len(updates)
    if count <= MAX_UPDATE_MANAGERS:
        return entries
    updates.sort(key=lambda e: e.time)
    buckets = {e.api_version: e for e in updates if e.manager == ANCIENT_CHANGES}
    first_of_version: dict[str, ManagerEntry] = {}
    for entry in updates:
        if count <= MAX_UPDATE_MANAGERS:
            break
        if entry.manager == ANCIENT_CHANGES:
            continue
        bucket = buckets.get(entry.api_version)
        if bucket is None:
            first = first_of_version.get(entry.api_version)
            if first is None:
                first_of_version[entry.api_version] = entry
                continue
            first.manager, first.subresource = ANCIENT_CHANGES, ""
            bucket = buckets[entry.api_version] = first
        bucket.take(entry.fields)
        bucket.time = entry.time
        entries.remove(entry)
        count -= 1
    return entries


def tracked(paths: FieldSet, subresource: str, has_status: bool) -> FieldSet:
    """The paths a write through ``subresource`` may own."""
    return strip_untracked(
        paths,
        keep_only_status=subresource == "status",
        drop_status=subresource == "" and has_status,
    )


def _trackable(obj: dict[str, Any], subresource: str, has_status: bool) -> dict[str, Any]:
    """The top-level fields of ``obj`` whose changes :func:`tracked` may keep (comparing
    the rest is wasted work: a status write leaves the spec alone, and the other way round)."""
    if subresource == "status":
        return {"status": obj["status"]} if "status" in obj else {}
    if subresource == "" and has_status and "status" in obj:
        return {key: value for key, value in obj.items() if key != "status"}
    return obj


def track_update(
    root: MergeNode,
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    api_version: str,
    subresource: str,
    now: str,
    builtin: bool,
    has_status: bool,
    requested: Any,
) -> list[dict[str, Any]] | None:
    """The ``managedFields`` after an Update writes ``new`` over ``old`` (None: no tracking).

    ``requested`` is the request's own ``managedFields`` (``_ABSENT`` when it sent none).
    """
    if is_reset(requested):
        return None
    if old is None and requested is None:
        created = _created_entry(
            root, new, manager, api_version, subresource, now, builtin, has_status
        )
        if created is not _GENERAL:
            return cast("list[dict[str, Any]] | None", created)
    requested = canonical_times(requested)
    live_value = (old or {}).get("metadata", {}).get("managedFields")
    comparison = compare(
        root,
        _trackable(old or {}, subresource, has_status),
        _trackable(new, subresource, has_status),
        value_structs=builtin,
    )
    changed = tracked(comparison.changed, subresource, has_status)
    removed = tracked(comparison.removed, subresource, has_status)
    replaced = subresource == "" and requested is not None and requested != live_value
    if not changed and not removed and not replaced:
        # Nothing to take or give back: the entries stay as they are (no decoding needed).
        return live_value if isinstance(live_value, list) else None
    entries: list[ManagerEntry] | None = decode_entries(requested) if replaced else None
    if entries is None:
        entries = decode_entries(live_value, stored=True) or []
    if changed or removed:
        for entry in entries:
            entry.discard(changed)
            entry.discard(removed)
    if changed:
        mine = next(
            (
                e
                for e in entries
                if e.manager == manager
                and e.operation == UPDATE
                and e.api_version == api_version
                and e.subresource == subresource
            ),
            None,
        )
        if mine is None:
            entries.append(
                ManagerEntry(manager, UPDATE, api_version, now, set(changed), subresource)
            )
        else:
            mine.take(changed)
            mine.time = now
        entries = cap_update_managers(entries)
    return encode_entries(entries)


#: :func:`_created_entry` could not answer: take the general path.
_GENERAL: Final[Any] = object()


def _created_entry(
    root: MergeNode,
    new: dict[str, Any],
    manager: str,
    api_version: str,
    subresource: str,
    now: str,
    builtin: bool,
    has_status: bool,
) -> Any:
    """The managedFields of a create (one Update entry owning every tracked field), built
    straight from the object: what :func:`track_update` computes for ``old=None``."""
    if subresource:
        return _GENERAL
    try:
        trie = remembered_created_fields(root, new, value_structs=builtin, drop_status=has_status)
    except RepeatedElementError:
        return _GENERAL
    if not trie:
        return None
    return [
        {
            "manager": manager,
            "operation": UPDATE,
            "apiVersion": api_version,
            "time": now,
            "fieldsType": FIELDS_V1,
            "fieldsV1": trie,
        }
    ]


#: Reads a CRD by name: its revision and a function decoding it (None when it is gone).
CRDLookup = Callable[[str], tuple[int, Callable[[], dict[str, Any]]] | None]


class MergeSchemaSource:
    """The merge schema of each served resource (CRD schemas cached per CRD revision, so a
    custom resource write decodes its CRD only after the CRD changed)."""

    def __init__(self, lookup_crd: CRDLookup) -> None:
        self._lookup_crd = lookup_crd
        self._custom: dict[tuple[str, str], tuple[int, MergeNode]] = {}

    def root(self, group: str, version: str, kind: str, crd_name: str = "") -> MergeNode:
        """The schema of one resource's objects (a deduced one when nothing better is known)."""
        api_version = f"{group}/{version}" if group else version
        if not crd_name:
            return builtin_root(api_version, kind) or custom_root(None)
        found = self._lookup_crd(crd_name)
        if found is None:
            return custom_root(None)
        revision, load = found
        cached = self._custom.get((crd_name, version))
        if cached is not None and cached[0] == revision:
            return cached[1]
        crd = load()
        schema = None
        for served in (crd.get("spec") or {}).get("versions") or []:
            if isinstance(served, dict) and served.get("name") == version:
                schema = (served.get("schema") or {}).get("openAPIV3Schema")
        node = custom_root(schema if isinstance(schema, dict) else None)
        self._custom[(crd_name, version)] = (revision, node)
        return node
