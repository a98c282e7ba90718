"""Native rectangular assignment in the GPU auction (issue 13): persons (the shorter side) bid for
objects with no dummy persons, and every epsilon phase ends with Bertsekas & Castanon's reverse
auction, so the objects left unassigned are priced at most lambda (the lowest assigned price) and
the result is within n_rows * epsilon of optimal: exactly optimal for integer costs.

The oracle is scipy's linear_sum_assignment, on seeded random wide and tall instances with ties,
forbidden pairs, infeasible patterns, offsets and costs from 1e-20 to 1e300; the returned duals are
checked against the rectangular LP's conditions here, independently of the certificate; the
reverse auction's invariants are checked after every phase; the CUDA kernels (Gauss-Seidel tails
and Jacobi rounds, forward and reverse) run under the simulator on tiny rectangles and must agree
with the cpu loops."""
from __future__ import annotations

import json

import numpy as np
import pytest

import solvers
from solvers.assignment import auction, auction_device, hungarian
from solvers.errors import InfeasibleError
from solvers.problems import CostMatrix
from solvers.targets.cpu import CpuLauncher
from solvers.telemetry import NULL, Recorder
from test_hungarian import scipy_optimum
from test_hungarian_rect import costs_of_kind, rectangular_costs

KINDS = 10  # every kind of test_hungarian_rect.costs_of_kind
INTEGER_KINDS = (0, 1, 3, 4, 5, 9)
SPARSE_FORBIDDEN = 0.8  # kind 5's share of forbidden pairs here


def assert_rectangular_duals(costs: np.ndarray, result) -> None:
    """The returned duals, checked here: the larger side's potentials <= 0 and exactly 0 where
    unassigned, u_i + v_j <= c_ij on allowed pairs, assigned pairs tight within epsilon, and the
    dual objective within n_rows * epsilon of the cost (all up to rounding at the data's scale)."""
    short, long = sorted(costs.shape)
    wide = costs.shape[0] < costs.shape[1]
    u, v = np.asarray(result.duals["u"], dtype=float), np.asarray(result.duals["v"], dtype=float)
    assert u.shape == (costs.shape[0],) and v.shape == (costs.shape[1],)
    larger = v if wide else u
    unmatched = (result.col_match if wide else result.row_match) < 0
    assert larger.max() <= 0.0 and np.all(larger[unmatched] == 0.0)
    allowed = np.isfinite(costs)
    scale = np.abs(costs[allowed]).max() * 1e-9
    eps = result.stats["epsilon"]
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.max((u[:, None] + v[None, :] - costs)[allowed]) <= scale
    pairs = result.pairs()
    slack = costs[pairs[:, 0], pairs[:, 1]] - u[pairs[:, 0]] - v[pairs[:, 1]]
    assert slack.min() >= -scale and slack.max() <= eps + scale
    assert result.value - (u.sum() + v.sum()) <= short * eps + short * scale


def assert_solved_natively(costs: np.ndarray, result) -> None:
    short, long = sorted(costs.shape)
    assert result.stats["solved_shape"] == [short, long]
    assert np.count_nonzero(result.row_match >= 0) == short


def test_wide_and_tall_match_scipy(sweep):
    """Seeded random rectangles of every kind: 3000 under `make test-all`, the first 500 here.
    Integer costs: certified optimal by the solver's own duals, scipy's value exactly. Real costs:
    certified, within the claim, and scipy's value up to n_rows * epsilon (the default epsilon is
    2.5e-10 of the range)."""
    rng = np.random.default_rng(1992)
    trials = sweep(3000, 500)
    solved = infeasible = 0
    for trial in range(trials):
        costs = rectangular_costs(rng, trial, kinds=KINDS, sparse_forbidden=SPARSE_FORBIDDEN)
        kind = (trial // 2) % KINDS
        optimum = scipy_optimum(costs)
        problem = CostMatrix.from_array(costs)
        if optimum is None:
            with pytest.raises(InfeasibleError):
                auction.run(problem, "cpu", NULL)
            infeasible += 1
            continue
        result = solvers.solve(problem, "auction", backend="cpu")
        where = f"trial {trial}, kind {kind}, shape {costs.shape}"
        assert result.certified, (where, result.certificate.summary(), result.certificate.details)
        details = result.certificate.details
        if kind in INTEGER_KINDS:  # real costs leave epsilon-optimal prices; the certificate may derive its own
            assert "solver duals rejected" not in details and "solver duals" in details, (where, details)
        assert_solved_natively(costs, result)
        assert_rectangular_duals(costs, result)
        short = min(costs.shape)
        if kind in INTEGER_KINDS:
            assert result.certificate.optimal and result.value == optimum, where
        else:
            spread = np.ptp(costs) if kind != 8 else 1e-3
            assert abs(result.value - optimum) <= short * result.stats["epsilon"] + 1e-12 * abs(optimum), where
            assert result.stats["epsilon"] <= 2.5e-10 * spread * 1.01 or result.stats["epsilon"] <= 1e-13 * np.abs(costs).max() * 2
        solved += 1
    assert solved >= 0.8 * trials and infeasible >= trials // 40  # both paths exercised


def test_real_costs_with_a_small_epsilon_equal_scipy_up_to_the_bound():
    rng = np.random.default_rng(33)
    for trial in range(60):
        shape = (int(rng.integers(2, 15)), int(rng.integers(16, 60)))
        costs = rng.normal(0.0, 3.0, shape) * 10.0 ** float(rng.integers(-5, 6))
        if trial % 2:
            costs = costs.T
        optimum = scipy_optimum(costs)
        eps = 1e-9 * np.ptp(costs)
        result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu", eps=eps)
        assert result.stats["epsilon"] == eps and result.certified
        assert result.certificate.bound == pytest.approx(max(shape) * eps)
        assert 0.0 <= result.value - optimum + 1e-12 * abs(optimum) and result.value - optimum <= min(shape) * eps
        assert_rectangular_duals(costs, result)


def test_epsilon_runs_on_rectangles_stay_within_n_rows_epsilon():
    """Large epsilons, with and without scaling: the cost is within n_rows * epsilon (tighter than
    the max(rows, cols) * epsilon the certificate is told), the duals bound it, and the
    certificate's stated gap is the true one."""
    rng = np.random.default_rng(4243)
    suboptimal = 0
    for trial in range(120):
        shape = (int(rng.integers(3, 12)), int(rng.integers(13, 30)))
        costs = rng.integers(0, 20, shape).astype(float) if trial % 2 else rng.random(shape) * 5
        if trial % 3 == 0:
            costs[rng.random(shape) < 0.2] = np.inf
        if trial % 4 >= 2:
            costs = costs.T
        optimum = scipy_optimum(costs)
        if optimum is None:
            continue
        eps = float(rng.choice([0.05, 0.3, 0.9, 2.0]))
        scaling = "off" if trial % 5 else "on"
        result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu", eps=eps, scaling=scaling)
        true_gap = result.value - optimum
        assert -1e-9 <= true_gap <= min(shape) * eps + 1e-9, trial
        assert_rectangular_duals(costs, result)
        cert = result.certificate
        assert result.certified and cert.bound == pytest.approx(max(shape) * eps)
        assert cert.gap == pytest.approx(true_gap, abs=cert.tolerance + 1e-9) or cert.optimal, trial
        suboptimal += true_gap > 1e-9
    assert suboptimal > 10  # the epsilon is large enough to matter


def test_reverse_auction_invariants_after_every_phase():
    """After each phase (scaled units): every person holds an object, every pair is eps-CS, the
    assigned objects are priced at least lambda and the unassigned ones at most lambda, with
    lambda the lowest assigned price. Integer costs, so every comparison is exact."""
    rng = np.random.default_rng(7)
    checked = 0
    for trial in range(40):
        shape = (int(rng.integers(2, 10)), int(rng.integers(11, 40)))
        costs = rng.integers(0, 6 if trial % 2 else 300, shape).astype(float)
        if trial % 3 == 0:
            costs[rng.random(shape) < 0.3] = np.inf
            if scipy_optimum(costs) is None:
                continue
        view = hungarian.cost_view(CostMatrix.from_array(costs))
        launcher = CpuLauncher()
        C, _ = hungarian.device_costs(launcher, view, compact_integers=True)
        scale, epsilons, cap = auction.epsilon_schedule(view, 0.0, "on", 5.0)
        solver = auction_device.AuctionDevice(launcher, C, view, scale, cap, NULL)
        benefit = -scale * costs
        for k, eps in enumerate(epsilons):
            solver.phase(eps, first=(k == 0))
            prices, a_p, a_o = solver.prices.copy(), solver.a_p.copy(), solver.a_o.copy()
            lam = solver.lam[0]
            assert np.all(a_p >= 0) and np.all(a_o[a_p] == np.arange(shape[0]))
            assert lam == prices[a_p].min()
            assert np.all(prices[a_o < 0] <= lam), (trial, k)
            values = benefit - prices[None, :]
            held = values[np.arange(shape[0]), a_p]
            assert np.all(held >= values.max(axis=1) - eps), (trial, k)  # eps-CS
            checked += 1
        assert solver.stats["reverse_rounds"] > 0 or np.all(solver.prices[solver.a_o < 0] <= solver.lam[0])
    assert checked > 150  # phases checked (176 with this seed): the schedule has several per instance


def test_no_dummy_persons_on_the_target():
    """The solver's arrays: one entry per person on the person side, per object on the object side;
    no launch covers more than the objects (a padded square would launch over 9 x 9)."""
    costs = CostMatrix.from_array(np.random.default_rng(2).integers(0, 20, (9, 4)).astype(float))  # tall

    class SizeRecorder(CpuLauncher):
        sizes: list = []

        def launch(self, kernel, size, *args):
            self.sizes.append((kernel.name, size))
            super().launch(kernel, size, *args)

    for threshold in (auction_device.GS_THRESHOLD, 0):  # the tails, then Jacobi rounds only (patched per pass)
        launcher = SizeRecorder()
        launcher.sizes = []
        view = hungarian.cost_view(costs)
        assert (view.n_rows, view.n_cols, view.transposed) == (4, 9, True)
        C, _ = hungarian.device_costs(launcher, view, compact_integers=True)
        scale, epsilons, cap = auction.epsilon_schedule(view, 0.0, "on", 5.0)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(auction_device, "GS_THRESHOLD", threshold)
            solver = auction_device.AuctionDevice(launcher, C, view, scale, cap, NULL)
            for k, e in enumerate(epsilons):
                solver.phase(e, first=(k == 0))
            solver.finish()
        for name in ("a_p", "bid_obj", "bid_val", "U", "profit", "person_top", "person_win"):
            assert getattr(solver, name).shape == (4,), name
        for name in ("prices", "a_o", "obj_top", "obj_win", "flags", "V", "V_next", "rbid_person", "rbid_price",
                     "rbid_offer"):
            assert getattr(solver, name).shape == (9,), name
        assert np.all(solver.a_p >= 0) and np.count_nonzero(solver.a_o >= 0) == 4
        assert solver.stats["solved_shape"] == [4, 9]
        names = {name for name, _ in launcher.sizes}
        assert {"reverse_start", "settle_free_prices"} <= names
        assert ("reverse_jacobi_rounds" in names) == (threshold == 0)
        assert ("reverse_gs_tail" in names) == (threshold > 0)
        for name, size in launcher.sizes:
            assert 0 <= size <= 9, (name, size)
    result = solvers.solve(costs, "auction", backend="cpu")
    assert result.stats["solved_shape"] == [4, 9] and result.certified


def test_objects_nobody_may_take_stay_free():
    """Wide: a column with no allowed pair is no obstacle (unassigned, potential 0)."""
    costs = np.array([[1.0, np.inf, 2.0, 7.0], [3.0, np.inf, 1.0, np.inf]])
    for matrix in (costs, costs.T):
        result = solvers.solve(CostMatrix.from_array(matrix), "auction", backend="cpu")
        assert result.value == 2.0 and result.certified and result.certificate.optimal
        assert_rectangular_duals(matrix, result)


@pytest.mark.parametrize("costs", [
    np.array([[1.0, np.inf, np.inf, np.inf], [2.0, np.inf, np.inf, np.inf]]),  # Hall: 2 rows, 1 column
    np.array([[np.inf, np.inf, np.inf], [1.0, 2.0, 3.0]]),                   # a row with no allowed pair
    np.array([[1.0, 2.0, np.inf, np.inf, np.inf], [np.inf, 3.0, np.inf, np.inf, np.inf],
              [4.0, np.inf, np.inf, np.inf, np.inf]]),                        # Hall: 3 rows, 2 columns
])
@pytest.mark.parametrize("tall", [False, True])
def test_rows_that_cannot_all_be_assigned_are_infeasible(costs, tall):
    with pytest.raises(InfeasibleError):
        auction.run(CostMatrix.from_array(costs.T if tall else costs), "cpu", NULL)


def test_wide_solves_at_scale_keep_their_shape():
    """A 60 x 2000 integer and a 2000 x 60 real rectangle (parallel loops, Jacobi rounds both ways)."""
    rng = np.random.default_rng(17)
    for costs in (rng.integers(0, 50, (60, 2000)).astype(float), rng.random((2000, 60))):
        optimum = scipy_optimum(costs)
        result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu")
        assert result.certified and abs(result.value - optimum) <= 60 * result.stats["epsilon"]
        assert_solved_natively(costs, result)
        assert_rectangular_duals(costs, result)


@pytest.mark.parametrize("shape", [(200, 320), (320, 200)])
def test_the_reverse_jacobi_rounds_hand_over_to_the_tail(shape):
    """More than GS_THRESHOLD objects overpriced after a phase: the reverse Jacobi rounds stop at the
    threshold and the one-block tail takes the rest. The rounds' own compaction clears the flags the
    host's compaction after the launch reads; before the cpu form flagged its leftovers again, the
    tail found none, and 14 of these 24 solves ended certified non-optimal."""
    for seed in range(6):
        costs = np.random.default_rng(seed).integers(0, shape[0] + 1, shape).astype(float)
        optimum = scipy_optimum(costs)
        for factor in (20.0, 5.0):
            result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu", eps_factor=factor)
            assert result.certified and result.value == optimum, (seed, factor, result.certificate.summary())
    assert result.stats["reverse_jacobi_rounds"] > 0 and result.stats["reverse_gs_bids"] > 0


def test_rectangular_telemetry_reports_the_reverse_auction():
    costs = np.random.default_rng(3).integers(0, 500, (40, 120)).astype(float)
    recorder = Recorder(snapshot_interval=0.0)
    result = solvers.solve(CostMatrix.from_array(costs), "auction", backend="cpu", observer=recorder)
    reverse = [s for s in recorder.iterations if s.phase == "reverse"]
    assert reverse and len(reverse) == result.stats["reverse_rounds"]
    assert reverse[-1].active == 0 and reverse[-1].extra["assigned"] == 40
    assert set(s.phase for s in recorder.iterations) <= set(solvers.algorithms()["auction"].phases)
    completed = [s for s in recorder.iterations if s.phase == "eps-scale" and "dual_objective" in s.extra]
    optimum = scipy_optimum(costs)
    assert completed and all(s.extra["dual_objective"] <= optimum + 1e-9 for s in completed)
    labels = [s for s in recorder.snapshots if s.kind == "labels"]
    assert labels


# ---------------------------------------------------------------------------------------------
# the CUDA kernels under the simulator: tiny rectangles, tails and Jacobi rounds

SIM_SHAPES = [(3, 5), (4, 9), (6, 4), (2, 7), (7, 3), (5, 6)]
SIM_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)  # the simulator's scheduler polls its threads; switch often
import numpy as np
from solvers.assignment import auction, auction_device
from solvers.certify import certify
from solvers.errors import InfeasibleError
from solvers.problems import CostMatrix
from solvers.telemetry import NULL
sys.path.insert(0, "tests")
from test_auction_rect import SIM_SHAPES as SHAPES, costs_of_kind, scipy_optimum
KINDS_HERE = (0, 1, 2, 4, 3, 6)  # ties, signed, real, forbidden, past float32, 1e-20
out = []
DEFAULT_THRESHOLD = auction_device.GS_THRESHOLD  # the loop below leaves the module's value at 0
for trial in range(TRIALS):
    if trial % SHARDS != SHARD:
        continue
    kind = KINDS_HERE[(trial + trial // len(SHAPES)) % len(KINDS_HERE)]
    costs = costs_of_kind(np.random.default_rng(2000 + trial), kind, SHAPES[trial % len(SHAPES)])
    problem = CostMatrix.from_array(costs)
    row = [trial, kind, scipy_optimum(costs)]
    for threshold in (DEFAULT_THRESHOLD, 0):  # Gauss-Seidel tails; Jacobi rounds only
        auction_device.GS_THRESHOLD = threshold
        for backend in ("cudasim", "cpu"):
            try:
                s = auction.run(problem, backend, NULL, price_updates="on" if trial % 2 else "off")
            except InfeasibleError:
                row.append(None)
                continue
            row.append([s.value, s.row_match.tolist(), s.duals["u"].tolist(), s.duals["v"].tolist(),
                        bool(certify(problem, s).certified), s.stats["solved_shape"],
                        s.stats["reverse_jacobi_rounds"], s.stats["reverse_gs_launches"]])
    out.append(row)
print(json.dumps(out))
"""


def test_cuda_kernels_on_rectangles_under_the_simulator(run_cudasim_shards, sweep):
    """3 x 5, 4 x 9, 6 x 4, 2 x 7, 7 x 3, 5 x 6 of several kinds, with the Gauss-Seidel tails and
    with Jacobi rounds only: the simulator's kernels give the cpu loops' assignment and duals
    (exactly for integers), certified; 36 instances under `make test-all`, 8 here."""
    trials = sweep(36, 6)
    rows = [row for output in run_cudasim_shards(SIM_CODE.replace("TRIALS", str(trials)))
            for row in json.loads(output.strip().splitlines()[-1])]
    assert len(rows) == trials
    reverse_rounds = {"jacobi": 0, "tail": 0}
    for trial, kind, optimum, sim_tail, cpu_tail, sim_jacobi, cpu_jacobi in rows:
        if optimum is None:
            assert sim_tail is cpu_tail is sim_jacobi is cpu_jacobi is None, trial
            continue
        for sim, cpu in ((sim_tail, cpu_tail), (sim_jacobi, cpu_jacobi)):
            value, match, u, v, certified, shape, _, _ = sim
            assert certified and shape == sorted(SIM_SHAPES[trial % len(SIM_SHAPES)]), trial
            assert value == pytest.approx(optimum, rel=1e-9, abs=1e-30), (trial, kind)
            assert match == cpu[1], trial
            if kind in (2, 6):  # real costs: the same steps, to the last bits of the prices
                assert np.allclose(u, cpu[2], rtol=1e-12, atol=0) and np.allclose(v, cpu[3], rtol=1e-12, atol=0)
            else:
                assert sim == cpu, trial
        reverse_rounds["jacobi"] += sim_jacobi[6]
        reverse_rounds["tail"] += sim_tail[7]
        assert sim_jacobi[7] == 0 and sim_tail[6] == 0, trial
    assert reverse_rounds["jacobi"] > 0 and reverse_rounds["tail"] > 0  # both reverse paths ran
    assert sum(r[2] is not None for r in rows) >= trials // 2
