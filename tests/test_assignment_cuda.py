"""On a real GPU only: the CUDA backend of the Hungarian (both variants, with and without the
cooperative device loop) and of the auction: 300 random instances of every hard kind each, and 100
repeated runs on one instance each, every run certified and equal to scipy's optimum; tracking on
the GPU."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import solvers
from solvers.errors import InfeasibleError
from solvers.problems import CostMatrix
from solvers.targets import cuda_available
from test_hungarian import random_costs, scipy_optimum

pytestmark = pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")

CONFIGS = [("hungarian", {"variant": "tree", "device_loop": "on"}),
           ("hungarian", {"variant": "tree", "device_loop": "off"}),
           ("hungarian", {"variant": "classical"}),
           ("auction", {})]


def instances():
    rng = np.random.default_rng(2024)
    integer = rng.integers(0, 500, (400, 400)).astype(float)
    series = solvers.generate("particles", n=400, frames=2, persistence=0.9, seed=7)
    points = cdist(series.frames[0], series.frames[1])
    rect = rng.integers(-100, 100, (150, 230)).astype(float)
    rect[rng.random(rect.shape) < 0.2] = np.inf
    return {"integer": integer, "points": points, "rectangular-forbidden": rect}


@pytest.mark.parametrize("algorithm,options", CONFIGS, ids=lambda x: str(x))
def test_random_instances_match_scipy(algorithm, options):
    """Ties, negative integers, reals, wide integer ranges, forbidden pairs; rectangular both ways;
    sides up to 60 (many frontier rows, several blocks)."""
    rng = np.random.default_rng(31)
    solved = 0
    for trial in range(300):
        costs = random_costs(rng, trial, max_side=61)
        optimum = scipy_optimum(costs)
        problem = CostMatrix.from_array(costs)
        if optimum is None:
            with pytest.raises(InfeasibleError):
                solvers.solve(problem, algorithm, backend="cuda", **options)
            continue
        result = solvers.solve(problem, algorithm, backend="cuda", **options)
        assert result.backend == "cuda" and result.certified, (trial, result.certificate.summary())
        assert result.value == pytest.approx(optimum, rel=1e-9, abs=1e-6), trial
        solved += 1
    assert solved >= 200


@pytest.mark.parametrize("algorithm,options", CONFIGS, ids=lambda x: str(x))
@pytest.mark.parametrize("name", ["integer", "points", "rectangular-forbidden"])
def test_repeated_runs_are_all_certified(algorithm, options, name):
    costs = instances()[name]
    rows, cols = linear_sum_assignment(costs)
    optimum = float(costs[rows, cols].sum())
    problem = CostMatrix.from_array(costs)
    repeats = 100 if name == "integer" else 20
    loops = set()
    for _ in range(repeats):
        result = solvers.solve(problem, algorithm, backend="cuda", **options)
        assert result.backend == "cuda"
        assert result.certified, result.certificate.summary()
        assert result.value == pytest.approx(optimum, rel=1e-9, abs=1e-6)
        loops.add(result.stats.get("loop"))
    if algorithm == "hungarian" and options.get("device_loop") == "on":
        # report (not hide) a missing cooperative launch: the run fell back to the host loop
        assert loops == {"cooperative kernel"}, loops


def test_tracking_on_the_gpu_matches_the_cpu():
    series = solvers.generate("particles", n=300, frames=4, persistence=0.5, enter_rate=0.05, leave_rate=0.05, seed=1)
    cpu = solvers.track(series, "lsa", backend="cpu")
    for algorithm in ("hungarian", "auction"):
        gpu = solvers.track(series, algorithm, backend="cuda")
        assert gpu.accuracy == pytest.approx(cpu.accuracy)
        assert all(s["certified"] and s["backend"] == "cuda" for s in gpu.frame_stats)


@pytest.mark.parametrize("algorithm,options", CONFIGS, ids=lambda x: str(x))
def test_hostile_scales_on_the_gpu_are_exact_or_refused(algorithm, options):
    """Issue 11 on the device: costs from 1e-300 to 1e290 (ties, offsets, big-M, forbidden pairs), the
    answer certified and within its stated allowance of the exact optimum (brute force in fractions)."""
    from test_hostile_numbers import SCALES, assert_claim_holds, exact_optimum, hostile_costs
    rng = np.random.default_rng(1111)
    for trial in range(60):
        scale = SCALES[trial % len(SCALES)]
        costs = hostile_costs(rng, scale, (int(rng.integers(1, 7)), int(rng.integers(1, 7))))
        optimum = exact_optimum(costs)
        if optimum is None:
            with pytest.raises(InfeasibleError):
                solvers.solve(CostMatrix.from_array(costs), algorithm, backend="cuda", **options)
            continue
        result = solvers.solve(CostMatrix.from_array(costs), algorithm, backend="cuda", **options)
        assert result.certified, (trial, scale, result.certificate.summary())
        assert_claim_holds(costs, result, optimum)


HUNGARIAN_CONFIGS = [options for algorithm, options in CONFIGS if algorithm == "hungarian"]


def test_the_cooperative_loop_fits_two_blocks_on_every_multiprocessor():
    """Its launch bounds hold: two blocks of it fit on each multiprocessor at once, whatever
    registers a later edit costs (one block each halved the grid and doubled a level's time)."""
    from numba import cuda
    from solvers.assignment.hungarian_fused import SOLVE_TREE
    from solvers.assignment.hungarian_kernels import BLOCK
    solvers.solve(np.random.default_rng(3).random((300, 300)), "hungarian", backend="cuda", device_loop="on")
    processors = cuda.get_current_device().MULTIPROCESSOR_COUNT
    compiled = list(SOLVE_TREE.cuda.overloads.values())
    assert compiled
    for kernel in compiled:
        assert kernel.max_cooperative_grid_blocks(BLOCK) >= 2 * processors, kernel.regs_per_thread


@pytest.mark.parametrize("options", HUNGARIAN_CONFIGS, ids=lambda x: str(x))
def test_hungarian_solves_rectangles_natively_on_the_gpu(options):
    """Issue 13: wide and tall problems at their own shape (no dummy rows), with ties, forbidden
    pairs, reals and integers (float32 storage), certified by the solver's own rectangular duals."""
    from test_hungarian_rect import assert_rectangular_optimum, costs_of_kind, scipy_optimum
    rng = np.random.default_rng(1313)
    shapes = ((300, 900), (900, 300), (64, 4096), (1000, 3000), (2000, 2100), (7, 300))
    for trial, shape in enumerate(shapes * 3):
        costs = costs_of_kind(rng, (0, 1, 2, 3, 4, 6, 7)[trial % 7], shape)
        optimum = scipy_optimum(costs)
        result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cuda", **options)
        assert_rectangular_optimum(costs, result, optimum)
        if options.get("device_loop") == "on":
            assert result.stats["loop"] == "cooperative kernel"


@pytest.mark.parametrize("algorithm,options", CONFIGS, ids=lambda x: str(x))
def test_wide_and_tall_matrices_on_the_gpu(algorithm, options):
    rng = np.random.default_rng(7)
    for shape in ((1, 100_000), (5, 100_000), (100_000, 3)):
        costs = rng.random(shape)
        r, c = linear_sum_assignment(costs)
        result = solvers.solve(CostMatrix.from_array(costs), algorithm, backend="cuda", **options)
        assert result.certified and result.value == pytest.approx(costs[r, c].sum(), rel=1e-12), shape


@pytest.mark.parametrize("kind", ["ties", "wide", "rectangular"])
def test_the_auctions_parallel_tail_is_optimal_run_after_run(kind):
    """The forward tail's blocks bid at once under the objects' locks (auction_kernels.gs_tail_cuda):
    hundreds of persons in the tail, many blocks on one object, every run certified and equal to
    scipy's optimum (the assignment itself may differ between runs among ties)."""
    rng = np.random.default_rng(77)
    costs = {"ties": lambda: rng.integers(0, 60, (3000, 3000)),
             "wide": lambda: rng.integers(0, 30000, (3000, 3000)),
             "rectangular": lambda: rng.integers(0, 600, (1500, 3000))}[kind]().astype(float)
    rows, cols = linear_sum_assignment(costs)
    optimum = float(costs[rows, cols].sum())
    problem = CostMatrix.from_array(costs)
    for _ in range(4):
        result = solvers.solve(problem, "auction", backend="cuda")
        assert result.certified and result.certificate.status == "optimal", result.certificate.summary()
        assert result.value == optimum
        assert result.stats["gs_bids"] > 0 and result.stats["gs_launches"] > 0


GPU_PAST_TAIL_CODE = """
import numpy as np, solvers
import solvers.api_inputs
from solvers import warmup
from solvers.targets.cuda_jit import kernels_compiled
rng = np.random.default_rng(9)
problem = solvers.api_inputs.as_problem(rng.integers(0, 30000, (1500, 1500)))
warmup.prepare(problem, "auction", "cuda", {})
before = kernels_compiled()
result = solvers.solve(problem, "auction", backend="cuda")
print(kernels_compiled() - before, result.stats["jacobi_rounds"] > 0, result.stats["price_updates"] > 0)
"""


def test_a_gpu_auction_past_its_tail_compiles_no_kernel_inside_its_timed_call(tmp_path):
    """On an empty kernel cache: the warm-up of a problem past the GPU's parallel tail runs both the
    tiny corner (the tail and its price updates) and one past the tail (the Jacobi rounds), so the
    timed solve, which takes all three, compiles no kernel. With the tiny corner alone, two kernels
    compiled inside the timed call (measured on an H200). The host passes that only large inputs
    reach are `matchscope warmup`'s (warm_host_passes), not counted here."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "kernels"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), str(root)]))
    done = subprocess.run([sys.executable, "-c", GPU_PAST_TAIL_CODE], cwd=root, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-3:] == ["0", "True", "True"], done.stdout
