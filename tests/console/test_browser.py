"""The console in a real browser (headless Chromium, one per module) on the session's local
cluster, written to with the real kubectl; the operator and the audit feed are the contract
fake. With SETPOINT_CONSOLE_SCREENSHOTS=1 (``make console-screenshots``) the Resources, object
and Cluster views are saved as docs/images/console-<view>.png (the timeline and controllers
pictures come from test_browser_demo_trace.py: real operators, not the fake)."""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from setpoint.testing.background_cluster import BackgroundCluster
from tests.console.browser import LoopThread, loaded, open_browser, screenshot, wait_until
from tests.console.conftest import open_console
from tests.console.contract_fake import ContractFake
from tests.console.stories import ERROR, FOO, foo_story

FOO_CRD = Path(__file__).parents[2] / "examples/sample-controller/config/crd"


class Session:
    """Everything one module's tests share: the cluster, a namespace, the fake, the console."""

    def __init__(self, cluster: BackgroundCluster) -> None:
        self.cluster = cluster
        self.namespace = "console-" + secrets.token_hex(4)
        cluster.create_namespace(self.namespace)
        self.loop = LoopThread()
        self.fake = ContractFake("foo-operator")
        self.loop.run(self.fake.start())
        self.runner, self.console, self.clients = self.loop.run(
            open_console(str(cluster.kubeconfig_path), [self.fake.url], self.fake.url)
        )

    @property
    def console_url(self) -> str:
        return self.console.url

    def kubectl(self, *args: str) -> str:
        done = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.cluster.kubeconfig_path), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def close(self) -> None:
        async def shut() -> None:
            await self.runner.cleanup()
            await self.console.http.close()
            for client in self.clients:
                await client.close()
            await self.fake.stop()

        self.loop.run(shut())
        self.loop.stop()
        self.cluster.delete_namespace(self.namespace)


@pytest.fixture(scope="module")
def session(local_cluster: BackgroundCluster) -> Iterator[Session]:
    opened = Session(local_cluster)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="module")
def browser(session: Session) -> Iterator[Any]:
    for driver in open_browser():
        driver.get(f"{session.console_url}/?token={session.console.token}")
        yield driver


def _open(browser: Any, session: Session, path: str) -> None:
    browser.get(session.console_url + path)
    wait_until(lambda: loaded(browser), what=f"{path} loaded")


def _text(browser: Any) -> str:
    return str(browser.find_element("id", "view").text)


def test_the_page_needs_the_token(browser: Any, session: Session) -> None:
    browser.delete_all_cookies()
    browser.get(session.console_url + "/resources")
    assert browser.find_element("tag name", "body").text.startswith("no token: open the URL")
    browser.get(f"{session.console_url}/resources?token={session.console.token}")
    assert browser.find_element("css selector", "nav.kinds a[data-kind=ConfigMap]")


def test_a_list_follows_kubectl_live(browser: Any, session: Session) -> None:
    ns = session.namespace
    _open(browser, session, f"/resources?apiVersion=v1&kind=ConfigMap&namespace={ns}")
    rows = "table.objects tr[data-name]"
    wait_until(
        lambda: browser.find_elements("css selector", f"{rows}[data-name='kube-root-ca.crt']")
    )
    session.kubectl("create", "configmap", "live-1", "-n", ns, "--from-literal=a=b")
    wait_until(
        lambda: browser.find_elements("css selector", f"{rows}[data-name='live-1']"),
        what="the new ConfigMap's row",
    )
    session.kubectl("delete", "configmap", "live-1", "-n", ns)
    wait_until(
        lambda: not browser.find_elements("css selector", f"{rows}[data-name='live-1']"),
        what="the deleted ConfigMap's row gone",
    )


def test_an_object_shows_its_owner_chain_children_and_events(
    browser: Any, session: Session
) -> None:
    ns = session.namespace
    session.kubectl("create", "deployment", "web", "-n", ns, "--image=nginx", "--replicas=2")
    pod = wait_until(
        lambda: session.kubectl(
            "get", "pods", "-n", ns, "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}"
        ),
        what="the Deployment's pods",
    )
    _open(browser, session, f"/object?apiVersion=v1&kind=Pod&namespace={ns}&name={pod}")
    owners = browser.find_element("css selector", "ol.owners").text
    assert owners.startswith("ReplicaSet/web-") and owners.endswith("Deployment/web")
    assert "kind: Pod" in browser.find_element("css selector", "pre.yaml").text
    _open(browser, session, f"/object?apiVersion=apps/v1&kind=Deployment&namespace={ns}&name=web")
    wait_until(
        lambda: "ReplicaSet/web-" in browser.find_element("css selector", "div.children").text,
        what="the ReplicaSet among the children",
    )
    wait_until(
        lambda: "ScalingReplicaSet" in browser.find_element("css selector", "div.events").text,
        what="the deployment controller's Event",
    )
    screenshot(browser, "object")
    _open(browser, session, f"/resources?apiVersion=v1&kind=Pod&namespace={ns}")
    wait_until(
        lambda: len(browser.find_elements("css selector", "table.objects tr[data-name]")) >= 2
    )
    screenshot(browser, "resources")


def test_the_timeline_of_a_foo(browser: Any, session: Session) -> None:
    ns = session.namespace
    session.kubectl("apply", "-f", str(FOO_CRD / "samplecontroller.k8s.io_foos.yaml"))
    session.kubectl("wait", "--for=condition=Established", "crd/foos.samplecontroller.k8s.io")
    manifest = (
        "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n"
        f"  name: foo-1\n  namespace: {ns}\nspec:\n  deploymentName: foo-1\n"
        "  replicas: 1\n"
    )
    subprocess.run(
        ["kubectl", "--kubeconfig", str(session.cluster.kubeconfig_path), "apply", "-f", "-"],
        input=manifest,
        text=True,
        check=True,
        capture_output=True,
    )
    # Fully qualified: other tests of the session define kinds named Foo in other groups.
    uid = session.kubectl(
        "get", "foos.samplecontroller.k8s.io", "foo-1", "-n", ns, "-o", "jsonpath={.metadata.uid}"
    )
    foo_story(session.fake, ns, "foo-1", uid)
    _open(browser, session, f"/timeline?apiVersion={FOO}&kind=Foo&namespace={ns}&name=foo-1")
    bars = wait_until(
        lambda: browser.find_elements("css selector", "svg.chart rect.bar"), what="reconcile bars"
    )
    assert sorted(bar.get_attribute("data-result") for bar in bars) == [
        "error",
        "error",
        "success",
        "success",
    ]
    text = _text(browser)
    assert "patch by kubernetes-admin (kubectl-patch) → 200" in text
    assert "replace /spec/replicas: 3" in text
    assert "create Deployment/foo-1 by system:serviceaccount:op:foo" in text
    assert f"reconcile error in 12.0 ms: {ERROR} — backoff 10.0 ms" in text
    assert f"enqueue {ns}/foo-1 ← backoff" in text
    session.fake.add_audit(
        {
            "verb": "delete",
            "objectRef": {
                "apiVersion": FOO,
                "resource": "foos",
                "kind": "Foo",
                "namespace": ns,
                "name": "foo-1",
                "uid": uid,
            },
        }
    )
    wait_until(lambda: "delete by kubernetes-admin" in _text(browser), what="a live entry")


def test_controllers_and_an_operator_that_goes_and_comes_back(
    browser: Any, session: Session
) -> None:
    foo_story(session.fake, session.namespace, "foo-2", "u2")
    _open(browser, session, "/controllers")
    section = "section.operator[data-state='{}']"
    wait_until(lambda: browser.find_elements("css selector", section.format("up")))
    key = f"{session.namespace}/foo-2"
    backoff = wait_until(
        lambda: browser.find_element("css selector", f"tr.backoff[data-key='{key}']")
    )
    assert ERROR in backoff.text and "retries 3" in backoff.text
    row = browser.find_element("css selector", "table.controllers tr[data-controller=foo]").text
    assert row.split()[:4] == ["foo", f"{FOO}/Foo", "1", "400.0"]
    assert browser.find_elements("css selector", "svg.depth")
    port = session.fake.port
    session.loop.run(session.fake.stop())
    wait_until(lambda: browser.find_elements("css selector", section.format("gone")), what="gone")
    assert "gone" in _text(browser)
    session.loop.run(session.fake.start(port))
    wait_until(lambda: browser.find_elements("css selector", section.format("up")), what="back")


def test_the_cluster_view(browser: Any, session: Session) -> None:
    _open(browser, session, "/cluster")
    assert browser.find_elements("css selector", "table.nodes tr[data-name]")
    wait_until(lambda: "web-" in browser.find_element("css selector", "table.pods").text)
    screenshot(browser, "cluster")


def test_a_forbidden_kind_is_shown_as_forbidden(
    browser: Any, session: Session, tmp_path_factory: pytest.TempPathFactory
) -> None:
    kubeconfig = session.cluster.write_user_kubeconfig(
        tmp_path_factory.mktemp("nobody") / "kubeconfig", "nobody"
    )
    runner, console, clients = session.loop.run(open_console(str(kubeconfig), [], None))
    try:
        browser.get(f"{console.url}/resources?apiVersion=v1&kind=Secret&token={console.token}")
        wait_until(lambda: loaded(browser))
        assert browser.find_element("id", "view").get_attribute("data-forbidden") == "true"
        assert 'Forbidden: secrets is forbidden: User "nobody" cannot list' in _text(browser)
    finally:

        async def shut() -> None:
            await runner.cleanup()
            await console.http.close()
            for client in clients:
                await client.close()

        session.loop.run(shut())
