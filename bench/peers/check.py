"""The regression gate: a quick run's ratios against the committed baseline.

    python -m bench.peers.check [--baseline bench/results/baseline.json] [--run RESULTS.json]

Without ``--run`` it first runs ``python -m bench --quick`` (written to
``bench/results/quick.json``). Only ratios of setpoint to its peers measured in the same run are
compared, never absolute figures, so a slower machine does not fail it. It fails (exit code 1)
when, for a scenario in both files:

- setpoint did not converge;
- a request ratio grew by more than ``REQUEST_TOLERANCE`` (requests hardly vary between runs);
- a time, CPU or peak-RSS ratio grew by more than ``TIMING_TOLERANCE`` (a shared machine moves
  them by tens of percent from run to run).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

RESULTS: Final = Path(__file__).resolve().parents[1] / "results"
REQUEST_TOLERANCE: Final = 0.10
TIMING_TOLERANCE: Final = 0.50
MEMORY_TOLERANCE: Final = 0.25
TOLERANCES: Final = {
    "requests": REQUEST_TOLERANCE,
    "seconds": TIMING_TOLERANCE,
    "cpu_seconds": TIMING_TOLERANCE,
    "peak_rss_mib": MEMORY_TOLERANCE,
    "settled_cpu_seconds": TIMING_TOLERANCE,
}


def regressions(baseline: dict[str, Any], run: dict[str, Any]) -> list[str]:
    """Human-readable regressions of ``run`` against ``baseline`` (empty: none)."""
    found: list[str] = []
    for result in run["results"]:
        if result["contestant"] == "setpoint" and not result["converged"]:
            found.append(f"{result['scenario']}: setpoint did not converge")
    before = {row["scenario"]: row for row in baseline["ratios"]}
    for row in run["ratios"]:
        old = before.get(row["scenario"])
        if old is None:
            continue
        for key, value in row.items():
            if key == "scenario" or value is None or old.get(key) is None:
                continue
            figure = key.split("_setpoint_over_")[0]
            limit = old[key] * (1 + TOLERANCES[figure])
            if value > limit and value - old[key] > 0.01:
                found.append(
                    f"{row['scenario']}: {key} = {value:.3f}, baseline {old[key]:.3f} "
                    f"(limit {limit:.3f}, +{TOLERANCES[figure]:.0%})"
                )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.check")
    parser.add_argument("--baseline", type=Path, default=RESULTS / "baseline.json")
    parser.add_argument("--run", type=Path, help="A results file (default: run --quick now).")
    args = parser.parse_args(argv)
    run_path = args.run
    if run_path is None:
        run_path = RESULTS / "quick.json"
        subprocess.run(
            [sys.executable, "-m", "bench", "--quick", "--out", str(run_path)], check=True
        )
    baseline = json.loads(args.baseline.read_text())
    found = regressions(baseline, json.loads(run_path.read_text()))
    for line in found:
        print(f"bench-check: regression: {line}", file=sys.stderr)
    if found:
        print(
            f"bench-check: {len(found)} regression(s) against {args.baseline}; if intended, "
            f"refresh it: cp {run_path} {args.baseline}",
            file=sys.stderr,
        )
        return 1
    print(f"bench-check: no regression against {args.baseline}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
