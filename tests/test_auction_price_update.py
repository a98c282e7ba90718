"""The auction's global price update (solvers.assignment.auction_price_update): every object's price
rises by its distance to a free object in whole epsilons (capped), epsilon-CS holds afterwards, and
every target raises the same prices; the whole auction stays optimal with fewer sequential bids."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import csgraph_from_dense, dijkstra

import solvers
from solvers.assignment import auction_device
from solvers.assignment.auction_kernels import N_COUNTERS, UCOUNT
from solvers.assignment.auction_price_update import PRICE_UPDATE, ROUNDS, UPDATE_SLOTS, UPDATES
from solvers.errors import InputError
from solvers.problems import CostMatrix
from solvers.targets import cuda_available, launcher_for

CAP = 6  # levels an update settles in these tests (small, so the cap is reached too)


def epsilon_cs_state(rng, n_rows, n_cols, integer, forbidden):
    """Costs, prices, epsilon and an assignment satisfying epsilon-CS: persons in random order take
    their best remaining object when it is within epsilon of their best over all objects."""
    if integer:
        costs = rng.integers(0, 12, (n_rows, n_cols)).astype(np.float64)
        prices = rng.integers(-5, 6, n_cols).astype(np.float64)
        eps = float(rng.integers(1, 4))
    else:
        costs = rng.random((n_rows, n_cols)) * 10.0 ** rng.integers(-3, 4)
        prices = rng.random(n_cols) * costs.max() * 0.3
        eps = float(costs.max() * rng.uniform(0.02, 0.3))
    if forbidden:
        costs[rng.random(costs.shape) < 0.25] = np.inf
    values = -costs - prices
    owner = np.full(n_cols, -1, np.int32)
    for person in rng.permutation(n_rows):
        best = values[person].max()
        if best == -np.inf or rng.random() < 0.2:
            continue  # stays unassigned
        open_objects = np.flatnonzero(owner < 0)
        choice = open_objects[np.argmax(values[person, open_objects])]
        if values[person, choice] >= best - eps:
            owner[choice] = person
    return costs, prices, eps, owner


def expected_levels(costs, prices, eps, owner, cap):
    """min(distance to a free object, cap) in whole epsilons, by scipy's Dijkstra on the object
    graph: arc j -> j' (k the owner of j) of length floor(((b_kj - p_j) - (b_kj' - p_j')) / eps) + 1."""
    n_cols = len(owner)
    lengths = np.full((n_cols, n_cols), np.inf)
    for j in np.flatnonzero(owner >= 0):
        k = owner[j]
        own = -costs[k, j] - prices[j]
        for other in range(n_cols):
            if other != j and np.isfinite(costs[k, other]):
                units = np.floor((own - (-costs[k, other] - prices[other])) / eps) + 1.0
                lengths[j, other] = max(units, 0.0)
    free = np.flatnonzero(owner < 0)
    # distances to the free objects are distances from them in the reversed graph; zero-length arcs
    # are arcs (null_value=inf keeps them)
    graph = csgraph_from_dense(lengths.T, null_value=np.inf)
    distance = dijkstra(graph, indices=free, min_only=True)
    return np.minimum(distance, cap)


def run_update(backend, costs, prices, eps, owner, cap=CAP, unassigned=1):
    """(the prices after one update, the update's counters); the update does nothing when nobody
    is ``unassigned``."""
    launcher = launcher_for(backend)
    n_cols = costs.shape[1]
    counters = np.zeros(N_COUNTERS, np.int64)
    counters[UCOUNT] = unassigned
    i32 = np.int32
    arrays = [launcher.upload(a) for a in (costs, prices.copy(), owner, counters, np.zeros(n_cols, i32),
                                           np.zeros(n_cols, i32), np.zeros(n_cols), np.zeros(n_cols, i32),
                                           np.zeros(n_cols, i32), np.zeros(UPDATE_SLOTS, np.int64))]
    C, p, a_o, cnt, settled, tentative, own, front_a, front_b, state = arrays
    launcher.launch(PRICE_UPDATE, n_cols, n_cols, C, 1.0, p, eps, a_o, cnt, cap, settled, tentative, own, front_a,
                    front_b, state)
    return launcher.read(p), launcher.read(state)


def assert_epsilon_cs(costs, prices, eps, owner):
    values = -costs - prices
    for j in np.flatnonzero(owner >= 0):
        k = owner[j]
        assert values[k, j] >= values[k].max() - eps * (1 + 1e-12), (k, j)


STATES = [(seed, rows, cols, integer, forbidden)
          for seed, (rows, cols, integer, forbidden) in enumerate(
              [(6, 6, True, False), (7, 9, True, True), (8, 8, False, False), (5, 10, False, True),
               (9, 9, True, True), (4, 7, True, False), (10, 10, False, True), (3, 3, True, False)])]


@pytest.mark.parametrize("seed, rows, cols, integer, forbidden", STATES)
def test_prices_rise_by_the_capped_distance_to_a_free_object(seed, rows, cols, integer, forbidden):
    rng = np.random.default_rng(seed)
    costs, prices, eps, owner = epsilon_cs_state(rng, rows, cols, integer, forbidden)
    assert (owner < 0).any()
    expected = prices + eps * expected_levels(costs, prices, eps, owner, CAP)
    raised, state = run_update("cpu", costs, prices, eps, owner)
    np.testing.assert_allclose(raised, expected, rtol=1e-15, atol=0)
    if integer:
        assert np.array_equal(raised, np.round(raised))  # integer prices stay integers
    assert_epsilon_cs(costs, raised, eps, owner)
    assert state[UPDATES] == 1 and state[ROUNDS] >= 1


def test_many_random_states_on_the_cpu():
    rng = np.random.default_rng(99)
    for trial in range(150):
        rows = int(rng.integers(1, 12))
        cols = rows + int(rng.integers(0, 4))
        costs, prices, eps, owner = epsilon_cs_state(rng, rows, cols, bool(trial % 2), trial % 3 == 0)
        if not (owner < 0).any():
            continue
        expected = prices + eps * expected_levels(costs, prices, eps, owner, CAP)
        raised, _ = run_update("cpu", costs, prices, eps, owner)
        np.testing.assert_allclose(raised, expected, rtol=1e-15, atol=0, err_msg=str(trial))
        assert_epsilon_cs(costs, raised, eps, owner)


def test_nothing_moves_when_nobody_is_unassigned():
    rng = np.random.default_rng(3)
    costs, prices, eps, owner = epsilon_cs_state(rng, 5, 6, True, False)
    raised, state = run_update("cpu", costs, prices, eps, owner, unassigned=0)
    assert np.array_equal(raised, prices) and state[UPDATES] == 0


SIM_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)
sys.path.insert(0, "tests")
import numpy as np
from test_auction_price_update import STATES, epsilon_cs_state, run_update
out = []
for k, (seed, rows, cols, integer, forbidden) in enumerate(STATES):
    if k % SHARDS != SHARD:
        continue
    costs, prices, eps, owner = epsilon_cs_state(np.random.default_rng(seed), rows, cols, integer, forbidden)
    runs = [run_update("cudasim", costs, prices, eps, owner)[0].tolist() for _ in range(3)]
    out.append([k, runs])
print(json.dumps(out))
"""


def test_the_cuda_kernel_under_the_simulator_raises_the_same_prices(run_cudasim_shards):
    """The cooperative kernel (a warp per object, atomics, grid syncs) under the simulator's thread
    switching, three times per state: the cpu's prices every time."""
    rows = [row for output in run_cudasim_shards(SIM_CODE) for row in json.loads(output.strip().splitlines()[-1])]
    assert sorted(r[0] for r in rows) == list(range(len(STATES)))
    for k, runs in rows:
        seed, n_rows, n_cols, integer, forbidden = STATES[k]
        costs, prices, eps, owner = epsilon_cs_state(np.random.default_rng(seed), n_rows, n_cols, integer, forbidden)
        cpu, _ = run_update("cpu", costs, prices, eps, owner)
        for raised in runs:
            assert np.array_equal(np.array(raised), cpu), k


@pytest.mark.parametrize("high", [60, 3000])
def test_the_auction_stays_optimal_with_far_fewer_tail_bids(high, monkeypatch):
    # an update every 100 tail bids at n = 300: about the share of the tail that 400 is at n = 8000
    monkeypatch.setattr(auction_device, "UPDATE_EVERY", 100)
    costs = np.random.default_rng(high).integers(0, high + 1, (300, 300))
    rows, cols = linear_sum_assignment(costs)
    optimum = costs[rows, cols].sum()
    runs = {}
    for updates in ("off", "on"):
        result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu", price_updates=updates)
        assert result.value == optimum and result.certificate.status == "optimal"
        runs[updates] = result.stats
    assert runs["off"]["price_updates"] == 0
    assert runs["on"]["price_updates"] > 0
    # 7154 -> 1874 and 4625 -> 2172 when written (at n = 8000 on a GPU, every 400: 120k -> 15k)
    assert runs["on"]["gs_bids"] < 0.6 * runs["off"]["gs_bids"]


def test_random_instances_with_updates_equal_scipy():
    """Ties, forbidden pairs, rectangles and real costs, with the updates on."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        rows = int(rng.integers(1, 40))
        cols = rows + int(rng.integers(0, 3)) * int(rng.integers(0, 10))
        if trial % 2:
            costs = rng.integers(0, 4 + trial, (rows, cols)).astype(float)
        else:
            costs = rng.random((rows, cols)) * 10.0 ** float(rng.integers(-6, 7))
        if trial % 4 == 1:
            costs[rng.random(costs.shape) < 0.15] = np.inf
        finite = np.where(np.isfinite(costs), costs, 1e30 * max(1.0, np.nanmax(costs[np.isfinite(costs)])))
        r, c = linear_sum_assignment(finite)
        if not np.isfinite(costs[r, c]).all():
            continue  # infeasible with the allowed pairs
        result = solvers.solve(CostMatrix.from_array(costs.T if trial % 3 == 2 else costs), "auction",
                               backend="cpu", price_updates="on")
        assert result.certificate.status in ("optimal", "within")
        assert result.value == pytest.approx(costs[r, c].sum(), rel=1e-9, abs=1e-12 * abs(costs[r, c]).max()), trial


def test_a_bad_price_updates_value_is_refused():
    with pytest.raises(InputError, match="price_updates"):
        solvers.solve(CostMatrix.from_array(np.eye(3)), "auction", backend="cpu", price_updates="sometimes")


@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (the simulator runs the same above)")
def test_the_gpu_raises_the_cpu_prices_on_larger_states():
    """On a GPU: many warps and blocks (the simulator runs one), against the cpu."""
    rng = np.random.default_rng(5)
    for rows, cols, integer, forbidden in ((600, 600, True, False), (500, 700, True, True), (400, 400, False, True)):
        costs, prices, eps, owner = epsilon_cs_state(rng, rows, cols, integer, forbidden)
        cpu, _ = run_update("cpu", costs, prices, eps, owner, cap=32)
        for _ in range(3):
            gpu, _ = run_update("cuda", costs, prices, eps, owner, cap=32)
            if integer:
                assert np.array_equal(gpu, cpu)
            else:  # the GPU may fuse eps * levels + price into one rounding
                np.testing.assert_allclose(gpu, cpu, rtol=1e-13, atol=0)
            assert_epsilon_cs(costs, gpu, eps, owner)


@pytest.mark.parametrize("magnitude", [1e-20, 1e300])
@pytest.mark.parametrize("integer", [False, True])
def test_updates_at_extreme_magnitudes(magnitude, integer):
    """Costs of 1e-20 and 1e300 (and whole numbers times them) with the updates on: scipy's value,
    and a certificate that holds."""
    rng = np.random.default_rng(int(integer))
    base = rng.integers(0, 50, (60, 60)).astype(float) if integer else rng.random((60, 60))
    costs = base * magnitude
    rows, cols = linear_sum_assignment(costs)
    result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu", price_updates="on")
    assert result.certificate.status in ("optimal", "within")
    assert result.value == pytest.approx(costs[rows, cols].sum(), rel=1e-9)
    assert result.stats["price_updates"] > 0
