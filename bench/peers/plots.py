"""Plots of fan-out convergence time and peak RSS against N, per contestant.

    python -m bench.peers.plots RESULTS.json... [--out docs/img]

Each file is a ``python -m bench`` result (e.g. one per ``--objects``); the fanout results of
all of them are plotted as ``fanout_seconds.png`` and ``fanout_rss.png``.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt

FIGURES = {
    "seconds": ("fanout_seconds.png", "seconds to converge (start → all converged)"),
    "peak_rss_mib": ("fanout_rss.png", "peak RSS of the operator (MiB)"),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.plots")
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    args = parser.parse_args(argv)
    points: dict[str, list[dict[str, float]]] = defaultdict(list)
    for path in args.results:
        for result in json.loads(path.read_text())["results"]:
            if result["scenario"] == "fanout":
                points[result["contestant"]].append(result)
    args.out.mkdir(parents=True, exist_ok=True)
    for figure, (name, label) in FIGURES.items():
        fig, axes = plt.subplots(figsize=(6, 4))
        for contestant, results in sorted(points.items()):
            ordered = sorted(results, key=lambda r: r["objects"])
            axes.plot(
                [r["objects"] for r in ordered],
                [r[figure] for r in ordered],
                marker="o",
                label=contestant,
            )
        axes.set_xscale("log")
        axes.set_xlabel("Widgets (N)")
        axes.set_ylabel(label)
        axes.set_title(f"fan-out: {label.split(' (')[0]}")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
        fig.tight_layout()
        fig.savefig(args.out / name, dpi=100)
        plt.close(fig)
        print(args.out / name)


if __name__ == "__main__":
    main()
