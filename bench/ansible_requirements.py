"""What ``setpoint run`` of an Ansible operator spends on its requirements.yml at start, when
everything it lists is installed (the usual case): setpoint's check of what Ansible would find
(:func:`setpoint.ansible.requirements.ensure_requirements`), beside the peer, the command
Operator SDK's image build runs (``ansible-galaxy collection install -r requirements.yml``),
which answers "Nothing to do" for the same file. Alternately, ``--runs`` times each (default 7),
on ``examples/memcached-ansible``.

``python -m bench.ansible_requirements [--runs K]`` prints one JSON object. It needs
``make ansible-deps``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from setpoint.ansible.requirements import ensure_requirements

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "memcached-ansible"


def _check_seconds() -> float:
    started = time.perf_counter()
    installed = ensure_requirements(EXAMPLE)
    seconds = time.perf_counter() - started
    assert installed == [], installed  # everything is there: nothing may be installed
    return seconds


def _galaxy_seconds() -> float:
    galaxy = str(Path(sys.executable).parent / "ansible-galaxy")
    started = time.perf_counter()
    done = subprocess.run(
        [galaxy, "collection", "install", "-r", str(EXAMPLE / "requirements.yml")],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    assert done.returncode == 0 and "Nothing to do" in done.stdout, done.stdout + done.stderr
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    check: list[float] = []
    galaxy: list[float] = []
    load_before = os.getloadavg()[0]
    for _ in range(args.runs):
        check.append(_check_seconds())
        galaxy.append(_galaxy_seconds())
    check_p50, galaxy_p50 = statistics.median(check), statistics.median(galaxy)
    print(
        json.dumps(
            {
                "runs": args.runs,
                "setpoint_check_seconds_p50": round(check_p50, 6),
                "ansible_galaxy_install_seconds_p50": round(galaxy_p50, 3),
                "galaxy_over_check": round(galaxy_p50 / check_p50, 1),
                "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
            }
        )
    )


if __name__ == "__main__":
    main()
