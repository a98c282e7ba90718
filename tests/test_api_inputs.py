"""solvers.solve / solvers.track take what a scipy, numpy, pandas or networkx user would pass, and
refuse anything else with a TypeError that says what is accepted. Answers are checked against
scipy and networkx on the same inputs."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow, min_weight_full_bipartite_matching

import solvers
from solvers import InputError
from conftest import child_pythonpath

ROOT = Path(__file__).resolve().parent.parent


class FrameLike:
    """What pandas.DataFrame offers numpy (``__array__``), without pandas installed."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def optimum(costs) -> float:
    r, c = linear_sum_assignment(costs)
    return float(np.asarray(costs)[r, c].sum())


# ---------------------------------------------------------------------------------------------
# dense array-likes: assignment costs


@settings(max_examples=25)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 7), cols=st.integers(1, 7),
       scale=st.sampled_from([1e-20, 1.0, 1e6, 1e300]), ties=st.booleans(),
       wrap=st.sampled_from(["list", "ndarray", "frame", "tuple"]))
def test_a_2d_array_like_is_assignment_costs(seed, rows, cols, scale, ties, wrap):
    rng = np.random.default_rng(seed)
    costs = (rng.integers(0, 3, (rows, cols)) if ties else rng.random((rows, cols))) * scale
    data = {"list": costs.tolist(), "ndarray": costs, "frame": FrameLike(costs),
            "tuple": tuple(tuple(row) for row in costs.tolist())}[wrap]
    result = solvers.solve(data, "lsa")
    assert result.problem_kind == "assignment" and result.certified
    assert result.value == pytest.approx(optimum(costs), rel=1e-12, abs=0)
    hungarian = solvers.solve(data, "hungarian", backend="cpu")
    assert hungarian.certified and hungarian.value == pytest.approx(result.value, rel=1e-9, abs=0)


def test_forbidden_pairs_and_the_readme_example():
    costs = [[4, 1, 3], [2, 0, 5], [3, 2, 2]]
    from solvers.choice import choose
    result = solvers.solve(costs)
    assert result.value == 5.0 and result.algorithm == choose(result_problem(costs)).algorithm
    forbidden = [[np.inf, 1.0], [2.0, np.inf]]
    assert solvers.solve(forbidden, "lsa").value == 3.0


def result_problem(costs):
    return solvers.CostMatrix.from_array(costs)


def test_a_dense_matrix_for_a_matching_or_flow_algorithm():
    rng = np.random.default_rng(4)
    pattern = (rng.random((9, 7)) < 0.3).astype(int)
    expected = int(np.count_nonzero(maximum_bipartite_matching(sp.csr_matrix(pattern), perm_type="column") >= 0))
    assert solvers.solve(pattern, "hopcroft-karp").value == expected
    assert solvers.solve(pattern.tolist(), problem="matching").value == expected
    capacity = np.triu(rng.integers(0, 9, (6, 6)), 1)
    flow = int(maximum_flow(sp.csr_matrix(capacity.astype(np.int32)), 0, 5).flow_value)
    assert solvers.solve(capacity, "dinic").value == flow
    assert solvers.solve(capacity, problem="flow").value == flow


@pytest.mark.parametrize("bad, fragment", [([[1, 2], [3]], "rectangular"), ([1, 2, 3], "2-D"),
                                           ([["a", "b"], ["c", "d"]], "real numbers"),
                                           ([[1.0, np.nan]], "NaN"), (np.zeros((2, 2, 2)), "2-D"),
                                           ([[1, 2], [3, 4]], None)])
def test_bad_arrays_are_input_errors(bad, fragment):
    if fragment is None:  # a flow network needs a square matrix, and n >= 2; this one is fine
        assert solvers.solve(bad, "dinic").value == 2
        with pytest.raises(InputError, match="square"):
            solvers.solve([[1, 2, 3], [4, 5, 6]], "dinic")
        return
    with pytest.raises(InputError, match=fragment):
        solvers.solve(bad, "lsa")


MASKED_COSTS = np.ma.masked_array([[0.0, 9.0], [9.0, 0.0]], mask=[[True, False], [False, True]])
MASKED_POINTS = np.ma.masked_array(np.random.default_rng(0).random((4, 3)), mask=np.eye(4, 3, dtype=bool))


@pytest.mark.parametrize("call, words", [
    (lambda: solvers.solve(MASKED_COSTS), "costs came as a masked array"),
    (lambda: solvers.solve(MASKED_COSTS, "hungarian", backend="cpu"), "costs came as a masked array"),
    (lambda: solvers.CostMatrix.from_array(MASKED_COSTS), "the cost matrix came as a masked array"),
    (lambda: solvers.solve_batch(np.ma.masked_array(np.ones((2, 3, 3)), mask=np.eye(3, dtype=bool)[None].repeat(2, 0)),
                                 backend="cpu"), "the batch came as"),
    (lambda: solvers.solve_batch([np.ones((2, 2)), MASKED_COSTS], backend="cpu"), "item 1 came as a masked array"),
    (lambda: solvers.match_points(MASKED_POINTS, MASKED_POINTS.data), "the first point set came as"),
    (lambda: solvers.track([MASKED_POINTS.data, MASKED_POINTS]), "frame 1 came as a masked array"),
    (lambda: solvers.solve(list(MASKED_COSTS), "lsa"), "costs came as a masked array"),
    (lambda: solvers.solve_batch([tuple(MASKED_COSTS)], backend="cpu"), "item 0 came as a masked array"),
    (lambda: solvers.SparseCosts.from_edges([0, 1], [0, 1], MASKED_COSTS[0]), "the costs came as a masked array"),
    (lambda: solvers.BipartiteGraph.from_edges(MASKED_COSTS[0].astype(int), [0, 1]), "the row indices came as"),
    (lambda: solvers.CostMatrix.from_array(MASKED_COSTS.data, forbidden=MASKED_COSTS > 5), "the forbidden mask came"),
])
def test_masked_arrays_are_refused_in_one_line_not_read_without_their_mask(call, words):
    """np.asarray drops a mask: read that way, the masked diagonal here (cost 0) would be the
    answer. A masked array is refused, saying how to fill it."""
    with pytest.raises(InputError) as caught:
        call()
    message = str(caught.value)
    assert words in message and "mask would be ignored" in message and "\n" not in message
    assert ("numpy.ma.filled" in message) == message.startswith(("costs", "the cost matrix", "the batch", "item"))


@pytest.mark.parametrize("call, words", [
    (lambda: solvers.solve([[1.0, np.ma.masked], [2.0, 3.0]]), "costs holds masked elements"),
    (lambda: solvers.CostMatrix.from_array([[1.0, 2.0], [np.ma.masked, 3.0]]), "the cost matrix holds masked"),
    (lambda: solvers.CostMatrix.from_array([[1.0, 2.0], [2.0, 3.0]], forbidden=[[False, np.ma.masked], [True, False]]),
     "the forbidden mask holds masked"),
    (lambda: solvers.match_points([[0.0, 0.0, np.ma.masked]], [[1.0, 1.0, 1.0]]), "the first point set holds masked"),
    (lambda: solvers.solve_batch([np.ones((2, 2)), [[1.0, np.ma.masked], [2.0, 3.0]]], backend="cpu"),
     "item 1 holds masked"),
    (lambda: solvers.track([[[0.0, 0.0, 0.0]], [[np.ma.masked, 0.0, 0.0]]]), "frame 1 holds masked"),
])
def test_a_masked_element_inside_nested_lists_is_refused_in_one_line_without_a_warning(call, words):
    """np.ma.masked in a list of lists: numpy reads it as NaN with a warning (or, as a bool, as True
    with none); it is refused like a masked array, and nothing is printed."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning on the way fails the test
        with pytest.raises(InputError) as caught:
            call()
    message = str(caught.value)
    assert words in message and "mask would be ignored" in message and "\n" not in message


def test_a_masked_array_with_nothing_masked_is_read_as_its_values():
    plain = np.ma.masked_array([[0.0, 9.0], [9.0, 0.0]])
    assert solvers.solve(plain, "lsa").value == 0.0


def test_big_endian_costs_past_the_compiled_passs_threshold_are_solved():
    """A >f8 matrix (a .npy file written on another machine) once crashed the compiled check with
    a numba typing error; it is converted to native order first."""
    costs = np.random.default_rng(3).random((520, 520))
    result = solvers.solve(costs.astype(">f8"), "lsa")
    assert result.certificate.optimal and result.value == pytest.approx(solvers.solve(costs, "lsa").value, rel=1e-12)


# ---------------------------------------------------------------------------------------------
# scipy.sparse: a bipartite graph, or sparse costs / a flow network when asked


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 12), cols=st.integers(1, 12),
       density=st.floats(0.0, 0.6), fmt=st.sampled_from(["csr", "csc", "coo", "lil"]))
def test_a_sparse_matrix_is_a_bipartite_graph(seed, rows, cols, density, fmt):
    matrix = sp.random(rows, cols, density=density, format=fmt, random_state=seed)
    expected = int(np.count_nonzero(maximum_bipartite_matching(sp.csr_matrix(matrix), perm_type="column") >= 0))
    result = solvers.solve(matrix, "hopcroft-karp")
    assert result.problem_kind == "matching" and result.value == expected and result.certified
    assert solvers.solve(matrix, "pr-seq").value == expected


def test_explicit_zeros_are_edges_as_scipy_reads_them():
    matrix = sp.csr_matrix((np.array([0.0, 0.0]), (np.array([0, 1]), np.array([0, 1]))), shape=(2, 2))
    assert matrix.nnz == 2
    assert solvers.solve(matrix, "hopcroft-karp").value == 2


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 10), extra=st.integers(0, 4))
def test_a_sparse_matrix_as_assignment_costs(seed, n, extra):
    rng = np.random.default_rng(seed)
    rows, cols = n, n + extra
    dense = rng.integers(1, 50, (rows, cols)).astype(float)
    keep = rng.random((rows, cols)) < 0.5
    keep[np.arange(rows), rng.permutation(cols)[:rows]] = True  # a complete assignment exists
    matrix = sp.csr_matrix(np.where(keep, dense, 0.0))
    r, c = min_weight_full_bipartite_matching(matrix)
    expected = float(np.asarray(matrix[r, c]).sum())
    for result in (solvers.solve(matrix, "lapjvsp"), solvers.solve(matrix, problem="assignment"),
                   solvers.solve(matrix, "lsa", problem="assignment")):
        assert result.problem_kind == "assignment" and result.certified
        assert result.value == pytest.approx(expected)


def test_a_square_sparse_matrix_as_a_flow_network():
    rng = np.random.default_rng(9)
    capacity = sp.random(12, 12, density=0.3, random_state=3, data_rvs=lambda k: rng.integers(1, 20, k)).tocsr()
    capacity.setdiag(0)
    capacity.eliminate_zeros()
    expected = int(maximum_flow(capacity.astype(np.int32), 0, 11).flow_value)
    assert solvers.solve(capacity, "dinic").value == expected
    assert solvers.solve(capacity, "wbpr", backend="cpu", problem="flow").value == expected


# ---------------------------------------------------------------------------------------------
# networkx bipartite graphs


def random_bipartite_graph(seed, rows, cols, p, weighted=False):
    graph = nx.bipartite.random_graph(rows, cols, p, seed=seed)
    rng = np.random.default_rng(seed)
    if weighted:
        for u, v in graph.edges:
            graph.edges[u, v]["weight"] = float(rng.integers(1, 30))
    return graph


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 10), cols=st.integers(1, 10), p=st.floats(0.05, 0.6))
def test_a_networkx_bipartite_graph_is_matched_like_networkx(seed, rows, cols, p):
    graph = random_bipartite_graph(seed, rows, cols, p)
    top = [n for n, side in graph.nodes(data="bipartite") if side == 0]
    expected = len(nx.bipartite.maximum_matching(graph, top_nodes=top)) // 2
    result = solvers.solve(graph, "hopcroft-karp")
    assert result.value == expected and result.certified
    for r, c in result.pairs():  # row i is the i-th node with bipartite 0, column j the j-th with 1
        assert graph.has_edge(top[r], [n for n, s in graph.nodes(data="bipartite") if s == 1][c])


def test_a_weighted_networkx_graph_as_assignment_costs():
    graph = random_bipartite_graph(5, 6, 6, 1.0, weighted=True)  # complete: a full assignment exists
    top = [n for n, side in graph.nodes(data="bipartite") if side == 0]
    matching = nx.bipartite.minimum_weight_full_matching(graph, top_nodes=top)
    expected = sum(graph.edges[u, matching[u]]["weight"] for u in top)
    assert solvers.solve(graph, "lapjvsp").value == expected
    assert solvers.solve(graph, problem="assignment").value == expected
    del graph.edges[top[0], 6]["weight"]
    with pytest.raises(InputError, match="weight"):
        solvers.solve(graph, "lapjvsp")


def test_networkx_graphs_that_are_not_bipartite_or_are_asked_for_flow():
    with pytest.raises(TypeError, match="bipartite attribute"):
        solvers.solve(nx.path_graph(4), "hopcroft-karp")
    with pytest.raises(TypeError, match="FlowNetwork"):
        solvers.solve(random_bipartite_graph(1, 3, 3, 0.5), "dinic")
    graph = random_bipartite_graph(1, 3, 3, 1.0)
    graph.add_edge(0, 1)  # two rows
    with pytest.raises(InputError, match="same side"):
        solvers.solve(graph, "hopcroft-karp")


# ---------------------------------------------------------------------------------------------
# paths, problems, and what is refused


def test_a_path_is_loaded(tmp_path):
    sample = ROOT / "sample_graphs" / "dense-lap_50.npy"
    expected = optimum(np.load(sample))
    assert solvers.solve(str(sample), "lsa").value == expected
    assert solvers.solve(sample, "lsa").value == expected
    square = ROOT / "sample_graphs" / "road-grid_30x30.mtx"  # square: a flow network for dinic, a graph for gpr
    assert solvers.solve(square, "dinic").problem_kind == "flow"
    assert solvers.solve(square, "pr-seq").problem_kind == "matching"
    with pytest.raises(InputError, match="absent.mtx"):
        solvers.solve(tmp_path / "absent.mtx", "lsa")


@pytest.mark.parametrize("bad", [None, 5, 2.5, {"a": 1}, {1, 2}, object(), b"x.mtx", True])
def test_anything_else_is_a_type_error_that_names_what_is_accepted(bad):
    with pytest.raises(TypeError) as caught:
        solvers.solve(bad, "lsa")
    text = str(caught.value)
    for accepted in ("2-D array", "scipy.sparse matrix", "networkx", "file path", "solvers.load"):
        assert accepted in text, text
    assert "AttributeError" not in text and "kind" not in text


def test_a_point_series_is_tracked_not_solved():
    series = solvers.generate("particles", n=5, frames=2, seed=1)
    with pytest.raises(InputError, match="solvers.track"):
        solvers.solve(series, "lsa")
    with pytest.raises(InputError, match="solvers.track"):
        solvers.solve([[1.0]], "lsa", problem="points")
    with pytest.raises(InputError, match="problem must be one of"):
        solvers.solve([[1.0]], "lsa", problem="banana")
    with pytest.raises(TypeError, match="pass the problem itself as the first argument"):
        solvers.solve([[1.0]], "lsa", problem=solvers.CostMatrix.from_array([[1.0]]))


def test_observer_must_be_an_observer_or_have_its_methods():
    with pytest.raises(TypeError, match="solvers.Observer"):
        solvers.solve([[1.0]], "lsa", observer="x")

    class DuckObserver:  # not a subclass: forwarded to, with the defaults of what it lacks
        def __init__(self):
            self.calls = []

        def on_start(self, info):
            self.calls.append("start")

        def on_iteration(self, stats):
            self.calls.append("iteration")

        def on_snapshot(self, snapshot):
            self.calls.append("snapshot")

        def on_finish(self, result):
            self.calls.append("finish")

        def should_stop(self):
            return False

    duck = DuckObserver()
    assert solvers.solve([[1.0, 2.0], [2.0, 1.0]], "hungarian", backend="cpu", observer=duck).value == 2.0
    assert duck.calls[0] == "start" and duck.calls[-1] == "finish"
    solvers.track([np.zeros((2, 3)), np.ones((2, 3))], "lsa", observer=DuckObserver())  # no on_progress: fine


def test_solve_without_an_algorithm_uses_the_choice():
    from solvers.api_inputs import as_problem
    from solvers.choice import choose
    for data, kind in ((np.eye(3), "assignment"), (sp.eye(4, format="csr"), "matching")):
        result = solvers.solve(data, backend="cpu")
        problem = as_problem(data)
        assert result.problem_kind == kind and result.algorithm == choose(problem, "cpu").algorithm


def test_optional_libraries_are_not_imported():
    code = ("import sys, solvers; solvers.solve([[1.0, 2.0], [3.0, 0.0]], 'lsa'); "
            "import scipy.sparse; solvers.solve(scipy.sparse.eye(3, format='csr'), 'hopcroft-karp'); "
            "print('networkx' in sys.modules, 'pandas' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["False", "False"]


def test_the_default_algorithm_is_told_for_whatever_solve_takes(tmp_path):
    """solvers.default_algorithm reads its argument as solve does (it raised AttributeError on a
    numpy array): it names the algorithm that solve then runs, and refuses what solve refuses."""
    costs = np.random.default_rng(1).random((6, 6))
    assert solvers.default_algorithm(costs, "cpu") == solvers.default_algorithm(solvers.CostMatrix.from_array(costs),
                                                                               "cpu")
    assert solvers.default_algorithm(costs, "cpu").algorithm == solvers.solve(costs, backend="cpu").algorithm
    graph = sp.random(30, 30, density=0.1, format="csr", random_state=1)
    chosen = solvers.default_algorithm(graph, "cpu").algorithm
    assert chosen == solvers.solve(graph, backend="cpu").algorithm == "pr-seq"
    capacities = sp.csr_matrix(np.random.default_rng(2).integers(0, 5, (8, 8)))
    assert solvers.default_algorithm(capacities, "cpu", kind="flow").algorithm == "dinic"
    sample = ROOT / "sample_graphs" / "rmat_s9.mtx"
    assert "matching problem" in solvers.default_algorithm(str(sample), "cpu").reason
    with pytest.raises(InputError, match="no such file"):
        solvers.default_algorithm(tmp_path / "missing.mtx")
    with pytest.raises(TypeError):
        solvers.default_algorithm(object())


def test_a_batch_is_refused_in_one_line_whether_given_loaded_or_as_its_file(tmp_path):
    """solve(batch) was a TypeError that listed what solve takes; the batch's path said to use
    solve_batch. Both now say the same line."""
    path = tmp_path / "b.npy"
    np.save(path, np.random.default_rng(0).random((3, 4, 4)))
    said = set()
    for data in (path, str(path), solvers.load(path)):
        for algorithm in (None, "lsa"):
            with pytest.raises(InputError) as caught:
                solvers.solve(data, algorithm, backend="cpu")
            said.add(str(caught.value))
    assert said == {f"{path}: this is a batch of 3 assignment problems: solve it with solvers.solve_batch "
                    "(or one of them: solve(batch.item(k)))"}
    built = solvers.AssignmentBatch.from_costs(np.zeros((2, 3, 3)))  # no file: no path before the words
    with pytest.raises(InputError, match=r"^this is a batch of 2 assignment problems: solve it with solvers"):
        solvers.solve(built)
    for data in (path, built):  # what solve would run on it: the same line, not an AttributeError
        with pytest.raises(InputError, match=r"this is a batch of \d assignment problems: solve it with solvers"):
            solvers.default_algorithm(data)
