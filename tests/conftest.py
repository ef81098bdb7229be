"""Shared pytest configuration. Area fixtures live in each area's conftest.py."""

pytest_plugins = ["setpoint.testing.plugin"]
