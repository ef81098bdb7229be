"""Create, get, list, update, patch and delete with kube-apiserver's semantics.

This is the generic registry store of upstream (``registry/generic/registry/store.go`` with
``rest/create.go``, ``rest/update.go`` and ``rest/delete.go``), over the revisioned storage:
metadata the server owns (uid, timestamps, generation, resourceVersion), optimistic
concurrency, no-op writes that change nothing, finalizers and deletion, the ``status`` and
``scale`` subresources. Per-kind rules come from a :class:`KindBehaviour`.

Every write is synchronous against the storage (no ``await`` between the read that checks and
the write), then awaits durability before it is acknowledged.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import msgspec

from setpoint.api import field_errors as fe
from setpoint.api.field_errors import FieldError
from setpoint.api.patch import json_equal
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.http.fresh_revision import wait_for_revision
from setpoint.cluster.apiserver.http.list_options import (
    MATCH_EXACT,
    ListOptions,
    encode_continue,
    parse_resource_version,
)
from setpoint.cluster.apiserver.patch.apply_across_versions import release_in_other_versions
from setpoint.cluster.apiserver.patch.managed_fields import (
    MergeSchemaSource,
    manager_from_user_agent,
    track_update,
)
from setpoint.cluster.apiserver.registry.admission_point import (
    CREATE,
    DELETE,
    UPDATE,
    Admission,
    AdmissionRequest,
)
from setpoint.cluster.apiserver.registry.builtin_defaults import apply_builtin_defaults
from setpoint.cluster.apiserver.registry.kind_behaviour import KindBehaviour
from setpoint.cluster.apiserver.registry.object_decoding import check_type, checked_metadata
from setpoint.cluster.apiserver.registry.selection import (
    Matcher,
    check_field_selector,
    decode,
)
from setpoint.cluster.apiserver.registry.served_resources import ServedResource
from setpoint.cluster.apiserver.registry.write_capture import WRITE_CAPTURE
from setpoint.cluster.apiserver.server_clock import server_time
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage import (
    CommitError,
    ExpiredError,
    KeyExistsError,
    KeyNotFoundError,
    ReadTicket,
    Record,
    RevisionConflictError,
    Storage,
    WatchEvent,
)
from setpoint.cluster.apiserver.storage.codec import encode_json
from setpoint.cluster.apiserver.validation.object_meta import validate_object_meta

log = logging.getLogger(__name__)

_T = TypeVar("_T")

#: Upstream retries a generated name this many times before giving up (``store.go``).
GENERATE_NAME_ATTEMPTS: Final = 8
#: Characters of generated name suffixes (``storage/names/generate.go``): no vowels, no
#: look-alikes, so generated names never spell words.
GENERATE_NAME_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
GENERATE_NAME_SUFFIX_LENGTH: Final = 5
GENERATE_NAME_MAX_PREFIX: Final = 58  # 63 - 5: the result stays a valid DNS label
#: Random bytes fetched per os.urandom call for uids (128 uids' worth, made at once).
RANDOM_BLOCK_BYTES: Final = 16 * 128
#: How long an exact-revision list waits for more history once the backlog is read.
HISTORY_DRAIN_SECONDS: Final = 0.05
#: Records fetched per storage read while filtering a selected, paginated list.
LIST_SCAN_BATCH: Final = 1000
#: Reads made again when a write they saw failed to commit (each failure needs a failed disk).
SETTLED_READ_ATTEMPTS: Final = 3

FINALIZER_ORPHAN: Final = "orphan"
FINALIZER_FOREGROUND: Final = "foregroundDeletion"
PROPAGATION_POLICIES: Final = ("Foreground", "Background", "Orphan")
#: Upstream message when a list continues from a compacted revision.
CONTINUE_EXPIRED_MESSAGE: Final = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this "
    "response to retrieve the remainder of the results. Continuing with the provided token "
    "results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder()
#: Metadata the server sets itself: a create's request cannot set them.
_SERVER_OWNED_ON_CREATE: Final = frozenset(
    {
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
        "managedFields",
        "resourceVersion",
    }
)


class _GeneratedNameTaken(Exception):
    """A generated name collided with an existing object (the create is retried)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _SecondClock:
    """The current time as RFC 3339 text, formatted once per second (every create needs it)."""

    def __init__(self) -> None:
        self._second = -1
        self._text = ""

    def now(self) -> str:
        second = int(server_time())
        if second != self._second:
            self._text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
            self._second = second
        return self._text


_CLOCK: Final = _SecondClock()


def now_timestamp() -> str:
    """The current time as a Kubernetes ``Time`` (RFC 3339, seconds, UTC)."""
    return _CLOCK.now()


def _uid_batch() -> list[str]:
    """Random (version 4) UUIDs as text, 128 of them from one ``os.urandom`` call.

    One system call per create would release the GIL each time, and with the SQLite writer
    thread busy, getting it back costs up to a thread switch interval. (The server never forks,
    so no two processes hand out the same batch.)
    """
    digits = os.urandom(RANDOM_BLOCK_BYTES).hex()
    return [
        # RFC 4122: version 4, and the variant's two high bits 10 ("89ab"[x & 3]).
        f"{d[:8]}-{d[8:12]}-4{d[13:16]}-{'89ab'[int(d[16], 16) & 3]}{d[17:20]}-{d[20:]}"
        for d in [digits[start : start + 32] for start in range(0, len(digits), 32)]
    ]


_UIDS_READY: Final[list[str]] = []


def new_uid() -> str:
    """A random (version 4) UUID as text, as ``str(uuid.uuid4())`` but without its overhead."""
    if not _UIDS_READY:
        _UIDS_READY.extend(_uid_batch())
    return _UIDS_READY.pop()


def _is_set_revision(value: Any) -> bool:
    """Whether a create's ``resourceVersion`` is refused: upstream's storage refuses only one
    that parses as a non-zero unsigned integer (``ParseUint``); any other value is cleared."""
    if not isinstance(value, str) or not value.isascii() or not value.isdigit():
        return False
    return 0 < int(value) < 1 << 64


@dataclass(slots=True)
class WriteOptions:
    """Options of create/update/patch requests."""

    dry_run: bool = False
    field_validation: str = "Warn"
    field_manager: str = ""
    #: The request's User-Agent: its first word is the manager when ``fieldManager`` is unset.
    #: Writes the server makes itself (default namespaces, CRD cleanup) are kube-apiserver's.
    user_agent: str = "kube-apiserver"
    #: ``managedFields`` already computed (by server-side apply); None: track as an Update.
    managed_fields: list[dict[str, Any]] | None = None
    #: The subresource managedFields entries name when it is not the one written (``scale``).
    fields_subresource: str = ""

    @property
    def manager(self) -> str:
        """The field manager of the write."""
        return self.field_manager or manager_from_user_agent(self.user_agent)

    #: Skip the schema check: only for objects the server builds itself (the controllers'
    #: Events), valid by construction; metadata and the kind's own rules are still checked.
    server_built: bool = False


@dataclass(slots=True)
class DeleteOptions:
    """Options of a delete (from the body or the query)."""

    grace_period_seconds: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False


@dataclass(slots=True)
class Result:
    """What a handler answers: status code, JSON body, and Warning texts."""

    code: int
    body: bytes
    warnings: list[str] = field(default_factory=list)


def _generate_name(prefix: str) -> str:
    suffix = "".join(
        secrets.choice(GENERATE_NAME_ALPHABET) for _ in range(GENERATE_NAME_SUFFIX_LENGTH)
    )
    return prefix[:GENERATE_NAME_MAX_PREFIX] + suffix


class ObjectOperations:
    """The object semantics of the API server, for every served resource."""

    def __init__(
        self,
        storage: Storage,
        behaviour_for: Callable[[ServedResource], KindBehaviour],
        admit_namespace: Callable[[ServedResource, str, str], None],
    ) -> None:
        self.storage = storage
        self._behaviour_for = behaviour_for
        self._admit_namespace = admit_namespace
        self.merge_schemas = MergeSchemaSource(self._lookup_crd)
        #: Mutating and validating admission (webhooks); None: writes are only validated.
        self.admission: Admission | None = None
        #: The ResourceQuota admission plugin: refuses (403) or charges a create right before
        #: it is stored (see :mod:`setpoint.cluster.apiserver.quota.admission`).
        self.charge_quota: Callable[[ServedResource, str | None, dict[str, Any]], None] | None = (
            None
        )
        #: The same for an update (new object, then the old one); subresource writes are not.
        self.charge_quota_update: (
            Callable[[ServedResource, str | None, dict[str, Any], dict[str, Any]], None] | None
        ) = None

    def _admission_for(self, resource: ServedResource) -> Admission | None:
        admission = self.admission
        return admission if admission is not None and admission.active(resource) else None

    def _lookup_crd(self, name: str) -> tuple[int, Callable[[], dict[str, Any]]] | None:
        record = self.storage.get(f"/apiextensions.k8s.io/customresourcedefinitions/{name}")
        if record is None:
            return None
        value = record.value
        return record.revision, lambda: decode(value)

    def _managed_fields(
        self,
        resource: ServedResource,
        old: dict[str, Any] | None,
        new: dict[str, Any],
        options: WriteOptions,
        subresource: str,
        requested: Any,
    ) -> None:
        """Set ``new``'s managedFields: precomputed by apply, else tracked as an Update."""
        metadata = new["metadata"]
        if options.managed_fields is not None:
            entries: list[dict[str, Any]] | None = options.managed_fields
        else:
            root = self.merge_schemas.root(
                resource.group, resource.version, resource.kind, resource.crd_name
            )
            entries = track_update(
                root,
                old,
                new,
                manager=options.manager,
                api_version=resource.api_version,
                subresource=options.fields_subresource or subresource,
                now=now_timestamp(),
                builtin=not resource.is_custom,
                has_status=resource.has_status,
                requested=requested,
            )
        if entries:
            metadata["managedFields"] = entries
        else:
            metadata.pop("managedFields", None)

    def _settle(
        self,
        resource: ServedResource,
        behaviour: KindBehaviour,
        revision: int,
        value: bytes | None,
        old: dict[str, Any] | None,
    ) -> Awaitable[None]:
        """Wait until a write is durable, then run the kind's reaction to it (await the result
        at once).

        Shielded: a client that hangs up must not cancel the reaction (a CRD that is stored
        but never served, a namespace that is never emptied). Not a coroutine itself: every
        write awaits this, and a coroutine level costs on each of them.
        """
        capture = WRITE_CAPTURE.get()
        if capture is not None:
            capture.wrote(resource, old, value, revision)

        if not behaviour.reacts_to_writes:
            return self.storage.wait_durable(revision)

        async def settle() -> None:
            await self.storage.wait_durable(revision)
            await behaviour.after_write(resource, decode(value) if value else None, old)

        return asyncio.shield(settle())

    async def _wait_durable_or_conflict(
        self, resource: ServedResource, record: Record, metadata: dict[str, Any]
    ) -> None:
        """An answer built on ``record`` without writing waits until it is durable; 409 if
        that write failed to commit (the client re-reads, as after any conflict)."""
        try:
            await self.storage.wait_durable(record.revision)
        except CommitError:
            raise status_errors.stale_resource_version(
                resource.group, resource.plural, metadata.get("name", "")
            ) from None

    # -- reading ------------------------------------------------------------------------

    async def settled_read(
        self, read: Callable[[], Awaitable[_T]], prefix: str | None = None
    ) -> _T:
        """``await read()``, answered only once every write it may have seen is durable.

        ``prefix``: the read only looks at keys under it (it then waits only for writes
        there). A write it may have seen that then fails to commit makes the read start again.
        """
        storage = self.storage
        for _ in range(SETTLED_READ_ATTEMPTS):
            before = storage.read_ticket(prefix)
            result = await read()
            seen = ReadTicket(storage.read_ticket(prefix).revision, before.failures)
            if await storage.settled(seen):
                return result
        raise status_errors.internal_error("storage commits keep failing; try again later")

    # -- conversion between the served and the stored version --------------------------

    async def present(self, resource: ServedResource, value: bytes) -> bytes:
        """Stored JSON as served through ``resource`` (converted only when needed)."""
        if not converts(resource):
            return value
        return (await self.present_all(resource, [value]))[0]

    async def present_all(self, resource: ServedResource, values: list[bytes]) -> list[bytes]:
        """Stored objects as served through ``resource``: the conversion step of every read.

        Objects already in the served version keep their stored bytes; a custom resource's
        others are converted in one go (one ConversionReview for the batch).
        """
        if not values or not converts(resource):
            return values
        converter = resource.converter
        if converter is None:
            behaviour = self._behaviour_for(resource)
            return [_ENCODER.encode(behaviour.from_storage(resource, decode(v))) for v in values]
        objects = [decode(value) for value in values]
        converted = await converter.convert(objects, resource.version)
        return [
            value if obj is original else _ENCODER.encode(obj)
            for value, original, obj in zip(values, objects, converted, strict=True)
        ]

    async def present_object(self, resource: ServedResource, obj: dict[str, Any]) -> dict[str, Any]:
        """A stored object (decoded) as served through ``resource``."""
        if not converts(resource):
            return obj
        if resource.converter is not None:
            return (await resource.converter.convert([obj], resource.version))[0]
        return self._behaviour_for(resource).from_storage(resource, obj)

    async def convert_between(
        self, obj: dict[str, Any], source: ServedResource, target: ServedResource
    ) -> dict[str, Any]:
        """``obj``, served through ``source``, as served through ``target`` (a resource with
        the same storage: another version of a CRD, an alias in another group); a copy."""
        obj = decode(_ENCODER.encode(obj))
        if source.converter is not None:  # a custom resource: one direct conversion
            return (await source.converter.convert([obj], target.version))[0]
        stored = await self._to_storage(source, self._behaviour_for(source), obj)
        return await self.present_object(target, decode(_ENCODER.encode(stored)))

    async def convert_objects(
        self, resource: ServedResource, objects: list[dict[str, Any]], version: str
    ) -> list[dict[str, Any]]:
        """Copies of ``objects`` (custom resources served through ``resource``) in ``version``
        of their CRD, converted together (one review)."""
        copies = [decode(_ENCODER.encode(obj)) for obj in objects]
        if resource.converter is None:
            return copies
        return await resource.converter.convert(copies, version)

    async def _to_storage(
        self, resource: ServedResource, behaviour: KindBehaviour, obj: dict[str, Any]
    ) -> dict[str, Any]:
        """``obj`` (in the request's version) as it is stored: in the storage version."""
        converter = resource.converter
        if converter is None or not _converted_to_store(resource):
            return behaviour.to_storage(resource, obj)
        return (await converter.convert([obj], resource.storage_version))[0]

    async def _round_trip(
        self, resource: ServedResource, behaviour: KindBehaviour, obj: dict[str, Any]
    ) -> bytes:
        """A dry-run write's answer: ``obj`` converted to storage and back, as upstream's
        dry-run storage encodes and decodes it (a failing converter fails the dry run)."""
        if not converts(resource):
            return encode_json(obj)
        stored = await self._to_storage(resource, behaviour, obj)
        return await self.present(resource, encode_json(stored))

    def get_record(self, resource: ServedResource, namespace: str | None, name: str) -> Record:
        """The stored record of one object, or 404."""
        record = self.storage.get(resource.storage_key(namespace, name))
        if record is None:
            raise status_errors.not_found(resource.group, resource.plural, name)
        return record

    async def get(self, resource: ServedResource, namespace: str | None, name: str) -> bytes:
        """GET one object: its stored bytes (converted if served in another shape)."""
        return await self.present(resource, self.get_record(resource, namespace, name).value)

    async def list_collection(
        self, resource: ServedResource, namespace: str | None, options: ListOptions
    ) -> bytes:
        """LIST: the ``<Kind>List`` body, with pagination and selectors."""
        check_field_selector(resource, options)
        prefix = resource.storage_prefix(namespace)
        current = self.storage.read_ticket(list_read_prefix(resource, namespace, options)).revision
        list_revision = current
        start_after: str | None = None
        if options.continue_token is not None:
            token = options.continue_token
            if token.rv < self.storage.oldest_revision:
                raise status_errors.expired(CONTINUE_EXPIRED_MESSAGE)
            list_revision = token.rv
            start_after = token.start
        elif options.resource_version not in ("", "0"):
            requested = parse_resource_version(options.resource_version)
            if requested > current:
                await wait_for_revision(self.storage, requested)
                current = list_revision = self.storage.revision
            if options.resource_version_match == MATCH_EXACT and requested != current:
                return await self._list_exact(resource, namespace, options, requested)
        matcher = Matcher(resource, options)
        limit = options.limit
        items: list[bytes] = []
        last_key: str | None = None
        more = False
        if matcher.selects_all:
            records = self.storage.list(
                prefix, start_after=start_after, limit=limit + 1 if limit else None
            )
            if limit and len(records) > limit:
                records = records[:limit]
                more = True
            items = [record.value for record in records]
            if records:
                last_key = records[-1].key
        else:
            cursor = start_after
            while True:
                batch = self.storage.list(prefix, start_after=cursor, limit=LIST_SCAN_BATCH)
                for record in batch:
                    if limit and len(items) == limit:
                        more = True
                        break
                    if matcher.matches(record.key, record.value):
                        items.append(record.value)
                        last_key = record.key
                if more or len(batch) < LIST_SCAN_BATCH:
                    break
                cursor = batch[-1].key
        items = await self.present_all(resource, items)
        metadata: dict[str, Any] = {"resourceVersion": str(list_revision)}
        if more and last_key is not None:
            metadata["continue"] = encode_continue(list_revision, last_key)
            if matcher.selects_all:
                # Upstream reports it only for unselected lists, where it is exact.
                # O(log n): listing the rest here made paging a big list quadratic.
                metadata["remainingItemCount"] = self.storage.count(prefix, start_after=last_key)
        return _list_body(resource, metadata, items)

    async def _list_exact(
        self,
        resource: ServedResource,
        namespace: str | None,
        options: ListOptions,
        revision: int,
    ) -> bytes:
        """A list as of an older revision, rebuilt from the retained history."""
        prefix = resource.storage_prefix(namespace)
        if revision < self.storage.oldest_revision:
            raise status_errors.too_old_resource_version(revision, self.storage.oldest_revision)
        state = {record.key: record.value for record in self.storage.list(prefix)}
        for event in reversed(await self._history_after(prefix, revision)):
            if event.prev_value is None:
                state.pop(event.key, None)
            else:
                state[event.key] = event.prev_value
        matcher = Matcher(resource, options)
        items = await self.present_all(
            resource,
            [value for key, value in sorted(state.items()) if matcher.matches(key, value)],
        )
        return _list_body(resource, {"resourceVersion": str(revision)}, items)

    async def _history_after(self, prefix: str, revision: int) -> list[WatchEvent]:
        """The retained events under ``prefix`` after ``revision`` up to now."""
        current = self.storage.revision
        try:
            watch = self.storage.watch(prefix, revision)
        except ExpiredError as exc:
            raise status_errors.too_old_resource_version(revision, exc.oldest) from exc
        events: list[WatchEvent] = []
        iterator = aiter(watch)
        try:
            while True:
                # The backlog is already buffered; a short wait only ends the drain.
                event: WatchEvent = await asyncio.wait_for(anext(iterator), HISTORY_DRAIN_SECONDS)
                if event.revision > current:
                    break
                events.append(event)
        except (TimeoutError, StopAsyncIteration):
            pass
        finally:
            watch.close()
        return events

    # -- creating -----------------------------------------------------------------------

    def prepare_new(
        self, resource: ServedResource, namespace: str | None, obj: dict[str, Any]
    ) -> dict[str, Any]:
        """Fill the server-owned metadata of a new object (its metadata types already checked
        by :func:`checked_metadata`)."""
        metadata: dict[str, Any] = obj["metadata"]
        if resource.namespaced:
            body_namespace = metadata.get("namespace")
            if not body_namespace:
                metadata["namespace"] = namespace
            elif body_namespace != namespace:
                raise status_errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
        else:
            metadata.pop("namespace", None)
        if _is_set_revision(metadata.get("resourceVersion")):
            raise status_errors.bad_request(
                "resourceVersion should not be set on objects to be created"
            )
        if not _SERVER_OWNED_ON_CREATE.isdisjoint(metadata):  # rarely sent: one check in C
            for server_owned in _SERVER_OWNED_ON_CREATE:
                metadata.pop(server_owned, None)
        metadata["uid"] = new_uid()
        metadata["creationTimestamp"] = now_timestamp()
        if resource.tracks_generation or resource.is_custom:
            metadata["generation"] = 1
        else:
            metadata.pop("generation", None)
        return metadata

    async def create(
        self,
        resource: ServedResource,
        namespace: str | None,
        obj: dict[str, Any],
        options: WriteOptions,
    ) -> Result:
        """POST: store a new object and answer 201 with it."""
        obj = check_type(resource, obj)
        metadata = checked_metadata(obj, resource)
        admitted: list[str] | None = None
        if self._admission_for(resource) is not None:
            obj, admitted = await self._mutate_new(resource, namespace, obj, options)
            metadata = checked_metadata(obj, resource)
        prefix = metadata.get("generateName")
        if metadata.get("name") or not prefix or not isinstance(prefix, str):
            return await self._create_once(resource, namespace, obj, options, None, admitted)
        # A generated name may be taken: retry with fresh names, each time from the request.
        for _attempt in range(GENERATE_NAME_ATTEMPTS - 1):
            try:
                return await self._create_once(
                    resource, namespace, copy.deepcopy(obj), options, prefix, admitted
                )
            except _GeneratedNameTaken:
                continue
        try:
            return await self._create_once(resource, namespace, obj, options, prefix, admitted)
        except _GeneratedNameTaken as taken:
            raise status_errors.already_exists(
                resource.group, resource.plural, taken.name
            ) from None

    async def _create_once(
        self,
        resource: ServedResource,
        namespace: str | None,
        obj: dict[str, Any],
        options: WriteOptions,
        generate_from: str | None,
        admitted: list[str] | None = None,
    ) -> Result:
        """One attempt at a create; ``admitted``: the warnings of mutating admission, which
        ran (None: it did not, nor does validating admission)."""
        behaviour = self._behaviour_for(resource)
        metadata = self.prepare_new(resource, namespace, obj)
        if generate_from is not None:
            metadata["name"] = _generate_name(generate_from)
        if not resource.is_custom:
            apply_builtin_defaults(obj)
        behaviour.prepare_create(resource, obj)
        name = metadata.get("name") or ""
        if resource.namespaced:
            self._admit_namespace(resource, namespace or "", name)
        warnings = self._validate(resource, obj, None, options, behaviour, "")
        self._managed_fields(resource, None, obj, options, "", None)
        if admitted is not None and self.admission is not None:
            request = _request(CREATE, resource, "", namespace, obj, None, options)
            warnings = admitted + warnings + await self.admission.validate(request)
        if options.dry_run:
            return Result(201, await self._round_trip(resource, behaviour, obj), warnings)
        if _converted_to_store(resource):
            stored = await self._to_storage(resource, behaviour, obj)
        else:  # the common case, without a coroutine to await
            stored = behaviour.to_storage(resource, obj)
        if self.charge_quota is not None:
            self.charge_quota(resource, namespace, obj)
        try:
            record = self.storage.create(resource.storage_key(namespace, name), stored)
        except KeyExistsError:
            if generate_from is not None:
                raise _GeneratedNameTaken(name) from None
            raise status_errors.already_exists(resource.group, resource.plural, name) from None
        await self._settle(resource, behaviour, record.revision, record.value, None)
        value = record.value
        return Result(
            201, await self.present(resource, value) if converts(resource) else value, warnings
        )

    async def _mutate_new(
        self,
        resource: ServedResource,
        namespace: str | None,
        obj: dict[str, Any],
        options: WriteOptions,
    ) -> tuple[dict[str, Any], list[str]]:
        """Mutating admission of a new object: after the namespace check and the built-in
        defaults (decoding applies them upstream), before anything else (upstream's handler)."""
        assert self.admission is not None
        if resource.namespaced:
            metadata = obj["metadata"]
            self._admit_namespace(resource, namespace or "", metadata.get("name") or "")
        if not resource.is_custom:
            apply_builtin_defaults(obj)
        request = _request(CREATE, resource, "", namespace, obj, None, options)
        mutated, warnings = await self.admission.mutate(request)
        return (mutated if mutated is not None else obj), warnings

    def _validate(
        self,
        resource: ServedResource,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        options: WriteOptions,
        behaviour: KindBehaviour,
        subresource: str,
    ) -> list[str]:
        metadata = obj["metadata"]
        errors = validate_object_meta(
            metadata, namespaced=resource.namespaced, name_rule=resource.name_rule
        )
        if options.server_built:
            kind_errors = behaviour.kind_errors(resource, obj, old, subresource)
            unknown: list[str] = []
        else:
            kind_errors, unknown = behaviour.validate(resource, obj, old, subresource)
        errors.extend(kind_errors)
        warnings: list[str] = []
        if unknown and options.field_validation == "Strict":
            raise status_errors.bad_request(
                f'{resource.kind} in version "{resource.version}" cannot be handled as a '
                f"{resource.kind}: strict decoding error: "
                + ", ".join(f'unknown field "{path}"' for path in unknown)
            )
        if unknown and options.field_validation != "Ignore":
            warnings.extend(f'unknown field "{path}"' for path in unknown)
        if errors:
            name = metadata.get("name") or metadata.get("generateName") or ""
            raise status_errors.invalid(resource.group, resource.kind, name, errors)
        if resource.deprecated_warning:
            warnings.append(resource.deprecated_warning)
        return warnings

    # -- updating -----------------------------------------------------------------------

    async def update(
        self,
        resource: ServedResource,
        namespace: str | None,
        name: str,
        obj: dict[str, Any],
        options: WriteOptions,
        subresource: str = "",
    ) -> Result:
        """PUT: replace an object (or only its status through ``/status``)."""
        obj = check_type(resource, obj)
        metadata = checked_metadata(obj, resource)
        body_name = metadata.get("name") or ""
        if body_name != name:
            raise status_errors.bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        body_namespace = metadata.get("namespace") or ""
        if resource.namespaced:
            if body_namespace and body_namespace != namespace:
                raise status_errors.bad_request(
                    f"the namespace of the object ({body_namespace}) does not match the "
                    f"namespace on the URL ({namespace})"
                )
            metadata["namespace"] = namespace
        else:
            metadata.pop("namespace", None)
        key = resource.storage_key(namespace, name)
        record = self.storage.get(key)
        if record is None:
            if _allows_create_on_update(resource) and not subresource:
                metadata.pop("resourceVersion", None)
                return await self.create(resource, namespace, obj, options)
            raise status_errors.not_found(resource.group, resource.plural, name)
        requested_rv = metadata.get("resourceVersion") or ""
        if not requested_rv:
            if resource.is_custom or not _allows_unconditional_update(resource):
                raise status_errors.invalid(
                    resource.group,
                    resource.kind,
                    name,
                    [
                        fe.invalid(
                            "metadata.resourceVersion",
                            fe.GoValue("0x0"),
                            "must be specified for an update",
                        )
                    ],
                )
        elif parse_resource_version(str(requested_rv)) != record.revision:
            raise status_errors.stale_resource_version(resource.group, resource.plural, name)
        return await self._write_update(resource, record, obj, options, subresource)

    async def _write_update(
        self,
        resource: ServedResource,
        record: Record,
        obj: dict[str, Any],
        options: WriteOptions,
        subresource: str,
    ) -> Result:
        """Apply update rules to ``obj`` (the desired object) against the stored ``record``."""
        behaviour = self._behaviour_for(resource)
        old = await self.present_object(resource, decode(record.value))
        old_meta = old["metadata"]
        if subresource == "status":
            # A second decode: a copy of ``old`` several times cheaper than copy.deepcopy.
            new = _fresh_copy(resource, record.value, old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
        elif subresource == "ephemeralcontainers":
            # pods/ephemeralcontainers writes spec.ephemeralContainers only.
            new = await self.present_object(resource, decode(record.value))
            spec = new.setdefault("spec", {})
            wanted = (obj.get("spec") or {}).get("ephemeralContainers")
            if wanted:
                spec["ephemeralContainers"] = wanted
            else:
                spec.pop("ephemeralContainers", None)
        elif subresource == "approval":
            # certificatesigningrequests/approval writes the conditions only (the signer
            # writes the certificate through /status).
            new = _fresh_copy(resource, record.value, old)
            conditions = (obj.get("status") or {}).get("conditions")
            status = new.setdefault("status", {})
            if conditions:
                status["conditions"] = conditions
            else:
                status.pop("conditions", None)
        else:
            new = obj
            if resource.has_status:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
        new_meta = checked_metadata(new, resource)
        requested_managed = new_meta.get("managedFields")
        uid = new_meta.get("uid")
        if uid and uid != old_meta.get("uid"):
            raise status_errors.conflict(
                resource.group,
                resource.plural,
                old_meta.get("name", ""),
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                f"{old_meta.get('uid')}",
            )
        for carried in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if carried in old_meta:
                new_meta[carried] = old_meta[carried]
            else:
                new_meta.pop(carried, None)
        new_meta.pop("managedFields", None)
        new_meta.pop("selfLink", None)
        if "managedFields" in old_meta:
            new_meta["managedFields"] = old_meta["managedFields"]
        new_meta["resourceVersion"] = old_meta.get("resourceVersion")
        if not resource.is_custom and subresource in ("", "ephemeralcontainers"):
            apply_builtin_defaults(new)
        admission = self._admission_for(resource)
        admitted: list[str] = []
        if admission is not None:
            # Upstream mutates the updated object (the patch already applied) before the
            # kind's rules and validation run; the stored record is checked again on write.
            request = _request(
                UPDATE,
                resource,
                subresource or options.fields_subresource,
                old_meta.get("namespace"),
                new,
                old,
                options,
            )
            mutated, admitted = await admission.mutate(request)
            if mutated is not None and mutated is not new:
                new = mutated
                new_meta = checked_metadata(new, resource)
        behaviour.prepare_update(resource, new, old)
        deleting = "deletionTimestamp" in old_meta
        errors: list[FieldError] = []
        if deleting:
            added = [
                f
                for f in new_meta.get("finalizers") or []
                if f not in (old_meta.get("finalizers") or [])
            ]
            if added:
                quoted = ", ".join(fe.go_quote(f) for f in added)
                errors.append(
                    fe.forbidden(
                        "metadata.finalizers",
                        "no new finalizers can be added if the object is being deleted, "
                        f"found new finalizers []string{{{quoted}}}",
                    )
                )
        if errors:
            raise status_errors.invalid(
                resource.group, resource.kind, new_meta.get("name", ""), errors
            )
        if (resource.tracks_generation or resource.is_custom) and behaviour.spec_changed(
            resource, new, old
        ):
            new_meta["generation"] = int(old_meta.get("generation") or 0) + 1
        warnings = self._validate(resource, new, old, options, behaviour, subresource)
        self._managed_fields(resource, old, new, options, subresource, requested_managed)
        if options.managed_fields is None and resource.converter is not None:
            await release_in_other_versions(
                old,
                new,
                api_version=resource.api_version,
                subresource=options.fields_subresource or subresource,
                has_status=resource.has_status,
                convert=lambda objects, version: self.convert_objects(resource, objects, version),
                schema_of=lambda version: self.merge_schemas.root(
                    resource.group, version, resource.kind, resource.crd_name
                ),
            )
        if admission is not None:
            request = _request(
                UPDATE,
                resource,
                subresource or options.fields_subresource,
                old_meta.get("namespace"),
                new,
                old,
                options,
            )
            warnings = admitted + warnings + await admission.validate(request)
        if new == old and _json_identical(new, old):
            # A no-op write: no new revision, no event (controllers rely on this).
            await self._wait_durable_or_conflict(resource, record, new_meta)
            return Result(200, await self.present(resource, record.value), warnings)
        if options.dry_run:
            await self._wait_durable_or_conflict(resource, record, new_meta)
            return Result(200, await self._round_trip(resource, behaviour, new), warnings)
        stored = await self._to_storage(resource, behaviour, new)
        try:
            # As upstream's ShouldDeleteDuringUpdate: only once the grace period is over (a
            # pod in its grace period gets its final status written before it goes).
            if (
                deleting
                and not behaviour.holds_deletion(new)
                and not old_meta.get("deletionGracePeriodSeconds")
            ):
                written = self.storage.delete(record.key, expected_revision=record.revision)
                await self._settle(resource, behaviour, written.revision, None, old)
                return Result(200, await self.present(resource, written.value), warnings)
            if self.charge_quota_update is not None and not subresource:
                self.charge_quota_update(resource, old_meta.get("namespace"), new, old)
            written = self.storage.update(record.key, stored, expected_revision=record.revision)
        except (RevisionConflictError, KeyNotFoundError):
            raise status_errors.stale_resource_version(
                resource.group, resource.plural, new_meta.get("name", "")
            ) from None
        await self._settle(resource, behaviour, written.revision, written.value, old)
        return Result(200, await self.present(resource, written.value), warnings)

    async def update_object(
        self,
        resource: ServedResource,
        record: Record,
        new: dict[str, Any],
        options: WriteOptions | None = None,
        subresource: str = "",
    ) -> Result:
        """Write ``new`` over the stored ``record`` with update rules (for patch and scale)."""
        return await self._write_update(
            resource, record, new, options or WriteOptions(), subresource
        )

    # -- deleting -----------------------------------------------------------------------

    async def delete(
        self,
        resource: ServedResource,
        namespace: str | None,
        name: str,
        options: DeleteOptions,
    ) -> Result:
        """DELETE: remove the object, or mark it deleting while finalizers remain."""
        _check_delete_options(options)
        record = self.get_record(resource, namespace, name)
        return await self.delete_record(resource, record, options)

    async def delete_record(
        self, resource: ServedResource, record: Record, options: DeleteOptions
    ) -> Result:
        """Delete the object stored in ``record`` (see :meth:`delete`)."""
        behaviour = self._behaviour_for(resource)
        obj = decode(record.value)
        meta = obj["metadata"]
        name = meta.get("name", "")
        if options.precondition_uid is not None and options.precondition_uid != meta.get("uid"):
            raise status_errors.conflict(
                resource.group,
                resource.plural,
                name,
                f"Precondition failed: UID in precondition: {options.precondition_uid}, "
                f"UID in object meta: {meta.get('uid', '')}",
            )
        if options.precondition_resource_version is not None and (
            options.precondition_resource_version != meta.get("resourceVersion")
        ):
            raise status_errors.conflict(
                resource.group,
                resource.plural,
                name,
                "Precondition failed: ResourceVersion in precondition: "
                f"{options.precondition_resource_version}, ResourceVersion in object meta: "
                f"{meta.get('resourceVersion', '')}",
            )
        finalizers = list(meta.get("finalizers") or [])
        policy = options.propagation_policy
        if options.orphan_dependents is not None and policy is None:
            policy = "Orphan" if options.orphan_dependents else "Background"
        if policy == "Orphan":
            finalizers = [f for f in finalizers if f != FINALIZER_FOREGROUND]
            if FINALIZER_ORPHAN not in finalizers:
                finalizers.append(FINALIZER_ORPHAN)
        elif policy == "Foreground":
            finalizers = [f for f in finalizers if f != FINALIZER_ORPHAN]
            if FINALIZER_FOREGROUND not in finalizers:
                finalizers.append(FINALIZER_FOREGROUND)
        elif policy == "Background":
            finalizers = [
                f for f in finalizers if f not in (FINALIZER_ORPHAN, FINALIZER_FOREGROUND)
            ]
        await self.admit_delete(resource, record, obj, options)
        grace = behaviour.delete_grace_seconds(resource, obj, options.grace_period_seconds)
        deleting = "deletionTimestamp" in meta
        if not finalizers and grace == 0:
            if options.dry_run:
                return Result(200, await self._deleted_answer(resource, obj, record.value))
            try:
                written = self.storage.delete(record.key, expected_revision=record.revision)
            except (KeyNotFoundError, RevisionConflictError):
                raise status_errors.conflict(
                    resource.group, resource.plural, name, status_errors.OBJECT_MODIFIED
                ) from None
            await self._settle(resource, behaviour, written.revision, None, obj)
            return Result(200, await self._deleted_answer(resource, obj, written.value))
        # Graceful: mark the object deleting; finalizers (or the kubelet) finish the job.
        new = copy.deepcopy(obj)
        new_meta = new["metadata"]
        if finalizers:
            new_meta["finalizers"] = finalizers
        else:
            new_meta.pop("finalizers", None)
        if not deleting:
            new_meta["deletionTimestamp"] = _timestamp_after(grace)
            new_meta["deletionGracePeriodSeconds"] = grace
            if int(meta.get("generation") or 0) > 0:
                new_meta["generation"] = int(meta["generation"]) + 1
            behaviour.prepare_deletion(resource, new)
        if new == obj or options.dry_run:
            return Result(200, await self.present(resource, encode_json(new)))
        try:
            written = self.storage.update(record.key, new, expected_revision=record.revision)
        except (KeyNotFoundError, RevisionConflictError):
            raise status_errors.conflict(
                resource.group, resource.plural, name, status_errors.OBJECT_MODIFIED
            ) from None
        await self._settle(resource, behaviour, written.revision, written.value, obj)
        code = 202 if options.orphan_dependents is False else 200
        return Result(code, await self.present(resource, written.value))

    async def admit_delete(
        self, resource: ServedResource, record: Record, obj: dict[str, Any], options: DeleteOptions
    ) -> None:
        """Admission of a delete of the object stored in ``record`` (``obj``, decoded): the
        webhooks see it as ``oldObject``; 409 if it changed while they answered."""
        admission = self._admission_for(resource)
        if admission is None:
            return
        meta = obj["metadata"]
        name = meta.get("name", "")
        if converts(resource):  # the webhooks see the object in the request's version
            obj = await self.present_object(resource, decode(record.value))
        request = AdmissionRequest(
            DELETE,
            resource,
            "",
            meta.get("namespace") or "",
            name,
            None,
            obj,
            options.dry_run,
            _delete_options(options),
        )
        await admission.mutate(request)
        await admission.validate(request)
        current = self.storage.get(record.key)
        if current is None or current.revision != record.revision:
            raise status_errors.conflict(
                resource.group, resource.plural, name, status_errors.OBJECT_MODIFIED
            )

    async def _deleted_answer(
        self, resource: ServedResource, obj: dict[str, Any], value: bytes
    ) -> bytes:
        if resource.plural in ("pods", "services", "namespaces") and not resource.group:
            return await self.present(resource, value)
        meta = obj.get("metadata") or {}
        details: dict[str, Any] = {"name": meta.get("name", "")}
        if resource.group:
            details["group"] = resource.group
        details["kind"] = resource.plural
        details["uid"] = meta.get("uid", "")
        return _ENCODER.encode(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": details,
            }
        )

    async def delete_collection(
        self,
        resource: ServedResource,
        namespace: str | None,
        list_options: ListOptions,
        options: DeleteOptions,
    ) -> Result:
        """DELETE on a collection: delete every selected object; answer the list of them."""
        _check_delete_options(options)
        check_field_selector(resource, list_options)
        matcher = Matcher(resource, list_options)
        records = [
            record
            for record in self.storage.list(resource.storage_prefix(namespace))
            if matcher.matches(record.key, record.value)
        ]
        deleted: list[bytes] = []
        for record in records:
            current = self.storage.get(record.key)
            if current is None:
                continue
            try:
                result = await self.delete_record(resource, current, options)
            except APIError as exc:
                if exc.code in (404, 409):
                    continue
                raise
            if result.body.startswith(b'{"kind":"Status"'):
                deleted.append(await self.present(resource, current.value))
            else:
                deleted.append(result.body)
        metadata = {"resourceVersion": str(self.storage.revision)}
        return Result(200, _list_body(resource, metadata, deleted))


_SORTED_ENCODE: Final = msgspec.json.Encoder(order="sorted").encode


def _request(
    operation: str,
    resource: ServedResource,
    subresource: str,
    namespace: str | None,
    obj: dict[str, Any],
    old: dict[str, Any] | None,
    options: WriteOptions,
) -> AdmissionRequest:
    """The admission request of a create or an update."""
    review_options: dict[str, Any] = {}
    if options.dry_run:
        review_options["dryRun"] = ["All"]
    if options.field_manager:
        review_options["fieldManager"] = options.field_manager
    return AdmissionRequest(
        operation,
        resource,
        subresource,
        (namespace or "") if resource.namespaced else "",
        str(obj["metadata"].get("name") or ""),
        obj,
        old,
        options.dry_run,
        review_options,
    )


def _delete_options(options: DeleteOptions) -> dict[str, Any]:
    review_options: dict[str, Any] = {}
    if options.grace_period_seconds is not None:
        review_options["gracePeriodSeconds"] = options.grace_period_seconds
    if options.propagation_policy is not None:
        review_options["propagationPolicy"] = options.propagation_policy
    if options.dry_run:
        review_options["dryRun"] = ["All"]
    return review_options


def _json_identical(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """:func:`json_equal` of two objects, by comparing their key-sorted JSON in C first.

    The same text means the same types everywhere (``1``, ``1.0`` and ``true`` all print
    differently), except that msgspec prints NaN and infinities as ``null``: text with a null
    in it, or different text, is left to the walk.
    """
    try:
        text = _SORTED_ENCODE(a)
        if text == _SORTED_ENCODE(b) and b"null" not in text:
            return True
    except (TypeError, ValueError, msgspec.EncodeError):
        pass
    return json_equal(a, b)


def _check_delete_options(options: DeleteOptions) -> None:
    errors: list[FieldError] = []
    if options.orphan_dependents is not None and options.propagation_policy is not None:
        errors.append(
            fe.invalid(
                "propagationPolicy",
                options.propagation_policy,
                "orphanDependents and deletionPropagation cannot be both set",
            )
        )
    elif (
        options.propagation_policy is not None
        and options.propagation_policy not in PROPAGATION_POLICIES
    ):
        errors.append(
            fe.not_supported("propagationPolicy", options.propagation_policy, PROPAGATION_POLICIES)
        )
    if options.grace_period_seconds is not None and options.grace_period_seconds < 0:
        options.grace_period_seconds = 1  # upstream turns a negative grace period into 1
    if errors:
        raise status_errors.invalid("meta.k8s.io", "DeleteOptions", "", errors)


def _timestamp_after(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(server_time() + seconds))


def list_read_prefix(
    resource: ServedResource, namespace: str | None, options: ListOptions
) -> str | None:
    """The key prefix a most-recent list reads, for :meth:`ObjectOperations.settled_read`.

    None for a list at a given resourceVersion or continuing a page: those report that
    revision, so they wait for every write up to it.
    """
    if options.continue_token is None and options.resource_version in ("", "0"):
        return resource.storage_prefix(namespace)
    return None


def _converted_to_store(resource: ServedResource) -> bool:
    """Whether a write through ``resource`` is converted to another version to be stored (a
    custom resource whose storage version is another, converted by its CRD's converter)."""
    return resource.converter is not None and resource.version != resource.storage_version


def converts(resource: ServedResource) -> bool:
    """Whether objects may be stored in another shape than ``resource`` serves (convert on
    read): a custom resource's storage version or its ``storedVersions`` differ from it."""
    if resource.is_custom:
        return resource.version != resource.storage_version or any(
            version != resource.version for version in resource.stored_versions
        )
    if resource.storage_version and resource.storage_version != resource.version:
        return True
    return resource.storage_group is not None and resource.storage_group != resource.group


# Upstream registries that create an object on PUT when it is missing (AllowCreateOnUpdate).
_CREATE_ON_UPDATE: Final = frozenset(
    {
        ("", "endpoints"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("discovery.k8s.io", "endpointslices"),
    }
)


def _fresh_copy(
    resource: ServedResource, value: bytes, presented: dict[str, Any]
) -> dict[str, Any]:
    """A copy of ``presented`` (the stored ``value`` as served), by decoding again: the stored
    bytes when they need no conversion, else ``presented`` encoded."""
    if not converts(resource):
        return decode(value)
    return decode(_ENCODER.encode(presented))


def _allows_create_on_update(resource: ServedResource) -> bool:
    return (resource.group, resource.plural) in _CREATE_ON_UPDATE


def _allows_unconditional_update(resource: ServedResource) -> bool:
    # Built-ins accept a PUT without resourceVersion (last write wins); CRs and CRDs do not.
    return not resource.is_custom


def _list_body(resource: ServedResource, metadata: dict[str, Any], items: Iterable[bytes]) -> bytes:
    head = (
        b'{"kind":'
        + _ENCODER.encode(resource.list_kind)
        + b',"apiVersion":'
        + _ENCODER.encode(resource.api_version)
        + b',"metadata":'
        + _ENCODER.encode(metadata)
        + b',"items":['
    )
    return head + b",".join(items) + b"]}"
