"""A certificate never accepts what an exact recheck refutes. The optimality allowance covers the
solvers' rounding, so a real difference smaller than it could pass: a swap worse by 17 beside a cost
of 1e18, a Hungarian answer worse by 1e-7 among costs from 1e-5 to 1e5, one worse by 2e-4 on costs of
1e6 plus noise. Here the oracle is scipy's optimum with both values summed exactly (math.fsum): an
answer certified optimal must cost exactly as much, whatever the family, solver or shape."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import solvers
from solvers import certify as cm
from solvers.problems import CostMatrix


def exact_difference(costs: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """cost(a) - cost(b), correctly rounded from the exact difference (not a difference of two
    rounded totals: near 1e18 those are 128 apart at least)."""
    ra, rb = np.flatnonzero(a >= 0), np.flatnonzero(b >= 0)
    return math.fsum(costs[ra, a[ra]].tolist() + (-costs[rb, b[rb]]).tolist())


def scipy_match(costs: np.ndarray) -> np.ndarray:
    """scipy's optimum of the costs less each line's cheapest (every assignment changes by the same
    amount): on the raw costs scipy itself misses the optimum beside a 1e18 row or column."""
    reduced = costs
    n, m = costs.shape
    for axis, applies in ((1, n <= m), (0, n >= m)):
        if applies:
            lowest = np.min(reduced, axis=axis, keepdims=True)
            reduced = reduced - np.where(np.isfinite(lowest), lowest, 0.0)
    r, c = linear_sum_assignment(reduced)
    match = np.full(costs.shape[0], -1, np.int64)
    match[r] = c
    return match


def one_huge_row(rng, n: int, m: int, big: float) -> np.ndarray:
    """Every assignment pays one cost near ``big`` (row 0); the others are small integers."""
    costs = rng.integers(0, 100, (n, m)).astype(np.float64)
    costs[0] += big
    return costs


def one_huge_column(rng, n: int, m: int, big: float) -> np.ndarray:
    return one_huge_row(rng, m, n, big).T.copy()


FAMILIES = {
    "one column near 1e18": lambda rng, n, m: one_huge_column(rng, n, m, 1e18),
    "mixed magnitudes": lambda rng, n, m: rng.random((n, m)) * 10.0 ** rng.integers(-5, 6, (n, m)),
    "offset 1e6 plus noise": lambda rng, n, m: 1e6 + rng.random((n, m)) * 1e-3,
    "one row near 1e18": lambda rng, n, m: one_huge_row(rng, n, m, 1e18),
    "integers near 1e15": lambda rng, n, m: 1e15 + rng.integers(0, 1000, (n, m)).astype(np.float64),
    "uniform": lambda rng, n, m: rng.random((n, m)),
}


def worse_by_one_swap(costs: np.ndarray, best: np.ndarray) -> tuple[np.ndarray, float]:
    """The assignment one swap of two rows (not row 0) away from ``best`` that costs the least more."""
    chosen, least = None, math.inf
    for k in range(2, costs.shape[0]):
        swapped = best.copy()
        swapped[[1, k]] = swapped[[k, 1]]
        more = exact_difference(costs, swapped, best)
        if 0 < more < least:
            chosen, least = swapped, more
    return chosen, least


@pytest.mark.parametrize("big", [1e12, 1e15, 1e18])
def test_a_swap_worse_by_a_few_units_beside_a_huge_cost_is_refuted_on_every_path(big):
    costs = one_huge_row(np.random.default_rng(3), 60, 60, big)
    best = scipy_match(costs)
    worse, more = worse_by_one_swap(costs, best)
    assert 0 < more < 100
    problem = CostMatrix.from_array(costs)
    proof = cm.certify_assignment(problem, best).witness
    own = cm.certify_assignment(problem, worse)  # the certificate's own potentials
    trusted = cm.certify_assignment(problem, worse, duals={"u": proof["u"], "v": proof["v"]})  # the optimum's duals
    for cert in (own, trusted):
        assert cert.valid and not cert.optimal and cert.reason == "a cheaper assignment exists", cert.details
    assert cm.certify_assignment(problem, best).optimal


def test_an_exactly_negative_cycle_is_never_forgiven_by_the_allowance(monkeypatch):
    """The reference potentials (an independent optimum's) once certified an assignment the
    residual graph had already shown to be exactly more expensive ('by no more than the rounding
    allowance'); with the reference check's own refutation switched off, the cycle alone refutes."""
    costs = one_huge_row(np.random.default_rng(5), 40, 40, 1e18)
    worse, more = worse_by_one_swap(costs, scipy_match(costs))
    monkeypatch.setattr(cm, "_reference_assignment", lambda *a: None)
    cert = cm.certify_assignment(CostMatrix.from_array(costs), worse)
    assert not cert.optimal and "negative cycle" in cert.details


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_an_answer_certified_optimal_costs_exactly_the_optimum(family, sweep):
    rng = np.random.default_rng(sum(map(ord, family)))
    shapes = [(40, 40), (30, 70), (120, 120), (70, 30), (90, 200), (250, 250)]
    for n, m in shapes[:sweep(len(shapes), 3)]:
        costs = FAMILIES[family](rng, n, m)
        best = scipy_match(costs)
        for algorithm in ("hungarian", "auction", "lsa"):
            result = solvers.solve(costs, algorithm, backend="cpu")
            if result.certificate.optimal:
                assert exact_difference(costs, result.row_match, best) == 0, (family, n, m, algorithm)


def test_offset_costs_are_solved_exactly_by_the_hungarian_it_takes_the_offset_off_first():
    rng = np.random.default_rng(8)
    for n in (100, 300):
        costs = 1e6 + rng.random((n, n)) * 1e-3
        result = solvers.solve(costs, "hungarian", backend="cpu")
        assert result.certificate.optimal and result.stats.get("offset_removed")
        assert exact_difference(costs, result.row_match, scipy_match(costs)) == 0


def test_too_large_for_a_recheck_room_for_a_cheaper_answer_leaves_it_not_proven(monkeypatch):
    """Past REFERENCE_CELLS no independent optimum is computed; a proof by the allowance whose margin
    leaves room for a cheaper assignment then means 'not proven', said in the details."""
    costs = one_huge_row(np.random.default_rng(3), 60, 60, 1e18)
    best = scipy_match(costs)
    worse, _ = worse_by_one_swap(costs, best)
    monkeypatch.setattr(cm, "REFERENCE_CELLS", 100)
    problem = CostMatrix.from_array(costs)
    proof = cm.certify_assignment(problem, best).witness
    cert = cm.certify_assignment(problem, worse, duals={"u": proof["u"], "v": proof["v"]})
    assert not cert.optimal
    assert cm.TIE_NOTE in cert.details or "negative cycle" in cert.details, cert.details


HONEST = {
    "uniform": lambda rng, n, m: rng.random((n, m)),
    "integers": lambda rng, n, m: rng.integers(0, 10 * n, (n, m)).astype(np.float64),
    "ties": lambda rng, n, m: rng.integers(0, 3, (n, m)).astype(np.float64),
    "tiny": lambda rng, n, m: rng.random((n, m)) * 1e-300,
    "huge": lambda rng, n, m: rng.random((n, m)) * 1e300,
    "offset": lambda rng, n, m: 1e6 + rng.random((n, m)) * 1e-3,
    "forbidden pairs": lambda rng, n, m: np.where(rng.random((n, m)) < 0.3, np.inf, rng.random((n, m))),
    "mixed magnitudes": FAMILIES["mixed magnitudes"],
}


@pytest.mark.parametrize("family", sorted(HONEST))
def test_without_an_independent_check_an_exact_optimum_is_still_proven(monkeypatch, family):
    """The per-pair test must not make an honest optimum 'not proven' where no reference is
    computed (past REFERENCE_CELLS, here every size): scipy's optimum, wide, tall and square, is
    proven by the certificate's own potentials and again by those potentials given as duals."""
    monkeypatch.setattr(cm, "REFERENCE_CELLS", 0)
    rng = np.random.default_rng(sum(map(ord, family)) + 1)
    for n, m in ((120, 120), (80, 250), (250, 80), (4, 200)):
        costs = HONEST[family](rng, n, m)
        best = scipy_match(costs)
        problem = CostMatrix.from_array(costs)
        own = cm.certify_assignment(problem, best)
        assert own.optimal, (family, n, m, own.details)
        again = cm.certify_assignment(problem, best, duals={"u": own.witness["u"], "v": own.witness["v"]})
        assert again.optimal, (family, n, m, again.details)


@pytest.mark.parametrize("costs, worse, best", [
    ([[1e18, 1e18, 1e18], [0, 100, 17], [100, 0, 100]], [0, 2, 1], [2, 0, 1]),  # the slack on the huge pair
    ([[1e18, 1e18], [1e18, 100], [1e18, 83]], [0, 1, -1], [0, -1, 1]),         # tall: on an unassigned row
])
def test_small_problems_are_rechecked_exactly_wherever_the_gap_sits(costs, worse, best):
    """Where a difference sits on a pair (or an unassigned row) whose own magnitude explains it, no
    per-pair test can see it; the margin (every other pair's slack) can: the proof is rechecked
    against an independent optimum."""
    costs, worse, best = np.array(costs, dtype=np.float64), np.array(worse), np.array(best)
    assert exact_difference(costs, worse, best) == 17
    problem = CostMatrix.from_array(costs)
    proof = cm.certify_assignment(problem, best)
    assert proof.optimal
    for cert in (cm.certify_assignment(problem, worse),
                 cm.certify_assignment(problem, worse, duals={"u": proof.witness["u"], "v": proof.witness["v"]})):
        assert not cert.optimal and cert.reason == "a cheaper assignment exists", cert.details


def test_potentials_carrying_a_shared_huge_shift_are_recentred():
    """u + K, v - K is the same dual; with K near 1e18 (the sweeps' potentials beside a column of
    1e18) every pair's slack rounds at 1e18. Recentred, the gap shows where it is: the answers of
    scipy, the Hungarian and the auction, worse by 2 to 9634, were all certified."""
    costs = one_huge_column(np.random.default_rng(400), 250, 250, 1e18)  
    best = scipy_match(costs)
    for algorithm in ("lsa", "hungarian", "auction"):
        result = solvers.solve(costs, algorithm, backend="cpu")
        if result.certificate.optimal:
            assert exact_difference(costs, result.row_match, best) == 0, algorithm
