"""Ansible operators: runs per second and time to converge N CRs, beside the same
logic as a Python reconciler, on one local cluster (a subprocess), in one process tree.

(a) converge: ``--count`` Memcached CRs (default 100) exist when the operator starts; the time
    until every CR has its Deployment with ``size`` replicas and the ``Successful`` condition
    (for the Python peer: its own ``Ready`` condition), the reconciles run, runs per second,
    and the per-run latency (p50/p90) of the Ansible runs. The Ansible operator is
    ``examples/memcached-ansible`` (Operator SDK's tutorial, with its finalizer), run with
    ``maxConcurrentReconciles`` workers (default: the number of CPUs, Operator SDK's default);
    the peer applies the same Deployment with ``ctx.apply_owned`` and writes a condition, with
    the same number of workers.
(b) one run: the seconds of one run of the tutorial's role through ``ansible_runner.run`` in a
    thread (what setpoint does) and through the ``ansible-runner run`` command in a subprocess
    (what Operator SDK does), alternately, ``--runs`` times each (default 5).

``python -m bench.ansible_operator [--count N] [--runs K] [--workers W]`` prints one JSON
object. It needs ``make ansible-deps``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import cluster
from setpoint.ansible import load_operator
from setpoint.ansible.parameters import make_parameters
from setpoint.ansible.runner import RunSpec, ansible_collections_path, run_ansible
from setpoint.client import Client
from setpoint.controller import Request
from setpoint.manager import Context, Operator
from setpoint.testing import install_crds

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "memcached-ansible"
API = "cache.example.com/v1alpha1"
TIMEOUT = 1800.0


def _memcached(namespace: str, index: int) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "Memcached",
        "metadata": {"name": f"m{index:04d}", "namespace": namespace},
        "spec": {"size": 1 + index % 3},
    }


def python_peer(workers: int) -> Operator:
    """The tutorial's logic as a Python reconciler: the Deployment, then a condition."""
    op = Operator("memcached-python")

    @op.reconciler(
        for_=(API, "Memcached"), owns=[("apps/v1", "Deployment")], max_concurrent=workers
    )
    async def reconcile(ctx: Context, request: Request) -> None:
        memcached = await ctx.get()
        if memcached is None:
            return
        size = int((memcached.get("spec") or {}).get("size", 1))
        await ctx.apply_owned(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": f"{request.name}-memcached", "namespace": request.namespace},
                "spec": {
                    "replicas": size,
                    "selector": {"matchLabels": {"app": "memcached"}},
                    "template": {
                        "metadata": {"labels": {"app": "memcached"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "memcached",
                                    "image": "docker.io/memcached:1.4.36-alpine",
                                    "command": ["memcached", "-m=64", "-o", "modern", "-v"],
                                    "ports": [{"containerPort": 11211}],
                                }
                            ]
                        },
                    },
                },
            }
        )
        await ctx.set_condition("Ready", "True", "Deployed", f"{size} replicas")

    return op


async def _converged(client: Client, namespace: str, count: int, condition: str) -> bool:
    deployments = {
        d["metadata"]["name"]: d["spec"]["replicas"]
        for d in await client.list("apps/v1", "Deployment", namespace=namespace)
    }
    done = 0
    for cr in await client.list(API, "Memcached", namespace=namespace):
        name = cr["metadata"]["name"]
        ready = any(
            c.get("type") == condition and c.get("status") == "True"
            for c in (cr.get("status") or {}).get("conditions") or []
        )
        if ready and deployments.get(f"{name}-memcached") == cr["spec"]["size"]:
            done += 1
    return done == count


async def converge(
    client: Client, kubeconfig: Path, count: int, workers: int, which: str, artifacts: Path
) -> dict[str, Any]:
    namespace = f"bench-{which}"
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for index in range(count):
        await client.create(_memcached(namespace, index))
    if which == "ansible":
        os.environ["MAX_CONCURRENT_RECONCILES_MEMCACHED_CACHE_EXAMPLE_COM"] = str(workers)
        op: Operator = load_operator(EXAMPLE, artifacts_root=artifacts)
        condition = "Successful"
    else:
        op = python_peer(workers)
        condition = "Ready"
    op.configure(kubeconfig=str(kubeconfig), namespaces=[namespace])
    cpu_before = time.process_time()
    started = time.perf_counter()
    async with op:
        while not await _converged(client, namespace, count, condition):
            if time.perf_counter() - started > TIMEOUT:
                raise TimeoutError(f"{which}: not converged after {TIMEOUT:g}s")
            await asyncio.sleep(0.5)
        seconds = time.perf_counter() - started
    figures: dict[str, Any] = {
        f"{which}_converge_seconds": round(seconds, 2),
        f"{which}_operator_cpu_seconds": round(time.process_time() - cpu_before, 2),
    }
    if which == "ansible":
        reconciler = next(iter(op.reconcilers.values()))  # type: ignore[attr-defined]
        runs = reconciler.run_seconds
        figures.update(
            ansible_runs=len(runs),
            ansible_runs_per_second=round(len(runs) / seconds, 2),
            ansible_run_p50_seconds=round(statistics.median(runs), 2),
            ansible_run_p90_seconds=round(statistics.quantiles(runs, n=10)[-1], 2)
            if len(runs) >= 10
            else None,
        )
    return figures


async def one_run(kubeconfig: Path, runs: int, workdir: Path) -> dict[str, Any]:
    """The tutorial's role for one CR, straight to the API server (no proxy, no operator):
    what a run costs in each way of starting Ansible."""
    extravars = make_parameters(
        _memcached("default", 0), group="cache.example.com", kind="Memcached"
    )
    config = kubeconfig
    role = RunSpec(role=str(EXAMPLE / "roles" / "memcached"))
    api: list[float] = []
    cli: list[float] = []
    for index in range(runs):
        started = time.perf_counter()
        outcome = await run_ansible(
            role,
            directory=workdir / "api",
            ident=f"api{index}",
            extravars=extravars,
            kubeconfig=config,
        )
        api.append(time.perf_counter() - started)
        if not outcome.succeeded:
            raise RuntimeError(f"the API run failed: {outcome.failure_message() or outcome.status}")
        directory = workdir / "cli"
        (directory / "env").mkdir(parents=True, exist_ok=True)
        (directory / "env" / "extravars").write_text(json.dumps(extravars))
        (directory / "inventory").mkdir(exist_ok=True)
        (directory / "inventory" / "hosts").write_text(
            f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n"
        )
        env = {
            **os.environ,
            "K8S_AUTH_KUBECONFIG": str(config),
            "ANSIBLE_COLLECTIONS_PATH": ansible_collections_path(),
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            str(Path(sys.executable).parent / "ansible-runner"),
            "run",
            str(directory),
            "--role",
            "memcached",
            "--roles-path",
            str(EXAMPLE / "roles"),
            "--hosts",
            "localhost",
            "-i",
            f"cli{index}",
            # as Operator SDK (and setpoint's API path): no facts when gathering is explicit
            *(["--role-skip-facts"] if os.environ.get("ANSIBLE_GATHERING") == "explicit" else []),
            env=env,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        if await process.wait() != 0:
            raise RuntimeError("the ansible-runner command failed")
        cli.append(time.perf_counter() - started)
    return {
        "one_run_api_thread_seconds_p50": round(statistics.median(api), 2),
        "one_run_cli_subprocess_seconds_p50": round(statistics.median(cli), 2),
        "one_run_cli_over_api": round(statistics.median(cli) / statistics.median(api), 2),
        "one_run_samples": runs,
    }


async def measure(count: int, runs: int, workers: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-ansible-") as scratch:
        workdir = Path(scratch)
        server, _ = await cluster.start(workdir, "ansible-bench")
        kubeconfig = workdir / "ansible-bench.kubeconfig"
        try:
            async with await Client.from_kubeconfig(str(kubeconfig)) as client:
                await install_crds(client, EXAMPLE / "config" / "crd" / "bases")
                figures: dict[str, Any] = {"count": count, "workers": workers}
                figures.update(await one_run(kubeconfig, runs, workdir))
                for which in ("python", "ansible"):
                    figures.update(
                        await converge(client, kubeconfig, count, workers, which, workdir / "runs")
                    )
                figures["converge_ansible_over_python"] = round(
                    figures["ansible_converge_seconds"] / figures["python_converge_seconds"], 1
                )
                return figures
        finally:
            server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ansible_operator")
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    arguments = parser.parse_args(argv)
    figures = asyncio.run(measure(arguments.count, arguments.runs, arguments.workers))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
