"""The path items of one served resource, as kube-apiserver's OpenAPI lists them.

Each operation carries ``x-kubernetes-action`` and ``x-kubernetes-group-version-kind``; writes
carry the ``dryRun``, ``fieldManager`` and ``fieldValidation`` query parameters (kubectl's
``--validate=strict`` looks for ``fieldValidation`` on the PATCH of the kind), and PATCH lists
the patch media types the resource accepts (kubectl apply builds a strategic merge patch only
when ``application/strategic-merge-patch+json`` is among them: built-ins, not custom
resources).
"""

from __future__ import annotations

from typing import Any, Final

from setpoint.cluster.apiserver.registry.served_resources import ServedResource

PATCH_COMPONENT: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
STATUS_COMPONENT: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
DELETE_OPTIONS_COMPONENT: Final = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
_JSON: Final = "application/json"
_YAML: Final = "application/yaml"
BUILTIN_PATCH_TYPES: Final = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
)
CUSTOM_PATCH_TYPES: Final = (
    "application/apply-patch+yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
)


def _query(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": type_, "uniqueItems": True},
    }


_DRY_RUN: Final = _query(
    "dryRun",
    "When present, indicates that modifications should not be persisted. Valid values are: "
    "- All: all dry run stages will be processed",
)
_FIELD_MANAGER: Final = _query(
    "fieldManager", "fieldManager is a name associated with the actor or entity making changes."
)
_FIELD_VALIDATION: Final = _query(
    "fieldValidation",
    "fieldValidation instructs the server on how to handle objects in the request containing "
    "unknown or duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict",
)
_FORCE: Final = _query(
    "force",
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting '
    "fields owned by other people. Force flag must be unset for non-apply patch requests.",
    "boolean",
)
_PRETTY: Final = _query("pretty", "If 'true', then the output is pretty printed.")


def _path_parameter(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "description": description,
        "required": True,
        "schema": {"type": "string", "uniqueItems": True},
    }


def _content(reference: str, media_types: tuple[str, ...] = (_JSON, _YAML)) -> dict[str, Any]:
    return {media: {"schema": {"$ref": reference}} for media in media_types}


def _camel(text: str) -> str:
    parts = [part for part in text.replace(".", "-").split("-") if part]
    return "".join(part[:1].upper() + part[1:] for part in parts)


class ResourcePaths:
    """Builds the path items of one resource; component references use ``prefix``."""

    def __init__(self, resource: ServedResource, kind_component: str, prefix: str) -> None:
        self.resource = resource
        self.kind_ref = prefix + kind_component
        self.prefix = prefix
        group = resource.group.split(".")[0] if resource.group else "core"
        self.tag = f"{(resource.group or 'core').replace('.', '_')}_{resource.version}"
        self._id_suffix = (
            f"{_camel(group)}{_camel(resource.version)}"
            f"{'Namespaced' if resource.namespaced else ''}{resource.kind}"
        )
        self.gvk = {"group": resource.group, "kind": resource.kind, "version": resource.version}

    def _operation(
        self,
        method: str,
        action: str,
        description: str,
        parameters: list[dict[str, Any]],
        *,
        body: tuple[str, ...] | None = None,
        body_ref: str | None = None,
        responses: dict[str, Any] | None = None,
        suffix: str = "",
    ) -> dict[str, Any]:
        operation: dict[str, Any] = {
            "description": description,
            "operationId": f"{method}{self._id_suffix}{suffix}",
            "tags": [self.tag],
            "parameters": parameters,
            "responses": responses
            or {"200": {"description": "OK", "content": _content(self.kind_ref)}},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": dict(self.gvk),
        }
        if body is not None:
            operation["requestBody"] = {
                "content": {
                    media: {"schema": {"$ref": body_ref or self.kind_ref}} for media in body
                },
                "required": True,
            }
        return operation

    def path_items(self) -> dict[str, dict[str, Any]]:
        """Path → path item, for the collection, one object and its subresources."""
        resource = self.resource
        root = f"/apis/{resource.group}/{resource.version}" if resource.group else "/api/v1"
        scope = f"{root}/namespaces/{{namespace}}" if resource.namespaced else root
        collection = f"{scope}/{resource.plural}"
        item = f"{collection}/{{name}}"
        kind = resource.kind
        verbs = set(resource.verbs)
        writes = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
        namespace = (
            [
                _path_parameter(
                    "namespace", "object name and auth scope, such as for teams and projects"
                )
            ]
            if resource.namespaced
            else []
        )
        found: dict[str, dict[str, Any]] = {}
        collection_item: dict[str, Any] = {}
        if "list" in verbs:
            collection_item["get"] = self._operation(
                "list", "list", f"list or watch objects of kind {kind}", [], suffix=""
            )
        if "create" in verbs:
            collection_item["post"] = self._operation(
                "create", "post", f"create a {kind}", list(writes), body=(_JSON, _YAML)
            )
        if "deletecollection" in verbs:
            collection_item["delete"] = self._operation(
                "deletecollection",
                "deletecollection",
                f"delete collection of {kind}",
                [_DRY_RUN],
                body=(_JSON,),
                body_ref=self.prefix + DELETE_OPTIONS_COMPONENT,
                responses={
                    "200": {
                        "description": "OK",
                        "content": _content(self.prefix + STATUS_COMPONENT),
                    }
                },
            )
        if collection_item:
            collection_item["parameters"] = [*namespace, _PRETTY]
            found[collection] = collection_item
        item_ops: dict[str, Any] = {}
        if "get" in verbs:
            item_ops["get"] = self._operation("read", "get", f"read the specified {kind}", [])
        if "update" in verbs:
            item_ops["put"] = self._operation(
                "replace", "put", f"replace the specified {kind}", list(writes), body=(_JSON, _YAML)
            )
        if "patch" in verbs:
            item_ops["patch"] = self._patch(f"partially update the specified {kind}", "")
        if "delete" in verbs:
            item_ops["delete"] = self._operation(
                "delete",
                "delete",
                f"delete a {kind}",
                [_DRY_RUN],
                body=(_JSON,),
                body_ref=self.prefix + DELETE_OPTIONS_COMPONENT,
            )
        if item_ops:
            item_ops["parameters"] = [
                _path_parameter("name", f"name of the {kind}"),
                *namespace,
                _PRETTY,
            ]
            found[item] = item_ops
        # ``approval``: a CertificateSigningRequest's, shaped as ``status``.
        for sub in ("status", "approval"):
            if sub not in resource.subresources:
                continue
            suffix = sub.capitalize()
            found[f"{item}/{sub}"] = {
                "get": self._operation(
                    "read", "get", f"read {sub} of the specified {kind}", [], suffix=suffix
                ),
                "put": self._operation(
                    "replace",
                    "put",
                    f"replace {sub} of the specified {kind}",
                    list(writes),
                    body=(_JSON, _YAML),
                    suffix=suffix,
                ),
                "patch": self._patch(f"partially update {sub} of the specified {kind}", suffix),
                "parameters": [_path_parameter("name", f"name of the {kind}"), *namespace, _PRETTY],
            }
        return found

    def _patch(self, description: str, suffix: str) -> dict[str, Any]:
        media = CUSTOM_PATCH_TYPES if self.resource.is_custom else BUILTIN_PATCH_TYPES
        return self._operation(
            "patch",
            "patch",
            description,
            [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION, _FORCE],
            body=media,
            body_ref=self.prefix + PATCH_COMPONENT,
            suffix=suffix,
        )
