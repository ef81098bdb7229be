"""The console's timeline and controllers during ``setpoint demo``, from the operators' trace
and the local cluster's audit feed (slow: a demo per module).

These need the operator-side trace endpoints (``/debug/setpoint/controllers`` and
``/debug/setpoint/trace``) and the local cluster's ``/debug/setpoint/audit``."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.console.browser import loaded, open_browser, screenshot, wait_until
from tests.console.demo_session import Demo, run_demo

pytestmark = pytest.mark.slow

AT = "cnat.programming-kubernetes.info/v1alpha1"
FOO = "samplecontroller.k8s.io/v1alpha1"
TAKEN = 'Resource "taken" already exists and is not managed by Foo'


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    yield from run_demo()


@pytest.fixture(scope="module")
def browser(demo: Demo) -> Iterator[Any]:
    for driver in open_browser():
        driver.get(demo.url)
        yield driver


def _timeline(browser: Any, demo: Demo, api_version: str, kind: str, name: str) -> None:
    browser.get(
        f"{demo.base}/timeline?apiVersion={api_version}&kind={kind}&namespace=default&name={name}"
    )
    wait_until(lambda: loaded(browser), what=f"the timeline of {kind}/{name}")


def _text_of(browser: Any, selector: str) -> str:
    # One script call: the Controllers view is repainted every second.
    found = browser.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.innerText : ''", selector
    )
    return str(found)


def _entries(browser: Any) -> list[str]:
    # One script call: the list is repainted as entries arrive (elements would go stale).
    script = "return [...document.querySelectorAll('ol.timeline > li')].map(li => li.innerText)"
    return list(browser.execute_script(script))


def test_an_at_from_create_through_pending_running_done_with_its_pod(
    browser: Any, demo: Demo
) -> None:
    # Scheduled ahead, so that it waits PENDING first (the demo's sample, due in 2019, goes
    # straight to RUNNING); far enough for a loaded machine's first reconcile to come before.
    when = (datetime.now(UTC) + timedelta(seconds=15)).strftime("%Y-%m-%dT%H:%M:%SZ")
    demo.kubectl(
        "apply",
        "-f",
        "-",
        stdin=(
            f"apiVersion: {AT}\nkind: At\nmetadata:\n  name: soon\n  namespace: default\n"
            f"spec:\n  schedule: '{when}'\n  command: echo soon\n"
        ),
    )
    _timeline(browser, demo, AT, "At", "soon")
    sources = browser.find_element("css selector", "p.sources").text
    assert "audit feed: ok" in sources and "unavailable" not in sources, sources
    text = wait_until(
        lambda: "\n".join(_entries(browser)) if '"DONE"' in "\n".join(_entries(browser)) else "",
        timeout=120,
        what="DONE on the timeline",
    )
    assert "create by " in _entries(browser)[0], text
    # A phase is written as `add /status: {"phase":"PENDING",...}` or
    # `replace /status/phase: "RUNNING"`, by the operator (its write) and seen by the API server.
    phases = [re.search(rf'phase\W+{phase}"', text) for phase in ("PENDING", "RUNNING", "DONE")]
    assert all(phases), text
    starts = [found.start() for found in phases if found]
    assert starts == sorted(starts), text
    assert "create Pod/soon-pod" in text, text
    assert browser.find_elements("css selector", "svg.chart rect.bar[data-result='success']")
    screenshot(browser, "timeline-at")


def test_a_kubectl_patch_of_foo_replicas_with_its_diff_and_the_reconcile_it_caused(
    browser: Any, demo: Demo
) -> None:
    _timeline(browser, demo, FOO, "Foo", "foo-sample")
    replicas = 2 + int(time.time()) % 5
    demo.kubectl(
        "patch",
        "foo",
        "foo-sample",
        "-n",
        "default",
        "--type=merge",
        "-p",
        f'{{"spec":{{"replicas":{replicas}}}}}',
    )
    started = time.monotonic()
    diff = f"replace /spec/replicas: {replicas}"
    wait_until(lambda: diff in "\n".join(_entries(browser)), timeout=5, what="the patch's diff")
    seen_after = time.monotonic() - started
    entries = _entries(browser)
    patch = next(i for i, e in enumerate(entries) if diff in e and "kubectl-patch" in e)
    # The reconcile it caused: the enqueue of the key by the Foo's MODIFIED event, the write
    # of the Deployment's replicas (with the same diff), the reconcile's success.
    wait_until(
        lambda: any("Deployment/" in e and diff in e for e in _entries(browser)[patch:]),
        what="the reconcile's write of the Deployment with the diff",
    )
    later = _entries(browser)[patch:]
    write = next(i for i, e in enumerate(later) if "Deployment/" in e and diff in e)
    enqueue = r"enqueue default/foo-sample ← event MODIFIED of Foo/foo-sample"
    assert any(re.search(enqueue, e) for e in later[:write]), later
    wait_until(
        lambda: any("reconcile success" in e for e in _entries(browser)[patch + write :]),
        what="the reconcile's success after its write",
    )
    print(f"patch on the timeline after {seen_after:.3f} s")  # the bench measures it properly


def test_a_failing_reconcile_shows_its_error_and_backoff(browser: Any, demo: Demo) -> None:
    demo.kubectl("create", "deployment", "taken", "-n", "default", "--image=busybox")
    demo.kubectl(
        "apply",
        "-f",
        "-",
        stdin=(
            f"apiVersion: {FOO}\nkind: Foo\nmetadata:\n  name: foo-taken\n  namespace: default\n"
            "spec:\n  deploymentName: taken\n  replicas: 1\n"
        ),
    )
    _timeline(browser, demo, FOO, "Foo", "foo-taken")
    wait_until(
        lambda: browser.find_elements("css selector", "svg.chart rect.bar[data-result='error']"),
        what="a red reconcile bar",
    )
    text = "\n".join(_entries(browser))
    assert re.search(rf"reconcile error in .*: {re.escape(TAKEN)} — backoff", text), text
    assert re.search(r"enqueue default/foo-taken ← backoff", text) or "retry" in text, text
    browser.get(f"{demo.base}/controllers")
    row = wait_until(
        lambda: _text_of(browser, "tr.backoff[data-key='default/foo-taken']"),
        what="the key in backoff on the Controllers view",
    )
    assert TAKEN in row
    screenshot(browser, "controllers-demo")


def test_the_demo_operators_are_up_with_their_controllers(browser: Any, demo: Demo) -> None:
    browser.get(f"{demo.base}/controllers")
    wait_until(lambda: _text_of(browser, "section.operator[data-state='up']"), what="up")
    script = (
        "return [...document.querySelectorAll('section.operator[data-state=up] "
        "table.controllers tr[data-controller]')].map(tr => tr.dataset.controller)"
    )
    controllers = set(browser.execute_script(script))
    assert {"at", "foo", "podset", "tdset", "memcached", "memcachedproxy"} <= controllers
