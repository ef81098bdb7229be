"""What every contestant computes for a Widget: its child ConfigMap's name and data.

Shared by the harness (to check convergence) and the contestants (to write it), so all of them
do exactly the same work per object.
"""

from __future__ import annotations

from typing import Any, Final

GROUP: Final = "bench.setpoint.dev"
VERSION: Final = "v1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
PLURAL: Final = "widgets"
KIND: Final = "Widget"
READY: Final = "Ready"


def child_name(widget_name: str) -> str:
    """The name of a Widget's child ConfigMap."""
    return f"{widget_name}-data"


def child_data(spec: dict[str, Any]) -> dict[str, str]:
    """The child's ``data``: the Widget's spec fields as strings."""
    return {key: str(value) for key, value in sorted(spec.items())}


def ready_status(generation: int) -> dict[str, Any]:
    """The ``status`` of a Widget whose child matches the generation it was computed from."""
    return {"phase": READY, "observedGeneration": generation}
