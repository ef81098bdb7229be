"""Where the upstream JSON schemas of the built-in kinds are: in the ``kubernetes-validate``
package, which ships them (``kubernetes-json-schema/<version>-<set>/``).

The directory is found without importing the package: its ``__init__`` imports jsonschema
(about a tenth of the server's start-up), and reading the schema files needs none of it.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

PACKAGE = "kubernetes_validate"


@functools.cache
def kubernetes_json_schema_root() -> Path:
    """The ``kubernetes-json-schema`` directory of the installed ``kubernetes-validate``.

    Raises ``ModuleNotFoundError`` (an ``ImportError``), as importing it would, when the
    package is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"No module named {PACKAGE!r}", name=PACKAGE)
    return Path(spec.origin).parent / "kubernetes-json-schema"
