"""CustomResourceDefinition defaulting, validation, naming, discovery and scale helpers."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from setpoint.cluster.apiserver import crds

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}},
        "status": {
            "type": "object",
            "properties": {"replicas": {"type": "integer"}, "selector": {"type": "string"}},
        },
    },
}


def make_crd(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": copy.deepcopy(SCHEMA)},
                }
            ],
        },
    }
    base["spec"].update(spec)
    return crds.default_crd(base)


def messages(crd: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    return [error.message for error in crds.validate_crd(crd, old)]


# --- defaulting ---


def test_defaults() -> None:
    crd = make_crd()
    assert crd["spec"]["names"] == {
        "plural": "widgets",
        "kind": "Widget",
        "singular": "widget",
        "listKind": "WidgetList",
    }
    assert crd["spec"]["conversion"] == {"strategy": "None"}
    assert crd["status"] == {"storedVersions": ["v1"]}


def test_defaults_keep_given_values_and_do_not_touch_the_input() -> None:
    given = make_crd()
    given["spec"]["names"]["singular"] = "wid"
    given["spec"]["names"]["listKind"] = "Widgets"
    snapshot = copy.deepcopy(given)
    defaulted = crds.default_crd(given)
    assert defaulted["spec"]["names"]["singular"] == "wid"
    assert defaulted["spec"]["names"]["listKind"] == "Widgets"
    assert given == snapshot


def test_webhook_service_port_defaults_to_443() -> None:
    crd = make_crd(
        conversion={
            "strategy": "Webhook",
            "webhook": {
                "clientConfig": {"service": {"name": "s", "namespace": "n"}},
                "conversionReviewVersions": ["v1"],
            },
        }
    )
    assert crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"]["port"] == 443
    assert messages(crd) == []


def test_stored_versions_accumulate_on_storage_change() -> None:
    crd = make_crd()
    crd["spec"]["versions"].append(
        {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": {}}}
    )
    crd["spec"]["versions"][0]["storage"] = False
    crd["spec"]["versions"][1]["storage"] = True
    assert crds.default_crd(crd)["status"]["storedVersions"] == ["v1", "v2"]


# --- validation ---


def test_a_good_crd_is_valid() -> None:
    assert messages(make_crd()) == []


Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Mutation:
    def mutate(crd: dict[str, Any]) -> None:
        target = crd
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value

    return mutate


_DELETE = object()


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (
            _set("metadata.name", "gadgets.example.com"),
            [
                'metadata.name: Invalid value: "gadgets.example.com": must be '
                'spec.names.plural+"."+spec.group'
            ],
        ),
        (
            _set("spec.group", ""),
            [
                'metadata.name: Invalid value: "widgets.example.com": must be '
                'spec.names.plural+"."+spec.group',
                "spec.group: Required value",
            ],
        ),
        (
            lambda c: (
                c["spec"].update(group="example"),
                c["metadata"].update(name="widgets.example"),
            ),
            ['spec.group: Invalid value: "example": should be a domain with at least one dot'],
        ),
        (
            _set("spec.scope", "Global"),
            ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
        ),
        (_set("spec.scope", ""), ["spec.scope: Required value"]),
        (
            _set("spec.versions.0.storage", False),
            [
                "spec.versions: Invalid value: []apiextensions.CustomResourceDefinitionVersion{"
                'apiextensions.CustomResourceDefinitionVersion{Name:"v1", Served:true, '
                "Storage:false, ...}}: must have exactly one version marked as storage version"
            ],
        ),
        (
            _set("spec.versions.0.name", "V1"),
            [
                'spec.versions[0].name: Invalid value: "V1": a DNS-1035 label must consist of '
                "lower "
                "case alphanumeric characters or '-', start with an alphabetic character, and end "
                "with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                'status.storedVersions: Invalid value: []string{"v1"}: must have the storage '
                "version V1",
                'status.storedVersions[0]: Invalid value: "v1": must appear in spec.versions',
            ],
        ),
        (
            _set("spec.versions.0.schema", _DELETE),
            ["spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required"],
        ),
        (
            _set("spec.names.kind", ""),
            ["spec.names.kind: Required value"],
        ),
        (
            _set("spec.names.shortNames", ["W"]),
            [
                'spec.names.shortNames[0]: Invalid value: "W": a DNS-1035 label must consist of '
                "lower case alphanumeric characters or '-', start with an alphabetic character, "
                "and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex "
                "used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ],
        ),
        (
            _set("spec.names.listKind", "Widget"),
            ['spec.names.listKind: Invalid value: "Widget": kind and listKind may not be the same'],
        ),
        (
            _set("spec.versions.0.deprecationWarning", "old"),
            [
                'spec.versions[0].deprecationWarning: Invalid value: "old": can only be set for '
                "deprecated versions"
            ],
        ),
        (
            _set(
                "spec.versions.0.subresources",
                {"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.x"}},
            ),
            [
                'spec.subresources.scale.specReplicasPath: Invalid value: "spec.replicas": must '
                "be a simple json path starting with .",
                'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.x": should be '
                "a json path under .status",
            ],
        ),
        (
            _set(
                "spec.versions.0.additionalPrinterColumns",
                [{"name": "Age", "type": "datetime", "jsonPath": ".metadata.creationTimestamp"}],
            ),
            [
                'spec.additionalPrinterColumns[0].type: Invalid value: "datetime": must be one of '
                "boolean,date,integer,number,string"
            ],
        ),
        (
            _set("spec.conversion", {"strategy": "Magic"}),
            [
                'spec.conversion.strategy: Unsupported value: "Magic": supported values: '
                '"None", "Webhook"'
            ],
        ),
        (
            _set("spec.conversion", {"strategy": "Webhook"}),
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is "
                "set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value: must specify at least "
                "one version",
            ],
        ),
        (
            _set(
                "spec.conversion",
                {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"url": "http://127.0.0.1:9443/convert?x=1"},
                        "conversionReviewVersions": ["v2", "v2", "V3"],
                    },
                },
            ),
            [
                "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is "
                "the only allowed URL scheme",
                'spec.conversion.webhookClientConfig.url: Invalid value: "x=1": query '
                "parameters are not permitted in the URL",
                'spec.conversion.conversionReviewVersions[1]: Invalid value: "v2": duplicate '
                "version",
                'spec.conversion.conversionReviewVersions[2]: Invalid value: "V3": a DNS-1035 '
                "label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  "
                "or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                'spec.conversion.conversionReviewVersions: Invalid value: []string{"v2", "v2", '
                '"V3"}: must include at least one of v1, v1beta1',
            ],
        ),
        (
            _set(
                "spec.conversion",
                {
                    "strategy": "Webhook",
                    "webhook": {
                        "clientConfig": {"service": {"name": "", "namespace": "ns"}},
                        "conversionReviewVersions": ["v1"],
                    },
                },
            ),
            [
                "spec.conversion.webhookClientConfig.service.name: Required value: service name "
                "is required"
            ],
        ),
        (
            _set("spec.preserveUnknownFields", True),
            [
                "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set "
                "x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
            ],
        ),
        (
            _set("spec.versions.0.schema.openAPIV3Schema.properties.spec.properties.bad", {}),
            [
                "spec.validation.openAPIV3Schema.properties[spec].properties[bad].type: Required "
                "value: must not be empty for specified object fields"
            ],
        ),
        (
            lambda c: (
                c["spec"].update(group="stable.k8s.io"),
                c["metadata"].update(name="widgets.stable.k8s.io"),
            ),
            [
                "metadata.annotations[api-approved.kubernetes.io]: Required value: protected "
                'groups must have approval annotation "api-approved.kubernetes.io", see '
                "https://github.com/kubernetes/enhancements/pull/1111"
            ],
        ),
    ],
)
def test_invalid_crds(mutate: Mutation, expected: list[str]) -> None:
    crd = make_crd()
    mutate(crd)
    assert messages(crd) == expected


def test_per_version_schemas_are_reported_per_version() -> None:
    crd = make_crd()
    second = copy.deepcopy(crd["spec"]["versions"][0])
    second.update(name="v2", storage=False)
    second["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["bad"] = {}
    crd["spec"]["versions"].append(second)
    assert messages(crd) == [
        "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[bad].type: Required "
        "value: must not be empty for specified object fields"
    ]


def test_duplicate_versions() -> None:
    crd = make_crd()
    crd["spec"]["versions"].append(dict(crd["spec"]["versions"][0], storage=False))
    assert [m.split(": ")[-1] for m in messages(crd)] == ["must contain unique version names"]


def test_group_and_plural_are_immutable() -> None:
    old = make_crd()
    new = make_crd(group="other.com")
    new["metadata"]["name"] = "widgets.other.com"
    assert messages(new, old) == ['spec.group: Invalid value: "other.com": field is immutable']


def test_approved_protected_group() -> None:
    crd = make_crd(group="stable.k8s.io")
    crd["metadata"] = {
        "name": "widgets.stable.k8s.io",
        "annotations": {"api-approved.kubernetes.io": "https://github.com/kubernetes/x/pull/1"},
    }
    assert messages(crd) == []
    crd["metadata"]["annotations"]["api-approved.kubernetes.io"] = "unapproved, testing"
    assert messages(crd) == []


# --- naming ---


def _accepted(crd: dict[str, Any], names: dict[str, Any], name: str) -> dict[str, Any]:
    other = copy.deepcopy(crd)
    other["metadata"]["name"] = name
    other["status"]["acceptedNames"] = names
    return other


def test_names_accepted_without_conflicts() -> None:
    crd = make_crd(
        names={"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]}
    )
    names, conditions = crds.accept_names(crd, [], now="2024-01-01T00:00:00Z")
    assert names == {
        "plural": "widgets",
        "singular": "widget",
        "shortNames": ["wd"],
        "kind": "Widget",
        "listKind": "WidgetList",
        "categories": ["all"],
    }
    assert conditions == [
        {
            "type": "NamesAccepted",
            "status": "True",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
            "reason": "NoConflicts",
            "message": "no conflicts found",
        },
        {
            "type": "Established",
            "status": "True",
            "lastTransitionTime": "2024-01-01T00:00:00Z",
            "reason": "InitialNamesAccepted",
            "message": "the initial names have been accepted",
        },
    ]


@pytest.mark.parametrize(
    ("other_names", "reason", "message"),
    [
        ({"plural": "widgets"}, "PluralConflict", '"widgets" is already in use'),
        ({"plural": "x", "singular": "widget"}, "SingularConflict", '"widget" is already in use'),
        ({"plural": "widget"}, "SingularConflict", '"widget" is already in use'),
        ({"plural": "x", "shortNames": ["wd"]}, "ShortNamesConflict", '"wd" is already in use'),
        ({"plural": "x", "kind": "Widget"}, "KindConflict", '"Widget" is already in use'),
        (
            {"plural": "x", "listKind": "WidgetList"},
            "ListKindConflict",
            '"WidgetList" is already in use',
        ),
    ],
)
def test_name_conflicts(other_names: dict[str, Any], reason: str, message: str) -> None:
    crd = make_crd(names={"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]})
    other = _accepted(crd, other_names, "others.example.com")
    names, conditions = crds.accept_names(crd, [other], now="t")
    accepted, established = conditions
    assert (accepted["status"], accepted["reason"], accepted["message"]) == (
        "False",
        reason,
        message,
    )
    assert (established["status"], established["reason"], established["message"]) == (
        "False",
        "NotAccepted",
        "not all names are accepted",
    )
    conflicting = {
        "PluralConflict": "plural",
        "SingularConflict": "singular",
        "ShortNamesConflict": "shortNames",
        "KindConflict": "kind",
        "ListKindConflict": "listKind",
    }[reason]
    assert conflicting not in names


def test_names_of_other_groups_and_of_itself_do_not_conflict() -> None:
    crd = make_crd()
    same_name = _accepted(crd, {"plural": "widgets", "kind": "Widget"}, "widgets.example.com")
    other_group = _accepted(crd, {"plural": "widgets", "kind": "Widget"}, "widgets.other.com")
    other_group["spec"]["group"] = "other.com"
    _, conditions = crds.accept_names(crd, [same_name, other_group], now="t")
    assert conditions[0]["reason"] == "NoConflicts"


def test_already_accepted_names_stay_accepted_and_keep_transition_times() -> None:
    crd = make_crd()
    names, conditions = crds.accept_names(crd, [], now="t1")
    crd["status"].update(acceptedNames=names, conditions=conditions)
    again, later = crds.accept_names(crd, [], now="t2")
    assert again == names
    assert [c["lastTransitionTime"] for c in later] == ["t1", "t1"]


def test_an_established_crd_stays_established_on_a_later_conflict() -> None:
    crd = make_crd()
    names, conditions = crds.accept_names(crd, [], now="t1")
    crd["status"].update(acceptedNames=names, conditions=conditions)
    crd["spec"]["names"]["shortNames"] = ["taken"]
    other = _accepted(crd, {"plural": "x", "shortNames": ["taken"]}, "x.example.com")
    _, later = crds.accept_names(crd, [other], now="t2")
    assert [(c["type"], c["status"]) for c in later] == [
        ("NamesAccepted", "False"),
        ("Established", "True"),
    ]


# --- versions, discovery, subresources ---


def _two_versions() -> dict[str, Any]:
    crd = make_crd(
        names={"plural": "widgets", "kind": "Widget", "shortNames": ["wd"], "categories": ["all"]},
        scope="Cluster",
    )
    v1 = crd["spec"]["versions"][0]
    v1["subresources"] = {
        "status": {},
        "scale": {
            "specReplicasPath": ".spec.replicas",
            "statusReplicasPath": ".status.replicas",
            "labelSelectorPath": ".status.selector",
        },
    }
    v2 = {
        "name": "v2",
        "served": True,
        "storage": False,
        "schema": {"openAPIV3Schema": {"type": "object"}},
    }
    v3 = {"name": "v3", "served": False, "storage": False}
    crd["spec"]["versions"] += [v2, v3]
    return crd


def test_version_helpers() -> None:
    crd = _two_versions()
    assert crds.storage_version(crd) == "v1"
    assert crds.served_versions(crd) == ["v1", "v2"]
    assert crds.version_schema(crd, "v2") == {"type": "object"}
    assert crds.version_schema(crd, "v3") is None
    assert crds.version_schema(crd, "v9") is None
    assert crds.has_status_subresource(crd, "v1")
    assert not crds.has_status_subresource(crd, "v2")
    assert crds.scale_subresource(crd, "v2") is None
    assert not crds.is_namespaced(crd)
    compiled = crds.compiled_schema(crd, "v1")
    assert compiled is crds.compiled_schema(crd, "v1")  # compiled once
    assert [e.field for e in compiled.validate({"spec": {"replicas": "x"}})] == ["spec.replicas"]


def test_resource_infos() -> None:
    infos = crds.resource_infos(_two_versions())
    assert [(i.version, i.subresources) for i in infos] == [("v1", ("status", "scale")), ("v2", ())]
    first = infos[0]
    assert (first.group, first.kind, first.resource, first.singular, first.list_kind) == (
        "example.com",
        "Widget",
        "widgets",
        "widget",
        "WidgetList",
    )
    assert first.namespaced is False
    assert first.short_names == ("wd",)
    assert first.categories == ("all",)
    assert first.verbs == (
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "create",
        "update",
        "watch",
    )
    terminating = crds.resource_infos(_two_versions(), terminating=True)
    assert terminating[0].verbs == ("delete", "deletecollection", "get", "list", "watch")


def test_resource_infos_use_accepted_names() -> None:
    crd = make_crd()
    crd["status"]["acceptedNames"] = {
        "plural": "widgets",
        "singular": "widget",
        "kind": "Widget",
        "listKind": "WidgetList",
    }
    crd["spec"]["names"]["shortNames"] = ["not-yet-accepted"]
    assert crds.resource_infos(crd)[0].short_names == ()


@pytest.mark.parametrize(
    ("obj", "path", "value", "found"),
    [
        ({"spec": {"replicas": 3}}, ".spec.replicas", 3, True),
        ({"spec": {"replicas": 3}}, "spec.replicas", 3, True),
        ({"spec": {}}, ".spec.replicas", None, False),
        ({"spec": 5}, ".spec.replicas", None, False),
    ],
)
def test_read_path(obj: dict[str, Any], path: str, value: Any, found: bool) -> None:
    assert crds.read_path(obj, path) == (value, found)


def test_write_path_creates_parents() -> None:
    obj: dict[str, Any] = {"spec": "scalar"}
    crds.write_path(obj, ".spec.scale.replicas", 4)
    assert obj == {"spec": {"scale": {"replicas": 4}}}


def test_scale_of() -> None:
    scale_spec = crds.scale_subresource(_two_versions(), "v1")
    assert scale_spec is not None
    obj = {
        "metadata": {
            "name": "w",
            "namespace": "ns",
            "uid": "u",
            "resourceVersion": "7",
            "labels": {},
        },
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=w"},
    }
    assert crds.scale_of(obj, scale_spec) == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {"name": "w", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
        "spec": {"replicas": 3},
        "status": {"replicas": 2, "selector": "app=w"},
    }
    empty = crds.scale_of({"metadata": {"name": "w"}}, scale_spec)
    assert empty["spec"] == {}
    assert empty["status"] == {"replicas": 0}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ({"spec": {"replicas": 1}, "status": {"replicas": 0}}, []),
        (
            {"spec": {"replicas": -1}},
            [".spec.replicas: Invalid value: -1: should be a non-negative integer"],
        ),
        (
            {"spec": {"replicas": 2**31}},
            [
                ".spec.replicas: Invalid value: 2147483648: should be less than or equal to "
                "2147483647"
            ],
        ),
        (
            {"status": {"replicas": "x"}},
            [
                ".status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the "
                "type string, expected int64"
            ],
        ),
        (
            {"status": {"selector": 5}},
            [
                '.status.selector: Invalid value: "": .status.selector accessor error: 5 is of '
                "the type int64, expected string"
            ],
        ),
    ],
)
def test_validate_scale_paths(obj: dict[str, Any], expected: list[str]) -> None:
    scale_spec = crds.scale_subresource(_two_versions(), "v1")
    assert scale_spec is not None
    assert [e.message for e in crds.validate_scale_paths(obj, scale_spec)] == expected


def test_terminating_condition() -> None:
    condition = crds.terminating_condition("t")
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
    )


SELECTABLE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "color": {"type": "string", "enum": ["red"]},
                "size": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            },
        },
        "metadata": {"type": "object"},
    },
}


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        ([".spec.color", ".spec.size", ".spec.labels.team"], []),
        (
            [".spec.nope"],
            [
                'spec.selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid '
                "path: does not refer to a valid field"
            ],
        ),
        (
            [".spec.tags"],
            [
                'spec.selectableFields[0].jsonPath: Invalid value: ".spec.tags": must point to a '
                "field of type string, boolean or integer. Enum string fields and strings with "
                "formats are allowed."
            ],
        ),
        (
            ["spec.color"],
            [
                'spec.selectableFields[0].jsonPath: Invalid value: "spec.color": is an invalid '
                "path: expected [ or . but got: spec"
            ],
        ),
        (
            [".spec.labels['a']"],
            [
                "spec.selectableFields[0].jsonPath: Invalid value: \".spec.labels['a']\": is an "
                "invalid path: array notation is not allowed"
            ],
        ),
        (
            [".spec.color", ".spec.color"],
            ['spec.selectableFields[1].jsonPath: Duplicate value: ".spec.color"'],
        ),
        ([""], ["spec.selectableFields[0].jsonPath: Required value"]),
        (
            [f".spec.labels.k{i}" for i in range(9)],
            ["spec.selectableFields: Too many: 9: must have at most 8 items"],
        ),
    ],
)
def test_selectable_fields(paths: list[str], expected: list[str]) -> None:
    crd = make_crd()
    version = crd["spec"]["versions"][0]
    version["schema"]["openAPIV3Schema"] = copy.deepcopy(SELECTABLE_SCHEMA)
    version["selectableFields"] = [{"jsonPath": path} for path in paths]
    assert messages(crd) == expected
    assert crds.selectable_fields(crd, "v1") == [p for p in paths if p]


def test_selectable_fields_may_not_point_into_metadata() -> None:
    crd = make_crd()
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
    }
    crd["spec"]["versions"][0]["selectableFields"] = [{"jsonPath": ".metadata.name"}]
    assert messages(crd) == [
        'spec.selectableFields[0].jsonPath: Invalid value: ".metadata.name": must not point to '
        "fields in metadata"
    ]


@pytest.mark.parametrize(
    ("names", "ordered"),
    [
        (["v1", "v2", "v1beta1"], ["v2", "v1", "v1beta1"]),
        (
            ["v1alpha1", "v1beta2", "v1beta1", "v10", "v2"],
            ["v10", "v2", "v1beta2", "v1beta1", "v1alpha1"],
        ),
        (["foo", "v1", "bar"], ["v1", "bar", "foo"]),
    ],
)
def test_versions_by_priority(names: list[str], ordered: list[str]) -> None:
    assert crds.versions_by_priority(names) == ordered


def test_deprecation_warnings() -> None:
    crd = make_crd()
    old = {"name": "v1beta1", "served": True, "storage": False, "deprecated": True}
    custom = {"name": "v1alpha1", "served": True, "storage": False, "deprecated": True}
    custom["deprecationWarning"] = "use v1, please"
    crd["spec"]["versions"] += [old, custom]
    assert crds.deprecation_warning(crd, "v1") is None
    assert crds.deprecation_warning(crd, "v9") is None
    assert crds.deprecation_warning(crd, "v1beta1") == (
        "example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget"
    )
    assert crds.deprecation_warning(crd, "v1alpha1") == "use v1, please"
    crd["spec"]["versions"][0]["deprecated"] = True
    assert crds.deprecation_warning(crd, "v1") == "example.com/v1 Widget is deprecated"


def test_printer_columns() -> None:
    crd = make_crd()
    assert crds.printer_columns(crd, "v1") == [
        {
            "name": "Age",
            "type": "date",
            "description": "CreationTimestamp is a timestamp representing the server time when "
            "this object was created.",
            "jsonPath": ".metadata.creationTimestamp",
        }
    ]
    column = {"name": "Size", "type": "integer", "jsonPath": ".spec.replicas"}
    crd["spec"]["versions"][0]["additionalPrinterColumns"] = [column]
    assert crds.printer_columns(crd, "v1") == [column]
    assert crds.printer_columns(crd, "v9")[0]["name"] == "Age"
