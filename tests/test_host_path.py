"""Issue 13's host path: a large dense matrix is checked, summarised and (where needed) converted in
one compiled pass (solvers.cost_summary), solve() reads the caller's float64 array in place, and
nothing describes a problem that nobody listens to. The compiled pass must refuse exactly what the
numpy checks refuse, with the same words."""
from __future__ import annotations

import numpy as np
import pytest

import solvers
from solvers.errors import InputError
from solvers.problems import LARGE_MATRIX_ENTRIES, CostMatrix, _validate_costs

SIDE = int(np.ceil(np.sqrt(LARGE_MATRIX_ENTRIES)))  # the smallest square that takes the compiled pass


def numpy_message(values) -> str | None:
    """What the plain numpy checks say about ``values`` (None: accepted)."""
    try:
        _validate_costs(np.array(values, copy=True), "m.npy", values.shape)
    except InputError as exc:
        return str(exc)
    return None


def compiled_message(values, copy=True) -> str | None:
    try:
        CostMatrix.from_array(values, source="m.npy", copy=copy)
    except InputError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("where", [(0, 0), (SIDE - 1, SIDE - 1), (SIDE // 2, 3)])
@pytest.mark.parametrize("bad", [np.nan, -np.inf])
def test_a_bad_entry_is_named_as_the_numpy_checks_name_it(where, bad):
    values = np.random.default_rng(1).random((SIDE, SIDE))
    values[where] = bad
    values[SIDE - 1, 0] = np.nan if bad == -np.inf else -np.inf  # a second bad entry, later in row order
    expected = numpy_message(values)
    assert expected is not None  # NaN is named before -inf, the first in row order of each
    assert compiled_message(values) == expected
    assert compiled_message(values, copy=False) == expected


def test_integers_beyond_2_53_and_overflowing_magnitudes_are_refused_in_the_same_words():
    ints = np.zeros((SIDE, SIDE), dtype=np.int64)
    ints[5, 7] = 2 ** 53 + 1  # float64 would round it to 2^53: the check must be exact
    assert "2^53" in compiled_message(ints) and compiled_message(ints) == numpy_message(ints)
    unsigned = np.zeros((SIDE, SIDE), dtype=np.uint64)
    unsigned[1, 2] = 2 ** 63
    assert compiled_message(unsigned) == numpy_message(unsigned)
    huge = np.ones((SIDE, SIDE))
    huge[3, 3] = 1e306
    assert "overflow" in compiled_message(huge) and compiled_message(huge) == numpy_message(huge)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint16])
@pytest.mark.parametrize("order", ["C", "F"])
def test_any_real_dtype_and_layout_gives_the_same_problem_and_summary(dtype, order):
    rng = np.random.default_rng(2)
    values = np.asarray(rng.integers(0, 50, (SIDE, SIDE + 3)), dtype=dtype, order=order)
    if np.issubdtype(dtype, np.floating):
        values[rng.random(values.shape) < 0.01] = np.inf  # forbidden pairs
        values[0, 1] = 0.5
    matrix = CostMatrix.from_array(values, copy=False)
    assert matrix.costs.dtype == np.float64 and matrix.costs.flags.c_contiguous
    assert not matrix.costs.flags.writeable
    np.testing.assert_array_equal(matrix.costs, values.astype(np.float64))
    finite = matrix.costs[np.isfinite(matrix.costs)]
    described = matrix.describe()
    assert described["min_cost"] == finite.min() and described["max_cost"] == finite.max()
    assert described["forbidden"] == int(np.isinf(matrix.costs).sum())
    assert described["integer"] == bool(np.all(finite == np.round(finite)))
    from solvers.cost_summary import finite_summary  # the checksum a GPU copy is held to, by the plain loop
    assert matrix.checksum == int(finite_summary(values.astype(np.float64).reshape(-1))[4])
    small = CostMatrix.from_array(values[:20, :20])  # the numpy path
    assert small.describe()["integer"] == bool(np.all(np.isinf(small.costs) | (small.costs == np.round(small.costs))))


def test_copy_keeps_the_problem_apart_from_the_callers_array_and_copy_false_reads_it_in_place():
    values = np.random.default_rng(3).random((SIDE, SIDE))
    kept = CostMatrix.from_array(values)
    shared = CostMatrix.from_array(values, copy=False)
    assert not np.shares_memory(kept.costs, values)
    assert np.shares_memory(shared.costs, values)
    assert values.flags.writeable  # the caller's array keeps its flags; only the Problem's view is read-only
    with pytest.raises(ValueError):
        shared.costs[0, 0] = 1.0
    values[0, 0] = -1.0
    assert kept.costs[0, 0] != -1.0


def test_a_forbidden_mask_never_writes_into_the_callers_array():
    values = np.random.default_rng(4).random((SIDE, SIDE))
    mask = np.zeros(values.shape, dtype=bool)
    mask[2, 3] = True
    matrix = CostMatrix.from_array(values, forbidden=mask, copy=False)
    assert matrix.costs[2, 3] == np.inf and np.isfinite(values[2, 3])
    assert matrix.describe()["forbidden"] == 1


def test_solve_neither_copies_nor_changes_the_callers_array_and_answers_as_scipy():
    from scipy.optimize import linear_sum_assignment
    rng = np.random.default_rng(5)
    values = rng.integers(0, 30, (SIDE, SIDE)).astype(np.float64)  # ties: many optimal assignments
    before = values.copy()
    result = solvers.solve(values, "lsa", backend="cpu")
    rows, cols = linear_sum_assignment(before)
    assert result.certificate.status == "optimal"
    assert result.value == before[rows, cols].sum()
    np.testing.assert_array_equal(values, before)
    assert values.flags.writeable


def test_nothing_describes_a_problem_when_nobody_listens(monkeypatch):
    calls = []
    original = CostMatrix.describe

    def counting(self):
        calls.append(1)
        return original(self)

    monkeypatch.setattr(CostMatrix, "describe", counting)
    costs = np.random.default_rng(6).random((30, 30))
    solvers.solve(costs, "lsa", backend="cpu")
    quiet = len(calls)
    calls.clear()

    class Listening(solvers.telemetry.Observer):
        pass

    solvers.solve(costs, "lsa", backend="cpu", observer=Listening())
    assert len(calls) == quiet + 1  # the listener's RunInfo; without one only the certificate's summary


def _backed_by_a_mapping(array) -> bool:
    while array is not None:
        if isinstance(array, np.memmap):
            return True
        array = array.base if isinstance(array.base, np.ndarray) else None
    return False


def test_a_large_npy_file_is_mapped_not_copied_and_a_truncated_one_is_one_line(tmp_path):
    from solvers.formats._npy import MAP_MIN_BYTES
    side = int(np.ceil(np.sqrt(MAP_MIN_BYTES / 8)))
    values = np.random.default_rng(7).integers(0, 1000, (side, side)).astype(np.float64)
    path = tmp_path / "big.npy"
    np.save(path, values)
    problem = solvers.load(path)
    assert _backed_by_a_mapping(problem.costs) and not problem.costs.flags.writeable
    assert problem.describe()["max_cost"] == values.max() and problem.describe()["integer"] is True
    np.testing.assert_array_equal(problem.costs[-1], values[-1])
    small = tmp_path / "small.npy"
    np.save(small, values[:10])
    assert not _backed_by_a_mapping(solvers.load(small).costs)  # read, with progress, into memory
    with open(path, "r+b") as fh:
        fh.truncate(path.stat().st_size - 8)
    with pytest.raises(InputError) as info:
        solvers.load(path)
    assert "truncated" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("seed", range(6))
def test_a_large_graph_gets_the_same_csrs_by_counting_as_by_sorting(seed, monkeypatch):
    from solvers import problems
    from solvers.problems import BipartiteGraph
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 60)), int(rng.integers(1, 60))
    edges = int(rng.integers(0, 400))
    rows, cols = rng.integers(0, n_rows, edges), rng.integers(0, n_cols, edges)  # repeats and empty sides
    if seed % 2:  # as scipy's Matrix Market reader gives them: kept as int32 on the large path
        rows, cols = rows.astype(np.int32), cols.astype(np.int32)
    if seed % 3 == 0:  # two index types at once
        cols = cols.astype(np.int32 if cols.dtype == np.int64 else np.int64)
    sorted_way = BipartiteGraph.from_edges(rows, cols, n_rows, n_cols)
    monkeypatch.setattr(problems, "LARGE_GRAPH_EDGES", 0)
    counted = BipartiteGraph.from_edges(rows, cols, n_rows, n_cols)
    for name in ("row_ptr", "col_ind", "col_ptr", "row_ind"):
        a, b = getattr(sorted_way, name), getattr(counted, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
        assert not b.flags.writeable
    result = solvers.solve(counted, "hopcroft-karp", backend="cpu")
    assert result.certificate.status == "optimal"


@pytest.mark.parametrize("seed", range(6))
def test_a_large_csr_or_csc_matrix_is_taken_as_it_is_stored(seed, monkeypatch):
    """A compressed matrix's own structure (no pass through coordinates): the same CSRs as the
    coordinate path, with repeats and unsorted lists merged, float data and explicit zeros kept as
    edges, the caller's arrays neither shared nor frozen."""
    import scipy.sparse as sp
    from solvers import problems
    from solvers.problems import BipartiteGraph
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 50)), int(rng.integers(1, 50))
    edges = int(rng.integers(1, 300))
    rows, cols = rng.integers(0, n_rows, edges), rng.integers(0, n_cols, edges)
    data = rng.normal(size=edges)
    data[:3] = 0.0  # explicit zeros are edges
    expected = BipartiteGraph.from_edges(rows, cols, n_rows, n_cols)
    monkeypatch.setattr(problems, "LARGE_GRAPH_EDGES", 0)

    def no_coordinates(*args, **kwargs):
        raise AssertionError("went through coordinates")
    monkeypatch.setattr(BipartiteGraph, "from_edges", no_coordinates)
    for fmt in ("csr", "csc"):
        matrix = sp.coo_matrix((data, (rows, cols)), shape=(n_rows, n_cols)).asformat(fmt)
        if seed % 2:  # every line listed backwards, then again forwards: repeats, unsorted
            lines = [matrix.indices[lo:hi] for lo, hi in zip(matrix.indptr[:-1], matrix.indptr[1:])]
            indices = np.concatenate([np.r_[line[::-1], line] for line in lines]).astype(np.int32)
            indptr = (2 * matrix.indptr).astype(np.int32)
            matrix = (sp.csr_matrix if fmt == "csr" else sp.csc_matrix)(
                (np.ones(indices.size), indices, indptr), shape=matrix.shape)
            assert not matrix.has_canonical_format
        before = matrix.indices.copy()
        graph = BipartiteGraph.from_sparse(matrix)
        for name in ("row_ptr", "col_ind", "col_ptr", "row_ind"):
            a, b = getattr(expected, name), getattr(graph, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), (fmt, name)
            assert not b.flags.writeable and not np.shares_memory(b, matrix.indices)
        assert matrix.indices.flags.writeable and np.array_equal(matrix.indices, before)
        held = BipartiteGraph.from_sparse(matrix, copy=False)  # solve's way: views where the types allow
        for name in ("row_ptr", "col_ind", "col_ptr", "row_ind"):
            assert np.array_equal(getattr(expected, name), getattr(held, name)) and not getattr(held, name).flags.writeable
        assert matrix.indices.flags.writeable and matrix.indptr.flags.writeable  # the caller's flags untouched


def test_a_corrupt_compressed_matrix_is_refused_in_one_line(monkeypatch):
    import scipy.sparse as sp
    from solvers import problems
    from solvers.problems import BipartiteGraph
    monkeypatch.setattr(problems, "LARGE_GRAPH_EDGES", 0)
    good = sp.csr_matrix(np.eye(4))
    for indices, indptr in ((np.array([0, 1, 2, 9]), good.indptr),         # a column past the shape
                            (np.array([0, 1, 2, -1]), good.indptr),        # a negative one
                            (good.indices, np.array([0, 2, 1, 3, 4])),     # pointers going back
                            (good.indices, np.array([0, 1, 2, 3, 7]))):    # pointers past the entries
        bad = sp.csr_matrix((4, 4))
        bad.indices, bad.indptr, bad.data = indices.astype(np.int32), indptr.astype(np.int32), np.ones(4)
        with pytest.raises(InputError) as info:
            BipartiteGraph.from_sparse(bad)
        assert "inconsistent with its shape 4 x 4" in str(info.value) and "\n" not in str(info.value)
    two_d = sp.csr_matrix((4, 4))  # a 2-D index array (it crashed the transpose when out of range)
    two_d.indices, two_d.indptr, two_d.data = np.array([[-5, 1], [2, 3]], np.int32), good.indptr, np.ones(4)
    with pytest.raises(InputError, match="inconsistent with its shape 4 x 4"):
        BipartiteGraph.from_sparse(two_d)
    swapped = sp.csr_matrix(np.eye(4))  # big-endian indices (the compiled range pass reads native order)
    swapped.indices = swapped.indices.astype(">i4")
    assert np.array_equal(BipartiteGraph.from_sparse(swapped).col_ind, [0, 1, 2, 3])
    swapped.indptr = swapped.indptr.astype(">i4")  # its pointers too: checked all the same
    assert np.array_equal(BipartiteGraph.from_sparse(swapped).row_ptr, [0, 1, 2, 3, 4])
    swapped.indptr = np.array([0, 2, 1, 3, 4], ">i4")
    with pytest.raises(InputError, match="inconsistent with its shape 4 x 4"):
        BipartiteGraph.from_sparse(swapped)
    roomy = sp.csr_matrix((4, 4))  # spare room after the last entry is legal in scipy
    roomy.indices, roomy.indptr, roomy.data = np.array([0, 1, 2, 3, 9, 9], np.int32), good.indptr, np.ones(6)
    assert np.array_equal(BipartiteGraph.from_sparse(roomy).col_ind, [0, 1, 2, 3])


@pytest.mark.parametrize("seed", range(8))
def test_the_certificate_loops_give_the_same_answers_on_all_cores(seed, monkeypatch):
    """The multi-core row loops (large problems) against the serial ones, on small ones forced
    through them: same u, same worst violation and pair, so the same certificate."""
    from solvers import certify as cm
    from solvers.problems import SparseCosts
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 25)), int(rng.integers(1, 25))
    scale = 10.0 ** rng.integers(-20, 20)
    costs = rng.integers(0, 6, (n, m)) * scale if seed % 2 else rng.random((n, m)) * scale  # ties, then reals
    costs[rng.random((n, m)) < 0.2] = np.inf
    sparse_rows, sparse_cols = np.nonzero(np.isfinite(costs))
    problems = [CostMatrix.from_array(costs),
                SparseCosts.from_edges(sparse_rows, sparse_cols, costs[sparse_rows, sparse_cols], n, m)]
    for problem in problems:
        rows = cm._CostRows(problem)
        v = rng.normal(size=m) * scale
        u = rng.normal(size=n) * scale
        serial = cm._row_min_down(*rows.args(), v), cm._max_dual_violation(*rows.args(), u, v)
        monkeypatch.setattr(cm, "PARALLEL_MIN_ENTRIES", 0)
        parallel = cm._row_min_down(*rows.args(), v), cm._max_dual_violation(*rows.args(), u, v)
        monkeypatch.undo()
        np.testing.assert_array_equal(serial[0], parallel[0])
        assert serial[1] == parallel[1]
        assert cm._first_excess(*rows.args(), parallel[0], v) == (-1, -1)  # the rounded-down u is exactly feasible


@pytest.mark.parametrize("seed", range(10))
def test_the_summary_pass_gives_the_same_summary_and_checksum_on_all_cores(seed, monkeypatch):
    from solvers import cost_summary
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    scale = 10.0 ** int(rng.integers(-300, 290))
    values = rng.integers(-3, 4, (n, m)) * scale if seed % 2 else rng.standard_normal((n, m)) * scale
    values[rng.random((n, m)) < 0.1] = np.inf
    values[0, 0] = -0.0
    for layout in (values, np.asfortranarray(values), (values / scale).astype(np.float32)):
        out_serial, out_parallel = np.empty((n, m)), np.empty((n, m))
        serial = cost_summary.scan_costs(layout, out_serial)
        monkeypatch.setattr(cost_summary, "PARALLEL_MIN_ENTRIES", 0)
        parallel = cost_summary.scan_costs(layout, out_parallel)
        monkeypatch.undo()
        assert serial == parallel
        np.testing.assert_array_equal(out_serial, out_parallel)
        flat = cost_summary.finite_summary(out_serial.reshape(-1))  # the small matrices' pass
        assert (float(flat[0]), float(flat[1]), int(flat[2]), bool(flat[3]), int(flat[4])) == serial[0]


@pytest.mark.parametrize("values, words", [
    (np.ones((SIDE, SIDE), dtype=bool), "real numbers"),
    (np.ones((SIDE, SIDE), dtype=complex), "complex numbers"),
    (np.full((SIDE, SIDE), 1.5, dtype=object), "Python objects"),
])
def test_non_real_dtypes_are_refused_in_one_line_on_both_paths(values, words):
    message = compiled_message(values)
    assert message is not None and words in message and "\n" not in message
    assert message == numpy_message(values) == compiled_message(values[:3, :3])  # the small path


def test_strided_slices_empty_and_zero_width_matrices_go_through_either_path():
    values = np.random.default_rng(8).random((2 * SIDE, 3 * SIDE))
    sliced = values[::2, ::3]  # neither C nor Fortran ordered
    matrix = CostMatrix.from_array(sliced, copy=False)
    np.testing.assert_array_equal(matrix.costs, sliced)
    assert matrix.describe()["max_cost"] == sliced.max()
    bad = sliced.copy()
    bad[4, 9] = np.nan
    assert compiled_message(bad[:, :]) == numpy_message(bad)
    strided_bad = values.copy()
    strided_bad[8, 27] = -np.inf  # position (4, 9) of the strided view
    bad[4, 9] = -np.inf
    assert compiled_message(strided_bad[::2, ::3]) == numpy_message(bad)
    assert "row 4, column 9 (0-based) is -inf" in numpy_message(bad)
    for shape in ((0, 5), (5, 0), (0, 0)):
        empty = CostMatrix.from_array(np.zeros(shape))
        assert empty.shape == shape and empty.describe()["forbidden"] == 0 and empty.checksum == 0
    big_uint = np.zeros((SIDE, SIDE), dtype=np.uint64)
    big_uint[SIDE - 1, SIDE - 2] = np.uint64(2 ** 64 - 1)
    assert compiled_message(big_uint) == numpy_message(big_uint) and "2^53" in compiled_message(big_uint)
    int32 = np.random.default_rng(9).integers(-1000, 1000, (SIDE, SIDE)).astype(np.int32)
    assert CostMatrix.from_array(int32).describe()["min_cost"] == int32.min()


def test_the_checksum_is_the_same_on_the_compiled_and_the_numpy_path(monkeypatch):
    from solvers import problems
    values = np.random.default_rng(10).random((SIDE, SIDE))
    values[5, 5] = np.inf
    compiled = CostMatrix.from_array(values)
    assert "_summary" in compiled.__dict__  # made by the validating pass
    monkeypatch.setattr(problems, "LARGE_MATRIX_ENTRIES", values.size + 1)
    plain = CostMatrix.from_array(values)
    assert "_summary" not in plain.__dict__  # made on first use
    assert plain.checksum == compiled.checksum and plain.describe() == compiled.describe()


def scipy_optimum(costs):
    """(rows, cols, row_match) of scipy's optimal assignment; the test is skipped when none is complete."""
    from scipy.optimize import linear_sum_assignment
    try:
        rows, cols = linear_sum_assignment(costs)
    except ValueError:
        pytest.skip("no complete assignment")
    row_match = np.full(costs.shape[0], -1, np.int64)
    row_match[rows] = cols
    return rows, cols, row_match


def assert_potentials_prove(problem, columns, rows, cols, gap_allowed=False):
    """The dual the certificate makes from ``columns`` is exactly feasible and (unless
    ``gap_allowed``: a start that the dense sweeps may still lower) within rounding of the optimum."""
    from solvers import certify as cm
    costs = problem.costs
    cr = cm._CostRows(problem)
    u, v = cm._feasible_duals(cr, columns)
    assert cm._first_excess(*cr.args(), u, v) == (-1, -1)
    lower = cm.float_sum(u, v)
    optimum = cm.float_sum(costs[rows, cols])
    assert lower <= optimum + 1e-9 * abs(optimum)
    if not gap_allowed:
        assert optimum - lower <= 64 * sum(costs.shape) * np.finfo(float).eps * (
            cm.float_sum(np.abs(costs[rows, cols])) + cm.float_sum(np.abs(u)) + cm.float_sum(np.abs(v)))


def sweep_case(seed: int):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(1, 30))
    scale = 10.0 ** int(rng.choice([-300, -8, 0, 6, 280]))
    costs = (rng.integers(0, 5, (n, m)) if seed % 3 == 0 else rng.random((n, m))) * scale
    if seed % 4 == 1:
        costs += 1e6 * scale  # an offset shared by every cost
    costs[rng.random((n, m)) < 0.15] = np.inf
    return costs


@pytest.mark.parametrize("seed", range(24))
def test_swept_potentials_prove_scipys_optimum_as_spfa_does(seed):
    """The sweeps (square, wide and tall, forbidden pairs, ties, offsets, 1e-300 to 1e280) settle
    on potentials that prove an independent optimum optimal; SPFA agrees."""
    from solvers import certify as cm
    from solvers.dense_potentials import dense_columns
    costs = sweep_case(seed)
    rows, cols, row_match = scipy_optimum(costs)
    problem = CostMatrix.from_array(costs)
    columns = dense_columns(problem.costs, row_match, cm.SPFA_RELATIVE)
    assert columns is not None and columns.shape == (costs.shape[1],)
    assert_potentials_prove(problem, columns, rows, cols)
    cert = cm.certify_assignment(problem, row_match)
    assert cert.optimal and "sweeps" in cert.details


@pytest.mark.parametrize("seed", range(8))
def test_a_worse_assignment_is_never_proven_optimal_after_the_sweeps(seed):
    from scipy.optimize import linear_sum_assignment
    from solvers import certify as cm
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 25))
    costs = rng.integers(0, 50, (n, n + int(rng.integers(0, 3)))).astype(np.float64)
    rows, cols = linear_sum_assignment(costs)
    optimum = costs[rows, cols].sum()
    for _ in range(20):  # a random assignment that costs more
        worse = rng.permutation(costs.shape[1])[:n]
        if costs[np.arange(n), worse].sum() > optimum:
            break
    else:
        pytest.skip("no worse assignment drawn")
    cert = cm.certify_assignment(CostMatrix.from_array(costs), worse.astype(np.int64))
    assert cert.valid and not cert.optimal
    assert cert.gap >= costs[np.arange(n), worse].sum() - optimum - 1e-9


def wide_sweep_case(seed: int):
    """A matrix wide enough (>= START_MIN_COLUMNS columns) for the start over the cheapest arcs."""
    from solvers.dense_potentials import START_MIN_COLUMNS
    rng = np.random.default_rng(500 + seed)
    m = START_MIN_COLUMNS + int(rng.integers(0, 120))
    n = {0: m, 1: int(rng.integers(1, m)), 2: m + int(rng.integers(1, 60))}[seed % 3]  # square, wide, tall
    scale = 10.0 ** int(rng.choice([-300, -8, 0, 6, 280]))
    kind = seed % 4
    if kind == 0:
        costs = rng.integers(0, 3, (n, m)).astype(np.float64)  # ties everywhere: past the arcs' cap
    elif kind == 1:
        points = rng.random((max(n, m), 3))  # distances between nearby clouds: shallow shortest paths
        costs = np.linalg.norm(points[:n, None] - (points[:m] + 0.01)[None], axis=2)
    else:
        costs = rng.random((n, m))
    costs = costs * scale
    if seed % 5 == 1:
        costs += 1e6 * scale  # an offset shared by every cost
    costs[rng.random((n, m)) < 0.1] = np.inf
    return costs


@pytest.fixture
def start_everywhere(monkeypatch):
    """The start over the cheapest arcs on matrices of any side and shape past START_MIN_COLUMNS
    (by default it runs only where it pays: large and near square)."""
    from solvers import dense_potentials
    monkeypatch.setattr(dense_potentials, "START_MIN_SIDE", 1)
    monkeypatch.setattr(dense_potentials, "START_MAX_ASPECT", 1e9)


@pytest.mark.parametrize("seed", range(24))
def test_the_start_over_the_cheapest_arcs_proves_scipys_optimum(seed, start_everywhere):
    """Square, wide and tall matrices past START_MIN_COLUMNS, ties, forbidden pairs, offsets and
    1e-300 to 1e280: the potentials over each row's cheapest arcs, and the dense sweeps from them,
    are exactly feasible duals once made so, with the optimum's gap within rounding; the dense
    sweeps from them settle on the same potentials as from zero; the certificate proves it."""
    from solvers import certify as cm
    from solvers.dense_potentials import cheapest_arc_columns, dense_columns
    costs = wide_sweep_case(seed)
    rows, cols, row_match = scipy_optimum(costs)
    problem = CostMatrix.from_array(costs)
    start = cheapest_arc_columns(problem.costs, row_match, cm.SPFA_RELATIVE)
    assert start is not None and start.shape == (costs.shape[1],)
    assert_potentials_prove(problem, start, rows, cols, gap_allowed=True)
    swept = dense_columns(problem.costs, row_match, cm.SPFA_RELATIVE, start)
    from_zero = dense_columns(problem.costs, row_match, cm.SPFA_RELATIVE)
    assert swept is not None and from_zero is not None
    np.testing.assert_allclose(swept, from_zero, rtol=1e-9, atol=1e-9 * np.abs(from_zero).max(initial=0.0))
    assert_potentials_prove(problem, swept, rows, cols)
    cert = cm.certify_assignment(problem, row_match)
    assert cert.optimal and "sweeps" in cert.details
    if seed % 4 >= 2:  # uniform random costs: the start alone proves it (distances may need the dense sweeps)
        assert "cheapest pairs" in cert.details


@pytest.mark.parametrize("seed", range(6))
def test_a_worse_wide_assignment_is_never_proven_optimal_by_the_start(seed, start_everywhere):
    """An assignment one swap worse than the optimum: whether or not the cheapest arcs hold the
    cycle that shows it, no dual proves it optimal and the gap is at least the difference."""
    from scipy.optimize import linear_sum_assignment
    from solvers import certify as cm
    rng = np.random.default_rng(700 + seed)
    n = 150 + int(rng.integers(0, 60))
    costs = (rng.random((n, n + int(rng.integers(0, 40)))) * 100).round(1 + seed % 2)
    rows, cols = linear_sum_assignment(costs)
    optimum = costs[rows, cols].sum()
    worse = cols.astype(np.int64).copy()
    for _ in range(50):
        a, b = rng.choice(n, 2, replace=False)
        worse[[a, b]] = worse[[b, a]]
        if costs[np.arange(n), worse].sum() > optimum:
            break
        worse[[a, b]] = worse[[b, a]]
    else:
        pytest.skip("no worse swap drawn")
    cert = cm.certify_assignment(CostMatrix.from_array(costs), worse)
    assert cert.valid and not cert.optimal
    assert cert.gap >= costs[np.arange(n), worse].sum() - optimum - 1e-9


@pytest.mark.parametrize("shape, started", [((600, 600), True), ((600, 640), True), ((640, 600), True),
                                            ((300, 300), False), ((600, 900), False), ((900, 600), False)])
def test_the_start_runs_where_it_pays(shape, started):
    """Large near-square matrices get the start (and on random costs it proves the optimum alone);
    small ones and clear rectangles, whose hub keeps paths short, get the dense sweeps from zero."""
    from solvers import certify as cm
    costs = np.random.default_rng(sum(shape)).random(shape)
    result = solvers.solve(costs, "lsa", backend="cpu")
    assert result.certificate.optimal
    assert ("cheapest pairs" in result.certificate.details) == started, result.certificate.details
    assert "sweeps" in result.certificate.details


def test_the_dense_row_floor_is_floor_steps_value_bit_for_bit():
    """The vectorised u_i of a dense row (an integer minimum of floor keys) equals the running
    floor_step minimum on every kind of value: ties, exact and inexact differences, subnormals,
    1e-300 to 1e300, forbidden entries, equal costs and potentials."""
    from numba import njit
    from solvers import certify as cm
    from solvers.dual_steps import floor_step

    @njit
    def by_steps(cost, v):
        best = np.inf
        for j in range(v.size):
            if cost[j] != np.inf:
                best = floor_step(cost[j], v[j], best)
        return best

    rng = np.random.default_rng(3)
    tiny = np.nextafter(0.0, 1.0)
    for trial in range(3000):
        m = int(rng.integers(1, 40))
        cost = rng.standard_normal(m) * 10.0 ** rng.integers(-310, 300)
        v = rng.standard_normal(m) * 10.0 ** rng.integers(-310, 300)
        kind = trial % 6
        if kind == 1:
            cost = np.round(cost)
        elif kind == 2:
            v = cost * (1 + rng.standard_normal(m) * 1e-15)
        elif kind == 3:
            v = cost.copy()
        elif kind == 4:
            v = np.nextafter(cost, np.inf)
        elif kind == 5:
            cost, v = rng.integers(-3, 3, m) * tiny, rng.integers(-3, 3, m) * tiny
        cost[rng.random(m) < 0.2] = np.inf
        with np.errstate(all="ignore"):
            expected, got = by_steps(cost, v), cm._dense_row_floor(cost, 0, v)
        assert got == expected or (np.isnan(got) and np.isnan(expected)), (trial, cost, v)
        if expected == 0.0:
            assert np.signbit(got) == np.signbit(expected) or expected == got


def test_lsa_hands_scipy_the_callers_matrix_without_a_copy():
    """scipy's linear_sum_assignment copies a read-only matrix whole; solve(C, "lsa") reads C in
    place (peak memory well under one n x n copy), leaves C as it was, and a read-only mapped
    file still solves (scipy then copies, as before)."""
    import tracemalloc
    from solvers.problems import writeable_alias
    costs = np.random.default_rng(4).random((600, 600))
    before = costs.copy()
    solvers.solve(costs, "lsa", backend="cpu")  # compile and warm first
    tracemalloc.start()
    result = solvers.solve(costs, "lsa", backend="cpu")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert result.certificate.optimal
    assert peak < costs.nbytes / 2, f"{peak} bytes at the peak"
    assert np.array_equal(costs, before) and costs.flags.writeable
    frozen = before.copy()
    frozen.setflags(write=False)
    assert writeable_alias(frozen) is frozen  # read-only memory is never made writeable
    view = frozen.view()
    assert not view.flags.writeable


@pytest.mark.parametrize("seed", range(10))
def test_the_multicore_graph_build_equals_scipys_conversions(seed, monkeypatch):
    """compress (sort and merge by lines) and transpose against scipy's coo -> csr and csr -> csc,
    with many chunks per line, empty lines, repeats, int32 and int64 indices."""
    import scipy.sparse as sp
    from solvers import graph_build
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    edges = int(rng.integers(0, 3000))
    dtype = (np.int32, np.int64)[seed % 2]
    rows = rng.integers(0, n_rows, edges).astype(dtype)
    cols = rng.integers(0, max(1, n_cols // 2), edges).astype(dtype)  # half the columns empty
    ptr, ind = graph_build.compress(rows, cols, n_rows, dtype)
    reference = sp.csr_matrix((np.ones(edges), (rows, cols)), shape=(n_rows, n_cols))
    reference.sum_duplicates()
    assert ptr.dtype == ind.dtype == dtype
    np.testing.assert_array_equal(ptr, reference.indptr)
    np.testing.assert_array_equal(ind, reference.indices)
    col_ptr, row_ind = graph_build.transpose(ptr, ind, n_cols)
    by_cols = reference.tocsc()
    by_cols.sort_indices()
    np.testing.assert_array_equal(col_ptr, by_cols.indptr)
    np.testing.assert_array_equal(row_ind, by_cols.indices)
    # the two-step transpose (many threads, many columns), with buckets of 4 and 2^16 columns and
    # 1 to 5 row chunks (as many threads would cut them)
    for bits, chunks in ((2, 1 + seed % 5), (16, 3)):
        monkeypatch.setattr(graph_build, "BUCKET_BITS", bits)
        bounds = np.sort(np.r_[0, rng.integers(0, n_rows + 1, chunks - 1), n_rows]).astype(np.int64)
        col_ptr, row_ind = graph_build._transpose_by_buckets(ptr, ind, n_cols, bounds)
        assert col_ptr.dtype == row_ind.dtype == dtype
        np.testing.assert_array_equal(col_ptr, by_cols.indptr)
        np.testing.assert_array_equal(row_ind, by_cols.indices)


def _random_matching(rng, graph, fraction):
    """A valid matching of part of a greedy one: maximum, or short of it by some augmenting paths."""
    row_match = np.full(graph.n_rows, -1, np.int64)
    used = np.zeros(graph.n_cols, bool)
    for r in rng.permutation(graph.n_rows):
        if rng.random() > fraction:
            continue
        for c in graph.col_ind[graph.row_ptr[r]:graph.row_ptr[r + 1]]:
            if not used[c]:
                row_match[r], used[c] = c, True
                break
    return row_match


@pytest.mark.parametrize("seed", range(12))
def test_the_matching_certificate_is_the_same_on_all_cores(seed, monkeypatch):
    """The König cover's multi-core loops (large graphs) against the serial ones on small graphs
    forced through them, each run five times (the level-by-level search lets threads race to a
    vertex): the same certificate, cover and verdict; maximum matchings from Hopcroft-Karp,
    greedy ones that are not, and a pair that is no edge."""
    from solvers import konig
    from solvers.certify import certify_matching
    from solvers.problems import BipartiteGraph
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(1, 300)), int(rng.integers(1, 300))
    edges = int(rng.integers(0, 4 * max(n_rows, n_cols)))
    graph = BipartiteGraph.from_edges(rng.integers(0, n_rows, edges), rng.integers(0, n_cols, edges), n_rows, n_cols)
    matchings = [solvers.solve(graph, "hopcroft-karp", backend="cpu").row_match,
                 _random_matching(rng, graph, 1.0), _random_matching(rng, graph, 0.5)]
    if edges:
        bad = matchings[1].copy()
        r = int(rng.integers(0, n_rows))
        bad[r] = next((c for c in range(n_cols) if c not in bad and c not in graph.col_ind[
            graph.row_ptr[r]:graph.row_ptr[r + 1]]), -1)
        matchings.append(bad)
    cases = []
    for row_match in matchings:  # without col_match, with the agreeing one, with a broken one
        col_match = np.full(n_cols, -1, dtype=np.int64)
        matched = np.flatnonzero(row_match >= 0)
        if np.unique(row_match[matched]).size == matched.size:
            col_match[row_match[matched]] = matched
        cases += [(row_match, None), (row_match, col_match)]
        if n_cols > 1:
            broken = col_match.copy()
            broken[[0, n_cols - 1]] = broken[[n_cols - 1, 0]] if rng.random() < 0.5 else (n_rows, -1)
            cases.append((row_match, broken))
    for row_match, col_match in cases:
        monkeypatch.setattr(konig, "PARALLEL_MIN_EDGES", 1 << 62)
        serial = certify_matching(graph, row_match, col_match)
        monkeypatch.setattr(konig, "PARALLEL_MIN_EDGES", 0)
        for _ in range(5):
            parallel = certify_matching(graph, row_match, col_match)
            assert (parallel.valid, parallel.optimal, parallel.gap, parallel.details) == \
                (serial.valid, serial.optimal, serial.gap, serial.details)
            for key in ("cover_rows", "cover_cols"):
                if key in serial.witness:
                    np.testing.assert_array_equal(parallel.witness[key], serial.witness[key])
    assert certify_matching(graph, matchings[0]).optimal


@pytest.mark.parametrize("shape", [(1, 1), (64, 256), (65, 257), (130, 700), (700, 130)])
def test_the_conversion_copies_every_entry_whatever_the_layout(shape):
    """cost_summary.convert: rows in row order, a transposed view (a tall problem's upload) in tiles
    whose edges fall inside the matrix; every entry lands where it belongs, converted."""
    from solvers.cost_summary import TILE_COLS, TILE_ROWS, convert
    rng = np.random.default_rng(shape[0] * 1000 + shape[1])
    base = rng.integers(-2**40, 2**40, (shape[1], shape[0]))
    sources = [base.T, np.ascontiguousarray(base.T), base.T[::-1], np.asfortranarray(base.T).astype(np.int32),
               base.T[: max(1, shape[0] - 3)], (base.T * 0.5)]
    for source in sources:
        for dtype in (np.float64, np.float32):
            out = np.empty(source.shape, dtype=dtype)
            convert(source, out)
            np.testing.assert_array_equal(out, source.astype(dtype))
    assert TILE_ROWS < 700 and TILE_COLS < 700  # the larger shapes span several tiles both ways
