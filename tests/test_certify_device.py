"""The certificate's check on a GPU's copy of the costs (solvers.certify_device): the same results as
the host's scan bit for bit, in both layouts and both dtypes a solver keeps; a copy that no longer
holds the problem's costs is caught by the checksum and the host checks instead, saying so; a
violation of the solver's duals is caught either way. The cuda kernels run under the simulator
(tiny matrices); their cpu loops, with the same arguments, against the host's loops here."""
from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from checksum_reference import cost_checksum, linear_checksum
from solvers import certify as cm
from solvers.certify_device import RESULT_PARTS, ROWS, scan_columns, slice_length
from solvers.dual_steps import bits_of, float64_bits
from solvers.problems import CostMatrix
from solvers.targets import launcher_for
from conftest import gpu_present

HOSTILE_FLOATS = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324, 2.2250738585072014e-308,
                  2.225073858507201e-308, 1.7976931348623157e308, -1.7976931348623157e308, 0.1, 2.0 ** 53 + 2]


@njit(cache=False)
def _arithmetic_bits(values):
    out = np.empty(values.size, np.uint64)
    for k in range(values.size):
        out[k] = float64_bits(values[k])
    return out


@njit(cache=False)
def _cast_bits(values):
    out = np.empty(values.size, np.uint64)
    for k in range(values.size):
        out[k] = bits_of(values[k])
    return out


def test_the_arithmetic_bit_pattern_is_the_bit_cast_everywhere():
    rng = np.random.default_rng(0)
    values = np.concatenate([HOSTILE_FLOATS, rng.standard_normal(3000) * 10.0 ** rng.integers(-323, 300, 3000)])
    expected = values.view(np.uint64)
    assert np.array_equal(_arithmetic_bits(values), expected)  # compiled (the GPU's code)
    assert np.array_equal(_cast_bits(values), expected)  # the cpu passes' bit cast
    assert [float64_bits(float(x)) for x in values[:200]] == expected[:200].tolist()  # as Python (the simulator)


def reference_checksum(costs: np.ndarray) -> int:
    return cost_checksum(costs)


def random_case(seed: int):
    """(costs, u, v): ties, forbidden pairs, a scale from 1e-300 to 1e300, duals near tight."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 9)), int(rng.integers(1, 9))
    scale = 10.0 ** int(rng.choice([-300, -20, 0, 20, 290]))
    costs = (rng.integers(0, 4, (n, m)) if seed % 2 else rng.random((n, m))) * scale
    costs[rng.random((n, m)) < 0.2] = np.inf
    u = rng.normal(size=n) * scale
    v = rng.normal(size=m) * scale
    return costs, u, v


@pytest.mark.parametrize("seed", range(12))
def test_the_device_loops_agree_with_the_host_scan_bit_for_bit(seed):
    costs, u, v = random_case(seed)
    problem = CostMatrix.from_array(costs)
    assert problem.checksum == reference_checksum(problem.costs)
    cr = cm._CostRows(problem)
    v_floor = cm._floor_columns(cr, v)
    host = cm._dual_rows(*cr.args(), u, v, v_floor, True)
    launcher = launcher_for("cpu")
    n, m = problem.shape
    transposed = np.ascontiguousarray(problem.costs.T)
    # the problem's layout, then its transpose cut into slices of every length (1 entry, a few, whole)
    duals = np.concatenate([u, v, v_floor])  # as they travel to the device: one array
    for slice_len in (None,) + tuple(range(1, m + 2)):
        flat = np.full(RESULT_PARTS * n, np.nan)
        if slice_len is None:
            launcher.launch(ROWS, n, problem.costs, duals, flat)
        else:
            scan_columns(launcher, transposed, duals, flat, slice_len)
        results = flat.reshape(RESULT_PARTS, n)
        for a, b in zip(host, (results[0], results[1], results[2].astype(np.int64))):
            np.testing.assert_array_equal(a, b)
        shares = results[3].astype(np.uint64) + (results[4].astype(np.uint64) << np.uint64(32))
        assert int(shares.sum(dtype=np.uint64)) == problem.checksum


@pytest.mark.parametrize("rows, cols", [(1, 1), (3000, 9000), (9000, 3000), (1000, 20000), (5, 10**6), (10**6, 5)])
def test_slices_cover_a_row_and_fill_a_large_gpu(rows, cols):
    from solvers.certify_device import BUSY_THREADS, MIN_SLICE
    length = slice_length(rows, cols)
    slices = -(-cols // length)
    assert 1 <= length and (slices - 1) * length < cols <= slices * length  # every entry, no empty slice
    assert length >= min(MIN_SLICE, cols)
    assert rows * slices >= 0.9 * min(BUSY_THREADS, rows * cols // MIN_SLICE)  # threads enough, if rows allow


def test_a_changed_entry_or_two_swapped_ones_change_the_checksum():
    costs = np.random.default_rng(1).random((40, 30))
    base = CostMatrix.from_array(costs).checksum
    for i, j in ((0, 0), (39, 29), (7, 11)):
        changed = costs.copy()
        changed[i, j] = np.nextafter(changed[i, j], 2.0)
        assert CostMatrix.from_array(changed).checksum != base
    swapped = costs.copy()
    swapped[[2, 30], [5, 5]] = swapped[[30, 2], [5, 5]]
    assert CostMatrix.from_array(swapped).checksum != base


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_a_swap_that_cancels_in_a_linear_checksum_changes_this_one(dtype):
    """1.0 and 2.0 (bit patterns 2^52 apart) swapped between positions 2048 apart: bits * (2k + 1)
    changes by 2^52 * 2 * 2048 = 2^64, nothing, so a GPU copy changed this way passed the old check.
    Both the float pass and the held integers' pass must see it."""
    costs = np.zeros((8, 512), dtype=dtype)  # 4096 entries, compiled-pass size or not: both tried below
    costs.flat[100], costs.flat[100 + 2048] = 1, 2
    swapped = costs.copy()
    swapped.flat[100], swapped.flat[100 + 2048] = 2, 1
    assert linear_checksum(costs) == linear_checksum(swapped)  # the case does cancel there
    for big in (False, True):
        tiled = (lambda a: np.tile(a, (64, 1))) if big else (lambda a: a)  # 2^18 entries: the compiled pass
        before, after = CostMatrix.from_array(tiled(costs)), CostMatrix.from_array(tiled(swapped))
        assert before.checksum == cost_checksum(tiled(costs).astype(np.float64))
        assert before.checksum != after.checksum, big


SIMULATED = """
import warnings
warnings.simplefilter("ignore", RuntimeWarning)  # the simulator's uint64 checksum wraps, as on a GPU
import numpy as np
from numba import cuda
from solvers import certify as cm
from solvers.problems import CostMatrix
from solvers import certify_device
from solvers.certify_device import dual_rows_on_device

certify_device.MIN_SLICE = 2  # tiny rows: the transposed copies are still cut into several slices
certify_device.BUSY_THREADS = 1 << 30

rng = np.random.default_rng(3)
np.seterr(over="ignore")
for case in range(4):
    n, m = [(3, 5), (5, 3), (4, 4), (1, 6)][case]
    costs = rng.integers(0, 5, (n, m)).astype(np.float64)
    costs[rng.random((n, m)) < 0.2] = np.inf
    problem = CostMatrix.from_array(costs)
    cr = cm._CostRows(problem)
    u, v = rng.normal(size=n), rng.normal(size=m)
    v_floor = cm._floor_columns(cr, v)
    host = cm._dual_rows(*cr.args(), u, v, v_floor, True)
    copies = {"rows float64": costs, "rows float32": costs.astype(np.float32),
              "columns float64": np.ascontiguousarray(costs.T),
              "columns float32": np.ascontiguousarray(costs.T.astype(np.float32))}
    for name, copy in copies.items():
        got, why = dual_rows_on_device(cuda.to_device(copy), problem.shape, problem.checksum, u, v, v_floor)
        if n == m and name.startswith("columns"):  # a square copy is read in the problem's layout
            assert got is None and "checksum" in why, why  # (no solver transposes one)
            continue
        assert got is not None, (case, name, why)
        for a, b in zip(host, got):
            assert np.array_equal(a, b), (case, name, a, b)
    tampered = costs.copy()
    tampered[n - 1, 0] = 7.0 if tampered[n - 1, 0] != 7.0 else 8.0
    got, why = dual_rows_on_device(cuda.to_device(tampered), problem.shape, problem.checksum, u, v, v_floor)
    assert got is None and "checksum" in why, why
    got, why = dual_rows_on_device(cuda.to_device(costs[:, :1].copy()), problem.shape, problem.checksum, u, v, v_floor)
    assert got is None and "shape" in why, why

# through the certificate: a solver's optimal duals, one of them raised past a cost
cm.DEVICE_MIN_ENTRIES = 0
from scipy.optimize import linear_sum_assignment
costs = rng.integers(0, 9, (5, 6)).astype(np.float64)
costs[0, 1] = np.inf
rows, cols = linear_sum_assignment(costs)
row_match = np.full(5, -1, np.int64)
row_match[rows] = cols
duals = cm.certify_assignment(CostMatrix.from_array(costs), row_match).witness
good = {"u": duals["u"], "v": duals["v"]}
problem = CostMatrix.from_array(costs)
cert = cm.certify_assignment(problem, row_match, duals=good, device_costs=cuda.to_device(costs))
assert cert.optimal and "checked on the GPU" in cert.details, cert.details
bad = {"u": good["u"], "v": good["v"].copy()}
bad["v"][3] += 1.0  # u_i + v_3 now exceeds some c_i3
cert = cm.certify_assignment(problem, row_match, duals=bad, device_costs=cuda.to_device(costs))
assert "checked on the GPU" in cert.details and "exceeds c[" in cert.details, cert.details
host_cert = cm.certify_assignment(problem, row_match, duals=bad)
import re
violation = re.compile(r"u\\[\\d+\\] \\+ v\\[\\d+\\] exceeds c\\[\\d+,\\d+\\] by [^;]+")
assert violation.search(cert.details).group() == violation.search(host_cert.details).group()
assert (cert.optimal, cert.gap, cert.reason) == (host_cert.optimal, host_cert.gap, host_cert.reason)
overwritten = costs.copy()
overwritten[2, 2] -= 1.0  # a solver that wrote into its copy
cert = cm.certify_assignment(problem, row_match, duals=bad, device_costs=cuda.to_device(overwritten))
assert "checksum" in cert.details and "checked on the host" in cert.details, cert.details
assert "exceeds c[" in cert.details and cert.optimal == host_cert.optimal and cert.gap == host_cert.gap

# solvers on the simulated GPU hand their device copy over: wide (rows layout), tall (its transpose)
import solvers
for algorithm, shape in (("hungarian", (3, 5)), ("hungarian", (5, 3)), ("auction", (4, 6))):
    costs = rng.integers(0, 9, shape).astype(np.float64)
    result = solvers.solve(costs, algorithm, backend="cudasim")
    rows, cols = linear_sum_assignment(costs)
    assert result.certificate.optimal and result.value == costs[rows, cols].sum(), (algorithm, shape)
    assert "checked on the GPU's copy" in result.certificate.details, (algorithm, shape, result.certificate.details)
# a solution of a reduced problem (a shared offset taken off first) carries no device copy of other costs
costs = 1e15 + rng.integers(0, 9, (3, 4)).astype(np.float64)
result = solvers.solve(costs, "auction", backend="cudasim")
assert result.certificate.optimal and "GPU" not in result.certificate.details, result.certificate.details
print("ok")
"""


def test_the_cuda_kernels_under_the_simulator_match_the_host_and_catch_a_tampered_copy(run_cudasim):
    assert run_cudasim(SIMULATED).strip().endswith("ok")


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_the_spot_rows_catch_a_device_result_that_differs_from_the_host(monkeypatch, dtype):
    """The device scan's rows are spot-checked on the host (the worst, the lowest floor, a spread):
    one result off in any of the three outputs on a checked row sends the check to the host."""
    rng = np.random.default_rng(6)
    costs = rng.integers(0, 50, (40, 70)).astype(dtype)
    problem = CostMatrix.from_array(costs)
    cr = cm._CostRows(problem)
    u, v = rng.normal(size=40), rng.normal(size=70)
    v_floor = cm._floor_columns(cr, v)
    honest = cm._dual_rows(*cr.args(), u, v, v_floor, True)

    class Scanned:  # a launched scan whose read gives these results
        def __init__(self, results):
            self.results = results

        def result(self):
            return tuple(a.copy() for a in self.results), ""

    got, why = cm._scan_on_device(cr, u, v, v_floor, Scanned(honest))
    assert why == "" and all(np.array_equal(a, b) for a, b in zip(got, honest))
    checked_row = 39  # the last row is always in the spread
    for output, changed in ((0, np.nextafter(honest[0][checked_row], -np.inf)),
                            (1, np.nextafter(honest[1][checked_row], np.inf)), (2, honest[2][checked_row] + 1)):
        scanned = [a.copy() for a in honest]
        scanned[output][checked_row] = changed
        got, why = cm._scan_on_device(cr, u, v, v_floor, Scanned(scanned))
        assert got is None and why == f"the GPU's results differ from the host's on row {checked_row}"
    # a row outside the spread that the GPU says is the worst, or has the lowest floor, is rechecked
    outside = 17
    for output, changed in ((1, honest[1].max() + 1.0), (0, honest[0].min() - 1.0)):
        scanned = [a.copy() for a in honest]
        scanned[output][outside] = changed
        got, why = cm._scan_on_device(cr, u, v, v_floor, Scanned(scanned))
        assert got is None and why == f"the GPU's results differ from the host's on row {outside}"
    # long rows: the spread holds at most SPOT_ENTRIES entries (the first and last rows always), and
    # the worst and the lowest are rechecked after it, so the host's share stays small beside the GPU's scan
    rechecked = []
    monkeypatch.setattr(cm, "SPOT_ENTRIES", 70)
    real_rows_checked = cm._held_rows_checked
    monkeypatch.setattr(cm, "_held_rows_checked",
                        lambda values, rows, *rest: rechecked.append(rows) or real_rows_checked(values, rows, *rest))
    got, why = cm._scan_on_device(cr, u, v, v_floor, Scanned(honest))
    assert why == "" and list(rechecked[0]) == [0, 39]
    extremes = {int(np.argmax(honest[1])), int(np.argmin(honest[0]))} - {0, 39}
    assert set(np.concatenate(rechecked[1:]).tolist() if rechecked[1:] else []) == extremes


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
def test_the_spot_rows_read_the_costs_as_the_problem_holds_them_with_the_host_scans_results(dtype):
    """The spot rows are read in place (held integers too: no float64 copy of them), with the
    results of the host's own scan of the float64 costs bit for bit: floor, worst and its column,
    forbidden pairs skipped, rows in any order."""
    rng = np.random.default_rng(11)
    values = rng.integers(-2**40 if dtype == np.int64 else -2**30, 2**30, (1100, 1000)).astype(dtype)
    if dtype == np.float64:
        values = values * 1e-3
        values[rng.random(values.shape) < 0.01] = np.inf
    problem = CostMatrix.from_array(values, copy=False)
    assert problem.values.dtype == np.dtype(dtype)  # held as given (a large C-ordered matrix)
    cr = cm._CostRows(problem)
    u, v = rng.normal(size=1100) * 1e9, rng.normal(size=1000) * 1e9
    v_floor = cm._floor_columns(cr, v)
    honest = cm._dual_rows(*cr.args(), u, v, v_floor, True)
    rows = np.array([1099, 0, 517, 3], dtype=np.int64)
    spot = cm._held_rows_checked(problem.values, rows, u, v, v_floor)
    for got, want in zip(spot, honest):
        assert np.array_equal(got, want[rows])
    assert (spot[1] > -np.inf).all() and (spot[2] >= 0).all()


def test_a_branch_free_dense_row_gives_the_running_steps_results_with_ties_zeros_and_forbidden_pairs():
    """The host's dense rows (the spot rows, the host scan) are checked without branches; their
    floor, worst slack and its first column are what the GPU's running steps give, entry by entry
    (solvers.dual_steps), where many columns tie, slacks are -0.0 and +0.0, and pairs are forbidden."""
    from solvers.dual_steps import floor_step, violation_step
    rng = np.random.default_rng(8)
    for trial in range(40):
        values = rng.integers(-3, 4, (5, 30)).astype(np.float64) * (1.0 if trial % 2 else 1e300)
        values[rng.random(values.shape) < 0.2] = np.inf
        if trial % 5 == 0:
            values[2] = np.inf  # a row with no allowed pair
        u = rng.integers(-3, 4, 5).astype(np.float64) * (1.0 if trial % 2 else 1e300)
        v = rng.integers(-3, 4, 30).astype(np.float64) * (1.0 if trial % 2 else 1e300)
        u[rng.random(5) < 0.3] = -0.0
        v[rng.random(30) < 0.3] = -0.0
        v_floor = v - max(0.0, v.max())
        got = cm._held_rows_checked(values, np.arange(5), u, v, v_floor)
        for i in range(5):
            best, worst, at = np.inf, -np.inf, -1
            for j in range(30):
                if values[i, j] != np.inf:
                    worst, at = violation_step(u[i] + v[j] - values[i, j], j, worst, at)
                    best = floor_step(values[i, j], v_floor[j], best)
            assert got[0][i] == best and got[1][i] == worst and got[2][i] == at, (trial, i)


def test_a_cpu_run_certifies_on_the_host():
    from scipy.optimize import linear_sum_assignment
    import solvers
    costs = np.random.default_rng(4).random((30, 30))
    result = solvers.solve(costs, "hungarian", backend="cpu")
    assert result.certificate.optimal and "GPU" not in result.certificate.details
    rows, cols = linear_sum_assignment(costs)
    assert math.isclose(result.value, costs[rows, cols].sum(), rel_tol=1e-12)


@pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU")
def test_on_a_gpu_the_kernels_match_the_host_and_catch_a_tampered_copy():
    from numba import cuda
    from scipy.optimize import linear_sum_assignment
    from solvers.certify_device import dual_rows_on_device
    rng = np.random.default_rng(5)
    for n, m in ((300, 700), (700, 300), (512, 512), (1, 2000)):
        costs = rng.integers(0, 1000, (n, m)).astype(np.float64)
        costs[rng.random((n, m)) < 0.05] = np.inf
        problem = CostMatrix.from_array(costs)
        cr = cm._CostRows(problem)
        u, v = rng.normal(size=n) * 100, rng.normal(size=m) * 100
        v_floor = cm._floor_columns(cr, v)
        host = cm._dual_rows(*cr.args(), u, v, v_floor, True)
        layouts = [costs] if n <= m else [np.ascontiguousarray(costs.T)]
        for layout in layouts:
            for dtype in (np.float64, np.float32):
                got, why = dual_rows_on_device(cuda.to_device(layout.astype(dtype)), problem.shape, problem.checksum,
                                               u, v, v_floor)
                assert got is not None, why
                for a, b in zip(host, got):
                    np.testing.assert_array_equal(a, b)
        tampered = layouts[0].copy()
        tampered.reshape(-1)[tampered.size // 2] += 1.0
        got, why = dual_rows_on_device(cuda.to_device(tampered), problem.shape, problem.checksum, u, v, v_floor)
        assert got is None and "checksum" in why
    costs = rng.random((1100, 1000)) * 1e-20  # over DEVICE_MIN_ENTRIES, tiny reals: exact on the device too
    rows, cols = linear_sum_assignment(costs)
    row_match = np.full(1100, -1, np.int64)
    row_match[rows] = cols
    problem = CostMatrix.from_array(costs)
    witness = cm.certify_assignment(problem, row_match).witness
    duals = {"u": witness["u"], "v": witness["v"]}
    on_gpu = cm.certify_assignment(problem, row_match, duals=duals, device_costs=cuda.to_device(costs.T.copy()))
    on_host = cm.certify_assignment(problem, row_match, duals=duals)
    assert "checked on the GPU" in on_gpu.details and on_gpu.optimal == on_host.optimal and on_gpu.gap == on_host.gap
