"""Where a Gauss-Seidel tail bid's time goes (issue 14), on a GPU: sequential "bids" on an n x n
int32 matrix (each bid scans one row against float64 prices for its best and second best, then
one thread raises a price and picks the next row, as the auction's one-block tail does), in
kernels that differ in one thing each, and the cost of a grid barrier at a few grid sizes. Not the
solver: a measurement of the hardware and of numba-cuda's code for the tail's pattern.

    python benchmarks/probe_auction_tail_bid.py [N] [BIDS]
"""
import json
import math
import sys
import time

import numpy as np
from numba import cuda, float64, int32

n = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
bids = int(sys.argv[2]) if len(sys.argv) > 2 else 4000


def make_tail(threads, unroll, use_costs, use_prices):
    @cuda.jit
    def tail(C, prices, n_cols, bids, out):
        sb = cuda.shared.array(1024, float64)
        sj = cuda.shared.array(1024, int32)
        ss = cuda.shared.array(1024, float64)
        row = cuda.shared.array(1, int32)
        t = cuda.threadIdx.x
        nt = cuda.blockDim.x
        if t == 0:
            row[0] = 0
        cuda.syncthreads()
        for _ in range(bids):
            i = row[0]
            best = -math.inf
            best_j = -1
            second = -math.inf
            j = t
            while j < n_cols:
                for u in range(unroll):  # unroll independent entries per step (literal range: unrolled)
                    jj = j + u * nt
                    if jj < n_cols:
                        v = 0.0
                        if use_costs:
                            v -= C[i, jj]
                        if use_prices:
                            v -= prices[jj]
                        if not use_costs and not use_prices:
                            v = float64(jj % 97)
                        if v > best:
                            second = best
                            best = v
                            best_j = jj
                        elif v > second:
                            second = v
                j += unroll * nt
            sb[t] = best
            sj[t] = best_j
            ss[t] = second
            cuda.syncthreads()
            step = nt // 2
            while step > 0:
                if t < step:
                    b2 = sb[t + step]
                    if b2 > sb[t] or (b2 == sb[t] and sj[t + step] < sj[t]):
                        ss[t] = max(ss[t + step], sb[t])
                        sb[t] = b2
                        sj[t] = sj[t + step]
                    else:
                        ss[t] = max(ss[t], b2)
                cuda.syncthreads()
                step //= 2
            if t == 0:
                jb = sj[0]
                prices[jb] += sb[0] - ss[0] + 1.0
                row[0] = (row[0] * 7919 + 13 + jb) % C.shape[0]
                out[0] += 1
            cuda.syncthreads()
    return tail


@cuda.jit
def barriers(count, out):
    grid = cuda.cg.this_grid()
    for _ in range(count):
        grid.sync()
    if cuda.grid(1) == 0:
        out[0] += 1


def timed(kernel, blocks, threads, *args, repeats=3):
    kernel[blocks, threads](*args)  # compile, untimed
    cuda.synchronize()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        kernel[blocks, threads](*args)
        cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


rng = np.random.default_rng(1)
C = cuda.to_device(rng.integers(0, 10 * n, (n, n)).astype(np.int32))
prices = cuda.to_device(np.zeros(n))
out = cuda.to_device(np.zeros(1, np.int64))
variants = [("256 threads (the solver's)", 256, 1, True, True), ("256 threads, 4 entries a step", 256, 4, True, True),
            ("512 threads, 4 entries a step", 512, 4, True, True), ("1024 threads", 1024, 1, True, True),
            ("1024 threads, 4 entries a step", 1024, 4, True, True), ("256 threads, costs only", 256, 1, True, False),
            ("256 threads, prices only", 256, 1, False, True), ("256 threads, no loads", 256, 1, False, False)]
for label, threads, unroll, use_costs, use_prices in variants:
    seconds = timed(make_tail(threads, unroll, use_costs, use_prices), 1, threads, C, prices, n, bids, out)
    print(json.dumps({"n": n, "tail": label, "us_per_bid": round(seconds / bids * 1e6, 2)}), flush=True)
for blocks in (1, 16, 132, 264, 528, 1056):
    try:
        seconds = timed(barriers, blocks, 256, 2000, out)
    except Exception as error:  # more blocks than fit at once
        print(json.dumps({"grid_blocks": blocks, "error": str(error).splitlines()[0][:120]}), flush=True)
        continue
    print(json.dumps({"grid_blocks": blocks, "threads": 256, "us_per_grid_sync": round(seconds / 2000 * 1e6, 2)}),
          flush=True)
