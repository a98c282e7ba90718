"""Saving Results as CSV / JSON / MTX, checked with independent readers (csv, json, scipy)."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from solvers.errors import InputError
from solvers.formats import save
from solvers.problems import CostMatrix, FlowNetwork, SparseCosts
from solvers.result import Certificate, Result


def make_result(kind, value, row_match=None, col_match=None, flow=None) -> Result:
    certificate = Certificate("dual-potentials" if kind == "assignment" else "min-cut", True, True)
    return Result(kind, "test-algo", "cpu", value, 3, 0.01, certificate, row_match=row_match,
                  col_match=col_match, flow=flow, stats={"pushes": np.int64(7)},
                  options={"seed": 1, "epsilon": np.float32(0.5), "order": np.arange(2)})


def matching_from_pairs(rows, cols, n_rows, n_cols):
    row_match = np.full(n_rows, -1, dtype=np.int64)
    col_match = np.full(n_cols, -1, dtype=np.int64)
    row_match[rows], col_match[cols] = cols, rows
    return row_match, col_match


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 9), n_cols=st.integers(1, 9),
       sparse=st.booleans())
def test_assignment_csv_costs_sum_to_the_scipy_optimum(tmp_path_factory, seed, n_rows, n_cols, sparse):
    rng = np.random.default_rng(seed)
    dense = rng.normal(size=(n_rows, n_cols)) * 100
    rows, cols = linear_sum_assignment(dense)
    problem = CostMatrix.from_array(dense)
    if sparse:
        r, c = np.nonzero(np.ones_like(dense))
        problem = SparseCosts.from_edges(r, c, dense[r, c], n_rows, n_cols)
    result = make_result("assignment", dense[rows, cols].sum(), *matching_from_pairs(rows, cols, n_rows, n_cols))
    folder = tmp_path_factory.mktemp("res")
    save(result, folder / "a.csv", problem=problem)
    header, body = read_csv(folder / "a.csv")
    assert header == ["row", "col", "cost"]
    table = np.array(body, dtype=np.float64).reshape(-1, 3)
    np.testing.assert_array_equal(table[:, :2], np.column_stack([rows, cols]))
    np.testing.assert_array_equal(table[:, 2], dense[rows, cols])  # exact: shortest round-trip text
    assert np.isclose(table[:, 2].sum(), dense[rows, cols].sum())

    save(result, folder / "a.json", problem=problem)
    record = json.loads((folder / "a.json").read_text())
    assert record["problem"] == "assignment" and record["algorithm"] == "test-algo"
    assert record["stats"] == {"pushes": 7} and record["certified"] is True
    assert record["options"] == {"seed": 1, "epsilon": 0.5, "order": [0, 1]}
    assert record["pairs"] == np.column_stack([rows, cols]).tolist()
    assert record["costs"] == dense[rows, cols].tolist()


def test_matching_exports(tmp_path):
    row_match, col_match = matching_from_pairs(np.array([0, 2]), np.array([3, 1]), 4, 5)
    result = make_result("matching", 2, row_match, col_match)
    save(result, tmp_path / "m.csv")
    header, body = read_csv(tmp_path / "m.csv")
    assert header == ["row", "col"] and body == [["0", "3"], ["2", "1"]]
    save(result, tmp_path / "m.mtx")
    matrix = sp.coo_matrix(scipy.io.mmread(str(tmp_path / "m.mtx")))
    assert matrix.shape == (4, 5)
    assert set(zip(matrix.row.tolist(), matrix.col.tolist())) == {(0, 3), (2, 1)}
    save(result, tmp_path / "m.json.gz")
    import gzip
    record = json.loads(gzip.decompress((tmp_path / "m.json.gz").read_bytes()))
    assert record["pairs"] == [[0, 3], [2, 1]] and "costs" not in record


def test_assignment_without_problem_has_no_cost_column(tmp_path):
    row_match, col_match = matching_from_pairs(np.array([0]), np.array([0]), 1, 1)
    save(make_result("assignment", 1.0, row_match, col_match), tmp_path / "a.csv")
    assert read_csv(tmp_path / "a.csv") == (["row", "col"], [["0", "0"]])


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8), m=st.integers(0, 25))
def test_flow_exports_against_scipy_sums(tmp_path_factory, seed, n, m):
    rng = np.random.default_rng(seed)
    tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = tail != head
    tail, head = tail[keep], head[keep]
    cap = rng.integers(0, 10, tail.size)
    net = FlowNetwork.from_edges(n, tail, head, cap, 0, n - 1)
    flow = (cap * rng.random(tail.size)).astype(np.int64)
    result = make_result("flow", float(flow.sum()), flow=flow)
    folder = tmp_path_factory.mktemp("flow")

    save(result, folder / "f.csv", problem=net)
    header, body = read_csv(folder / "f.csv")
    assert header == ["tail", "head", "capacity", "flow"]
    np.testing.assert_array_equal(np.array(body, dtype=np.int64).reshape(-1, 4),
                                  np.column_stack([tail, head, cap, flow]))

    save(result, folder / "f.mtx", problem=net)
    got = sp.csr_matrix(scipy.io.mmread(str(folder / "f.mtx"))).toarray()
    expected = sp.coo_matrix((flow, (tail, head)), shape=(n, n)).toarray()  # duplicates summed
    np.testing.assert_array_equal(got, expected)

    save(result, folder / "f.json")
    assert json.loads((folder / "f.json").read_text())["flow"] == flow.tolist()


def test_flow_export_needs_the_network(tmp_path):
    result = make_result("flow", 0.0, flow=np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="problem="):
        save(result, tmp_path / "f.csv")
    wrong = FlowNetwork.from_edges(3, [0], [1], [1], 0, 2)
    with pytest.raises(ValueError, match="the flow network this flow result solves"):
        save(result, tmp_path / "f.csv", problem=wrong)
    with pytest.raises(InputError, match="cannot be saved"):
        save(result, tmp_path / "f.txt")
    assert list(tmp_path.iterdir()) == []


def test_json_of_an_epsilon_run_says_certified_within_its_gap(tmp_path):
    """A certificate that proves only the gap an epsilon-run claims: certified, not optimal, and
    the JSON export carries gap, optimal and bound."""
    certificate = Certificate("dual-potentials", True, False, gap=3.0, tolerance=1e-9, bound=25.0)
    assert certificate.certified and certificate.status == "within-gap"
    result = Result("assignment", "auction", "cpu", 72.0, 1, 0.01, certificate,
                    row_match=np.array([1, 0]), col_match=np.array([1, 0]))
    save(result, tmp_path / "r.json")
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["certified"] is True and record["optimal"] is False
    assert record["gap"] == 3.0 and record["bound"] == 25.0
    assert "certified within gap 3 of optimal" in record["certificate"]
    beyond = Certificate("dual-potentials", True, False, gap=30.0, tolerance=1e-9, bound=25.0)
    assert not beyond.certified and beyond.status == "not-proven"
