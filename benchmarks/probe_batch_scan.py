"""How fast the batch's check-and-copy pass runs against a plain copy (issue 15's from-numpy time):
the pass that checks a batch's costs and copies them into the upload's pinned stage
(solvers.batch.scan), on N float32 entries, with and without the copy, beside numpy's copy
(single-threaded), best of 7, ms.

    PYTHONPATH=. python benchmarks/probe_batch_scan.py [--entries 65536000] [--pinned]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def best(call, repeat: int = 7) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e3 * min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1000 * 256 * 256)
    ap.add_argument("--pinned", action="store_true", help="copy into page-locked memory (needs a GPU)")
    args = ap.parse_args()
    from numba import config

    from solvers.batch.scan import scan_segments, segment_cuts
    n = args.entries
    source = np.random.default_rng(0).random(n, dtype=np.float32)
    if args.pinned:
        from numba import cuda
        target = cuda.pinned_array(n, dtype=np.float32)
    else:
        target = np.empty(n, dtype=np.float32)
    cuts, _ = segment_cuts(np.arange(0, n + 1, 256 * 256, dtype=np.int64), 0, n)
    print(f"{n:,} float32 entries, {config.NUMBA_NUM_THREADS} threads, {'pinned' if args.pinned else 'pageable'} target")
    print(f"  numpy copy:          {best(lambda: np.copyto(target, source)):.1f} ms")
    print(f"  check and copy:      {best(lambda: scan_segments(source, cuts, target, np.int64(0))):.1f} ms")
    print(f"  check only:          {best(lambda: scan_segments(source, cuts, None, np.int64(0))):.1f} ms")


if __name__ == "__main__":
    main()
