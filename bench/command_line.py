"""The command line every benchmark shares: --json, --quick, logs on stderr, exit 1 on failure."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

SizesT = TypeVar("SizesT")


def run_benchmark(
    prog: str,
    description: str | None,
    measure: Callable[[SizesT], Coroutine[Any, Any, dict[str, Any]]],
    sizes: tuple[SizesT, SizesT],
    render: Callable[[dict[str, Any]], str],
    failures: Callable[[dict[str, Any]], list[str]],
    argv: list[str] | None = None,
) -> None:
    """Parse ``argv``, run ``measure`` at full or quick sizes, print, exit 1 if a part failed.

    ``sizes`` is ``(full, quick)``. Stdout gets either the human table or, with ``--json``, one
    JSON object and nothing else, so other tools can read it; progress goes to stderr.
    """
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s: %(message)s"
    )
    full, quick = sizes
    figures = asyncio.run(measure(quick if args.quick else full))
    sys.stdout.write((json.dumps(figures) if args.json else render(figures)) + "\n")
    failed = failures(figures)
    if failed:
        sys.stderr.write(f"{prog}: some measurements failed:\n  " + "\n  ".join(failed))
        sys.exit(1)
