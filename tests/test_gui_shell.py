"""The explorer's window shell: what a newcomer tripped over (issue 11, GUI part A). Exports that
apply and write what their extension names, reading a file as another problem, controls in sight,
one iteration count, progress, plain words, option checks in the form, short outcomes, and the state
across datasets and replays."""
from __future__ import annotations

import csv
import fnmatch
import json
import math
import re
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_gui_fakes import (configure_qt_platform, fake_algorithms, flush_deleted_widgets,  # noqa: F401
                            save_shot, small_graph, wait_loaded, wait_run, window)

configure_qt_platform()

import solvers  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402
from solvers import registry  # noqa: E402
from solvers.problems import BipartiteGraph  # noqa: E402
from solvers.result import Solution  # noqa: E402

pytestmark = pytest.mark.gui
RUNNER_MODULE = __name__
PYTHON_INTERNALS = ("{", "}", "PosixPath", "<options>", "FlowNetwork", "BipartiteGraph", "CostMatrix",
                    "PointSeries", "1 iterations", "1 frames")


def run_fake_short(problem: BipartiteGraph, backend, tel, found=1):
    """Claims a matching of ``found`` pairs (fewer than the optimum): the certificate must refute it."""
    row = np.full(problem.n_rows, -1, dtype=np.int64)
    col = np.full(problem.n_cols, -1, dtype=np.int64)
    rows, cols = problem.edges()
    taken = 0
    for r, c in zip(rows, cols):
        if taken < found and row[r] < 0 and col[c] < 0:
            row[r], col[c] = c, r
            taken += 1
    if tel.enabled:
        tel.iteration(0, "done", value=float(taken))
    return Solution(float(taken), 1, row, col)


def run_fake_broken(problem: BipartiteGraph, backend, tel):
    raise KeyError("rows")  # a bug in a solver, not the user's input


FAKE_BROKEN = registry.Algorithm("fake-broken", ("matching",), (BipartiteGraph,), ("cpu",),
                                 f"{RUNNER_MODULE}:run_fake_broken", summary="test stand-in with a bug", compiled=False)
FAKE_SHORT = registry.Algorithm("fake-short", ("matching",), (BipartiteGraph,), ("cpu",),
                                f"{RUNNER_MODULE}:run_fake_short", (registry.Option("found", 1, low=0),),
                                summary="test stand-in returning a non-maximum matching", compiled=False)


def open_graph(qtbot, win, tmp_path, seed=1, n=60, name=None, square=True):
    graph = small_graph(seed, n)
    path = tmp_path / (name or f"graph{seed}.mtx")
    solvers.save(graph, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    return graph, path


def run_now(qtbot, win, algorithm, **options):
    win.solver_panel.select_algorithm(algorithm)
    for key, value in options.items():
        win.solver_panel.set_option(key, value)
    run = win.start_run()
    assert run is not None, win.errors
    wait_run(qtbot, run)
    assert run.status == "finished", run.error
    QtWidgets.QApplication.processEvents()  # the queued finish reaches the panel
    return run


def log_lines(win) -> list[str]:
    return [message for _, message in win.log_panel.entries]


def assert_plain(text: str) -> None:
    for bad in PYTHON_INTERNALS:
        assert bad not in text, f"{bad!r} in user text: {text}"
    assert not re.search(r"'[^' ]*'", text), f"a quoted repr in user text: {text}"


def tiny_particles(tmp_path, frames=4, n=8):
    series = solvers.generate("particles", n=n, frames=frames, seed=3)
    path = tmp_path / "particles.npz"
    solvers.save(series, str(path))
    return series, path


# ---- 1. exports ---------------------------------------------------------------------------------

def test_3d_export_is_disabled_and_refused_without_a_point_series(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path)
    run_now(qtbot, win, "fake-pr", steps=5)
    win.export_menu.aboutToShow.emit()
    assert not win.act_export_3d.isEnabled()
    target = tmp_path / "view3d.png"
    assert win._guarded("exported the 3D view", win.export_3d, target) is None
    assert not target.exists(), "a blank picture must not be written"
    assert win.errors[-1] == "could not export the 3D view: the 3D view shows a point series; this dataset has none"
    win.error_box.close()
    # Export Current View follows what the current tab holds
    win.show_view(win.tracks_view)
    assert not win.act_export_view.isEnabled()
    win.show_view(win.activity_view)
    assert win.act_export_view.isEnabled()


def test_export_actions_enable_only_when_they_can_write(window, qtbot, tmp_path, fake_algorithms):
    win = window
    win.export_menu.aboutToShow.emit()
    for action in (win.act_export_solution, win.act_export_3d, win.act_export_dataset, win.act_export_compare,
                   win.act_export_report, win.act_save_dataset):
        assert not action.isEnabled(), action.text()
    open_graph(qtbot, win, tmp_path)
    win.export_menu.aboutToShow.emit()
    assert win.act_export_dataset.isEnabled() and win.act_save_dataset.isEnabled()
    assert not win.act_export_solution.isEnabled() and not win.act_export_compare.isEnabled()
    run_now(qtbot, win, "fake-pr", steps=5)
    win.export_menu.aboutToShow.emit()
    assert win.act_export_solution.isEnabled() and win.act_export_report.isEnabled()


def dialog_filters(monkeypatch, show_dialog) -> list[str]:
    """The filters of the file dialog that ``show_dialog()`` opens (answered with Cancel, never shown)."""
    offered = []

    def cancel(parent, title, start, filters, *rest):
        offered.append(filters.split(";;"))
        return "", ""
    monkeypatch.setattr(QtWidgets.QFileDialog, "getOpenFileName", staticmethod(cancel))
    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", staticmethod(cancel))
    show_dialog()
    assert offered, "no file dialog opened"
    return offered[-1]


def shown_by(filters: list[str], name: str) -> list[str]:
    """The filters (other than All files) under which a dialog lists a file called ``name``."""
    return [f for f in filters if f != "All files (*)"
            and any(fnmatch.fnmatchcase(name, p) for p in f[f.index("(") + 1:-1].split())]


def test_open_offers_every_name_the_loaders_read_compressed_ones_too(window, qtbot, tmp_path, monkeypatch):
    """Open lists what solvers.load reads, .gz included wherever the format takes it (g.mtx.gz),
    under "All supported" and under its own format; run records under their own entry and under
    Open Run Record."""
    from solvers.formats import FORMATS
    win = window
    filters = dialog_filters(monkeypatch, win.open_dialog)
    assert filters[0].startswith("All supported") and filters[-1] == "All files (*)"
    for fmt in FORMATS:
        for ext in fmt.extensions:
            for name in [f"data{ext}"] + ([f"data{ext}.gz"] if fmt.gzip else []):
                assert filters[0] in shown_by(filters, name), f"{name} is not under {filters[0]}"
                assert any(f.startswith(fmt.name) for f in shown_by(filters, name)), f"{name} not under {fmt.name}"
    assert any(f.startswith("Run records") for f in shown_by(filters, "gpr-run1.npz"))
    assert shown_by(dialog_filters(monkeypatch, win.open_run_dialog), "gpr-run1.npz")
    # and what the filter lists, the explorer opens: a compressed Matrix Market file
    graph = small_graph(2, 40)
    path = tmp_path / "g.mtx.gz"
    solvers.save(graph, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    assert win.session.problem.n_edges == graph.n_edges
    assert Path(win.recent_files()[0]).name == "g.mtx.gz"


def test_labels_csv_is_the_one_file_asked_for_with_every_series_as_columns(window, qtbot, tmp_path, fake_algorithms):
    """Export ▸ Current View as labels.csv writes labels.csv and nothing else (no labels-heatmap.csv
    beside it), atomically, with the heatmap's and the histogram's series side by side."""
    win = window
    open_graph(qtbot, win, tmp_path)
    run_now(qtbot, win, "fake-pr", steps=12)
    view = win.labels_view
    win.show_view(view)
    view.refresh(force=True)
    tables = view.tables()
    assert set(tables) == {"heatmap", "histogram"}
    out = tmp_path / "export"
    out.mkdir()
    written = win.export_view(view, out / "labels.csv")
    assert written == [out / "labels.csv"] and sorted(p.name for p in out.iterdir()) == ["labels.csv"]
    with open(out / "labels.csv", newline="") as fh:
        header, *rows = list(csv.reader(fh))
    assert header == ["heatmap: report", "heatmap: label", "heatmap: count",
                      "histogram: bin_low", "histogram: bin_high", "histogram: count"]
    heat, hist = tables["heatmap"], tables["histogram"]
    assert len(rows) == max(heat["report"].size, hist["count"].size)
    columns = list(zip(*rows))
    np.testing.assert_allclose([float(v) for v in columns[2] if v != ""], heat["count"])
    np.testing.assert_allclose([float(v) for v in columns[5] if v != ""], hist["count"])
    assert all(v == "" for v in columns[5][hist["count"].size:])  # the shorter series ends in empty cells


def test_tracks_export_as_track_csv_and_track_json_by_extension(window, qtbot, tmp_path):
    win = window
    series, path = tiny_particles(tmp_path)
    win.open_path(path)
    wait_loaded(qtbot, win)
    run = run_now(qtbot, win, "lsa")
    assert run.track is not None
    win.export_solution(tmp_path / "tracks.json")
    record = json.loads((tmp_path / "tracks.json").read_text())  # JSON, not CSV text
    assert {"summary", "frame_stats", "tracks"} <= set(record)
    assert len(record["frame_stats"]) == series.n_frames - 1
    win.export_solution(tmp_path / "tracks.csv")
    with open(tmp_path / "tracks.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0])[:6] == ["track", "frame", "index", "x", "y", "z"]
    # every point of the series once, at its coordinates (the README's Track CSV)
    seen = sorted((int(r["frame"]), int(r["index"])) for r in rows)
    assert seen == [(t, i) for t in range(series.n_frames) for i in range(series.frames[t].shape[0])]
    for r in rows[:20]:
        point = series.frames[int(r["frame"])][int(r["index"])]
        assert np.allclose([float(r["x"]), float(r["y"]), float(r["z"])], point)
    # the same bytes as solvers.save (what `matchscope solve --out` writes)
    solvers.save(run.track, str(tmp_path / "reference.csv"))
    assert (tmp_path / "tracks.csv").read_bytes() == (tmp_path / "reference.csv").read_bytes()
    with pytest.raises(solvers.InputError) as refused:
        win.export_solution(tmp_path / "tracks.txt")
    assert str(refused.value).startswith(f"{tmp_path / 'tracks.txt'}: tracks cannot be written as tracks.txt; "
                                         "choose one of *.csv")
    assert not (tmp_path / "tracks.txt").exists()


def test_solution_export_refuses_an_unknown_extension_in_one_line(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path)
    run_now(qtbot, win, "fake-pr", steps=5)
    for name in ("m.txt", "m.npy", "m.mtx.zip"):
        assert win._guarded("exported the solution", win.export_solution, tmp_path / name) is None
        assert not (tmp_path / name).exists()
        message = win.errors[-1]
        assert "\n" not in message and "cannot be written as" in message and "*.json" in message
        assert_plain(message.replace(str(tmp_path), ""))
    win.export_solution(tmp_path / "plain")  # no extension: CSV, like `solve --out`
    assert (tmp_path / "plain").read_text().startswith("row,col")
    assert not list(tmp_path.glob(".*.tmp"))


# ---- 2. read as ---------------------------------------------------------------------------------

def max_flow_oracle(network) -> int:
    g = nx.DiGraph()
    for t, h, c in zip(network.tail.tolist(), network.head.tolist(), network.capacity.tolist()):
        if g.has_edge(t, h):
            g[t][h]["capacity"] += c
        else:
            g.add_edge(t, h, capacity=c)
    if network.source_vertex not in g or network.sink_vertex not in g:
        return 0
    return int(nx.maximum_flow_value(g, network.source_vertex, network.sink_vertex))


def test_a_square_mtx_can_be_read_as_flow_and_solved_by_dinic(window, qtbot, tmp_path):
    win = window
    rng = np.random.default_rng(4)
    n = 12
    rows, cols = rng.integers(0, n, 50), rng.integers(0, n, 50)
    vals = rng.integers(1, 9, 50)
    path = tmp_path / "graph.mtx"
    path.write_text("%%MatrixMarket matrix coordinate integer general\n"
                    f"{n} {n} {len(rows)}\n" + "".join(f"{r + 1} {c + 1} {v}\n" for r, c, v in zip(rows, cols, vals)))
    win.open_path(path)
    wait_loaded(qtbot, win)
    assert win.session.problem.kind == "matching"
    assert win.dataset_panel.read_as_row.isVisibleTo(win.dataset_panel)
    combo = win.dataset_panel.read_as_combo
    assert [combo.itemData(i) for i in range(combo.count())] == ["matching", "assignment", "flow"]
    assert "dinic" not in win.solver_panel.available_names()
    # Dataset ▸ Read as: flow reads the file again
    combo.setCurrentIndex(combo.findData("flow"))
    combo.activated.emit(combo.currentIndex())
    qtbot.waitUntil(lambda: win.session.problem.kind == "flow" and not win.host.busy, timeout=20_000)
    assert win.session.path == str(path) and win.session.dataset_name == "graph.mtx as flow"
    assert {"dinic", "edmonds-karp"} <= set(win.solver_panel.available_names())
    run = run_now(qtbot, win, "dinic")
    assert run.result.value == max_flow_oracle(solvers.load(str(path), problem="flow"))
    assert run.label.endswith("· graph.mtx as flow")


def test_a_view_that_cannot_show_the_new_dataset_gives_way(window, qtbot, tmp_path):
    """The window reopens on the last session's tab: a point series opened there on Batch shows
    3D, a graph opened on 3D shows Labels, a batch opened on Labels shows Batch; a view that can
    show the dataset (Compare) stays."""
    win = window
    series = tmp_path / "series.npz"
    solvers.save(solvers.generate("particles", n=20, frames=3, seed=2), str(series))
    win.show_view(win.batch_view)
    win.open_path(series)
    wait_loaded(qtbot, win)
    assert win.current_view() is win.tracks_view
    open_graph(qtbot, win, tmp_path)
    assert win.current_view() is win.labels_view
    batch = tmp_path / "batch.npy"
    np.save(batch, np.random.default_rng(0).random((3, 4, 4)))
    win.open_path(batch)
    wait_loaded(qtbot, win)
    assert win.current_view() is win.batch_view
    win.show_view(win.compare_view)
    open_graph(qtbot, win, tmp_path, seed=2)
    assert win.current_view() is win.compare_view


def test_read_as_dialog_and_the_gui_default_reading(qtbot, tmp_path):
    from explorer.app import build_parser, reading_for
    from explorer.dialogs import ReadAsDialog
    path = tmp_path / "g.mtx"
    solvers.save(small_graph(1, 10), str(path))
    dialog = ReadAsDialog("g.mtx", ("matching", "assignment", "flow"))
    qtbot.addWidget(dialog)
    assert dialog.chosen() == "matching"
    assert "dinic" in dialog.buttons["flow"].text() and "(default)" in dialog.buttons["matching"].text()
    dialog.choose("flow")
    assert dialog.chosen() == "flow"
    # `matchscope gui graph.mtx --algo dinic` reads it as a flow network, as `matchscope solve` does
    assert reading_for(str(path), None, "dinic") == "flow"
    assert reading_for(str(path), None, "gpr") == "matching"  # the format's default already fits: said
    assert reading_for(str(path), "assignment", "dinic") == "assignment"
    assert build_parser().parse_args([str(path), "--problem", "flow"]).problem == "flow"


# ---- 3. controls in sight -----------------------------------------------------------------------

@pytest.mark.parametrize("size", [(1440, 900), (1024, 700)])
def test_run_stop_progress_and_results_stay_in_sight(window, qtbot, tmp_path, fake_algorithms, size):
    win = window
    win.resize(*size)
    win.fit_docks()
    open_graph(qtbot, win, tmp_path)
    run_now(qtbot, win, "fake-pr", steps=5)
    win.solver_panel.select_algorithm("gpr")  # the longest options form
    win.session.set_current_run(None)
    win.session.set_current_run(win.session.runs[-1])
    QtWidgets.QApplication.processEvents()
    assert win.size() == QtCore.QSize(*size)
    assert_footer_in_sight(win)
    assert win.solver_panel.options_box.isVisibleTo(win.solver_panel)
    save_shot(win, f"shell-solver-{size[0]}x{size[1]}.png")


def assert_footer_in_sight(win) -> None:
    dock = win.solver_dock
    panel = win.solver_panel
    visible = QtCore.QRect(QtCore.QPoint(0, 0), dock.size())
    for widget in (panel.run_button, panel.stop_button, panel.progress, panel.elapsed, panel.live,
                   panel.certificate):
        assert widget.isVisible(), widget
        box = QtCore.QRect(widget.mapTo(dock, QtCore.QPoint(0, 0)), widget.size())
        assert visible.contains(box), f"{widget} at {box} outside the dock {visible}"
        if isinstance(widget, QtWidgets.QLabel):  # a wrapped label gets the height its lines need: not cut
            assert box.height() >= widget.heightForWidth(box.width()), widget.text()
        elif isinstance(widget, QtWidgets.QPushButton):
            assert box.height() >= widget.minimumSizeHint().height()


def assert_axis_names_whole(plot) -> None:
    """Each axis' name lies along its axis, whole (the axis cuts off a name longer than itself:
    "blems" for "problems" on a chart 130 pixels high)."""
    left, bottom = plot.getAxis("left"), plot.getAxis("bottom")
    margin = left.label.document().documentMargin()  # blank around the letters
    name, along = left.label.sceneBoundingRect().adjusted(0, margin, 0, -margin), left.mapRectToScene(left.rect())
    assert along.top() <= name.top() and name.bottom() <= along.bottom(), (left.labelText, name, along)
    name, chart = bottom.label.sceneBoundingRect(), plot.scene().sceneRect()
    assert chart.top() <= name.top() and name.bottom() <= chart.bottom(), (bottom.labelText, name, chart)


@pytest.mark.parametrize("size", [(1024, 700), (1600, 1000)])
def test_no_text_is_cut_in_the_dataset_chart_the_replay_bar_or_the_comparison(window, qtbot, tmp_path,
                                                                              fake_algorithms, size):
    win = window
    win.resize(*size)
    win.fit_docks()
    samples = Path(__file__).resolve().parents[1] / "sample_graphs"
    win.open_path(samples / "dense-lap-batch_100x16x24.npy")
    qtbot.waitUntil(lambda: win.session.problem is not None and win.session.problem.kind == "batch"
                    and not win.host.busy, timeout=30_000)
    QtWidgets.QApplication.processEvents()
    assert win.dataset_panel.plot.getAxis("left").labelText == "problems"
    assert_axis_names_whole(win.dataset_panel.plot)
    open_graph(qtbot, win, tmp_path, name="a-graph-with-a-rather-long-file-name.mtx")
    QtWidgets.QApplication.processEvents()
    assert_axis_names_whole(win.dataset_panel.plot)

    # the comparison: the configurations' columns fit their box, and the results get the room to show
    # each run's name and times (the other columns scroll at 1024 pixels; all are in sight at 1600)
    compare = win.compare_view
    compare.add_config("fake-pr", "cpu", {"steps": 5})
    compare.add_config("hopcroft-karp", "cpu", {})
    runs = win.run_comparison([dict(c) for c in compare.configs])
    for run in runs:
        wait_run(qtbot, run)
    win.show_view(compare)
    compare.refresh(force=True)
    QtWidgets.QApplication.processEvents()
    assert compare.config_table.horizontalScrollBar().maximum() == 0
    table = compare.result_table
    names = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    viewport = table.viewport().width()
    whole = [n for c, n in enumerate(names) if table.columnViewportPosition(c) + table.columnWidth(c) <= viewport]
    assert whole[:6] == names[:6] and names[5].startswith("warm-up"), (whole, names)
    if size[0] >= 1600:
        assert whole == names and table.horizontalScrollBar().maximum() == 0
    save_shot(win, f"shell-compare-{size[0]}x{size[1]}.png")

    # the replay bar: a run's name too long for its box ends in "…", and the tooltip has all of it
    bar = win.timeline
    label = win.session.current_run.label
    assert bar.run_combo.currentText() == label and label in bar.run_combo.toolTip()
    shown = bar.run_combo.shown_text()
    if size[0] <= 1024:
        assert shown.endswith("…") and label.startswith(shown[:-1]) and len(shown) > 8, shown
    else:
        assert shown == label
    position = bar.position_label  # "report 5 of 5 · 1.2 ms", whole
    assert position.text().startswith("report ")
    assert position.fontMetrics().elidedText(position.text(), QtCore.Qt.TextElideMode.ElideRight,
                                             position.contentsRect().width()) == position.text()


def test_the_footer_survives_shrinking_the_window(window, qtbot, tmp_path):
    """A person drags the window smaller (no fit_docks): the docks shrink, Run and the result stay whole."""
    win = window
    open_graph(qtbot, win, tmp_path)
    run_now(qtbot, win, "hopcroft-karp")
    win.solver_panel.select_algorithm("gpr")
    for size in ((1024, 600), (1440, 900), (1024, 700)):
        win.resize(*size)
        qtbot.waitUntil(lambda: win.size() == QtCore.QSize(*size), timeout=5_000)
        QtWidgets.QApplication.processEvents()
        assert_footer_in_sight(win)
        # and the splitter between the docks dragged all the way down: the options give way, not Run
        win.resizeDocks([win.dataset_dock, win.solver_dock], [2000, 10], QtCore.Qt.Orientation.Vertical)
        QtWidgets.QApplication.processEvents()
        assert_footer_in_sight(win)


def test_a_flow_of_zero_says_why_beside_its_value(window, qtbot, tmp_path):
    """The road-grid sample's corner can be a vertex the deletion left bare: the panel's value row
    says so (as the command line does), and a flow that moves has no such note."""
    win = window
    bare = solvers.FlowNetwork.from_edges(4, [0, 1], [1, 2], [3, 3], 0, 3)
    path = tmp_path / "bare.max"
    solvers.save(bare, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    run_now(qtbot, win, "dinic")
    rows = {name: (value, note) for name, value, note in win.solver_panel.rows}
    assert rows["value"] == ("0", "the sink, vertex 3, has no edge into it")
    moving = solvers.FlowNetwork.from_edges(4, [0, 1], [1, 3], [3, 2], 0, 3)
    solvers.save(moving, str(tmp_path / "moving.max"))
    win.open_path(tmp_path / "moving.max")
    wait_loaded(qtbot, win)
    run_now(qtbot, win, "dinic")
    rows = {name: (value, note) for name, value, note in win.solver_panel.rows}
    assert rows["value"] == ("2", "")


# ---- 4. one iteration count, labelled times ------------------------------------------------------

def test_iterations_are_the_solvers_own_count_everywhere(window, qtbot, tmp_path):
    win = window
    open_graph(qtbot, win, tmp_path)
    run = run_now(qtbot, win, "hopcroft-karp")
    solver_count = run.result.iterations
    assert run.n_reports != solver_count  # the case the newcomer met: 1 iteration, 2 reports
    rows = {name: (value, note) for name, value, note in win.solver_panel.rows}
    assert rows["iterations"] == (f"{solver_count:,}", f"{run.n_reports} telemetry reports")
    assert rows["solver"][1] == "the algorithm only" and rows["wall"][1] == "solve, checks and certificate; no warm-up"
    outcome = log_lines(win)[-1]
    assert f"{solvers.text.plural(solver_count, 'iteration')}," in outcome
    win.session.compare_with([run])
    headers, table = win.compare_view.table_rows()
    assert table[0][headers.index("iterations")] == solver_count
    report = win.export_report(tmp_path / "report.md").read_text()
    assert f"| iterations | {solver_count} |" in report
    assert f"| telemetry reports | {run.n_reports} |" in report


def test_durations_use_readable_units(window, qtbot, tmp_path):
    from explorer.session import RunState
    graph = small_graph(2, 20)
    run = RunState("hopcroft-karp", "cpu", {}, "matching", problem=graph, dataset="g")
    run.result = solvers.solve(graph, "hopcroft-karp", backend="cpu")
    run.status = "finished"
    run.wall_seconds = 210.1122
    run.warmup_seconds = 3.2
    window.solver_panel.show_live(run)
    rows = {name: value for name, value, _ in window.solver_panel.rows}
    assert rows["wall"] == "3 min 30 s" and rows["warm-up"] == "3.20 s"
    assert "ms" not in rows["wall"]


def test_the_certificate_is_shown_as_written(window):
    """Its words verbatim (an apostrophe is not an HTML entity), wrapped rather than cut."""
    from explorer.session import RunState
    costs = solvers.generate("dense-lap", n=5, seed=1)
    run = RunState("hungarian", "cpu", {}, "assignment", problem=costs, dataset="costs")
    run.result = solvers.solve(costs, "hungarian", backend="cpu")
    run.status = "finished"
    window.solver_panel.show_live(run)
    label = window.solver_panel.certificate
    assert "'" in run.result.certificate.summary()
    assert label.text() == run.result.certificate.summary() and label.wordWrap()
    assert label.textFormat() == QtCore.Qt.TextFormat.PlainText


# ---- 5. progress ----------------------------------------------------------------------------------

def test_loading_reports_bytes_and_the_bar_is_determinate(window, qtbot, tmp_path):
    win = window
    graph = small_graph(3, 400)
    path = tmp_path / "big.mtx"
    solvers.save(graph, str(path))
    seen = []
    win.host.worker.jobLoadProgress.connect(lambda job, done, total: seen.append((done, total)))
    win.open_path(path)
    wait_loaded(qtbot, win)
    size = path.stat().st_size
    assert seen and seen[-1] == (size, size) and all(t == size for _, t in seen)
    job = win.host.submit(__import__("explorer.worker", fromlist=["Job"]).Job("load", {"path": str(path)}))
    win._job_load_progress(job, size // 2, size)
    assert (win.busy_bar.minimum(), win.busy_bar.maximum()) == (0, 1000)
    assert win.busy_bar.value() == round(1000 * (size // 2) / size)
    assert "50%" in win.busy_label.text()
    wait_loaded(qtbot, win)


def test_tracking_shows_frame_pair_k_of_n(window, qtbot, tmp_path):
    from explorer.session import RunState
    from explorer.worker import ForwardingObserver
    series, path = tiny_particles(tmp_path, frames=5)
    window.open_path(path)
    wait_loaded(qtbot, window)
    run = RunState("lsa", "cpu", {}, "points", problem=series, dataset="particles")
    run.status = "running"
    observer = ForwardingObserver(run, __import__("threading").Event(), lambda: None)
    panel = window.solver_panel
    for done in range(4):  # solvers.track says "frame pair done+1 of 4" before each solve
        observer.on_progress(done, 4, "frame pair")
        panel.show_live(run)
        assert ("frame pair", f"{done + 1} of 4", "") in panel.rows
        assert (panel.progress.maximum(), panel.progress.value()) == (4, done)
    observer.on_progress(1, 3, "gated frame pair")  # the automatic gate re-solves pairs with long links
    panel.show_live(run)
    assert ("gated frame pair", "2 of 3", "re-solved with the gate") in panel.rows
    job = __import__("explorer.worker", fromlist=["Job"]).Job("track", run=run)
    window._job_progress(job)  # the status bar's bar too
    assert window.busy_label.text() == "lsa: gated frame pair 2 of 3"
    assert (window.busy_bar.maximum(), window.busy_bar.value()) == (1000, 333)
    # a real tracking run reports its frame pairs through the same observer
    real = run_now(qtbot, window, "lsa")
    done, total, unit = real.progress  # the last report: every unit done
    assert done == total and (unit, total) in (("frame pair", 4), ("gated frame pair", total))
    assert real.solves_started == real.iterations >= 4
    rows = {name: value for name, value, _ in panel.rows}
    assert rows["tracked"] == "4 frame pairs" and rows["solves"] == str(real.iterations)


# ---- 6. plain words --------------------------------------------------------------------------------

def test_user_text_has_no_python_internals(window, qtbot, tmp_path, fake_algorithms):
    win = window
    _, path = open_graph(qtbot, win, tmp_path, n=30)
    run = run_now(qtbot, win, "pr-seq", k=0.5)
    win.export_view(win.dataset_panel, tmp_path / "dataset.png")
    win._guarded("exported the dataset view", win.export_view, win.dataset_panel, tmp_path / "d.png")
    lines = log_lines(win)
    assert any(line == "loaded graph1.mtx: matching: 30 rows, 30 cols, 90 edges" for line in lines), lines
    assert f"run #{run.id}: pr-seq on auto backend, k=0.5, init=cheap, on graph1.mtx" in lines
    assert lines[-1] == f"exported the dataset view: {tmp_path / 'd.png'}"
    for line in lines:
        assert_plain(line.replace(str(tmp_path), ""))
    assert_plain(win.status_label.text().replace(str(tmp_path), ""))
    with pytest.raises(solvers.InputError) as bad:
        win.solver_panel.set_backend("nope")
    assert str(bad.value) == "pr-seq has no backend nope; choose from auto, cpu"
    with pytest.raises(solvers.InputError) as bad:
        win.solver_panel.select_algorithm("dinic")
    assert str(bad.value).startswith("dinic cannot run on matching problems (read the file as flow to run it")
    win.generate("random-bipartite", {"rows": 5, "cols": 5, "degree": 1})
    qtbot.waitUntil(lambda: win.session.path is None and not win.host.busy, timeout=20_000)
    assert log_lines(win)[-2] == "generating random-bipartite (rows=5, cols=5, degree=1)"
    assert log_lines(win)[-1] == "generated random-bipartite 5 × 5: matching: 5 rows, 5 cols, 5 edges"


def test_problem_words_for_every_kind():
    from explorer.wording import problem_words
    cases = [
        (solvers.generate("washington-rlg", rows=3, cols=3, seed=1), "flow: "),
        (solvers.generate("dense-lap", n=4, seed=1), "assignment: 4 rows, 4 cols, costs "),
        (solvers.generate("sparse-lap", rows=4, cols=4, degree=2, seed=1), "assignment: 4 rows, 4 cols, 8 edges"),
        (solvers.generate("particles", n=3, frames=2, seed=1), "points: 2 frames, "),
        (small_graph(1, 1, 1), "matching: 1 row, 1 col, 1 edge"),
    ]
    for problem, start in cases:
        text = problem_words(problem.describe())
        assert text.startswith(start), text
        assert_plain(text)


# ---- 7. options checked in the form -----------------------------------------------------------------

def open_costs(qtbot, win, tmp_path):
    path = tmp_path / "costs.npy"
    solvers.save(solvers.generate("dense-lap", n=5, seed=2), str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)


def type_into(qtbot, widget, text):
    edit = widget.lineEdit()
    edit.selectAll()
    edit.del_()
    qtbot.keyClicks(edit, text)


def test_an_invalid_option_is_marked_and_run_stays_disabled(window, qtbot, tmp_path):
    win = window
    open_costs(qtbot, win, tmp_path)
    panel = win.solver_panel
    panel.select_algorithm("auction")
    factor = panel.option_widgets["eps_factor"]
    assert (factor.minimum(), factor.maximum()) == (1.0, 1e6)  # the declared range
    type_into(qtbot, factor, "1")  # in the spin box's range, but the bound is open
    assert panel.invalid_reason() == "option eps_factor must be more than 1 and at most 1e+06, not 1"
    assert not panel.run_button.isEnabled() and not win.act_run.isEnabled()
    assert panel.invalid_label.isVisible() and panel.invalid_label.text() == panel.invalid_reason()
    assert "d64541" in factor.styleSheet()
    runs = len(win.session.runs)
    assert win.start_run() is None and len(win.session.runs) == runs  # nothing is queued, nothing listed
    type_into(qtbot, factor, "-1e15")
    assert panel.invalid_reason() == "option eps_factor must be more than 1 and at most 1e+06, not -1e15"
    eps = panel.option_widgets["eps"]
    type_into(qtbot, factor, "4")
    assert panel.invalid_reason() == "" and panel.run_button.isEnabled() and win.act_run.isEnabled()
    type_into(qtbot, eps, "-1")
    assert panel.invalid_reason() == "option eps must be at least 0, not -1"
    type_into(qtbot, eps, "1e-20")  # tiny epsilons are legal for tiny costs: no rounding to 6 places
    assert panel.invalid_reason() == "" and panel.options()["eps"] == 1e-20
    save_shot(win, "shell-options.png")


def test_every_numeric_option_gets_its_declared_range(window, qtbot):
    from explorer.forms import option_widget
    for algo in solvers.algorithms().values():
        for opt in algo.options:
            widget = option_widget(opt)
            if opt.kind == "float":
                assert widget.minimum() == (-math.inf if opt.low is None else opt.low), opt
                assert widget.maximum() == (math.inf if opt.high is None else opt.high), opt
            elif opt.kind == "int":
                assert widget.minimum() == (opt.low if opt.low is not None else -(2**31 - 1)), opt
                assert widget.maximum() == min(opt.high if opt.high is not None else 2**31 - 1, 2**31 - 1), opt
            widget.deleteLater()


def declared_verdict(option, value: float) -> bool:
    """Is ``value`` allowed, worked out from the declaration by hand (the oracle for the form)."""
    if math.isnan(value):
        return False
    if math.isinf(value) and not (value > 0 and option.high is not None and math.isinf(option.high)):
        return False
    if option.low is not None and (value < option.low or (option.low_open and value == option.low)):
        return False
    return option.high is None or value <= option.high


@settings(max_examples=120, deadline=None)
@given(value=st.one_of(st.floats(allow_nan=False), st.sampled_from([0.0, 1.0, 1e6, 1e300, -1.0, 1e-300, 1.0000001,
                                                                     math.inf, -math.inf])),
       name=st.sampled_from([("auction", "eps"), ("auction", "eps_factor"), ("gpr", "k"), ("pr-seq", "k")]))
def test_the_form_refuses_exactly_what_the_declaration_refuses(qapp, value, name):
    from explorer.forms import option_widget, short_float, widget_text
    algo = solvers.algorithms()[name[0]]
    option = next(o for o in algo.options if o.name == name[1])
    widget = option_widget(option)
    widget.lineEdit().setText(short_float(value))
    text = widget_text(widget)
    assert float(text) == value  # nothing rounded: 1e-300 and 1.7976931348623157e308 read back exactly
    try:
        option.parse(text)
        form_ok = True
    except solvers.InputError:
        form_ok = False
    assert form_ok == declared_verdict(option, float(text))
    widget.deleteLater()


# ---- 8. short outcome in the status bar, the certificate in full elsewhere ---------------------------

def test_status_bar_says_certified_or_not_and_the_certificate_is_not_cut(window, qtbot, tmp_path, monkeypatch):
    win = window
    monkeypatch.setitem(solvers.algorithms(), "fake-short", FAKE_SHORT)
    open_graph(qtbot, win, tmp_path)
    good = run_now(qtbot, win, "hopcroft-karp")
    assert win.status_label.text() == f"run #{good.id} hopcroft-karp: value {good.result.value:g} · certified optimal"
    bad = run_now(qtbot, win, "fake-short")
    assert not bad.result.certified
    assert win.status_label.text() == f"run #{bad.id} fake-short: value 1 · NOT certified (not proven optimal)"
    certificate = bad.result.certificate.summary()
    assert win.solver_panel.certificate.text() == certificate and win.solver_panel.certificate.wordWrap()
    assert log_lines(win)[-1].endswith(f"Certificate: {certificate}")
    assert win.log_panel.entries[-1][0] == "warning"


# ---- 9. state across datasets ------------------------------------------------------------------------

def test_runs_are_named_by_dataset_and_a_new_dataset_clears_the_views(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path, seed=1)
    first = run_now(qtbot, win, "fake-pr", steps=5)
    assert first.label == f"#{first.id} fake-pr [cpu] · graph1.mtx"
    win.refresh_all()
    assert win.labels_view.has_content()
    win.generate("random-bipartite", {"rows": 40, "cols": 50, "degree": 2})
    qtbot.waitUntil(lambda: win.session.path is None and not win.host.busy, timeout=20_000)
    win.refresh_all()
    assert win.session.current_run is None and first in win.session.runs
    assert not win.labels_view.has_content() and not win.activity_view.has_content()
    assert win.solver_panel.live_text() == "" and win.solver_panel.elapsed.text() == "no run yet"
    assert win.solver_panel.progress.value() == 0
    # the header says what was generated
    assert win.dataset_panel.source_label.text() == "<b>generated: random-bipartite</b>"
    form = win.dataset_panel.form
    facts = {form.itemAt(i, QtWidgets.QFormLayout.ItemRole.LabelRole).widget().text():
             form.itemAt(i, QtWidgets.QFormLayout.ItemRole.FieldRole).widget().text() for i in range(form.rowCount())}
    assert facts["parameters:"] == "rows=40, cols=50, degree=2"
    second = run_now(qtbot, win, "fake-pr", steps=5)
    assert second.label.endswith("· random-bipartite 40 × 50")
    assert win.windowTitle() == "matchscope explorer — random-bipartite 40 × 50"


def test_save_dataset_as_writes_the_format_its_extension_names(window, qtbot, tmp_path):
    win = window
    graph, _ = open_graph(qtbot, win, tmp_path, n=25)
    for name in ("copy.mtx", "copy.txt", "copy.tsv", "copy.mtx.gz"):
        win.save_dataset(tmp_path / name)
        again = solvers.load(str(tmp_path / name))
        assert again.kind == "matching" and again.shape == graph.shape
        assert sorted(zip(*again.edges())) == sorted(zip(*graph.edges()))
    assert win._guarded("saved the dataset", win.save_dataset, tmp_path / "copy.npy") is None
    assert not (tmp_path / "copy.npy").exists()
    assert win.errors[-1].startswith(f"could not save the dataset: {tmp_path / 'copy.npy'}: a matching problem cannot be "
                                     "written as copy.npy; choose one of *.mtx")
    assert not list(tmp_path.glob(".*.tmp"))


def test_view_menu_lists_the_tabs_with_shortcuts(window):
    win = window
    view_menu = next(a.menu() for a in win.menuBar().actions() if a.text() == "&View")
    entries = [a for a in view_menu.actions() if a in win.view_actions]
    assert [a.text() for a in entries] == [f"{v.title} View" for v in win.views]
    assert [a.shortcut().toString() for a in entries] == [f"Ctrl+{i}" for i in range(1, len(win.views) + 1)]
    for action, view in zip(entries, win.views):
        action.trigger()
        assert win.current_view() is view and action.isChecked()
        assert sum(a.isChecked() for a in entries) == 1


def test_generate_dialog_shows_plain_help(window, qtbot):
    from explorer.dialogs import GenerateDialog
    from solvers.generators import KINDS
    dialog = GenerateDialog(window)
    qtbot.addWidget(dialog)
    for name in KINDS:
        dialog.set_kind(name)
        assert "`" not in dialog.summary.text()
        for widget in dialog.widgets.values():
            assert "`" not in widget.toolTip()
    dialog.set_kind("random-bipartite")
    assert "joined to degree distinct" in dialog.summary.text()


def test_a_replayed_record_in_a_fresh_window_shows_what_it_holds(window, qtbot, tmp_path, fake_algorithms):
    from explorer.main_window import MainWindow
    win = window
    open_graph(qtbot, win, tmp_path)
    run = run_now(qtbot, win, "fake-pr", steps=8)
    win.save_run(tmp_path / "run.npz")
    fresh = MainWindow(settings=QtCore.QSettings(str(tmp_path / "fresh.ini"), QtCore.QSettings.Format.IniFormat),
                       interactive=False)
    qtbot.addWidget(fresh)
    fresh.show()
    fresh.open_path(tmp_path / "run.npz")
    qtbot.waitUntil(lambda: fresh.session.current_run is not None and not fresh.host.busy, timeout=20_000)
    replay = fresh.session.current_run
    fresh.refresh_all()
    panel = fresh.dataset_panel
    assert not panel.showing_message, "not 'No dataset': the record's own description"
    assert panel.source_label.text().startswith("<b>run record: run.npz</b>")
    form = panel.form
    facts = {form.itemAt(i, QtWidgets.QFormLayout.ItemRole.LabelRole).widget().text():
             form.itemAt(i, QtWidgets.QFormLayout.ItemRole.FieldRole).widget().text() for i in range(form.rowCount())}
    assert facts["algorithm:"] == "fake-pr" and facts["backend:"] == "cpu"
    assert facts["problem:"] == "matching: 60 rows, 60 cols, 180 edges"
    assert facts["certificate:"] == run.result.certificate.summary()
    assert fresh.solver_panel.elapsed.text() == "replay · certified optimal"
    rows = {name: value for name, value, _ in fresh.solver_panel.rows}
    assert rows["iterations"] == str(run.result.iterations) and rows["value"] == f"{run.result.value:g}"
    assert replay.label == f"#{replay.id} fake-pr [cpu] · replay of run.npz"
    save_shot(fresh, "shell-replay.png")
    fresh.close()
    from explorer.app import dispose
    dispose(fresh)


def test_an_internal_error_is_said_plainly_and_the_traceback_goes_to_the_log(window, qtbot, tmp_path, monkeypatch):
    win = window
    monkeypatch.setitem(solvers.algorithms(), "fake-broken", FAKE_BROKEN)
    open_graph(qtbot, win, tmp_path, n=10)
    win.solver_panel.select_algorithm("fake-broken")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "failed" and run.error_category == "error"
    assert win.error_box.text() == run.error == "internal error: 'rows' (the log has the details)"
    assert "KeyError" not in win.error_box.text()
    qtbot.waitUntil(lambda: any("Traceback" in m for m in log_lines(win)), timeout=5_000)
    assert win.status_label.text() == f"run #{run.id} fake-broken failed (see the log)"


def test_ctrl_c_in_the_terminal_closes_the_window(qtbot):
    """SIGINT (Ctrl+C where `make run` was typed) closes the window as its close button does: it
    raised KeyboardInterrupt inside a timer's callback, printed a traceback and left the window
    open (newcomer pass)."""
    import signal
    from PySide6 import QtWidgets
    from explorer.app import close_on_interrupt
    window = QtWidgets.QWidget()
    qtbot.addWidget(window)
    window.show()
    previous = signal.getsignal(signal.SIGINT)
    try:
        wake = close_on_interrupt(window)
        assert wake.isActive()
        signal.raise_signal(signal.SIGINT)  # the handler runs at once, in this thread: no KeyboardInterrupt
        assert not window.isVisible()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_infeasible_file_is_named_in_the_message(window, qtbot, tmp_path):
    """A run refused as infeasible says which file, as the command line does (the GUI's message
    left it out; newcomer pass), and only once."""
    win = window
    path = tmp_path / "infeasible.mtx"
    rows = [0, 0, 1, 1, 2, 2, 3]
    cols = [0, 1, 0, 1, 0, 1, 3]
    solvers.save(solvers.problems.SparseCosts.from_edges(rows, cols, np.arange(7.0) + 1, 4, 4), str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    win.solver_panel.select_algorithm("auction")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "failed" and run.error_category == "input"
    assert win.error_box.text() == run.error
    assert run.error.startswith(f"{path}: no complete assignment") and run.error.count(str(path)) == 1
