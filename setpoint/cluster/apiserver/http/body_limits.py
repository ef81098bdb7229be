"""Limits on what a request body may expand into, checked as it is decoded.

The 3 MiB body limit alone does not bound the work or the stored size: YAML aliases expand a
few hundred bytes into gigabytes, and deep nesting overflows every recursive walk behind the
decoder (pruning, defaulting, validation). kube-apiserver refuses both at decode: its YAML
decoder fails "excessive aliasing" (the ratio rule of go-yaml v2, copied here) and its JSON
decoder a document nested deeper than its limit. This server's depth limit is lower than Go's
10,000, since Python recursion is shallower; no Kubernetes object comes near it.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from setpoint.api.status import StatusReason
from setpoint.cluster.apiserver import status_errors
from setpoint.cluster.apiserver.status_errors import APIError
from setpoint.cluster.apiserver.storage import ValueTooLargeError

#: Deepest nesting of objects and arrays a body (or a patched object) may have.
MAX_NESTING_DEPTH: Final = 100
#: kube-apiserver's ``--json-patch-max-copy-bytes`` default: the request body limit (3 MiB).
MAX_PATCH_COPY_BYTES: Final = 3 * 1024 * 1024
#: Upstream ``maxJSONPatchOperations`` (``handlers/patch.go``).
MAX_JSON_PATCH_OPERATIONS: Final = 10_000
#: go-yaml v2 checks the alias ratio only past these counts (``decode.go``).
_ALIAS_COUNT_FLOOR: Final = 100
_DECODE_COUNT_FLOOR: Final = 1000
_RATIO_RANGE_LOW: Final = 400_000
_RATIO_RANGE_HIGH: Final = 4_000_000
#: Expanded YAML nodes refused whatever the ratio: far beyond any 3 MiB manifest.
MAX_YAML_EXPANDED_NODES: Final = 2_000_000

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def too_deep(what: str = "json") -> APIError:
    """400 for a body nested deeper than :data:`MAX_NESTING_DEPTH`."""
    return status_errors.bad_request(
        f"couldn't get version/kind; {what} parse error: exceeded max depth "
        f"(objects and arrays may nest at most {MAX_NESTING_DEPTH} levels here)"
    )


def nesting_depth_exceeded(value: Any, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether ``value`` nests objects/arrays more than ``limit`` deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))
    return False


def check_depth(value: Any, what: str = "json") -> None:
    """Raise the 400 of :func:`too_deep` when ``value`` nests too deep."""
    if nesting_depth_exceeded(value):
        raise too_deep(what)


def check_patch_operations(count: int) -> None:
    """413 for a JSON patch of more operations than upstream allows."""
    if count > MAX_JSON_PATCH_OPERATIONS:
        raise APIError(
            413,
            StatusReason.REQUEST_ENTITY_TOO_LARGE,
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
            f"got {count}",
        )


def checked_patch_result(patched: Any) -> Any:
    """``patched``, unless the patch made it nest too deep (422 naming the limit)."""
    if nesting_depth_exceeded(patched):
        raise APIError(
            422,
            StatusReason.INVALID,
            f"the patched object nests deeper than {MAX_NESTING_DEPTH} levels",
        )
    return patched


def object_too_large(error: ValueTooLargeError) -> APIError:
    """413 for an object too large to store (upstream passes etcd's refusal on)."""
    return APIError(413, StatusReason.REQUEST_ENTITY_TOO_LARGE, str(error))


def _allowed_alias_ratio(decode_count: int) -> float:
    if decode_count <= _RATIO_RANGE_LOW:
        return 0.99
    if decode_count >= _RATIO_RANGE_HIGH:
        return 0.10
    span = _RATIO_RANGE_HIGH - _RATIO_RANGE_LOW
    return 0.99 - 0.89 * (decode_count - _RATIO_RANGE_LOW) / span


def load_yaml(body: bytes) -> Any:
    """One YAML document as Python values; 400 for excessive aliasing or nesting.

    The document is composed into nodes first (aliases stay shared, so this is cheap), the
    expansion is counted the way go-yaml counts it, and only then are values built.
    """
    _check_event_depth(body)
    loader = _YAML_LOADER(body)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _check_event_depth(body: bytes) -> None:
    """Refuse deep nesting from the parser's events, before anything recursive sees it.

    libyaml's parser keeps its own stack, but the composer (C code) recurses once per level
    and crashes the process on a few hundred thousand levels: it must never see them.
    """
    depth = 0
    for event in yaml.parse(body, Loader=_YAML_LOADER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_NESTING_DEPTH:
                raise too_deep("yaml")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_expansion(root: yaml.Node) -> None:
    """go-yaml v2's alias rule over the composed graph, plus depth and a hard node cap."""
    seen: set[int] = set()
    decode_count = 0
    alias_count = 0
    # (node, depth, inside an alias expansion)
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, in_alias = stack.pop()
        # A node met again is an alias: its whole subtree is decoded again.
        if id(node) in seen:
            in_alias = True
        else:
            seen.add(id(node))
        decode_count += 1
        if in_alias:
            alias_count += 1
        if (
            alias_count > _ALIAS_COUNT_FLOOR
            and decode_count > _DECODE_COUNT_FLOOR
            and alias_count / decode_count > _allowed_alias_ratio(decode_count)
        ) or decode_count > MAX_YAML_EXPANDED_NODES:
            raise status_errors.bad_request(
                "couldn't get version/kind; yaml parse error: "
                "yaml: document contains excessive aliasing"
            )
        if isinstance(node, yaml.MappingNode):
            if depth > MAX_NESTING_DEPTH:
                raise too_deep("yaml")
            for key, value in reversed(node.value):
                stack.append((value, depth + 1, in_alias))
                stack.append((key, depth + 1, in_alias))
        elif isinstance(node, yaml.SequenceNode):
            if depth > MAX_NESTING_DEPTH:
                raise too_deep("yaml")
            for item in reversed(node.value):
                stack.append((item, depth + 1, in_alias))
