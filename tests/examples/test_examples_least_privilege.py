"""Least privilege, verified: each example's main acceptance scenario, with the operator run as
a ServiceAccount bound ONLY to the example's generated ``config/rbac/role.yaml``.

The scenario is the example's own test, run unchanged: ``operators_run_as`` makes its
``run_operator`` act as the ServiceAccount. Then the session cluster's audit log says what the
operator did (``setpoint rbac suggest``): the generated role must cover all of it
(``missing_rules``), and what it grants beyond that must be exactly the documented surplus
below (``unused_rules``: a documented superset), so a grant nobody needs cannot creep in
unnoticed.

Adding an example is one :class:`Scenario` line. Leader election is off in tests, so its Role
(``leader_election_role.yaml``) is not bound.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from setpoint.client import Client
from setpoint.generate.rbac_suggest import missing_rules, unused_rules
from setpoint.testing import BackgroundCluster, install_crds, run_operator
from setpoint.testing.least_privilege import install_rbac, observed_rbac
from setpoint.testing.operators import operators_run_as
from tests.examples.projects import EXAMPLES

SERVICE_ACCOUNT = "controller-manager"
Grant = tuple[str, str, str]


@dataclass(frozen=True)
class Scenario:
    """An example, the test of its main acceptance scenario, and the grants its role has that
    the scenario does not use (each with the reason it is granted)."""

    example: str
    test: str
    unused: dict[Grant, str] = field(default_factory=dict)
    #: The test file, when the example has several.
    test_file: str = ""


# Why a role may grant what a scenario does not use (a documented superset).
GET = "reads come from the cache (list/watch); get is kubebuilder's rule for direct reads"
STATUS_GET = "kubebuilder's status rule (get;update;patch)"
STATUS_UPDATE = "kubebuilder's status rule; the operator writes its status by patch"
FINALIZERS = "an owner reference with blockOwnerDeletion needs update on <kind>/finalizers"
CORE_EVENTS = "the event recorder writes core/v1 Events where events.k8s.io is not served"
EVENT_PATCH = "the event recorder patches an Event only when the same one repeats"


def usual(group: str, plural: str) -> dict[Grant, str]:
    """What every generated role grants and a scenario may leave unused."""
    return {
        (group, plural, "get"): GET,
        (group, f"{plural}/status", "get"): STATUS_GET,
        (group, f"{plural}/status", "update"): STATUS_UPDATE,
        (group, f"{plural}/finalizers", "update"): FINALIZERS,
        ("", "events", "create"): CORE_EVENTS,
        ("", "events", "patch"): CORE_EVENTS,
        ("events.k8s.io", "events", "patch"): EVENT_PATCH,
    }


SCENARIOS = [
    Scenario(
        "memcached",
        "test_the_proxy_follows_the_pool",
        {
            **usual("cache.example.com", "memcacheds"),
            **usual("cache.example.com", "memcachedproxies"),
            ("", "configmaps", "get"): GET,
            ("", "endpoints", "get"): GET,
            ("", "services", "get"): GET,
            ("apps", "deployments", "get"): GET,
            ("apps", "replicasets", "get"): GET,
            ("", "configmaps", "delete"): "a config no ReplicaSet took over is deleted",
            ("events.k8s.io", "events", "create"): "this scenario records no Event",
        },
        test_file="test_memcachedproxy.py",
    ),
    Scenario(
        "sample-controller",
        "test_a_foo_gets_its_deployment_and_tracks_its_available_replicas",
        {
            **usual("samplecontroller.k8s.io", "foos"),
            ("samplecontroller.k8s.io", "foos/status", "patch"): STATUS_GET,
            ("apps", "deployments", "get"): GET,
            ("apps", "deployments", "update"): "a Deployment drifting from its Foo is updated",
        },
    ),
    Scenario(
        "cnat",
        "test_a_past_schedule_runs_at_once_and_ends_done",
        {**usual("cnat.programming-kubernetes.info", "ats"), ("", "pods", "get"): GET},
        test_file="test_cnat.py",
    ),
    Scenario(
        "tdset",
        "test_replicas_follow_the_hours_of_the_day",
        {**usual("schedule.rs", "tdsets"), ("apps", "deployments", "get"): GET},
        test_file="test_tdset.py",
    ),
    Scenario(
        "indexedjob",
        "test_runs_every_index_at_most_parallelism_at_a_time_then_completes",
        {
            **usual("ctl.enisoc.com", "indexedjobs"),
            ("", "pods", "get"): GET,
            ("", "pods", "create"): "a composite creates its children by server-side apply",
            ("", "pods", "update"): "a composite writes its children by server-side apply",
            ("", "pods", "delete"): "children the hook stops returning are deleted (none here)",
            ("ctl.enisoc.com", "indexedjobs", "patch"): "a finalize hook's finalizer (none here)",
            ("ctl.enisoc.com", "indexedjobs", "update"): "inferred for the primary kind",
            ("events.k8s.io", "events", "create"): "this scenario records no Event",
        },
    ),
    Scenario(
        "podset",
        "test_scaling_up_and_down_and_replacing_a_deleted_pod",
        {
            **usual("app.example.com", "podsets"),
            ("", "pods", "get"): GET,
            ("events.k8s.io", "events", "create"): "this scenario records no Event",
        },
        test_file="test_podset.py",
    ),
    Scenario(
        "cronjob",
        "test_jobs_are_created_at_the_scheduled_times_and_reported_in_status",
        {
            **usual("batch.tutorial.kubebuilder.io", "cronjobs"),
            ("batch", "jobs", "get"): GET,
            ("batch", "jobs", "delete"): "history limits and Replace delete Jobs (none here)",
        },
        test_file="test_cronjob.py",
    ),
]


def _project(name: str) -> Path:
    project = EXAMPLES / name
    if str(project) not in sys.path:
        sys.path.insert(0, str(project))  # the example's tests import its package
    return project


def _test_module(project: Path, test_file: str = "") -> ModuleType:
    if test_file:
        path = project / "tests" / test_file
    else:
        (path,) = sorted((project / "tests").glob("test_*.py"))
    name = f"least_privilege_{project.name.replace('-', '_')}_{path.stem}"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


async def _run_scenario(
    test: Callable[..., Any], project: Path, module: ModuleType, arguments: dict[str, Any]
) -> None:
    wanted = inspect.signature(test).parameters
    if "operator" not in wanted:
        await test(**{key: value for key, value in arguments.items() if key in wanted})
        return
    # The test takes the example's `operator` fixture: start the operator as it does.
    await install_crds(arguments["client"], project / "config" / "crd")
    async with run_operator(
        module.op, kubeconfig=arguments["kubeconfig"], namespace=arguments["namespace"]
    ) as running:
        given = {**arguments, "operator": running}
        await test(**{key: value for key, value in given.items() if key in wanted})


def _role(project: Path) -> Path:
    return project / "config" / "rbac" / "role.yaml"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.example for s in SCENARIOS])
async def test_the_generated_role_is_exactly_what_the_example_needs(
    scenario: Scenario,
    client: Client,
    kubeconfig: str,
    namespace: str,
    local_cluster: BackgroundCluster,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = _project(scenario.example)
    module = _test_module(project, scenario.test_file)
    test = getattr(module, scenario.test)
    rbac = await install_rbac(
        client, _role(project), namespace=namespace, service_account=SERVICE_ACCOUNT
    )
    failure: BaseException | None = None
    try:
        with operators_run_as(SERVICE_ACCOUNT):
            arguments = {
                "client": client,
                "kubeconfig": kubeconfig,
                "namespace": namespace,
                "monkeypatch": monkeypatch,
            }
            await _run_scenario(test, project, module, arguments)
    except Exception as error:  # reported below, with the permissions that were missing
        failure = error
    finally:
        await rbac.remove(client)
    observed = observed_rbac(local_cluster, rbac.user)
    assert not observed.empty, f"no request by {rbac.user} in the audit log"
    suggested = yaml.safe_dump_all(observed.manifests(), sort_keys=False)
    missing = missing_rules(rbac.rules, observed)
    if failure is not None:
        raise AssertionError(
            f"{scenario.example}: {scenario.test} failed under the generated role "
            f"(missing: {missing}): {failure}"
        ) from failure
    assert not missing, (
        f"{scenario.example}: config/rbac/role.yaml lacks {missing}; declare them in the "
        f"controllers' PERMISSIONS and regenerate (python -m tests.examples.projects). "
        f"`setpoint rbac suggest` observed:\n{suggested}"
    )
    unused = unused_rules(rbac.rules, observed)
    undocumented = sorted(set(unused) - set(scenario.unused))
    assert not undocumented, (
        f"{scenario.example}: granted but never used in {scenario.test}: {undocumented} "
        f"(document each in SCENARIOS with its reason, or drop it from the role); all unused: "
        f"{unused}. Observed:\n{suggested}"
    )
