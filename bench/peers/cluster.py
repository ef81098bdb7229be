"""The local cluster under the contestants: ``setpoint cluster serve`` in its own process.

The harness talks to it over plain HTTP and writes a kubeconfig naming that listener and the
cluster's token, which every contestant uses (so none of them pays for TLS). Requests are read
back from the cluster's ``/metrics`` (``apiserver_request_total`` and
``apiserver_longrunning_requests``), per ``client`` label.
"""

from __future__ import annotations

import re
import signal
from collections import Counter
from pathlib import Path
from typing import Final

import aiohttp
import psutil
import yaml

from bench.server_process import ServerProcess, free_port, python_module_argv

#: The verbs of the result's ``requests``, and the metric verbs each one sums.
VERBS: Final = {
    "get": ("GET",),
    "list": ("LIST",),
    "watch": ("WATCH",),
    "create": ("POST",),
    "update": ("PUT",),
    "patch": ("PATCH", "APPLY"),
    "delete": ("DELETE", "DELETECOLLECTION"),
}
#: The bucket of requests outside resources (discovery, ``/version``): ``other_requests``.
NON_RESOURCE: Final = "non-resource"
HARNESS_AGENT: Final = "bench-harness/1.0"
_SAMPLE: Final = re.compile(
    r"^(apiserver_request_total|apiserver_longrunning_requests)\{(.*)\} (\d+)$"
)
_LABEL: Final = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


class Requests:
    """Requests started per (client, metric verb): finished ones plus open watches.

    A watch counts in ``apiserver_request_total`` when it ends and in
    ``apiserver_longrunning_requests`` while open, so their sum counts every watch started, and
    differences of sums count the watches started in between.
    """

    def __init__(self, counts: Counter[tuple[str, str]] | None = None) -> None:
        self.counts: Counter[tuple[str, str]] = counts or Counter()

    @classmethod
    def parse(cls, text: str) -> Requests:
        counts: Counter[tuple[str, str]] = Counter()
        for line in text.splitlines():
            match = _SAMPLE.match(line)
            if match:
                labels = dict(_LABEL.findall(match[2]))
                # Discovery, /version and other non-resource paths have no resource label.
                verb = labels["verb"] if labels["resource"] else NON_RESOURCE
                counts[(labels["client"], verb)] += int(match[3])
        return cls(counts)

    def __add__(self, other: Requests) -> Requests:
        return Requests(self.counts + other.counts)

    def since(self, earlier: Requests) -> Requests:
        """The requests started after ``earlier`` was read."""
        delta = Counter(self.counts)
        delta.subtract(earlier.counts)
        return Requests(Counter({key: value for key, value in delta.items() if value > 0}))

    def by_verb(self, clients: tuple[str, ...]) -> dict[str, int]:
        """The result's ``requests``: counts of ``clients`` by verb (every verb present)."""
        return {
            verb: sum(self.counts[(client, m)] for client in clients for m in metric_verbs)
            for verb, metric_verbs in VERBS.items()
        }

    def non_resource(self, clients: tuple[str, ...]) -> int:
        """Discovery and other requests outside resources."""
        return sum(self.counts[(client, NON_RESOURCE)] for client in clients)

    def total(self, clients: tuple[str, ...]) -> int:
        return sum(value for (client, _), value in self.counts.items() if client in clients)


class Cluster:
    """One ``setpoint cluster serve`` process (in memory, or SQLite under ``data_dir``).

    API only unless ``controllers`` (the soak needs the garbage collector for deleted Widgets).
    """

    def __init__(
        self, workdir: Path, data_dir: Path | None = None, controllers: bool = False
    ) -> None:
        self.workdir = workdir
        self.data_dir = data_dir
        self.port = free_port()
        self.https_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.served_kubeconfig = workdir / "served.kubeconfig"
        self.kubeconfig = workdir / "bench.kubeconfig"
        storage = ["--in-memory"] if data_dir is None else ["--data-dir", str(data_dir)]
        argv = python_module_argv(
            "setpoint", "cluster", "serve", "--port", str(self.port),
            "--https-port", str(self.https_port), *storage,
            "--kubeconfig", str(self.served_kubeconfig), "--log-level", "warning",
            *([] if controllers else ["--no-controllers"]),
        )  # fmt: skip
        self.server = ServerProcess("cluster", argv, self.port, workdir / "cluster.log")
        self.token = ""
        self._session: aiohttp.ClientSession | None = None

    async def start(self) -> None:
        """Start the server and write the plain-HTTP kubeconfig of the contestants."""
        await self.server.start(self.served_kubeconfig)
        document = yaml.safe_load(self.served_kubeconfig.read_text())
        self.token = document["users"][0]["user"]["token"]
        self.kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "bench", "cluster": {"server": self.url}}],
                    "users": [{"name": "bench", "user": {"token": self.token}}],
                    "contexts": [
                        {"name": "bench", "context": {"cluster": "bench", "user": "bench"}}
                    ],
                    "current-context": "bench",
                }
            )
        )
        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {self.token}", "User-Agent": HARNESS_AGENT},
                connector=aiohttp.TCPConnector(limit=64),
            )

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("the cluster is not started")
        return self._session

    def process(self) -> psutil.Process:
        return psutil.Process(self.server.pid)

    def cpu_seconds(self) -> float:
        times = self.process().cpu_times()
        return float(times.user + times.system)

    async def requests(self) -> Requests:
        """The server's request counters now."""
        async with self.session.get(self.url + "/metrics") as response:
            response.raise_for_status()
            return Requests.parse(await response.text())

    def kill(self) -> None:
        """SIGKILL the server (the fault scenario); ``start`` brings it back on the same data."""
        process = self.server._process
        if process is not None:
            process.send_signal(signal.SIGKILL)
            process.wait()
            self.server._process = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        self.server.stop()
