"""Where a batch chunk's time goes, on one GPU alone and on two GPUs at once (issue 16's diagnosis).

    python benchmarks/probe_multi_gpu.py make FOLDER FILES      # FILES .npy batches of 1000 x 512 x 512 float32
    python benchmarks/probe_multi_gpu.py run FOLDER FIRST COUNT [CHUNK]  # solve files FIRST.. in chunks, print stage sums

``run`` does what a scale-out task does with each chunk (read its slice of the memory-mapped file,
solve_batch on cuda) and prints one JSON line: the wall time and the sum of each stage. Started
once alone and then twice at once (CUDA_VISIBLE_DEVICES=0 and 1), it tells whether two GPUs can
double the throughput on this host, and which stage stops them.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CHUNK = 1024  # items per chunk, as solve_many cuts batch files for GPU workers (at most 1 GiB)


def make(folder: Path, files: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    for k in range(files):
        np.save(folder / f"laps-{k:03d}.npy", rng.random((1000, 512, 512), dtype=np.float32))


def run(folder: Path, first: int, count: int, chunk: int = CHUNK) -> None:
    import solvers
    solvers.solve_batch(np.zeros((1, 2, 3), np.float32), backend="cuda")  # load the kernels, untimed
    stages = {"read": 0.0, "pack": 0.0, "solve": 0.0, "certify": 0.0, "unpack": 0.0}
    started = time.perf_counter()
    for k in range(first, first + count):
        mapped = np.load(folder / f"laps-{k:03d}.npy", mmap_mode="r")
        for start in range(0, len(mapped), chunk):
            t0 = time.perf_counter()
            costs = np.ascontiguousarray(mapped[start:start + chunk])
            stages["read"] += time.perf_counter() - t0
            result = solvers.solve_batch(costs, backend="cuda")
            sec = result.seconds
            for key in ("pack", "solve", "certify"):
                stages[key] += sec[key]
            stages["unpack"] += sec["total"] - sec["pack"] - sec["solve"] - sec["certify"] + sec.get("overlap", 0.0)
            assert result.all_certified
    wall = time.perf_counter() - started
    print(json.dumps({"files": count, "wall": round(wall, 3), **{k: round(v, 3) for k, v in stages.items()}}))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(Path(sys.argv[2]), int(sys.argv[3]))
    else:
        run(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), *(int(x) for x in sys.argv[5:6]))
