"""`setpoint generate bundle` and `setpoint check bundle`: an OLM registry+v1 bundle that the
scorecard-equivalent checks pass with zero suggestions, and checks that catch what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from setpoint.cli.main import cli
from setpoint.generate.bundle_check import check_bundle

SAMPLE = Path(__file__).parent / "sample_project" / "foo_operator.py"


def _bundle(tmp_path: Path) -> Path:
    out = tmp_path / "bundle"
    result = CliRunner().invoke(
        cli, ["generate", "bundle", str(SAMPLE), "-o", str(out), "--version", "1.2.3",
              "--channel", "stable", "--channel", "alpha", "--image", "me/foo:1.2.3"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _csv(out: Path) -> dict[str, Any]:
    return yaml.safe_load(
        (out / "manifests" / "foo-operator.clusterserviceversion.yaml").read_text()
    )


def test_the_bundle_layout_and_csv(tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "manifests/foo-operator.clusterserviceversion.yaml",
        "manifests/samplecontroller.k8s.io_foos.yaml",
        "metadata/annotations.yaml",
        "tests/scorecard/config.yaml",
    ]
    csv = _csv(out)
    assert csv["metadata"]["name"] == "foo-operator.v1.2.3"
    assert csv["metadata"]["annotations"]["capabilities"] == "Basic Install"
    examples = json.loads(csv["metadata"]["annotations"]["alm-examples"])
    assert [e["kind"] for e in examples] == ["Foo"]
    install = csv["spec"]["install"]["spec"]
    assert install["deployments"][0]["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "me/foo:1.2.3"
    )
    assert {"type": "AllNamespaces", "supported": True} in csv["spec"]["installModes"]
    (owned,) = csv["spec"]["customresourcedefinitions"]["owned"]
    assert owned["resources"] == [{"kind": "Deployment", "name": "", "version": "v1"}]
    assert [d["path"] for d in owned["specDescriptors"]] == ["deploymentName", "replicas"]
    assert [d["path"] for d in owned["statusDescriptors"]] == ["availableReplicas"]
    annotations = yaml.safe_load((out / "metadata" / "annotations.yaml").read_text())["annotations"]
    assert annotations["operators.operatorframework.io.bundle.mediatype.v1"] == "registry+v1"
    assert annotations["operators.operatorframework.io.bundle.channels.v1"] == "stable,alpha"
    assert annotations["operators.operatorframework.io.bundle.channel.default.v1"] == "stable"


def test_a_generated_bundle_passes_every_check_with_no_suggestion(tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    results = check_bundle(out)
    assert [r.name for r in results] == [
        "registry", "basic-check-spec", "olm-bundle-validation", "olm-crds-have-validation",
        "olm-crds-have-resources", "olm-spec-descriptors", "olm-status-descriptors",
    ]  # fmt: skip
    assert all(r.passed and not r.suggestions for r in results)
    result = CliRunner().invoke(cli, ["check", "bundle", str(out)])
    assert result.exit_code == 0 and "7 passed, 0 failed" in result.output


def test_the_checks_catch_what_a_bundle_lacks(tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    csv_path = out / "manifests" / "foo-operator.clusterserviceversion.yaml"
    csv = _csv(out)
    owned = csv["spec"]["customresourcedefinitions"]["owned"][0]
    owned["resources"] = []
    owned["specDescriptors"] = owned["specDescriptors"][:1]
    owned["statusDescriptors"] = []
    csv_path.write_text(yaml.safe_dump(csv))
    (out / "manifests" / "samplecontroller.k8s.io_foos.yaml").unlink()
    result = CliRunner().invoke(cli, ["check", "bundle", str(out)])
    assert result.exit_code == 1
    assert "owned CRD foos.samplecontroller.k8s.io is not in manifests/" in result.output
    assert "lists no resources" in result.output
    assert "fail  registry" in result.output and "fail  olm-crds-have-resources" in result.output

    out = _bundle(tmp_path / "again")
    csv = _csv(out)
    csv["spec"]["customresourcedefinitions"]["owned"][0]["statusDescriptors"] = []
    (out / "manifests" / "foo-operator.clusterserviceversion.yaml").write_text(yaml.safe_dump(csv))
    failed = {r.name: r.suggestions for r in check_bundle(out) if not r.passed}
    assert failed == {
        "olm-status-descriptors": ["Foo: add a statusDescriptor for status.availableReplicas"]
    }


def test_two_csvs_break_the_registry_rule(tmp_path: Path) -> None:
    out = _bundle(tmp_path)
    source = out / "manifests" / "foo-operator.clusterserviceversion.yaml"
    (out / "manifests" / "copy.clusterserviceversion.yaml").write_text(source.read_text())
    (registry,) = check_bundle(out)
    assert registry.suggestions == [
        "manifests/ must hold exactly one ClusterServiceVersion, found 2"
    ]
