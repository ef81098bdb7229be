"""The CR as extra vars, and Operator SDK's snake_case conversion (its own test cases)."""

from __future__ import annotations

import pytest

from setpoint.ansible.parameters import make_parameters, to_snake


@pytest.mark.parametrize(
    ("name", "snake"),
    [
        ("var", "var"),
        ("888", "888"),
        ("k8s_var", "k8s_var"),
        ("_k8s_var", "_k8s_var"),
        ("k8s var", "k8s_var"),
        ("ThisShouldHaveUnderscores", "_this_should_have_underscores"),
        ("sizeK8sBuckets", "size_k8s_buckets"),
        ("_CanYou_Handle_mixedVars", "_can_you_handle_mixed_vars"),
        ("this_should_be_a_noop", "this_should_be_a_noop"),
        ("egressIPs", "egress_ips"),
        ("egressIPsEgress", "egress_ips_egress"),
        ("egressIPsegress", "egress_ips_egress"),
        ("IPsegress", "_ips_egress"),
        ("egressIP", "egress_ip"),
        ("egressIPEgress", "egress_ip_egress"),
        ("egressIPegress", "egress_ip_egress"),
        ("URLegressIPEgressHTTP", "url_egress_ip_egress_http"),
        ("URLsegressIPsEgressHTTPs", "_urls_egress_ips_egress_https"),
        ("size", "size"),
        ("maxConnections", "max_connections"),
    ],
)
def test_to_snake_matches_operator_sdk(name: str, snake: str) -> None:
    assert to_snake(name) == snake


CR = {
    "apiVersion": "cache.example.com/v1alpha1",
    "kind": "Memcached",
    "metadata": {"name": "sample", "namespace": "ns", "uid": "u1"},
    "spec": {"size": 3, "maxConnections": 10, "podTemplate": {"nodeSelector": {"diskType": "ssd"}}},
}


def test_parameters_as_operator_sdk_passes_them() -> None:
    parameters = make_parameters(
        CR, group="cache.example.com", kind="Memcached", variables={"extra": True}
    )
    assert parameters["size"] == 3
    assert parameters["max_connections"] == 10
    # nested keys are converted too, values are not
    assert parameters["pod_template"] == {"node_selector": {"disk_type": "ssd"}}
    assert parameters["ansible_operator_meta"] == {"name": "sample", "namespace": "ns"}
    assert parameters["_cache_example_com_memcached"] == CR
    assert parameters["_cache_example_com_memcached_spec"] == CR["spec"]
    assert parameters["extra"] is True


def test_keeping_field_names() -> None:
    parameters = make_parameters(CR, group="cache.example.com", kind="Memcached", snake_case=False)
    assert parameters["maxConnections"] == 10
    assert parameters["podTemplate"] == {"nodeSelector": {"diskType": "ssd"}}
    assert "max_connections" not in parameters


def test_finalizer_vars_win_and_unsafe_marks_strings() -> None:
    parameters = make_parameters(
        {**CR, "spec": {"name": "{{ lookup('env', 'HOME') }}"}},
        group="",
        kind="Secret",
        unsafe=True,
        variables={"state": "present"},
        finalizer_variables={"state": "absent"},
    )
    assert parameters["state"] == "absent"
    assert parameters["name"] == {"__ansible_unsafe": "{{ lookup('env', 'HOME') }}"}
    assert "__secret" in parameters  # the core group: an empty group name


def test_a_resource_without_spec_gets_an_empty_one_as_in_operator_sdk() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "n"}}
    parameters = make_parameters(secret, group="", kind="Secret")
    assert parameters["__secret"] == {**secret, "spec": {}}  # _<group>_<kind>, group ""
    assert parameters["__secret_spec"] == {}
