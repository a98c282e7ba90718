"""EuclideanCosts: the assignment between point sets held as points. Every algorithm reaches the
same optimum as scipy on cdist; the certificate (solvers.certify_points) proves knn's answers for
every pair of points, and refutes tampered matchings and duals."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import solvers
from solvers.certify import certify
from solvers.errors import InputError
from solvers.problems import EuclideanCosts
from solvers.result import Solution


def scipy_optimum(a, b) -> float:
    d = cdist(a, b)
    rows, cols = linear_sum_assignment(d)
    return float(d[rows, cols].sum())


def frames(rng, n, m, motion=0.01, scale=1.0):
    a = rng.random((n, 3)) * scale
    extra = rng.random((max(0, m - n), 3)) * scale
    b = np.concatenate([a, extra])[:m] + rng.normal(0, motion * scale, (m, 3))
    return a, b[rng.permutation(m)]


@pytest.mark.parametrize("n, m", [(30, 30), (25, 40), (40, 25)])
def test_every_assignment_algorithm_reaches_the_same_optimum(n, m):
    rng = np.random.default_rng(n * 100 + m)
    a, b = frames(rng, n, m, motion=0.2)
    problem = EuclideanCosts.from_points(a, b)
    expected = scipy_optimum(a, b)
    for name in ("knn", "lsa", "hungarian", "auction", "lapjvsp"):
        result = solvers.solve(problem, name, backend="cpu")
        assert result.certified and result.certificate.optimal, (name, result.certificate.details)
        assert result.value == pytest.approx(expected, rel=1e-12), name
        assert np.count_nonzero(result.row_match >= 0) == min(n, m)


def test_the_default_choice_for_point_sets_is_knn_from_500_points():
    small = EuclideanCosts.from_points(np.zeros((3, 3)), np.ones((3, 3)))
    result = solvers.solve(small, backend="cpu")
    assert result.algorithm == "lsa" and result.value == pytest.approx(3 * np.sqrt(3))
    rng = np.random.default_rng(0)
    a, b = frames(rng, 500, 500)
    result = solvers.solve(EuclideanCosts.from_points(a, b), backend="cpu")
    assert result.algorithm == "knn" and result.value == pytest.approx(scipy_optimum(a, b), rel=1e-12)


def test_knn_is_proven_on_every_pair_at_extreme_scales_and_ties():
    rng = np.random.default_rng(5)
    for trial in range(24):
        scale = 10.0 ** [-20, 0, 7, 140][trial % 4]
        n, m = int(rng.integers(1, 60)), int(rng.integers(1, 60))
        if trial % 3 == 0:  # a lattice: many exactly equal distances
            a = rng.integers(0, 3, (n, 3)) * scale
            b = rng.integers(0, 3, (m, 3)) * scale
        else:
            a, b = frames(rng, n, m, motion=0.05, scale=scale)
        result = solvers.solve(EuclideanCosts.from_points(a, b), "knn", k=int(rng.choice([1, 3, 8])))
        assert result.certificate.optimal, (trial, result.certificate.details)
        assert "every pair of points" in result.certificate.details
        assert result.value == pytest.approx(scipy_optimum(a, b), rel=1e-12, abs=0), trial


def _solution_of(result) -> Solution:
    return Solution(result.value, 1, result.row_match.copy(), result.col_match.copy(),
                    duals={k: np.array(v, dtype=float) for k, v in result.duals.items()})


def test_the_certificate_refutes_a_worse_matching_with_the_optimal_duals():
    rng = np.random.default_rng(2)
    a, b = frames(rng, 40, 40, motion=0.05)
    problem = EuclideanCosts.from_points(a, b)
    result = solvers.solve(problem, "knn")
    worse = _solution_of(result)
    rows = worse.row_match
    rows[[0, 1]] = rows[[1, 0]]
    worse.col_match[rows[[0, 1]]] = [0, 1]
    cert = certify(problem, worse)
    assert cert.valid and not cert.optimal and cert.gap > 0


def test_tampered_duals_prove_no_more_than_they_may():
    rng = np.random.default_rng(3)
    a, b = frames(rng, 50, 70, motion=0.02)
    problem = EuclideanCosts.from_points(a, b)
    good = _solution_of(solvers.solve(problem, "knn"))
    raised = dataclasses.replace(good, duals={"u": good.duals["u"] + 0.5, "v": good.duals["v"]})
    # u_i + 0.5 breaks feasibility by 0.5 in every row; the bound pays it back row by row, so the
    # optimal matching stays proven (rightly), and a worse one is refuted with the reason
    assert certify(problem, raised).optimal
    worse = dataclasses.replace(raised, row_match=raised.row_match.copy(), col_match=raised.col_match.copy())
    first, second = worse.row_match[0], worse.row_match[1]
    worse.row_match[[0, 1]] = [second, first]
    worse.col_match[[first, second]] = [1, 0]
    cert = certify(problem, worse)
    assert cert.valid and not cert.optimal and "infeasible for 50 points" in cert.reason
    positive = dataclasses.replace(good, duals={"u": good.duals["u"] - 1.0, "v": good.duals["v"] + 1.0})
    assert not certify(problem, positive).optimal  # a rectangle's v must not be positive
    for bad in ({"u": good.duals["u"]}, {"u": np.full(50, np.nan), "v": good.duals["v"]}, None):
        cert = certify(problem, dataclasses.replace(good, duals=bad))
        assert cert.valid and not cert.optimal and "no finite dual" in cert.reason


def test_the_certificate_refuses_what_is_not_an_assignment():
    problem = EuclideanCosts.from_points(np.zeros((3, 3)), np.eye(3))
    duals = {"u": np.zeros(3), "v": np.zeros(3)}
    cases = {  # the assignment certificate's own messages (solvers.certify checks these)
        "incomplete assignment: 2 of 3": (np.array([0, 1, -1]), np.array([0, 1, -1])),
        "column 0 is matched to rows 0 and 1": (np.array([0, 0, 1]), np.array([0, 2, -1])),
        "but row_match says column 0": (np.array([0, 1, 2]), np.array([1, 0, 2])),
        "row_match has shape (2,)": (np.array([0, 1]), np.array([0, 1, -1])),
        "non-integer": (np.array([0.5, 1, 2]), np.array([0, 1, 2])),
    }
    for words, (rows, cols) in cases.items():
        cert = certify(problem, Solution(0.0, 1, rows, cols, duals=duals))
        assert not cert.valid and words in cert.details, words


def test_a_column_whose_potential_jumps_is_checked_against_every_row():
    """The grid passes over cells by their largest v: raising one column's v makes that column's
    cell reachable from every row, and the check finds the violation in all of them."""
    rng = np.random.default_rng(9)
    a, b = rng.random((300, 3)), rng.random((300, 3))
    problem = EuclideanCosts.from_points(a, b)
    result = solvers.solve(problem, "knn")
    assert result.certificate.optimal and result.value == pytest.approx(scipy_optimum(a, b), rel=1e-12)
    solution = _solution_of(result)
    solution.duals["v"][0] += 10.0  # pair (i, 0) now breaks u_i + v_0 <= d_i0 by about 10 in every row
    cert = certify(problem, solution)
    assert 300 <= cert.witness["checked_pairs"] < 300 * 300  # column 0 against every row, most cells passed over
    assert not cert.optimal and "infeasible for 300 points" in cert.reason


def test_the_grid_check_matches_brute_force():
    """delta_i from the grid equals the brute-force largest violation over all pairs, for random,
    clustered, flat and duplicate point sets and random duals."""
    from solvers import certify_points
    rng = np.random.default_rng(12)
    for trial in range(80):
        n, m = int(rng.integers(1, 60)), int(rng.integers(1, 60))
        scale = 10.0 ** float(rng.choice([-30, 0, 140]))
        a, b = rng.random((n, 3)) * scale, rng.random((m, 3)) * scale
        u = rng.normal(0, 0.3, n) * scale
        v = rng.normal(-0.2, 0.3, m) * scale
        if trial % 8 == 5:  # far from the origin: cells far smaller than a coordinate's rounding
            a, b = a * 1e-12 + 1e10 * scale, b * 1e-12 + 1e10 * scale
            u, v = u * 1e-12, v * 1e-12
        if trial % 4 == 1:
            b[:, 2] = 0.0  # flat
        elif trial % 4 == 2:
            b = np.repeat(b[:1], m, axis=0)  # one point, many times
        elif trial % 4 == 3:
            b[:, 1:] = 0.0  # a line
        delta, _, _ = certify_points._row_violations(a, b, u, v)
        d = cdist(a, b)
        brute = np.maximum((u[:, None] + v[None, :] - d).max(axis=1), 0.0)
        assert np.all(delta >= brute), trial  # never misses a violation
        assert np.allclose(delta, brute, rtol=0, atol=1e-12 * np.abs(d).max(initial=scale)), trial


def test_dense_solvers_are_refused_in_one_line_when_the_distances_would_not_fit():
    many = np.zeros((20_000, 3))
    problem = EuclideanCosts.from_points(many, many)
    with pytest.raises(InputError) as info:
        solvers.solve(problem, "lsa", backend="cpu")
    assert "use the knn algorithm" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("a, b, words", [
    (np.zeros((3, 2)), np.zeros((3, 3)), "differ in dimension"),
    (np.zeros((3, 4)), np.zeros((3, 4)), "1 to 3 coordinates"),
    (np.zeros(3), np.zeros((3, 3)), "array of points"),
    (np.array([[0.0, np.inf, 0.0]]), np.zeros((1, 3)), "not a finite number"),
    (np.full((2, 3), -1e151), np.zeros((2, 3)), "rescale the points"),
])
def test_hostile_point_sets_get_one_line(a, b, words):
    with pytest.raises(InputError) as info:
        EuclideanCosts.from_points(a, b, source="frames.npz")
    text = str(info.value)
    assert words in text and "frames.npz" in text and "\n" not in text


def test_points_are_frozen_and_distances_match_cdist():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(20, 3)) * 1e5, rng.normal(size=(15, 3))
    problem = EuclideanCosts.from_points(a, b)
    assert not problem.a.flags.writeable
    rows, cols = np.meshgrid(np.arange(20), np.arange(15), indexing="ij")
    assert np.array_equal(problem.distances(rows.ravel(), cols.ravel()).reshape(20, 15), cdist(a, b))


@pytest.mark.parametrize("a, b, words", [
    ([[np.nan, 0.0, 0.0]], [[0.0, 0.0, 0.0]], "not a finite number"),
    (np.zeros((2, 4)), np.zeros((2, 4)), "1 to 3 coordinates"),
    (np.zeros((2, 3)), np.zeros((2, 2)), "differ in dimension"),
    (np.zeros(3), np.zeros((2, 3)), "array of points"),
    ([[0.0, 0.0, 0.0], [1e-200, 0.0, 0.0]], [[0.0, 0.0, 0.0]], "underflow"),
])
def test_the_constructor_checks_the_points_as_from_points_does(a, b, words):
    """``EuclideanCosts(a, b)`` (the issue's own spelling) took anything before; both ways of
    making one now refuse bad points in one line."""
    for make in (EuclideanCosts, EuclideanCosts.from_points):
        with pytest.raises(InputError, match=words):
            make(a, b)


def test_the_callers_point_arrays_stay_writeable_and_the_problem_holds_read_only_views():
    a, b = np.random.default_rng(1).random((5, 3)), np.random.default_rng(2).random((7, 3))
    for problem in (EuclideanCosts(a, b), EuclideanCosts.from_points(a, b)):
        assert a.flags.writeable and b.flags.writeable  # they were made read-only in place before
        assert not problem.a.flags.writeable and problem.a.dtype == np.float64
    solvers.match_points(a, b)
    assert a.flags.writeable and b.flags.writeable
    a[0, 0] = 0.5  # the user's own array can still be written
    listed = EuclideanCosts([[0, 0, 0], [1, 1, 1]], [[0, 0, 1]])
    assert listed.a.dtype == np.float64 and listed.shape == (2, 1)
