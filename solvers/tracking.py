"""Frame-to-frame tracking of 3-D points by assignment (Vasconcelos & Rosenhahn 2009, Section 6).

Each consecutive pair of frames is a min-cost assignment with Euclidean distances as costs,
solved (and certified) through ``solvers.solve``; the links are then chained into tracks. A frame
pair is held as its points (EuclideanCosts). The default algorithm, knn (solvers.points_exact),
solves it exactly from nearest neighbours, and the gated problems below are built from the pairs
within the gate (found by kd-trees) as sparse costs, so no n_t x n_t+1 matrix is made. Any other
assignment algorithm can be named; it gets the distances it needs (a frame pair's, or a block's).

Entering and leaving points (``max_distance``)
----------------------------------------------
A plain rectangular assignment makes min(n_t, n_t+1) links, so when one particle leaves and another
enters between two frames, the two are linked to each other (the failure the paper reports for its
microscopy data). Points are therefore allowed to stay unmatched:

* ``max_distance=D`` (a number): pairs farther apart than D are forbidden, and every point may
  instead stay unmatched at cost D. This is the square augmented problem of size n_t + n_t+1 (as
  in Jaqaman et al. 2008):

      [ D (gated)          diag(max_distance) ]   rows: points of frame t, then one "no partner"
      [ diag(max_distance) D^T pattern, cost 0 ]   row per point of frame t+1

  Point i of frame t takes a point of frame t+1 or its own "unmatched" column; a point j of frame
  t+1 not taken is covered by its own "unmatched" row. The bottom-right block lets the dummies of
  a linked pair pair up at no cost, so the total is (sum of link distances) + max_distance *
  (number of unmatched points): always feasible, and a pair within the gate is always worth
  linking over leaving both points alone. It is solved exactly but in parts (``gated_blocks``):
  points not joined by pairs within the gate never link to each other, so each connected
  component of the "within max_distance" graph is independent, points with no partner in reach
  are unmatched without a solve, and components are packed into blocks of at most GATED_BLOCK
  points, each a certified solve of its own (memory (GATED_BLOCK)^2, not (n_t + n_t+1)^2).

* ``max_distance="auto"`` (the default): the gate is derived from the data. Every frame pair is
  first solved as the plain rectangular assignment. A link between a leaving and an entering
  particle spans the typical distance between unrelated particles, far more than a particle moves
  between frames, so such links are outliers of the distribution of link lengths. The gate is a
  robust outlier fence on the link lengths L of all frame pairs together:

      G = max(median(L) + AUTO_K * 1.4826 * MAD(L),  AUTO_FLOOR * median(L))

  (MAD = median absolute deviation; 1.4826 * MAD estimates a standard deviation, and median and
  MAD ignore up to half the links being wrong, so heavy entering/leaving does not inflate G; the
  floor keeps G from collapsing when every particle moves the same distance and MAD is ~0: a link
  up to twice the median length is never an outlier.) A frame pair whose plain assignment has a
  link longer than G is re-solved gated at G; a pair without one keeps its plain assignment (no
  sign of entering or leaving). The fence is then recomputed from the links now made, which no
  longer hold the outliers, and the step repeats with the smaller gate (up to AUTO_ROUNDS times,
  until it shrinks by less than 1%). With fewer than AUTO_MIN_LINKS links in all there is too
  little to estimate from and no gate is applied. ``TrackResult.max_distance`` is the gate used.

* ``max_distance=None`` (or "off"): the pure rectangular assignment, min(n_t, n_t+1) links per
  frame pair, as the paper does it.

Accuracy is correct links / links made (the paper's measure; 1.0 when no link is made); recall,
correct links / links the ground truth has, is reported beside it.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import Cancelled, InputError
from .problems import (MAX_COORDINATE, MIN_SPAN, CostMatrix, EuclideanCosts, PointSeries, SparseCosts,
                       point_distances, underflowing_span)
from .result import TrackResult
from .solving import solve_named

__all__ = ["TrackResult", "track", "check_trackable", "gated_problem", "gated_blocks", "pairs_within",
           "gated_sparse"]

AUTO_K = 4.0          # MADs above the median (about 4 standard deviations)
AUTO_FLOOR = 2.0      # the gate is at least this many times the median link length
AUTO_ROUNDS = 3       # re-estimations of the gate from the links it leaves
AUTO_MIN_LINKS = 8    # below this many links in all, "auto" applies no gate
GATED_BLOCK = 4096    # points (both frames) per gated sub-problem, see gated_blocks
MAD_SCALE = 1.4826    # MAD of a normal distribution times this is its standard deviation
GATE_MARGIN = 1e-9    # relative: the kd-tree's search reaches this far past the gate (its rounding is far less)
SPARSE_FOR = {"knn": "lapjvsp"}  # an algorithm for point sets solves gated blocks (sparse costs) with this


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


def pairs_within(a: np.ndarray, b: np.ndarray, max_distance: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, distances) of every pair (a[i], b[j]) at most max_distance apart, sorted by
    row then column, found by kd-trees (no n x m matrix) and measured as EuclideanCosts measures."""
    if not (a.shape[0] and b.shape[0]):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    from scipy.spatial import cKDTree
    found = cKDTree(a).sparse_distance_matrix(cKDTree(b), max_distance * (1 + GATE_MARGIN), output_type="ndarray")
    rows, cols = found["i"].astype(np.int64), found["j"].astype(np.int64)
    dist = point_distances(a, b, rows, cols)
    keep = dist <= max_distance
    rows, cols, dist = rows[keep], cols[keep], dist[keep]
    order = np.lexsort((cols, rows))
    return rows[order], cols[order], dist[order]


def gated_sparse(rows, cols, dist, na: int, nb: int, max_distance: float, source: str | None = None) -> SparseCosts:
    """gated_problem's augmented problem from the pairs within the gate, as sparse costs: the
    pairs, each point's "unmatched" pair at max_distance, and the dummies' zero-cost pairs."""
    a_side, b_side = np.arange(na), np.arange(nb)
    all_rows = np.concatenate([rows, a_side, na + b_side, na + cols])
    all_cols = np.concatenate([cols, nb + a_side, b_side, nb + rows])
    costs = np.concatenate([dist, np.full(na + nb, float(max_distance)), np.zeros(rows.size)])
    return SparseCosts.from_edges(all_rows, all_cols, costs, na + nb, nb + na, source)


def outlier_fence(lengths) -> float:
    """max(median + AUTO_K * 1.4826 * MAD, AUTO_FLOOR * median) of link lengths (module docstring)."""
    lengths = np.asarray(lengths, dtype=np.float64)
    median = float(np.median(lengths))
    mad = float(np.median(np.abs(lengths - median)))
    return max(median + AUTO_K * MAD_SCALE * mad, AUTO_FLOOR * median)


def _links_from(result, na: int, nb: int) -> np.ndarray:
    """Real (frame t, frame t+1) pairs of a solved (maybe augmented) problem."""
    pairs = result.pairs()
    keep = (pairs[:, 0] < na) & (pairs[:, 1] < nb)
    return pairs[keep]


def _check_cancel(observer) -> None:
    if observer is not None and observer.should_stop():
        raise Cancelled("stopped by the observer")


def gating_mode(max_distance, source) -> tuple[str, float | None]:
    """("auto" | "off" | "fixed", the fixed gate) from the max_distance argument."""
    if max_distance is None:
        return "off", None
    word = max_distance.strip().lower() if isinstance(max_distance, str) else None
    if word == "auto":
        return "auto", None
    if word in ("off", "none"):
        return "off", None
    try:
        gate = float(max_distance)  # a string too: float() takes surrounding spaces and any case
    except (TypeError, ValueError):
        gate = math.nan
    if not (gate > 0 and math.isfinite(gate)):  # the refusal quotes what was given ("-1", not "-1.0")
        raise InputError(f"max_distance must be a positive number, auto or off, not {max_distance}", source)
    return "fixed", gate


def gated_blocks(cost: np.ndarray, max_distance: float, limit: int | None = None):
    """The gated problem of a frame pair (dense distances), split exactly into independent parts:
    see blocks_of_pairs, which this applies to the pairs of ``cost`` within max_distance."""
    r, c = np.nonzero(cost <= max_distance)
    return blocks_of_pairs(r, c, cost.shape[0], cost.shape[1], limit)


def blocks_of_pairs(r: np.ndarray, c: np.ndarray, na: int, nb: int, limit: int | None = None):
    """The gated problem of a frame pair, split exactly into independent parts.

    Points joined by no pair within max_distance of each other can never be linked to each other,
    so the gated problem falls apart into the connected components of the "within max_distance"
    graph (pairs (r[k], c[k])); a point with no partner within reach is unmatched in every
    solution. Components are packed, in order, into blocks of at most ``limit`` points (both
    frames; a bigger component is a block of its own). Returns (blocks as (rows, cols) index
    arrays, number of isolated points). Each block is solved as the gated problem of its rows and
    cols; together they are the optimum of the whole gated problem, with (limit)^2 instead of
    (n_t + n_t+1)^2 dense entries for a dense solver."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    limit = GATED_BLOCK if limit is None else limit
    if r.size == 0:
        return [], na + nb
    graph = coo_matrix((np.ones(r.size, dtype=np.int8), (r, na + c)), shape=(na + nb, na + nb))
    _, label = connected_components(graph, directed=False)
    linked = np.zeros(na + nb, dtype=bool)
    linked[r] = True
    linked[na + c] = True
    nodes = np.flatnonzero(linked)
    nodes = nodes[np.argsort(label[nodes], kind="stable")]
    cuts = np.flatnonzero(np.diff(label[nodes])) + 1
    blocks, current, size = [], [], 0
    for component in np.split(nodes, cuts):
        if current and size + component.size > limit:
            blocks.append(np.concatenate(current))
            current, size = [], 0
        current.append(component)
        size += component.size
    if current:
        blocks.append(np.concatenate(current))
    parts = [(np.sort(b[b < na]), np.sort(b[b >= na]) - na) for b in blocks]
    return parts, int(na + nb - nodes.size)


class _Pair:
    """One frame pair: the solves made for it and its current links. It holds its two frames as
    points: the knn algorithm needs no distance matrix, and the gated blocks hold only the pairs
    within the gate; a dense algorithm gets the distances it needs for each solve."""

    def __init__(self, t: int, a: np.ndarray, b: np.ndarray, source: str | None):
        self.t = t
        self.a, self.b = a, b
        self.na, self.nb = a.shape[0], b.shape[0]
        self.where = f"{source or 'points'} frames {t}-{t + 1}"
        self.plain_longest = 0.0  # the longest link of the plain rectangular assignment
        self.links = np.zeros((0, 2), dtype=np.int64)
        self.link_lengths = np.zeros(0)
        self.results = []  # the certified solves the current links come from
        self.isolated = 0  # gated: points with no partner within the gate (unmatched without a solve)
        self.gate = None
        self.solves = 0
        self.seconds = 0.0

    def _solve(self, problem, algorithm, backend, observer, options):
        _check_cancel(observer)
        result = solve_named(problem, algorithm, backend, observer, **options)
        self.seconds += result.seconds  # the algorithm's own time, as for one solve: not certifying
        self.solves += 1
        return result

    def solve(self, gate, algorithm, backend, observer, options) -> None:
        _check_cancel(observer)
        points = EuclideanCosts(self.a, self.b, self.where)
        if gate is None:
            result = self._solve(points, algorithm, backend, observer, options)
            self.links, self.results, self.isolated = _links_from(result, self.na, self.nb), [result], 0
        else:
            rows, cols, dist = pairs_within(self.a, self.b, gate)
            blocks, self.isolated = blocks_of_pairs(rows, cols, self.na, self.nb)
            found, self.results = [], []
            block_algorithm = SPARSE_FOR.get(algorithm, algorithm)
            block_options = {} if block_algorithm != algorithm else options
            local_a, local_b = np.full(self.na, -1), np.full(self.nb, -1)
            owner = np.full(self.na, -1)
            for k, (block_rows, _) in enumerate(blocks):
                owner[block_rows] = k
            by_block = np.argsort(owner[rows], kind="stable")
            starts = np.searchsorted(owner[rows][by_block], np.arange(len(blocks) + 1))
            for k, (block_rows, block_cols) in enumerate(blocks):
                local_a[block_rows] = np.arange(block_rows.size)
                local_b[block_cols] = np.arange(block_cols.size)
                inside = by_block[starts[k]:starts[k + 1]]
                sub = gated_sparse(local_a[rows[inside]], local_b[cols[inside]], dist[inside], block_rows.size,
                                   block_cols.size, gate, self.where)
                result = self._solve(sub, block_algorithm, backend, observer, block_options)
                local = _links_from(result, block_rows.size, block_cols.size)
                found.append(np.column_stack([block_rows[local[:, 0]], block_cols[local[:, 1]]]))
                self.results.append(result)
            links = np.concatenate(found) if found else np.zeros((0, 2), dtype=np.int64)
            self.links = links[np.argsort(links[:, 0], kind="stable")].astype(np.int64).reshape(-1, 2)
        self.link_lengths = points.distances(self.links[:, 0], self.links[:, 1])
        if gate is None:
            self.plain_longest = float(self.link_lengths.max(initial=0.0))
        self.gate = gate

    def record(self) -> dict:
        """The certificate side of frame_stats: objective, certified, status, gap, bound, certificate."""
        results = self.results
        certs = [r.certificate for r in results]
        statuses = [c.status for c in certs]
        status = next((s for s in ("invalid", "not-proven", "within-gap") if s in statuses), "optimal")
        objective = float(sum(r.value for r in results)) + (self.gate or 0.0) * self.isolated
        if not certs:
            summary = "no pair within max_distance: every point unmatched (nothing to solve)"
        elif len(certs) == 1:
            summary = certs[0].summary()
        else:
            worst = certs[statuses.index(status)] if status != "optimal" else certs[0]
            summary = f"{len(certs)} independent gated blocks, each {status}; e.g. {worst.summary()}"
        first = results[0] if results else None
        return {"objective": objective, "certified": all(r.certified for r in results), "status": status,
                "gap": float(sum(c.gap for c in certs)), "bound": float(sum(c.bound for c in certs)),
                "certificate": summary, "blocks": len(results),
                "solve_seconds": float(sum(r.seconds for r in results)),
                "algorithm": first.algorithm if first else None, "backend": first.backend if first else None}


def _auto_gate(pairs: list[_Pair], algorithm, backend, observer, options) -> tuple[float | None, int]:
    """Solve every pair plainly, then gate as the module docstring says. (gate or None, rounds).
    Each round's gate is lower than the last, so a pair gated once is re-solved at every later gate."""
    _solve_all(pairs, None, "frame pair", algorithm, backend, observer, options)
    gate, rounds = None, 0
    for _ in range(AUTO_ROUNDS):
        lengths = np.concatenate([p.link_lengths for p in pairs]) if pairs else np.zeros(0)
        if lengths.size < AUTO_MIN_LINKS:
            break
        fence = outlier_fence(lengths)
        if not fence > 0:  # every link has length 0: the points do not move, nothing to tell apart
            break
        if gate is not None and fence > 0.99 * gate:
            break  # the gate would not shrink (by 1% or more): it is settled
        gate = fence
        rounds += 1
        _solve_all([p for p in pairs if p.plain_longest > gate], gate, "gated frame pair",
                   algorithm, backend, observer, options)
    return gate, rounds


def _solve_all(pairs: list[_Pair], gate, unit: str, algorithm, backend, observer, options) -> None:
    """Solve each pair at ``gate``, telling the observer "``unit`` k of N" before each and at the end."""
    total = len(pairs)
    for done, pair in enumerate(pairs):
        if observer is not None:
            observer.on_progress(done, total, unit)
        pair.solve(gate, algorithm, backend, observer, options)
    if observer is not None and total:
        observer.on_progress(total, total, unit)


def check_trackable(series: PointSeries) -> None:
    """Tracking links consecutive frames: a series of one frame has nothing to link, distances between
    coordinates past MAX_COORDINATE overflow, and those of frame pairs spread less than MIN_SPAN
    underflow (an InputError each; storing them is fine)."""
    if series.n_frames < 2:
        raise InputError("a point series needs at least two frames to track; it holds one (a frame column in "
                         ".csv or .ply, or frame_ptr in .npz, puts points in frames)", series.source)
    frames = series.frames
    for t, frame in enumerate(frames):
        if frame.size and float(np.abs(frame).max()) > MAX_COORDINATE:
            raise InputError(f"frame {t} holds a coordinate beyond {MAX_COORDINATE:g} in size, where squared "
                             "distances overflow: rescale the points", series.source)
    for t in range(len(frames) - 1):
        span = underflowing_span(frames[t], frames[t + 1])
        if span is not None:
            raise InputError(f"frames {t} and {t + 1} span only {span:.3g}, below {MIN_SPAN:g}, where squared "
                             "distances underflow: rescale the points", series.source)


def track(series: PointSeries, algorithm: str = "knn", backend: str = "auto", observer=None,
          max_distance: float | str | None = "auto", **options) -> TrackResult:
    """Link each consecutive pair of frames by a certified min-cost assignment and chain tracks.

    ``series``: a PointSeries, a file path, or a sequence of (n_t, 3) arrays (one per frame); it
    needs at least two frames. ``observer`` hears each solve, and ``on_progress(done, total,
    "frame pair")`` before each frame pair ("gated frame pair" for the automatic gate's re-solves).
    ``max_distance``: "auto" (default: a gate derived from the data, see the module docstring), a
    positive number (a fixed gate), or None / "off" (the plain rectangular assignment)."""
    from .api_inputs import as_observer, as_series

    series = as_series(series)
    observer = as_observer(observer)
    check_trackable(series)
    mode, gate = gating_mode(max_distance, series.source)
    pairs = [_Pair(t, series.frames[t], series.frames[t + 1], series.source) for t in range(series.n_frames - 1)]
    rounds = 0
    if mode == "auto":
        gate, rounds = _auto_gate(pairs, algorithm, backend, observer, options)
    else:
        _solve_all(pairs, gate, "frame pair", algorithm, backend, observer, options)

    links, stats = [], []
    for pair in pairs:
        found = pair.links
        links.append(found)
        matched = int(found.shape[0])
        entry = {"frame": pair.t, "points": pair.na, "next_points": pair.nb, "matched": matched,
                 "unmatched": pair.na + pair.nb - 2 * matched, "cost": float(pair.link_lengths.sum()),
                 "gated": pair.gate is not None, "max_distance": pair.gate}
        entry.update(pair.record())
        entry.update(solves=pair.solves, seconds=pair.seconds)
        if entry["algorithm"] is None:
            entry.update(algorithm=algorithm, backend=backend)
        if series.ids is not None:
            entry.update(_link_accuracy(series.ids[pair.t], series.ids[pair.t + 1], found))
        stats.append(entry)

    return assemble(series, links, stats, mode, gate, rounds)


def assemble(series: PointSeries, links: list, stats: list, mode: str, gate, rounds: int) -> TrackResult:
    """The TrackResult of a whole series from its per-pair links and records (one record per frame
    pair, as ``track`` makes them): accuracy, the summary, the chained tracks. Scale-out joins the
    runs it tracked apart through this too, so both give the same answer."""
    accuracy = recall = None
    if series.ids is not None:
        made = sum(s["matched"] for s in stats)
        correct = sum(s["correct"] for s in stats)
        true_links = sum(s["true_links"] for s in stats)
        accuracy = correct / made if made else 1.0
        recall = correct / true_links if true_links else 1.0
    summary = {"frames": series.n_frames, "links": int(sum(s["matched"] for s in stats)),
               "certified": all(s["certified"] for s in stats), "accuracy": accuracy, "recall": recall,
               "gating": mode, "max_distance": gate, "gate_rounds": rounds,
               "gated_pairs": int(sum(s["gated"] for s in stats)),
               "unmatched": int(sum(s["unmatched"] for s in stats)),
               "cost": float(sum(s["cost"] for s in stats)),
               "gap": float(sum(s["gap"] for s in stats)),
               "solves": int(sum(s["solves"] for s in stats)),
               "seconds": float(sum(s["seconds"] for s in stats))}
    tracks = chain_tracks(series.sizes, links)
    summary["tracks"] = len(tracks)
    return TrackResult(tracks, links, stats, accuracy, summary, gate, mode, series)


def _link_accuracy(ids_a: np.ndarray, ids_b: np.ndarray, pairs: np.ndarray) -> dict:
    correct = int(np.count_nonzero(ids_a[pairs[:, 0]] == ids_b[pairs[:, 1]])) if pairs.size else 0
    true_links = int(np.intersect1d(ids_a, ids_b, assume_unique=True).size)  # ids are unique in a frame
    matched = int(pairs.shape[0])
    return {"correct": correct, "true_links": true_links,
            "accuracy": correct / matched if matched else 1.0,
            "recall": correct / true_links if true_links else 1.0}


def point_tracks(sizes: list[int], links: list[np.ndarray]) -> list[np.ndarray]:
    """The track id of every point, frame by frame: a point not linked from the previous frame starts
    a track (new tracks numbered in frame order, then point order)."""
    if not sizes:
        return []
    owner = np.arange(sizes[0], dtype=np.int64)
    owners, count = [owner], sizes[0]
    for t, pairs in enumerate(links):
        nxt = np.full(sizes[t + 1], -1, dtype=np.int64)
        nxt[pairs[:, 1]] = owner[pairs[:, 0]]
        fresh = np.flatnonzero(nxt < 0)
        nxt[fresh] = count + np.arange(fresh.size)
        count += fresh.size
        owners.append(nxt)
        owner = nxt
    return owners


def chain_tracks(sizes: list[int], links: list[np.ndarray]) -> list[list[tuple[int, int]]]:
    """Tracks from per-pair links (numbered as point_tracks numbers them); each track lists
    (frame, index) in frame order."""
    if not sizes:
        return []
    track_of = np.concatenate(point_tracks(sizes, links))
    frame = np.repeat(np.arange(len(sizes)), sizes)
    index = np.concatenate([np.arange(size) for size in sizes])
    order = np.argsort(track_of, kind="stable")  # stable: frame order within a track
    points = list(zip(frame[order].tolist(), index[order].tolist()))
    ends = np.cumsum(np.bincount(track_of, minlength=int(track_of.max(initial=-1)) + 1)).tolist()
    return [points[start:end] for start, end in zip([0] + ends[:-1], ends)]
