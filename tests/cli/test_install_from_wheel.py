"""From a wheel to a reconciling operator of one's own, outside the repository and offline:
`python -m build` (an sdist, then the wheel built from it), a fresh venv that installs the
wheel (pip's indexes here are local files), `setpoint init demo-op --kind Website`,
`setpoint dev` to the first reconcile line, and the project's own `make test`.

Slow (two venvs are created and filled): `make test-install` runs it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from setpoint import __version__

REPOSITORY = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(shutil.which("make") is None, reason="needs make"),
]


def _run(*command: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, env=env,
        timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _clean_env() -> dict[str, str]:
    # Nothing of this checkout may leak into the new venv's processes.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "PYTHONUNBUFFERED": "1"}


def test_a_wheel_installs_offline_and_a_new_project_reaches_its_first_reconcile(
    tmp_path: Path,
) -> None:
    dist = tmp_path / "dist"
    _run(sys.executable, "-m", "build", "--outdir", dist, REPOSITORY, cwd=tmp_path)
    (sdist,) = dist.glob(f"setpoint-{__version__}.tar.gz")
    (wheel,) = dist.glob(f"setpoint-{__version__}-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"setpoint/py.typed", "setpoint/cli/main.py", "setpoint/testing/plugin.py"} <= names
    assert not any(name.startswith(("tests/", "examples/", "bench/")) for name in names)
    with tarfile.open(sdist) as archive:
        assert f"setpoint-{__version__}/pyproject.toml" in archive.getnames()

    env = _clean_env()
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    bin_dir = venv / "bin"
    # By the wheel's path, as docs/typed-apis.md says: pip records it (direct_url.json), so
    # `setpoint init` knows to copy it into the project.
    _run(bin_dir / "pip", "install", "--quiet", f"{wheel}[testing]", cwd=tmp_path, env=env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"

    work = tmp_path / "work"
    work.mkdir()
    output = _run(bin_dir / "setpoint", "init", "demo-op", "--kind", "Website", cwd=work, env=env)
    assert f"setpoint comes from the wheel {wheel}" in output
    project = work / "demo-op"
    assert (project / "wheels" / wheel.name).is_file()

    dev = subprocess.Popen(
        [bin_dir / "setpoint", "dev"], cwd=project, env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    seen: list[str] = []
    try:
        assert dev.stderr is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = dev.stderr.readline()
            if not line:
                break
            seen.append(line)
            if re.search(r"Website default/website-sample: Ready", line):
                break
        else:
            raise AssertionError("".join(seen))
        assert re.search(r"Website default/website-sample: Ready", seen[-1]), "".join(seen)
        os.killpg(dev.pid, signal.SIGINT)
        assert dev.wait(30) == 0
    finally:
        if dev.poll() is None:
            os.killpg(dev.pid, signal.SIGKILL)
            dev.wait()

    # The project's own venv, from its Makefile: setpoint comes from wheels/.
    tests = _run("make", "test", f"PYTHON={sys.executable}", cwd=project, env=env)
    assert "1 passed" in tests
