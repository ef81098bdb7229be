"""The URL paths kubebuilder gives webhooks, so that generated configurations line up.

controller-runtime's builder serves a kind's defaulter at
``/mutate-<group with dots as dashes>-<version>-<kind in lower case>`` and its validator at
``/validate-…``; the core group is spelled ``core``. Conversion is served at ``/convert``.
"""

from __future__ import annotations

from typing import Final

CONVERT_PATH: Final = "/convert"


def _suffix(group: str, version: str, kind: str) -> str:
    return f"{(group or 'core').replace('.', '-')}-{version}-{kind.lower()}"


def mutate_path(group: str, version: str, kind: str) -> str:
    """``/mutate-batch-tutorial-kubebuilder-io-v1-cronjob`` for a CronJob defaulter."""
    return "/mutate-" + _suffix(group, version, kind)


def validate_path(group: str, version: str, kind: str) -> str:
    """``/validate-batch-tutorial-kubebuilder-io-v1-cronjob`` for a CronJob validator."""
    return "/validate-" + _suffix(group, version, kind)
