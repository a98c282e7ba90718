"""solvers.near_ties: the test that lets a certificate call an answer optimal, exactly, whatever
rounding its dual carries, and solvers.exact_settle, which settles the rest. Checked against brute
force in exact rational arithmetic: when the search finds no room, no assignment (square, wide or
tall) is cheaper; on the cases that made the allowance forgive a real difference (a near tie, a
swap beside a cost of 1e18), it does find room; the settle finds exactly what brute force finds."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import certify as cm
from solvers.problems import CostMatrix


def excess(costs, u, v, rows) -> Fraction:
    """value(rows) - (sum u + sum v), exactly: the slacks of its pairs, plus -v of the columns it
    leaves free (wide) and -u of the rows it leaves unassigned (tall)."""
    total = Fraction(0)
    used = set()
    for i, j in enumerate(rows):
        if j < 0:
            total -= Fraction(float(u[i]))
            continue
        used.add(int(j))
        total += Fraction(float(costs[i, j])) - Fraction(float(u[i])) - Fraction(float(v[j]))
    for j in range(costs.shape[1]):
        if j not in used:
            total -= Fraction(float(v[j]))
    return total


def assignments(n: int, m: int):
    """Every complete assignment (min(n, m) pairs) as a row -> column array (-1: unassigned)."""
    if n <= m:
        for cols in itertools.permutations(range(m), n):
            yield np.array(cols, dtype=np.int64)
    else:
        for rows in itertools.permutations(range(n), m):
            match = np.full(n, -1, dtype=np.int64)
            match[list(rows)] = np.arange(m)
            yield match


def float_above(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


costs_strategy = st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**32 - 1),
                           st.sampled_from([1e-300, 1e-9, 1.0, 1e15, 1e300]), st.sampled_from(["ties", "near", "uniform", "huge"]))


def instance(shape_seed):
    n, m, seed, scale, kind = shape_seed
    rng = np.random.default_rng(seed)
    if kind == "ties":
        costs = rng.integers(0, 3, (n, m)).astype(np.float64)
    elif kind == "near":
        costs = rng.integers(0, 3, (n, m)) + rng.choice([0.0, 1e-9, 2.0 ** -52], (n, m))
    elif kind == "uniform":
        costs = rng.random((n, m))
    else:
        costs = rng.integers(0, 100, (n, m)).astype(np.float64)
        costs[0] += 1e18
        scale = min(scale, 1e280)  # 1e18 x 1e300 would overflow
    return costs * scale, rng


@settings(max_examples=120, deadline=None)
@given(costs_strategy, st.booleans())
def test_no_room_means_no_cheaper_assignment(case, from_optimum):
    costs, rng = instance(case)
    n, m = costs.shape
    problem = CostMatrix.from_array(costs)
    cr = cm._CostRows(problem)
    every = list(assignments(n, m))
    values = [sum(map(Fraction, costs[np.flatnonzero(a >= 0), a[a >= 0]].tolist()), Fraction(0)) for a in every]
    ours = every[int(np.argmin(values))] if from_optimum else every[int(rng.integers(len(every)))]
    # a dual: the certificate's own construction from some column potentials (exactly feasible)
    v0 = np.asarray(rng.choice([0.0, 1.0, -1.0], m) * costs.max() * rng.random(m))
    feasible = cm._feasible_duals(cr, v0)
    if feasible is None:
        return
    u, v = feasible
    gap_exact = excess(costs, u, v, ours)
    assert gap_exact >= 0
    gap = float_above(gap_exact) if gap_exact > 0 else 5e-324
    if cm._room_for_another(cr, u, v, ours, gap):
        return
    ours_value = sum(map(Fraction, costs[np.flatnonzero(ours >= 0), ours[ours >= 0]].tolist()), Fraction(0))
    assert ours_value == min(values), (costs, ours)  # no room: nothing is cheaper, exactly


def test_a_tie_beside_the_answer_is_room():
    costs = np.array([[1.0, 2.0, 5.0], [1.0, 2.0, 5.0], [4.0, 4.0, 1.0]])  # rows 0 and 1 alike
    cr = cm._CostRows(CostMatrix.from_array(costs))
    u, v = cm._feasible_duals(cr, np.array([0.0, 1.0, 0.0]))
    ours = np.array([0, 1, 2])
    assert excess(costs, u, v, ours) == 0
    # a gap of 1.5 is above the integers' step of 1, so the search decides: the swap is within it
    assert cm._room_for_another(cr, u, v, ours, 1.5)
    assert not cm._room_for_another(cr, u, v, ours, 5e-324)  # below the step: exactly no cheaper one


def test_a_swap_beside_a_cost_of_1e18_is_room():
    """The 1e18 row's pairs round at 128: a difference of 17 elsewhere hides in that rounding, and
    the pairs within the gap of tight show the way to the cheaper assignment."""
    costs = np.array([[1e18, 1e18, 1e18], [0.0, 100.0, 17.0], [100.0, 0.0, 100.0]])
    worse = np.array([0, 2, 1])
    cr = cm._CostRows(CostMatrix.from_array(costs))
    u, v = cm._feasible_duals(cr, np.array([0.0, 0.0, 0.0]))
    gap = float_above(excess(costs, u, v, worse))
    assert cm._room_for_another(cr, u, v, worse, gap)


def test_too_many_near_tight_pairs_in_a_row_is_room_without_a_search():
    from solvers.near_ties import CAP
    m = CAP + 3
    costs = np.full((2, m), 0.1)  # 0.1 is no binary fraction: its step is far below the gap of 1e-3
    cr = cm._CostRows(CostMatrix.from_array(costs))
    u, v = cm._feasible_duals(cr, np.zeros(m))
    assert cm._room_for_another(cr, u, v, np.array([0, 1]), 1e-3)


def settle_question(costs, cr, rng, ours):
    """(u, v, gap, candidate pairs) of the settle's question about ``ours`` with a random exactly
    feasible dual (the certificate's own construction), or None when that dual is not finite."""
    from solvers.exact_settle import candidate_pairs
    m = costs.shape[1]
    feasible = cm._feasible_duals(cr, np.asarray(rng.choice([0.0, 1.0], m) * costs.max() * rng.random(m)))
    if feasible is None:
        return None
    u, v = feasible
    gap = float_above(excess(costs, u, v, ours)) or 5e-324
    return u, v, gap, candidate_pairs(*cr.args(), u, v, ours, gap)


@settings(max_examples=120, deadline=None)
@given(costs_strategy, st.booleans())
def test_the_exact_settle_finds_exactly_what_brute_force_finds(case, from_optimum):
    """solvers.exact_settle answers "how much cheaper can an assignment be" in integers: equal to
    brute force over every assignment in rational arithmetic, square, wide and tall, ties, one-step
    near ties, subnormals, 1e300 and a row near 1e18 alike (scipy, which it replaced there, rounds)."""
    from solvers.exact_settle import cheaper_by
    costs, rng = instance(case)
    n, m = costs.shape
    cr = cm._CostRows(CostMatrix.from_array(costs))
    every = list(assignments(n, m))
    values = [sum(map(Fraction, costs[np.flatnonzero(a >= 0), a[a >= 0]].tolist()), Fraction(0)) for a in every]
    ours = every[int(np.argmin(values))] if from_optimum else every[int(rng.integers(len(every)))]
    question = settle_question(costs, cr, rng, ours)
    if question is None:
        return
    u, v, gap, pairs = question
    less = cheaper_by(*pairs, n, m, ours, u, v, gap)
    ours_value = sum(map(Fraction, costs[np.flatnonzero(ours >= 0), ours[ours >= 0]].tolist()), Fraction(0))
    best = ours_value - min(values)
    assert less is not None and (less > 0) == (best > 0), (costs, ours, less, float(best))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 14), st.integers(2, 14), st.integers(0, 2**32 - 1),
       st.sampled_from([1e-300, 1e-9, 1.0, 1e15]), st.sampled_from(["ties", "near", "uniform", "huge"]))
def test_the_int64_settle_answers_as_the_python_integers_do(n, m, seed, scale, kind):
    """The settle runs in int64 where the scaled values fit (milliseconds; Python's integers took
    seconds on 250 x 250 beside a cost of 1e18) and in Python's integers otherwise: on the same
    question both give the same answer, the same cycle found first."""
    from solvers import exact_settle
    from solvers.exact_settle import cheaper_by
    costs, rng = instance((n, m, seed, scale, kind))
    cr = cm._CostRows(CostMatrix.from_array(costs))
    ours = np.full(n, -1, dtype=np.int64)
    picked = rng.permutation(max(n, m))[:min(n, m)]
    if n <= m:
        ours[:] = picked
    else:
        ours[picked] = np.arange(m)
    question = settle_question(costs, cr, rng, ours)
    if question is None:
        return
    u, v, gap, pairs = question
    taken = []
    in_int64 = exact_settle._settle_int64
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exact_settle, "_settle_int64", lambda *a: taken.append(in_int64(*a)) or taken[-1])
        fast = cheaper_by(*pairs, n, m, ours, u, v, gap)
        patch.setattr(exact_settle, "_fits_int64", lambda *a: False)
        slow = cheaper_by(*pairs, n, m, ours, u, v, gap)
    assert fast == slow, (costs, ours, fast, slow)
    if kind in ("ties", "uniform") and scale == 1.0 and costs.any():  # these fit: int64 must have answered
        assert taken and taken[0][0], (kind, scale)


def test_the_reviewers_cases_are_not_certified():
    """Found by a review of this certificate: scipy's recheck, which rounds, let [0, 1] pass beside
    -1e18 (it costs 1 more), and subnormal costs one step apart; a dual whose slack overflows, and
    batch duals whose sizes overflow, were taken as proofs."""
    import solvers
    from solvers.batch.certify_batch import certify_packed
    from solvers.batch.inputs import prepare_batch
    from solvers.batch.packing import PackedSolution
    for costs in ([[-1e18, 0.0], [-1e18, 1.0]], [[1e18, 0.0], [1e18, 1.0]]):
        cert = cm.certify_assignment(CostMatrix.from_array(np.array(costs)), np.array([0, 1]))
        assert cert.status != "optimal" and cert.reason == "a cheaper assignment exists"
    tiny = np.array([[2e-300, 5e-324, 1e-300], [1e-300, 1e-300, 2e-300], [1e-300, 0.0, 1e-300]])
    for algorithm in ("auction", "lsa", "sparse-sap", "hungarian"):
        result = solvers.solve(tiny, algorithm, backend="cpu")
        if result.certificate.status == "optimal":
            assert list(result.row_match) == [2, 0, 1], algorithm
    cert = cm.certify_assignment(CostMatrix.from_array(np.array([[2e306, 1e306]])), np.array([0]),
                                 duals={"u": [2e306], "v": [-1e300, -1.79e308]})
    assert cert.status != "optimal"
    top = np.finfo(np.float64).max
    a, step = 1e306, 2.0 ** 975
    packed = prepare_batch(np.array([[[a, a], [a + step, a + step + 1e293]]])).packed
    duals = PackedSolution(np.array([0, 1]), np.array([top, top]), np.array([a - top, a - top]),
                           np.zeros(1, np.int64), np.zeros(1, np.int8))
    assert certify_packed(packed, duals)["reason"][0] != 0


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1))
def test_sparse_rows_find_the_near_ties_their_dense_twin_finds(seed):
    """The row pass of the near-tie search reads each row from its own offset: on sparse costs
    (stored pairs only) it must find the same near-tight columns, counts and cost steps as on the
    same costs held dense (+inf where no pair is stored), serial and multi-core."""
    from solvers.problems import SparseCosts
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    costs = rng.integers(0, 4, (n, m)) * 0.25  # ties, and costs of several binary steps
    costs[rng.random((n, m)) < 0.4] = np.inf
    rows_at, cols_at = np.nonzero(np.isfinite(costs))
    sparse = SparseCosts.from_edges(rows_at, cols_at, costs[rows_at, cols_at], n, m)
    u, v = rng.integers(-2, 3, n) * 0.5, rng.integers(-2, 3, m) * 0.5
    row_match = np.array([int(rng.choice(np.flatnonzero(np.isfinite(costs[i])))) if np.isfinite(costs[i]).any()
                          else -1 for i in range(n)], dtype=np.int64)
    gap = float(rng.choice([0.25, 0.75, 1.5]))
    found = []
    for problem in (CostMatrix.from_array(costs), sparse):
        cr = cm._CostRows(problem)
        for loop in (cm._near_rows_serial, cm._near_rows_parallel):
            count, near = np.zeros(n, dtype=np.int64), np.full((n, cm.NEAR_CAP), -7, dtype=np.int32)
            low = np.empty(n, dtype=np.int64)
            loop(cr.row_ptr, cr.col_ind, cr.dense, cr.held, u, v, row_match, gap, count, near, low)
            kept = [sorted(near[i, :min(count[i], cm.NEAR_CAP)].tolist()) for i in range(n)]
            found.append((count.tolist(), kept, low.tolist()))
    assert all(f == found[0] for f in found), found
