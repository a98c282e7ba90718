"""Scale-out on Dask (issue 16): throughput of solvers.solve_many on 1, 2 and 4 local workers.

    python benchmarks/bench_scale_out.py                       # CPU: LocalCluster of 1, 2, 4 workers
    python benchmarks/bench_scale_out.py --gpu --out gpu.json  # one worker per GPU (1, then all)
    python benchmarks/bench_scale_out.py --gpu --workers-per-gpu 2  # and 2 workers sharing each GPU

CPU mode: (a) many small LAPs as one batch item (cut into chunks, each a solve_batch call), (b) a
point series (cut into runs of frame pairs, joined into tracks; the automatic gate's rounds
included), each against the plain single-process call (solve_batch, solvers.track). Every worker
runs one task at a time with numba threads = cores // workers, so more workers than cores
oversubscribe them. GPU mode: 20,000 LAPs of n=512 (float32, written as .npy files of 1000 that the
workers read in chunks themselves) and a 400-frame series of 8000 points, on 1 GPU and on every
GPU (dask_cuda.LocalCUDACluster when installed, else a worker per GPU with CUDA_VISIBLE_DEVICES).
Times are end to end (sending, solving, certifying, gathering), after one untimed warm-up run on
each cluster; every answer is checked equal to the single-process one.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import solvers  # noqa: E402
from solvers.scale_out import solve_many  # noqa: E402
from solvers.scale_out.cluster import cpu_cluster, gpu_cluster, gpu_count  # noqa: E402


def workloads(args, folder: Path):
    rng = np.random.default_rng(7)
    if args.gpu:
        paths = []
        for k in range(0, args.laps, 1000):
            path = folder / f"laps-{k:06d}.npy"
            np.save(path, rng.random((min(1000, args.laps - k), args.n, args.n), dtype=np.float32))
            paths.append(str(path))
        laps = paths
    else:
        laps = [rng.random((args.laps, args.n, args.n))]
    series = solvers.generate("particles", n=args.points, frames=args.frames, seed=3, speed=0.01)
    return {f"{args.laps} LAPs n={args.n}": laps, f"series {args.frames} frames x {args.points} points": [series]}


def plain(items, backend):
    """The single-process answer and time: solve_batch / track called directly (after a warm-up)."""
    out, start = [], None
    for warm in (True, False):
        start = time.perf_counter()
        out = []
        for item in items:
            if isinstance(item, solvers.PointSeries):
                out.append(solvers.track(item, backend=backend))
            else:
                out.append(solvers.solve_batch(np.load(item) if isinstance(item, str) else item, backend=backend))
            if warm:
                break
    return out, time.perf_counter() - start


def same(rows, answers) -> bool:
    for row, answer in zip(rows, answers):
        if row.error or not row.certified:
            return False
        got = row.result
        if isinstance(answer, solvers.BatchResult) and not np.array_equal(np.asarray(got.assignments),
                                                                            np.asarray(answer.assignments)):
            return False
        if not isinstance(answer, solvers.BatchResult) and got.tracks != answer.tracks:
            return False
    return True


def _warm_batch_here(path: str, backend: str) -> None:
    """On a worker: a two-item piece of a batch file, read as a task reads it (memory-mapped, so
    read-only: numba compiles that apart), through the batch task, which loads the kernels once."""
    from solvers.scale_out import tasks
    tasks.solve_batch_chunk(np.ascontiguousarray(np.load(path, mmap_mode="r")[:2]), None, backend)


def on_cluster(cluster_of, counts, work, answers, backend):
    from distributed import Client
    times = {}
    for count in counts:
        cluster = cluster_of(count)
        with Client(cluster) as client:
            client.wait_for_workers(count)
            for name, items in work.items():
                solve_many(items[:1], client=client, backend=backend)  # warm-up run, untimed
                if isinstance(items[0], str):  # one batch file is one task: the other workers warm apart
                    client.run(_warm_batch_here, items[0], backend)
                start = time.perf_counter()
                rows = solve_many(items, client=client, backend=backend)
                times[(name, count)] = time.perf_counter() - start
                assert same(rows, answers[name]), f"{name} on {count} workers differs from one process"
                print(f"  {name}: {count} workers {times[(name, count)]:.2f} s", file=sys.stderr)
        cluster.close()
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpu", action="store_true", help="one worker per GPU: 1 GPU, then all")
    parser.add_argument("--laps", type=int)
    parser.add_argument("--n", type=int)
    parser.add_argument("--frames", type=int)
    parser.add_argument("--points", type=int, default=8000)
    parser.add_argument("--workers", default="1,2,4", help="CPU mode: worker counts (default 1,2,4)")
    parser.add_argument("--workers-per-gpu", type=int, default=1,
                        help="GPU mode: also measure this many workers sharing each GPU (default 1: no)")
    parser.add_argument("--out", help="write the numbers as JSON")
    args = parser.parse_args(argv)
    args.laps = args.laps or (20000 if args.gpu else 2000)
    args.n = args.n or (512 if args.gpu else 128)
    args.frames = args.frames or (400 if args.gpu else 40)
    backend = "cuda" if args.gpu else "cpu"
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="bench-scale-out-") as folder:
        work = workloads(args, Path(folder))
        answers, plain_times = {}, {}
        for name, items in work.items():
            answers[name], plain_times[name] = plain(items, backend)
            print(f"  {name}: one process {plain_times[name]:.2f} s", file=sys.stderr)
        if args.gpu:
            gpus, per = gpu_count(), max(1, args.workers_per_gpu)
            counts = sorted({1, gpus, gpus * per})  # workers: one GPU, every GPU, then sharing them

            def cluster_of(workers):
                return gpu_cluster(gpus, min(workers, gpus), per_gpu=max(1, workers // gpus) if workers > gpus else 1)
            times = on_cluster(cluster_of, counts, work, answers, backend)
        else:
            counts = [int(c) for c in args.workers.split(",")]
            times = on_cluster(cpu_cluster, counts, work, answers, backend)
    lines = [f"| workload | one process (s) | " + " | ".join(f"{c} workers (s)" for c in counts)
             + f" | speed-up {counts[-1]} vs 1 |",
             "|---|---:|" + "---:|" * len(counts) + "---:|"]
    for name in work:
        cells = " | ".join(f"{times[(name, c)]:.2f}" for c in counts)
        lines.append(f"| {name} | {plain_times[name]:.2f} | {cells} | "
                     f"{times[(name, counts[0])] / times[(name, counts[-1])]:.2f}x |")
    table = "\n".join(lines)
    print(f"{'GPU' if args.gpu else 'CPU'} scale-out on {platform.node()} ({cores} cores"
          + (f", {gpu_count()} GPUs; workers beyond the GPU count share them" if args.gpu else "") + ")\n")
    print(table)
    if args.out:
        record = {"mode": "gpu" if args.gpu else "cpu", "cores": cores, "counts": counts,
                  "one_process": plain_times, "table": table,
                  "times": {f"{name} | {count}": t for (name, count), t in times.items()}}
        Path(args.out).write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
