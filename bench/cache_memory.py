"""RSS of N cached ConfigMaps: setpoint's informer cache vs plain ``json.loads`` dicts.

    python -m bench.cache_memory write PAGES_FILE COUNT        # build the list pages once
    python -m bench.cache_memory measure PAGES_FILE VARIANT    # in a fresh process: one figure

``write`` stores the list response pages (500 items each, as the reflector asks for them) of
COUNT ConfigMaps of about 1.2 KiB of JSON as a server sends them (with one managedFields entry;
about 0.95 KiB without it) in a file, with their sizes in a sidecar. ``measure``
runs in a fresh interpreter per measurement, so no variant inherits another's heap: it takes the
RSS with everything imported, builds the collection, drops everything transient, collects
garbage and takes the RSS again. It prints one JSON object.

Variants: ``cache`` is the real read path, a :class:`setpoint.cache.SharedInformer` whose
reflector lists the pages through a client that replays them from the file (no server, so the
figure is the cache alone); ``dict`` keeps ``json.loads`` of every item in a dict by
namespace/name, which is what a cache of plain dicts costs.
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import msgspec
import psutil

from bench.config_maps import config_map

#: Items per list page: the reflector's default page size.
PAGE_SIZE: Final = 500
#: Namespaces the objects are spread over (the store keeps one dict per namespace).
NAMESPACES: Final = 20
#: A sync of 100,000 objects from a local file takes seconds; this only catches a hang.
SYNC_TIMEOUT_SECONDS: Final = 600.0


def stored_config_map(index: int) -> dict[str, Any]:
    """A ConfigMap as a server returns it (uid, resourceVersion, timestamp, managedFields)."""
    obj = config_map(f"config-{index:06d}", f"team-{index % NAMESPACES}", index)
    obj["metadata"].update(
        {
            "uid": f"8c7a3b52-{index % 0xFFFF:04x}-4b7e-9f1d-{index:012x}",
            "resourceVersion": str(100_000 + index),
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [
                {
                    "manager": "kubectl-client-side-apply",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-01-01T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:payload": {}}, "f:metadata": {"f:labels": {}}},
                }
            ],
        }
    )
    return obj


def write_pages(path: Path, count: int) -> None:
    """Write the list pages of ``count`` ConfigMaps to ``path`` and sizes to ``path.json``."""
    encode = msgspec.json.Encoder().encode
    sizes: list[int] = []
    json_bytes = 0
    stripped_bytes = 0
    with path.open("wb") as out:
        for start in range(0, count, PAGE_SIZE):
            items = [stored_config_map(i) for i in range(start, min(count, start + PAGE_SIZE))]
            json_bytes += sum(len(encode(item)) for item in items)
            for item in items:
                metadata = {k: v for k, v in item["metadata"].items() if k != "managedFields"}
                stripped_bytes += len(encode({**item, "metadata": metadata}))
            last = start + PAGE_SIZE >= count
            page = {
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "200000", **({} if last else {"continue": "more"})},
                "items": items,
            }
            body = encode(page)
            sizes.append(len(body))
            out.write(body)
    sidecar = {
        "count": count,
        "json_bytes": json_bytes,
        "json_bytes_without_managed_fields": stripped_bytes,
        "page_sizes": sizes,
    }
    Path(f"{path}.json").write_text(json.dumps(sidecar))


class ReplayClient:
    """A ``ListWatchClient`` serving list pages from a file and a watch that stays quiet."""

    def __init__(self, path: Path, page_sizes: list[int]) -> None:
        self._path = path
        self._page_sizes = page_sizes
        self._next_page = 0
        self._offset = 0

    async def list_raw(self, *args: Any, continue_token: str | None = None, **kwargs: Any) -> bytes:
        """The next page (a list without a continue token starts over)."""
        if continue_token is None:
            self._next_page, self._offset = 0, 0
        size = self._page_sizes[self._next_page]
        with self._path.open("rb") as pages:
            pages.seek(self._offset)
            body = pages.read(size)
        self._next_page += 1
        self._offset += size
        return body

    async def watch_raw(self, *args: Any, **kwargs: Any) -> AsyncIterator[bytes]:
        """A watch on which nothing happens."""
        await asyncio.Event().wait()
        yield b""  # pragma: no cover - never reached


async def _fill_cache(path: Path, page_sizes: list[int]) -> Any:
    from setpoint.api.gvk import ResourceInfo
    from setpoint.cache import SharedInformer

    resource = ResourceInfo(
        group="",
        version="v1",
        kind="ConfigMap",
        resource="configmaps",
        namespaced=True,
        list_kind="ConfigMapList",
    )
    informer = SharedInformer(ReplayClient(path, page_sizes), resource)
    informer.start()
    await informer.wait_for_sync(SYNC_TIMEOUT_SECONDS)
    await informer.stop()
    return informer


def _fill_dicts(path: Path, page_sizes: list[int]) -> dict[tuple[str, str], Any]:
    objects: dict[tuple[str, str], Any] = {}
    with path.open("rb") as pages:
        for size in page_sizes:
            for item in json.loads(pages.read(size))["items"]:
                metadata = item["metadata"]
                objects[(metadata["namespace"], metadata["name"])] = item
    return objects


def measure(path: Path, variant: str) -> dict[str, Any]:
    """RSS growth of holding the objects of ``path`` as ``variant`` (``cache`` or ``dict``)."""
    sidecar = json.loads(Path(f"{path}.json").read_text())
    page_sizes: list[int] = sidecar["page_sizes"]
    import setpoint.cache  # noqa: F401 - imported before the baseline, as in a real process

    # An operator's event loop exists before its caches fill; its one-time cost is not per object.
    asyncio.run(asyncio.sleep(0))
    process = psutil.Process()
    gc.collect()
    before = process.memory_info().rss
    kept: Any
    if variant == "cache":
        informer = asyncio.run(_fill_cache(path, page_sizes))
        held = len(informer.store)
        kept = informer
    elif variant == "dict":
        kept = _fill_dicts(path, page_sizes)
        held = len(kept)
    else:
        raise ValueError(f"variant: expected 'cache' or 'dict', got {variant!r}")
    gc.collect()
    grown = process.memory_info().rss - before
    if held != sidecar["count"]:
        raise RuntimeError(f"{variant}: holds {held} objects, expected {sidecar['count']}")
    return {
        "variant": variant,
        "objects": held,
        "json_bytes_per_object": sidecar["json_bytes"] / held,
        "rss_bytes_per_object": grown / held,
        "rss_per_json_byte": grown / sidecar["json_bytes"],
        "rss_per_json_byte_without_managed_fields": (
            grown / sidecar["json_bytes_without_managed_fields"]
        ),
    }


def main(argv: list[str]) -> None:
    """Command-line entry point (see the module docs)."""
    if len(argv) == 3 and argv[0] == "write":
        write_pages(Path(argv[1]), int(argv[2]))
    elif len(argv) == 3 and argv[0] == "measure":
        sys.stdout.write(json.dumps(measure(Path(argv[1]), argv[2])) + "\n")
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
