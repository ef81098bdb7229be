"""Protobuf request bodies, as real kubectl sends them, decode to the JSON a JSON body gives.

``kubectl_bodies.json`` holds the bodies kubectl 1.32 POSTed for each ``kubectl create``
generator and ``kubectl auth`` command (recorded from the local cluster), and for each the
object expected; the expected objects were checked against ``kubectl create ... --dry-run=client
-o json`` of the same command.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from setpoint.cluster.apiserver.http.protobuf import MAGIC, ProtobufBodyError, decode_object
from setpoint.cluster.apiserver.http.protobuf.descriptors import layouts, message_classes
from setpoint.cluster.apiserver.http.protobuf.kinds import KIND_MESSAGES
from setpoint.cluster.apiserver.http.protobuf.layout import Cardinality, Scalar, Wrapper

BODIES: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).parent / "kubectl_bodies.json").read_text()
)


def envelope(api_version: str, kind: str, raw: bytes, encoding: str = "") -> bytes:
    classes = message_classes()
    unknown = classes["runtime.Unknown"]()
    unknown.typeMeta.apiVersion = api_version
    unknown.typeMeta.kind = kind
    unknown.raw = raw
    if encoding:
        unknown.contentEncoding = encoding
    return MAGIC + unknown.SerializeToString()


@pytest.mark.parametrize("label", sorted(BODIES))
def test_kubectl_body_decodes_to_its_json(label: str) -> None:
    case = BODIES[label]
    assert decode_object(bytes.fromhex(case["body"])) == case["json"]


def test_every_generator_kind_is_recorded() -> None:
    kinds = {case["json"]["kind"] for case in BODIES.values()}
    # Written by typed clients, not generators (CertificateSigningRequest: ``kubectl
    # certificate approve``, tested with the real kubectl in test_certificate_signing_requests).
    typed_client_kinds = {
        "Pod",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Lease",
        "Event",
        "CertificateSigningRequest",
        # kubectl autoscale: tested with the real kubectl in test_platform_resources.
        "HorizontalPodAutoscaler",
    }
    assert kinds == {kind for (_version, kind) in KIND_MESSAGES} - typed_client_kinds


def test_seed_walkthrough_objects() -> None:
    namespace = decode_object(bytes.fromhex(BODIES["namespace"]["body"]))
    assert namespace == {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "cnat"}}
    deployment = decode_object(bytes.fromhex(BODIES["deployment"]["body"]))
    # --replicas=0 is a pointer set to zero: kept, as JSON keeps it.
    assert deployment["spec"]["replicas"] == 0
    assert deployment["spec"]["template"]["spec"]["containers"] == [
        {"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}
    ]
    secret = decode_object(bytes.fromhex(BODIES["secret_generic"]["body"]))
    assert secret["data"] == {"x": "eQ=="}  # bytes are base64, as in JSON
    assert secret["type"] == "Opaque"


def test_int_or_string_and_quantities() -> None:
    service = decode_object(bytes.fromhex(BODIES["service_nodeport"]["body"]))
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    assert service["spec"]["ports"][0]["nodePort"] == 30080
    cluster_ip = decode_object(bytes.fromhex(BODIES["service_clusterip"]["body"]))
    assert cluster_ip["spec"]["ports"][0]["targetPort"] == 8080
    quota = decode_object(bytes.fromhex(BODIES["quota"]["body"]))
    assert quota["spec"]["hard"] == {"cpu": "1", "memory": "1G", "pods": "2"}


def test_times_are_rfc3339() -> None:
    meta = message_classes()["meta.v1.ObjectMeta"]()
    meta.name = "t"
    meta.creationTimestamp.seconds = 1_700_000_000
    config_map = message_classes()["core.v1.ConfigMap"]()
    config_map.metadata.CopyFrom(meta)
    decoded = decode_object(envelope("v1", "ConfigMap", config_map.SerializeToString()))
    assert decoded["metadata"] == {"name": "t", "creationTimestamp": "2023-11-14T22:13:20Z"}


def test_zero_values_of_omitempty_fields_are_left_out() -> None:
    # Go writes non-pointer fields even when empty; JSON leaves them out.
    config_map = message_classes()["core.v1.ConfigMap"]()
    config_map.metadata.name = "c"
    config_map.metadata.generateName = ""
    config_map.metadata.generation = 0
    decoded = decode_object(envelope("v1", "ConfigMap", config_map.SerializeToString()))
    assert decoded == {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}}


def test_unknown_kind_is_refused_naming_it() -> None:
    with pytest.raises(ProtobufBodyError) as caught:
        decode_object(envelope("v1", "PersistentVolume", b""))
    assert str(caught.value) == (
        "the protobuf body of PersistentVolume (v1) cannot be decoded here (no message layout "
        "for that kind); send it as application/json"
    )


def test_a_field_outside_the_tables_is_refused_not_dropped() -> None:
    classes = message_classes()
    deployment = classes["apps.v1.Deployment"]()
    deployment.metadata.name = "d"
    deployment.status.append(b"\x10\x03")  # DeploymentStatus{replicas: 3}
    with pytest.raises(ProtobufBodyError, match=r"Deployment sets status, which is not decoded"):
        decode_object(envelope("apps/v1", "Deployment", deployment.SerializeToString()))
    deployment.ClearField("status")
    deployment.status.append(b"\x10\x00")  # all zero, as Go writes an untouched status
    assert "status" not in decode_object(
        envelope("apps/v1", "Deployment", deployment.SerializeToString())
    )


def test_pod_templates_decode_whole_with_inline_structs() -> None:
    """Volumes, probes and env sources embed Go structs inline: their fields join the parent."""
    classes = message_classes()
    stateful_set = classes["apps.v1.StatefulSet"]()
    stateful_set.metadata.name = "db"
    spec = stateful_set.spec.template.spec
    volume = spec.volumes.add(name="config")
    volume.volumeSource.configMap.localObjectReference.name = "settings"
    volume.volumeSource.configMap.defaultMode = 0o644
    container = spec.containers.add(name="db", image="postgres")
    container.readinessProbe.handler.httpGet.path = "/ready"
    container.readinessProbe.handler.httpGet.port.type = 1
    container.readinessProbe.handler.httpGet.port.strVal = "http"
    container.readinessProbe.periodSeconds = 5
    container.env.add(name="PASSWORD").valueFrom.secretKeyRef.localObjectReference.name = "pw"
    container.env[0].valueFrom.secretKeyRef.key = "password"
    decoded = decode_object(envelope("apps/v1", "StatefulSet", stateful_set.SerializeToString()))
    pod = decoded["spec"]["template"]["spec"]
    assert pod["volumes"] == [
        {"name": "config", "configMap": {"name": "settings", "defaultMode": 420}}
    ]
    assert pod["containers"][0]["readinessProbe"] == {
        "httpGet": {"path": "/ready", "port": "http"},
        "periodSeconds": 5,
    }
    assert pod["containers"][0]["env"] == [
        {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "pw", "key": "password"}}}
    ]


def test_lease_of_leader_election() -> None:
    lease = message_classes()["coordination.v1.Lease"]()
    lease.metadata.name = "operator"
    lease.spec.holderIdentity = "pod-1"
    lease.spec.leaseDurationSeconds = 15
    lease.spec.renewTime.seconds = 1_700_000_000
    lease.spec.renewTime.nanos = 123_456_000
    lease.spec.leaseTransitions = 0
    decoded = decode_object(envelope("coordination.k8s.io/v1", "Lease", lease.SerializeToString()))
    assert decoded["spec"] == {
        "holderIdentity": "pod-1",
        "leaseDurationSeconds": 15,
        "renewTime": "2023-11-14T22:13:20.123456Z",
        "leaseTransitions": 0,  # a pointer set to zero is kept
    }


def test_an_unknown_field_number_is_refused() -> None:
    raw = message_classes()["core.v1.ConfigMap"](immutable=True).SerializeToString()
    raw += b"\xba\x06\x01x"  # field 103, length-delimited "x"
    with pytest.raises(ProtobufBodyError, match="field number 103"):
        decode_object(envelope("v1", "ConfigMap", raw))


@pytest.mark.parametrize(
    "body",
    [b"", b"{}", MAGIC + b"\x0a\xff", b"k8s\x00\x0a\x03\x0a\x01"],
    ids=["empty", "json", "truncated", "cut-type-meta"],
)
def test_malformed_bodies_are_refused(body: bytes) -> None:
    with pytest.raises(ProtobufBodyError):
        decode_object(body)


def test_compressed_bodies_are_refused() -> None:
    with pytest.raises(ProtobufBodyError, match="content encoding 'gzip'"):
        decode_object(envelope("v1", "ConfigMap", b"", encoding="gzip"))


def test_tables_are_consistent() -> None:
    """Every message a field names exists, and field numbers are unique per message."""
    known = layouts()
    for name, layout in known.items():
        numbers = [f.number for f in layout.fields]
        assert len(numbers) == len(set(numbers)), name
        for spec in layout.fields:
            if isinstance(spec.type, str):
                assert spec.type in known, f"{name}.{spec.json_name} -> {spec.type}"
            else:
                assert isinstance(spec.type, Scalar | Wrapper)
            if spec.cardinality is Cardinality.UNSUPPORTED:
                assert spec.type is Scalar.BYTES
    assert all(message in known for message in KIND_MESSAGES.values())


def test_mangled_kubectl_bodies_never_escape_as_other_errors() -> None:
    """Every corruption of a real body decodes or is refused with ProtobufBodyError."""
    rng = random.Random(7)
    bodies = [bytes.fromhex(case["body"]) for case in BODIES.values()]
    for _ in range(3000):
        body = bytearray(rng.choice(bodies))
        for _ in range(rng.randint(1, 4)):
            position = rng.randrange(len(MAGIC), len(body))
            choice = rng.random()
            if choice < 0.5:
                body[position] = rng.randrange(256)
            elif choice < 0.75:
                body[position:position] = bytes([rng.randrange(256)])
            else:
                del body[position : position + rng.randint(1, 5)]
        try:
            json.dumps(decode_object(bytes(body)))
        except ProtobufBodyError:
            pass


def test_invalid_utf8_is_refused() -> None:
    config_map = message_classes()["core.v1.ConfigMap"]()
    config_map.metadata.name = "ok"
    raw = config_map.SerializeToString().replace(b"ok", b"o\xff")
    with pytest.raises(ProtobufBodyError, match="not valid UTF-8"):
        decode_object(envelope("v1", "ConfigMap", raw))
