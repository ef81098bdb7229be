"""The informers' shortcuts give what the general paths give.

- A metadata-only read takes the key from the decoded view: the same as :func:`key_of` of the
  dict handed to handlers, and the packed form decodes to that dict.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.registry.object_operations import (
    FINALIZER_FOREGROUND,
    FINALIZER_ORPHAN,
)
from setpoint.cluster.controllers.framework.informers import (
    _read_metadata,
    _read_whole,
    decode_metadata,
    decode_object,
    key_of,
)
from setpoint.cluster.controllers.root_ca_publisher.controller import (
    ROOT_CA_CONFIG_MAP,
)

_names = st.sampled_from(["a", "b", "web-1", ROOT_CA_CONFIG_MAP, ""])
_namespaces = st.sampled_from(["default", "kube-system", "ns-1", ""])
_uids = st.sampled_from(["u1", "u2", "u3", "u4"])
_ref = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("ConfigMap"), "name": _names},
    optional={"uid": st.one_of(_uids, st.just("")), "controller": st.booleans()},
)
_metadata = st.fixed_dictionaries(
    {},
    optional={
        "name": _names,
        "namespace": _namespaces,
        "uid": _uids,
        "resourceVersion": st.integers(1, 99).map(str),
        "labels": st.dictionaries(st.sampled_from(["app", "tier"]), st.text(max_size=3)),
        "ownerReferences": st.one_of(st.just([]), st.lists(_ref, max_size=3)),
        "finalizers": st.lists(
            st.sampled_from([FINALIZER_ORPHAN, FINALIZER_FOREGROUND, "example.com/x"]),
            max_size=2,
        ),
        "deletionTimestamp": st.just("2026-11-27T00:00:00Z"),
        "managedFields": st.just([{"manager": "m", "operation": "Update"}]),
    },
)
_objects = st.builds(
    lambda metadata, data: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, **data},
    _metadata,
    st.dictionaries(st.just("data"), st.dictionaries(st.just("k"), st.text(max_size=5))),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_objects)
def test_a_read_keys_the_object_as_key_of_its_dict(obj: dict[str, Any]) -> None:
    stored = msgspec.json.encode(obj)
    handed, packed, key = _read_metadata(stored)
    assert handed == decode_metadata(stored)
    assert key == key_of(handed)
    assert isinstance(packed, bytes) and decode_metadata(packed) == handed
    whole, kept, whole_key = _read_whole(stored)
    assert whole == kept == decode_object(stored)
    assert whole_key == key_of(whole) == key
