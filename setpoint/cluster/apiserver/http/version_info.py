"""What ``/version`` reports: Kubernetes 1.32, so clients (and kubectl's dispatcher) pick 1.32."""

from __future__ import annotations

import platform
import sys
from typing import Any, Final

KUBERNETES_MAJOR: Final = "1"
KUBERNETES_MINOR: Final = "32"
#: A 1.32 patch release; kubectl's dispatcher reads major/minor, clients print gitVersion.
KUBERNETES_GIT_VERSION: Final = "v1.32.4"
BUILD_DATE: Final = "2025-04-22T00:00:00Z"


def version_document() -> dict[str, Any]:
    """The ``version.Info`` object."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)
    return {
        "major": KUBERNETES_MAJOR,
        "minor": KUBERNETES_MINOR,
        "gitVersion": KUBERNETES_GIT_VERSION,
        "gitCommit": "setpoint",
        "gitTreeState": "clean",
        "buildDate": BUILD_DATE,
        "goVersion": f"python{sys.version_info.major}.{sys.version_info.minor}",
        "compiler": "setpoint",
        "platform": f"{sys.platform}/{arch}",
    }
