"""``python -m bench``: setpoint against Kopf and a raw client, side by side.

    python -m bench                       # N = 1,000, every scenario and contestant, 1 run
    python -m bench --quick               # N = 100, fanout/storm/idle/restart: about a minute
    python -m bench --objects 5000 --runs 3 --scenarios fanout,restart --contestants setpoint,kopf
    python -m bench --scenarios fanout --contestants setpoint,setpoint-ignore-own-writes,kopf,raw

Prints a Markdown table and writes ``bench/results/latest.json`` (see bench/peers/report.py).
The micro-benchmarks of single components are ``python -m bench.apiserver`` and the others
(``make bench-micro``).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import logging
import sys
import tempfile
from pathlib import Path

from bench.peers.harness import run_benchmark
from bench.peers.processes import CONTESTANTS, DEFAULT_CONTESTANTS
from bench.peers.report import table
from bench.peers.scenarios import SCENARIOS, Settings

RESULTS = Path(__file__).resolve().parent / "results"
#: --quick leaves out freshness (a backlog to converge first) and fault (Kopf backs off for tens
#: of seconds after the outage): name them with --scenarios to include them.
QUICK_SCENARIOS = ("fanout", "storm", "idle", "restart")


def _names(text: str, allowed: tuple[str, ...], what: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in allowed]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (choose from {', '.join(allowed)})")
    return names


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, help="Widgets per scenario (default 1000).")
    parser.add_argument("--quick", action="store_true", help="Small sizes, under a minute.")
    parser.add_argument(
        "--scenarios",
        help=f"Comma-separated (default: all; with --quick: {','.join(QUICK_SCENARIOS)}).",
    )
    parser.add_argument(
        "--contestants",
        default=",".join(DEFAULT_CONTESTANTS),
        help=f"Comma-separated, from {','.join(CONTESTANTS)} (default: "
        f"{','.join(DEFAULT_CONTESTANTS)}; setpoint-ignore-own-writes is setpoint's operator "
        "with the ignore_own_writes=True opt-in).",
    )
    parser.add_argument("--runs", type=int, default=1, help="Runs; figures are medians.")
    parser.add_argument("--freshness-objects", type=int, help="Backlog (default 10000).")
    parser.add_argument("--idle-seconds", type=float, help="Idle period (default 60).")
    parser.add_argument("--out", type=Path, default=RESULTS / "latest.json", help="Results file.")
    parser.add_argument("--workdir", type=Path, help="Logs and data (default: a temp dir).")
    return parser.parse_args(argv)


def settings_from(args: argparse.Namespace, workdir: Path) -> Settings:
    settings = Settings(workdir=workdir)
    if args.quick:
        settings = Settings(
            workdir=workdir, objects=100, freshness_objects=300, freshness_samples=3,
            fault_objects=100, idle_seconds=2.0, quiet_seconds=1.0, poll_seconds=0.1,
        )  # fmt: skip
    if args.objects is not None:
        settings.objects = settings.fault_objects = args.objects
    if args.freshness_objects is not None:
        settings.freshness_objects = args.freshness_objects
    if args.idle_seconds is not None:
        settings.idle_seconds = args.idle_seconds
    return settings


async def main_async(args: argparse.Namespace, workdir: Path) -> dict[str, object]:
    default = QUICK_SCENARIOS if args.quick else SCENARIOS
    scenarios = _names(args.scenarios or ",".join(default), SCENARIOS, "scenario")
    contestants = _names(args.contestants, tuple(CONTESTANTS), "contestant")
    if "kopf" in contestants and importlib.util.find_spec("kopf") is None:
        raise SystemExit(
            "kopf is not installed; install the bench extra (make venv) or leave it out with "
            "--contestants setpoint,raw"
        )
    settings = settings_from(args, workdir)
    return await run_benchmark(settings, scenarios, contestants, args.runs)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(message)s")
    with tempfile.TemporaryDirectory(prefix="setpoint-bench-") as temporary:
        workdir = args.workdir or Path(temporary)
        workdir.mkdir(parents=True, exist_ok=True)
        document = asyncio.run(main_async(args, workdir))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(document, indent=2) + "\n")
    print(table(document))
    print(f"\nwritten to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
