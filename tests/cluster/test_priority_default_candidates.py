"""A pod without a PriorityClass name decodes only the stored classes whose JSON says
``"globalDefault":true``: the global default found among them is the one found among all."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setpoint.cluster.apiserver.kinds.pod_admission import _global_default
from setpoint.cluster.apiserver.kinds.pods import _GLOBAL_DEFAULT_JSON
from setpoint.cluster.apiserver.registry.selection import decode
from setpoint.cluster.apiserver.storage.codec import encode_json

_tricky_text = st.sampled_from(
    ["", "globalDefault", '"globalDefault":true', "globalDefault: true", "x"]
)
_classes = st.lists(
    st.builds(
        lambda name, value, default, description, annotations, policy: {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name, "annotations": annotations},
            **({"value": value} if value is not None else {}),
            **({"globalDefault": default} if default != "absent" else {}),
            **({"description": description} if description else {}),
            **({"preemptionPolicy": policy} if policy else {}),
        },
        st.text(alphabet="abcdefgh-", min_size=1, max_size=6),
        st.one_of(st.none(), st.integers(-(10**9), 10**9)),
        st.sampled_from([True, False, "absent", "true", 1, None]),
        _tricky_text,
        st.dictionaries(_tricky_text, _tricky_text, max_size=2),
        st.sampled_from([None, "Never", "PreemptLowerPriority"]),
    ),
    max_size=6,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(_classes)
def test_the_candidates_hold_the_global_default_of_all_classes(
    classes: list[dict[str, Any]],
) -> None:
    stored = [encode_json(c) for c in classes]
    every = _global_default([decode(value) for value in stored])
    candidates = _global_default([decode(v) for v in stored if _GLOBAL_DEFAULT_JSON in v])
    assert candidates == every
