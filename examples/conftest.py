"""The examples' tests run against setpoint's local cluster, as a user's project's tests do.

Each example is a project laid out as `setpoint init` makes one (``examples/NAME/PACKAGE/``); its
directory goes on ``sys.path`` here so that its tests import ``PACKAGE`` as the project would.
"""

import sys
from pathlib import Path

pytest_plugins = ["setpoint.testing.plugin"]

for _project in sorted(Path(__file__).parent.iterdir()):
    if _project.is_dir() and str(_project) not in sys.path:
        sys.path.insert(0, str(_project))
