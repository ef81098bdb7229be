"""Headless Chromium for the console's browser tests: Debian's ``chromium`` driven by
Selenium 4 through Debian's ``chromedriver`` (both paths given, so Selenium Manager never
downloads anything). ``make system-packages`` installs both; without them the tests are
skipped with that reason (shown by ``-ra``)."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

CHROMIUM = os.environ.get("SETPOINT_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SETPOINT_CHROMEDRIVER", "/usr/bin/chromedriver")
#: Set to 1 (``make console-screenshots``) to write docs/images/console-*.png.
SCREENSHOTS = os.environ.get("SETPOINT_CONSOLE_SCREENSHOTS") == "1"
IMAGES = Path(__file__).parents[2] / "docs" / "images"
WINDOW = (1400, 900)


def open_browser() -> Iterator[Any]:
    """A headless Chromium (as a generator for a fixture); skips without Debian's packages."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        pytest.skip(f"needs {CHROMIUM} and {CHROMEDRIVER}: `make system-packages` installs them")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
        "--disable-extensions",
        "--no-first-run",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def wait_until(condition: Callable[[], T], timeout: float = 10.0, what: str = "") -> T:
    """Poll ``condition`` until it returns something truthy; AssertionError after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception as failed:  # a stale element while the page repaints
            last = failed
        time.sleep(0.05)
    raise AssertionError(
        f"not within {timeout} s: {what or condition}" + (f" ({last})" if last else "")
    )


def screenshot(driver: Any, name: str) -> None:
    """docs/images/console-NAME.png, when screenshots are asked for."""
    if SCREENSHOTS:
        IMAGES.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(IMAGES / f"console-{name}.png"))


def loaded(driver: Any) -> bool:
    return bool(driver.find_element("id", "view").get_attribute("data-loaded") == "true")


class LoopThread:
    """An event loop in a thread, for the async parts (console, fakes) of sync browser tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() and shutil.which(CHROMEDRIVER) is not None
