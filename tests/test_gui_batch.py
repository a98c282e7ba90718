"""A batch in the explorer: it opens as a dataset, Run solves every problem and the Batch tab lists
them (sortable; distributions of search steps and time), a problem solved alone shows its run in
the other tabs, Compare runs the batch backends side by side, and the assignments export as the
command line writes them."""
from __future__ import annotations

import csv
import re

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from test_gui_fakes import (assert_real_content, configure_qt_platform, save_shot, wait_loaded,  # noqa: F401
                            wait_run, window)

configure_qt_platform()

from PySide6 import QtCore  # noqa: E402

pytestmark = pytest.mark.gui


def ragged_batch(tmp_path, count=40, seed=4):
    rng = np.random.default_rng(seed)
    items = [rng.integers(0, 30, (int(n), int(n) + int(rng.integers(0, 6)))).astype(float)
             for n in rng.integers(3, 40, count)]
    items[7] = items[7].T.copy()  # a tall one
    items[9][:, :] = np.inf        # no allowed pair at all: infeasible
    path = tmp_path / "batch.npz"
    np.savez(path, *items)
    return items, path


def run_ragged_batch(win, qtbot, tmp_path, count: int, seed: int):
    """Open a ragged batch of ``count`` problems in the window and run it to the end: (items, path, run)."""
    items, path = ragged_batch(tmp_path, count=count, seed=seed)
    win.open_path(path)
    wait_loaded(qtbot, win)
    run = win.start_run()
    wait_run(qtbot, run)
    return items, path, run


def scipy_value(costs) -> float:
    rows, cols = linear_sum_assignment(costs)
    return float(costs[rows, cols].sum())


def test_a_batch_opens_runs_lists_its_problems_and_solves_one_alone(window, qtbot, tmp_path):
    win = window
    items, path = ragged_batch(tmp_path)
    win.open_path(path)
    wait_loaded(qtbot, win)
    assert win.session.problem.kind == "batch"
    assert win.solver_panel.available_names() == ["hungarian"]
    form = win.dataset_panel.form
    facts = {form.itemAt(i, form.ItemRole.LabelRole).widget().text().rstrip(":"):
             form.itemAt(i, form.ItemRole.FieldRole).widget().text() for i in range(form.rowCount())}
    assert facts["problems"] == "40" and "rows" in facts["sizes"] and "columns" in facts["sizes"]
    assert not win.act_save_dataset.isEnabled()  # no format writes a batch dataset: nothing to offer

    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "finished", run.error
    assert win.current_view() is win.batch_view  # a finished batch run shows its problems
    view = win.batch_view
    view.refresh(force=True)
    model = view.model
    assert model.rowCount() == 40
    for b, costs in enumerate(items):
        shown = model.data(model.index(b, 2))
        if b == 9:
            assert shown == "—" and model.data(model.index(b, 5)) == "infeasible"
        else:
            assert float(shown) == pytest.approx(scipy_value(costs), rel=1e-6)
            assert model.data(model.index(b, 5)) == "optimal"
    assert "39 of 40 problems certified optimal" in view.header.text() and "1 proven infeasible" in view.header.text()
    # one problem is infeasible: the panel does not call the run "certified optimal"
    assert run.certificate_status == "proven-infeasible"
    assert win.solver_panel.elapsed.text() == "finished · certified (each problem optimal or proven infeasible)"
    assert "problems" in win.solver_panel.live_text() and "search steps" in win.solver_panel.live_text()
    assert_real_content(save_shot(view, "batch-view.png"), "the batch view")

    # sorting by search steps puts the problem with the most steps last
    view.table.sortByColumn(3, QtCore.Qt.SortOrder.AscendingOrder)
    last = view.proxy.mapToSource(view.proxy.index(39, 0)).row()
    assert run.batch.iterations[last] == run.batch.iterations.max()

    # the distributions hold every problem
    tables = view.tables()
    assert tables["search_steps_histogram"]["problems"].sum() == 40 and tables["seconds_histogram"]["problems"].sum() == 40
    assert len(tables["problems"]["value"]) == 40

    # one problem alone: its own run, with telemetry, the same value
    view.select_item(7)
    with qtbot.waitSignal(view.itemRequested, timeout=5000) as asked:
        view.solve_button.click()
    assert asked.args == [7]
    alone = win.session.current_run
    assert alone is not run and alone.problem.shape == items[7].shape
    wait_run(qtbot, alone)
    assert alone.status == "finished" and alone.result.certified
    assert alone.result.value == pytest.approx(scipy_value(items[7]))
    assert "problem 7" in alone.dataset and alone.n_reports > 0

    # export the batch run's assignments as the command line writes them; it records no steps to replay
    win.session.set_current_run(run)
    assert not win.act_save_run.isEnabled()
    out = win.export_solution(tmp_path / "assignments.csv")
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {"item", "row", "col", "cost"} <= set(rows[0])
    first = [r for r in rows if r["item"] == "0"]
    assert sum(float(r["cost"]) for r in first) == pytest.approx(scipy_value(items[0]))


def test_compare_puts_the_batch_backends_side_by_side(window, qtbot, tmp_path):
    win = window
    _, path = ragged_batch(tmp_path, count=12, seed=5)
    win.open_path(path)
    wait_loaded(qtbot, win)
    win.add_all_to_compare()
    configs = win.compare_view.configs
    assert [c["backend"] for c in configs] == ["cpu"]  # this machine: no GPU; never the simulator
    runs = win.run_comparison([dict(c) for c in configs])
    for run in runs:
        wait_run(qtbot, run)
    rows = win.compare_view.rows()
    assert len(rows) == 1 and rows[0]["certified"] and rows[0]["backend"] == "cpu"
    assert rows[0]["iterations"] == int(runs[0].batch.iterations.sum())


def test_a_batch_file_with_a_bad_number_is_one_line(window, qtbot, tmp_path):
    win = window
    costs = np.zeros((3, 4, 4))
    costs[2, 1, 1] = np.nan
    path = tmp_path / "bad.npy"
    np.save(path, costs)
    shown = []
    win.report_error = lambda message, **kw: shown.append(message)
    win.open_path(path)
    qtbot.waitUntil(lambda: bool(shown) and not win.host.busy, timeout=20_000)
    assert "bad.npy" in shown[0] and "item 2" in shown[0] and "\n" not in shown[0]
    assert win.session.problem is None


def test_a_small_window_shows_every_column_of_the_batch_table(window, qtbot):
    """At 1024 x 700 the table takes the width of its six columns and the charts keep theirs."""
    from explorer.views.batch import CHARTS_MIN_WIDTH
    from pathlib import Path
    win = window
    win.resize(1024, 700)
    win.open_path(Path(__file__).resolve().parents[1] / "sample_graphs" / "dense-lap-batch_100x16x24.npy")
    wait_loaded(qtbot, win)
    run = win.start_run()
    wait_run(qtbot, run)
    view = win.batch_view
    view.refresh(force=True)
    qtbot.wait(50)
    table = view.table
    assert table.horizontalScrollBar().maximum() == 0  # no column cut off
    assert view.split.sizes()[1] >= CHARTS_MIN_WIDTH
    save_shot(win, "batch-1024.png")


def test_the_time_column_has_one_unit_named_in_its_header_and_sorts_by_number(window, qtbot, tmp_path):
    """Problems whose times span microseconds to a quarter second: every cell of the time column is a
    plain number in the header's one unit (not "3 µs" above "0.25 s"), and sorting orders them by time."""
    import dataclasses
    win = window
    _, path, run = run_ragged_batch(win, qtbot, tmp_path, count=12, seed=6)
    assert run.status == "finished", run.error
    spread = np.array([3e-6, 0.25, 4.5e-5, 0.0012, 7e-6, 0.03, 2e-4, 9e-6, 0.11, 5e-6, 6e-4, 0.002])
    run.batch = dataclasses.replace(run.batch, item_seconds=spread)  # times a slow machine could report
    view = win.batch_view
    view.refresh(force=True)
    model = view.model
    column = [model.headerData(c, QtCore.Qt.Orientation.Horizontal) for c in range(model.columnCount())].index(
        "time (ms)")
    cells = [model.data(model.index(b, column)) for b in range(12)]
    assert all(re.fullmatch(r"\d+\.\d+", c) for c in cells), cells  # no unit in a cell: it is in the header
    assert len({len(c.split(".")[1]) for c in cells}) == 1, cells   # the same decimals down the column
    for cell, seconds in zip(cells, spread):
        assert float(cell) == pytest.approx(seconds * 1e3, rel=0.02)  # 3 µs is 0.0030 ms, not 0.00
    view.table.sortByColumn(column, QtCore.Qt.SortOrder.AscendingOrder)
    shown = [float(view.proxy.index(r, column).data()) for r in range(12)]
    assert shown == sorted(shown) and shown[0] == pytest.approx(3e-3) and shown[-1] == pytest.approx(250.0)


def test_a_batch_run_exports_compressed_as_its_dialog_offers(window, qtbot, tmp_path, monkeypatch):
    """The batch writer takes .csv.gz and .json.gz like the result formats: Export ▸ Solution's dialog
    offers them, and what it writes is gzip-compressed and reads back as the command line's CSV."""
    import fnmatch
    import gzip
    from PySide6 import QtWidgets
    win = window
    items, path, run = run_ragged_batch(win, qtbot, tmp_path, count=12, seed=7)
    offered = []

    def cancel(parent, title, start, filters):
        offered.append(filters.split(";;"))
        return "", ""
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", staticmethod(cancel))
    win.export_solution_dialog()
    filters = offered[-1]
    for name in ("assignments.csv", "assignments.csv.gz", "assignments.json", "assignments.json.gz"):
        shown_by = [f for f in filters if any(fnmatch.fnmatchcase(name, p) for p in f[f.index("(") + 1:-1].split())]
        assert shown_by, f"{name} is in no filter of {filters}"
    out = win.export_solution(tmp_path / "assignments.csv.gz")
    with gzip.open(out, "rt", newline="") as fh:
        rows = list(csv.DictReader(fh))
    first = [r for r in rows if r["item"] == "0"]
    assert sum(float(r["cost"]) for r in first) == pytest.approx(scipy_value(items[0]))


def test_the_replay_bar_says_a_batch_has_no_steps_and_replays_a_problem_solved_alone(window, qtbot, tmp_path):
    """A batch run records no steps (as Save Run Record says): the Replay bar offers no empty slider
    or Play for it but says how to watch one problem; that problem's own run replays as any run."""
    win = window
    _, path, run = run_ragged_batch(win, qtbot, tmp_path, count=12, seed=8)
    bar = win.timeline
    qtbot.waitUntil(lambda: "Solve alone" in bar.position_label.text())
    assert not bar.slider.isVisible() and not bar.speed_combo.isVisible()
    assert not bar.play_button.isEnabled() and not bar.live_button.isEnabled()
    assert "no steps to replay" in bar.position_label.text() and "Batch tab" in bar.position_label.toolTip()
    win.act_play.trigger()  # Play / Pause and the step keys do nothing to a batch run
    win.act_step_back.trigger()
    assert not bar.playing and win.session.cursor is None

    win.batch_view.select_item(2)
    alone = win.run_batch_item(2)
    wait_run(qtbot, alone)
    qtbot.waitUntil(lambda: bar.position_label.text().startswith("report "))
    assert bar.slider.isVisible() and bar.play_button.isEnabled() and bar.slider.maximum() == alone.columns.n > 0
    assert bar.run_combo.currentText() == alone.label and alone.label in bar.run_combo.toolTip()
    bar.slider.setValue(1)  # a problem's own run scrubs like any run
    assert win.session.cursor == 1
    win.session.set_current_run(run)  # back to the batch: the hint again
    assert not bar.slider.isVisible() and "Solve alone" in bar.position_label.text()
