"""The auction on sparse costs (issue 14): only the stored pairs are allowed; squares and rectangles
both ways, integers (exact) and reals at any magnitude, ties; against scipy's sparse optimum on many
random instances, on the cpu, under the simulator (the same bids as the cpu) and on a GPU; an
infeasible pattern refused in one line; the warm-up compiles what a larger solve runs."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

import solvers
from solvers.assignment import auction, auction_device, auction_kernels
from solvers.errors import InfeasibleError
from solvers.problems import SparseCosts
from solvers.targets import cuda_available
from test_hungarian import compile_for_sm90  # noqa: F401 (a fixture)


def random_sparse(rng, trial: int, max_side: int = 60) -> SparseCosts:
    """Rows with 1-6 random columns plus a planted complete assignment; costs by trial: small
    integers (ties), wide integers, reals from 1e-20 to 1e300 in scale, negative reals."""
    n, m = int(rng.integers(1, max_side)), int(rng.integers(1, max_side))
    if trial % 3 == 0:
        m = n
    degree = int(rng.integers(1, 7))
    rows = np.repeat(np.arange(n), min(degree, m))
    cols = np.concatenate([rng.choice(m, min(degree, m), replace=False) for _ in range(n)])
    k = min(n, m)
    planted_rows = np.arange(k) if n <= m else rng.permutation(n)[:k]
    planted_cols = rng.permutation(m)[:k] if n <= m else np.arange(k)
    rows, cols = np.concatenate([rows, planted_rows]), np.concatenate([cols, planted_cols])
    _, first = np.unique(rows * m + cols, return_index=True)
    rows, cols = rows[first], cols[first]
    kind = trial % 4
    if kind == 0:
        costs = rng.integers(0, 4, rows.size).astype(float)  # many ties
    elif kind == 1:
        costs = rng.integers(-10 ** 9, 10 ** 9, rows.size).astype(float)
    elif kind == 2:
        costs = rng.random(rows.size) * 10.0 ** float(rng.choice([-20, 0, 300]))
    else:
        costs = rng.normal(0, 5, rows.size)
    return SparseCosts.from_edges(rows, cols, costs, n, m)


def scipy_sparse_optimum(problem: SparseCosts) -> float:
    """scipy's LAPJVsp on costs shifted to be positive (it drops explicit zeros), the value on ours."""
    shifted = problem.cost - problem.cost.min() + 1.0 if problem.cost.size else problem.cost
    matrix = csr_matrix((shifted, problem.col_ind, problem.row_ptr), shape=problem.shape)
    rows, cols = min_weight_full_bipartite_matching(matrix)
    return float(problem.to_sparse()[rows, cols].sum())


def check_optimal(problem: SparseCosts, result) -> None:
    optimum = scipy_sparse_optimum(problem)
    assert result.certified, result.certificate
    scale = max(1.0, float(np.abs(problem.cost).max())) * min(problem.shape)
    if problem.is_integer and scale < 2.0 ** 50:  # exact sums
        assert result.value == optimum
    else:
        assert abs(result.value - optimum) <= 1e-9 * scale
    matched = np.flatnonzero(result.row_match >= 0)
    assert matched.size == min(problem.shape)
    stored = set(zip(np.repeat(np.arange(problem.n_rows), np.diff(problem.row_ptr)).tolist(), problem.col_ind.tolist()))
    assert all((int(i), int(result.row_match[i])) in stored for i in matched)


def test_the_auction_declares_sparse_costs():
    algo = solvers.algorithms()["auction"]
    assert SparseCosts in algo.accepts and "cuda" in algo.backends


def test_sparse_costs_match_scipy_on_random_instances(sweep):
    rng = np.random.default_rng(8)
    for trial in range(sweep(400, 60)):
        problem = random_sparse(rng, trial)
        result = solvers.solve(problem, "auction", backend="cpu")
        check_optimal(problem, result)
        assert result.stats["solved_shape"] == sorted(problem.shape)


@pytest.mark.parametrize("options", [{"tail": "off"}, {"price_updates": "on"}, {"scaling": "off"},
                                     {"eps_factor": 3.0}])
def test_sparse_costs_under_every_option(options):
    rng = np.random.default_rng(9)
    for trial in range(16):
        problem = random_sparse(rng, trial, max_side=40)
        check_optimal(problem, solvers.solve(problem, "auction", backend="cpu", **options))


def test_nearest_neighbour_candidates_match_sparse_sap():
    """The knn route's sparse problems: each point's 8 nearest of a moved, shuffled copy (real
    distances, and the same in whole micrometres; square, and with 100 new points: the reverse
    auction), more persons than the tail takes."""
    from scipy.spatial import cKDTree
    rng = np.random.default_rng(3)
    a = rng.random((3000, 3))
    moved = a + rng.normal(0, 0.002, a.shape)
    for extra in (0, 100):
        b = np.vstack([moved, rng.random((extra, 3))])[rng.permutation(3000 + extra)]
        d, j = cKDTree(b).query(a, k=8)
        for costs in (d, np.round(d * 1e6)):
            problem = SparseCosts.from_edges(np.repeat(np.arange(3000), 8), j.ravel(), costs.ravel(), 3000,
                                             3000 + extra)
            result = solvers.solve(problem, "auction", backend="cpu")
            reference = solvers.solve(problem, "sparse-sap", backend="cpu")
            assert result.certified and result.value == pytest.approx(reference.value, rel=1e-12, abs=0)
            assert result.stats["jacobi_rounds"] > 0


def test_an_infeasible_pattern_is_refused_in_one_line(monkeypatch):
    """Rows 0-2 share columns 0 and 1 (Hall's condition fails) while every row and column has
    pairs, so only the matching check can tell: it runs once the auction has run long."""
    monkeypatch.setattr(auction_device, "FEASIBILITY_AFTER", 4)
    n = 30
    rows = [0, 0, 1, 1, 2, 2] + list(range(3, n)) + [3]
    cols = [0, 1, 0, 1, 0, 1] + list(range(2, n - 1)) + [n - 1]
    problem = SparseCosts.from_edges(rows, cols, np.arange(len(rows), dtype=float), n, n)
    with pytest.raises(InfeasibleError, match="no complete assignment of 30 pairs") as caught:
        solvers.solve(problem, "auction", backend="cpu")
    assert "\n" not in str(caught.value)
    # a row without pairs, or fewer columns with pairs than rows: refused before any bid
    few = SparseCosts.from_edges([0, 1, 2], [0, 0, 1], [1.0, 2.0, 3.0], 3, 5)
    with pytest.raises(InfeasibleError):
        solvers.solve(few, "auction", backend="cpu")


def test_sparse_kernels_compile_for_sm90(compile_for_sm90, sweep):
    """The narrow sparse steps compile for the H100/H200 for float64 costs, and under `make
    test-all` for float32 ones (integers below 2^24) too."""
    from numba import types
    from test_auction import recorded_signatures_for
    kernels, signatures = recorded_signatures_for(sparse=True)
    assert {k.name for k in auction_kernels.SPARSE_KERNELS} <= set(signatures)
    for name, signature in signatures.items():
        if name == "compact":
            continue
        for cost in (types.float64, types.float32)[:sweep(2, 1)]:
            sig = tuple(types.Tuple(tuple(types.Array(cost, 1, "C") if t.dtype in (types.float32, types.float64) else t
                                          for t in s)) if isinstance(s, types.BaseTuple) else s for s in signature)
            assert ".target sm_90" in compile_for_sm90(kernels[name].cuda.py_func, sig), name


SIM_CODE = r"""
import sys, json
import numpy as np
sys.path.insert(0, "tests")
from test_auction_sparse import random_sparse
from solvers.assignment import auction
from solvers.telemetry import NULL
rng = np.random.default_rng(5)
out = []
for trial in range(TRIALS):
    problem = random_sparse(rng, trial, max_side=9)
    if trial % SHARDS != SHARD:
        continue
    runs = [auction.run(problem, backend, NULL) for backend in ("cudasim", "cpu")]
    out.append([trial] + [[s.value, s.row_match.tolist(), s.stats["gs_bids"]] for s in runs])
print(json.dumps(out))
"""


def test_the_simulator_bids_as_the_cpu_on_sparse_costs(run_cudasim_shards, sweep):
    trials = sweep(40, 4)
    rows = [row for output in run_cudasim_shards(SIM_CODE.replace("TRIALS", str(trials)))
            for row in json.loads(output.strip().splitlines()[-1])]
    assert len(rows) == trials
    for trial, sim, cpu in rows:
        assert sim == cpu, trial


@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")
def test_sparse_costs_on_a_gpu_match_scipy_every_run():
    rng = np.random.default_rng(10)
    for trial in range(120):
        problem = random_sparse(rng, trial, max_side=400 if trial % 10 == 0 else 60)
        for _ in range(3 if trial % 4 == 0 else 1):  # the parallel tail's bids interleave: repeat
            check_optimal(problem, solvers.solve(problem, "auction", backend="cuda"))


def test_the_warm_up_of_sparse_costs_passes_the_tail_sizes_with_the_same_cost_type():
    """A sparse problem past the auction's tail size warms up on a tiny problem and on one of a row
    more than that size (so its Jacobi rounds compile there, not in the timed solve), with real
    costs for real costs (a GPU compiles float64 costs apart from integers' float32)."""
    from solvers.warmup import warmup_problems
    rng = np.random.default_rng(2)
    for n, passed in ((50, None), (200, auction.TAIL_BELOW), (3000, auction.PARALLEL_TAIL_BELOW)):
        for integer in (True, False):
            costs = rng.integers(1, 9, n * 4).astype(float) if integer else rng.random(n * 4)
            problem = SparseCosts.from_edges(np.repeat(np.arange(n), 4), np.arange(n * 4) % (n + 5), costs, n, n + 5)
            problems = warmup_problems(problem, "auction")
            assert len(problems) == (1 if passed is None else 2)
            if passed is not None:
                assert min(problems[1].shape) == passed + 1 and problems[1].n_cols > problems[1].n_rows
            assert all(p.is_integer == integer for p in problems)


def test_a_dense_solver_on_large_sparse_costs_is_refused_in_one_line(tmp_path, capsys):
    """20,000 x 20,000 sparse costs would be 3.2 GB as a dense matrix (a million points' k-NN pairs,
    8 TB): the Hungarian is refused before it allocates anything, naming the file, exit 2."""
    from solvers.cli import main
    from solvers.errors import InputError
    from solvers.formats import save
    problem = solvers.generate("sparse-lap", rows=20_000, cols=20_000, degree=3, seed=1)
    with pytest.raises(InputError, match="too many to hold for a dense solver: use sparse-sap, lapjvsp or the "):
        solvers.solve(problem, "hungarian", backend="cpu")
    with pytest.raises(InputError, match="in a dense file: write .mtx or .tsv"):  # nothing written
        save(problem, tmp_path / "big.npy")
    assert not (tmp_path / "big.npy").exists()
    path = tmp_path / "big.mtx"
    save(problem, path)
    capsys.readouterr()
    assert main(["solve", str(path), "--algo", "hungarian", "--backend", "cpu"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "big.mtx" in err and "400,000,000 entries" in err


@pytest.mark.parametrize("outlier,kinds", [(1e3, (False, True)), (1e9, (False, True)), (1e12, (False, True)),
                                           (1e15, (True,))])
def test_one_outlier_cost_does_not_loosen_the_default_answer(outlier, kinds):
    """Costs in [0, 1] (or integers up to 1000) and one pair costing ``outlier``: the default final
    epsilon follows the cost range, which the outlier inflates (1e9 ended 7% above the optimum,
    "certified" within its claim of n * epsilon = 12.5; integers with one of 1e15 98%, found by a
    newcomer pass); the phases now continue until the prices' duality gap is small next to the
    answer. Sparse and dense, the optimum exactly. (Reals with an outlier 1e15 times the others are
    not yet: a person with one allowed pair raises its price by the whole range, and the prices
    that large stop epsilon short of the others' scale.)"""
    from scipy.optimize import linear_sum_assignment
    rng = np.random.default_rng(int(np.log10(outlier)))
    for integer in kinds:
        n = 50
        rows = np.repeat(np.arange(n), 6)
        cols = np.concatenate([rng.choice(n, 6, replace=False) for _ in range(n)])
        rows, cols = np.concatenate([rows, np.arange(n)]), np.concatenate([cols, rng.permutation(n)])
        _, first = np.unique(rows * n + cols, return_index=True)
        rows, cols = rows[first], cols[first]
        costs = rng.integers(0, 1000, rows.size).astype(float) if integer else rng.random(rows.size)
        costs[0] = outlier
        problem = SparseCosts.from_edges(rows, cols, costs, n, n)
        dense = np.where(np.isfinite(problem.to_dense().costs), problem.to_dense().costs, 1e30)
        r, c = linear_sum_assignment(dense)
        optimum = float(problem.to_dense().costs[r, c].sum())
        for solved in (problem, problem.to_dense()):
            result = solvers.solve(solved, "auction", backend="cpu")
            assert result.certified and result.value == pytest.approx(optimum, rel=1e-12), (integer, outlier)


def test_a_bad_sparse_cost_says_how_sparse_costs_forbid_a_pair():
    """NaN in sparse costs: the hint is the sparse way to forbid a pair (it said 'use inf', which
    sparse costs then refuse; newcomer pass)."""
    from solvers.errors import InputError
    with pytest.raises(InputError, match=r"NaN \(leave a forbidden pair out\)"):
        SparseCosts.from_edges([0], [0], [float("nan")], 1, 1)
    with pytest.raises(InputError, match="must be finite"):
        SparseCosts.from_edges([0], [0], [float("inf")], 1, 1)
