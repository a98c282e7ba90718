"""3-D point tracking by frame-to-frame assignment: the accuracy equals that of scipy's exact
linear_sum_assignment on the same Euclidean costs, entering/leaving points stay unmatched,
gating with max_distance, and tracks chain the links."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import solvers
from solvers.errors import Cancelled, InputError
from solvers.problems import PointSeries
from solvers.tracking import chain_tracks, gated_problem, track


def particle_series(n=50, frames=5, persistence=0.5, seed=3, enter=0.1, leave=0.1, speed=0.04) -> PointSeries:
    return solvers.generate("particles", n=n, frames=frames, persistence=persistence, speed=speed,
                            enter_rate=enter, leave_rate=leave, seed=seed)


def oracle_accuracy(series: PointSeries) -> tuple[float, list[int]]:
    """Correct links / links with scipy's exact assignment on the same costs, and links per pair."""
    correct = made = 0
    per_pair = []
    for t in range(series.n_frames - 1):
        rows, cols = linear_sum_assignment(cdist(series.frames[t], series.frames[t + 1]))
        correct += int(np.count_nonzero(series.ids[t][rows] == series.ids[t + 1][cols]))
        made += rows.size
        per_pair.append(rows.size)
    return correct / made, per_pair


@pytest.mark.parametrize("algorithm,options", [("auction", {}), ("hungarian", {}),
                                               ("hungarian", {"variant": "classical"}), ("lsa", {})])
@pytest.mark.parametrize("persistence", [0.5, 0.9])
def test_accuracy_matches_exact_assignment(algorithm, options, persistence):
    series = particle_series(persistence=persistence, seed=int(persistence * 10))
    expected, per_pair = oracle_accuracy(series)
    result = track(series, algorithm, backend="cpu", **options)
    assert result.accuracy == pytest.approx(expected)
    assert [s["matched"] for s in result.frame_stats] == per_pair
    assert all(s["certified"] for s in result.frame_stats)
    assert len(set(series.sizes)) > 1  # particles entered and left


def test_unequal_frames_leave_extra_points_unmatched():
    series = particle_series(n=40, frames=4, enter=0.3, leave=0.2, seed=9)
    result = track(series, "auction", backend="cpu")
    assert len(set(series.sizes)) > 1
    for t, (pairs, stats) in enumerate(zip(result.links, result.frame_stats)):
        na, nb = series.sizes[t], series.sizes[t + 1]
        assert pairs.shape == (min(na, nb), 2)
        assert np.unique(pairs[:, 0]).size == pairs.shape[0] and np.unique(pairs[:, 1]).size == pairs.shape[0]
        assert stats["points"] == na and stats["next_points"] == nb
        distances = cdist(series.frames[t], series.frames[t + 1])
        assert stats["cost"] == pytest.approx(distances[pairs[:, 0], pairs[:, 1]].sum())
        assert 0.0 <= stats["accuracy"] <= 1.0 and stats["true_links"] <= min(na, nb)


def test_tracks_cover_every_point_once_in_frame_order():
    series = particle_series(n=30, frames=6, seed=5)
    result = track(series, "hungarian", backend="cpu")
    seen = [(f, i) for tr in result.tracks for (f, i) in tr]
    assert sorted(seen) == [(f, i) for f, size in enumerate(series.sizes) for i in range(size)]
    for tr in result.tracks:
        frames = [f for f, _ in tr]
        assert frames == list(range(frames[0], frames[0] + len(frames)))  # consecutive frames
    # every link continues a track
    for t, pairs in enumerate(result.links):
        owner = {p: k for k, tr in enumerate(result.tracks) for p in tr}
        assert all(owner[(t, int(a))] == owner[(t + 1, int(b))] for a, b in pairs)


def test_chain_tracks_small_example():
    links = [np.array([[0, 1], [1, 0]]), np.array([[0, 0]])]
    tracks = chain_tracks([2, 3, 1], links)
    assert tracks == [[(0, 0), (1, 1)], [(0, 1), (1, 0), (2, 0)], [(1, 2)]]


def oracle_gated_cost(a, b, max_distance):
    """Optimal (link distances + max_distance per unmatched point) by scipy on the same construction."""
    problem = gated_problem(cdist(a, b), max_distance)
    rows, cols = linear_sum_assignment(problem.costs)
    return float(problem.costs[rows, cols].sum())


@pytest.mark.parametrize("algorithm", ["auction", "hungarian"])
def test_gating_forbids_far_pairs_and_allows_unmatched_points(algorithm):
    series = particle_series(n=40, frames=4, seed=11, speed=0.05)
    gate = 0.06
    result = track(series, algorithm, backend="cpu", max_distance=gate)
    for t, pairs in enumerate(result.links):
        a, b = series.frames[t], series.frames[t + 1]
        dist = np.linalg.norm(a[pairs[:, 0]] - b[pairs[:, 1]], axis=1)
        assert np.all(dist <= gate)
        unmatched = a.shape[0] + b.shape[0] - 2 * pairs.shape[0]
        assert dist.sum() + gate * unmatched == pytest.approx(oracle_gated_cost(a, b, gate), abs=1e-9)
    assert any(s["matched"] < min(s["points"], s["next_points"]) for s in result.frame_stats)


def test_a_gate_nothing_passes_leaves_everything_unmatched():
    series = particle_series(n=10, frames=3, seed=2)
    result = track(series, "auction", backend="cpu", max_distance=1e-9)
    assert all(p.shape == (0, 2) for p in result.links)
    assert len(result.tracks) == sum(series.sizes)
    assert result.accuracy == 1.0  # no link made, none wrong


def test_without_ground_truth():
    rng = np.random.default_rng(0)
    frames = [rng.random((8, 3)), rng.random((6, 3)), rng.random((0, 3)), rng.random((4, 3))]
    result = track(PointSeries.from_frames(frames), "hungarian", backend="cpu")
    assert result.accuracy is None and "accuracy" not in result.frame_stats[0]
    assert [p.shape[0] for p in result.links] == [6, 0, 0]


def test_bad_input():
    with pytest.raises(InputError):
        track(particle_series(n=5, frames=2), "auction", max_distance=-1.0)
    with pytest.raises(InputError):
        track(np.zeros((3, 3)), "auction")


def test_cancellation_between_frames():
    class StopNow(solvers.Observer):
        def should_stop(self):
            return True
    with pytest.raises(Cancelled):
        track(particle_series(n=5, frames=3), "auction", backend="cpu", observer=StopNow())


def test_api_entry_point():
    series = particle_series(n=12, frames=3, seed=4)
    result = solvers.track(series, algorithm="auction", backend="cpu")
    assert result.summary["certified"] and result.summary["links"] == sum(s["matched"] for s in result.frame_stats)
