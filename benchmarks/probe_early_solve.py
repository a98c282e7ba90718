"""Issue 15's from-numpy clock with and without the early solve (solvers.batch.early_solve: items
solved while the batch is still going up), alternating in one warm process, with
torch-linear-assignment from numpy in the same run where it is importable.

Each case: ``solvers.solve_batch(numpy array, backend="cuda")`` (the validating pass, the upload,
the solve, the certificate of every item, the BatchResult), "early" as shipped and "after" with
the chunks' launches switched off (every item starts once the last chunk is up, as before the early
solve). Median and min of --repeats, in ms, and each stage's median (solve_batch's own split).

    PYTHONPATH=. python benchmarks/probe_early_solve.py [--repeats 9] [--cases 1000x256x256,...]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CASES = {
    "1000x256x256": lambda rng: rng.random((1000, 256, 256), dtype=np.float32),
    "10000x100x100": lambda rng: rng.random((10000, 100, 100), dtype=np.float32),
    "10000x100x300": lambda rng: rng.random((10000, 100, 300), dtype=np.float32),
    "ragged-1000-n10-500": lambda rng: [rng.random((int(n), int(n)), dtype=np.float32)
                                          for n in rng.integers(10, 501, 1000)],
}


def torch_from_numpy(costs):
    """torch-linear-assignment from numpy (regular batches): upload, solve, assignments back."""
    try:
        import torch
        from torch_linear_assignment import batch_linear_assignment
    except ImportError:
        return None
    if isinstance(costs, list):
        return None

    def run():
        out = batch_linear_assignment(torch.from_numpy(costs).cuda()).cpu()
        torch.cuda.synchronize()
        return out
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args()
    import solvers
    from numba import cuda
    from solvers.batch import early_solve as E
    shipped = E.SolveAsItArrives.sent

    def chunks_ignored(self, first, last, device, stream):
        return None
    rng = np.random.default_rng(15)
    for name in args.cases.split(","):
        costs = CASES[name](rng)
        runs = {"early": [], "after": [], "torch": []}
        seconds = {"early": [], "after": []}
        peer = torch_from_numpy(costs)
        for mode in ("early", "after"):  # warm both paths (and the kernels) untimed
            E.SolveAsItArrives.sent = shipped if mode == "early" else chunks_ignored
            solvers.solve_batch(costs, backend="cuda")
        if peer:
            peer()
        for _ in range(args.repeats):
            for mode in ("early", "after"):
                E.SolveAsItArrives.sent = shipped if mode == "early" else chunks_ignored
                cuda.synchronize()
                start = time.perf_counter()
                result = solvers.solve_batch(costs, backend="cuda")
                runs[mode].append(time.perf_counter() - start)
                assert result.all_certified, name
                seconds[mode].append(dict(result.seconds))
            if peer:
                start = time.perf_counter()
                peer()
                runs["torch"].append(time.perf_counter() - start)
        E.SolveAsItArrives.sent = shipped
        row = {"case": name}
        for mode, times in runs.items():
            if times:
                row[f"{mode}_median_ms"] = round(statistics.median(times) * 1e3, 2)
                row[f"{mode}_min_ms"] = round(min(times) * 1e3, 2)
        for mode, splits in seconds.items():  # each stage's median over the runs
            row[f"{mode}_stages_ms"] = {k: round(statistics.median(s[k] for s in splits) * 1e3, 2)
                                        for k in splits[0]}
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
