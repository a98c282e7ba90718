"""Exporting a solvers.result.Result: CSV, JSON or Matrix Market (``.mtx``).

matching / assignment: CSV ``row,col`` (assignment adds ``cost``) one pair per line; JSON is
``summary()`` plus ``pairs`` (and ``costs``); MTX is the pattern matrix of the pairs.
flow: CSV ``tail,head,capacity,flow`` per edge; JSON is ``summary()`` plus ``flow`` per edge (and
``tail``/``head``/``capacity``); MTX is the integer matrix of per-edge flows summed per pair.

A Result holds indices and flows, not the problem: pass ``problem=`` (the solved problem) for
what only the problem knows, i.e. assignment costs and flow edge ends. It is required for flow
CSV and MTX; without it, an assignment CSV / JSON has no cost column and flow JSON no edge ends.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..problems import CostMatrix, FlowNetwork, SparseCosts
from ..result import Result
from ._text import format_rows, write_file

EXTENSIONS = (".csv", ".json", ".mtx")


def pair_costs(problem, pairs: np.ndarray) -> np.ndarray:
    """Cost of each (row, col) pair; inf for a pair the problem does not allow."""
    rows, cols = pairs[:, 0], pairs[:, 1]
    if isinstance(problem, CostMatrix):
        return problem.costs[rows, cols].astype(np.float64)
    edge_rows = np.repeat(np.arange(problem.n_rows, dtype=np.int64), np.diff(problem.row_ptr))
    width = max(problem.n_cols, 1)
    keys = edge_rows * width + problem.col_ind  # CSR is sorted by (row, col)
    if keys.size == 0:
        return np.full(len(pairs), np.inf)
    wanted = rows * width + cols
    at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
    return np.where(keys[at] == wanted, problem.cost[at], np.inf)


def _check_problem(result: Result, problem) -> None:
    if problem is None:
        return
    if result.problem_kind == "flow":
        if not isinstance(problem, FlowNetwork) or problem.n_edges != len(result.flow):
            raise ValueError("problem= must be the flow network this flow result solves")
    elif result.problem_kind == "assignment":
        if not isinstance(problem, (CostMatrix, SparseCosts)) or problem.shape[0] != len(result.row_match):
            raise ValueError("problem= must be the cost matrix this assignment result solves")


def _matching_table(result: Result, problem):
    pairs = result.pairs()
    names, columns = ["row", "col"], [pairs[:, 0], pairs[:, 1]]
    if result.problem_kind == "assignment" and problem is not None:
        names.append("cost")
        columns.append(pair_costs(problem, pairs))
    return names, columns


def _flow_table(result: Result, problem: FlowNetwork):
    return (["tail", "head", "capacity", "flow"],
            [problem.tail, problem.head, problem.capacity, np.asarray(result.flow)])


def _json_value(value):
    """numpy scalars and arrays (e.g. in options) as plain JSON; anything else by its text."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return str(value)


def _needs_problem(result: Result, problem, what: str) -> None:
    if problem is None:
        raise TypeError(f"saving a flow result as {what} needs problem= (the flow network it solves) for the "
                        "edge ends")


def written_as(path) -> str:
    """The extension a result (or tracks) saved under ``path`` is written as: its own, ``.gz`` aside,
    or ".csv" for a name without one (CSV is the default export)."""
    suffix = Path(str(path).lower().removesuffix(".gz")).suffix
    return suffix or ".csv"


def save(result: Result, path, problem=None) -> None:
    name = str(path)
    lower = name.lower().removesuffix(".gz")
    lower = lower if Path(lower).suffix else lower + written_as(path)
    _check_problem(result, problem)
    flow = result.problem_kind == "flow"
    if lower.endswith(".csv"):
        if flow:
            _needs_problem(result, problem, "CSV")
            names, columns = _flow_table(result, problem)
        else:
            names, columns = _matching_table(result, problem)
        write_file(path, (",".join(names) + "\n").encode() + format_rows(columns, sep=b","))
    elif lower.endswith(".json"):
        record = result.summary()
        if flow:
            record["flow"] = np.asarray(result.flow).tolist()
            if problem is not None:
                record.update(tail=problem.tail.tolist(), head=problem.head.tolist(),
                              capacity=problem.capacity.tolist())
        else:
            names, columns = _matching_table(result, problem)
            record["pairs"] = np.column_stack(columns[:2]).tolist()
            if "cost" in names:
                record["costs"] = columns[2].tolist()
        write_file(path, (json.dumps(record, indent=1, default=_json_value) + "\n").encode())
    elif lower.endswith(".mtx"):
        import scipy.io  # here, not at startup (listing formats imports this module)
        import scipy.sparse as sp
        if flow:
            _needs_problem(result, problem, "Matrix Market")
            n = problem.n_vertices
            matrix = sp.coo_matrix((np.asarray(result.flow, dtype=np.int64), (problem.tail, problem.head)),
                                   shape=(n, n)).tocsr()
            matrix.sum_duplicates()
            matrix.eliminate_zeros()
            field = "integer"
        else:
            pairs = result.pairs()
            shape = (len(result.row_match), len(result.col_match) if result.col_match is not None
                     else (problem.shape[1] if problem is not None else int(pairs[:, 1].max(initial=-1)) + 1))
            matrix = sp.coo_matrix((np.ones(len(pairs), np.int8), (pairs[:, 0], pairs[:, 1])), shape=shape)
            field = "pattern"
        buf = io.BytesIO()
        scipy.io.mmwrite(buf, matrix, field=field, symmetry="general",
                         comment=f"matchscope {result.problem_kind} result: {result.algorithm}")
        write_file(path, buf.getvalue())
    else:
        raise InputError(f"results are saved as {', '.join(EXTENSIONS)} (or the same with .gz)", name)
