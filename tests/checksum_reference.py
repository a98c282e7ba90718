"""The costs' checksum computed by numpy alone (an oracle for the compiled passes and the kernels):
the wrapping uint64 sum of each float64 bit pattern mixed with its position by splitmix64's
finaliser (solvers.dual_steps)."""
from __future__ import annotations

import numpy as np


def mixed_terms(words: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser of words + positions * golden ratio, element by element, wrapping."""
    with np.errstate(over="ignore"):
        z = words.astype(np.uint64) + positions.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def cost_terms(costs: np.ndarray) -> np.ndarray:
    """Each entry's share, at its flat (row-major) position, of float64 costs."""
    flat = np.ascontiguousarray(costs, dtype=np.float64).reshape(-1)
    return mixed_terms(flat.view(np.uint64), np.arange(flat.size, dtype=np.uint64))


def cost_checksum(costs: np.ndarray) -> int:
    return int(cost_terms(costs).sum(dtype=np.uint64))


def linear_checksum(costs: np.ndarray) -> int:
    """The old linear checksum, bits * (2k + 1): what structured changes can fool."""
    flat = np.ascontiguousarray(costs, dtype=np.float64).reshape(-1)
    k = np.arange(flat.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int((flat.view(np.uint64) * (np.uint64(2) * k + np.uint64(1))).sum(dtype=np.uint64))
