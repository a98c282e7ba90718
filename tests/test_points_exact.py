"""Exact point correspondence from k nearest neighbours (solvers.match_points): scipy's dense
linear_sum_assignment on cdist is the oracle; the certificate must claim the full Euclidean
problem only when its bound holds, and must never accept a wrong answer."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import solvers
from solvers.errors import InputError


def scipy_value(a, b):
    distances = cdist(a, b)
    rows, cols = linear_sum_assignment(distances)
    return float(distances[rows, cols].sum())


def point_sets(rng, trial):
    """Frames with small motion (the tracking case), uniform clouds, duplicate points (ties),
    wide, tall and square, at scales from 1e-20 to 1e100."""
    n = int(rng.integers(1, 120))
    m = n + int(rng.integers(-min(n - 1, 30), 40)) if trial % 3 else n
    scale = 10.0 ** float(rng.choice([-20, 0, 3, 100]))
    a = rng.random((n, 3)) * scale
    kind = trial % 4
    if kind == 0:  # the next frame: moved a little, some points gone or new
        b = np.concatenate([a, rng.random((max(0, m - n), 3)) * scale])[:m] + rng.normal(0, 0.01 * scale, (m, 3))
    elif kind == 1:
        b = rng.random((m, 3)) * scale
    elif kind == 2:  # duplicates: many equal distances
        b = np.repeat(rng.random((max(1, m // 3), 3)) * scale, 3, axis=0)[:m]
        b = np.concatenate([b, rng.random((m - b.shape[0], 3)) * scale])
    else:  # integer lattice: exact ties
        a = rng.integers(0, 4, (n, 3)).astype(float) * scale
        b = rng.integers(0, 4, (m, 3)).astype(float) * scale
    return a, b


@pytest.mark.parametrize("block", range(4))
def test_match_points_equals_scipy_and_is_proven_for_the_full_problem(block):
    rng = np.random.default_rng(100 + block)
    for trial in range(block * 30, block * 30 + 30):
        a, b = point_sets(rng, trial)
        result = solvers.match_points(a, b, k=int(rng.choice([1, 2, 4, 8])))
        expected = scipy_value(a, b)
        where = (trial, a.shape, b.shape)
        assert result.certificate.valid and result.certificate.optimal, (where, result.certificate.details)
        assert "full Euclidean problem" in result.certificate.details
        assert result.value == pytest.approx(expected, rel=1e-9, abs=0), where
        pairs = np.flatnonzero(result.row_match >= 0)
        assert pairs.size == min(a.shape[0], b.shape[0])
        assert np.unique(result.row_match[pairs]).size == pairs.size
        recomputed = np.linalg.norm(a[pairs] - b[result.row_match[pairs]], axis=1).sum()
        assert recomputed == pytest.approx(result.value, rel=1e-12), where
        assert np.array_equal(result.col_match[result.row_match[pairs]], pairs)


def test_the_bound_is_checked_by_hand_against_every_pair():
    """The claim itself: the returned duals are feasible on every pair of the full distance matrix
    (up to rounding) and tight on the matched pairs."""
    rng = np.random.default_rng(7)
    a = rng.random((80, 3))
    b = np.concatenate([a + rng.normal(0, 0.02, a.shape), rng.random((30, 3))])
    result = solvers.match_points(a, b, k=3)
    u, v = result.duals["u"], result.duals["v"]
    distances = cdist(a, b)
    assert np.max(u[:, None] + v[None, :] - distances) <= 1e-12
    rows = np.arange(80)
    assert np.allclose(distances[rows, result.row_match], u + v[result.row_match], atol=1e-12)
    assert result.stats["points_with_pruned_pairs"] > 0 and result.stats["max_k"] < 110


def test_when_rounds_run_out_it_claims_only_the_candidates():
    rng = np.random.default_rng(3)
    a, b = rng.random((150, 3)), rng.random((150, 3))  # uniform squares need long-range pairs
    result = solvers.match_points(a, b, k=1, max_rounds=1)
    assert "not proven for every pair" in result.certificate.details and not result.certificate.certified
    assert "infeasible for" in result.certificate.reason and result.stats["pairs_breaking_the_duals"] > 0
    assert result.value >= scipy_value(a, b) - 1e-9


@pytest.mark.parametrize("a, b, words", [
    (np.zeros((3, 2)), np.zeros((3, 3)), "differ in dimension"),
    (np.zeros(3), np.zeros((3, 3)), "array of points"),
    (np.array([[0.0, np.nan, 0.0]]), np.zeros((1, 3)), "not a finite number"),
    (np.full((2, 3), 1e200), np.zeros((2, 3)), "rescale the points"),
    (np.random.default_rng(7).random((40, 3)) * 1e-165, np.random.default_rng(8).random((40, 3)) * 1e-165,
     "squared distances underflow"),  # they did: every distance was 0, a wrong matching certified
    (np.array([["a", "b", "c"]]), np.zeros((1, 3)), "array of points"),
])
def test_hostile_points_get_one_line(a, b, words):
    with pytest.raises(InputError) as info:
        solvers.match_points(a, b)
    assert words in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(InputError):
        solvers.match_points(np.zeros((2, 3)), np.zeros((2, 3)), k=0)


def test_empty_and_single_points():
    empty = solvers.match_points(np.zeros((0, 3)), np.ones((4, 3)))
    assert empty.value == 0.0 and empty.certificate.optimal and np.all(empty.col_match == -1)
    one = solvers.match_points(np.zeros((1, 3)), np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 1.0]]))
    assert one.value == 1.0 and one.row_match.tolist() == [1]


def test_widening_stops_at_the_pair_limit_and_claims_the_candidates_only():
    rng = np.random.default_rng(3)
    a, b = rng.random((150, 3)), rng.random((150, 3))
    # uniform clouds: 16 neighbours each first hold a complete matching, whose bound fails for most points
    result = solvers.match_points(a, b, k=16, max_pairs=2400)  # 150 x 16 fit, adding the pairs that break the duals not
    assert result.stats["candidates"] <= 2400 and not result.certificate.certified
    assert "more than 2,400 pairs" in result.stats["stopped"] and "not proven for every pair" in result.certificate.details
    with pytest.raises(InputError) as info:  # one neighbour each holds no complete matching here
        solvers.match_points(a, b, k=1, max_pairs=200)
    assert "raise max_pairs" in str(info.value) and "\n" not in str(info.value)


def test_the_pairs_that_break_the_duals_are_all_found():
    """knn's search for the pairs that break its duals (on the grid) against every pair by brute force."""
    from solvers.points_exact import _Candidates
    rng = np.random.default_rng(21)
    for trial in range(30):
        n, m = int(rng.integers(1, 50)), int(rng.integers(1, 50))
        scale = 10.0 ** float(rng.choice([-25, 0, 120]))
        a, b = rng.random((n, 3)) * scale, rng.random((m, 3)) * scale
        if trial % 3 == 1:
            b[:, 2] = 0.0
        u, v = rng.normal(0, 0.3, n) * scale, rng.normal(-0.2, 0.3, m) * scale
        rows = np.flatnonzero(rng.random(n) < 0.7)
        found = _Candidates(a, b).broken_pairs(rows, u, v, np.zeros(n))
        d = cdist(a, b)
        expected_rows, expected_cols = np.nonzero(u[:, None] + v[None, :] > d)
        keep = np.isin(expected_rows, rows)
        assert sorted(zip(found[0].tolist(), found[1].tolist())) == sorted(
            zip(expected_rows[keep].tolist(), expected_cols[keep].tolist())), trial
        assert np.array_equal(found[2], d[found[0], found[1]])


def test_the_grid_finds_the_k_nearest_as_brute_force_does():
    """point_neighbours against every distance: the k-th distance is exact (ties may pick either
    point), every point listed is that near, nothing nearer is left out, and a point the rings
    cannot settle says so (the kd-tree answers it). Flat, line-shaped, duplicate, far-off and
    extreme-scale sets, 1 to 3 coordinates."""
    from solvers import point_grid
    from solvers.point_neighbours import nearest
    rng = np.random.default_rng(33)
    for trial in range(60):
        dims = 1 + trial % 3
        n, m = int(rng.integers(1, 60)), int(rng.integers(1, 300))
        scale = 10.0 ** float(rng.choice([-30, 0, 5, 140]))
        a, b = rng.random((n, dims)) * scale, rng.random((m, dims)) * scale
        if trial % 5 == 1:
            b[:, -1] = 0.0  # flat (or, in one dimension, all equal)
        if trial % 5 == 2:
            b = np.repeat(b[: max(1, m // 4)], 4, axis=0)  # duplicates: tied distances
        if trial % 5 == 3:
            a = a + 3 * scale  # far from b: the rings give up
        k = int(rng.integers(1, min(b.shape[0], 20) + 1))
        grid = point_grid.build(b)
        dist, idx, done = nearest(grid, a, b, point_grid.padded(a), np.arange(n), k)
        d = cdist(a, b)
        kth = np.sort(d, axis=1)[:, k - 1]
        for i in np.flatnonzero(done):
            assert np.array_equal(dist[i], d[i, idx[i]]), trial  # pair_distance's values, bit for bit
            assert len(set(idx[i].tolist())) == k and np.all(np.diff(dist[i]) >= 0), trial
            assert dist[i, -1] == kth[i], trial
            assert np.count_nonzero(d[i] < dist[i, -1]) <= k - 1, trial  # nothing nearer left out
        if trial % 5 in (0, 4) and m >= 30:
            assert done.mean() > 0.5, trial  # the grid settles most queries among points spread alike
    # and through the solver: a far-off set still gets its exact answer from the kd-tree
    a = rng.random((40, 3)) + 100.0
    b = rng.random((60, 3))
    assert solvers.match_points(a, b).value == pytest.approx(scipy_value(a, b), rel=1e-12)


@pytest.mark.parametrize("algorithm", ["knn", "lsa", "hungarian"])
def test_points_just_wide_enough_are_solved_exactly(algorithm):
    """Spread over 2e-130, just above MIN_SPAN: every squared distance that matters is a normal number,
    and the answer is scipy's on the unscaled points, scaled, and certified."""
    rng = np.random.default_rng(11)
    a, b = rng.random((40, 3)), rng.random((40, 3))
    scale = 2e-130
    got = solvers.solve(solvers.EuclideanCosts.from_points(a * scale, b * scale), algorithm, backend="cpu")
    d = cdist(a, b)
    rows, cols = linear_sum_assignment(d)
    assert got.certified
    assert d[np.arange(40), got.row_match].sum() == pytest.approx(d[rows, cols].sum(), rel=1e-12)
    assert got.value == pytest.approx(d[rows, cols].sum() * scale, rel=1e-12)


def test_a_series_too_small_to_measure_is_refused_naming_its_frames(tmp_path, capsys):
    from solvers.cli import main
    sample = solvers.load("sample_graphs/particles_100x10.npz")
    tiny = solvers.PointSeries.from_frames([f * 1e-165 for f in sample.frames], sample.ids)
    with pytest.raises(InputError, match="frames 0 and 1 span only .* squared distances underflow"):
        solvers.track(tiny)
    path = tmp_path / "tiny.npz"
    solvers.save(tiny, str(path))
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tiny.npz" in err[0] and "rescale the points" in err[0]
