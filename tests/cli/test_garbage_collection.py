"""A served process's collector settings: start-up's heap frozen, cycles still freed."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from setpoint.cli.garbage_collection import YOUNG_THRESHOLD


def test_settled_heap_still_frees_new_cycles() -> None:
    # In a process of its own: freezing is for the whole process, and pytest's heap is not
    # a server's.
    script = textwrap.dedent(
        """
        import gc, weakref
        from setpoint.cli.garbage_collection import settle_after_start

        class Node:
            pass

        settle_after_start()
        node = Node()
        node.self = node  # a cycle made after start-up
        alive = weakref.ref(node)
        del node
        gc.collect()
        print(gc.isenabled(), gc.get_freeze_count() > 0, gc.get_threshold()[0], alive() is None)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()

    assert out == ["True", "True", str(YOUNG_THRESHOLD), "True"]
