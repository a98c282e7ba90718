"""Frame-to-frame tracking of 3-D points by assignment (Vasconcelos & Rosenhahn 2009, Section 6).

Each consecutive pair of frames is a min-cost assignment with Euclidean distances as costs,
solved (and certified) through ``solvers.solve`` with any assignment algorithm; the links are then
chained into tracks.

Unequal frame sizes: the assignment is rectangular, so min(n_t, n_t+1) links are made and the
surplus points of the larger frame (entering or leaving particles) stay unmatched.

Gating (``max_distance``): pairs farther apart than max_distance are forbidden, and every point
may instead stay unmatched at cost max_distance. This is the square augmented problem of size
n_t + n_t+1 (as in Jaqaman et al. 2008):

    [ D (gated)          diag(max_distance) ]   rows: points of frame t, then one "no partner"
    [ diag(max_distance) D^T pattern, cost 0 ]   row per point of frame t+1

Point i of frame t takes a point of frame t+1 or its own "unmatched" column; a point j of frame
t+1 not taken is covered by its own "unmatched" row. The bottom-right block lets the dummies of a
linked pair pair up at no cost, so the total is (sum of link distances) + max_distance * (number of
unmatched points): always feasible, and a pair within the gate is always worth linking over
leaving both points alone.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.distance import cdist

from .errors import Cancelled, InputError
from .problems import CostMatrix, PointSeries


@dataclass
class TrackResult:
    """``links[t]``: (k, 2) array of (index in frame t, index in frame t+1). ``tracks``: each a
    list of (frame, index), in frame order. ``frame_stats[t]``: per frame pair: frame, points,
    next_points, matched, cost, certified, seconds, algorithm, backend, and with ground truth
    correct, true_links, accuracy (correct / matched) and recall (correct / true_links).
    ``accuracy``: correct links / links over the whole series (None without ground truth)."""

    tracks: list
    links: list
    frame_stats: list
    accuracy: float | None = None
    summary: dict = field(default_factory=dict)


def gated_problem(cost: np.ndarray, max_distance: float, source: str | None = None) -> CostMatrix:
    """The square augmented problem described in the module docstring."""
    na, nb = cost.shape
    allowed = cost <= max_distance
    big = np.full((na + nb, nb + na), np.inf)
    big[:na, :nb] = np.where(allowed, cost, np.inf)
    big[np.arange(na), nb + np.arange(na)] = max_distance
    big[na + np.arange(nb), np.arange(nb)] = max_distance
    big[na:, nb:] = np.where(allowed.T, 0.0, np.inf)
    return CostMatrix.from_array(big, source=source)


def _links_from(result, na: int, nb: int) -> np.ndarray:
    """Real (frame t, frame t+1) pairs of a solved (maybe augmented) problem."""
    pairs = result.pairs()
    keep = (pairs[:, 0] < na) & (pairs[:, 1] < nb)
    return pairs[keep]


def _check_cancel(observer) -> None:
    if observer is not None and observer.should_stop():
        raise Cancelled("stopped by the observer")


def track(series: PointSeries, algorithm: str = "lsa", backend: str = "auto", observer=None,
          max_distance: float | None = None, **options) -> TrackResult:
    """Link each consecutive pair of frames by a certified min-cost assignment and chain tracks."""
    from .api import solve

    if not isinstance(series, PointSeries):
        raise InputError(f"tracking needs a point series, got {type(series).__name__}",
                         getattr(series, "source", None))
    if max_distance is not None:
        max_distance = float(max_distance)
        if not (max_distance > 0 and math.isfinite(max_distance)):
            raise InputError(f"max_distance must be a positive number, got {max_distance!r}", series.source)
    links, stats = [], []
    for t in range(series.n_frames - 1):
        _check_cancel(observer)
        a, b = series.frames[t], series.frames[t + 1]
        na, nb = a.shape[0], b.shape[0]
        cost = cdist(a, b) if na and nb else np.zeros((na, nb))
        where = f"{series.source or 'points'} frames {t}-{t + 1}"
        problem = (CostMatrix.from_array(cost, source=where) if max_distance is None
                   else gated_problem(cost, max_distance, source=where))
        start = time.perf_counter()
        result = solve(problem, algorithm, backend=backend, observer=observer, **options)
        seconds = time.perf_counter() - start
        pairs = _links_from(result, na, nb)
        links.append(pairs)
        link_cost = float(cost[pairs[:, 0], pairs[:, 1]].sum()) if pairs.size else 0.0
        entry = {"frame": t, "points": na, "next_points": nb, "matched": int(pairs.shape[0]), "cost": link_cost,
                 "certified": bool(result.certified), "seconds": seconds, "solve_seconds": result.seconds,
                 "algorithm": result.algorithm, "backend": result.backend}
        if series.ids is not None:
            entry.update(_link_accuracy(series.ids[t], series.ids[t + 1], pairs))
        stats.append(entry)
    accuracy = None
    if series.ids is not None:
        made = sum(s["matched"] for s in stats)
        accuracy = sum(s["correct"] for s in stats) / made if made else 1.0
    summary = {"frames": series.n_frames, "links": int(sum(s["matched"] for s in stats)),
               "certified": all(s["certified"] for s in stats), "accuracy": accuracy,
               "seconds": float(sum(s["seconds"] for s in stats))}
    return TrackResult(chain_tracks(series.sizes, links), links, stats, accuracy, summary)


def _link_accuracy(ids_a: np.ndarray, ids_b: np.ndarray, pairs: np.ndarray) -> dict:
    correct = int(np.count_nonzero(ids_a[pairs[:, 0]] == ids_b[pairs[:, 1]])) if pairs.size else 0
    true_links = int(np.intersect1d(ids_a, ids_b).size)
    matched = int(pairs.shape[0])
    return {"correct": correct, "true_links": true_links,
            "accuracy": correct / matched if matched else 1.0,
            "recall": correct / true_links if true_links else 1.0}


def chain_tracks(sizes: list[int], links: list[np.ndarray]) -> list[list[tuple[int, int]]]:
    """Tracks from per-pair links: a point not linked from the previous frame starts a track."""
    tracks: list[list[tuple[int, int]]] = []
    if not sizes:
        return tracks
    owner = np.arange(sizes[0])  # track id of each point of the current frame
    tracks.extend([(0, i)] for i in range(sizes[0]))
    for t, pairs in enumerate(links):
        nxt = np.full(sizes[t + 1], -1, dtype=np.int64)
        nxt[pairs[:, 1]] = owner[pairs[:, 0]]
        for j in np.flatnonzero(nxt < 0):
            nxt[j] = len(tracks)
            tracks.append([])
        for j in range(sizes[t + 1]):
            tracks[nxt[j]].append((t + 1, j))
        owner = nxt
    return tracks
