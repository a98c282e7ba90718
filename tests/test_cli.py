"""The `matchscope` command line, in-process through main(argv) and as a real subprocess.

Answers are checked against scipy on inputs written here with scipy / numpy (not with
solvers.save), so a format bug cannot hide a solver or CLI bug.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow

import solvers
from solvers import registry
from solvers.cli import ProgressLine, main
from solvers.errors import InputError
from solvers.registry import Algorithm
from solvers.result import Solution
from solvers.telemetry import IterationStats, RunInfo
from conftest import child_pythonpath

ROOT = Path(__file__).resolve().parent.parent
SUMMARY_KEYS = {"problem", "algorithm", "backend", "value", "certified", "seconds", "iterations", "path",
                "gap", "optimal", "bound", "certificate", "options", "stats",
                "compile_seconds", "load_seconds", "choice"}  # every solve, as the README says


# ---------------------------------------------------------------------------------------------
# inputs written independently of solvers.formats, and their scipy answers


def random_graph(rng, rows, cols, density):
    dense = rng.random((rows, cols)) < density
    return sp.coo_matrix(dense.astype(np.int8))


def write_graph_mtx(path, matrix):
    scipy.io.mmwrite(str(path), matrix, field="pattern")
    return path


def scipy_matching_size(matrix) -> int:
    match = maximum_bipartite_matching(sp.csr_matrix(matrix), perm_type="column")
    return int(np.count_nonzero(match >= 0))


def write_dimacs_max(path, n, tail, head, cap, s, t):
    lines = [f"p max {n} {len(tail)}", f"n {s + 1} s", f"n {t + 1} t"]
    lines += [f"a {u + 1} {v + 1} {c}" for u, v, c in zip(tail, head, cap)]
    Path(path).write_text("\n".join(lines) + "\n")
    return path


def scipy_max_flow(n, tail, head, cap, s, t) -> int:
    m = sp.csr_matrix((np.asarray(cap, np.int32), (tail, head)), shape=(n, n))
    m.sum_duplicates()
    return int(maximum_flow(m, s, t).flow_value)


def run_cli(*args, env_extra=None, timeout=300):
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "solvers", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def assert_one_error_line(stderr: str, *fragments: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    assert "Traceback" not in stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def graph_file(tmp_path):
    rng = np.random.default_rng(7)
    matrix = random_graph(rng, 30, 25, 0.08)
    return write_graph_mtx(tmp_path / "graph.mtx", matrix), scipy_matching_size(matrix), matrix


# ---------------------------------------------------------------------------------------------
# solve: answers, output, exit codes


@settings(max_examples=12)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 25), cols=st.integers(1, 25),
       density=st.floats(0.0, 0.4))
def test_solve_json_value_equals_scipy_on_random_graphs(tmp_path_factory, seed, rows, cols, density):
    matrix = random_graph(np.random.default_rng(seed), rows, cols, density)
    path = write_graph_mtx(tmp_path_factory.mktemp("g") / "g.mtx", matrix)
    out = io.StringIO()
    code = _main_capturing(["solve", str(path), "--algo", "hopcroft-karp", "--json"], stdout=out)
    record = last_json(out.getvalue())
    assert code == 0
    assert record["value"] == scipy_matching_size(matrix)
    assert record["certified"] is True and record["path"] == str(path)


def _main_capturing(argv, stdout=None, stderr=None):
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout or io.StringIO(), stderr or io.StringIO()
    try:
        return main(argv)
    finally:
        sys.stdout, sys.stderr = old


def test_gen_then_solve_in_subprocesses_json_last_line(tmp_path):
    path = tmp_path / "gen.mtx"
    proc = run_cli("gen", "random-bipartite", "--rows", "60", "--cols", "50", "--degree", "2", "--seed", "4",
                   "--out", path)
    assert proc.returncode == 0, proc.stderr
    expected = scipy_matching_size(scipy.io.mmread(str(path)))
    proc = run_cli("solve", path, "--algo", "pr-seq", "--backend", "cpu", "--opt", "k=0.25", "--json")
    assert proc.returncode == 0, proc.stderr
    record = last_json(proc.stdout)
    assert SUMMARY_KEYS <= set(record)
    assert record["problem"] == "matching" and record["algorithm"] == "pr-seq" and record["backend"] == "cpu"
    assert record["value"] == expected and record["certified"] is True
    assert record["options"]["k"] == 0.25
    assert record["iterations"] >= 0 and record["seconds"] >= 0
    assert record["compile_seconds"] > 0 and record["load_seconds"] > 0  # pr-seq warms up first
    # piped: no progress line; at most the line saying the kernels are compiled (a fresh checkout)
    assert all(line.startswith("compiling pr-seq (graphs) for cpu (") for line in proc.stderr.splitlines()), proc.stderr


RUN_WITH_TEARDOWN_MARK = ("import atexit, sys; atexit.register(lambda: print('teardown', file=sys.stderr)); "
                          "sys.argv[0] = 'matchscope'; from solvers.cli import run; run()")


def test_the_program_ends_without_teardown_after_a_solve_with_its_output_whole(tmp_path, graph_file):
    """`matchscope solve` skips the interpreter's teardown (a fifth of a second of freeing numba's
    registries) once its output is written; other commands, and a solve under a profiler, end normally."""
    path, expected, _ = graph_file
    out = tmp_path / "m.csv"
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    env.pop("NUMBA_ENABLE_CUDASIM", None)

    def program(*args, prefix=()):
        return subprocess.run([sys.executable, *prefix, "-c", RUN_WITH_TEARDOWN_MARK, *map(str, args)], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)

    solved = program("solve", path, "--algo", "hopcroft-karp", "--out", out, "--json")
    assert solved.returncode == 0, solved.stderr
    assert "teardown" not in solved.stderr
    assert last_json(solved.stdout)["value"] == expected
    assert len(out.read_text().strip().splitlines()) == expected + 1  # a header, then every pair
    refused = program("solve", tmp_path / "missing.mtx", "--algo", "hopcroft-karp")
    assert refused.returncode == 2 and "teardown" not in refused.stderr
    listed = program("algos")
    assert listed.returncode == 0 and "teardown" in listed.stderr
    profile = tmp_path / "solve.prof"
    profiled = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "solvers", "solve",
                               str(path), "--algo", "hopcroft-karp"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
    assert profiled.returncode == 0, profiled.stderr
    assert profile.stat().st_size > 0  # the profiler's report, written at exit


def summary_fields(out: str) -> dict[str, str]:
    """The human summary's rows: a 12-character key column, then the value."""
    return {line[:12].strip(): line[12:] for line in out.strip().splitlines()}


DURATION = r"(\d+(\.\d+)? (ms|s)|\d+ min \d\d s|\d+ h \d\d min)"  # solvers.text.duration


def test_solve_human_summary(graph_file, capsys):
    path, expected, _ = graph_file
    assert main(["solve", str(path), "--algo", "hopcroft-karp"]) == 0
    out, err = capsys.readouterr()
    fields = summary_fields(out)
    assert fields["algorithm"] == "hopcroft-karp on cpu"
    assert fields["value"] == str(expected)
    assert fields["certified"] == "yes (optimal)"
    assert "certified" in fields["certificate"]
    assert re.fullmatch(DURATION, fields["solve time"]) and re.fullmatch(DURATION, fields["loaded"])
    assert int(fields["iterations"]) >= 0
    # scipy's references are warmed up too (their exact helpers are compiled): kept out of the solve time
    assert re.match(DURATION + " ", fields["prepared"]) and "not counted in the solve time" in fields["prepared"]
    assert err == ""


@pytest.mark.parametrize("ext", ["csv", "json", "mtx"])
def test_solve_out_writes_the_matching(graph_file, tmp_path, capsys, ext):
    path, expected, matrix = graph_file
    out = tmp_path / f"matching.{ext}"
    assert main(["solve", str(path), "--algo", "hopcroft-karp", "--out", str(out), "--json"]) == 0
    assert last_json(capsys.readouterr().out)["out"] == str(out)
    if ext == "csv":
        with open(out, newline="") as f:
            rows = list(csv.reader(f))
        assert rows[0][:2] == ["row", "col"]
        pairs = np.array([[int(r), int(c)] for r, c, *_ in rows[1:]], dtype=np.int64).reshape(-1, 2)
    elif ext == "json":
        data = json.loads(out.read_text())
        assert data["value"] == expected and data["algorithm"] == "hopcroft-karp"
        pairs = np.array(data["pairs"], dtype=np.int64).reshape(-1, 2)
    else:
        written = sp.coo_matrix(scipy.io.mmread(str(out)))
        assert written.shape == matrix.shape
        pairs = np.column_stack([written.row, written.col])
    assert len(pairs) == expected
    assert len(set(pairs[:, 0])) == len(pairs) == len(set(pairs[:, 1]))  # a matching
    edges = set(zip(matrix.row.tolist(), matrix.col.tolist()))
    assert all((int(r), int(c)) in edges for r, c in pairs)


def test_solve_assignment_from_npy_matches_linear_sum_assignment(tmp_path, capsys):
    rng = np.random.default_rng(3)
    for trial in range(4):
        costs = rng.integers(0, 50, size=(8 + trial, 10)).astype(float)
        path = tmp_path / f"costs{trial}.npy"
        np.save(path, costs)
        out = tmp_path / f"assignment{trial}.csv"
        assert main(["solve", str(path), "--algo", "lsa", "--json", "--out", str(out)]) == 0
        record = last_json(capsys.readouterr().out)
        r, c = linear_sum_assignment(costs)
        assert record["problem"] == "assignment" and record["certified"] is True
        assert record["value"] == pytest.approx(costs[r, c].sum())
        with open(out, newline="") as f:
            rows = list(csv.DictReader(f))
        assert sum(costs[int(x["row"]), int(x["col"])] for x in rows) == pytest.approx(costs[r, c].sum())


def test_solve_flow_from_dimacs_matches_scipy(tmp_path, capsys):
    rng = np.random.default_rng(11)
    n, m = 12, 40
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = tail != head
    tail, head, cap = tail[keep], head[keep], rng.integers(1, 20, keep.sum())
    path = write_dimacs_max(tmp_path / "net.max", n, tail, head, cap, 0, n - 1)
    out = tmp_path / "flow.csv"
    assert main(["solve", str(path), "--algo", "dinic", "--json", "--out", str(out)]) == 0
    record = last_json(capsys.readouterr().out)
    assert record["problem"] == "flow" and record["certified"] is True
    assert record["value"] == scipy_max_flow(n, tail, head, cap, 0, n - 1)
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(tail)
    assert all(0 <= int(x["flow"]) <= int(x["capacity"]) for x in rows)


@pytest.mark.parametrize("edges, why", [
    ([(1, 2), (2, 3)], "the source, vertex 0, has no edge out of it"),
    ([(0, 1), (1, 2)], "the sink, vertex 3, has no edge into it"),
    ([(0, 1), (2, 3)], "no path leads from the source to the sink"),
])
def test_a_flow_of_zero_says_why(tmp_path, capsys, edges, why):
    """A maximum flow of 0 (a generated sample's sink can be a vertex left without edges) names
    its reason on the value line, which a flow that moves has no note on."""
    tail, head = (np.array(x) for x in zip(*edges))
    path = write_dimacs_max(tmp_path / "net.max", 4, tail, head, np.ones(len(edges), int), 0, 3)
    assert main(["solve", str(path), "--algo", "dinic"]) == 0
    assert summary_fields(capsys.readouterr().out)["value"] == f"0 ({why})"
    path = write_dimacs_max(tmp_path / "moves.max", 4, np.array([0, 1]), np.array([1, 3]), np.ones(2, int), 0, 3)
    assert main(["solve", str(path), "--algo", "dinic"]) == 0
    assert summary_fields(capsys.readouterr().out)["value"] == "1"


def test_square_mtx_is_read_as_a_flow_network_for_a_flow_algorithm(tmp_path, capsys):
    cap = np.array([[0, 3, 2, 0], [0, 0, 1, 2], [0, 0, 0, 3], [0, 0, 0, 0]])
    path = tmp_path / "square.mtx"
    scipy.io.mmwrite(str(path), sp.coo_matrix(cap), field="integer")
    assert main(["solve", str(path), "--algo", "dinic", "--json"]) == 0
    record = last_json(capsys.readouterr().out)
    assert record["problem"] == "flow" and record["value"] == 5


# ---------------------------------------------------------------------------------------------
# a wrong answer must not pass: fake algorithms that return wrong solutions


def _empty_matching(problem, backend, tel, **options):
    return Solution(0.0, 1, np.full(problem.n_rows, -1, np.int64), np.full(problem.n_cols, -1, np.int64))


def _column_reused(problem, backend, tel, **options):
    rows, cols = problem.edges()
    row_match = np.full(problem.n_rows, -1, np.int64)
    col_match = np.full(problem.n_cols, -1, np.int64)
    first = int(cols[0])
    users = np.unique(rows[cols == first])[:2]
    row_match[users] = first  # two rows claim one column: not a matching
    col_match[first] = users[0]
    return Solution(float(users.size), 1, row_match, col_match)


@pytest.mark.parametrize("runner", ["_empty_matching", "_column_reused"])
def test_uncertified_result_exits_1_and_says_why(tmp_path, capsys, monkeypatch, runner):
    fake = Algorithm("wrong-answer", ("matching",), (solvers.BipartiteGraph,), ("cpu",), f"{__name__}:{runner}")
    monkeypatch.setitem(registry.algorithms(), "wrong-answer", fake)
    # two rows share their only column, plus a perfect pair elsewhere
    path = write_graph_mtx(tmp_path / "g.mtx", sp.coo_matrix(np.array([[1, 0], [1, 1]], np.int8)))
    assert main(["solve", str(path), "--algo", "wrong-answer", "--json"]) == 1
    out, err = capsys.readouterr()
    assert last_json(out)["certified"] is False
    assert "NOT certified" in err and str(path) in err and "Traceback" not in err


def test_epsilon_run_is_certified_within_its_gap(capsys):
    """An auction epsilon-run claims only cost <= optimum + n * eps: exit 0 when the certificate
    proves that, with the proven (here: true) gap in the summary and the JSON."""
    sample = ROOT / "sample_graphs" / "dense-lap_50.npy"
    costs = np.load(sample)
    r, c = linear_sum_assignment(costs)
    optimum = float(costs[r, c].sum())
    argv = ["solve", str(sample), "--algo", "auction", "--backend", "cpu", "--opt", "eps=0.5", "--opt", "scaling=off"]
    assert main(argv + ["--json"]) == 0
    out, err = capsys.readouterr()
    record = last_json(out)
    assert record["certified"] is True and record["optimal"] is False
    assert record["value"] > optimum and record["gap"] == pytest.approx(record["value"] - optimum)
    assert record["bound"] == 25.0 and "certified within gap" in record["certificate"]
    # a cold kernel cache adds its one line (compiling auction (cost matrices) for cpu (...)); nothing else
    assert re.sub(r"compiling auction \(cost matrices\) for cpu \([^)]*\)\n", "", err) == ""
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert f"yes, within gap {record['gap']:g} of optimal" in out and err == ""
    # the same file solved exactly: optimal, no claimed gap
    assert main(["solve", str(sample), "--algo", "auction", "--backend", "cpu", "--json"]) == 0
    exact = last_json(capsys.readouterr().out)
    assert exact["optimal"] is True and exact["gap"] == 0 and exact["value"] == optimum


# ---------------------------------------------------------------------------------------------
# point series: solve tracks them, one certified assignment per frame pair


def write_series_npz(path, rng, sizes):
    frames = [rng.random((n, 3)) for n in sizes]
    ids = [rng.permutation(max(sizes) + 5)[:n] for n in sizes]
    np.savez(path, points=np.concatenate(frames), frame_ptr=np.concatenate([[0], np.cumsum(sizes)]),
             ids=np.concatenate(ids))
    return frames, ids


def test_solve_point_series_tracks_with_optimal_frame_assignments(tmp_path, capsys):
    from scipy.spatial.distance import cdist
    rng = np.random.default_rng(8)
    sizes = [6, 7, 5, 5]
    frames, ids = write_series_npz(tmp_path / "series.npz", rng, sizes)
    assert main(["solve", str(tmp_path / "series.npz"), "--algo", "lsa", "--opt", "max_distance=off", "--json"]) == 0
    record = last_json(capsys.readouterr().out)
    assert SUMMARY_KEYS <= set(record)
    assert record["optimal"] is True and record["gap"] == pytest.approx(0.0, abs=1e-9) and record["bound"] == 0.0
    assert "3 of 3 certified" in record["certificate"]
    assert record["stats"]["gating"] == "off" and record["max_distance"] is None
    assert record["stats"]["frame_pairs"] == 3 and record["stats"]["certified_pairs"] == 3
    optimal = []
    for a, b in zip(frames, frames[1:]):
        d = cdist(a, b)
        r, c = linear_sum_assignment(d)
        optimal.append(d[r, c].sum())
    assert record["problem"] == "points" and record["certified"] is True
    assert record["value"] == pytest.approx(sum(optimal))
    assert [s["cost"] for s in record["frame_stats"]] == pytest.approx(optimal)
    assert record["links"] == sum(min(x, y) for x, y in zip(sizes, sizes[1:]))
    assert record["iterations"] == len(sizes) - 1 and 0.0 <= record["accuracy"] <= 1.0
    assert all({"gap", "status", "certificate", "certified"} <= set(s) for s in record["frame_stats"])


def test_point_series_json_has_the_keys_of_every_solve(capsys):
    sample = ROOT / "sample_graphs" / "particles_100x10.npz"
    assert main(["solve", str(sample), "--algo", "auction", "--backend", "cpu", "--json"]) == 0
    record = last_json(capsys.readouterr().out)
    assert SUMMARY_KEYS <= set(record)
    assert record["problem"] == "points" and record["certified"] is True and record["optimal"] is True
    assert 0 <= record["gap"] <= 1e-6 and record["certificate"].startswith("dual-potentials per frame pair: 9 of 9")
    stats = record["stats"]
    assert stats["gating"] == "auto" and stats["max_distance"] > 0 and stats["gated_pairs"] > 0
    assert stats["links"] == record["links"] and stats["accuracy"] == record["accuracy"] == 1.0
    assert record["iterations"] == stats["solves"] == sum(s["solves"] for s in record["frame_stats"])
    series = solvers.load(sample)
    assert stats["unmatched"] == sum(series.sizes[t] + series.sizes[t + 1] - 2 * s["matched"]
                                     for t, s in enumerate(record["frame_stats"]))


def test_point_series_gating_options(tmp_path, capsys):
    sample = ROOT / "sample_graphs" / "particles_100x10.npz"
    runs = {}
    for value in ("auto", "off", "0.03"):
        assert main(["solve", str(sample), "--algo", "lsa", "--opt", f"max_distance={value}", "--json"]) == 0
        runs[value] = last_json(capsys.readouterr().out)
    assert runs["off"]["stats"]["gating"] == "off" and runs["off"]["stats"]["gated_pairs"] == 0
    assert runs["0.03"]["max_distance"] == 0.03 and runs["0.03"]["stats"]["gating"] == "fixed"
    assert runs["auto"]["accuracy"] > runs["off"]["accuracy"]  # the sample's particles enter and leave
    assert main(["solve", str(sample), "--algo", "lsa"]) == 0
    out = capsys.readouterr().out
    assert "gating      auto: max_distance" in out and "NO" not in out


def test_point_series_tracks_written_as_csv_and_json(tmp_path, capsys):
    from solvers.formats import tracks as track_files
    sample = ROOT / "sample_graphs" / "particles_100x10.npz"
    series = solvers.load(sample)
    for name in ("tracks.csv", "tracks.json", "tracks.csv.gz"):
        out = tmp_path / name
        assert main(["solve", str(sample), "--algo", "auction", "--backend", "cpu", "--out", str(out), "--json"]) == 0
        captured = capsys.readouterr()
        record = last_json(captured.out)
        assert record["out"] == str(out) and out.is_file() and captured.err == ""
        table = track_files.read(out)
        assert len(table.tracks) == record["tracks"]
        assert sum(len(t) for t in table.tracks) == sum(series.sizes)
        for tr, xyz, ids in zip(table.tracks, table.points, table.ids):
            for (f, i), p, ident in zip(tr, xyz, ids):
                assert np.array_equal(p, series.frames[f][i]) and ident == series.ids[f][i]
        if name.endswith(".json"):
            assert table.summary["links"] == record["links"] and table.summary["gating"] == "auto"
    with open(tmp_path / "tracks.csv", newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["track", "frame", "index", "x", "y", "z", "id"] and len(rows) == 1 + sum(series.sizes)


@pytest.mark.parametrize("name, fragment", [("tracks.mtx", "*.json"), ("tracks.txt", ".json"),
                                            ("missing-folder/tracks.csv", "no such folder")])
def test_point_series_bad_out_is_exit_2_before_solving(tmp_path, capsys, monkeypatch, name, fragment):
    def must_not_run(*args, **kwargs):
        raise AssertionError("tracking ran although --out cannot be written")
    monkeypatch.setattr(solvers, "track", must_not_run)
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(1), [3, 3])
    out = tmp_path / name
    assert main(["solve", str(tmp_path / "s.npz"), "--algo", "lsa", "--out", str(out)]) == 2
    assert_one_error_line(capsys.readouterr().err, str(out), fragment)
    assert not out.exists()


def test_point_series_out_that_cannot_be_written_is_exit_2(tmp_path, capsys):
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(1), [3, 3])
    out = tmp_path / "tracks.csv"
    out.mkdir()  # a folder where the file should go: found only when writing, after tracking
    assert main(["solve", str(tmp_path / "s.npz"), "--algo", "lsa", "--out", str(out)]) == 2
    assert_one_error_line(capsys.readouterr().err, str(out), "cannot write")
    assert out.is_dir() and not any(out.iterdir())


def _identity_assignment(problem, backend, tel, **options):
    n = min(problem.n_rows, problem.n_cols)
    row_match = np.full(problem.n_rows, -1, np.int64)
    col_match = np.full(problem.n_cols, -1, np.int64)
    row_match[:n] = np.arange(n)
    col_match[:n] = np.arange(n)
    return Solution(float(problem.costs[np.arange(n), np.arange(n)].sum()), 1, row_match, col_match)


def test_uncertified_tracking_exits_1(tmp_path, capsys, monkeypatch):
    fake = Algorithm("identity", ("assignment",), (solvers.CostMatrix,), ("cpu",), f"{__name__}:_identity_assignment")
    monkeypatch.setitem(registry.algorithms(), "identity", fake)
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(1), [8, 8, 8])
    assert main(["solve", str(tmp_path / "s.npz"), "--algo", "identity"]) == 1
    out, err = capsys.readouterr()
    assert "NO" in out and "NOT certified" in err and "Traceback" not in err


@pytest.mark.parametrize("extra, fragment", [(["--algo", "gpr"], "assignment"),
                                             (["--algo", "lsa", "--opt", "max_distance=far"], "max_distance"),
                                             (["--algo", "lsa", "--opt", "max_distance=-1"], "max_distance"),
                                             (["--algo", "lsa", "--out", "tracks.mtx"], "tracks are written as")])
def test_point_series_bad_requests(tmp_path, capsys, monkeypatch, extra, fragment):
    monkeypatch.chdir(tmp_path)
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(1), [3, 3])
    assert main(["solve", "s.npz", *extra]) == 2
    assert_one_error_line(capsys.readouterr().err, fragment)


def test_a_bad_gate_is_refused_before_any_warm_up(tmp_path, capsys, monkeypatch):
    """With a cold kernel cache the warm-up said "compiling ..." before the refusal (two lines)."""
    import solvers.warmup

    def no_warm_up(*args, **kwargs):
        raise AssertionError("warmed up before the options were checked")
    monkeypatch.setattr(solvers.warmup, "warm_up", no_warm_up)
    monkeypatch.setattr(solvers.warmup, "prepare", no_warm_up)
    monkeypatch.chdir(tmp_path)
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(1), [3, 3])
    assert main(["solve", "s.npz", "--algo", "lsa", "--opt", "max_distance=far"]) == 2
    assert_one_error_line(capsys.readouterr().err, "max_distance")
    frames = [np.random.default_rng(2).random((3, 3)) for _ in range(2)]
    with pytest.raises(InputError, match="max_distance"):
        solvers.track(frames, algorithm="lsa", backend="cpu", max_distance=-2.0)


# ---------------------------------------------------------------------------------------------
# bad input: exit 2, one `error:` line, no traceback


def test_malformed_file_names_path_and_line_in_a_subprocess(tmp_path):
    path = tmp_path / "bad.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n% comment\n3 3 2\n1 1\n2 x\n")
    proc = run_cli("solve", path, "--algo", "hopcroft-karp")
    assert proc.returncode == 2
    assert_one_error_line(proc.stderr, f"{path}:5")
    assert proc.stdout == ""


@pytest.mark.parametrize("name", ["x.csv", "x.mtx", "x.xyz", "x.max"])
def test_a_binary_file_under_a_text_name_is_one_plain_line(tmp_path, capsys, name):
    """A .npy renamed to x.csv: exit 2 and the file named in words, no undecodable bytes, no warning."""
    path = tmp_path / name
    buf = io.BytesIO()
    np.save(buf, np.eye(3))
    path.write_bytes(buf.getvalue())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["solve", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err == f"error: {path}:1: binary data, not text (is this the right file?)\n" and out == ""


def test_missing_file(tmp_path, capsys):
    missing = tmp_path / "absent.mtx"
    assert main(["solve", str(missing), "--algo", "hopcroft-karp"]) == 2
    assert_one_error_line(capsys.readouterr().err, str(missing))


def test_unknown_algorithm(graph_file, capsys):
    assert main(["solve", str(graph_file[0]), "--algo", "no-such-algo"]) == 2
    assert_one_error_line(capsys.readouterr().err, "no-such-algo", "hopcroft-karp")


@pytest.mark.parametrize("opt, fragment", [("k=abc", "option k must be a number, not abc"), ("nope=1", "nope"), ("k", "KEY=VALUE"),
                                           ("init=sideways", "cheap")])
def test_bad_option(graph_file, capsys, opt, fragment):
    assert main(["solve", str(graph_file[0]), "--algo", "pr-seq", "--opt", opt]) == 2
    assert_one_error_line(capsys.readouterr().err, fragment)


def test_wrong_problem_kind_for_the_algorithm(tmp_path, graph_file, capsys):
    costs = tmp_path / "costs.npy"
    np.save(costs, np.ones((3, 3)))
    assert main(["solve", str(costs), "--algo", "hopcroft-karp"]) == 2
    assert_one_error_line(capsys.readouterr().err, str(costs), "hopcroft-karp")
    assert main(["solve", str(graph_file[0]), "--algo", "lsa", "--problem", "matching"]) == 2
    assert_one_error_line(capsys.readouterr().err, "lsa")


def test_unavailable_backend(graph_file, capsys):
    from solvers.targets import cuda_available
    if cuda_available():
        pytest.skip("a GPU is usable here, so --backend cuda is not an error")
    assert main(["solve", str(graph_file[0]), "--algo", "gpr", "--backend", "cuda"]) == 2
    assert_one_error_line(capsys.readouterr().err, str(graph_file[0]), "cuda")
    assert main(["solve", str(graph_file[0]), "--algo", "hopcroft-karp", "--backend", "cuda"]) == 2
    assert_one_error_line(capsys.readouterr().err, "hopcroft-karp")


def test_cudasim_cannot_start_in_a_process_that_already_loaded_numba(graph_file, capsys):
    import numba  # noqa: F401  (the simulator must be chosen before this)
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        pytest.skip("this test process runs under the simulator already")
    assert main(["solve", str(graph_file[0]), "--algo", "gpr", "--backend", "cudasim"]) == 2
    assert_one_error_line(capsys.readouterr().err, "NUMBA_ENABLE_CUDASIM")


def _raises_infeasible(problem, backend, tel, **options):
    raise solvers.InfeasibleError("no complete assignment exists")


def test_infeasible_problem_is_exit_2(tmp_path, capsys, monkeypatch):
    fake = Algorithm("always-infeasible", ("assignment",), (solvers.CostMatrix,), ("cpu",),
                     f"{__name__}:_raises_infeasible")
    monkeypatch.setitem(registry.algorithms(), "always-infeasible", fake)
    path = tmp_path / "c.npy"
    np.save(path, np.ones((2, 2)))
    assert main(["solve", str(path), "--algo", "always-infeasible"]) == 2
    assert_one_error_line(capsys.readouterr().err, str(path), "no complete assignment")


def test_out_without_extension_writes_csv(graph_file, tmp_path):
    out = tmp_path / "matching"
    assert main(["solve", str(graph_file[0]), "--algo", "hopcroft-karp", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == "row,col" and len(lines) > 1 and all(len(line.split(",")) == 2 for line in lines[1:])


def test_bad_out_name_is_refused_before_solving(graph_file, tmp_path, capsys, monkeypatch):
    def must_not_run(*args, **kwargs):
        raise AssertionError("solve ran although --out cannot be written")
    monkeypatch.setattr(solvers, "solve", must_not_run)
    out = tmp_path / "matching.txt"
    assert main(["solve", str(graph_file[0]), "--algo", "hopcroft-karp", "--out", str(out)]) == 2
    assert_one_error_line(capsys.readouterr().err, str(out), ".json")
    assert not out.exists()


def test_usage_errors_are_one_line(capsys):
    assert main(["solve", "--algo", "pr-seq"]) == 2
    assert_one_error_line(capsys.readouterr().err, "PATH")
    assert main(["solve", "x.mtx", "--algo", "pr-seq", "--backend", "tpu"]) == 2
    assert_one_error_line(capsys.readouterr().err, "tpu")
    assert main(["frobnicate"]) == 2
    assert_one_error_line(capsys.readouterr().err, "frobnicate")


def test_ctrl_c_exits_130_with_one_line(graph_file, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(solvers, "solve", interrupted)
    assert main(["solve", str(graph_file[0]), "--algo", "hopcroft-karp"]) == 130
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0]


def test_help_and_version(capsys):
    assert main(["--version"]) == 0
    assert solvers.__version__ in capsys.readouterr().out
    assert main(["solve", "--help"]) == 0
    assert "--algo" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------
# progress: on a terminal only


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_line_is_throttled_and_cleared():
    stream = FakeTerminal()
    line = ProgressLine(stream, interval=3600)
    line.on_start(RunInfo("pr-seq", "cpu", "matching"))
    for i in range(1000):
        line.on_iteration(IterationStats(i, 0.01 * i, "push", active=1000 - i, value=i))
    text = stream.getvalue()
    assert text.count("iteration") == 1 and "iteration 0" in text and "active 1000" in text
    line.clear()
    assert stream.getvalue().endswith("\r") and line.width == 0


def test_progress_shown_on_a_terminal_and_cleared(graph_file, monkeypatch):
    terminal, out = FakeTerminal(), io.StringIO()
    code = _main_capturing(["solve", str(graph_file[0]), "--algo", "pr-seq", "--json"], stdout=out, stderr=terminal)
    assert code == 0
    # a cold kernel cache adds its one permanent line (compiling ... for cpu (...)); nothing else stays
    text = re.sub(r"compil(?:ing|ed) pr-seq \(graphs\) for cpu \([^)]*\)\n", "", terminal.getvalue())
    assert "loading" in text and "pr-seq [cpu]" in text and "iteration" in text
    assert text.endswith("\r") and "\n" not in text  # cleared, nothing left behind
    assert last_json(out.getvalue())["certified"] is True


@pytest.mark.parametrize("sample", ["random-bipartite_200x200_d3.mtx", "washington-rlg_8x8.max", "dense-lap_50.npy",
                                    "particles_100x10.npz", "road-grid_30x30.txt", "powerlaw_300x400.tsv"])
def test_loads_report_their_reads_up_to_the_file_size(sample, tmp_path):
    from solvers.formats import _text, read_progress
    path = ROOT / "sample_graphs" / sample
    seen = []
    with read_progress(lambda done, total: seen.append((done, total))):
        solvers.load(path)
    size = path.stat().st_size
    if sample.endswith(".npz"):  # zip archives are read by zipfile, not by the line readers
        return
    assert seen and all(total == size for _, total in seen), seen[:3]
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and seen[-1][0] == size
    gz = tmp_path / (sample + ".gz")
    gz.write_bytes(__import__("gzip").compress(path.read_bytes()))
    if sample.endswith(".npy"):
        return
    seen.clear()
    with read_progress(lambda done, total: seen.append((done, total))):
        solvers.load(gz)
    assert seen and seen[-1] == (gz.stat().st_size, gz.stat().st_size)
    with read_progress(None):  # nobody listening: nothing is called
        solvers.load(path)
    assert _text._on_read.get() is None


def test_load_progress_bar_on_a_terminal():
    terminal = FakeTerminal()
    line = ProgressLine(terminal, interval=0.0)
    report = line.loading("big.mtx", bar_width=10)
    report(0, 0)  # an unknown size draws nothing
    assert terminal.getvalue() == ""
    report(5_000_000, 20_000_000)
    assert "loading big.mtx [##........]  25%  5.0 / 20.0 MB" in terminal.getvalue()


# ---------------------------------------------------------------------------------------------
# gen


def test_gen_writes_loadable_deterministic_files(tmp_path, capsys):
    cases = [("random-bipartite", ["--rows", "40", "--cols", "30", "--degree", "3"], "g.mtx", "matching"),
             ("dense-lap", ["--n", "12"], "c.npy", "assignment"),
             ("washington-rlg", ["--rows", "4", "--cols", "4"], "f.max", "flow")]
    for kind, params, name, problem_kind in cases:
        first, second, other = tmp_path / f"1{name}", tmp_path / f"2{name}", tmp_path / f"3{name}"
        for out, seed in ((first, 5), (second, 5), (other, 6)):
            assert main(["gen", kind, *params, "--seed", str(seed), "--out", str(out)]) == 0, capsys.readouterr()
            assert str(out) in capsys.readouterr().out
        assert first.read_bytes() == second.read_bytes()
        assert first.read_bytes() != other.read_bytes()
        loaded = solvers.load(first)
        expected = solvers.generate(kind, seed=5, **{p.lstrip("-"): int(v) for p, v in zip(params[::2], params[1::2])})
        assert loaded.kind == problem_kind
        assert loaded.describe() == expected.describe()


def test_gen_help_lists_the_kinds_parameters(capsys):
    from solvers.generators import KINDS
    assert main(["gen", "random-bipartite", "--help"]) == 0
    text = capsys.readouterr().out
    for flag in ("--rows", "--cols", "--degree", "--seed", "--out"):
        assert flag in text
    assert main(["gen", "--help"]) == 0
    text = capsys.readouterr().out
    assert all(kind in text for kind in KINDS)


def test_gen_float_and_underscore_parameters(tmp_path, capsys):
    out = tmp_path / "r.mtx"
    assert main(["gen", "rmat", "--scale", "5", "--edge-factor", "4", "--a", "0.5", "--out", str(out)]) == 0
    assert solvers.load(out).describe() == solvers.generate("rmat", scale=5, edge_factor=4, a=0.5).describe()


@pytest.mark.parametrize("argv, fragment", [
    (["gen", "no-such-kind", "--out", "x.mtx"], "no-such-kind"),
    (["gen", "random-bipartite", "--rows", "ten", "--out", "x.mtx"], "ten"),
    (["gen", "random-bipartite", "--rows", "5", "--cols", "5", "--degree", "1", "--bogus", "1", "--out", "x.mtx"],
     "--bogus"),
    (["gen", "random-bipartite", "--rows", "5", "--cols", "5", "--degree", "1"], "--out"),
    (["gen", "random-bipartite", "--rows", "5", "--degree", "1", "--out", "x.mtx"], "--cols"),
    (["gen", "random-bipartite", "--rows", "-5", "--cols", "5", "--degree", "1", "--out", "x.mtx"], "rows"),
    (["gen", "random-bipartite", "--rows", "5", "--cols", "5", "--degree", "9", "--out", "x.mtx"], "degree"),
    (["gen", "dense-lap", "--n", "3", "--integer", "maybe", "--out", "x.npy"], "maybe"),
    (["gen", "dense-lap", "--n", "3", "--out", "x.unknown"], "x.unknown"),
])
def test_gen_bad_arguments(tmp_path, capsys, monkeypatch, argv, fragment):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert_one_error_line(capsys.readouterr().err, fragment)
    assert not [p for p in tmp_path.iterdir()]  # nothing written, not even a partial file


# ---------------------------------------------------------------------------------------------
# algos, formats, gui


def test_algos_lists_every_registered_algorithm(capsys):
    algos = solvers.algorithms()
    assert main(["algos"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in algos)
    assert main(["algos", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    records = {r["name"]: r for r in listed if r["problems"] != ["batch"]}
    assert set(records) == set(algos)
    from solvers.batch.api import BATCH_SOLVERS
    batch = [r for r in listed if r["problems"] == ["batch"]]  # solve_batch's solvers, listed after them
    assert [r["name"] for r in batch] == list(BATCH_SOLVERS) and all(r["backends"] == ["cpu", "cuda", "cudasim"]
                                                                     and "cpu" in r["available"] for r in batch)
    assert "[batch]  backends: cpu, cuda, cudasim" in text
    for name, algo in algos.items():
        rec = records[name]
        assert rec["problems"] == list(algo.problem_kinds) and rec["backends"] == list(algo.backends)
        assert set(rec["available"]) <= set(algo.backends) and ("cpu" in rec["available"]) == ("cpu" in algo.backends)
        assert [o["name"] for o in rec["options"]] == [o.name for o in algo.options]
        assert [o["default"] for o in rec["options"]] == [_json_default(o.default) for o in algo.options]


def _json_default(value):
    return None if isinstance(value, float) and not np.isfinite(value) else value


def test_formats_lists_the_format_registry(capsys):
    from solvers.formats import FORMATS, RESULT_FORMATS
    assert main(["formats", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    batch = ["batch-npy", "batch-npz", "batch-result-csv", "batch-result-json"]  # listed after the registry
    assert [r["key"] for r in records] == [f.key for f in FORMATS + RESULT_FORMATS] + batch
    assert all(r["files"] and r["problems"] for r in records)
    assert {r["key"] for r in records if r["result"]} == {f.key for f in RESULT_FORMATS} | set(batch[2:])
    assert main(["formats"]) == 0
    text = capsys.readouterr().out
    assert all(r["name"] in text and " ".join(r["files"]) in text for r in records)


def test_gui_hands_every_argument_to_the_explorer(monkeypatch):
    seen = []
    fake_app = types.ModuleType("explorer.app")
    fake_app.main = lambda argv: seen.append(list(argv)) or 7
    monkeypatch.setitem(sys.modules, "explorer.app", fake_app)
    monkeypatch.setitem(sys.modules, "explorer", types.ModuleType("explorer"))
    sys.modules["explorer"].app = fake_app
    argv = ["sample.mtx", "--algo", "pr-seq", "--opt", "k=1", "--run", "--help"]
    assert main(["gui", *argv]) == 7
    assert seen == [argv]


# ---------------------------------------------------------------------------------------------
# cudasim: the CLI switches the simulator on before numba loads


def test_cudasim_backend_in_a_subprocess(tmp_path):
    algos = solvers.algorithms()
    assert "cudasim" in algos["gpr"].backends and "cudasim" in algos["hungarian"].backends
    matrix = random_graph(np.random.default_rng(2), 8, 8, 0.3)
    graph = write_graph_mtx(tmp_path / "tiny.mtx", matrix)
    costs = np.random.default_rng(5).integers(0, 9, size=(5, 6)).astype(float)
    np.save(tmp_path / "tiny.npy", costs)
    r, c = linear_sum_assignment(costs)
    for algo, path, expected in (("gpr", graph, scipy_matching_size(matrix)),
                                 ("hungarian", tmp_path / "tiny.npy", costs[r, c].sum())):
        proc = run_cli("solve", path, "--algo", algo, "--backend", "cudasim", "--json")
        assert proc.returncode == 0, proc.stderr
        record = last_json(proc.stdout)
        assert record["backend"] == "cudasim" and record["algorithm"] == algo
        assert record["value"] == expected and record["certified"] is True


# ---------------------------------------------------------------------------------------------
# documentation that must stay true


def _readme_commands(prefix: str) -> list[list[str]]:
    lines = (ROOT / "README.md").read_text().splitlines()
    return [line.split("#")[0].split()[1:] for line in lines if line.startswith(f"matchscope {prefix} ")]


def test_readme_lists_every_algorithm_and_format():
    from solvers.formats import FORMATS, RESULT_FORMATS
    text = (ROOT / "README.md").read_text()
    table = [line for line in text.splitlines() if line.startswith("| `")]
    documented = {line.split("`")[1] for line in table}
    assert set(solvers.algorithms()) <= documented, set(solvers.algorithms()) - documented
    for name, algo in solvers.algorithms().items():
        row = next(line for line in table if line.startswith(f"| `{name}` |"))
        cells = [cell.strip() for cell in row.split("|")]
        assert cells[2:5] == [", ".join(algo.problem_kinds), ", ".join(algo.backends),
                              ", ".join(o.name for o in algo.options) or "—"], row
    if "(every algorithm has it)" in text:
        assert all("cpu" in a.backends for a in solvers.algorithms().values())
    for fmt in FORMATS + RESULT_FORMATS:
        assert fmt.name in text, fmt.name
        assert all(f"`*{ext}" in text for ext in fmt.extensions), fmt.name


def test_readme_solve_examples_name_real_files_algorithms_and_options():
    commands = _readme_commands("solve")
    assert commands
    assert any("--algo" not in argv for argv in commands)  # the choice made for the user is shown too
    for argv in commands:
        args = build_solve_args(argv)
        if args.algo is None:
            assert not args.opt and (ROOT / args.path).is_file(), argv
            continue
        algo = solvers.algorithms()[args.algo]
        from solvers.cli import TRACKING_OPTIONS
        algo.parse_options({k: v for k, v in (o.split("=", 1) for o in args.opt) if k not in TRACKING_OPTIONS})
        if args.path.startswith("sample_graphs/"):
            assert (ROOT / args.path).is_file(), args.path


def build_solve_args(argv):
    from solvers.cli import build_parser
    return build_parser().parse_args(argv)


def test_readme_gen_examples_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    commands = _readme_commands("gen")
    assert commands
    for argv in commands:
        assert main(argv) == 0, capsys.readouterr().err


def test_sample_graphs_readme_commands_reproduce_the_samples(tmp_path, capsys):
    """sample_graphs/README.md says how each sample was made; the CLI must rebuild it byte for byte."""
    readme = (ROOT / "sample_graphs" / "README.md").read_text()
    commands = [part.split("`")[0] for part in readme.split("`matchscope gen ")[1:]]
    assert len(commands) >= 10
    for command in commands:
        argv = command.split()
        sample = ROOT / argv[argv.index("--out") + 1]
        rebuilt = tmp_path / sample.name
        argv[argv.index("--out") + 1] = str(rebuilt)
        assert main(["gen", *argv]) == 0, capsys.readouterr().err
        assert rebuilt.read_bytes() == sample.read_bytes(), sample.name


def test_make_run_opens_a_bundled_sample():
    makefile = (ROOT / "Makefile").read_text()
    sample = next(line.split("?=")[1].strip() for line in makefile.splitlines() if line.startswith("SAMPLE"))
    assert (ROOT / sample).is_file()
    assert solvers.load(ROOT / sample).kind == "matching"


def test_gui_help_reaches_the_real_explorer():
    proc = run_cli("gui", "--help", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--algo" in proc.stdout and "--screenshot" in proc.stdout


# ---------------------------------------------------------------------------------------------
# warm-up: `seconds` is the solve alone; compiling / loading kernels is reported apart


class InjectedClock:
    """time.perf_counter for solvers.solving, solvers.warmup and solvers.cli: 1 ms per reading, plus
    whatever a stand-in algorithm adds (its "compiling")."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1e-3
        return self.now


STAND_IN = {"clock": None, "calls": 0}


def _slow_first_call(problem, backend, tel, **options):
    """An identity assignment (optimal on the costs used below) whose first call in the process
    takes 100 s on the injected clock, as a first numba call compiles."""
    STAND_IN["calls"] += 1
    if STAND_IN["calls"] == 1:
        STAND_IN["clock"].now += 100.0
    return _identity_assignment(problem, backend, tel)


@pytest.fixture
def slow_first_call(monkeypatch):
    import solvers.cli
    import solvers.solving
    import solvers.warmup
    clock = InjectedClock()
    for module in (solvers.solving, solvers.warmup, solvers.cli):
        monkeypatch.setattr(module, "time", clock)
    monkeypatch.setitem(STAND_IN, "clock", clock)
    monkeypatch.setitem(STAND_IN, "calls", 0)
    fake = Algorithm("slow-first-call", ("assignment",), (solvers.CostMatrix,), ("cpu",), f"{__name__}:_slow_first_call")
    monkeypatch.setitem(registry.algorithms(), "slow-first-call", fake)
    return clock


def diagonal_costs(path, n=5):
    costs = np.ones((n, n)) + np.arange(n)[None, :]
    np.fill_diagonal(costs, 0.0)  # the identity is the unique optimum
    np.save(path, costs)
    return path


def test_seconds_excludes_the_warm_up(tmp_path, capsys, slow_first_call):
    path = diagonal_costs(tmp_path / "c.npy")
    assert main(["solve", str(path), "--algo", "slow-first-call", "--json"]) == 0
    out, err = capsys.readouterr()
    record = last_json(out)
    assert STAND_IN["calls"] == 2  # the untimed warm-up, then the timed run
    assert record["certified"] is True and record["value"] == 0
    assert record["compile_seconds"] >= 100 and record["seconds"] < 1  # the 100 s went to the warm-up
    assert 0 < record["load_seconds"] < 1
    assert len(out.splitlines()) == 1 and err == ""  # no compile line: nothing was compiled by numba


def test_human_summary_reports_preparation_apart(tmp_path, capsys, slow_first_call):
    path = diagonal_costs(tmp_path / "c.npy")
    assert main(["solve", str(path), "--algo", "slow-first-call"]) == 0
    fields = summary_fields(capsys.readouterr().out)
    assert re.fullmatch(DURATION + r" loading compiled kernels from the cache \(not counted in the solve time\)",
                        fields["prepared"]), fields["prepared"]
    assert fields["prepared"].startswith("1 min 40 s")  # 100 s on the injected clock
    assert re.fullmatch(r"\d+(\.\d+)? ms", fields["solve time"]), fields["solve time"]


def test_without_warm_up_the_first_call_would_be_counted(tmp_path, slow_first_call):
    """The stand-in really is slow on its first call: what the warm-up takes out of `seconds`."""
    problem = solvers.load(diagonal_costs(tmp_path / "c.npy"))
    assert solvers.solve(problem, "slow-first-call").seconds >= 100
    assert solvers.solve(problem, "slow-first-call").seconds < 1


def test_every_algorithm_of_the_package_is_warmed_up(graph_file, capsys, monkeypatch):
    """The scipy references too: their exact helpers are compiled, and loading them must not count
    as solve time (dinic's 'seconds' held 0.2 s of numba cache loading)."""
    import solvers.warmup
    warmed = []

    def warm_up(problem, algorithm, backend, options, **kwargs):  # marks its key warmed, as the real one
        warmed.append(algorithm)
        solvers.warmup._WARMED.add(solvers.warmup.warmup_key(problem, algorithm, backend, options))
        return 0.0
    # a fresh record of warmed keys: the result must not hang on what earlier tests warmed up
    monkeypatch.setattr(solvers.warmup, "_WARMED", set())
    monkeypatch.setattr(solvers.warmup, "warm_up", warm_up)
    assert main(["solve", str(graph_file[0]), "--algo", "hopcroft-karp", "--json"]) == 0
    assert warmed == ["hopcroft-karp"]
    assert all(solvers.warmup.wants_warmup(name, "cpu") for name in solvers.algorithms())


def test_cudasim_runs_are_not_warmed_up():
    from solvers.warmup import wants_warmup
    assert wants_warmup("gpr", "cpu") and wants_warmup("hungarian", "cuda")
    assert not wants_warmup("gpr", "cudasim") and not wants_warmup("lsa", "cudasim") and not wants_warmup("nope", "cpu")


NUMBA_MODULE = """
from numba import njit

@njit(cache={cache})
def plus_one(x):
    return x + 1
"""


def _numba_stand_in(problem, backend, tel, **options):
    """Calls a numba function of a module written in a temporary folder (its cache lives there)."""
    STAND_IN["module"].plus_one(1)
    return _identity_assignment(problem, backend, tel)


def _import_numba_module(path, cache: bool):
    import importlib.util
    path.write_text(NUMBA_MODULE.format(cache=cache))
    spec = importlib.util.spec_from_file_location(f"numba_stand_in_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("cache, why", [(True, "not in this machine's kernel cache yet; cached for later runs"),
                                        (False, "its cpu kernels are compiled in every new process")])
def test_a_compile_is_announced_on_stderr_once_and_never_on_stdout(tmp_path, capsys, monkeypatch, cache, why):
    fake = Algorithm("numba-stand-in", ("assignment",), (solvers.CostMatrix,), ("cpu",), f"{__name__}:_numba_stand_in")
    monkeypatch.setitem(registry.algorithms(), "numba-stand-in", fake)
    monkeypatch.setitem(STAND_IN, "module", _import_numba_module(tmp_path / "kernels.py", cache))
    path = diagonal_costs(tmp_path / "c.npy")
    assert main(["solve", str(path), "--algo", "numba-stand-in", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == f"compiling numba-stand-in (cost matrices) for cpu ({why})\n"
    assert len(out.splitlines()) == 1 and last_json(out)["compile_seconds"] > 0
    # compiled now: the next run in this process compiles nothing and says nothing
    assert main(["solve", str(path), "--algo", "numba-stand-in"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "loading compiled kernels" in summary_fields(out)["prepared"]
    if cache:  # a fresh dispatcher of the same cached function loads it from numba's cache: no line
        monkeypatch.setitem(STAND_IN, "module", _import_numba_module(tmp_path / "kernels.py", cache))
        assert main(["solve", str(path), "--algo", "numba-stand-in"]) == 0
        assert capsys.readouterr().err == ""


def test_compile_line_on_a_terminal_clears_the_progress_line_first(tmp_path, monkeypatch):
    fake = Algorithm("numba-stand-in", ("assignment",), (solvers.CostMatrix,), ("cpu",), f"{__name__}:_numba_stand_in")
    monkeypatch.setitem(registry.algorithms(), "numba-stand-in", fake)
    monkeypatch.setitem(STAND_IN, "module", _import_numba_module(tmp_path / "k.py", False))
    terminal, out = FakeTerminal(), io.StringIO()
    path = diagonal_costs(tmp_path / "c.npy")
    assert _main_capturing(["solve", str(path), "--algo", "numba-stand-in", "--json"], stdout=out, stderr=terminal) == 0
    lines = terminal.getvalue().split("\n")
    assert len(lines) == 2  # one line that stays, then the cleared progress line
    assert lines[0].endswith("compiling numba-stand-in (cost matrices) for cpu (its cpu kernels are compiled in every new "
                              "process)")
    assert lines[0].split("\r")[-1].startswith("compiling")
    assert lines[1].endswith("\r") and "compiling" not in lines[1]


# ---------------------------------------------------------------------------------------------
# solve without --algo: the fastest for the problem here, and it says which


@pytest.mark.parametrize("sample, expected", [("random-bipartite_200x200_d3.mtx", "pr-seq"),
                                              ("washington-rlg_8x8.max", "dinic"),
                                              ("dense-lap_50.npy", "lsa"),
                                              ("sparse-lap_100.asn", "lapjvsp"),
                                              ("particles_100x10.npz", "lsa")])
def test_solve_without_algo_picks_the_measured_choice_on_cpu(capsys, sample, expected):
    path = ROOT / "sample_graphs" / sample
    assert main(["solve", str(path), "--backend", "cpu", "--json"]) == 0
    record = last_json(capsys.readouterr().out)
    assert record["algorithm"] == expected and record["certified"] is True
    assert record["choice"].startswith("the fastest on the CPU for ")
    assert main(["solve", str(path), "--backend", "cpu"]) == 0
    algorithm = summary_fields(capsys.readouterr().out)["algorithm"]
    assert algorithm.startswith(f"{expected} on cpu") and algorithm.endswith(f"({record['choice']}; --algo to choose)")


def _sized(kind, **fields):
    """A stand-in problem of a given size (choose reads only the kind, the size and the layout)."""
    return types.SimpleNamespace(kind=kind, **fields)


GPU_CASES = [  # (problem, CPU's choice, GPU's choice, large enough for the GPU), at the measured thresholds
    (_sized("matching", n_edges=249_999), "pr-seq", "gpr", False),
    (_sized("matching", n_edges=250_000), "pr-seq", "gpr", True),
    (_sized("flow", n_edges=9_999), "dinic", "wbpr", False),
    (_sized("flow", n_edges=10_000), "dinic", "wbpr", True),
    (_sized("assignment", shape=(499, 500), costs=None), "lsa", "hungarian", False),
    (_sized("assignment", shape=(500, 500), costs=None), "lsa", "hungarian", True),
    (_sized("points", sizes=[400, 600, 400]), "lsa", "hungarian", False),  # below 500 x 500: as dense
    (_sized("points", sizes=[400, 700, 500]), "knn", "hungarian", False),  # from there knn, GPU or not
    (_sized("points", sizes=[4000, 7000, 5000]), "knn", "hungarian", False),
    (_sized("assignment", shape=(499, 500), distances=None), "lsa", "hungarian", False),  # EuclideanCosts
    (_sized("assignment", shape=(500, 500), distances=None), "knn", "hungarian", False),
    (_sized("assignment", shape=(20000, 20000), row_ptr=None), "lapjvsp", "auction", False),  # sparse: CPU at every size
]


@pytest.mark.parametrize("problem, cpu, gpu, large", GPU_CASES)
def test_with_a_gpu_its_algorithm_runs_from_the_measured_size(monkeypatch, problem, cpu, gpu, large):
    from solvers import targets
    from solvers.choice import choose
    monkeypatch.setattr(targets, "cuda_available", lambda: True)
    auto = choose(problem, "auto")
    assert auto.algorithm == (gpu if large else cpu)
    assert ("with a GPU" in auto.reason) == large and ("the CPU wins" in auto.reason) != large
    assert choose(problem, "cuda").algorithm == gpu and choose(problem, "cudasim").algorithm == gpu
    assert "simulated" in choose(problem, "cudasim").reason
    assert choose(problem, "cpu").algorithm == cpu
    monkeypatch.setattr(targets, "cuda_available", lambda: False)
    assert choose(problem, "auto").algorithm == cpu and "on the CPU" in choose(problem, "auto").reason


def test_choice_reasons_name_the_problem_and_its_size():
    from solvers.choice import choose
    reasons = {name: choose(solvers.load(ROOT / "sample_graphs" / name), "cpu").reason
               for name in ("random-bipartite_200x200_d3.mtx", "washington-rlg_8x8.max", "dense-lap_50.npy",
                            "sparse-lap_100.asn", "particles_100x10.npz")}
    assert reasons["random-bipartite_200x200_d3.mtx"] == "the fastest on the CPU for a matching problem with 600 edges"
    assert reasons["washington-rlg_8x8.max"] == "the fastest on the CPU for a flow network with 184 edges"
    assert reasons["dense-lap_50.npy"] == "the fastest on the CPU for a dense assignment problem of 50 x 50"
    assert reasons["sparse-lap_100.asn"] == "the fastest on the CPU for a sparse assignment problem of 100 x 100"
    assert reasons["particles_100x10.npz"].startswith("the fastest on the CPU for a point series (frame pairs of up to")


def test_the_chosen_algorithm_is_documented(capsys):
    from solvers.choice import CHOICE_HELP
    assert main(["solve", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert " ".join(CHOICE_HELP.split()) in text
    readme = " ".join((ROOT / "README.md").read_text().split())
    for phrase in ("matching pr-seq", "flow dinic", "sparse assignment lapjvsp", "250,000 edges matching gpr",
                   "10,000 edges flow wbpr", "500 x 500 dense assignment"):
        assert phrase in " ".join(CHOICE_HELP.split()) and phrase in readme, phrase


def test_options_without_algo_apply_to_the_chosen_one(capsys):
    path = ROOT / "sample_graphs" / "dense-lap_50.npy"
    assert main(["solve", str(path), "--backend", "cpu", "--opt", "eps=0.5"]) == 2  # lsa has no eps
    assert_one_error_line(capsys.readouterr().err, "lsa has no option eps")


# ---------------------------------------------------------------------------------------------
# refusals: one-frame series, --out replacing the input, the path named once


def test_a_one_frame_point_series_is_refused(capsys):
    sample = ROOT / "sample_graphs" / "particles_100_frame0.ply"
    for extra in (["--algo", "auction"], [], ["--json"]):
        assert main(["solve", str(sample), *extra]) == 2
        out, err = capsys.readouterr()
        assert_one_error_line(err, f"{sample}: a point series needs at least two frames to track; it holds one")
        assert out == ""


def test_a_one_frame_point_series_in_a_subprocess(tmp_path):
    proc = run_cli("solve", ROOT / "sample_graphs" / "particles_100_frame0.ply", "--algo", "auction")
    assert proc.returncode == 2 and proc.stdout == ""
    assert_one_error_line(proc.stderr, "at least two frames")


@pytest.mark.parametrize("how", ["same", "relative", "symlink", "hardlink"])
def test_out_may_not_replace_the_input(tmp_path, capsys, monkeypatch, how):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    path = write_graph_mtx(tmp_path / "g.mtx", random_graph(np.random.default_rng(3), 6, 6, 0.4))
    before = path.read_bytes()
    out = {"same": str(path), "relative": "sub/../g.mtx", "symlink": "link.mtx", "hardlink": "hard.mtx"}[how]
    if how == "symlink":
        (tmp_path / "link.mtx").symlink_to(path)
    if how == "hardlink":
        os.link(path, tmp_path / "hard.mtx")
    def must_not_run(*args, **kwargs):
        raise AssertionError("solve ran although --out would replace the input")
    monkeypatch.setattr(solvers, "solve", must_not_run)
    assert main(["solve", str(path), "--algo", "hopcroft-karp", "--out", out]) == 2
    assert_one_error_line(capsys.readouterr().err, out, "--out names the input file")
    assert path.read_bytes() == before


def test_a_missing_input_is_reported_as_missing_even_with_the_same_out(tmp_path, capsys):
    missing = tmp_path / "absent.mtx"
    assert main(["solve", str(missing), "--algo", "hopcroft-karp", "--out", str(missing)]) == 2
    err = capsys.readouterr().err
    assert_one_error_line(err, str(missing))
    assert "--out" not in err and not missing.exists()


def test_out_next_to_the_input_is_fine(tmp_path, capsys):
    path = write_graph_mtx(tmp_path / "g.mtx", random_graph(np.random.default_rng(3), 6, 6, 0.4))
    assert main(["solve", str(path), "--algo", "hopcroft-karp", "--out", str(tmp_path / "g.result.mtx")]) == 0


@pytest.mark.parametrize("algo", ["lsa", "lapjvsp", "hungarian", "auction"])
def test_infeasible_assignment_names_the_path_once(tmp_path, capsys, algo):
    path = tmp_path / "c.npy"
    np.save(path, np.array([[np.inf, np.inf], [1.0, 2.0]]))
    assert main(["solve", str(path), "--algo", algo, "--backend", "cpu"]) == 2
    err = capsys.readouterr().err
    line = err.strip().splitlines()[-1]  # a first run of hungarian / auction may say it compiles first
    assert line.startswith(f"error: {path}: no complete assignment") and line.count(str(path)) == 1, err


# ---------------------------------------------------------------------------------------------
# gen --help, plain language, human summary = JSON


def test_gen_lists_every_kind_it_writes_from_the_generators_registry(capsys):
    """dense-lap-batch was missing from the unknown-kind error: both tables of solvers.generators
    are listed, in the help and in the error."""
    from solvers.cli import BATCH_KIND
    from solvers.generators import BATCH_KINDS, KINDS
    assert set(BATCH_KINDS) == {BATCH_KIND}  # a new batch kind needs its own flags in cli._cmd_gen_batch
    every = [*KINDS, *BATCH_KINDS]
    assert main(["gen", "--help"]) == 0
    listing = capsys.readouterr().out.split("kinds:\n", 1)[1]
    assert [line.split()[0] for line in listing.splitlines() if line.startswith("  ")] == every
    assert main(["gen", "no-such-kind", "--out", "x.mtx"]) == 2
    err = capsys.readouterr().err
    assert_one_error_line(err, "no-such-kind", *(f"'{kind}'" for kind in every))


def test_gen_help_lists_the_kinds_where_it_says(capsys):
    from solvers.generators import KINDS
    assert main(["gen", "--help"]) == 0
    text = capsys.readouterr().out
    assert "one of the kinds listed below" in text
    assert all(text.index(f"  {kind} ") > text.index("one of the kinds listed below") for kind in KINDS)


def test_counts_are_plain_language(tmp_path, capsys):
    write_series_npz(tmp_path / "two.npz", np.random.default_rng(2), [1, 1])  # 1 frame pair, 1 link, 1 track
    assert main(["solve", str(tmp_path / "two.npz"), "--algo", "lsa", "--opt", "max_distance=off"]) == 0
    out = capsys.readouterr().out
    fields = summary_fields(out)
    assert fields["algorithm"] == "lsa on cpu, 1 frame pair"
    assert fields["iterations"] == "1 assignment solve"
    assert fields["links"] == "1 in 1 track, 0 points unmatched"
    assert re.fullmatch(DURATION + r" \(the assignment solves\)", fields["solve time"])
    assert fields["problem"] == "points: frames 2, points 1, ground truth yes"
    assert not re.search(r"(?<![\d,.])1 [a-z ]*s\b(?! unmatched)", out.replace("points unmatched", "")), out
    assert "True" not in out and "[" not in fields["problem"]


@settings(max_examples=10)
@given(seed=st.integers(0, 2**31 - 1), rows=st.integers(1, 6), cols=st.integers(1, 6),
       scale=st.sampled_from([1e-20, 1e-3, 1.0, 1e12, 1e300]))
def test_human_summary_and_json_agree(tmp_path_factory, seed, rows, cols, scale):
    costs = np.random.default_rng(seed).random((rows, cols)) * scale  # values %g would round
    path = tmp_path_factory.mktemp("agree") / "c.npy"
    np.save(path, costs)
    human, machine = io.StringIO(), io.StringIO()
    assert _main_capturing(["solve", str(path), "--algo", "lsa"], stdout=human) == 0
    assert _main_capturing(["solve", str(path), "--algo", "lsa", "--json"], stdout=machine) == 0
    fields, record = summary_fields(human.getvalue()), last_json(machine.getvalue())
    assert float(fields["value"]) == record["value"]
    assert int(fields["iterations"].replace(",", "")) == record["iterations"]
    assert fields["algorithm"].startswith(f"{record['algorithm']} on {record['backend']}")
    assert fields["certified"].startswith("yes") == record["certified"]


def test_tracking_summary_and_json_agree(capsys):
    sample = ROOT / "sample_graphs" / "particles_100x10.npz"
    assert main(["solve", str(sample), "--algo", "lsa"]) == 0
    fields = summary_fields(capsys.readouterr().out)
    assert main(["solve", str(sample), "--algo", "lsa", "--json"]) == 0
    record = last_json(capsys.readouterr().out)
    assert float(fields["value"].split(" (")[0]) == record["value"]
    assert fields["iterations"] == f"{record['iterations']} assignment solves"
    assert fields["links"].startswith(f"{record['links']} in {record['tracks']} tracks")


# ---------------------------------------------------------------------------------------------
# progress of a tracking run: "frame pair k of N"


def test_progress_line_shows_the_frame_pair():
    terminal = FakeTerminal()
    line = ProgressLine(terminal, interval=0.0)
    line.on_progress(0, 99, "frame pair")
    line.on_start(RunInfo("lsa", "cpu", "assignment"))
    line.on_iteration(IterationStats(3, 0.5, "augment"))
    line.on_progress(11, 99, "frame pair")
    text = terminal.getvalue()
    assert "frame pair 1 of 99  lsa [cpu]" in text and "frame pair 12 of 99" in text
    assert "frame pair 1 of 99  lsa [cpu]  iteration 3  augment  500 ms" in text
    line.on_progress(99, 99, "frame pair")  # done: the stage is gone
    line.on_start(RunInfo("lsa", "cpu", "assignment"))
    assert terminal.getvalue().split("\r")[-1].rstrip() == "lsa [cpu]  starting"


def test_tracking_progress_on_a_terminal(tmp_path):
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(4), [4, 4, 4])
    terminal, out = FakeTerminal(), io.StringIO()
    assert _main_capturing(["solve", str(tmp_path / "s.npz"), "--algo", "lsa", "--json"], stdout=out, stderr=terminal) == 0
    assert "frame pair 1 of 2" in terminal.getvalue() and terminal.getvalue().endswith("\r")
    assert last_json(out.getvalue())["stats"]["frame_pairs"] == 2


def test_cuda_kernels_compiled_without_numba_s_event_are_reported_afterwards(monkeypatch):
    """numba-cuda compiles kernels without numba's compile event: for backend cuda the watch also
    counts its dispatchers' compilations when the block ends (stand-in counts here, no GPU)."""
    import solvers.warmup as warmup
    # kernels compiled in the process before and after the block (and of them, without an on-disk cache)
    counts = iter([(4, 0), (7, 0), (7, 0), (9, 1)])
    monkeypatch.setattr(warmup, "_cuda_kernels_compiled", lambda: next(counts))
    seen = []
    with warmup.watch_compiles(lambda watch: seen.append((watch.compiled, watch.cached, watch.afterwards)), "cuda"):
        pass
    assert seen == [(3, True, True)]  # kept in the kernel cache: the next process loads them
    with warmup.watch_compiles(lambda watch: seen.append((watch.compiled, watch.cached, watch.afterwards)), "cuda"):
        pass
    assert seen[1:] == [(2, False, True)]  # one kernel without a cache: compiled in every process
    seen = seen[:1]
    with warmup.watch_compiles(lambda watch: seen.append("cpu"), "cpu"):  # cpu: never counted this way
        pass
    assert seen == [(3, True, True)]
    counts = iter([(7, 0), (7, 0)])  # nothing compiled: nothing said
    with warmup.watch_compiles(lambda watch: seen.append("none"), "cuda"):
        pass
    assert seen == [(3, True, True)]


def test_cuda_kernels_decide_what_is_said_even_after_a_cached_cpu_helper_compiled(tmp_path, monkeypatch):
    """A cuda run may compile a cached CPU helper (a certificate's) before its kernels: the line
    comes at the end, and what it says of the cache follows the kernels."""
    import solvers.warmup as warmup
    module = _import_numba_module(tmp_path / "helper.py", cache=True)
    # kernels without an on-disk cache, and with the helper alone
    for kernels, cached in (((2, 2), False), ((0, 0), True)):
        counts = iter([(0, 0), kernels])
        monkeypatch.setattr(warmup, "_cuda_kernels_compiled", lambda: next(counts))
        seen = []
        with warmup.watch_compiles(lambda watch: seen.append((watch.cached, watch.afterwards)), "cuda"):
            module.plus_one(1) if cached else module.plus_one(1.5)  # a new signature compiles each time
            assert seen == []  # nothing said before the end
        assert seen == [(cached, True)]


def env_without_numba_hints() -> dict:
    """A child's environment with numba's hint variables and the simulator unset: what a user has."""
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    for name in ("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "NUMBA_CUDA_WARN_ON_IMPLICIT_COPY", "NUMBA_ENABLE_CUDASIM"):
        env.pop(name, None)
    return env


def test_numba_cuda_performance_hints_are_off_for_cli_runs(tmp_path):
    """A tiny problem on a GPU gets a 'grid size 1 ... under-utilization' warning per kernel from
    numba-cuda: the CLI turns those hints off before numba reads its configuration."""
    np.save(tmp_path / "c.npy", np.eye(3))
    code = ("import sys; from solvers.cli import main; code = main(sys.argv[1:]); "
            "from numba.core import config; "
            "print(code, config.CUDA_LOW_OCCUPANCY_WARNINGS, config.CUDA_WARN_ON_IMPLICIT_COPY)")
    env = env_without_numba_hints()
    proc = subprocess.run([sys.executable, "-c", code, "solve", str(tmp_path / "c.npy"), "--algo", "hungarian",
                           "--backend", "cpu", "--json"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "0 0 0"


@pytest.mark.parametrize("asked", [None, "1"])
def test_numba_cuda_performance_hints_are_off_for_api_users_unless_asked(asked):
    """The Python API has no front end to set numba's variables first: a user who imported numba.cuda
    before solvers saw a 'grid size ... under-utilization' warning per small launch (the headline
    benchmark printed dozens). Loading our cuda target turns them off, unless the variable asks."""
    code = ("from numba import cuda; from numba.cuda.core import config; "
            "import solvers.targets.cuda; "
            "print(config.CUDA_LOW_OCCUPANCY_WARNINGS, config.CUDA_WARN_ON_IMPLICIT_COPY)")
    env = env_without_numba_hints()
    if asked:
        env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = asked
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == (["1", "0"] if asked else ["0", "0"])


@pytest.mark.parametrize("argv, expected", [
    (["gen", "random-bipartite", "--rows", "ten", "--cols", "3", "--degree", "1", "--out", "x.mtx"],
     "ten is not a whole number"),
    (["gen", "dense-lap", "--n", "3", "--integer", "maybe", "--out", "x.npy"], "maybe is not true or false"),
    (["gen", "rmat", "--scale", "5", "--a", "half", "--out", "x.mtx"], "half is not a number"),
    (["solve", "s.npz", "--algo", "lsa", "--opt", "max_distance=far"], "max_distance must be a positive number, auto or off, not far"),
    (["solve", "s.npz", "--algo", "lsa", "--opt", "gate"], "--opt gate must look like KEY=VALUE"),
])
def test_error_lines_are_plain_language(tmp_path, capsys, monkeypatch, argv, expected):
    monkeypatch.chdir(tmp_path)
    write_series_npz(tmp_path / "s.npz", np.random.default_rng(1), [3, 3])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert_one_error_line(err, expected)
    assert "'" not in err and '"' not in err  # no Python reprs


def test_unknown_backend_in_the_api_is_plain_language():
    with pytest.raises(solvers.BackendUnavailable) as caught:
        solvers.solve([[1.0]], "lsa", backend="tpu")
    assert str(caught.value) == "unknown backend tpu; choose from auto, cpu, cuda, cudasim"


def test_an_out_name_too_long_is_one_line_before_the_solve(graph_file, capsys, tmp_path):
    out = tmp_path / ("d" * 300) / "x.csv"  # Path.is_dir() raises OSError on such a folder name
    assert main(["solve", str(graph_file[0]), "--algo", "hopcroft-karp", "--out", str(out)]) == 2
    assert_one_error_line(capsys.readouterr().err, "cannot write file")


def test_a_newline_in_a_file_name_keeps_the_error_on_one_line(capsys, tmp_path):
    odd = tmp_path / "two\nlines.mtx"
    odd.write_text("not a matrix market file\n")
    assert main(["solve", str(odd), "--algo", "hopcroft-karp"]) == 2
    assert_one_error_line(capsys.readouterr().err, "two?lines.mtx")


def test_importing_the_package_loads_no_numba():
    """numba must load only where it is used: a front end chooses the CUDA simulator (an environment
    variable numba reads once, on import) after it has imported solvers."""
    code = "import sys, solvers, solvers.cli; print('numba' in sys.modules)"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=dict(env, PYTHONPATH=child_pythonpath()),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


@pytest.mark.parametrize("args", [["formats", "--json"], ["algos"]])
def test_a_reader_that_stops_early_gets_no_traceback(args):
    """`matchscope formats --json | head -c 10`: the reader closes the pipe before the command
    writes; the command ends quietly (exit 0, nothing on stderr), not with a broken-pipe traceback.
    The pipe is closed before the child's first write, so the case is met on every run."""
    env = dict(os.environ, PYTHONPATH=child_pythonpath())
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    child = subprocess.Popen([sys.executable, "-m", "solvers", *args], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0 and err == "", err
