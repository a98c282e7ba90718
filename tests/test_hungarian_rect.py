"""Native rectangular assignment in the GPU Hungarian (issue 13): rows <= columns (a tall matrix
through its transpose), every row augmented, no dummy rows, and duals of the rectangular LP
(u_i + v_j <= c_ij, equality on assigned pairs, v_j <= 0 on the larger side, 0 where unassigned).

The oracle is scipy's linear_sum_assignment, on seeded random wide and tall instances with ties,
forbidden pairs, infeasible patterns and costs from 1e-20 to 1e300, for both variants on the cpu
backend, and on tiny instances under the CUDA simulator (host loop and cooperative loop)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import solvers
from solvers.assignment import hungarian, hungarian_device
from solvers.errors import InfeasibleError
from solvers.problems import CostMatrix
from solvers.targets.cpu import CpuLauncher
from solvers.telemetry import NULL
from test_hungarian import scipy_optimum

VARIANTS = ("tree", "classical")
KINDS = 8


def rectangular_costs(rng: np.random.Generator, trial: int, max_short: int = 8, max_long: int = 24,
                      kinds: int = KINDS, sparse_forbidden: float = 0.85) -> np.ndarray:
    """A wide (even trials) or tall (odd trials) matrix of kind (trial // 2) % kinds."""
    short = int(rng.integers(1, max_short + 1))
    long = int(rng.integers(short + 1, max_long + 1))
    return costs_of_kind(rng, (trial // 2) % kinds, (short, long) if trial % 2 == 0 else (long, short),
                         sparse_forbidden)


def costs_of_kind(rng: np.random.Generator, kind: int, shape: tuple, sparse_forbidden: float = 0.85) -> np.ndarray:
    """Ties, signed integers, reals, large integers, forbidden pairs (kind 5, with ``sparse_forbidden``
    of them, often infeasible), 1e-20 and 1e300 scales, an offset dwarfing the range (8), integers
    near 1e15 with a small range (9). The Hungarian's tests use kinds 0-7, the auction's all ten."""
    if kind == 0:
        return rng.integers(0, 3, shape).astype(float)  # many ties
    if kind == 1:
        return rng.integers(-50, 51, shape).astype(float)
    if kind == 2:
        return rng.normal(0.0, 10.0, shape)
    if kind == 3:
        return rng.integers(0, 10 ** 12, shape).astype(float)  # exact, but past float32
    if kind == 4:
        costs = rng.integers(0, 1000, shape).astype(float)
        costs[rng.random(shape) < 0.3] = np.inf
        return costs
    if kind == 5:
        costs = rng.integers(0, 10, shape).astype(float)
        costs[rng.random(shape) < sparse_forbidden] = np.inf  # often infeasible
        return costs
    if kind == 6:
        return rng.random(shape) * 1e-20
    if kind == 7:
        return rng.integers(1, 6, shape) * rng.choice([1.0, 1.5], size=shape) * 1e300  # ties at 1e300
    if kind == 8:
        return 1e6 + rng.random(shape) * 1e-3  # the offset is taken off first
    return 10.0 ** 15 + rng.integers(0, 40, shape).astype(float)  # large integers, small range


def assert_rectangular_optimum(costs: np.ndarray, result, optimum: float) -> None:
    """Certified with the solver's own duals, scipy's value, every short-side line assigned, the
    rectangular LP's sign conditions, and solved at its own shape (no dummy rows)."""
    short, long = sorted(costs.shape)
    assert result.certified, result.certificate.summary()
    assert "solver duals verified" in result.certificate.details, result.certificate.details
    assert result.value == pytest.approx(optimum, rel=1e-12, abs=0.0)
    assert np.count_nonzero(result.row_match >= 0) == short
    assert result.stats["solved_shape"] == [short, long]
    wide = costs.shape[0] < costs.shape[1]
    larger = np.asarray(result.duals["v"] if wide else result.duals["u"])
    unmatched = (result.col_match if wide else result.row_match) < 0
    assert larger.shape == (long,) and larger.max() <= 0.0 and np.all(larger[unmatched] == 0.0)
    u, v = np.asarray(result.duals["u"]), np.asarray(result.duals["v"])
    allowed = np.isfinite(costs)
    scale = np.abs(costs[allowed]).max()
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.max((u[:, None] + v[None, :] - costs)[allowed]) <= 1e-9 * scale
    pairs = result.pairs()
    slack = costs[pairs[:, 0], pairs[:, 1]] - u[pairs[:, 0]] - v[pairs[:, 1]]
    assert np.abs(slack).max() <= 1e-9 * scale


@pytest.mark.parametrize("variant", VARIANTS)
def test_wide_and_tall_match_scipy_with_rectangular_duals(variant, sweep):
    """Seeded random rectangles of every kind: 4000 under `make test-all`, the first 800 here."""
    rng = np.random.default_rng(1313)
    trials = sweep(4000, 800)
    solved = infeasible = 0
    for trial in range(trials):
        costs = rectangular_costs(rng, trial)
        optimum = scipy_optimum(costs)
        problem = CostMatrix.from_array(costs)
        if optimum is None:
            with pytest.raises(InfeasibleError):
                hungarian.run(problem, "cpu", NULL, variant=variant)
            infeasible += 1
            continue
        result = solvers.solve(problem, "hungarian", backend="cpu", variant=variant)
        try:
            assert_rectangular_optimum(costs, result, optimum)
        except AssertionError as exc:
            raise AssertionError(f"trial {trial}, shape {costs.shape}: {exc}") from exc
        if (trial // 2) % KINDS in (0, 1, 3, 5):  # integer costs: exact
            assert result.value == optimum, trial
        solved += 1
    assert solved >= 0.8 * trials and infeasible >= trials // 40  # both paths exercised


@pytest.mark.parametrize("variant", VARIANTS)
def test_no_dummy_rows_on_the_target(variant):
    """The solver's arrays: one entry per row on the row side, per column on the column side;
    every launch covers at most the columns (a padded square would launch over 9 x 9)."""
    costs = CostMatrix.from_array(np.random.default_rng(2).integers(0, 20, (9, 4)).astype(float))  # tall

    class SizeRecorder(CpuLauncher):
        sizes: list = []

        def launch(self, kernel, size, *args):
            self.sizes.append((kernel.name, size))
            super().launch(kernel, size, *args)

    launcher = SizeRecorder()
    view = hungarian.cost_view(costs)
    assert (view.n_rows, view.n_cols, view.transposed) == (4, 9, True)
    C, _ = hungarian.device_costs(launcher, view, compact_integers=True)
    solver = hungarian_device.HungarianDevice(launcher, C, view, variant, 0.0, NULL)
    solver.solve()
    for name in ("u", "Ar", "Vr", "Pr", "Sr", "row_next", "root_aug", "path_len", "F"):
        assert getattr(solver, name).shape == (4,), name
    for name in ("v", "Ac", "Vc", "Pc", "Sc", "slack", "col_rev"):
        assert getattr(solver, name).shape == (9,), name
    assert np.all(solver.Ar >= 0) and np.count_nonzero(solver.Ac >= 0) == 4
    assert "col_min" not in {name for name, _ in launcher.sizes}  # rows only: v starts at 0
    for name, size in launcher.sizes:
        assert size in ((4, 9), 1) or 0 <= size <= 9, (name, size)
    assert solver.stats["solved_shape"] == [4, 9]


@pytest.mark.parametrize("variant", VARIANTS)
def test_columns_nobody_may_take_stay_free(variant):
    """Wide: a column with no allowed pair is no obstacle (it stays unassigned, v = 0); the square
    problem's column reduction would have called it infeasible."""
    costs = np.array([[1.0, np.inf, 2.0, 7.0], [3.0, np.inf, 1.0, np.inf]])
    result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", variant=variant)
    assert result.value == 2.0 and result.certified and result.duals["v"][1] == 0.0
    tall = solvers.solve(CostMatrix.from_array(costs.T), "hungarian", backend="cpu", variant=variant)
    assert tall.value == 2.0 and tall.certified and tall.duals["u"][1] == 0.0


@pytest.mark.parametrize("costs", [
    np.array([[1.0, np.inf, np.inf, np.inf], [2.0, np.inf, np.inf, np.inf]]),  # Hall: 2 rows, 1 column
    np.array([[np.inf, np.inf, np.inf], [1.0, 2.0, 3.0]]),                   # a row with no allowed pair
    np.array([[1.0, 2.0, np.inf, np.inf, np.inf], [np.inf, 3.0, np.inf, np.inf, np.inf],
              [4.0, np.inf, np.inf, np.inf, np.inf]]),                        # Hall: 3 rows, 2 columns
])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("tall", [False, True])
def test_rows_that_cannot_all_be_assigned_are_infeasible(costs, variant, tall):
    with pytest.raises(InfeasibleError):
        hungarian.run(CostMatrix.from_array(costs.T if tall else costs), "cpu", NULL, variant=variant)


def test_wide_solves_keep_their_shape_at_scale():
    """A 60 x 2000 rectangle (many dual updates and BFS levels, parallel loops) solved at 60 x 2000."""
    rng = np.random.default_rng(17)
    for costs in (rng.integers(0, 50, (60, 2000)).astype(float), rng.random((2000, 60))):
        optimum = scipy_optimum(costs)
        for variant in VARIANTS:
            result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", variant=variant)
            assert_rectangular_optimum(costs, result, optimum)


# ---------------------------------------------------------------------------------------------
# the CUDA kernels under the simulator: tiny rectangles, host loop and cooperative loop

SIM_SHAPES = [(3, 5), (4, 9), (6, 4), (2, 7), (7, 3), (5, 6), (1, 4), (4, 1)]
SIM_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)  # the simulator's scheduler polls its threads; switch often
import numpy as np
import solvers
from solvers.assignment import hungarian
from solvers.errors import InfeasibleError
from solvers.problems import CostMatrix
from solvers.targets import launcher_for
sys.path.insert(0, "tests")
from test_hungarian_rect import KINDS, SIM_SHAPES as SHAPES, costs_of_kind, scipy_optimum
out = []
for trial in range(TRIALS):
    if trial % SHARDS != SHARD:
        continue
    kind = (trial + trial // len(SHAPES)) % KINDS
    costs = costs_of_kind(np.random.default_rng(1000 + trial), kind, SHAPES[trial % len(SHAPES)])
    optimum = scipy_optimum(costs)
    for variant, loop in (("tree", "on"), ("tree", "off"), ("classical", "off")):
        try:
            r = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cudasim", variant=variant,
                              device_loop=loop)
        except InfeasibleError:
            out.append([trial, variant, loop, optimum, None, False, "", "", []])
            continue
        out.append([trial, variant, loop, optimum, r.value, bool(r.certified), r.certificate.details,
                    r.stats["loop"], r.stats["solved_shape"]])
view = hungarian.cost_view(CostMatrix.from_array(np.arange(15.0).reshape(3, 5)))
C, _ = hungarian.device_costs(launcher_for("cudasim"), view, compact_integers=True)
print(json.dumps([str(C.dtype), list(C.shape)]))
print(json.dumps(out))
"""


def test_cuda_kernels_on_rectangles_under_the_simulator(run_cudasim_shards, sweep):
    """Every kind at 3 x 5, 4 x 9, 6 x 4, 2 x 7, 7 x 3, 5 x 6, 1 x 4, 4 x 1, each under the tree variant's
    cooperative and host loops and the classical variant: 48 instances under `make test-all`, 10 here."""
    trials = sweep(48, 10)
    rows = []
    for output in run_cudasim_shards(SIM_CODE.replace("TRIALS", str(trials))):
        lines = output.strip().splitlines()
        rows += json.loads(lines[-1])
        assert json.loads(lines[-2]) == ["float32", [3, 5]]  # small integers stay float32 on the device
    assert len(rows) == 3 * trials
    for trial, variant, loop, optimum, value, certified, details, how, shape in rows:
        where = (trial, variant, loop)
        if optimum is None:
            assert value is None, where
            continue
        assert value == pytest.approx(optimum, rel=1e-12, abs=0.0) and certified, (where, details)
        assert "solver duals verified" in details, where
        assert how == ("cooperative kernel" if loop == "on" else "host"), where
        assert shape == sorted(SIM_SHAPES[trial % len(SIM_SHAPES)]), where
    assert sum(r[3] is not None for r in rows) >= 3 * trials // 2


COOPERATIVE_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)
import numpy as np
import solvers
from solvers.problems import CostMatrix
from scipy.optimize import linear_sum_assignment
rng = np.random.default_rng(8)
out = []
for shape in ((5, 14), (13, 6), (9, 12)):  # several tiles per block, many frontier rows, dual updates
    costs = rng.integers(0, 40, shape).astype(float)  # a few ties, several dual updates
    rows, cols = linear_sum_assignment(costs)
    r = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cudasim", variant="tree", device_loop="on")
    out.append([float(costs[rows, cols].sum()), r.value, bool(r.certified), r.certificate.details, r.stats["loop"],
                r.stats["solved_shape"], r.stats["dual_updates"]])
print(json.dumps(out))
"""


def test_cooperative_loop_on_wider_rectangles_under_the_simulator(run_cudasim):
    rows = json.loads(run_cudasim(COOPERATIVE_CODE).strip().splitlines()[-1])
    assert [r[5] for r in rows] == [[5, 14], [6, 13], [9, 12]]
    for optimum, value, certified, details, loop, _, _ in rows:
        assert value == optimum and certified and "solver duals verified" in details
        assert loop == "cooperative kernel"
    assert sum(r[6] for r in rows) >= 3
