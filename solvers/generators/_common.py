"""Helpers shared by the generators: the error path, seeded RNGs, size guards, distinct sampling."""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..io_util import check_allocation

GEN_PATH = None  # a bad request is about the parameters, not a file: the message alone
# Rough bytes per generated edge across the temporaries (keys, sorting, both CSR layouts).
BYTES_PER_EDGE = 64


def input_error(message: str) -> InputError:
    """An InputError for a bad generator request (no file, no line: the message alone)."""
    return InputError(message, GEN_PATH)


def make_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def source_name(kind: str) -> str:
    return f"<generate {kind}>"


def guard_size(n_items: int, bytes_per_item: int, what: str) -> None:
    """Refuse a request that could not fit in memory before allocating anything."""
    check_allocation(int(n_items) * int(bytes_per_item), what, GEN_PATH)


def require(condition: bool, message: str) -> None:
    if not condition:
        raise input_error(message)


def distinct_per_row(rng: np.random.Generator, n_rows: int, n_values: int, k: int) -> np.ndarray:
    """(n_rows, k) int64 array: each row holds k distinct values drawn uniformly from [0, n_values).

    Every row is a uniform random k-subset in random order. Sparse requests (2k <= n_values) draw with
    replacement and redraw only the repeated entries (each redraw succeeds with probability >= 1/2);
    dense ones take the k smallest of n_values random keys, in row chunks to bound memory.
    """
    if k > n_values:
        raise input_error(f"cannot draw {k} distinct values out of {n_values}")
    if k == 0 or n_rows == 0:
        return np.zeros((n_rows, k), dtype=np.int64)
    if 2 * k > n_values:
        out = np.empty((n_rows, k), dtype=np.int64)
        chunk = max(1, (1 << 22) // n_values)
        for start in range(0, n_rows, chunk):
            stop = min(n_rows, start + chunk)
            keys = rng.random((stop - start, n_values))
            picked = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < n_values else \
                np.argsort(keys, axis=1)
            out[start:stop] = rng.permuted(picked, axis=1)
        return out
    out = rng.integers(0, n_values, size=(n_rows, k), dtype=np.int64)
    suspect = np.arange(n_rows)
    while suspect.size:
        block = out[suspect]
        order = np.argsort(block, axis=1, kind="stable")
        ordered = np.take_along_axis(block, order, axis=1)
        repeated_sorted = np.zeros(block.shape, dtype=bool)
        repeated_sorted[:, 1:] = ordered[:, 1:] == ordered[:, :-1]
        repeated = np.zeros(block.shape, dtype=bool)
        np.put_along_axis(repeated, order, repeated_sorted, axis=1)
        has_repeat = repeated.any(axis=1)
        suspect, repeated, block = suspect[has_repeat], repeated[has_repeat], block[has_repeat]
        block[repeated] = rng.integers(0, n_values, size=int(repeated.sum()), dtype=np.int64)
        out[suspect] = block
    return out


def first_occurrences(values: np.ndarray) -> np.ndarray:
    """Sorted indices of the first occurrence of each distinct value (np.unique(return_index=True)
    by sorting: numpy 2.4's np.unique takes a hash path ~100x slower on millions of int64)."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.ones(values.size, dtype=bool)
    first[1:] = ordered[1:] != ordered[:-1]
    return np.sort(order[first])
