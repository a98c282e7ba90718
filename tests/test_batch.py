"""solve_batch (issue 15), host side: answers against scipy on every item, the certificate refusing
tampered answers, hostile inputs, device-array detection, the CLI and the batch generator.

Every expected value comes from scipy.optimize.linear_sum_assignment item by item.
"""
from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

import solvers
from solvers.batch.certify_batch import PROVEN, certify_packed
from solvers.batch.cpu import solve_packed
from solvers.batch.inputs import device_input, prepare_batch
from solvers.batch.packing import PackedSolution
from solvers.cli import main
from solvers.errors import BackendUnavailable, InputError


def scipy_value(costs):
    """scipy's optimal value, or None when scipy finds the item infeasible."""
    costs = np.asarray(costs, dtype=np.float64)
    try:
        rows, cols = linear_sum_assignment(costs)
    except ValueError:
        return None
    return float(costs[rows, cols].sum())


def check_against_scipy(items, result):
    """Every item: scipy's value (exact for integers, to rounding for reals), a valid assignment of
    that value in the item's own orientation, and a certificate."""
    for b, costs in enumerate(items):
        costs = np.asarray(costs, dtype=np.float64)
        expected = scipy_value(costs)
        if expected is None:
            assert result.infeasible[b] and not result.certified[b], (b, result.status[b])
            continue
        assert result.certified[b], (b, result.status[b])
        assignment = np.asarray(result.assignments[b])
        assert assignment.shape == (costs.shape[0],)
        rows = np.flatnonzero(assignment >= 0)
        assert rows.size == min(costs.shape)
        assert np.unique(assignment[rows]).size == rows.size
        got = float(costs[rows, assignment[rows]].sum())
        finite = costs[np.isfinite(costs)]
        if np.all(finite == np.round(finite)) and np.all(np.abs(finite) < 2**40):  # small integers: exact
            assert got == expected == result.values[b], b
        else:
            assert got == pytest.approx(expected, rel=1e-12, abs=0), b
            assert result.values[b] == pytest.approx(expected, rel=1e-12, abs=0), b


@pytest.mark.parametrize("shape", [(40, 12, 12), (40, 9, 15), (40, 15, 9), (5, 1, 30), (5, 30, 1), (3, 1, 1)])
@pytest.mark.parametrize("kind", ["integer-ties", "real", "float32"])
def test_regular_batches_match_scipy(shape, kind):
    rng = np.random.default_rng(hash((shape, kind)) % 2**32)
    if kind == "integer-ties":
        costs = rng.integers(0, 3, shape).astype(np.int64)  # many ties
    elif kind == "real":
        costs = rng.random(shape) * 100 - 50
    else:
        costs = rng.random(shape).astype(np.float32)
    result = solvers.solve_batch(costs, backend="cpu")
    assert result.backend == "cpu" and result.all_certified
    assert isinstance(result.assignments, np.ndarray) and result.assignments.shape == shape[:2]
    assert result.u.shape == shape[:2] and result.v.shape == (shape[0], shape[2])
    check_against_scipy(list(costs), result)


def test_ragged_batch_with_forbidden_pairs_and_infeasible_items():
    rng = np.random.default_rng(7)
    items = []
    for b in range(300):
        n, m = (int(x) for x in rng.integers(0, 9, 2))
        a = rng.integers(0, 5, (n, m)).astype(float) if b % 2 else rng.random((n, m))
        if b % 3 == 0:
            a[rng.random(a.shape) < 0.5] = np.inf
        items.append(a)
    items.append(np.array([[1.0, np.inf], [2.0, np.inf]]))  # a column nobody may take: infeasible
    items.append(np.full((3, 2), np.inf))
    result = solvers.solve_batch(items, backend="cpu")
    assert isinstance(result.assignments, list) and len(result.assignments) == len(items)
    assert result.infeasible[-1] and result.infeasible[-2]
    assert "infeasible" in result.status[-1]
    check_against_scipy(items, result)
    assert result.all_certified


@pytest.mark.parametrize("scale", [1e-20, 1e300])
def test_extreme_scales(scale):
    rng = np.random.default_rng(3)
    costs = rng.random((30, 10, 14)) * scale
    result = solvers.solve_batch(costs, backend="cpu")
    check_against_scipy(list(costs), result)
    assert np.all(np.abs(result.gaps) <= result.tolerances)


def test_zero_size_items_and_empty_batch():
    result = solvers.solve_batch([np.zeros((0, 5)), np.zeros((4, 0)), np.zeros((0, 0)), np.ones((1, 1))],
                                 backend="cpu")
    assert result.all_certified and list(result.values) == [0.0, 0.0, 0.0, 1.0]
    assert result.assignments[1].tolist() == [-1, -1, -1, -1]
    empty = solvers.solve_batch(np.zeros((0, 3, 3)), backend="cpu")
    assert len(empty) == 0 and empty.assignments.shape == (0, 3)
    assert "0 problems" in empty.summary()["text"]


def test_duals_follow_the_rectangular_lp_in_the_original_orientation():
    rng = np.random.default_rng(5)
    costs = rng.random((20, 11, 6))  # tall: solved transposed, given back as given
    result = solvers.solve_batch(costs, backend="cpu")
    for b in range(20):
        u, v = result.u[b], result.v[b]
        assert np.all(u[:, None] + v[None, :] <= costs[b] + 1e-12)
        rows = np.flatnonzero(result.assignments[b] >= 0)
        assert np.allclose(u[rows] + v[result.assignments[b][rows]], costs[b][rows, result.assignments[b][rows]])
        assert np.all(u <= 1e-12) and np.all(np.abs(u[result.assignments[b] < 0]) <= 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 7), st.integers(1, 7), st.sampled_from([0.0, 0.3]))
def test_random_items_match_scipy(seed, n, m, forbidden):
    rng = np.random.default_rng(seed)
    costs = rng.integers(-3, 4, (8, n, m)).astype(float)
    costs[rng.random(costs.shape) < forbidden] = np.inf
    check_against_scipy(list(costs), solvers.solve_batch(costs, backend="cpu"))


# ---------------------------------------------------------------------------------------------
# the certificate refuses wrong answers


def _solved(costs):
    batch = prepare_batch(costs)
    return batch.packed, solve_packed(batch.packed)


def _tampered(solution, **changes):
    fields = {k: np.array(getattr(solution, k)) for k in ("row_to_col", "u", "v", "iterations", "status")}
    fields.update(changes)
    return PackedSolution(**fields)


def test_certificate_accepts_the_solver_and_refuses_tampering():
    rng = np.random.default_rng(11)
    packed, solution = _solved(rng.random((4, 6, 9)))
    assert np.all(certify_packed(packed, solution)["reason"] == PROVEN)
    wrong_u = np.array(solution.u)
    wrong_u[0] += 0.5  # item 0, row 0: breaks feasibility
    assert certify_packed(packed, _tampered(solution, u=wrong_u))["reason"][0] not in (PROVEN,)
    lowered = np.array(solution.u)
    lowered[6] -= 0.25  # item 1: feasible but loose, so not tight
    assert certify_packed(packed, _tampered(solution, u=lowered))["reason"][1] != PROVEN
    swapped = np.array(solution.row_to_col)
    swapped[12], swapped[13] = swapped[13], swapped[12]  # item 2: another assignment, duals kept
    assert certify_packed(packed, _tampered(solution, row_to_col=swapped))["reason"][2] != PROVEN
    twice = np.array(solution.row_to_col)
    twice[19] = twice[18]  # item 3: a column used twice
    checked = certify_packed(packed, _tampered(solution, row_to_col=twice))
    assert checked["reason"][3] == 2 and list(checked["reason"][:3]) == [PROVEN] * 3
    lying = np.array(solution.status)
    lying[0] = 1  # claims infeasible while a complete assignment exists
    assert certify_packed(packed, _tampered(solution, status=lying))["reason"][0] == 9


def test_a_broken_dual_is_reported_at_its_first_pair_past_forbidden_ones():
    """The row pass counts violations in one straight loop, then names the first: row 1's first
    violated pair, in column order, after a forbidden pair that an infinite slack must not count."""
    costs = np.array([[[1.0, 5.0, 6.0, 7.0], [np.inf, 4.0, 2.0, 9.0], [3.0, 1.0, 8.0, 8.0]]])
    packed, solution = _solved(costs)
    assert certify_packed(packed, solution)["reason"][0] == PROVEN
    raised = np.array(solution.u)
    v = np.asarray(solution.v)
    slack = costs[0, 1] - raised[1] - v  # row 1's slack per column (inf where forbidden)
    raised[1] += np.sort(slack[np.isfinite(slack)])[-1] + 1.0  # every allowed pair of row 1 violated
    checked = certify_packed(packed, _tampered(solution, u=raised))
    assert (checked["reason"][0], checked["at_row"][0], checked["at_col"][0]) == (4, 1, 1)


@pytest.mark.parametrize("costs", [
    [[1.0, 2.0, 1e18], [2.0, 1.0, 1e18], [1e18, 1e18, 0.0]],   # an unassigned "big M"
    [[1e-200, 2e-200, 1.0], [2e-200, 1e-200, 1.0]],            # costs at two scales
])
def test_an_unassigned_huge_cost_does_not_loosen_the_allowance(costs):
    """The allowance follows the assigned costs and the duals, not the largest cost anywhere in the
    item: rows 0 and 1 swapped (twice the optimum) are refused, the optimum proven."""
    packed, solution = _solved(np.array([costs]))
    assert certify_packed(packed, solution)["reason"][0] == PROVEN
    swapped = np.array(solution.row_to_col)
    swapped[[0, 1]] = swapped[[1, 0]]
    checked = certify_packed(packed, _tampered(solution, row_to_col=swapped))
    assert checked["reason"][0] != PROVEN and checked["tol"][0] < 1e-10


def test_a_proof_that_passes_only_by_the_allowance_is_checked_against_an_independent_optimum():
    """Costs 1e6 + noise of 1e-5: a swap of two rows costs about 1e-5 more, inside the allowance
    (16 (n + 1) eps sum|c|, about 7e-5 here), so the duals pass; the recheck solves the item
    independently, finds it cheaper, and says so. The solver's own optimum is left proven."""
    from solvers.batch.certify_batch import CHEAPER_FOUND, recheck_doubtful_proofs
    costs = 1e6 + np.random.default_rng(8).random((2, 100, 100)) * 1e-5
    packed, solution = _solved(costs)
    assert list(recheck_doubtful_proofs(packed, solution, certify_packed(packed, solution))["reason"]) == [
        PROVEN, PROVEN]
    swapped = np.array(solution.row_to_col)
    swapped[[0, 1]] = swapped[[1, 0]]
    worse = _tampered(solution, row_to_col=swapped)
    checked = certify_packed(packed, worse)
    assert checked["reason"][0] == PROVEN  # the allowance alone forgives it
    checked = recheck_doubtful_proofs(packed, worse, checked)
    assert list(checked["reason"]) == [CHEAPER_FOUND, PROVEN] and 0 < checked["gap"][0] < 1e-4


def test_a_swap_hidden_by_one_huge_cost_is_flagged_and_refuted_by_the_recheck():
    """One row near 1e18 makes the item's allowance about 1e5: a swap of two other rows, worse by a
    few units, passes the gap's tests. The pairs within the gap of tight leave room for another
    assignment, so the item is marked (``doubt``), rechecked, and found more expensive."""
    from solvers.batch.certify_batch import CHEAPER_FOUND, recheck_doubtful_proofs
    rng = np.random.default_rng(21)
    costs = rng.integers(0, 100, (2, 30, 30)).astype(np.float64)
    costs[:, 0] += 1e18
    packed, solution = _solved(costs)
    checked = recheck_doubtful_proofs(packed, solution, certify_packed(packed, solution))
    assert list(checked["reason"]) == [PROVEN, PROVEN]  # (its duals may be flagged too: the recheck agrees)
    base = np.array(solution.row_to_col)
    item = costs[0]
    mine = base[:30]
    options = [(more, k) for k in range(2, 30)
               if (more := item[1, mine[k]] + item[k, mine[1]] - item[1, mine[1]] - item[k, mine[k]]) > 0]
    more, k = min(options)
    swapped = base.copy()
    swapped[[1, k]] = swapped[[k, 1]]
    worse = _tampered(solution, row_to_col=swapped)
    checked = certify_packed(packed, worse)
    assert checked["reason"][0] == PROVEN and checked["doubt"][0] == 1  # the allowance alone forgives it
    checked = recheck_doubtful_proofs(packed, worse, checked)
    assert list(checked["reason"]) == [CHEAPER_FOUND, PROVEN] and checked["gap"][0] == more


def test_the_integer_allowance_applies_only_to_integer_items():
    """The certificate's pass finds the largest finite cost (past a forbidden one, off the
    assignment) and whether every finite cost is an integer: an integer item's tolerance, which
    the largest cost (2^50 here) lifts above 1/2, is capped at 1/2; one fraction anywhere, or
    integers whose sums leave float64's exact range, lift the cap."""
    from solvers.batch.certify_batch import EPS
    top = 2.0 ** 50
    whole = np.array([[[3.0, np.inf, top], [2.0, 5.0, np.inf], [-7.0, 1.0, 4.0]]])
    fraction = whole.copy()
    fraction[0, 1, 1] = 5.5
    beyond = whole.copy()
    beyond[0, 0, 2] = 2.0 ** 52  # 3 rows x 2^52 >= 2^53
    tolerances = []
    for costs in (whole, fraction, beyond):
        packed, solution = _solved(costs)
        checked = certify_packed(packed, solution)
        assert checked["reason"][0] == PROVEN
        tolerances.append(checked["tol"][0])
    assert tolerances[0] == 0.5
    assert tolerances[1] >= 4 * EPS * top > 0.5 and tolerances[2] >= 4 * EPS * 2.0 ** 52
    assert max(tolerances) < 1e3  # the forbidden pairs' +inf is no cost: finite tolerances


def test_certificate_refuses_a_suboptimal_assignment_with_consistent_looking_duals():
    costs = np.array([[[1.0, 2.0], [2.0, 1.0]]])
    packed, solution = _solved(costs)
    bad = _tampered(solution, row_to_col=np.array([1, 0]), u=np.array([2.0, 2.0]), v=np.array([0.0, 0.0]))
    checked = certify_packed(packed, bad)
    assert checked["reason"][0] != PROVEN


# ---------------------------------------------------------------------------------------------
# hostile inputs: one line, naming the item


@pytest.mark.parametrize("data, words", [
    (np.zeros((3, 3)), "3-D"),
    (np.zeros((2, 2, 2, 2)), "3-D"),
    ([np.zeros((2, 2)), np.zeros(3)], "item 1 must be a 2-D"),
    ([np.zeros((2, 2)), np.array([["a", "b"]])], "item 1: costs must be real numbers, got text"),
    (np.array([[[1 + 1j]]]), "complex"),
    (np.ones((2, 2, 2), dtype=bool), "true/false"),
    ([np.ones((2, 2)), np.array([[0.0, np.nan]])], "item 1: the cost at row 0, column 1 (0-based) is NaN"),
    ([np.ones((2, 2)), np.ones((2, 2)), np.array([[0.0], [-np.inf]])], "item 2: the cost at row 1, column 0 (0-based) is -inf"),
    ([np.array([[2**60, 0]])], "item 0: integer cost"),
    ([np.array([[1e307, 0]])], "item 0: costs up to"),
    ([np.zeros((0, 10**9))], "no costs are refused"),
    ([[1, 2], [3, 4]], "item 0 must be a 2-D"),
])
def test_hostile_inputs_are_one_line(data, words):
    with pytest.raises(InputError) as caught:
        solvers.solve_batch(data, backend="cpu")
    text = str(caught.value)
    assert words in text and "\n" not in text


def test_bad_algorithm_and_backend():
    with pytest.raises(InputError, match="hungarian"):
        solvers.solve_batch(np.zeros((1, 2, 2)), algorithm="auction")
    with pytest.raises(InputError, match="backend"):
        solvers.solve_batch(np.zeros((1, 2, 2)), backend="tpu")


# ---------------------------------------------------------------------------------------------
# device arrays and DLPack


class FakeCudaArray:
    """What CuPy / numba device arrays expose; nothing here can read it."""
    __cuda_array_interface__ = {"shape": (2, 3, 3), "typestr": "<f4", "data": (0, False), "version": 3}


class FakeCpuDlpack:
    """A CPU tensor's DLPack face (what a CPU torch tensor shows numpy)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class FakeCudaDlpack:
    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA


def test_device_inputs_are_recognised_and_need_the_cuda_backend():
    assert device_input(FakeCudaArray()) and device_input(FakeCudaDlpack())
    assert not device_input(np.zeros((1, 2, 2))) and not device_input(FakeCpuDlpack(np.zeros((1, 2, 2))))
    for fake in (FakeCudaArray(), FakeCudaDlpack()):
        with pytest.raises(BackendUnavailable, match="device arrays need the cuda backend") as caught:
            solvers.solve_batch(fake, backend="cpu")
        assert "\n" not in str(caught.value)


def test_cpu_dlpack_is_read_in_place():
    costs = np.random.default_rng(2).random((5, 4, 6))
    batch = prepare_batch(FakeCpuDlpack(costs))
    assert np.shares_memory(batch.packed.costs, costs)  # wide float64: no copy at all
    check_against_scipy(list(costs), solvers.solve_batch(FakeCpuDlpack(costs), backend="cpu"))


def test_cuda_request_without_a_gpu_is_one_line():
    from solvers.targets import cuda_available
    if cuda_available():
        pytest.skip("a GPU is usable here")
    with pytest.raises(BackendUnavailable) as caught:
        solvers.solve_batch(np.zeros((1, 2, 2)), backend="cuda")
    assert "\n" not in str(caught.value)
    assert solvers.solve_batch(np.zeros((1, 2, 2)), backend="auto").backend == "cpu"


# ---------------------------------------------------------------------------------------------
# command line


def test_cli_solves_a_3d_npy_and_writes_one_line_per_item_row(tmp_path, capsys):
    path, out = tmp_path / "batch.npy", tmp_path / "x.csv"
    assert main(["gen", "dense-lap-batch", "--batch", "12", "--n", "6", "--m", "4", "--seed", "3",
                 "--out", str(path)]) == 0
    costs = np.load(path, allow_pickle=False)
    assert costs.shape == (12, 6, 4)
    assert main(["solve", str(path), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "12 of 12 optimal" in said
    # where the untimed preparation went, as a single problem's summary says it
    assert re.search(r"prepared +\S+ \S+ (compiling kernels|loading compiled kernels from the cache) "
                     r"\(not counted in the solve time\)", said), said
    with open(out) as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == 12 * 6 and list(lines[0]) == ["item", "row", "col", "cost"]
    for b in range(12):
        mine = [r for r in lines if int(r["item"]) == b]
        total = sum(float(r["cost"]) for r in mine if int(r["col"]) >= 0)
        assert total == scipy_value(costs[b])
        assert sum(int(r["col"]) < 0 for r in mine) == 2  # tall items: two rows left unassigned


def test_cli_solves_a_ragged_npz_with_json(tmp_path, capsys):
    path, out = tmp_path / "ragged.npz", tmp_path / "x.json"
    assert main(["gen", "dense-lap-batch", "--batch", "9", "--n", "1", "--max-n", "7", "--integer", "false",
                 "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["solve", str(path), "--json", "--out", str(out)]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["certified"] == 9 and record["problems"] == 9
    saved = json.loads(out.read_text())
    with np.load(path, allow_pickle=False) as archive:
        items = [archive[f"arr_{b}"] for b in range(9)]
    for b, item in enumerate(saved["items"]):
        assert item["value"] == pytest.approx(scipy_value(items[b]), rel=1e-12)


def test_cli_refuses_corrupt_batch_files_in_one_line(tmp_path, capsys):
    path = tmp_path / "batch.npy"
    np.save(path, np.random.default_rng(0).random((5, 3, 3)))
    truncated = tmp_path / "truncated.npy"
    truncated.write_bytes(path.read_bytes()[:-20])
    nan = tmp_path / "nan.npy"
    bad = np.ones((3, 2, 2))
    bad[2, 1, 0] = np.nan
    np.save(nan, bad)
    npz = tmp_path / "broken.npz"
    npz.write_bytes(b"PK\x03\x04 not really an archive")
    np.savez(tmp_path / "flat.npz", np.ones((2, 2)), np.ones(3))
    for name, words in [(truncated, "truncated"), (nan, "item 2: the cost at row 1, column 0 (0-based) is NaN"),
                        (npz, "npz"), (tmp_path / "flat.npz", "item 1")]:
        capsys.readouterr()
        assert main(["solve", str(name)]) == 2, name
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and words in err and str(name) in err, err
    assert main(["solve", str(path), "--out", str(tmp_path / "x.mtx")]) == 2
    assert main(["solve", str(path), "--algo", "auction"]) == 2


def test_gen_dense_lap_batch_is_seeded():
    from solvers.generators.batches import dense_lap_batch
    a = dense_lap_batch(3, 4, 5, seed=1)
    assert a.shape == (3, 4, 5) and np.array_equal(a, dense_lap_batch(3, 4, 5, seed=1))
    assert np.all(a == np.round(a)) and a.max() <= 4
    ragged = dense_lap_batch(5, 2, max_n=6, float32=True, integer=False)
    assert all(x.dtype == np.float32 and 2 <= x.shape[0] == x.shape[1] <= 6 for x in ragged)


@pytest.mark.parametrize("options, words", [
    (["--integer", "false", "--k", "1e308"], "beyond what float64 holds"),
    (["--integer", "false", "--float32", "true", "--k", "1e38"], "beyond what float32 holds"),
    (["--integer", "true", "--float32", "true", "--k", "1e7"], "not all exact in float32"),
])
def test_gen_refuses_costs_its_type_cannot_hold_in_one_line(options, words, tmp_path, capsys):
    """Costs that would overflow to +inf (silently forbidden pairs) or round in float32 are refused."""
    from solvers.cli import main
    out = tmp_path / "x.npy"
    assert main(["gen", "dense-lap-batch", "--batch", "3", "--n", "5", *options, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1 and "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("shape", [(30, 9, 14), (30, 14, 9), (8, 6, 2), (7, 5, 5), (0, 5, 3)])
def test_regular_answers_come_back_as_the_general_turning_gives_them(shape):
    """A regular batch's answers are read in place (wide) or inverted in one step (tall); the same as
    the item-by-item turning a ragged batch needs; infeasible items have every row at -1."""
    from solvers.batch import result as R
    rng = np.random.default_rng(sum(shape))
    costs = rng.random(shape)
    if shape[0]:
        costs[3][:, :] = np.inf                            # no allowed pair: infeasible
        if shape[1] <= shape[2]:
            costs[5][:2, :] = np.inf
            costs[5][:2, 0] = 1.0                          # two rows, one column: infeasible
        else:
            costs[5][:, :2] = np.inf
            costs[5][0, :2] = 1.0                          # tall: two columns, one row: infeasible
    batch = prepare_batch(costs)
    solution = solve_packed(batch.packed)
    checked = certify_packed(batch.packed, solution)
    got = R.unpack(batch, solution, checked, "cpu", {})
    p = batch.packed
    _, _, assign, u, v = R._turned_back(p, np.asarray(solution.row_to_col), np.asarray(solution.u),
                                        np.asarray(solution.v), batch.shapes[:, 0], batch.shapes[:, 1])
    n, m = shape[1:]
    want = assign.reshape(shape[0], n).copy()
    want[got.infeasible] = -1  # an infeasible item's partial search is no answer: every row -1
    assert np.array_equal(got.assignments, want)
    assert np.array_equal(got.u, u.reshape(shape[0], n), equal_nan=True)  # an infeasible item's duals may be nan
    assert np.array_equal(got.v, v.reshape(shape[0], m), equal_nan=True)
    if shape[0]:
        assert got.infeasible[3] and got.infeasible[5] and got.all_certified


@pytest.mark.parametrize("kind", ["float32", "float64", "int64", "mixed"])
def test_a_large_ragged_batch_is_gathered_on_all_cores_as_one_thread_would(kind, monkeypatch):
    """Past PARALLEL_GATHER entries the items are copied into the flat array by several threads; the
    result is the same array as one concatenate of the oriented items (tall ones transposed)."""
    import solvers.batch.inputs as inputs
    monkeypatch.setattr(inputs, "PARALLEL_GATHER", 1000)
    rng = np.random.default_rng(len(kind))
    shapes = [(int(n), int(m)) for n, m in rng.integers(1, 90, (60, 2))] + [(0, 7), (5, 0)]
    dtypes = {"float32": [np.float32], "float64": [np.float64], "int64": [np.int64],
              "mixed": [np.float32, np.int32, np.float64]}[kind]
    mats = [(rng.random(s) * 100).astype(dtypes[k % len(dtypes)]) for k, s in enumerate(shapes)]
    mats[3] = np.asfortranarray(mats[3])
    got = prepare_batch(mats).packed
    dtype = np.float32 if kind == "float32" else np.float64
    want = np.concatenate([inputs._oriented_flat(a, np.dtype(dtype)) for a in mats])
    assert got.costs.dtype == dtype and np.array_equal(got.costs, want)
    result = solvers.solve_batch(mats, backend="cpu")
    check_against_scipy(mats, result)


def test_a_huge_empty_batch_is_refused_before_anything_per_item_is_made(tmp_path, capsys):
    """A 129-byte .npy may declare 10^9 empty problems: refused from its three sizes (it got the
    process killed for memory when a row per item was made first)."""
    import tracemalloc
    tracemalloc.start()
    with pytest.raises(InputError, match="declares 5,000,000,000 rows and columns but holds only 0 costs"):
        prepare_batch(np.empty((10**9, 0, 5)))
    assert tracemalloc.get_traced_memory()[1] < 1 << 20
    tracemalloc.stop()
    path = tmp_path / "empty.npy"
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 0, 5), }"
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    assert main(["solve", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty.npy" in err[0] and "rows and columns with no costs are refused" in err[0]


@pytest.mark.parametrize("declared", ["sizes", "a NaN"])
def test_a_bad_batch_file_is_one_line_even_where_nothing_is_compiled_yet(tmp_path, declared):
    """In a fresh process with an empty kernel cache the command line once said "compiling the batch
    solver" and compiled it before refusing a bad file: two lines, and work for nothing. Sizes are
    checked first (a header declaring 10^9 empty items), and where the solver is still to be
    compiled, the values too (a NaN)."""
    import os
    import subprocess
    import sys
    path = tmp_path / "bad.npy"
    if declared == "sizes":
        header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 0, 5), }"
        header += " " * (63 - (len(header) + 10) % 64) + "\n"
        path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
    else:
        costs = np.random.default_rng(2).random((5, 4, 4))
        costs[2, 1, 1] = np.nan
        np.save(path, costs)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cold-cache"), XDG_CACHE_HOME=str(tmp_path / "cold"))
    run = subprocess.run([sys.executable, "-m", "solvers", "solve", str(path)], capture_output=True, text=True,
                         env=env, timeout=300)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "bad.npy" in lines[0], run.stderr
    assert ("refused" if declared != "a NaN" else "item 2: the cost at row 1, column 1 (0-based) is NaN") in lines[0]
    assert not run.stdout


@pytest.mark.parametrize("sample", ["dense-lap-batch_100x16x24.npy", "dense-lap_50.npy"])
def test_out_naming_a_folder_is_one_line_before_any_work(sample, tmp_path, capsys):
    folder = tmp_path / "results"
    folder.mkdir()
    assert main(["solve", f"sample_graphs/{sample}", "--out", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {folder}: cannot write file: it is a folder"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"] and not any(folder.iterdir())


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_items_with_no_columns_are_written_with_every_row_unassigned(suffix, tmp_path, capsys):
    path = tmp_path / "n0.npz"
    np.savez(path, np.zeros((3, 0)), np.array([[2.0, 1.0], [1.0, 5.0]]))
    out = tmp_path / f"r{suffix}"
    assert main(["solve", str(path), "--out", str(out)]) == 0
    if suffix == ".csv":
        rows = list(csv.DictReader(out.open()))
        assert [(r["item"], r["row"], r["col"], r["cost"]) for r in rows] == [
            ("0", "0", "-1", ""), ("0", "1", "-1", ""), ("0", "2", "-1", ""), ("1", "0", "1", "1.0"), ("1", "1", "0", "1.0")]
    else:
        record = json.loads(out.read_text())
        assert record["problems"] == 2 and record["certified"] == 2


@pytest.mark.parametrize("args, words", [
    (["--out", "{tmp}/missing/g.npy"], "no such folder"),
    (["--out", "{tmp}"], "it is a folder"),
    (["--k", "-1", "--out", "{tmp}/g.npy"], "k (-1) must be a finite number above 0"),
    (["--k", "nan", "--integer", "false", "--out", "{tmp}/g.npy"], "k (nan) must be a finite number above 0"),
    (["--k", "inf", "--integer", "false", "--out", "{tmp}/g.npy"], "k (inf) must be a finite number above 0"),
    (["--max-n", "6", "--out", "{tmp}/g.npy"], "written as .npz"),
])
def test_gen_dense_lap_batch_refuses_in_one_line(args, words, tmp_path, capsys):
    argv = ["gen", "dense-lap-batch", "--batch", "3", "--n", "4"] + [a.format(tmp=tmp_path) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and "Traceback" not in err[0]
    assert not list(tmp_path.glob("*.npy")) and not list(tmp_path.glob(".*"))


def test_batch_files_through_the_python_api():
    """solve_batch takes a batch file's path; solve on one says to use solve_batch; a single problem's
    file given to solve_batch, and an item chosen by anything but its number, are one line."""
    path = "sample_graphs/dense-lap-batch_100x16x24.npy"
    result = solvers.solve_batch(path, backend="cpu")
    assert len(result) == 100 and result.all_certified
    assert np.array_equal(result.values, solvers.solve_batch(np.load(path), backend="cpu").values)
    with pytest.raises(InputError, match="batch of 100 assignment problems: solve it with solvers.solve_batch"):
        solvers.solve(path)
    with pytest.raises(InputError, match="holds one problem, not a batch"):
        solvers.solve_batch("sample_graphs/dense-lap_50.npy")
    batch = solvers.load(path)
    for bad in (1.5, "a", None):
        with pytest.raises(InputError, match="chosen by its number"):
            batch.item(bad)
    assert batch.item(np.int64(3)).shape == (16, 24)


def test_an_archive_of_no_matrices_is_an_empty_batch_and_a_broken_one_is_said_plainly(tmp_path, capsys):
    empty = tmp_path / "empty.npz"
    np.savez(empty)
    assert main(["solve", str(empty), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["problems"] == 0
    broken = tmp_path / "broken.npz"
    broken.write_bytes(b"hello world")
    assert main(["solve", str(broken)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {broken}: not a readable .npz archive: it is not a complete zip file (damaged or cut short?)"]
    text = tmp_path / "text.npy"
    np.save(text, np.array([["a", "b"], ["c", "d"]]))
    assert main(["solve", str(text)]) == 2
    assert "holds text, not numbers" in capsys.readouterr().err


def test_batches_and_their_results_are_saved_through_the_python_api(tmp_path):
    batch = solvers.load("sample_graphs/dense-lap-batch_100x16x24.npy")
    solvers.save(batch, tmp_path / "copy.npy")
    assert np.array_equal(np.load(tmp_path / "copy.npy"), np.load("sample_graphs/dense-lap-batch_100x16x24.npy"))
    ragged = solvers.load(_ragged_file(tmp_path))
    solvers.save(ragged, tmp_path / "copy.npz")
    again = solvers.load(tmp_path / "copy.npz")
    assert all(np.array_equal(again.item_costs(b), ragged.item_costs(b)) for b in range(len(ragged)))
    result = solvers.solve_batch(batch, backend="cpu")
    solvers.save(result, tmp_path / "r.csv", costs=batch)
    rows = list(csv.DictReader((tmp_path / "r.csv").open()))
    assert len(rows) == 100 * 16 and sum(float(r["cost"]) for r in rows) == pytest.approx(result.values.sum())
    solvers.save(result, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["problems"] == 100
    with pytest.raises(InputError, match="written as .csv or .json"):
        solvers.save(result, tmp_path / "r.npy")
    with pytest.raises(InputError, match="is written as .npz"):
        solvers.save(ragged, tmp_path / "r.npy")


def _ragged_file(tmp_path):
    path = tmp_path / "ragged.npz"
    rng = np.random.default_rng(3)
    np.savez(path, rng.random((3, 5)), rng.random((6, 2)), rng.random((4, 4)))
    return path


@pytest.mark.parametrize("scale", [5e-324, 1e-320, 1e-315, 1e-310])
def test_subnormal_costs_are_certified(scale):
    """Costs that are all subnormal (multiples of the smallest float) are proven optimal: the
    tolerance keeps float arithmetic's absolute rounding unit (it was 0, below the bound's slack)."""
    rng = np.random.default_rng(int(-np.log10(scale)))
    costs = rng.integers(0, 9, (20, 5, 6)) * scale
    result = solvers.solve_batch(costs, backend="cpu")
    assert result.all_certified and result.certified.all()
    check_against_scipy(list(costs), result)


def test_the_simulator_backend_after_numba_is_loaded_is_one_line():
    """backend="cudasim" in a process whose numba was loaded without the simulator: one line saying
    how to start the process, not numba's own driver error."""
    import numba  # noqa: F401  (loaded without the simulator, as in this test process)
    from solvers.errors import BackendUnavailable
    with pytest.raises(BackendUnavailable, match="NUMBA_ENABLE_CUDASIM=1") as refused:
        solvers.solve_batch(np.zeros((1, 2, 2)), backend="cudasim")
    assert "\n" not in str(refused.value)


def test_the_command_line_says_how_many_problems_and_their_size_in_plain_words(tmp_path, capsys):
    from solvers.cli import main
    rng = np.random.default_rng(6)
    for name, items, words in (("one", [rng.random((3, 4))], "a batch of 1 assignment problem of 3 x 4"),
                               ("same", [rng.random((3, 4)), rng.random((3, 4))], "2 assignment problems of 3 x 4"),
                               ("mixed", [rng.random((3, 4)), rng.random((2, 5))], "2 assignment problems of different sizes")):
        path = tmp_path / f"{name}.npz"
        np.savez(path, *items)
        assert main(["solve", str(path), "--backend", "cpu"]) == 0
        assert words in capsys.readouterr().out, name


def test_memory_refusals_give_sizes_in_plain_numbers():
    from solvers.io_util import gib
    assert gib(5 * 2**30) == "5.0 GiB" and gib(74505806 * 2**30) == "74,505,806 GiB"
