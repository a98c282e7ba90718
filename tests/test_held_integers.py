"""Integer cost matrices held as given (issue 13): ``solvers.solve`` on a large int64 or int32 array
keeps the caller's integers, and the n^2 float64 copy is made only when host code reads every cost.
A GPU solve uploads the integers (converted on the way) and its certificate settles on the GPU's
copy, so that copy is never made there. Here: what the Problem reports is what a float64 Problem of
the same numbers reports, hostile integers are refused as before, and a certificate on a held
matrix agrees with one on float64 costs, on the host and through the device check (its cpu loops
stand in for the GPU)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import solvers
from solvers import certify as cm
from solvers import certify_device
from solvers.errors import InputError
from solvers.problems import LARGE_MATRIX_ENTRIES, CostMatrix
from conftest import gpu_present

SIDE = 520  # 520^2 entries: past LARGE_MATRIX_ENTRIES, where a matrix is checked by the compiled pass
assert SIDE * SIDE >= LARGE_MATRIX_ENTRIES


def integer_costs(seed: int, dtype=np.int64, shape=(SIDE, SIDE), high: int = 10 * SIDE) -> np.ndarray:
    return np.random.default_rng(seed).integers(-high, high, shape).astype(dtype)


def made_float64_copy(problem: CostMatrix) -> bool:
    return "costs" in problem.__dict__


def optimal_row_match(costs: np.ndarray) -> np.ndarray:
    rows, cols = linear_sum_assignment(costs)
    match = np.full(costs.shape[0], -1, np.int64)
    match[rows] = cols
    return match


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_a_large_integer_matrix_is_held_as_given_and_reports_what_its_float64_twin_does(dtype):
    values = integer_costs(1, dtype)
    held = CostMatrix.from_array(values, copy=False)
    twin = CostMatrix.from_array(values.astype(np.float64))
    assert held.values.dtype == dtype and np.shares_memory(held.values, values)
    assert not held.values.flags.writeable and values.flags.writeable  # the caller's array keeps its flags
    assert not made_float64_copy(held)
    assert held.shape == twin.shape and held.describe() == twin.describe()
    assert held.checksum == twin.checksum  # the GPU check compares its copy's checksum with this one
    assert held.allowed.all() and not made_float64_copy(held)
    costs = held.costs  # made on first read, float64, frozen, equal to the twin's
    assert costs.dtype == np.float64 and not costs.flags.writeable and np.array_equal(costs, twin.costs)
    assert held.costs is costs  # made once


def test_only_an_uncopied_c_ordered_int64_or_int32_matrix_is_held():
    values = integer_costs(2)
    assert CostMatrix.from_array(values).values.dtype == np.float64  # copy=True: a private float64 copy
    assert CostMatrix.from_array(values.T, copy=False).values.dtype == np.float64  # not C-ordered
    assert CostMatrix.from_array(values.astype(np.int16), copy=False).values.dtype == np.float64
    small = integer_costs(3, shape=(20, 20))
    assert CostMatrix.from_array(small, copy=False).values.dtype == np.float64  # numpy's checks, converted


@pytest.mark.parametrize("bad", [2 ** 53 + 1, -(2 ** 62), np.iinfo(np.int64).min])
def test_integers_past_2_to_the_53_are_refused_in_one_line_naming_the_entry(bad):
    values = integer_costs(4)
    values[SIDE - 1, 7] = bad
    with pytest.raises(InputError) as caught:
        CostMatrix.from_array(values, copy=False, source="costs.npy")
    message = str(caught.value)
    assert "cannot be represented exactly" in message and f"row {SIDE - 1}, column 7 (0-based)" in message and "\n" not in message


def test_cpu_solvers_read_the_float64_copy_and_agree_with_scipy():
    values = integer_costs(5, shape=(SIDE, SIDE + 40))
    best = values.astype(np.float64)[np.arange(SIDE), optimal_row_match(values)].sum()
    for algorithm in ("lsa", "hungarian", "auction"):
        result = solvers.solve(values, algorithm, backend="cpu")
        assert result.certificate.optimal and result.value == best, algorithm


@pytest.fixture
def device_check_on_cpu(monkeypatch):
    """The certificate's GPU check run by its cpu loops, from a smaller size (the same code path a
    GPU solve takes, without a GPU)."""
    monkeypatch.setattr(certify_device, "device_backend", lambda: "cpu")
    monkeypatch.setattr(cm, "DEVICE_MIN_ENTRIES", LARGE_MATRIX_ENTRIES)


@pytest.mark.parametrize("shape", [(SIDE, SIDE + 30), (SIDE + 30, SIDE)])
def test_a_proof_on_the_devices_copy_never_makes_the_float64_copy(device_check_on_cpu, shape):
    values = integer_costs(6, shape=shape)
    row_match = optimal_row_match(values)
    duals = cm.certify_assignment(CostMatrix.from_array(values), row_match).witness
    held = CostMatrix.from_array(values, copy=False)
    # the layout a solver keeps: rows <= cols, so a tall problem's copy is its transpose
    layout = values if shape[0] <= shape[1] else np.ascontiguousarray(values.T)
    device_copy = layout.astype(np.float32)
    cert = cm.certify_assignment(held, row_match, duals={"u": duals["u"], "v": duals["v"]},
                                 device_costs=device_copy)
    assert cert.optimal and "checked on the GPU's copy" in cert.details, cert.details
    assigned = np.flatnonzero(row_match >= 0)
    assert cert.witness["value"] == values.astype(np.float64)[assigned, row_match[assigned]].sum()
    assert not made_float64_copy(held)


@pytest.mark.parametrize("high", [2 ** 20, 2 ** 52])
def test_a_gap_left_by_the_duals_is_searched_for_near_ties_without_the_float64_copy(device_check_on_cpu, high):
    """Duals that leave a gap (a GPU Hungarian's on costs near 2^52 left 88.5): the near-tie search
    reads the held integers row by row, proves the answer the only optimum as on the float64 twin,
    and never makes the n^2 float64 copy."""
    values = integer_costs(9, np.int64, (SIDE, SIDE + 5), high)
    row_match = optimal_row_match(values)
    duals = cm.certify_assignment(CostMatrix.from_array(values), row_match).witness
    v = duals["v"].copy()
    v[row_match[:5]] -= 3.0  # still feasible, but five assigned pairs are no longer tight: a gap of a few units
    held = CostMatrix.from_array(values, copy=False)
    twin = CostMatrix.from_array(values.astype(np.float64))
    on_held = cm.certify_assignment(held, row_match, duals={"u": duals["u"], "v": v},
                                    device_costs=values.astype(np.float64))
    on_twin = cm.certify_assignment(twin, row_match, duals={"u": duals["u"], "v": v})
    assert on_held.optimal and "checked on the GPU's copy" in on_held.details, on_held.details
    assert "no other assignment is within it" in on_held.details, on_held.details
    assert (on_held.optimal, on_held.gap) == (on_twin.optimal, on_twin.gap)
    assert not made_float64_copy(held)


def test_a_wrong_answer_on_a_held_matrix_is_refuted_as_on_float64_costs(device_check_on_cpu):
    values = integer_costs(7)
    row_match = optimal_row_match(values)
    duals = cm.certify_assignment(CostMatrix.from_array(values), row_match).witness
    assigned = values[np.arange(SIDE), row_match]
    swapped = values[0, row_match] + values[np.arange(SIDE), row_match[0]]  # rows 0 and k trade columns
    k = int(np.argmax(swapped - assigned - assigned[0]))  # the swap that costs the most more
    worse = row_match.copy()
    worse[[0, k]] = worse[[k, 0]]
    held = CostMatrix.from_array(values, copy=False)
    twin = CostMatrix.from_array(values.astype(np.float64))
    device_copy = values.astype(np.float32)
    on_held = cm.certify_assignment(held, worse, duals={"u": duals["u"], "v": duals["v"]},
                                    device_costs=device_copy)
    on_twin = cm.certify_assignment(twin, worse, duals={"u": duals["u"], "v": duals["v"]})
    increase = values[[0, k], worse[[0, k]]].sum() - values[[0, k], row_match[[0, k]]].sum()
    assert increase > 0
    assert not on_held.optimal and not on_twin.optimal
    assert (on_held.gap, on_held.reason) == (on_twin.gap, on_twin.reason)
    tampered = device_copy.copy()
    tampered[3, 3] += 1  # a copy that no longer holds the costs: checked on the host instead
    cert = cm.certify_assignment(held, row_match, duals={"u": duals["u"], "v": duals["v"]},
                                 device_costs=tampered)
    assert cert.optimal and "checksum" in cert.details and "checked on the host" in cert.details


def test_warm_up_pickling_and_a_direct_summary_never_make_the_float64_copy():
    import pickle
    from solvers.warmup import warmup_problem
    values = integer_costs(9)
    held = CostMatrix.from_array(values, copy=False)
    corner = warmup_problem(held)  # every command-line solve and scale-out task builds one
    assert corner.shape[0] <= 64 and np.array_equal(corner.costs, values[:corner.shape[0], :corner.shape[1]])
    assert not made_float64_copy(held)
    held.costs  # made: a pickle (a Dask task) leaves it behind all the same
    again = pickle.loads(pickle.dumps(held))
    assert not made_float64_copy(again) and again.checksum == held.checksum
    assert np.array_equal(again.costs, held.costs)
    direct = CostMatrix(values.astype(np.int32))  # built without from_array: summarised as integers
    assert direct.describe() == held.describe() and not made_float64_copy(direct)


@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_in_memory_detaches_a_problem_from_its_mapped_file(tmp_path, monkeypatch, dtype):
    """A large .npy is memory-mapped (here from a smaller size than usual); a program that keeps the
    problem (the explorer) takes it into memory, so rewriting the file cannot end the process (a
    mapping read past a shrunk file does)."""
    from solvers.formats import _npy
    monkeypatch.setattr(_npy, "MAP_MIN_BYTES", 1 << 20)
    path = tmp_path / "costs.npy"
    values = integer_costs(10, dtype)
    np.save(path, values)
    mapped = solvers.load(path)
    kept = mapped.in_memory()
    assert kept is not mapped and kept.in_memory() is kept
    del mapped
    np.save(path, np.zeros((2, 2), dtype))  # the file shrinks under any mapping of it
    assert np.array_equal(kept.values, values) and kept.costs.dtype == np.float64
    small = CostMatrix.from_array(values[:10, :10])
    assert small.in_memory() is small


@pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")
@pytest.mark.parametrize("dtype, shape, high", [(np.int64, (1100, 1100), 11_000), (np.int32, (700, 2100), 21_000),
                                                (np.int64, (2100, 700), 2 ** 30), (np.int64, (1024, 1024), 2 ** 52)])
def test_on_a_gpu_held_integers_go_up_as_they_are_and_the_answer_is_certified_there(dtype, shape, high):
    """float32 on the device below 2^24, float64 above; wide and tall; the optimum is scipy's."""
    values = integer_costs(8, dtype, shape, high)
    problem = CostMatrix.from_array(values, copy=False)
    rows = min(shape)
    for algorithm in ("hungarian", "auction"):
        result = solvers.solve(problem, algorithm, backend="cuda")
        match = result.row_match
        assigned = np.flatnonzero(match >= 0)
        best = linear_sum_assignment(values)
        assert assigned.size == rows and result.certificate.optimal, (algorithm, result.certificate.details)
        assert int(values[assigned, match[assigned]].sum()) == int(values[best].sum()), algorithm
        if algorithm == "hungarian":
            assert "checked on the GPU's copy" in result.certificate.details, result.certificate.details
            assert not made_float64_copy(problem)


# ---------------------------------------------------------------------------------------------
# the check in the pass that uploads (solvers.solve hands large integers over unchecked to a solver
# that declares checks_on_upload for the backend it runs on)

@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("shape", [(37, 300), (300, 37), (1, 5), (5, 1)])
def test_the_check_made_while_converting_is_the_checking_pass(dtype, shape):
    """Chunk by chunk (any chunk length), the upload's conversion finds the same least, greatest
    entry and checksum as the checking pass, and converts every entry."""
    from solvers.cost_summary import HeldScan, scan_costs
    values = integer_costs(11, dtype, shape, 2 ** 23)
    values.flat[len(values.flat) // 2] = -(2 ** 23)  # one extreme inside a later chunk
    expected = scan_costs(values, None)
    for chunk in (1, 3, 64, shape[0]):
        scan = HeldScan(values)
        out = np.full(shape, np.nan, dtype=np.float32)
        for first in range(0, shape[0], chunk):
            scan.convert(values[first:first + chunk], out[first:first + chunk], first)
        assert scan.result() == expected, chunk
        assert np.array_equal(out, values.astype(np.float32)), chunk


def test_a_deferred_check_runs_before_any_solver_that_does_not_check_while_uploading():
    values = integer_costs(12, shape=(SIDE, SIDE + 3))
    pending = CostMatrix.from_array(values, copy=False, check_now=False)
    assert pending.check_pending and np.shares_memory(pending.values, values)
    assert not CostMatrix.from_array(values, copy=False).check_pending  # checked at once by default
    result = solvers.solve(pending, "lsa", backend="cpu")
    assert result.certificate.optimal and not pending.check_pending
    assert pending.describe() == CostMatrix.from_array(values.astype(np.float64)).describe()
    values[3, 5] = 2 ** 53 + 1
    for algorithm, backend in (("lsa", "cpu"), ("hungarian", "cpu"), ("auction", "cpu")):
        bad = CostMatrix.from_array(values, copy=False, check_now=False, source="costs.npy")
        with pytest.raises(InputError) as caught:
            solvers.solve(bad, algorithm, backend=backend)
        message = str(caught.value)
        assert "costs.npy" in message and "row 3, column 5 (0-based)" in message and "\n" not in message, algorithm
    with pytest.raises(InputError, match=r"row 3, column 5 \(0-based\)"):  # from numpy through solve: the same line
        solvers.solve(values, "hungarian", backend="cpu")


SIMULATED_UPLOAD_CHECK = """
import json
import numpy as np
from scipy.optimize import linear_sum_assignment
import solvers
from solvers import problems
from solvers.assignment import hungarian
from solvers.errors import InputError
problems.LARGE_MATRIX_ENTRIES = 16  # tiny matrices take the large-matrix path (the simulator is slow)
out = {}
rng = np.random.default_rng(3)
for label, shape, high in (("wide", (5, 8), 50), ("tall", (8, 5), 50), ("ties", (6, 6), 2),
                           ("past float32", (5, 7), 2 ** 40)):
    values = rng.integers(-high, high, shape)
    problem = problems.CostMatrix.from_array(values, copy=False, check_now=False)
    pending = problem.check_pending
    result = solvers.solve(problem, "hungarian", backend="cudasim")
    rows, cols = linear_sum_assignment(values)
    twin = problems.CostMatrix.from_array(values.astype(np.float64))
    out[label] = {"pending": pending, "optimal": bool(result.certificate.optimal),
                  "value": int(values[np.flatnonzero(result.row_match >= 0),
                                      result.row_match[result.row_match >= 0]].sum()),
                  "best": int(values[rows, cols].sum()),
                  "same summary": problem.describe() == twin.describe() and problem.checksum == twin.checksum,
                  "checked in upload": bool(result.stats.get("checked_while_uploading"))}
values = rng.integers(0, 9, (5, 8))
values[4, 6] = -(2 ** 53) - 7
bad = problems.CostMatrix.from_array(values, copy=False, check_now=False, source="costs.npy")
try:
    solvers.solve(bad, "hungarian", backend="cudasim")
    out["refused"] = "solved"
except InputError as exc:
    out["refused"] = str(exc)
out["kept on the device"] = len(hungarian._DEVICE.entries)
print(json.dumps(out))
"""


def test_under_the_simulator_hungarian_checks_held_integers_in_its_upload(run_cudasim):
    """The check runs in the pass that converts a wide problem's integers for the device, the
    problem takes its summary (the same as the checking pass's), the answer is scipy's and certified; a
    bad integer is refused in one line naming it, and nothing is left on the device."""
    import json
    got = json.loads(run_cudasim(SIMULATED_UPLOAD_CHECK).strip().splitlines()[-1])
    for label in ("wide", "tall", "ties", "past float32"):
        case = got[label]
        # a tall problem is checked before its (transposed) upload: see hungarian.run
        assert case["pending"] and case["checked in upload"] == (label != "tall") and case["same summary"], \
            (label, case)
        assert case["optimal"] and case["value"] == case["best"], (label, case)
    message = got["refused"]
    assert "costs.npy" in message and "row 4, column 6 (0-based)" in message and "cannot be represented exactly" in message
    assert "\n" not in message and got["kept on the device"] == 0


@pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")
@pytest.mark.parametrize("dtype, shape, high", [(np.int64, (1100, 1300), 11_000), (np.int32, (2100, 700), 21_000),
                                                (np.int64, (1024, 1100), 2 ** 30)])
def test_on_a_gpu_solve_checks_numpy_integers_in_the_upload(dtype, shape, high):
    """solvers.solve on a numpy integer matrix: a wide one checked in the upload's pass (float32
    below 2^24; above, uploaded again as float64), a tall one before it; certified on the GPU's
    copy, scipy's optimum; a bad integer is refused in one line."""
    values = integer_costs(13, dtype, shape, high)
    result = solvers.solve(values, "hungarian", backend="cuda")
    match = result.row_match
    assigned = np.flatnonzero(match >= 0)
    best = linear_sum_assignment(values)
    wide = shape[0] <= shape[1]
    assert bool(result.stats.get("checked_while_uploading")) == wide and result.certificate.optimal, result.stats
    assert "checked on the GPU's copy" in result.certificate.details, result.certificate.details
    assert int(values[assigned, match[assigned]].sum()) == int(values[best].sum())
    if dtype == np.int64:  # (int32 cannot hold one past 2^53)
        values[shape[0] - 1, 3] = 2 ** 53 + 1
        with pytest.raises(InputError, match=rf"row {shape[0] - 1}, column 3 "):
            solvers.solve(values, "hungarian", backend="cuda")
