"""The chart views read as a person expects (issue 11, GUI part B): Compare's table and charts name the
same counts and put runs of any length side by side, legends sit beside the data, count axes carry no
SI prefix, an empty chart says why, a solver that runs as one call is said to report no intermediate
state, a tracking run's solves are marked with their frame pairs, label axes stay in the labels' real
range and the histogram says which snapshot it shows. Views are driven directly (no window, no worker
thread); the solves are real ones on tiny problems where it matters."""
from __future__ import annotations

import re
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_gui_fakes import configure_qt_platform, flush_deleted_widgets, run_fake_pr, small_graph  # noqa: F401

configure_qt_platform()

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtWidgets  # noqa: E402

import solvers  # noqa: E402
from solvers.telemetry import IterationStats, RunInfo, RunRecord, Snapshot, Telemetry, label_histogram  # noqa: E402

from explorer.session import RunState, Session  # noqa: E402
from explorer.worker import ForwardingObserver  # noqa: E402

pytestmark = pytest.mark.gui


# ---- runs -----------------------------------------------------------------------------------------

def observed(run: RunState) -> ForwardingObserver:
    return ForwardingObserver(run, threading.Event(), notify=lambda: None)


def solved_run(session: Session, problem, algorithm: str, **options) -> RunState:
    """A real solve recorded through the worker's observer, finished in the session."""
    run = RunState(algorithm, "cpu", options, problem.kind, group=1, problem=problem)
    session.add_run(run)
    result = solvers.solve(problem, algorithm, backend="cpu", observer=observed(run), **options)
    session.mark_finished(run, result)
    return run


def fake_run(session: Session, problem, **options) -> RunState:
    """The scripted push-relabel stand-in (tests/test_gui_fakes.py), as a finished comparison run."""
    run = RunState("fake-pr", "cpu", options, problem.kind, group=1)
    tel = Telemetry(observed(run), RunInfo("fake-pr", "cpu", problem.kind, problem.describe(), options, "psi"))
    solution = run_fake_pr(problem, "cpu", tel, **options)
    session.add_run(run)
    run.recorded_summary = {"seconds": 1e-3 * (1 + len(session.runs)), "iterations": solution.iterations,
                            "value": solution.value, "certified": True}
    run.status = "finished"
    run.sync()
    session.touch()
    return run


def one_call_run(session: Session, solves: int = 1) -> RunState:
    """What a scipy-backed solver reports: its start and its end, per solve."""
    stream = []
    for k in range(solves):
        stream += [IterationStats(0, 1e-6, "start", 50), IterationStats(1, 2e-3, "done", 0, 69.0 + k)]
    run = RunState.from_record(RunRecord({"algorithm": "lsa", "backend": "cpu", "problem_kind": "assignment"},
                                         stream, [], {"seconds": 2e-3, "iterations": 1, "value": 69.0}))
    run.group = 1
    session.add_run(run)
    return run


def shown(view, qtbot, size=(1200, 760)):
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.refresh(force=True)
    QtWidgets.QApplication.processEvents()  # the chart layout places its items
    return view


def points(item: pg.PlotDataItem) -> int:
    return 0 if item.xData is None else len(item.xData)


def curve_data(plot: pg.PlotItem) -> list[tuple[np.ndarray, np.ndarray]]:
    """The data given to each curve of a plot (before log scaling, clipping and downsampling)."""
    return [(item.xData, item.yData) for item in plot.listDataItems()
            if item.xData is not None and len(item.xData)]


# ---- Compare --------------------------------------------------------------------------------------

def test_compare_table_and_charts_count_the_same_and_name_it(qtbot):
    """A Hungarian run makes fewer iterations than it sends reports (its dual updates report too): the
    table's "iterations" is the solver's own count, "reports" the telemetry reports, and the chart's
    count axis is the reports, ending at exactly the table's number."""
    from explorer.views import CompareView
    session = Session()
    problem = solvers.load("sample_graphs/dense-lap_50.npy")
    session.set_problem(problem)
    hungarian = solved_run(session, problem, "hungarian")
    lsa = solved_run(session, problem, "lsa")
    view = shown(CompareView(session), qtbot)
    assert hungarian.result.iterations != hungarian.columns.n, "the case must tell the two counts apart"

    headers, rows = view.table_rows()
    by_run = {row[headers.index("run")]: dict(zip(headers, row)) for row in rows}
    for run in (hungarian, lsa):
        row = by_run[run.id]
        assert row["iterations"] == run.result.iterations
        assert row["reports"] == len(run.recorder.iterations)
        assert row["seconds"] == run.result.seconds  # exports keep raw seconds

    view.x_mode.setCurrentIndex(view.x_mode.findData("reports"))
    assert view.active_plot.getAxis("bottom").labelText == "report number"
    ends = sorted(float(x[-1]) for x, _ in curve_data(view.value_plot))
    assert ends == sorted(float(r.columns.n) for r in (hungarian, lsa))

    # the time column: one unit, named in the header; cells are plain numbers in it
    table = view.result_table
    names = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    time_headers = [h for h in names if h.startswith("time")]
    assert time_headers in (["time (s)"], ["time (ms)"], ["time (µs)"]) and "seconds" not in names
    col = names.index(time_headers[0])
    factor = {"time (s)": 1.0, "time (ms)": 1e3, "time (µs)": 1e6}[time_headers[0]]
    for r, run in enumerate(session.comparison):
        cell = table.item(r, col).text()
        assert re.fullmatch(r"\d+\.\d+", cell), cell
        assert float(cell) == pytest.approx(run.result.seconds * factor, abs=0.01)
    assert table.item(0, names.index("iterations")).text() == f"{hungarian.result.iterations:,}"
    assert table.item(0, names.index("reports")).text() == f"{hungarian.columns.n:,}"


def test_the_comparison_sorts_by_a_clicked_column_as_numbers_and_keeps_each_row_its_run(qtbot):
    """Clicking a column's header sorts the runs by it: times as numbers (9 ms before 10 ms, not as
    text), runs without a time last in either order; the sort holds when the table refreshes, a
    selected row makes its own run current, a second click sorts the other way and a third gives
    back the runs' order."""
    from PySide6 import QtCore
    from explorer.views import CompareView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    runs = [fake_run(session, problem, steps=4) for _ in range(4)]
    for run, solver in zip(runs, (0.010, 0.009, None, 0.1)):
        run.recorded_summary["seconds"] = solver
    session.touch()
    view = shown(CompareView(session), qtbot)
    table = view.result_table
    names = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    time_col, run_col = names.index("time (ms)"), names.index("run")

    def run_ids():
        return [int(table.item(r, run_col).text()) for r in range(table.rowCount())]

    header = table.horizontalHeader()

    def click_header(column):
        spot = QtCore.QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2,
                             header.height() // 2)
        qtbot.mouseClick(header.viewport(), QtCore.Qt.MouseButton.LeftButton, pos=spot)

    ids = [run.id for run in runs]
    assert run_ids() == ids  # no sort yet: the runs' order
    click_header(time_col)
    expected = [ids[1], ids[0], ids[3], ids[2]]  # 9, 10, 100 ms, then no time
    assert run_ids() == expected
    assert [table.item(r, time_col).text() for r in range(4)][-1] == "—"
    session.touch()
    view.refresh(force=True)
    assert run_ids() == expected  # a refresh keeps the user's sort
    table.selectRow(0)
    assert session.current_run is runs[1]
    click_header(time_col)
    assert run_ids() == [ids[3], ids[0], ids[1], ids[2]]  # no time stays last
    # the selection moved with its run, which stayed the current one
    assert [int(table.item(i.row(), run_col).text()) for i in table.selectionModel().selectedRows()] == [ids[1]]
    assert session.current_run is runs[1]
    assert header.isSortIndicatorShown() and header.sortIndicatorSection() == time_col
    click_header(time_col)
    assert run_ids() == ids and not header.isSortIndicatorShown()  # a third click: the runs' order
    click_header(run_col)
    click_header(run_col)
    assert run_ids() == ids[::-1]


def test_every_time_column_of_the_comparison_has_one_unit_named_in_its_header(qtbot):
    """Runs whose times are far apart (a wall of 0.5 ms beside one of 1.2 s, a warm-up of 20 ms
    beside 8 s) are compared by eye: each time column (solver time, wall, warm-up) is in one unit,
    named in its header, with plain numbers of the same decimals, never "500 µs" above "1.20 s"."""
    from explorer.views import CompareView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    fast, slow = fake_run(session, problem, steps=5), fake_run(session, problem, steps=5)
    for run, solver, wall, warmup in ((fast, 3e-6, 5e-4, 8.0), (slow, 0.25, 1.2, 0.02)):
        run.recorded_summary["seconds"] = solver
        run.wall_seconds, run.warmup_seconds = wall, warmup
    session.touch()
    view = shown(CompareView(session), qtbot)
    table = view.result_table
    names = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    expected = {"time (ms)": (1e3, "solver"), "wall (s)": (1.0, "wall"), "warm-up (s)": (1.0, "warm-up")}
    assert set(expected) <= set(names), names
    for header, (factor, key) in expected.items():
        cells = [table.item(r, names.index(header)).text() for r in range(table.rowCount())]
        assert all(re.fullmatch(r"\d+\.\d+", c) for c in cells), cells  # numbers only: the unit is in the header
        assert len({len(c.split(".")[1]) for c in cells}) == 1, cells  # one number of decimals down the column
        seconds = {"solver": (3e-6, 0.25), "wall": (5e-4, 1.2), "warm-up": (8.0, 0.02)}[key]
        for cell, value in zip(cells, seconds):
            assert float(cell) == pytest.approx(value * factor, rel=0.02), (header, cells)
        assert all(float(c) > 0 for c in cells), cells  # 3 µs in a column of milliseconds is not rounded to 0

def test_compare_x_axis_puts_runs_of_any_length_side_by_side(qtbot):
    from explorer.views import CompareView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    long_run, short_run = fake_run(session, problem, steps=1040), fake_run(session, problem, steps=16)
    view = shown(CompareView(session), qtbot)
    assert view.x_mode.currentData() == "progress"  # the default: no run squashed into an edge
    assert view.active_plot.getAxis("bottom").labelText == "progress (% of each run's time)"
    spans = [(float(x[0]), float(x[-1])) for x, _ in curve_data(view.active_plot)]
    assert spans == [(0.0, 100.0), (0.0, 100.0)]

    view.x_mode.setCurrentIndex(view.x_mode.findData("time"))
    label = view.active_plot.getAxis("bottom").labelText
    unit = re.fullmatch(r"elapsed time \((s|ms|µs)\)", label).group(1)
    factor = {"s": 1.0, "ms": 1e3, "µs": 1e6}[unit]
    ends = sorted(float(x[-1]) for x, _ in curve_data(view.active_plot))
    expected = sorted(float(r.columns.column("time")[-1]) * factor for r in (long_run, short_run))
    np.testing.assert_allclose(ends, expected)

    view.x_mode.setCurrentIndex(view.x_mode.findData("reports"))
    view.log_x.setChecked(True)
    assert view.active_plot.getAxis("bottom").logMode and view.value_plot.getAxis("bottom").logMode
    assert view.active_plot.getAxis("bottom").labelText == "report number, log scale"
    assert sorted(float(x[-1]) for x, _ in curve_data(view.active_plot)) == [17.0, 1041.0]
    view.log_x.setChecked(False)
    assert not view.active_plot.getAxis("bottom").logMode


def assert_legend_beside_the_data(view, legend, plots, entries: int) -> None:
    names = [label.text for _, label in legend.items]
    assert len(names) == entries, names
    box = legend.sceneBoundingRect()
    visible = view.charts.mapToScene(view.charts.viewport().rect()).boundingRect()
    for plot in plots:
        if plot.isVisible():
            assert not box.intersects(plot.getViewBox().sceneBoundingRect()), "the legend covers the data"
    for sample, label in legend.items:  # every entry whole and inside the chart's visible area
        for part in (sample, label):
            rect = part.sceneBoundingRect()
            assert rect.width() > 0 and visible.contains(rect), (label.text, rect, visible)


def test_compare_legend_lists_every_run_beside_the_charts(qtbot):
    from explorer.views import CompareView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    runs = [fake_run(session, problem, steps=20 + 10 * k, mode=("TC", "VC")[k % 2]) for k in range(6)]
    view = shown(CompareView(session), qtbot, size=(1100, 720))
    qtbot.waitUntil(lambda: view.legend.sceneBoundingRect().width() > 0)
    assert_legend_beside_the_data(view, view.legend, (view.active_plot, view.value_plot, view.work_plot), len(runs))
    # runs of one algorithm are told apart by the options in which they differ
    assert [label.text for _, label in view.legend.items][4] == f"#{runs[4].id} fake-pr [cpu] steps=60 mode=TC"
    headers, rows = view.table_rows()
    assert rows[1][headers.index("options")] == "steps=30, mode=VC"  # plain words, as typed


def test_a_one_call_solver_is_drawn_by_its_end_state_only(qtbot):
    from explorer.views import CompareView
    session = Session()
    session.set_problem(small_graph())
    fake_run(session, session.problem, steps=30)
    one_call = one_call_run(session)
    view = shown(CompareView(session), qtbot)
    labels = [label.text for _, label in view.legend.items]
    assert labels[1] == f"#{one_call.id} lsa [cpu] (end state only)"
    points = [x.size for x, _ in curve_data(view.value_plot)]
    assert sorted(points)[0] == 1  # its value at its end, not a line from a made-up start
    # with no run reporting its way, no chart of lone dots: the charts say why they are empty
    session.compare_with([one_call, one_call_run(session)])
    view.refresh(force=True)
    assert curve_data(view.active_plot) == [] and curve_data(view.value_plot) == []
    assert "report no intermediate state" in view.active_note.text and view.active_note.label.isVisible()


def test_an_empty_comparison_says_what_to_do(qtbot):
    from explorer.views import CompareView
    session = Session()
    session.set_problem(small_graph())
    view = shown(CompareView(session), qtbot)
    assert not view.showing_message and view.active_note.label.isVisible()
    assert "Run comparison" in view.active_note.text
    assert not view.active_plot.getAxis("bottom").style["showValues"]  # no meaningless axis
    assert not view.work_plot.isVisible()
    fake_run(session, session.problem, steps=10)
    view.refresh(force=True)
    assert not view.active_note.label.isVisible() and view.active_plot.getAxis("bottom").style["showValues"]


def test_no_chart_axis_scales_its_numbers_with_an_si_prefix(qtbot):
    """pyqtgraph's automatic prefix turned count axes into "launch (x0.001)": every axis of every chart
    view shows its numbers as they are."""
    from explorer.views import ActivityView, CompareView, LabelsView, WorkloadView
    session = Session()
    session.set_problem(small_graph())
    fake_run(session, session.problem, steps=40)
    for cls in (ActivityView, CompareView, LabelsView, WorkloadView):
        view = shown(cls(session), qtbot)
        axes = [item for item in view.charts.scene().items() if isinstance(item, pg.AxisItem)]
        assert axes and all(not axis.autoSIPrefix for axis in axes), cls.__name__
        assert all("(x" not in axis.labelString() for axis in axes), cls.__name__


# ---- Activity -------------------------------------------------------------------------------------

def test_a_one_call_solver_reports_no_intermediate_state(qtbot):
    from explorer.views import ActivityView
    session = Session()
    session.set_problem(small_graph())
    run = one_call_run(session)
    view = shown(ActivityView(session), qtbot)
    assert view.showing_message and not view.has_content()
    assert "this solver reports no intermediate state" in view.placeholder.text()
    assert run.label in view.placeholder.text()
    session.set_current_run(fed := fake_run(session, session.problem, steps=20))
    view.refresh(force=True)
    assert not view.showing_message and view.tables()["activity"]["report"].size == fed.columns.n


def tracked_run(session: Session, monkeypatch, series, **options) -> tuple[RunState, list[int]]:
    """A real tracking run (auction) recorded as the explorer records it, and the frame pair of each
    solve in the order tracking made them (recorded inside tracking: the oracle)."""
    from solvers import tracking, warmup
    warmup.prepare(series, "auction", "cpu", options, track=True)  # as the explorer warms up before a run
    order = []
    original = tracking._Pair._solve

    def recording(self, *args, **kwargs):
        order.append(self.t)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(tracking._Pair, "_solve", recording)
    session.set_problem(series)
    run = RunState("auction", "cpu", options, "points", problem=series)
    session.add_run(run)
    track = solvers.track(series, "auction", backend="cpu", observer=observed(run), **options)
    session.mark_finished(run, track)
    return run, order


# a series whose automatic gate takes two rounds, each re-solving pairs 1 and 3 (of 4): the tracking
# result alone cannot say which solve was which frame pair, the solve starts recorded on the way can
SEVERAL_GATE_ROUNDS = dict(n=30, frames=5, enter_rate=0.5, leave_rate=0.5, speed=0.05, seed=2)


@pytest.mark.parametrize("sample, options", [
    ("particles_100x10.npz", {}),  # the automatic gate: every pair once, then the long-linked ones again
    ("several rounds", {}),
    ("tiny", {"max_distance": "off"}),
    ("tiny", {"max_distance": 0.05}),
])
def test_tracking_solves_are_marked_with_their_frame_pairs(qtbot, monkeypatch, sample, options, tmp_path):
    from explorer.views import ActivityView
    from explorer.views.activity import solve_starts
    series = (solvers.generate("particles", n=14, frames=4, seed=3, speed=0.03) if sample == "tiny" else
              solvers.generate("particles", **SEVERAL_GATE_ROUNDS) if sample == "several rounds" else
              solvers.load(f"sample_graphs/{sample}"))
    session = Session()
    run, order = tracked_run(session, monkeypatch, series, **options)
    solves = len(order)
    assert solves >= series.n_frames - 1
    if not options:
        assert solves > series.n_frames - 1, "the sample has gated re-solves"
    if sample == "several rounds":
        assert run.track.summary["gate_rounds"] > 1
    # recorded as each solve began: its first report and its frame pair (the oracle: tracking's own order)
    starts = run.solve_starts
    assert [s.item for s in starts] == order and starts[0].position == 0
    assert [s.position for s in starts[1:]] == solve_starts(run.columns).tolist()
    gated = [s.unit == "gated frame pair" for s in starts]
    view = shown(ActivityView(session), qtbot)
    assert points(view.solve_lines[0]) == 2 * (solves - 1)  # one dashed line per solve after the first
    assert [text.toPlainText() for text in view.solve_labels] == \
        [f"{t}→{t + 1}" + ("*" if g else "") for t, g in zip(order, gated)]
    assert ("*&nbsp;solved&nbsp;again&nbsp;within&nbsp;the&nbsp;gate" in view.events_label.text()) == any(gated)
    assert view.active_plot.getAxis("bottom").labelText == "" and \
        view.value_plot.getAxis("bottom").labelText == "report (across solves)"
    # the curves are not joined across solves: each solve's last point ends a segment
    connect = view.value_curve.opts["connect"]
    assert isinstance(connect, np.ndarray) and np.count_nonzero(~connect[:-1]) == solves - 1
    # saved in the run record and read back: a replay marks the same frame pairs without the tracking result
    run.record().save(tmp_path / "run.npz")
    replay = RunState.from_record(RunRecord.load(tmp_path / "run.npz"))
    assert replay.track is None and replay.solve_starts == starts
    session.add_run(replay)
    view.refresh(force=True)
    assert [text.toPlainText() for text in view.solve_labels] == \
        [f"{t}→{t + 1}" + ("*" if g else "") for t, g in zip(order, gated)]
    # a one-solve run shown next in the same view is joined all along again
    session.set_current_run(fake_run(session, small_graph(), steps=12))
    view.refresh(force=True)
    assert view.value_curve.opts["connect"] == "all" and points(view.solve_lines[0]) == 0


def test_frame_pair_labels_that_would_overlap_are_hidden_until_zoomed_in(qtbot, monkeypatch):
    """In a narrow chart the frame pairs of short solves (a tracking run's gated re-solves) would
    run into each other: the labels shown never overlap, the first is always shown, and zooming in
    on the crowded solves shows the ones hidden at the full range."""
    from explorer.views import ActivityView
    session = Session()
    tracked_run(session, monkeypatch, solvers.load("sample_graphs/particles_100x10.npz"))
    view = shown(ActivityView(session), qtbot, size=(700, 500))

    def visible():
        return [label for label in view.solve_labels if label.isVisible()]

    def rects(labels):
        return [label.mapRectToScene(label.boundingRect()) for label in labels]

    narrow = visible()
    assert view.solve_labels[0] in narrow and len(narrow) < len(view.solve_labels)
    kept = rects(narrow)
    assert not any(a.intersects(b) for k, a in enumerate(kept) for b in kept[k + 1:])
    hidden = [label for label in view.solve_labels if not label.isVisible()]
    x = hidden[0].pos().x()
    view.active_plot.setXRange(x - 2, x + 12, padding=0)
    QtWidgets.QApplication.processEvents()
    assert hidden[0].isVisible()
    kept = rects(visible())
    assert not any(a.intersects(b) for k, a in enumerate(kept) for b in kept[k + 1:])


def test_a_gate_round_that_re_solved_only_some_gated_pairs_is_not_given_a_frame_pair():
    """Rounds re-solve a growing set of pairs; the last, every gated one. A round of fewer pairs does
    not say which it took: its solves are left without a frame pair rather than given a wrong one."""
    from types import SimpleNamespace

    from solvers.telemetry import SolveStart

    from explorer.session import frame_pairs_of
    track = SimpleNamespace(frame_stats=[{"gated": g} for g in (False, True, True, False, True)])
    solves = ([SolveStart(2 * k, "frame pair", k, 5) for k in range(5)]
              + [SolveStart(10 + k, "gated frame pair", k, 2, 1) for k in range(2)]    # round 1: two of three
              + [SolveStart(12 + k, "gated frame pair", k, 3, 2) for k in range(3)])   # round 2: all three
    assert [s.item for s in frame_pairs_of(solves, track)] == [0, 1, 2, 3, 4, None, None, 1, 2, 4]
    assert [s.item for s in frame_pairs_of(solves)] == [0, 1, 2, 3, 4] + [None] * 5  # no tracking result yet


def test_frequent_events_are_markers_not_lines(qtbot):
    from explorer.views import ActivityView
    from explorer.views.activity import MAX_EVENT_LINES
    session = Session()
    session.set_problem(small_graph())
    many = fake_run(session, session.problem, steps=MAX_EVENT_LINES * 3, relabel_every=2)
    view = shown(ActivityView(session), qtbot)
    markers, lines = view.event_items["global-relabel"]
    assert points(markers) == MAX_EVENT_LINES * 3 // 2 and points(lines) == 0
    session.set_current_run(fake_run(session, session.problem, steps=40, relabel_every=8))
    view.refresh(force=True)
    markers, lines = view.event_items["global-relabel"]
    assert points(markers) == 5 and points(lines) == 10  # one line (two ends) per event
    assert many is not session.current_run


# ---- Labels ---------------------------------------------------------------------------------------

def labels_run(snapshot_iterations: list[int], last: int = 41, values=None) -> RunState:
    """Reports 0..last and "labels" snapshots at the given iterations."""
    stream = [IterationStats(i, 1e-4 * (i + 1), "push", max(last - i, 0), float(i)) for i in range(last + 1)]
    snaps = []
    for k, it in enumerate(snapshot_iterations):
        labels = np.asarray(values[k] if values is not None else np.arange(10) + it, dtype=np.float64)
        counts, edges = label_histogram(labels)
        snaps.append(Snapshot(it, 1e-4 * (it + 1), "labels", {"rows.hist_edges": edges, "rows.hist_counts": counts,
                                                             "rows.sample": labels[:5]}, {"label": "psi"}))
    info = {"algorithm": "gpr", "backend": "cpu", "problem_kind": "matching", "label": "psi"}
    return RunState.from_record(RunRecord(info, stream, snaps))


def test_the_histogram_title_names_the_snapshot_shown(qtbot):
    from explorer.views import LabelsView
    session = Session()
    session.set_problem(small_graph())
    session.add_run(labels_run([0, 3]))  # the end state was not snapshotted
    view = shown(LabelsView(session), qtbot)
    # the charts count reports (42 here, numbered 1..42): the snapshot after iteration 3's report is at report 4
    assert view.hist_plot.titleLabel.text == "psi histogram: last snapshot, report 4 of 42"
    session.set_cursor(21)  # replay at report 21
    view.refresh()
    assert view.hist_plot.titleLabel.text == "psi histogram at report 4 (the latest snapshot at report 21)"
    session.set_cursor(3)
    view.refresh()
    assert view.hist_plot.titleLabel.text == "psi histogram at report 1 (the latest snapshot at report 3)"
    session.add_run(labels_run([0, 3, 41]))  # with the end state
    view.refresh(force=True)
    assert view.hist_plot.titleLabel.text == "psi histogram at report 42"
    assert view.info.text() == "3 of 3 snapshots · label: psi (distance to a free column)"


def test_a_snapshot_with_every_label_at_the_cap_is_shown_not_dropped(qtbot):
    """gpr's final check on a perfect matching leaves every label at the cap (no vertex reachable):
    that end-state snapshot has no finite label. It still counts, the histogram names its iteration
    and says why it is empty, instead of falling back to an earlier snapshot."""
    from explorer.views import LabelsView
    run = labels_run([0, 3, 20], last=41)
    values = np.full(10, 82.0)  # every label at the cap
    counts, edges = label_histogram(values[values < 82.0])
    run.recorder.snapshots.append(Snapshot(41, 4.2e-3, "labels", {"rows.hist_edges": edges, "rows.hist_counts": counts,
                                                                  "rows.sample": values[:5]},
                                           {"label": "psi", "rows.unreachable": 10}))
    run.snapshot_positions.append(run.columns.n)
    session = Session()
    session.set_problem(small_graph())
    session.add_run(run)
    view = shown(LabelsView(session), qtbot)
    assert view.info.text() == "4 of 4 snapshots · label: psi (distance to a free column)"
    assert view.hist_plot.titleLabel.text == "psi histogram at report 42"
    assert view.hist_note.text.startswith("all 10 rows at the cap (unreachable):\nnone can reach a free vertex") and view.hist_note.label.isVisible()
    assert np.unique(view.tables()["heatmap"]["report"]).tolist() == [1, 4, 21, 42]
    session.set_cursor(25)  # replay before the end: the snapshot after iteration 20's report, with its bars
    view.refresh()
    assert view.hist_note.text is None and "at report 21" in view.hist_plot.titleLabel.text


def test_label_axes_stay_within_the_labels_real_range(qtbot):
    """Prices all 0 at first (unit bins from -0.5), then spread over [0.3, 1.7]: the axes start at 0,
    not below it, and no label count is lost to the common axis."""
    from explorer.views import LabelsView
    rng = np.random.default_rng(4)
    values = [np.zeros(30), rng.uniform(0.3, 1.7, 30), rng.uniform(0.3, 1.7, 30)]
    session = Session()
    session.set_problem(small_graph())
    session.add_run(labels_run([0, 10, 20], last=25, values=values))
    view = shown(LabelsView(session), qtbot)
    (x_lo, x_hi), (y_lo, y_hi) = view.heat_plot.viewRange()
    assert y_lo == pytest.approx(0.0, abs=1e-9) and y_hi == pytest.approx(max(v.max() for v in values))
    assert x_lo >= 0 and view.hist_plot.viewRange()[0][0] == pytest.approx(0.0, abs=1e-9)
    assert view.hist_plot.viewRange()[1][0] >= 0  # counts are not negative
    assert view.trace_plot.viewRange()[1][0] == pytest.approx(0.0, abs=1e-9)
    per_snapshot = view.tables()["heatmap"]["count"].reshape(3, -1).sum(axis=1)
    np.testing.assert_allclose(per_snapshot, [30, 30, 30])


@settings(max_examples=200)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=30), st.floats(-5, 5), st.floats(0.5, 40))
def test_rebin_keeps_every_count_whatever_the_target(counts, start, width):
    from explorer.views.labels import rebin
    counts = np.array(counts, dtype=np.int64)
    edges = np.arange(counts.size + 1) - 0.5
    target = np.linspace(start, start + width, 17)
    out = rebin(edges, counts, target)
    assert out.sum() == pytest.approx(counts.sum()) and np.all(out >= -1e-9)


# ---- Workload -------------------------------------------------------------------------------------

def test_workload_legend_beside_the_boxes_and_counts_in_words(qtbot):
    from explorer.views import WorkloadView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    group = session.new_group()
    one = fake_run(session, problem, steps=1, mode="TC")  # a single snapshotted launch
    other = fake_run(session, problem, steps=30, mode="VC")
    one.group = other.group = group
    session.comparison = [one, other]
    session.set_current_run(one)
    view = shown(WorkloadView(session), qtbot)
    assert view.info.text().startswith("1 launch snapshotted")
    assert_legend_beside_the_data(view, view.legend, (view.box_plot, view.imbalance_plot), 2)


def test_a_legend_names_a_workload_mode_only_where_it_is_an_option(qtbot):
    """gpr's snapshots say its kernel's layout ("column"), which no option of gpr's sets: its
    legends in Workload and Compare name no mode (a user looked for one); the test stand-in,
    which no registry lists (as a replayed record of an algorithm this build lacks), keeps what
    it recorded."""
    from explorer.views import CompareView, WorkloadView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    gpr = solved_run(session, problem, "gpr")
    assert gpr.snapshots("workload") and "mode" not in {o.name for o in solvers.algorithms()["gpr"].options}
    fake = fake_run(session, problem, steps=10, mode="VC")
    session.comparison = [gpr, fake]
    session.set_current_run(gpr)
    workload = shown(WorkloadView(session), qtbot)
    names = [label.text for _, label in workload.legend.items]
    assert f"gpr (#{gpr.id})" in names and not any("column" in n for n in names), names
    compare = shown(CompareView(session), qtbot)
    assert compare.legend_name(gpr) == f"#{gpr.id} gpr [cpu]"
    assert compare.legend_name(fake).endswith("mode=VC")


# ---- Dataset --------------------------------------------------------------------------------------

def dataset_panel(qtbot, problem, width: int = 380):
    from explorer.views.dataset import DatasetPanel
    session = Session()
    session.set_problem(problem)
    return shown(DatasetPanel(session), qtbot, size=(width, 560))


def test_dataset_degrees_of_a_heavy_tail_on_log_axes_said_in_their_labels(qtbot):
    """The power-law sample's largest degree is 41 times the typical one: log axes, named so; a random
    graph's degrees stay linear. Degree 0 has no place on a log axis and is left out, not drawn at 1."""
    heavy = dataset_panel(qtbot, solvers.load("sample_graphs/powerlaw_300x400.tsv"))
    plot = heavy.plot
    assert plot.getAxis("bottom").logMode and plot.getAxis("left").logMode
    assert plot.getAxis("bottom").labelText == "degree (log)" and plot.getAxis("left").labelText == "vertices (log)"
    assert all(np.all(x > 0) and np.all(y > 0) for x, y in curve_data(plot))
    even = dataset_panel(qtbot, small_graph())
    assert not even.plot.getAxis("bottom").logMode and not even.plot.getAxis("left").logMode
    assert even.plot.getAxis("bottom").labelText == "degree" and even.plot.getAxis("left").labelText == "vertices"
    for view in (heavy, even):
        axes = [item for item in view.charts.scene().items() if isinstance(item, pg.AxisItem)]
        assert axes and all(not axis.autoSIPrefix for axis in axes)
        assert all("(x" not in axis.labelString() for axis in axes)


@pytest.mark.parametrize("width", [250, 380])  # the dock at its narrowest, and at its usual width
def test_dataset_legend_sits_beside_the_degree_chart(qtbot, width):
    view = dataset_panel(qtbot, solvers.load("sample_graphs/rmat_s9.mtx"), width)
    qtbot.waitUntil(lambda: view.legend.sceneBoundingRect().width() > 0)
    assert_legend_beside_the_data(view, view.legend, (view.plot,), 2)
    assert [label.text for _, label in view.legend.items] == ["rows", "cols"]


def test_dataset_without_edges_says_so_instead_of_drawing_axes(qtbot):
    from solvers.problems import BipartiteGraph
    empty = BipartiteGraph.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), 400, 400)
    view = dataset_panel(qtbot, empty)
    assert view.empty_note.label.isVisible() and view.empty_note.text == "no edges: every vertex has degree 0"
    assert not curve_data(view.plot) and not view.legend.isVisible()
    assert not view.plot.getAxis("bottom").style["showValues"] and not view.plot.getAxis("left").style["showValues"]
    view.session.set_problem(small_graph())  # a graph with edges: its histogram, numbered axes
    view.refresh(force=True)
    assert not view.empty_note.label.isVisible() and len(curve_data(view.plot)) == 2
    assert view.plot.getAxis("left").style["showValues"]


def test_dataset_statistics_are_plain_numbers():
    from explorer.views.dataset import problem_facts
    network = solvers.load("sample_graphs/washington-rlg_8x8.max")
    facts = dict(problem_facts(network))
    assert "e+" not in facts["capacity"] and facts["capacity"].startswith(f"{int(network.capacity.min())} to ")
    series = solvers.PointSeries.from_frames([np.zeros((2, 3))] * 2, [np.arange(2)] * 2)
    assert dict(problem_facts(series))["ground truth"] == "yes"  # as the command line says it, not "true"
    assert dict(problem_facts(solvers.CostMatrix.from_array(np.eye(2))))["integer"] == "yes"
