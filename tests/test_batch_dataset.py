"""A batch as a dataset: solvers.load makes an AssignmentBatch of a 3-D .npy or an .npz of matrices,
solve_batch takes it without checking it again, one item can be taken out to be solved and watched
alone, and the CPU backend times every item on the thread that solves it."""
from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import solvers
from solvers.batch.problem import AssignmentBatch
from solvers.errors import InputError


def test_a_3d_npy_loads_as_a_batch_and_solves_as_the_array_does(tmp_path):
    costs = np.random.default_rng(1).integers(0, 20, (7, 5, 8)).astype(float)
    path = tmp_path / "batch.npy"
    np.save(path, costs)
    batch = solvers.load(path)
    assert isinstance(batch, AssignmentBatch) and len(batch) == 7 and batch.source == str(path)
    assert batch.describe() == {"kind": "batch", "problems": 7, "layout": "regular", "costs": "float64",
                                "rows_min": 5, "rows_max": 5, "cols_min": 8, "cols_max": 8, "entries": 280}
    from_file, from_array = solvers.solve_batch(batch, backend="cpu"), solvers.solve_batch(costs, backend="cpu")
    assert np.array_equal(from_file.values, from_array.values) and from_file.all_certified
    assert np.array_equal(from_file.assignments, from_array.assignments)


def test_one_item_comes_out_in_its_own_orientation(tmp_path):
    rng = np.random.default_rng(2)
    items = [rng.random((3, 6)), rng.random((6, 2)), np.full((2, 2), np.inf)]
    path = tmp_path / "ragged.npz"
    np.savez(path, *items)
    batch = solvers.load(path)
    assert batch.describe()["layout"] == "ragged" and batch.shapes.tolist() == [[3, 6], [6, 2], [2, 2]]
    for b in range(2):
        item = batch.item(b)
        assert np.array_equal(item.costs, items[b])
        rows, cols = linear_sum_assignment(items[b])
        assert solvers.solve(item, "hungarian", backend="cpu").value == pytest.approx(items[b][rows, cols].sum())
    with pytest.raises(InputError) as info:
        batch.item(3)
    assert "no item 3" in str(info.value) and "ragged.npz" in str(info.value) and "\n" not in str(info.value)


def test_a_point_series_npz_is_not_a_batch(tmp_path):
    series = solvers.generate("particles", n=20, frames=3, seed=1)
    path = tmp_path / "series.npz"
    solvers.save(series, path)
    assert isinstance(solvers.load(path), solvers.PointSeries)


def test_a_bad_batch_file_is_one_line_naming_it(tmp_path):
    path = tmp_path / "bad.npy"
    costs = np.zeros((2, 3, 3))
    costs[1, 2, 0] = np.nan
    np.save(path, costs)
    with pytest.raises(InputError) as info:
        solvers.load(path)
    text = str(info.value)
    assert "bad.npy" in text and "item 1" in text and "NaN" in text and "\n" not in text


def test_every_item_is_timed_within_the_solve():
    """Each item's time lies inside the solve, on one of the threads: their sum is at most the
    solve's wall time times the threads (a fact of clocks, whatever the machine's load)."""
    costs = np.random.default_rng(3).random((64, 40, 40))
    result = solvers.solve_batch(costs, backend="cpu")
    result = solvers.solve_batch(costs, backend="cpu")  # compiled or loaded by now
    assert result.item_seconds.shape == (64,)
    if not np.all(np.isnan(result.item_seconds)):  # a machine without a readable counter says NaN
        assert np.all(result.item_seconds > 0)
        assert result.item_seconds.sum() <= result.seconds["solve"] * numba.get_num_threads() * 1.1
