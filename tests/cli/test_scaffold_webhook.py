"""`setpoint create webhook` (and `init --defaulting --validation`): handlers that run, tests
that pass, manifests that include them; repairs and refusals as `create api`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from setpoint.cli.main import cli


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "p"
    code, output = _invoke("init", "p-op", "--directory", str(project),
                           "--setpoint-spec", "setpoint")  # fmt: skip
    assert code == 0, output
    code, output = _invoke("create", "api", "--group", "web", "--version", "v1", "--kind", "Site",
                           "--directory", str(project))  # fmt: skip
    assert code == 0, output
    return project


def test_init_with_webhooks_gives_a_project_whose_tests_and_manifests_include_them(
    tmp_path: Path,
) -> None:
    project = tmp_path / "shop-op"
    code, output = _invoke("init", "shop-op", "--domain", "example.org", "--kind", "Site",
                           "--group", "web", "--version", "v1", "--defaulting", "--validation",
                           "--setpoint-spec", "setpoint", "--directory", str(project))  # fmt: skip
    assert code == 0, output
    assert "Site (web.example.org/v1) webhooks added: defaulting, validation" in output
    code, output = _invoke("create", "api", "--group", "web", "--version", "v2", "--kind", "Site",
                           "--directory", str(project))  # fmt: skip
    assert code == 0, output
    code, output = _invoke("create", "webhook", "--version", "v1", "--kind", "Site", "--conversion",
                           "--spoke", "v2", "--directory", str(project))  # fmt: skip
    assert code == 0, output
    assert "webhooks added: conversion v1 <-> v2" in output

    # The project's own tests (the reconciler's, and the webhooks'), with this setpoint.
    env = {**os.environ, "PYTHONPATH": str(project)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-W", "error", "-p", "no:cacheprovider"],
        cwd=project, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 passed" in done.stdout

    # init generated config/ with the webhooks' configurations.
    manifests = list(yaml.safe_load_all((project / "config/webhook/manifests.yaml").read_text()))
    assert [(m["kind"], [w["name"] for w in m["webhooks"]]) for m in manifests] == [
        ("MutatingWebhookConfiguration", ["msite-v1.kb.io"]),
        ("ValidatingWebhookConfiguration", ["vsite-v1.kb.io"]),
    ]


def test_create_webhook_again_keeps_the_users_edits_and_repairs_the_registrations(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    args = ("create", "webhook", "--version", "v1", "--kind", "Site", "--validation",
            "--directory", str(project))  # fmt: skip
    assert _invoke(*args)[0] == 0
    handlers = project / "p_op/webhooks/site.py"
    handlers.write_text(handlers.read_text() + "# edited\n")
    registry = project / "p_op/webhooks/__init__.py"
    registry.write_text(registry.read_text().replace("from p_op.webhooks import site", "# gone"))
    operator = project / "p_op/operator.py"
    operator.write_text(operator.read_text().replace("from p_op import webhooks", "# gone"))
    code, output = _invoke(*args)
    assert code == 0
    assert "kept     p_op/webhooks/site.py (exists)" in output
    assert handlers.read_text().endswith("# edited\n")
    assert registry.read_text().count("from p_op.webhooks import site as site") == 1
    assert operator.read_text().count("from p_op import webhooks") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "name at least one of --defaulting, --validation, --conversion"),
        (("--conversion",), "--conversion needs --spoke VERSION"),
        (("--defaulting", "--spoke", "v2"), "--conversion needs --spoke VERSION"),
        (("--conversion", "--spoke", "v1"), "--spoke v1 is the hub (--version) itself"),
        (("--conversion", "--spoke", "v9"), "p_op/api/v9/site.py does not exist: run `setpoint "
                                            "create api --version v9 --kind Site` first"),
        (("--defaulting", "--group", "shop"), "--group shop: Site v1 is in group web.example.com"),
    ],
)  # fmt: skip
def test_what_cannot_be_scaffolded_is_a_one_line_error(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    project = _project(tmp_path)
    code, output = _invoke("create", "webhook", "--version", "v1", "--kind", "Site",
                           "--directory", str(project), *args)  # fmt: skip
    assert code == 2, output
    assert message in output and "Traceback" not in output
    assert not (project / "p_op/webhooks").exists()


def test_a_kind_without_its_api_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    code, output = _invoke("create", "webhook", "--version", "v1", "--kind", "Shop",
                           "--defaulting", "--directory", str(project))  # fmt: skip
    assert code == 2
    assert (
        "p_op/api/v1/shop.py does not exist: run `setpoint create api --version v1 --kind Shop` "
        "first"
    ) in output
