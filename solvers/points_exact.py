"""Exact 3-D point correspondence without the n x m distance matrix (issue 14, part 3, host path).

Minimum total Euclidean distance between point sets a (n x 3) and b (m x 3), n <= m (a taller
problem is solved transposed): each point of a is matched to a distinct point of b.

1. Candidates: each point of a keeps its k nearest points of b (scipy's cKDTree), with their
   distances as costs: a sparse problem of n * k pairs.
2. That problem is solved (scipy's sparse LAPJV, ``lapjvsp``) and certified the usual way, which
   gives dual potentials u, v with u_i + v_j <= d_ij on every candidate pair, equality on the
   matched pairs, v <= 0 and v = 0 on unmatched points of b (the rectangular LP's conditions).
3. The proof for the full problem: a pruned pair (i, j) has d_ij >= r_i, the distance from i to
   its k-th neighbour, so u_i + max_j v_j <= r_i makes (u, v) feasible on every pair of the
   Euclidean problem, and the matching optimal for it. Points where the bound fails (or a
   candidate graph without a complete matching) get twice the neighbours, and the solve repeats.

The certificate says which case holds: proven for the full problem, or only for the candidates
(when the neighbour count reached every point of b, the candidates are the full problem).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .errors import InfeasibleError, InputError
from .result import Certificate, Result

EPS = np.finfo(np.float64).eps
MAX_COORDINATE = 1e150  # squared differences of larger coordinates overflow float64


def _points(values, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64) if np.asarray(values).dtype.kind in "biuf" else None
    if a is None or a.ndim != 2 or a.shape[1] != 3:
        raise InputError(f"{name} must be an array of 3-D points (n x 3)")
    if not np.all(np.isfinite(a)):
        raise InputError(f"{name} holds a coordinate that is not a finite number")
    if a.size and float(np.abs(a).max()) > MAX_COORDINATE:
        raise InputError(f"{name} holds a coordinate beyond {MAX_COORDINATE:g} in size, where squared "
                         "distances overflow: rescale the points")
    return a


MAX_PAIRS = 1 << 26  # candidate pairs held at most (about 1.5 GB with their costs and the solver's copies)


def match_points(a, b, k: int = 8, max_rounds: int = 12, max_pairs: int = MAX_PAIRS) -> Result:
    """The minimum-distance matching of every point of the smaller set, certified for the full
    Euclidean problem by the k-nearest-neighbour bound (see the module text). ``row_match`` maps
    a's points to b's (-1 where a has more points than b and the point is left over)."""
    a, b = _points(a, "the first point set"), _points(b, "the second point set")
    if int(k) < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if a.shape[0] > b.shape[0]:
        result = match_points(b, a, k, max_rounds, max_pairs)  # the certificate's witness stays the transposed one's
        return dataclasses.replace(result, row_match=result.col_match, col_match=result.row_match,
                                   duals={"u": result.duals["v"], "v": result.duals["u"]},
                                   stats=dict(result.stats, transposed=True))
    start = time.perf_counter()
    n, m = a.shape[0], b.shape[0]
    if n == 0:
        cert = Certificate("knn-bound", True, True, details="nothing to match", reason="nothing to match")
        return Result("assignment", "knn-lapjvsp", "cpu", 0.0, 0, 0.0, cert, np.zeros(0, np.int64),
                      np.full(m, -1, np.int64), duals={"u": np.zeros(0), "v": np.zeros(m)})
    from scipy.spatial import cKDTree
    tree = cKDTree(b)
    wanted = np.full(n, min(int(k), m), dtype=np.int64)
    lists = [None] * n  # per point of a: (neighbour indices, distances), nearest first
    rounds, stopped = 0, ""
    while True:
        rounds += 1
        _query(tree, a, wanted, lists)
        solved = _solve_candidates(lists, n, m)
        if solved is None:  # no complete matching among the candidates: widen every list
            if np.all(wanted >= m):
                raise InfeasibleError("no complete assignment exists")  # cannot happen with n <= m
            widened = np.minimum(2 * wanted, m)
            if int(widened.sum()) > max_pairs:
                raise InputError(f"the {int(wanted.max())} nearest neighbours of each point hold no complete "
                                 f"matching, and widening would hold {int(widened.sum()):,} pairs (limit "
                                 f"{max_pairs:,}): raise max_pairs")
            wanted = widened
            continue
        result, u, v = solved
        radius = np.array([d[-1] for _, d in lists])
        full = wanted >= m  # every point of b is a candidate: nothing was pruned
        v_max = float(v.max()) if v.size else 0.0
        slack = 8 * EPS * (np.abs(u) + abs(v_max) + radius)
        failing = ~full & (u + v_max > radius - slack)
        # a rectangle's LP also needs v <= 0, and 0 on b's unmatched points (a square's v is free)
        signs_ok = n == m or bool(np.all(v <= 0.0) and np.all(v[result.col_match < 0] == 0.0))
        if not failing.any() or rounds >= max_rounds:
            break
        widened = wanted.copy()
        widened[failing] = np.minimum(2 * wanted[failing], m)
        if int(widened.sum()) > max_pairs:  # memory follows the pairs: stop, and claim the candidates only
            stopped = f"widening further would hold {int(widened.sum()):,} pairs (limit {max_pairs:,})"
            break
        wanted = widened
    seconds = time.perf_counter() - start
    proven = result.certificate.optimal and signs_ok and not failing.any()
    pruned = int(np.count_nonzero(~full))
    if proven:
        details = (f"optimal for the full Euclidean problem: the candidates' duals are feasible there, as "
                   f"u_i + max v <= the distance to point i's last candidate for all {pruned} points with "
                   f"pruned pairs ({rounds} round{'s' if rounds > 1 else ''}, up to {int(wanted.max())} "
                   "candidates a point)")
        reason = "the k-nearest-neighbour bound extends the candidates' duals to every pair"
    else:
        why = (f"the bound fails for {int(failing.sum())} points after {rounds} rounds"
               + (f" ({stopped})" if stopped else "") if failing.any()
               else "the candidates' duals break the rectangular sign conditions" if not signs_ok
               else "the candidate problem itself is not proven optimal")
        details = f"optimal among the candidate pairs only: {why}"
        reason = "proven for the candidate pairs only"
    certificate = Certificate("knn-bound", result.certificate.valid, proven,
                              result.certificate.gap if proven else float("inf"),
                              result.certificate.tolerance, details=f"{details}; candidates: "
                              f"{result.certificate.details}", witness={"u": u, "v": v, "radius": radius},
                              reason=reason)
    stats = {"rounds": rounds, "candidates": int(sum(len(i) for i, _ in lists)), "max_k": int(wanted.max()),
             "points_with_pruned_pairs": pruned}
    return Result("assignment", "knn-lapjvsp", "cpu", result.value, rounds, seconds, certificate,
                  result.row_match, result.col_match, duals={"u": u, "v": v}, stats=stats)


def _query(tree, a: np.ndarray, wanted: np.ndarray, lists: list) -> None:
    """Fill lists[i] for the points whose list is shorter than wanted[i]."""
    have = np.array([0 if item is None else item[0].size for item in lists])
    for count in np.unique(wanted[wanted > have]):
        rows = np.flatnonzero((wanted == count) & (wanted > have))
        dist, idx = tree.query(a[rows], k=int(count))
        dist, idx = dist.reshape(rows.size, -1), idx.reshape(rows.size, -1)
        for r, d, j in zip(rows, dist, idx):
            lists[r] = (j.astype(np.int64), d)


def _solve_candidates(lists: list, n: int, m: int):
    """(certified Result on the candidate pairs, u, v), or None when they hold no complete matching."""
    from . import api
    from .problems import SparseCosts
    rows = np.repeat(np.arange(n), [j.size for j, _ in lists])
    cols = np.concatenate([j for j, _ in lists])
    dist = np.concatenate([d for _, d in lists])
    problem = SparseCosts.from_edges(rows, cols, dist, n, m)
    try:
        result = api.solve(problem, "lapjvsp", backend="cpu")
    except InfeasibleError:
        return None
    witness = result.certificate.witness
    return result, np.asarray(witness["u"], dtype=np.float64), np.asarray(witness["v"], dtype=np.float64)
