"""The console during ``setpoint demo`` (slow: the demo starts a cluster and every example's
operator): every sample is listed in its kind's Resources view."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from setpoint.cli.demo.session import load_samples
from tests.console.browser import loaded, open_browser, wait_until
from tests.console.demo_session import EXAMPLES, Demo, run_demo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo() -> Iterator[Demo]:
    yield from run_demo()


@pytest.fixture(scope="module")
def browser(demo: Demo) -> Iterator[Any]:
    for driver in open_browser():
        driver.get(demo.url)
        yield driver


def test_the_console_shows_every_sample_of_the_demo(browser: Any, demo: Demo) -> None:
    samples = load_samples(EXAMPLES)
    assert len(samples) >= 7
    for sample in samples:
        kind, name = sample["kind"], sample["metadata"]["name"]
        browser.get(
            f"{demo.base}/resources?apiVersion={sample['apiVersion']}&kind={kind}&namespace=default"
        )
        wait_until(lambda: loaded(browser), what=f"the {kind} list")
        wait_until(
            lambda name=name: browser.find_elements(
                "css selector", f"table.objects tr[data-name='{name}']"
            ),
            what=f"{kind}/{name} in the console",
        )
    kinds = {a.text for a in browser.find_elements("css selector", "nav.kinds a.kind")}
    assert {"At", "Foo", "PodSet", "TDSet", "IndexedJob", "Memcached"} <= kinds
