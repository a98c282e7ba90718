"""Batches of dense assignment problems (``matchscope gen dense-lap-batch``): many small LAPs, as
DETR-style set matching and frame-to-frame tracking solve them.

A kind of ``solvers.generators.BATCH_KINDS``, not of ``KINDS``: those produce one Problem each; a
batch is an array (or a list of arrays) for ``solvers.solve_batch``.
"""
from __future__ import annotations

import math

import numpy as np

from ..problems import EXACT_INTEGER
from ._common import guard_size, make_rng, require


def dense_lap_batch(batch: int, n: int, m: int | None = None, max_n: int | None = None, k: float = 1.0,
                    integer: bool = True, float32: bool = False, seed: int = 0):
    """``batch`` problems of n x m costs (m defaults to n) uniform in [0, k*n] (integers when
    ``integer``; the costs of one item as solvers.generators.costs.dense_lap draws them), as one
    (batch, n, m) array. With ``max_n``, a ragged batch: a list of square items with sizes drawn
    uniformly from n..max_n. ``float32`` stores the costs as float32."""
    require(batch >= 0, f"batch ({batch}) must be at least 0")
    require(n >= 0, f"n ({n}) must be at least 0")
    m = n if m is None else m
    require(m >= 0, f"m ({m}) must be at least 0")
    require(max_n is None or max_n >= n, f"max-n ({max_n}) must be at least n ({n})")
    require(math.isfinite(k) and k > 0, f"k ({k:g}) must be a finite number above 0")
    dtype = np.float32 if float32 else np.float64
    widest = max(n, max_n if max_n is not None else n, 1)
    top = k * widest
    words = "float32" if float32 else "float64"
    require(math.isfinite(top) and top <= float(np.finfo(dtype).max),
            f"costs up to k*n = {top:g} are beyond what {words} holds; use a smaller k")
    exact = 2 ** 24 if float32 else EXACT_INTEGER
    require(not integer or top <= exact,
            f"integer costs up to k*n = {top:g} are not all exact in {words} (at most {exact:,}); use a smaller k")
    rng = make_rng(seed)

    def draw(rows, cols):
        top = k * max(rows, 1)
        require(not integer or top <= EXACT_INTEGER, f"integer costs up to k*n = {top:g} are not all exact")
        if integer:
            return rng.integers(0, math.floor(top) + 1, size=(rows, cols), dtype=np.int64).astype(dtype)
        return rng.uniform(0.0, top, size=(rows, cols)).astype(dtype)

    if max_n is None:
        guard_size(batch * n * m, np.dtype(dtype).itemsize, f"dense-lap-batch {batch} x {n} x {m}")
        if batch == 0 or n == 0 or m == 0:
            return np.zeros((batch, n, m), dtype=dtype)
        top = k * n
        require(not integer or top <= EXACT_INTEGER, f"integer costs up to k*n = {top:g} are not all exact")
        if integer:
            return rng.integers(0, math.floor(top) + 1, size=(batch, n, m), dtype=np.int64).astype(dtype)
        return rng.uniform(0.0, top, size=(batch, n, m)).astype(dtype)
    sizes = rng.integers(n, max_n + 1, size=batch)
    guard_size(int((sizes.astype(np.int64) ** 2).sum()), np.dtype(dtype).itemsize, f"dense-lap-batch of {batch}")
    return [draw(int(s), int(s)) for s in sizes]
