"""GPU Hungarian (Date & Nagi 2016): optimal costs against scipy's linear_sum_assignment on hundreds
of random instances per variant, certified duals, infeasibility, telemetry, cancellation, the
simulator (one subprocess), and sm_90 compilation of every CUDA kernel."""
from __future__ import annotations

import json

import numpy as np
import pytest
from numba import types, typeof
from scipy.optimize import linear_sum_assignment

import solvers
from solvers.assignment import hungarian, hungarian_device, hungarian_fused, hungarian_kernels
from solvers.targets.cpu import CpuLauncher
from solvers.errors import Cancelled, InfeasibleError
from solvers.problems import CostMatrix
from solvers.telemetry import NULL, Observer, Recorder

VARIANTS = ("tree", "classical")


def random_costs(rng: np.random.Generator, trial: int, max_side: int = 9) -> np.ndarray:
    """A mix of the hard cases: ties (costs in {0,1,2}), negative integers, reals, forbidden pairs,
    rectangular both ways, 1 x 1."""
    rows, cols = (int(x) for x in rng.integers(1, max_side, size=2))
    kind = trial % 5
    if kind == 0:
        return rng.integers(0, 3, (rows, cols)).astype(float)
    if kind == 1:
        return rng.integers(-50, 51, (rows, cols)).astype(float)
    if kind == 2:
        return rng.normal(0.0, 10.0, (rows, cols))
    if kind == 3:
        return rng.integers(0, 1000, (rows, cols)).astype(float)
    costs = rng.integers(0, 10, (rows, cols)).astype(float)
    costs[rng.random((rows, cols)) < (0.3 if trial % 10 == 4 else 0.7)] = np.inf  # sparse ones often infeasible
    return costs


def scipy_optimum(costs: np.ndarray):
    """Optimal cost, or None when scipy finds no complete assignment."""
    try:
        rows, cols = linear_sum_assignment(costs)
    except ValueError:
        return None
    return float(costs[rows, cols].sum())


def check_duals(costs: np.ndarray, result, tol: float = 1e-7) -> None:
    """Our own check of the returned potentials: u_i + v_j <= c_ij on allowed pairs, = on assigned."""
    u, v = np.asarray(result.duals["u"]), np.asarray(result.duals["v"])
    allowed = np.isfinite(costs)
    scale = max(1.0, float(np.abs(costs[allowed]).max())) if allowed.any() else 1.0
    if allowed.any():
        assert (u[:, None] + v[None, :] - costs)[allowed].max() <= tol * scale
    pairs = result.pairs()
    if pairs.size:
        gap = costs[pairs[:, 0], pairs[:, 1]] - u[pairs[:, 0]] - v[pairs[:, 1]]
        assert np.abs(gap).max() <= tol * scale


@pytest.mark.parametrize("variant", VARIANTS)
def test_optimal_and_certified_on_random_instances(variant):
    rng = np.random.default_rng(2016)
    solved = infeasible = 0
    for trial in range(250):
        costs = random_costs(rng, trial)
        optimum = scipy_optimum(costs)
        problem = CostMatrix.from_array(costs)
        if optimum is None:
            with pytest.raises(InfeasibleError):
                solvers.solve(problem, "hungarian", backend="cpu", variant=variant)
            infeasible += 1
            continue
        result = solvers.solve(problem, "hungarian", backend="cpu", variant=variant)
        assert result.value == pytest.approx(optimum, rel=1e-9, abs=1e-9), (trial, costs)
        assert result.certified, (trial, result.certificate.summary())
        assert result.certificate.gap <= result.certificate.tolerance
        assert np.count_nonzero(result.row_match >= 0) == min(costs.shape)
        check_duals(costs, result)
        solved += 1
    assert solved > 150 and infeasible > 5  # both paths really exercised


def test_larger_instance_and_paths_per_iteration():
    rng = np.random.default_rng(5)
    costs = rng.integers(0, 300, (300, 300)).astype(float)
    optimum = scipy_optimum(costs)
    for variant in VARIANTS:
        result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", variant=variant)
        assert result.value == optimum and result.certified
        paths = result.stats["paths_per_iteration"]
        # every augmentation is counted once: Table 2 of the paper adds up to n
        assert sum(paths) == 300 and len(paths) == result.iterations
        assert result.stats["initial_assignments"] == paths[0] > 1  # many disjoint paths at once
        assert result.stats["dual_updates"] > 0


def test_solver_duals_are_verified_not_derived():
    rng = np.random.default_rng(11)
    for trial in range(40):
        costs = random_costs(rng, trial % 4)
        for variant in VARIANTS:
            result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", variant=variant)
            assert "solver duals verified" in result.certificate.details


@pytest.mark.parametrize("shape", [(0, 4), (4, 0), (0, 0)])
def test_empty_sides(shape):
    result = solvers.solve(CostMatrix.from_array(np.zeros(shape)), "hungarian", backend="cpu")
    assert result.value == 0.0 and result.certified
    assert result.row_match.shape == (shape[0],) and np.all(result.row_match == -1)


def test_rectangular_duals_have_the_lp_signs():
    rng = np.random.default_rng(3)
    for shape in ((3, 7), (7, 3)):
        costs = rng.integers(-20, 20, shape).astype(float)
        result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu")
        wide = shape[0] < shape[1]
        larger = result.duals["v"] if wide else result.duals["u"]
        unmatched = (result.col_match if wide else result.row_match) < 0
        assert larger.max() <= 0.0 and np.all(larger[unmatched] == 0.0)


@pytest.mark.parametrize("costs", [
    np.array([[1.0, np.inf], [2.0, np.inf]]),                            # a column no row may take
    np.array([[np.inf, np.inf, np.inf], [1.0, 2.0, 3.0]]),               # a row with no allowed pair
    np.array([[1.0, np.inf, np.inf], [2.0, np.inf, np.inf], [3.0, 4.0, 5.0]]),  # Hall: 2 rows, 1 column
])
@pytest.mark.parametrize("variant", VARIANTS)
def test_infeasible_patterns_raise(costs, variant):
    with pytest.raises(InfeasibleError):
        hungarian.run(CostMatrix.from_array(costs), "cpu", NULL, variant=variant)


def test_telemetry_keys():
    rng = np.random.default_rng(8)
    costs = rng.integers(0, 100, (40, 40)).astype(float)
    recorder = Recorder(snapshot_interval=0.0)
    result = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", observer=recorder)
    phases = {s.phase for s in recorder.iterations}
    assert {"augment", "dual-update"} <= phases
    augment = [s for s in recorder.iterations if s.phase == "augment"]
    for key in ("paths", "assigned", "dual_objective", "primal_cost"):
        assert key in augment[0].extra
    assert augment[-1].extra["assigned"] == 40
    assert augment[-1].extra["dual_objective"] == pytest.approx(result.value)
    assert sum(s.extra["paths"] for s in augment) == 40
    assert any("delta" in s.extra for s in recorder.iterations if s.phase == "dual-update")
    kinds = {s.kind for s in recorder.snapshots}
    assert {"labels", "paths"} <= kinds
    labels = next(s for s in recorder.snapshots if s.kind == "labels")
    assert "rows.hist_counts" in labels.data and "cols.sample" in labels.data
    paths = next(s for s in recorder.snapshots if s.kind == "paths")
    assert paths.data["lengths"].min() >= 1 and np.all(paths.data["lengths"] % 2 == 1)
    assert recorder.result_summary["certified"]


def test_no_listener_costs_no_readbacks_beyond_the_loop():
    rng = np.random.default_rng(8)
    costs = rng.integers(0, 100, (40, 40)).astype(float)
    quiet = hungarian.run(CostMatrix.from_array(costs), "cpu", NULL)
    loud = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", observer=Recorder())
    # one counter readback per BFS level / dual update / iteration, one after each of the row and
    # column reductions (infeasibility is caught before inf - inf), plus the 3 final copies
    s = quiet.stats
    assert s["readbacks"] == s["bfs_levels"] + s["dual_updates"] + quiet.iterations + 1 + 2 + 3
    assert loud.stats["readbacks"] > s["readbacks"]


class StopAfter(Observer):
    def __init__(self, events: int):
        self.events = events
        self.seen = 0

    def on_iteration(self, stats):
        self.seen += 1

    def should_stop(self):
        return self.seen >= self.events


@pytest.mark.parametrize("variant", VARIANTS)
def test_cancellation(variant):
    costs = np.random.default_rng(1).integers(0, 1000, (60, 60)).astype(float)
    observer = StopAfter(2)
    with pytest.raises(Cancelled):
        solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cpu", observer=observer,
                      variant=variant)
    assert observer.seen == 2


def test_cost_statistics_are_the_problems_own_and_match_numpy():
    rng = np.random.default_rng(0)
    for costs in (rng.integers(-9, 9, (40, 30)).astype(float), rng.random((7, 50)) * 3, np.full((3, 3), np.inf),
                  rng.integers(0, 9, (600, 500)).astype(float)):  # the last one through the compiled scan
        costs[rng.random(costs.shape) < 0.2] = np.inf
        finite = costs[np.isfinite(costs)]
        stats = hungarian.problem_stats(CostMatrix.from_array(costs))
        assert stats.n_forbidden == costs.size - finite.size
        assert stats.integer == bool(np.all(finite == np.round(finite)))
        if finite.size:
            assert (stats.min_cost, stats.max_cost) == (finite.min(), finite.max())
        else:
            assert (stats.min_cost, stats.max_cost) == (np.inf, -np.inf)


def test_per_array_cache_follows_the_array_lifetime():
    import gc
    cache = hungarian._PerArray(2)
    a, b, c = np.zeros(2), np.zeros(2), np.zeros(2)
    cache.put(a, "k", 1)
    cache.put(b, "k", 2)
    assert cache.get(a, "k") == 1 and cache.get(b, "k") == 2 and cache.get(a, "other") is None
    cache.put(c, "k", 3)  # size 2: the oldest goes
    assert cache.get(a, "k") is None and cache.get(c, "k") == 3
    del b
    gc.collect()
    assert len(cache.entries) == 1  # a collected array's value is dropped at once


def test_registration():
    algo = solvers.algorithms()["hungarian"]
    assert algo.label == "dual" and set(algo.backends) == {"cpu", "cuda", "cudasim"}
    assert algo.parse_options({})["variant"] == "tree"
    with pytest.raises(solvers.InputError):
        algo.parse_options({"variant": "fast"})


# ---------------------------------------------------------------------------------------------
# the CUDA kernels, under the simulator and compiled for a real GPU

SIM_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)  # the simulator's scheduler polls its threads; switch often
import numpy as np
import solvers
from solvers.problems import CostMatrix
from solvers.errors import InfeasibleError
sys.path.insert(0, "tests")
from test_hungarian import random_costs, scipy_optimum
rng = np.random.default_rng(99)
out = []
for trial in range(TRIALS):
    costs = random_costs(rng, trial, max_side=7)  # every shard draws every instance: the same stream
    if trial % SHARDS != SHARD:
        continue
    optimum = scipy_optimum(costs)
    for variant, loop in (("tree", "on"), ("tree", "off"), ("classical", "off")):
        try:
            r = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cudasim", variant=variant,
                              device_loop=loop)
            out.append([trial, variant, loop, optimum, r.value, bool(r.certified), r.backend, r.stats["loop"]])
        except InfeasibleError:
            out.append([trial, variant, loop, optimum, None, False, "cudasim", ""])
problem = CostMatrix.from_array(np.arange(16.0).reshape(4, 4) % 5)
uploads = [solvers.solve(problem, "hungarian", backend="cudasim").stats["upload_seconds"] for _ in range(2)]
recorder = solvers.Recorder(snapshot_interval=0.0)
solvers.solve(CostMatrix.from_array(rng.integers(0, 9, (6, 6)).astype(float)), "hungarian", backend="cudasim",
              observer=recorder)  # the cooperative loop, one launch per augmentation
augments = [s.extra for s in recorder.iterations if s.phase == "augment"]
print(json.dumps([sum(a["paths"] for a in augments), augments[-1]["assigned"],
                  sorted({s.kind for s in recorder.snapshots})]))
print(json.dumps(uploads))
print(json.dumps(out))
"""


def test_cuda_kernels_under_the_simulator(run_cudasim_shards, sweep):
    """Random instances (ties, negative, real, forbidden, rectangular) under every variant and loop:
    200 under `make test-all`, the first 32 of the same stream under `make test`."""
    trials = sweep(200, 32)
    rows = []
    for output in run_cudasim_shards(SIM_CODE.replace("TRIALS", str(trials))):
        lines = output.strip().splitlines()
        shard_rows, uploads, telemetry = json.loads(lines[-1]), json.loads(lines[-2]), json.loads(lines[-3])
        assert uploads[0] > 0.0 and uploads[1] == 0.0  # a re-solve reuses the matrix already on the device
        assert telemetry == [6, 6, ["labels", "paths"]]
        rows += shard_rows
    assert len(rows) == 3 * trials and len({r[0] for r in rows}) == trials
    for trial, variant, loop, optimum, value, certified, backend, how in rows:
        assert backend == "cudasim"
        if optimum is None:
            assert value is None, (trial, variant, loop)  # InfeasibleError was raised
        else:
            assert value == pytest.approx(optimum, abs=1e-9) and certified, (trial, variant, loop)
            assert how == ("cooperative kernel" if (variant, loop) == ("tree", "on") else "host")
    assert sum(r[3] is not None for r in rows) >= 3 * 0.65 * trials  # most instances are feasible


COOPERATIVE_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)
import numpy as np
import solvers
from solvers.problems import CostMatrix
from scipy.optimize import linear_sum_assignment
rng = np.random.default_rng(5)
out = []
for trial in range(8):  # many more frontier rows than the simulator's 2 tile slices, many dual updates
    n_rows, n_cols = rng.integers(9, 15, 2)
    costs = rng.integers(0, 10 * n_cols, (n_rows, n_cols)).astype(float) if trial % 2 else rng.random((n_rows, n_cols))
    rows, cols = linear_sum_assignment(costs)
    r = solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cudasim", variant="tree", device_loop="on")
    out.append([float(costs[rows, cols].sum()), r.value, bool(r.certified), r.stats["loop"], r.stats["dual_updates"],
                r.stats["bfs_levels"]])
print(json.dumps(out))
"""


KEPT_FOREST_CODE = r"""
import sys, json
sys.setswitchinterval(1e-4)
import numpy as np
import solvers
from solvers.problems import CostMatrix
from solvers.telemetry import Observer
from scipy.optimize import linear_sum_assignment
rng = np.random.default_rng(11)
out = []
for trial in range(6):  # real costs: after the first iterations, one path each, so the forest is kept
    n_rows = int(rng.integers(10, 17))
    n_cols = n_rows if trial % 3 else n_rows + int(rng.integers(1, 8))
    costs = rng.random((n_rows, n_cols)) * 10.0 ** float(rng.integers(-20, 20))
    if trial == 4:
        costs[rng.random(costs.shape) < 0.3] = np.inf  # forbidden pairs; the diagonal keeps it feasible
        costs[np.arange(n_rows), np.arange(n_rows)] = rng.random(n_rows)
    rows, cols = linear_sum_assignment(costs)
    observer = Observer() if trial == 5 else None  # a listener: one launch (a fresh forest) per augmentation
    runs = [solvers.solve(CostMatrix.from_array(costs), "hungarian", backend="cudasim", variant="tree",
                          device_loop="on", observer=observer) for _ in range(2 if trial == 0 else 1)]
    out.append([float(costs[rows, cols].sum()), [r.value for r in runs], [bool(r.certified) for r in runs],
                [r.row_match.tolist() for r in runs], runs[0].stats["loop"], runs[0].stats["forests_kept"],
                runs[0].stats["single_path_walks"]])
print(json.dumps(out))
"""


def test_cooperative_loop_keeps_the_forest_between_single_augmentations(run_cudasim):
    """After an iteration that augmented one path, the fused loop prunes that path's tree and keeps
    the others (on real costs most iterations are such): the answers equal scipy's on square,
    rectangular and forbidden-pair problems at scales from 1e-20 to 1e19, are certified, repeat
    exactly on the same input, and a kept forest was used, as was the one-walk flip of a phase's
    only path. With a listener each launch starts from an empty forest (nothing to keep), and the
    answer is the same."""
    rows = json.loads(run_cudasim(KEPT_FOREST_CODE).strip().splitlines()[-1])
    assert len(rows) == 6
    for optimum, values, certified, matches, loop, _, _ in rows:
        for value in values:
            assert value == pytest.approx(optimum, rel=1e-12, abs=0.0)
        assert all(certified) and loop == "cooperative kernel"
        assert all(match == matches[0] for match in matches)
    # how many iterations augment a single path depends on which tree wins a race for a free column,
    # so per instance it varies (0 to 4 here); over the five runs without a listener, never nothing
    assert sum(r[5] for r in rows[:5]) >= 1
    assert rows[5][5] == 0  # one iteration per launch: never a forest to keep
    assert sum(r[6] for r in rows) >= 1  # a phase that reached one free column flipped it in one walk


def test_cooperative_loop_under_the_simulator_on_wider_instances(run_cudasim):
    """The fused loop's queue, rotating slots and tiled forward pass on 9..14-sided problems (several
    tiles and slices per block, several dual updates each)."""
    rows = json.loads(run_cudasim(COOPERATIVE_CODE).strip().splitlines()[-1])
    assert len(rows) == 8
    for optimum, value, certified, loop, _, _ in rows:
        assert value == pytest.approx(optimum, abs=1e-9) and certified and loop == "cooperative kernel"
    assert sum(r[4] for r in rows) >= 8 and all(r[5] >= 1 for r in rows)


def _signature(args) -> tuple:
    """numba types of launch arguments as a device launch sees them (writable, C-contiguous)."""
    out = []
    for a in args:
        t = typeof(a)
        if isinstance(t, types.Array):
            t = types.Array(t.dtype, t.ndim, "C")
        out.append(t)
    return tuple(out)


class RecordingLauncher(CpuLauncher):
    """Runs on the CPU and remembers each kernel (by name) and its argument types."""

    def __init__(self):
        super().__init__()
        self.kernels = {}
        self.signatures = {}

    def launch(self, kernel, size, *args):
        self.kernels.setdefault(kernel.name, kernel)
        self.signatures.setdefault(kernel.name, _signature(args))
        super().launch(kernel, size, *args)


def recorded_signatures() -> tuple[dict, dict]:
    """Every kernel and its signature, recorded from real CPU runs of both variants (and the fused
    loop's arguments, which has no cpu form)."""
    launcher = RecordingLauncher()
    rng = np.random.default_rng(4)
    for shape in ((6, 8), (6, 6)):  # the column reduction runs on square problems only
        costs = CostMatrix.from_array(rng.integers(0, 9, shape).astype(float))
        view = hungarian.cost_view(costs)
        C, _ = hungarian.device_costs(launcher, view, compact_integers=True)
        for variant in VARIANTS:
            solver = hungarian_device.HungarianDevice(launcher, C, view, variant, 0.0, NULL)
            solver.solve()
    solver = hungarian_device.HungarianDevice(launcher, C, view, "tree", 0.0, NULL)
    launcher.kernels["solve_tree"] = hungarian_fused.SOLVE_TREE
    launcher.signatures["solve_tree"] = _signature(solver.device_loop_args(np.zeros(8, np.int64), 0, 1))
    return launcher.kernels, launcher.signatures


def test_every_compiled_function_is_cached():
    """cpu loops, cuda kernels and device functions all keep what they compile on disk."""
    from numba.core.caching import FunctionCache
    from solvers.assignment import auction_kernels
    from solvers import cost_summary
    from solvers.targets.cuda_jit import LazyCudaKernel
    kernels = hungarian_kernels.KERNELS + (hungarian_fused.SOLVE_TREE,) + auction_kernels.KERNELS
    for kernel in kernels:  # cuda kernels are made (and cached) when first used: a cpu run never builds them
        assert isinstance(kernel.cuda, LazyCudaKernel) and kernel.cuda.options["cache"], kernel.name
        assert kernel.cpu is None or isinstance(kernel.cpu._cache, FunctionCache), kernel.name
    for scan in (cost_summary.finite_summary, cost_summary._scan_rows_serial, cost_summary._scan_rows_parallel):
        assert isinstance(scan._cache, FunctionCache)


def test_registry_modules_import_no_numba():
    """Listing the algorithms (every declaring module, `matchscope algos`) loads neither numba nor
    scipy.sparse: the solvers are imported when they run."""
    import subprocess
    import sys
    code = ("import sys, io, contextlib, solvers.registry as r; from solvers.cli import main\n"
            "for name in r.DECLARING_MODULES: __import__(name)\n"
            "with contextlib.redirect_stdout(io.StringIO()): assert main(['algos']) == 0\n"
            "assert 'numba' not in sys.modules and 'scipy.sparse' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture
def compile_for_sm90(monkeypatch):
    """cuda.compile_ptx for cc 9.0; without a GPU, device functions are told the same cc."""
    from numba import cuda
    import numba.cuda.dispatcher as dispatcher
    from solvers.targets import cuda_available

    if not cuda_available():
        class Hopper:
            compute_capability = (9, 0)
        monkeypatch.setattr(dispatcher, "get_current_device", lambda: Hopper())
    try:
        cuda.compile_ptx(lambda a: None, (types.int32[:],), cc=(9, 0))
    except Exception as exc:  # noqa: BLE001 - any toolkit failure means we cannot compile here
        if "nvrtc" in str(exc).lower() or "NVRTC" in type(exc).__name__:
            pytest.skip(f"NVRTC is not available: {exc}")
        raise

    def compile_(func, signature):
        from solvers.targets.cuda_jit import compile_ptx
        ptx, _ = compile_ptx(func, signature, cc=(9, 0))
        return ptx
    return compile_


def float32_variant(signature) -> tuple:
    """The same signature with a float32 cost matrix (integer costs below 2^24 on a GPU)."""
    return tuple(types.Array(types.float32, 2, "C") if isinstance(t, types.Array) and t.ndim == 2 else t
                 for t in signature)


def test_every_kernel_compiles_for_sm90(compile_for_sm90):
    kernels, signatures = recorded_signatures()
    expected = hungarian_kernels.KERNELS + (hungarian_fused.SOLVE_TREE,)
    assert set(signatures) == {k.name for k in expected}  # the runs exercised every kernel
    for name, signature in signatures.items():
        variants = [signature]
        if any(isinstance(t, types.Array) and t.ndim == 2 for t in signature):  # float32 integer matrices too
            variants.append(float32_variant(signature))
        for sig in variants:
            ptx = compile_for_sm90(kernels[name].cuda.py_func, sig)
            assert ".target sm_90" in ptx, name


def test_benchmark_script_runs_small(tmp_path):
    """benchmarks/bench_assignment.py end to end at a tiny size on the CPU: both report files."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_assignment.py"
    spec = importlib.util.spec_from_file_location("bench_assignment", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--max-n", "40", "--repeats", "1", "--backend", "cpu", "--out", str(tmp_path)]) == 0
    (md,) = tmp_path.glob("assignment-*.md")
    report = json.loads(md.with_suffix(".json").read_text())
    assert {r["family"] for r in report["results"]} == {"dense", "points"}
    assert len(report["results"]) == 2 * 3 + 2 * 2  # sizes 20 and 40, three ranges, two persistences
    for row in report["results"]:
        for label, out in row["solvers"].items():
            assert out["certified"] and out["matches_scipy"], (row["n"], row["param"], label)
    assert len(report["goals"]) == 3 and "| goal | met |" in md.read_text()


def test_the_device_loop_option_defaults_to_auto_and_a_cpu_run_says_it_ran_the_host_loop():
    """device_loop applies to a GPU's tree variant only: by default it is auto, and a cpu run,
    asked for it or not, reports the host loop it ran (never 'on' beside 'host' unasked)."""
    costs = np.random.default_rng(3).integers(0, 20, (12, 15)).astype(np.float64)
    result = solvers.solve(costs, "hungarian", backend="cpu")
    assert result.options["device_loop"] == "auto" and result.stats["loop"] == "host"
    assert solvers.solve(costs, "hungarian", backend="cpu", device_loop="on").stats["loop"] == "host"
    assert result.certificate.optimal
