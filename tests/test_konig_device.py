"""The matching certificate's passes on a GPU's copy of the graph (solvers.konig_device): the same
reached rows and columns, free column and cover as the host's passes (solvers.konig) on many random
graphs and matchings, maximum or not; a copy that no longer holds the graph (one index changed, an
offset moved) is refused by its checksum and never read further; and through solvers.solve on the
simulated GPU, the certificate says where it ran and falls back to the host, saying why."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_bipartite_matching

from solvers import konig, konig_device
from solvers.problems import BipartiteGraph
from solvers.targets import launcher_for
from checksum_reference import mixed_terms
from conftest import gpu_present


def random_case(seed: int):
    """(graph, row_match, col_match): a maximum matching, or (every third seed) one pair short."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 40)), int(rng.integers(1, 40))
    matrix = sp.random(n, m, density=float(rng.uniform(0.02, 0.3)), random_state=seed, format="csr")
    graph = BipartiteGraph.from_sparse(matrix)
    row_match = maximum_bipartite_matching(matrix, perm_type="column").astype(np.int64)
    if seed % 3 == 0 and (row_match >= 0).any():
        row_match[np.flatnonzero(row_match >= 0)[int(rng.integers(0, (row_match >= 0).sum()))]] = -1
    col_match = np.full(m, -1, np.int64)
    col_match[row_match[row_match >= 0]] = np.flatnonzero(row_match >= 0)
    return graph, row_match, col_match


def device_copy(launcher, graph, col_ind=None, row_ptr=None):
    return (launcher.upload(graph.row_ptr if row_ptr is None else row_ptr, np.int64),
            launcher.upload(graph.col_ind if col_ind is None else col_ind, np.int32))


@pytest.mark.parametrize("seed", range(60))
def test_the_device_passes_reach_what_the_host_reaches(seed):
    graph, row_match, col_match = random_case(seed)
    launcher = launcher_for("cpu")
    # the host's answer uploaded, and a solver's own int32 copy of it (G-PR keeps its matching so)
    for solver_copy in (None, (row_match.astype(np.int32), col_match.astype(np.int32))):
        reach, why = konig_device.reach_on_device(launcher, device_copy(launcher, graph), graph, row_match,
                                                  col_match, solver_copy)
        assert reach is not None, why
        row_seen, col_seen = konig.reach(graph, row_match, col_match)
        np.testing.assert_array_equal(reach.row_seen, row_seen)
        np.testing.assert_array_equal(reach.col_seen, col_seen)
        free = np.flatnonzero(col_seen & (col_match < 0))
        assert reach.free_col == (int(free[0]) if free.size else -1)
        assert reach.uncovered_row == -1  # a König cover always covers
        assert reach.matched == np.count_nonzero(row_match >= 0)
        assert reach.cover_size == np.count_nonzero(~row_seen) + np.count_nonzero(col_seen)


def test_the_reached_flags_are_read_once_and_only_when_asked_for():
    """The check counts the cover on the device; one byte a vertex comes back only when someone
    lists the cover (on 3M + 3M vertices that read cost more than every pass over the graph)."""
    graph, row_match, col_match = random_case(3)
    launcher = launcher_for("cpu")
    reach, why = konig_device.reach_on_device(launcher, device_copy(launcher, graph), graph, row_match, col_match)
    assert reach is not None, why
    before = launcher.readbacks
    row_seen, col_seen = konig.reach(graph, row_match, col_match)
    np.testing.assert_array_equal(reach.col_seen, col_seen)
    np.testing.assert_array_equal(reach.row_seen, row_seen)
    assert launcher.readbacks == before + 1


@pytest.mark.parametrize("seed", range(6))
def test_the_hosts_flat_checksums_are_numpys_sums_of_every_term(seed):
    """host_checksums (flat passes, vectorized) against numpy's terms: the column indices at their
    positions, the row offsets after them, the rows' partners (-1 included) after those; the
    columns' partners at their own positions; every type the graph and the answer come in."""
    graph, row_match, col_match = random_case(seed)
    n_edges, n_rows = graph.n_edges, graph.n_rows

    def terms(values, first):
        positions = first + np.arange(len(values), dtype=np.uint64)
        return mixed_terms(np.asarray(values, np.int64).view(np.uint64), positions)

    rows = np.concatenate([terms(graph.col_ind, 0), terms(graph.row_ptr, n_edges),
                           terms(row_match, n_edges + n_rows + 1)]).sum(dtype=np.uint64)
    cols = terms(col_match, 0).sum(dtype=np.uint64)
    for index in (np.int32, np.int64):
        copy = BipartiteGraph(n_rows, graph.n_cols, graph.row_ptr.astype(index), graph.col_ind.astype(index))
        for match in (np.int64, np.int32):
            got = konig_device.host_checksums(copy, row_match.astype(match), col_match.astype(match))
            assert got == (int(rows), int(cols), int(np.count_nonzero(row_match >= 0)))


@pytest.mark.parametrize("seed", range(4))
def test_the_checksum_summed_by_the_validating_pass_is_the_certificates(seed, monkeypatch):
    """A large canonical csr's validating pass sums the graph's share of the checksum on the way
    (BipartiteGraph.rows_checksum); the certificate then sums only the answer. That share must be
    the one it would have summed itself, whatever the index types; a matrix that is rebuilt (not
    canonical) or transposed (csc) has none and is summed in the certificate as before."""
    import scipy.sparse as sp
    from solvers import problems
    monkeypatch.setattr(problems, "LARGE_GRAPH_EDGES", 0)
    graph, row_match, col_match = random_case(seed)
    expected = konig_device.host_checksums(graph, row_match, col_match)
    matrix = graph.to_sparse()
    for index in (np.int32, np.int64):
        matrix.indices, matrix.indptr = matrix.indices.astype(index), matrix.indptr.astype(index)
        held = BipartiteGraph.from_sparse(matrix, copy=False)
        assert held.rows_checksum is not None
        assert konig_device.host_checksums(held, row_match, col_match) == expected
    ptr = matrix.indptr
    unsorted = np.concatenate([matrix.indices[a:b][::-1] for a, b in zip(ptr[:-1], ptr[1:])])
    for other in (sp.csc_matrix(matrix), sp.csr_matrix((np.ones(matrix.nnz), unsorted, ptr), shape=matrix.shape)):
        rebuilt = BipartiteGraph.from_sparse(other)
        assert konig_device.host_checksums(rebuilt, row_match, col_match) == expected
        if other.format == "csc" or not other.has_canonical_format:  # (rows of one entry stay sorted)
            assert rebuilt.rows_checksum is None


def test_a_solver_copy_of_the_matching_that_differs_from_the_answer_is_refused_by_its_checksum():
    """The passes read the solver's device copy of the matching, not the answer handed back: a copy
    that lost a pair on the rows' side, on the columns' side, or on both (then still a valid
    matching, one pair short) never certifies the answer."""
    launcher = launcher_for("cpu")
    tried = 0
    for seed in range(30):
        graph, row_match, col_match = random_case(seed)
        matched = np.flatnonzero(row_match >= 0)
        if matched.size == 0:
            continue
        tried += 1
        r = int(matched[0])
        dropped = row_match.astype(np.int32)
        dropped[r] = -1
        unmatched_col = col_match.astype(np.int32)
        unmatched_col[row_match[r]] = -1
        for copy in ((dropped, col_match.astype(np.int32)), (row_match.astype(np.int32), unmatched_col),
                     (dropped, unmatched_col)):
            reach, why = konig_device.reach_on_device(launcher, device_copy(launcher, graph), graph, row_match,
                                                      col_match, copy)
            assert reach is None and "checksum" in why, (seed, why)
    assert tried >= 20


def test_a_wild_mate_on_an_unchecked_copy_is_never_followed():
    """The search runs before the host has compared the checksums: a column whose mate is past the
    rows stops it with a fault instead of a write out of bounds."""
    row_ptr, col_ind = np.array([0, 1], np.int64), np.array([0], np.int32)
    row_level = np.array([0], np.int32)
    stamps = np.zeros(2, np.int64)
    launcher_for("cpu").launch(konig_device.LEVELS, 1, row_ptr, col_ind, np.array([10 ** 9], np.int64), row_level,
                               np.zeros(1, np.uint8), 2, stamps)
    assert stamps[1] == 1 and row_level[0] == 0


def test_a_changed_copy_is_refused_by_its_checksum():
    launcher = launcher_for("cpu")
    tried = 0
    for seed in range(40):
        graph, row_match, col_match = random_case(seed)
        if graph.n_edges < 2 or graph.n_cols < 2:
            continue  # nothing to change in a graph this small
        tried += 1
        changed = np.array(graph.col_ind, dtype=np.int32)
        changed[graph.n_edges // 2] = (changed[graph.n_edges // 2] + 1) % graph.n_cols
        moved = np.array(graph.row_ptr, dtype=np.int64)
        moved[1] = moved[1] + 1 if moved[1] < graph.n_edges else moved[1] - 1
        for copy in (device_copy(launcher, graph, col_ind=changed), device_copy(launcher, graph, row_ptr=moved)):
            reach, why = konig_device.reach_on_device(launcher, copy, graph, row_match, col_match)
            assert reach is None and "checksum" in why, (seed, why)
    assert tried >= 30


@pytest.mark.parametrize("rows, cols, n_cols, copy_cols, row_match", [
    ([0, 1, 2, 2], [0, 7, 3, 4], 8, [0, 0, 3, 7], [0, -1, 3]),  # the copy lost edge (1, 7): not maximum
    ([0, 1], [0, 1], 4, [3, 0], [3, 0]),  # the copy holds a pair that is not an edge of the graph
])
def test_changes_that_cancel_in_a_linear_checksum_are_refused(rows, cols, n_cols, copy_cols, row_match):
    """Two changed indices whose value * (2k + 1) terms cancel (found by a review): with such a
    checksum the first copy certified a non-maximum matching and the second a pair that is no edge."""
    graph = BipartiteGraph.from_edges(np.array(rows), np.array(cols), len(row_match), n_cols)
    linear = [sum(int(c) * (2 * k + 1) for k, c in enumerate(a)) % (1 << 64) for a in (graph.col_ind, copy_cols)]
    assert linear[0] == linear[1]  # the cases do cancel in the linear sum
    row_match = np.array(row_match, dtype=np.int64)
    col_match = np.full(n_cols, -1, np.int64)
    col_match[row_match[row_match >= 0]] = np.flatnonzero(row_match >= 0)
    launcher = launcher_for("cpu")
    reach, why = konig_device.reach_on_device(launcher, device_copy(launcher, graph, col_ind=np.array(copy_cols)),
                                              graph, row_match, col_match)
    assert reach is None and "checksum" in why, why


def test_a_column_out_of_range_stops_the_search_at_its_level():
    row_ptr, col_ind = np.array([0, 1, 2], np.int64), np.array([1, 99], np.int32)  # row 1: column 99 of 4
    col_match = np.array([-1, 1, -1, -1], np.int64)  # column 1's mate is row 1, reached at level 1
    row_level = np.array([0, -1], np.int32)
    stamps = np.zeros(2, np.int64)
    launcher_for("cpu").launch(konig_device.LEVELS, 2, row_ptr, col_ind, col_match, row_level,
                               np.zeros(4, np.uint8), 3, stamps)
    assert list(stamps) == [1, 2]  # grew into level 1, then the fault at level 1


def test_an_offset_past_the_edges_is_never_followed():
    graph, row_match, col_match = random_case(4)
    launcher = launcher_for("cpu")
    wild = np.array(graph.row_ptr, dtype=np.int64)
    wild[1] = 10 ** 12  # a read there would be far out of bounds
    reach, why = konig_device.reach_on_device(launcher, device_copy(launcher, graph, row_ptr=wild), graph,
                                              row_match, col_match)
    assert reach is None and "checksum" in why, why


def test_an_uncovered_edge_is_found():
    graph, row_match, col_match = random_case(2)
    launcher = launcher_for("cpu")
    row_seen, col_seen = konig.reach(graph, row_match, col_match)
    reached = np.flatnonzero(row_seen & (np.diff(graph.row_ptr) > 0))
    assert reached.size  # random_case(2) has a reached row with an edge
    r = int(reached[0])
    col_seen = col_seen.astype(np.uint8)
    col_seen[graph.col_ind[graph.row_ptr[r]]] = 0  # drop one of its columns from the cover
    row_level = np.where(row_seen, 0, -1).astype(np.int32)
    parts = (np.zeros(1, np.uint64), np.full(1, konig_device.NONE, np.int64))
    flags = np.full(graph.n_rows, 7, np.uint8)
    launcher.launch(konig_device.COVER_ROWS, graph.n_rows, np.asarray(graph.row_ptr, np.int64),
                    np.asarray(graph.col_ind, np.int32), row_level, col_seen, flags, *parts)
    first, _ = konig.first_uncovered_edge(graph, ~row_seen, col_seen.astype(bool))
    assert parts[1][0] == first and first <= r  # the first uncovered row, as the host's pass finds it
    np.testing.assert_array_equal(flags, row_seen.astype(np.uint8))  # each row's flag, one byte
    assert parts[0][0] == np.count_nonzero(~row_seen)  # the cover's rows counted


SIMULATED = """
import warnings
warnings.simplefilter("ignore", RuntimeWarning)  # the simulator's uint64 checksum wraps, as on a GPU
import numpy as np
import scipy.sparse as sp
import solvers
from solvers import certify as cm
from solvers.problems import BipartiteGraph
from solvers.targets import launcher_for

np.seterr(over="ignore")
cm.DEVICE_MIN_EDGES = 0
launcher = launcher_for("cudasim")
for seed in range(3):
    rng = np.random.default_rng(seed)
    matrix = sp.random(9, 11, density=0.3, random_state=seed, format="csr")
    result = solvers.solve(matrix, "gpr", backend="cudasim")
    host = solvers.solve(matrix, "hopcroft-karp", backend="cpu")
    assert result.certificate.optimal and result.value == host.value, (seed, result.certificate.details)
    assert "checked on the GPU's copy of the graph" in result.certificate.details, result.certificate.details
    graph = BipartiteGraph.from_sparse(matrix)
    copy = (launcher.upload(graph.row_ptr, np.int64), launcher.upload(graph.col_ind, np.int32))
    rows, cols = result.row_match.copy(), result.col_match.copy()
    rows[np.flatnonzero(rows >= 0)[0]] = -1  # one pair short: not maximum, on the GPU as on the host
    cols[:] = -1
    cols[rows[rows >= 0]] = np.flatnonzero(rows >= 0)
    on_gpu, on_host = cm.certify_matching(graph, rows, cols, copy), cm.certify_matching(graph, rows, cols)
    assert not on_gpu.optimal and on_gpu.valid and on_gpu.gap == on_host.gap
    assert on_gpu.details.startswith(on_host.details) and "GPU" in on_gpu.details, on_gpu.details
    changed = np.array(graph.col_ind, np.int32)
    changed[0] = (changed[0] + 1) % 11
    tampered = cm.certify_matching(graph, result.row_match, result.col_match,
                                   (copy[0], launcher.upload(changed, np.int32)))
    assert tampered.optimal and "checksum" in tampered.details and "checked on the host" in tampered.details
    wrong = result.row_match.copy()
    i = int(np.flatnonzero(wrong >= 0)[0])
    missing = [j for j in range(11) if j not in graph.col_ind[graph.row_ptr[i]:graph.row_ptr[i + 1]]]
    wrong[i] = missing[0]  # a pair that is not an edge: the host names it
    named = cm.certify_matching(graph, wrong, result.col_match, copy)
    assert not named.valid and named.details == cm.certify_matching(graph, wrong, result.col_match).details
print("ok")
"""


def test_under_the_simulator_the_certificate_runs_on_the_gpus_copy_and_falls_back(run_cudasim):
    assert run_cudasim(SIMULATED).strip().endswith("ok")


@pytest.mark.skipif(not gpu_present(), reason="needs an NVIDIA GPU")
def test_on_a_gpu_a_large_matching_is_certified_on_the_gpus_copy_as_on_the_host():
    import solvers
    from solvers import certify as cm
    rng = np.random.default_rng(11)
    n = 400_000
    rows = np.repeat(np.arange(n), 3)
    matrix = sp.csr_matrix((np.ones(rows.size, np.int8), (rows, rng.integers(0, n, rows.size))), shape=(n, n))
    result = solvers.solve(matrix, "gpr", backend="cuda")
    graph = BipartiteGraph.from_sparse(matrix)
    assert graph.n_edges >= cm.DEVICE_MIN_EDGES
    host = cm.certify_matching(graph, result.row_match, result.col_match)
    assert result.certificate.optimal and host.optimal
    assert "checked on the GPU's copy of the graph" in result.certificate.details, result.certificate.details
    for key in ("cover_rows", "cover_cols"):
        np.testing.assert_array_equal(result.certificate.witness[key], host.witness[key])
    rows_short = result.row_match.copy()
    rows_short[np.flatnonzero(rows_short >= 0)[::1000]] = -1  # many pairs short
    cols_short = np.full(n, -1, np.int64)
    cols_short[rows_short[rows_short >= 0]] = np.flatnonzero(rows_short >= 0)
    from solvers.targets import launcher_for
    launcher = launcher_for("cuda")
    copy = (launcher.upload(graph.row_ptr, np.int64), launcher.upload(graph.col_ind, np.int32))
    on_gpu = cm.certify_matching(graph, rows_short, cols_short, copy)
    on_host = cm.certify_matching(graph, rows_short, cols_short)
    assert not on_gpu.optimal and on_gpu.gap == on_host.gap and on_gpu.details.startswith(on_host.details)
