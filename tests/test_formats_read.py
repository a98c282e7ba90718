"""Hand-written files in every format read to the expected problems; dispatch and filters."""
from __future__ import annotations

import gzip

import numpy as np
import pytest
from scipy.sparse.csgraph import maximum_flow

import solvers

from solvers.errors import InputError
from solvers.formats import FORMATS, RESULT_FORMATS, detect, file_filters, load, save
from solvers.problems import BipartiteGraph, CostMatrix, FlowNetwork, PointSeries, SparseCosts


def write(tmp_path, name, text) -> str:
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


def edge_set(graph: BipartiteGraph) -> set:
    rows, cols = graph.edges()
    return set(zip(rows.tolist(), cols.tolist()))


def test_snap_with_comments_tabs_blank_lines_and_crlf(tmp_path):
    path = tmp_path / "web.txt"
    path.write_bytes(b"# Directed graph: web.txt\r\n# FromNodeId\tToNodeId\r\n0\t3\r\n\r\n2 1\r\n  \r\n"
                     b"  # indented comment\r\n3   0\r\n3 0\r\n")
    graph = load(path)
    assert graph.shape == (4, 4)  # max id + 1 on both sides
    assert edge_set(graph) == {(0, 3), (2, 1), (3, 0)}
    sized = load(path, n_rows=5, n_cols=7)
    assert sized.shape == (5, 7) and edge_set(sized) == edge_set(graph)


def test_snap_gz_and_other_extensions(tmp_path):
    text = "# c\n1 0\n0 2\n"
    for name in ("g.edges", "g.snap", "g.txt.gz"):
        assert edge_set(load(write(tmp_path, name, text))) == {(1, 0), (0, 2)}


def test_konect_weighted_with_header_sizes_and_timestamps(tmp_path):
    text = "% bip posweighted\n% 3 2 4\n1 1 2.5 1000\n2 4 1 1001\n1 3 -3 1002\n"
    path = write(tmp_path, "out.actor-movie", text)
    graph = load(path)
    assert graph.shape == (2, 4) and edge_set(graph) == {(0, 0), (1, 3), (0, 2)}
    costs = load(path, problem="assignment")
    assert isinstance(costs, SparseCosts)
    np.testing.assert_array_equal(costs.to_dense().costs,
                                  [[2.5, np.inf, -3, np.inf], [np.inf, np.inf, np.inf, 1]])


def test_konect_without_size_line_uses_max_ids(tmp_path):
    """Each side by its own largest id: KONECT numbers a bipartite network's sides apart (a 3 x 2
    file was read as 3 x 3, and its assignment refused as infeasible; newcomer pass)."""
    graph = load(write(tmp_path, "k.tsv.gz", "% bip unweighted\n% comment only\n1\t2\n3\t1\n"))
    assert graph.shape == (3, 2) and edge_set(graph) == {(0, 1), (2, 0)}
    tall = load(write(tmp_path, "t.tsv", "% bip weighted\n1 1 5\n1 2 3\n2 1 2\n3 1 4\n"), problem="assignment")
    assert tall.shape == (3, 2) and solvers.solve(tall, "auction", backend="cpu").value == 5
    with pytest.raises(InputError, match="no weight column"):
        load(write(tmp_path, "u.tsv", "% bip unweighted\n1 2\n"), problem="assignment")


MTX_SYMMETRIC = """%%MatrixMarket matrix coordinate integer symmetric
% lower triangle only, as the format says
3 3 4
1 1 5
2 1 7
3 2 -2

3 3 9
"""


def test_matrix_market_symmetric_expands_to_both_triangles(tmp_path):
    path = write(tmp_path, "s.mtx", MTX_SYMMETRIC)
    expected = np.array([[5, 7, 0], [7, 0, -2], [0, -2, 9]])
    assert edge_set(load(path)) == set(zip(*np.nonzero(expected)))
    costs = load(path, problem="assignment")
    np.testing.assert_array_equal(costs.to_sparse().toarray(), expected)


def test_matrix_market_gz_and_case_insensitive_banner(tmp_path):
    text = "%%matrixmarket MATRIX Coordinate Real General\n%\n2 3 2\n1 3 0.25\n2 1 -1e3\n"
    costs = load(write(tmp_path, "m.mtx.gz", text), problem="assignment")
    np.testing.assert_array_equal(costs.to_sparse().toarray(), [[0, 0, 0.25], [-1000, 0, 0]])


def test_matrix_market_flow(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n4 4 5\n1 2 3\n1 3 2.0\n2 4 2\n3 4 3\n1 2 1\n"
    path = write(tmp_path, "f.mtx", text)
    net = load(path, problem="flow")
    assert (net.n_vertices, net.source_vertex, net.sink_vertex) == (4, 0, 3)
    np.testing.assert_array_equal(net.tail, [0, 0, 1, 2, 0])  # parallel edges kept, in file order
    np.testing.assert_array_equal(net.capacity, [3, 2, 2, 3, 1])
    chosen = load(path, problem="flow", source=1, sink=2)
    assert (chosen.source_vertex, chosen.sink_vertex) == (1, 2)
    pattern = load(write(tmp_path, "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n"),
                   problem="flow")
    np.testing.assert_array_equal(pattern.capacity, [1, 1])


def test_flow_saved_as_matrix_market_keeps_its_source_and_sink(tmp_path):
    net = FlowNetwork.from_edges(4, [2, 0], [1, 3], [5, 6], source_vertex=2, sink_vertex=1)
    save(net, tmp_path / "f.mtx")
    back = load(tmp_path / "f.mtx", problem="flow")
    assert (back.source_vertex, back.sink_vertex) == (2, 1)
    assert load(tmp_path / "f.mtx", problem="flow", sink=3).sink_vertex == 3


DIMACS_MAX = """c Example from the DIMACS challenge
c
p max 6 8
n 1 s
n 6 t
c arcs
a 1 2 5
a 1 3 15
a 2 4 5
a 2 5 5

a 3 4 5
a 3 5 5
a 4 6 15
a 5 6 5
"""


def test_dimacs_max(tmp_path):
    net = load(write(tmp_path, "ex.max", DIMACS_MAX))
    assert (net.n_vertices, net.n_edges, net.source_vertex, net.sink_vertex) == (6, 8, 0, 5)
    np.testing.assert_array_equal(net.tail, [0, 0, 1, 1, 2, 2, 3, 4])
    np.testing.assert_array_equal(net.head, [1, 2, 3, 4, 3, 4, 5, 5])
    np.testing.assert_array_equal(net.capacity, [5, 15, 5, 5, 5, 5, 15, 5])
    flow = maximum_flow(net.to_sparse().astype(np.int32), 0, 5).flow_value
    assert flow == 15


def test_dimacs_assignment_rows_follow_n_lines(tmp_path):
    text = "c rows are named by n lines, in their order\np asn 6 5\nn 4\nn 1\nc\na 4 2 7\na 1 3 2\na 1 6 1.5\n" \
           "a 4 5 3\na 1 2 -1\n"
    costs = load(write(tmp_path, "x.asn", text))
    # rows: node 4, node 1; columns: nodes 2, 3, 5, 6
    np.testing.assert_array_equal(costs.to_dense().costs,
                                  [[7, np.inf, 3, np.inf], [-1, 2, np.inf, 1.5]])


def test_dense_csv_with_comments_spaces_and_forbidden_cells(tmp_path):
    text = "# 3 x 3 costs\n1, 2 ,3\n4,,inf\n\n7,8,  \n"
    costs = load(write(tmp_path, "c.csv", text))
    assert isinstance(costs, CostMatrix)
    np.testing.assert_array_equal(costs.costs, [[1, 2, 3], [4, np.inf, np.inf], [7, 8, np.inf]])


def test_npy_costs(tmp_path):
    path = tmp_path / "c.npy"
    np.save(path, np.array([[1, 2], [3, 4]], dtype=np.int32))
    np.testing.assert_array_equal(load(path).costs, [[1, 2], [3, 4]])
    np.save(path, np.asfortranarray(np.arange(6.0).reshape(2, 3)))
    np.testing.assert_array_equal(load(path).costs, np.arange(6.0).reshape(2, 3))


def test_points_csv_series_keeps_file_order_within_frames(tmp_path):
    text = "# tracked\nframe, id, x, y, z, mass\n1,7,1,1,1,9\n0,5,0,0,0,9\n2,5,2,2,2,9\n0,7,0.5,0,0,9\n"
    series = load(write(tmp_path, "p.csv", text))
    assert isinstance(series, PointSeries) and series.sizes == [2, 1, 1]
    np.testing.assert_array_equal(series.frames[0], [[0, 0, 0], [0.5, 0, 0]])
    np.testing.assert_array_equal(series.ids[0], [5, 7])
    np.testing.assert_array_equal(series.ids[2], [5])
    single = load(write(tmp_path, "q.csv", "X,Y,Z\n1,2,3\n"))
    assert single.n_frames == 1 and single.ids is None


def test_xyz_and_ascii_ply(tmp_path):
    xyz = load(write(tmp_path, "a.xyz", "# two points\n1 2 3\n\n-4.5\t5 6e-1\n"))
    np.testing.assert_array_equal(xyz.frames[0], [[1, 2, 3], [-4.5, 5, 0.6]])
    ply = ("ply\nformat ascii 1.0\ncomment hand written\nelement vertex 3\nproperty float x\nproperty float y\n"
           "property float z\nproperty int frame\nproperty int id\nend_header\n"
           "0 0 0 1 10\n1 1 1 0 10\n2 2 2 1 11\n")
    series = load(write(tmp_path, "a.ply", ply))
    assert series.sizes == [1, 2]
    np.testing.assert_array_equal(series.frames[1], [[0, 0, 0], [2, 2, 2]])
    np.testing.assert_array_equal(series.ids[1], [10, 11])


def test_npz_series(tmp_path):
    path = tmp_path / "s.npz"
    np.savez(path, points=np.arange(12.0).reshape(4, 3), frame_ptr=np.array([0, 1, 1, 4]))
    series = load(path)
    assert series.sizes == [1, 0, 3] and series.ids is None


# ----------------------------------------------------------------------------- dispatch

def test_csv_is_split_between_points_and_costs(tmp_path):
    points = write(tmp_path, "p.csv", "# c\nx,y,z\n1,2,3\n")
    costs = write(tmp_path, "c.csv", "1,2\n3,4\n")
    assert detect(points).key == "csv-points" and isinstance(load(points), PointSeries)
    assert detect(costs).key == "csv-matrix" and isinstance(load(costs), CostMatrix)
    assert detect(costs, problem="points").key == "csv-points"
    with pytest.raises(InputError) as caught:
        load(costs, problem="points")
    assert caught.value.line == 1


def test_format_override_and_prefix_names(tmp_path):
    path = write(tmp_path, "edges.dat", "0 1\n")
    with pytest.raises(InputError, match="unknown file type"):
        load(path)
    assert edge_set(load(path, format="snap")) == {(0, 1)}
    assert detect(tmp_path / "out.github").key == "konect"
    assert detect(tmp_path / "out.mtx").key == "mtx"  # a known extension wins over the prefix
    with pytest.raises(InputError, match="unknown format"):
        load(path, format="excel")


def test_file_filters():
    filters = file_filters()
    assert filters[0].startswith("All supported files (") and filters[-1] == "All files (*)"
    assert "Matrix Market (*.mtx *.mtx.gz)" in filters
    assert "KONECT bipartite network (*.tsv *.tsv.gz out.*)" in filters
    for fmt in FORMATS:
        assert fmt.file_filter() in filters
        assert fmt.problems and fmt.description and fmt.extensions
    only_points = file_filters(problem="points")
    assert all(f.startswith(("All", "XYZ", "CSV point", "PLY", "NumPy point")) for f in only_points)
    assert "Result JSON (*.json *.json.gz)" in file_filters(results=True, save=True)
    assert all(fmt.read is None for fmt in RESULT_FORMATS)


def test_saving_is_atomic_and_replaces(tmp_path):
    graph = BipartiteGraph.from_edges([0], [1], 1, 2)
    path = tmp_path / "g.mtx"
    path.write_text("old contents")
    save(graph, path)
    assert [p.name for p in tmp_path.iterdir()] == ["g.mtx"]
    assert edge_set(load(path)) == {(0, 1)}


def test_snap_loads_a_million_lines_at_numpy_speed(tmp_path):
    rng = np.random.default_rng(7)
    n_edges, n = 1_000_000, 200_000
    rows, cols = rng.integers(0, n, n_edges), rng.integers(0, n, n_edges)
    lines = np.char.add(np.char.add(rows.astype("U"), "\t"), cols.astype("U"))
    path = tmp_path / "big.txt"
    with open(path, "w") as f:
        f.write("# generated\n# FromNodeId\tToNodeId\n")
        f.write("\n".join(lines.tolist()))
        f.write("\n")
    graph = load(path)
    expected = BipartiteGraph.from_edges(rows, cols, graph.n_rows, graph.n_cols)
    assert graph.n_rows == max(rows.max(), cols.max()) + 1
    np.testing.assert_array_equal(graph.row_ptr, expected.row_ptr)
    np.testing.assert_array_equal(graph.col_ind, expected.col_ind)


def _npy_bytes(array) -> bytes:
    import io
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_one_rule_picks_how_a_file_is_read_for_an_algorithm(tmp_path):
    """solvers.formats.reading_for: the CLI, the API and the explorer read a file by this rule."""
    from solvers.formats import reading_for, readings
    square = tmp_path / "square.mtx"
    solvers.save(solvers.generate("random-bipartite", rows=6, cols=6, degree=2, seed=1), str(square))
    assert readings(square) == ("matching", "assignment", "flow")
    assert reading_for(square, "dinic") == "flow"          # the default (matching) is not what dinic solves
    assert reading_for(square, "lsa") == "assignment"
    assert reading_for(square, "gpr") == "matching"        # the default already fits: said explicitly
    assert reading_for(square, "wbpr") == "matching"       # solves flow and matching: the default wins
    assert reading_for(square, None) is None and reading_for(square, "no-such-algo") is None
    flow = tmp_path / "net.max"
    solvers.save(solvers.generate("washington-rlg", rows=3, cols=3, seed=1), str(flow))
    assert readings(flow) == ("flow",) and reading_for(flow, "gpr") is None  # solve refuses it, naming why
    assert readings(tmp_path / "notes.docx") == ()
    assert solvers.load(str(square), problem=reading_for(square, "dinic")).kind == "flow"
    import gzip
    batch = tmp_path / "b.npy"
    np.save(batch, np.zeros((2, 3, 3)))
    packed = tmp_path / "b.npy.gz"  # a batch and a single matrix load compressed alike
    packed.write_bytes(gzip.compress(batch.read_bytes()))
    assert readings(batch) == readings(packed) == ("assignment",) and len(solvers.load(packed)) == 2
    matrix = tmp_path / "m.npy.gz"
    matrix.write_bytes(gzip.compress(_npy_bytes(np.zeros((3, 3)))))
    assert readings(matrix) == ("assignment",) and solvers.load(matrix).shape == (3, 3)


def test_costs_that_matchscope_wrote_to_matrix_market_read_back_as_costs(tmp_path, capsys):
    """A .mtx that matchscope wrote from sparse costs (gen sparse-lap, an export) says so in a
    comment: read without a problem kind it is costs again, and solved as an assignment (the costs
    were dropped and a matching solved, found by a newcomer pass); a matching algorithm still reads
    it as a graph; a file without the comment reads as a graph, as before."""
    from solvers.cli import main
    costs = tmp_path / "costs.mtx"
    solvers.save(solvers.generate("sparse-lap", rows=30, cols=30, degree=3, seed=2), str(costs))
    assert "matchscope assignment" in costs.read_text().splitlines()[1]
    assert solvers.load(str(costs)).kind == "assignment"
    assert main(["solve", str(costs), "--backend", "cpu"]) == 0
    assert "problem     assignment" in capsys.readouterr().out
    assert main(["solve", str(costs), "--algo", "pr-seq", "--backend", "cpu"]) == 0
    assert "problem     matching" in capsys.readouterr().out
    plain = tmp_path / "plain.mtx"
    plain.write_text(costs.read_text().replace("%matchscope assignment: the values are costs\n", ""))
    assert solvers.load(str(plain)).kind == "matching"
