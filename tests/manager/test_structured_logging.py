"""Log lines carry the reconcile's controller, key and id, as JSON or human-readable text."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from setpoint.controller.log_context import reconcile_context
from setpoint.manager.structured_logging import configure_logging

LOGGER = "tests.manager.structured"


@pytest.fixture
def stream() -> Iterator[io.StringIO]:
    buffer = io.StringIO()
    logger = logging.getLogger(LOGGER)
    yield buffer
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


def lines(buffer: io.StringIO) -> list[str]:
    return buffer.getvalue().splitlines()


def test_json_lines_carry_the_reconcile_context(stream: io.StringIO) -> None:
    configure_logging("json", "debug", stream=stream, logger=LOGGER)
    log = logging.getLogger(LOGGER)
    with reconcile_context("widget", "default/w1", "rid-1"):
        log.info("created %s", "ConfigMap", extra={"replicas": 3})
    log.warning("outside")
    inside, outside = (json.loads(line) for line in lines(stream))
    assert inside["msg"] == "created ConfigMap"
    assert inside["level"] == "info"
    assert inside["logger"] == LOGGER
    assert inside["ts"].endswith("Z")
    assert (inside["controller"], inside["namespace"], inside["name"]) == (
        "widget",
        "default",
        "w1",
    )
    assert inside["reconcileID"] == "rid-1"
    assert inside["replicas"] == 3
    assert outside["level"] == "warn"
    assert "controller" not in outside and "reconcileID" not in outside


async def test_context_follows_each_task_separately(stream: io.StringIO) -> None:
    configure_logging("json", stream=stream, logger=LOGGER)
    log = logging.getLogger(LOGGER)

    async def reconcile(name: str) -> None:
        with reconcile_context("widget", f"ns/{name}"):
            await asyncio.sleep(0)
            log.info("reconciling")
            await asyncio.to_thread(log.info, "in a thread")

    await asyncio.gather(reconcile("a"), reconcile("b"))
    entries = [json.loads(line) for line in lines(stream)]
    assert sorted(entry["name"] for entry in entries) == ["a", "a", "b", "b"]
    ids: dict[str, set[str]] = {"a": set(), "b": set()}
    for entry in entries:
        ids[entry["name"]].add(entry["reconcileID"])
    assert len(ids["a"]) == 1 and len(ids["b"]) == 1 and ids["a"] != ids["b"]


def test_cluster_scoped_key_has_no_namespace(stream: io.StringIO) -> None:
    configure_logging("json", stream=stream, logger=LOGGER)
    with reconcile_context("node-labeller", "node-1"):
        logging.getLogger(LOGGER).info("labelled")
    entry = json.loads(lines(stream)[0])
    assert entry["name"] == "node-1"
    assert "namespace" not in entry


def test_errors_carry_message_and_stacktrace(stream: io.StringIO) -> None:
    configure_logging("json", stream=stream, logger=LOGGER)
    try:
        raise ValueError("spec.replicas must be positive")
    except ValueError:
        logging.getLogger(LOGGER).exception("reconciler error")
    entry = json.loads(lines(stream)[0])
    assert entry["level"] == "error"
    assert entry["error"] == "spec.replicas must be positive"
    assert "Traceback" in entry["stacktrace"]


def test_human_format_shows_level_logger_message_and_fields(stream: io.StringIO) -> None:
    configure_logging("human", stream=stream, logger=LOGGER)
    with reconcile_context("widget", "default/w1", "rid-9"):
        logging.getLogger(LOGGER).info("done", extra={"took": 0.5})
    line = lines(stream)[0]
    _ts, level, logger, message, fields = line.split("\t")
    assert level.strip() == "INFO" and logger == LOGGER and message == "done"
    assert json.loads(fields) == {
        "controller": "widget",
        "namespace": "default",
        "name": "w1",
        "reconcileID": "rid-9",
        "took": 0.5,
    }


def test_configuring_again_replaces_the_handler(stream: io.StringIO) -> None:
    configure_logging("human", stream=io.StringIO(), logger=LOGGER)
    configure_logging("json", stream=stream, logger=LOGGER)
    logging.getLogger(LOGGER).info("once")
    assert len(lines(stream)) == 1
    assert len(logging.getLogger(LOGGER).handlers) == 1


def test_bad_format_and_level_are_named() -> None:
    with pytest.raises(ValueError, match=r"log format.*'xml'"):
        configure_logging("xml", logger=LOGGER)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"log level.*'loud'"):
        configure_logging("json", "loud", logger=LOGGER)
