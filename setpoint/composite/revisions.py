"""ControllerRevisions and rolling updates, as Metacontroller's CompositeController does them.

When a child type's ``updateStrategy.method`` is ``RollingInPlace`` or ``RollingRecreate``, a
change of the parent does not reach every child at once. The parent's *revision fields*
(``parentResource.revisionHistory.fieldPaths``, default ``spec``) are recorded in
``metacontroller.k8s.io/v1alpha1`` ``ControllerRevision`` objects, one per distinct value, each
listing the children it is responsible for (``children: [{apiGroup, kind, names}]``). A sync:

1. claims the parent's revisions (controlled by it, labelled with the parent's API group and
   resource; an uncontrolled one matching the parent's selector is adopted);
2. finds the revision of the parent's current fields (the *latest*, made when missing) and, for
   each other revision, the parent as it was (its ``parentPatch`` laid over the parent);
3. calls the hook once per revision, so each says what its children should look like;
4. gives the latest revision every child no revision holds, and every child that already looks
   as the latest wants; then moves *one* more child to it, unless a child the latest holds is
   missing, not updated yet, has not observed its latest spec (``RollingInPlace`` and
   ``status.observedGeneration``) or fails its ``statusChecks``;
5. deletes the revisions left with no child, writes the others, and returns the latest
   revision's answer with each child held by an older revision in that revision's form, and the
   condition ``Updated`` in the status: ``False``/``RolloutProgressing`` ("updating Kind name"),
   ``False``/``RolloutWaiting`` (why), or ``True``/``OnLatestRevision``.

Names, labels, owner references and the ``parentPatch`` are Metacontroller's:
``<resource>.<group or core>-<sha1 of the parent uid and the patch JSON>``, labels
``metacontroller.k8s.io/apiGroup`` and ``metacontroller.k8s.io/resource`` (plus
``controller-uid`` with ``generateSelector``, else the labels of the parent's
``spec.template.metadata``), and a controller reference to the parent, so the garbage collector
deletes them with it.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from setpoint.api.gvk import ResourceInfo
from setpoint.api.patch import json_equal
from setpoint.api.selectors import LabelSelector
from setpoint.cache import OWNER_UID_INDEX
from setpoint.client.errors import AlreadyExists, ApiError, Conflict, NotFound
from setpoint.client.request_options import Preconditions
from setpoint.composite.children import controller_reference_to
from setpoint.composite.hook_wire import CompositeResponse, HookError
from setpoint.composite.spec import ChildType
from setpoint.controller.create_or_update import differs

__all__ = [
    "LABEL_API_GROUP",
    "LABEL_RESOURCE",
    "REVISION_API_VERSION",
    "REVISION_KIND",
    "UPDATED_CONDITION",
    "RevisionHistory",
    "apply_field_patch",
    "field_patch",
    "go_json",
    "relative_name",
    "revision_name",
]

REVISION_API_VERSION = "metacontroller.k8s.io/v1alpha1"
REVISION_KIND = "ControllerRevision"
#: Labels that keep the revisions of different parent types apart (Metacontroller's).
LABEL_API_GROUP = "metacontroller.k8s.io/apiGroup"
LABEL_RESOURCE = "metacontroller.k8s.io/resource"
#: The parent status condition that tells how a rollout goes.
UPDATED_CONDITION = "Updated"
#: Revision names are object names: at most 253 characters, 41 of them the hash and its dash.
_MAX_PREFIX = 253 - 41

#: (API group, kind, name relative to the parent) of a child.
ChildKey = tuple[str, str, str]


def _path(field_path: str) -> list[str]:
    return field_path.split(".")


def field_patch(obj: Mapping[str, Any], field_paths: Sequence[str]) -> dict[str, Any]:
    """The values of ``field_paths`` (dotted) in ``obj``, nested as in ``obj`` (a path that is
    absent is left out): a revision's ``parentPatch``."""
    patch: dict[str, Any] = {}
    for field_path in field_paths:
        parts = _path(field_path)
        value: Any = obj
        for index, part in enumerate(parts):
            if not isinstance(value, Mapping):
                raise HookError(
                    f"revisionHistory.fieldPaths: {field_path}: "
                    f"{'.'.join(parts[:index])} is not an object"
                )
            if part not in value:
                break
            value = value[part]
        else:
            _set(patch, parts, copy.deepcopy(value), field_path)
    return patch


def _set(target: dict[str, Any], parts: Sequence[str], value: Any, field_path: str) -> None:
    for index, part in enumerate(parts[:-1]):
        inner = target.setdefault(part, {})
        if not isinstance(inner, dict):
            raise HookError(
                f"revisionHistory.fieldPaths: {field_path}: "
                f"{'.'.join(parts[: index + 1])} is not an object"
            )
        target = inner
    target[parts[-1]] = value


def apply_field_patch(
    obj: dict[str, Any], patch: Mapping[str, Any], field_paths: Sequence[str]
) -> None:
    """Lay the values of ``field_paths`` found in ``patch`` over ``obj`` (in place)."""
    for field_path in field_paths:
        parts = _path(field_path)
        value: Any = patch
        for part in parts:
            if not isinstance(value, Mapping) or part not in value:
                break
            value = value[part]
        else:
            _set(obj, parts, copy.deepcopy(value), field_path)


def go_json(value: Any) -> bytes:
    """``value`` as Go's ``json.Marshal`` writes a map: keys sorted, no spaces, and ``<``,
    ``>``, ``&``, U+2028 and U+2029 escaped (the hashed bytes must be Metacontroller's)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text.encode()


def revision_name(parent_resource: ResourceInfo, parent_uid: str, patch_json: bytes) -> str:
    """``<resource>.<group or core>-<sha1(parent uid + parentPatch JSON)>``."""
    prefix = f"{parent_resource.resource}.{parent_resource.group or 'core'}"[:_MAX_PREFIX]
    digest = hashlib.sha1(parent_uid.encode() + patch_json, usedforsecurity=False).hexdigest()
    return f"{prefix}-{digest}"


def relative_name(parent: Mapping[str, Any], child: Mapping[str, Any]) -> str:
    """A child's name as a revision lists it: bare in the parent's namespace (or for a
    cluster-scoped child), ``namespace/name`` otherwise."""
    metadata = child.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    if namespace and namespace != (parent["metadata"].get("namespace") or ""):
        return f"{namespace}/{metadata.get('name')}"
    return str(metadata.get("name"))


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]


@dataclass
class _ParentRevision:
    """One revision of the parent: the parent as it was, its ControllerRevision and what the
    hook answered for it."""

    parent: dict[str, Any]
    revision: dict[str, Any]
    response: CompositeResponse = field(default_factory=CompositeResponse)
    desired: dict[ChildKey, dict[str, Any]] = field(default_factory=dict)

    def add(self, group: str, kind: str, name: str) -> None:
        children = self.revision.setdefault("children", [])
        for entry in children:
            if entry.get("apiGroup", "") == group and entry.get("kind") == kind:
                names = entry.setdefault("names", [])
                if name not in names:
                    names.append(name)
                return
        children.append({"apiGroup": group, "kind": kind, "names": [name]})

    def remove(self, group: str, kind: str, name: str) -> None:
        for entry in self.revision.get("children") or []:
            if entry.get("apiGroup", "") == group and entry.get("kind") == kind:
                names = entry.get("names") or []
                if name in names:
                    names.remove(name)

    def count(self) -> int:
        return sum(len(entry.get("names") or []) for entry in self.revision.get("children") or [])


#: Calls the hook for one revision's parent: its checked answer.
HookForParent = Callable[[dict[str, Any]], Awaitable[CompositeResponse]]


@dataclass
class RevisionHistory:
    """The ControllerRevisions of one CompositeController's parents (see the module docs)."""

    parent_resource: ResourceInfo
    child_types: Sequence[ChildType]
    field_paths: tuple[str, ...] = ("spec",)
    generate_selector: bool = False

    def __post_init__(self) -> None:
        self._types = {(t.group, t.kind): t for t in self.child_types}

    @property
    def any_rolling(self) -> bool:
        return any(t.rolling for t in self.child_types)

    def _rolling(self, group: str, kind: str) -> ChildType | None:
        child_type = self._types.get((group, kind))
        return child_type if child_type is not None and child_type.rolling else None

    def _key(self, parent: Mapping[str, Any], child: Mapping[str, Any]) -> ChildKey:
        api_version, kind = str(child.get("apiVersion")), str(child.get("kind"))
        return (_group(api_version), kind, relative_name(parent, child))

    async def sync(
        self,
        env: Any,
        parent: dict[str, Any],
        selector: LabelSelector,
        observed: Sequence[Mapping[str, Any]],
        call: HookForParent,
    ) -> tuple[CompositeResponse, bool]:
        """The answer to act on, aggregated over the parent's revisions, and whether a child
        moved to the latest revision (the rollout may go on at once)."""
        if not parent["metadata"].get("namespace"):
            raise HookError(
                "rolling updates keep ControllerRevisions, which are namespaced: "
                "the parent must be namespaced"
            )
        observed_revisions = await self._claim(env, parent, selector)
        latest_patch = field_patch(parent, self.field_paths)
        latest: _ParentRevision | None = None
        others: list[_ParentRevision] = []
        for revision in observed_revisions:
            patch = revision.get("parentPatch")
            patch = patch if isinstance(patch, Mapping) else {}
            if json_equal(patch, latest_patch):
                latest = _ParentRevision(parent, copy.deepcopy(revision))
                continue
            old_parent = copy.deepcopy(parent)
            apply_field_patch(old_parent, patch, self.field_paths)
            others.append(_ParentRevision(old_parent, copy.deepcopy(revision)))
        if latest is None:
            latest = _ParentRevision(parent, self._new_revision(parent, latest_patch))
        revisions = [latest, *others]
        for pr in revisions:
            pr.response = await call(pr.parent)
            pr.desired = {self._key(parent, child): child for child in pr.response.children}
        claimed = self._sync_claims(revisions)
        observed_by_key = {self._key(parent, obj): obj for obj in observed}
        moved = self._roll(revisions, claimed, observed_by_key)
        revisions = [latest, *(pr for pr in others if pr.count())]
        await self._manage(env, observed_revisions, [pr.revision for pr in revisions])
        return self._aggregate(revisions), moved

    # ----- which revision holds which child -----

    def _sync_claims(
        self, revisions: Sequence[_ParentRevision]
    ) -> dict[tuple[str, str], dict[str, _ParentRevision]]:
        """Drop the claims of kinds that no longer roll and of children the latest revision
        no longer wants; a child claimed twice stays with the first (the latest first)."""
        latest = revisions[0]
        claimed: dict[tuple[str, str], dict[str, _ParentRevision]] = {}
        for pr in revisions:
            kept = []
            for entry in pr.revision.get("children") or []:
                group, kind = str(entry.get("apiGroup") or ""), str(entry.get("kind") or "")
                if self._rolling(group, kind) is None:
                    continue
                by_name = claimed.setdefault((group, kind), {})
                names = []
                for name in entry.get("names") or []:
                    if (group, kind, name) not in latest.desired or name in by_name:
                        continue
                    by_name[name] = pr
                    names.append(name)
                if names:
                    kept.append({"apiGroup": group, "kind": kind, "names": names})
            pr.revision["children"] = kept
        return claimed

    def _roll(
        self,
        revisions: Sequence[_ParentRevision],
        claimed: dict[tuple[str, str], dict[str, _ParentRevision]],
        observed: Mapping[ChildKey, Mapping[str, Any]],
    ) -> bool:
        latest = revisions[0]
        for key, desired in latest.desired.items():
            group, kind, name = key
            if self._rolling(group, kind) is None:
                continue
            by_name = claimed.setdefault((group, kind), {})
            holder = by_name.get(name)
            if holder is None:
                latest.add(group, kind, name)  # a new child: nothing to roll
                by_name[name] = latest
            elif holder is not latest:
                current = observed.get(key)
                if current is not None and not differs(current, desired):
                    # It already is what the latest wants: moving it changes nothing.
                    latest.add(group, kind, name)
                    holder.remove(group, kind, name)
                    by_name[name] = latest
        for key in latest.desired:
            group, kind, name = key
            if self._rolling(group, kind) is None:
                continue
            if claimed.get((group, kind), {}).get(name) is latest:
                continue
            waiting = self._blocked(latest, observed)
            if waiting is not None:
                self._condition(latest, "False", "RolloutWaiting", waiting)
                return False
            latest.add(group, kind, name)
            for pr in revisions[1:]:
                pr.remove(group, kind, name)
            self._condition(latest, "False", "RolloutProgressing", f"updating {kind} {name}")
            return True
        name = latest.revision["metadata"]["name"]
        self._condition(latest, "True", "OnLatestRevision", f"latest ControllerRevision: {name}")
        return False

    def _blocked(
        self, latest: _ParentRevision, observed: Mapping[ChildKey, Mapping[str, Any]]
    ) -> str | None:
        """Why the rollout must wait for the children the latest revision holds, or None."""
        for entry in latest.revision.get("children") or []:
            group, kind = str(entry.get("apiGroup") or ""), str(entry.get("kind") or "")
            child_type = self._rolling(group, kind)
            if child_type is None:
                continue
            for name in entry.get("names") or []:
                child = observed.get((group, kind, name))
                if child is None:
                    return f"missing child {kind} {name}"
                desired = latest.desired.get((group, kind, name))
                if desired is None or differs(child, desired):
                    return f"child {kind} {name} is not updated yet"
                if child_type.method == "RollingInPlace":
                    status = child.get("status")
                    observed_generation = (
                        status.get("observedGeneration") if isinstance(status, Mapping) else None
                    )
                    generation = child["metadata"].get("generation") or 0
                    seen = observed_generation if isinstance(observed_generation, int) else 0
                    if 0 < seen < generation:
                        return (
                            f"child {kind} {name} with RollingInPlace update strategy hasn't "
                            "observed latest spec"
                        )
                failure = child_type.status_check_failure(child)
                if failure is not None:
                    return f"child {kind} {name} failed status check: {failure}"
        return None

    @staticmethod
    def _condition(latest: _ParentRevision, status: str, reason: str, message: str) -> None:
        response = latest.response
        response.status = dict(response.status or {})
        condition = {"type": UPDATED_CONDITION, "status": status, "reason": reason}
        if message:
            condition["message"] = message
        conditions = list(response.status.get("conditions") or [])
        for index, existing in enumerate(conditions):
            if isinstance(existing, Mapping) and existing.get("type") == UPDATED_CONDITION:
                conditions[index] = condition
                break
        else:
            conditions.append(condition)
        response.status["conditions"] = conditions

    def _aggregate(self, revisions: Sequence[_ParentRevision]) -> CompositeResponse:
        """The latest revision's answer, with each child an older revision holds in that
        revision's form; the smallest resync asked for; finalized when all agree."""
        latest = revisions[0]
        held: dict[ChildKey, dict[str, Any]] = {}
        for pr in revisions[1:]:
            for entry in pr.revision.get("children") or []:
                for name in entry.get("names") or []:
                    key = (str(entry.get("apiGroup") or ""), str(entry.get("kind") or ""), name)
                    if key in pr.desired:
                        held[key] = pr.desired[key]
        children = [held.get(key, child) for key, child in latest.desired.items()]
        resyncs = [pr.response.resync_after_seconds for pr in revisions]
        positive = [seconds for seconds in resyncs if seconds > 0]
        return CompositeResponse(
            status=latest.response.status,
            children=children,
            resync_after_seconds=min(positive) if positive else 0.0,
            finalized=all(pr.response.finalized for pr in revisions),
        )

    # ----- the ControllerRevision objects -----

    def _extra_labels(self) -> dict[str, str]:
        return {
            LABEL_API_GROUP: self.parent_resource.group,
            LABEL_RESOURCE: self.parent_resource.resource,
        }

    def _new_revision(self, parent: Mapping[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
        metadata = parent["metadata"]
        labels: dict[str, str]
        if self.generate_selector:
            labels = {"controller-uid": metadata["uid"]}
        else:
            template = ((parent.get("spec") or {}).get("template") or {}).get("metadata") or {}
            template_labels = template.get("labels") if isinstance(template, Mapping) else None
            labels = dict(template_labels) if isinstance(template_labels, Mapping) else {}
        labels.update(self._extra_labels())
        return {
            "apiVersion": REVISION_API_VERSION,
            "kind": REVISION_KIND,
            "metadata": {
                "name": revision_name(self.parent_resource, metadata["uid"], go_json(patch)),
                "namespace": metadata["namespace"],
                "labels": labels,
                "ownerReferences": [controller_reference_to(parent)],
            },
            "parentPatch": patch,
        }

    async def _claim(
        self, env: Any, parent: Mapping[str, Any], selector: LabelSelector
    ) -> list[dict[str, Any]]:
        """The parent's revisions: those it controls with the labels of its type, plus the
        uncontrolled ones that match its selector, adopted."""
        metadata = parent["metadata"]
        uid, namespace = metadata["uid"], metadata["namespace"]
        extra = self._extra_labels()
        try:
            owned = await env.cache.list_cached(
                REVISION_API_VERSION, REVISION_KIND, namespace, index=(OWNER_UID_INDEX, uid)
            )
            candidates = (
                []
                if metadata.get("deletionTimestamp")
                else await env.cache.list_cached(
                    REVISION_API_VERSION, REVISION_KIND, namespace, label_selector=extra
                )
            )
        except (ApiError, LookupError) as error:
            raise HookError(
                f"cannot read ControllerRevisions ({REVISION_API_VERSION}), which rolling "
                f"updates keep (setpoint install metacontroller installs them): {error}"
            ) from None
        result = []
        for obj in owned:
            reference = obj.controller_reference
            labels = obj.labels
            if reference is None or reference.uid != uid:
                continue
            if all(labels.get(k) == v for k, v in extra.items()):
                result.append(obj.to_dict())
        reference_to_parent = controller_reference_to(parent)
        for obj in candidates:
            if obj.controller_reference is not None or obj.deletion_timestamp:
                continue
            if not selector.matches(obj.labels):
                continue
            references = [r.to_dict() for r in obj.owner_references] + [reference_to_parent]
            try:
                adopted = await env.client.patch(
                    REVISION_API_VERSION,
                    REVISION_KIND,
                    obj.name,
                    [
                        {"op": "test", "path": "/metadata/uid", "value": obj.uid},
                        {"op": "add", "path": "/metadata/ownerReferences", "value": references},
                    ],
                    namespace=namespace,
                    patch_type="json",
                )
            except NotFound:
                continue
            result.append(adopted)
        return result

    async def _manage(
        self,
        env: Any,
        observed: Sequence[Mapping[str, Any]],
        desired: Sequence[dict[str, Any]],
    ) -> None:
        """Delete the revisions not desired, create the new ones, update those whose children
        changed; all before any child is written, as Metacontroller does."""
        wanted = {revision["metadata"]["name"] for revision in desired}
        by_name = {}
        for revision in observed:
            metadata = revision["metadata"]
            by_name[metadata["name"]] = revision
            if metadata["name"] in wanted:
                continue
            try:
                await env.client.delete(
                    REVISION_API_VERSION,
                    REVISION_KIND,
                    metadata["name"],
                    namespace=metadata.get("namespace"),
                    preconditions=Preconditions(uid=metadata.get("uid")),
                )
            except (NotFound, Conflict):
                pass
        for revision in desired:
            if not revision.get("children"):
                revision.pop("children", None)  # omitempty, as Metacontroller writes it
            old = by_name.get(revision["metadata"]["name"])
            try:
                if old is None:
                    await env.client.create(revision)
                elif not json_equal(old.get("children") or [], revision.get("children") or []):
                    await env.client.update(revision)
            except AlreadyExists:
                raise HookError(
                    f"ControllerRevision {revision['metadata']['name']} exists and is not "
                    "this parent's"
                ) from None
            except ApiError as error:
                raise HookError(
                    f"cannot write ControllerRevision {revision['metadata']['name']}: {error}"
                ) from None
