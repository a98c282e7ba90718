"""The cluster a run goes to: a local one, or an existing scheduler by its address.

``connect("local")`` starts one on this machine: with NVIDIA GPUs (and a backend that may use
them), one worker per GPU, through dask_cuda.LocalCUDACluster when it is installed, else Dask
workers each started with CUDA_VISIBLE_DEVICES naming its GPU; without GPUs, CPU workers, one per
core by default. Each worker runs one task at a time and gives numba's threads its share of the
cores, so that N workers on N cores do not oversubscribe them. ``connect(ADDRESS)`` connects to a
running scheduler (``dask scheduler`` / ``dask worker`` started by the user).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess

from ..errors import InputError

MISSING = "scale-out needs dask: pip install 'matchscope[dask]'"
CONNECT_TIMEOUT = "20s"  # how long to keep trying a scheduler's address before saying it cannot be reached
DASHBOARD_PORT = 8787  # Dask's usual dashboard port, used when it is free


def dashboard_address() -> str:
    """Dask's usual dashboard port when it is free here, else any free one: Dask itself would warn
    that the port is in use (with a traceback-like warning) before moving to another, and a second
    run beside a first one, or a notebook's cluster, must not print that."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("", DASHBOARD_PORT))
        except OSError:
            return ":0"
    return f":{DASHBOARD_PORT}"


def require_dask() -> None:
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise InputError(MISSING) from None


def gpu_count() -> int:
    """NVIDIA GPUs visible here (CUDA_VISIBLE_DEVICES respected), asked of nvidia-smi so that this
    process opens no CUDA context of its own."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip() and d.strip() != "-1"])
    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in listed.splitlines())


def connect(scheduler: str = "local", workers: int | None = None, backend: str = "auto"):
    """(client, cluster): the cluster is the one started here (close it after the client), None for
    an address."""
    require_dask()
    from distributed import Client
    if scheduler != "local":
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"cannot reach the Dask scheduler at {scheduler}: {' '.join(str(exc).split())}") from None
    if workers is not None and workers < 1:
        raise InputError(f"--workers must be at least 1, not {workers}")
    gpus = gpu_count() if backend in ("auto", "cuda") else 0
    cluster = gpu_cluster(gpus, workers) if gpus else cpu_cluster(workers)
    return Client(cluster), cluster


def cpu_cluster(workers: int | None = None):
    from distributed import LocalCluster
    cores = os.cpu_count() or 1
    workers = workers or cores
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=dashboard_address(),
                        env={"NUMBA_NUM_THREADS": str(max(1, cores // workers))})


def gpu_cluster(gpus: int, workers: int | None = None, per_gpu: int = 1):
    """One worker per GPU (the first ``workers`` of them, when given), or ``per_gpu`` workers sharing
    each (to measure what a second worker on one GPU adds: its solves overlap the other's host work)."""
    count = min(gpus, workers) if workers else gpus
    per_gpu = max(1, int(per_gpu))
    cores_each = str(max(1, (os.cpu_count() or 1) // (count * per_gpu)))
    try:
        from dask_cuda import LocalCUDACluster
    except ImportError:
        LocalCUDACluster = None
    if LocalCUDACluster is not None and per_gpu == 1:
        return LocalCUDACluster(n_workers=count, threads_per_worker=1, dashboard_address=dashboard_address(),
                                env={"NUMBA_NUM_THREADS": cores_each})
    from distributed import Nanny, Scheduler, SpecCluster
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    devices = [d.strip() for d in visible.split(",")] if visible else [str(i) for i in range(gpus)]
    spec = {f"gpu-{devices[i // per_gpu]}-{i % per_gpu}": {"cls": Nanny, "options": {
        "nthreads": 1, "env": {"CUDA_VISIBLE_DEVICES": devices[i // per_gpu], "NUMBA_NUM_THREADS": cores_each}}}
        for i in range(count * per_gpu)}
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": dashboard_address()}}
    return SpecCluster(workers=spec, scheduler=scheduler)


def dashboard_link(client) -> str | None:
    try:
        return client.dashboard_link
    except Exception:  # no dashboard (bokeh missing) or a scheduler without one
        return None
