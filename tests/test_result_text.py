"""print(result) is one plain line: what was solved, how, the value and its proof; never the
dataclass's dump of arrays and tolerances (found by a newcomer pass)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import solvers


def assert_plain(text: str) -> None:
    assert "\n" not in text and "array(" not in text and "Result(" not in text and "{" not in text, text


def test_an_assignment_prints_as_one_plain_line():
    result = solvers.solve([[4, 1, 3], [2, 0, 5], [3, 2, 2]], "lsa", backend="cpu")
    text = str(result)
    assert_plain(text)
    assert text.startswith("assignment solved by lsa on cpu in ") and ": value 5; " in text
    assert text.endswith(result.certificate.summary()) and "certified optimal" in text


def test_a_matching_and_a_failed_proof_say_so():
    result = solvers.solve(np.eye(4), "hopcroft-karp", backend="cpu")
    assert_plain(str(result))
    assert "matching solved by hopcroft-karp on cpu" in str(result) and "value 4;" in str(result)
    certificate = solvers.result.Certificate("dual-potentials", True, False, gap=2.5, reason="no dual closes it")
    assert str(certificate) == "dual-potentials: valid, not proven optimal, gap 2.5 (no dual closes it)"


def test_a_tracked_series_prints_as_one_plain_line():
    rng = np.random.default_rng(0)
    frames = [rng.random((30, 3))]
    frames += [frames[-1] + 0.01, frames[-1] + 0.02]
    tracks = solvers.track(frames, "lsa", backend="cpu")
    text = str(tracks)
    assert_plain(text)
    assert text == "3 frames, 60 links in 30 tracks; 2 of 2 frame pairs certified (lsa)"


def test_a_point_series_prints_as_one_plain_line():
    """print(series) says its frames, points and ids; it dumped every frame's array."""
    series = solvers.PointSeries.from_frames([np.zeros((3, 3)), np.ones((2, 3))], [np.arange(3), np.arange(2)],
                                             source="x.csv")
    assert str(series) == repr(series) == ("PointSeries(2 frames of 2 to 3 points (5 in all), with ground-truth ids, "
                                           "from x.csv)")
    big = solvers.PointSeries.from_frames([np.zeros((1500, 3))] * 400)
    assert_plain(str(big))
    assert str(big) == "PointSeries(400 frames of 1,500 points, no ids)"
    assert str([solvers.PointSeries.from_frames([np.zeros((1, 3))])]) == "[PointSeries(1 frame of 1 point, no ids)]"


def test_every_problem_prints_as_one_plain_line_without_its_arrays():
    """print(problem) dumped whole arrays (a 4000 x 4000 matrix's repr is pages long): each kind
    says what it is in words; a cost matrix's line costs no pass over its costs."""
    from solvers.problems import EuclideanCosts, SparseCosts
    costs = solvers.CostMatrix.from_array(np.arange(12.0).reshape(3, 4), check_now=False)
    assert str(costs) == "CostMatrix(3 x 4 costs, float64)"
    assert "_summary" not in vars(costs)  # printing did not summarize the costs
    graph = solvers.generate("random-bipartite", rows=5, cols=6, degree=2, seed=1)
    assert str(graph) == f"BipartiteGraph(5 x 6 vertices, {graph.n_edges} edges, from <generate random-bipartite>)"
    flow = solvers.load(Path(__file__).resolve().parent.parent / "sample_graphs" / "genrmf_4x3.max")
    assert repr(flow).startswith("FlowNetwork(48 vertices, 176 edges, source 0, sink 47, from ")
    sparse = SparseCosts.from_edges([0, 1], [2, 0], [1.5, 2.5], n_rows=2, n_cols=3)
    assert str(sparse) == "SparseCosts(2 x 3, 2 allowed pairs)"
    assert str(EuclideanCosts(np.zeros((4, 3)), np.zeros((5, 3)))) == "EuclideanCosts(4 x 5 points in 3 dimensions)"
    for problem in (costs, graph, flow, sparse):
        assert_plain(str(problem))
