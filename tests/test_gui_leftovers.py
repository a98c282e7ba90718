"""What a second newcomer pass still found (issue 11 leftovers A-E): a one-frame series refused in
the form, one meaning of "iteration", wall time apart from the warm-up, scripted screenshots of a
failed run, and smaller wording and chart fixes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_gui_fakes import (configure_qt_platform, fake_algorithms, flush_deleted_widgets,  # noqa: F401
                            save_shot, small_graph, wait_loaded, wait_run, window)

configure_qt_platform()

import solvers  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402
from solvers.registry import Option  # noqa: E402
from solvers.text import duration  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
ONE_FRAME = ROOT / "sample_graphs" / "particles_100_frame0.ply"
ONE_FRAME_REASON = ("a point series needs at least two frames to track; it holds one (a frame column in .csv or "
                    ".ply, or frame_ptr in .npz, puts points in frames)")


# ---- A. a one-frame point series is refused in the form, like an invalid option ------------------

def test_a_one_frame_series_disables_run_with_the_reason_in_the_panel(window, qtbot):
    win = window
    win.open_path(ONE_FRAME)
    wait_loaded(qtbot, win)
    panel = win.solver_panel
    panel.select_algorithm("lsa")
    assert panel.invalid_reason() == ONE_FRAME_REASON
    assert not panel.run_button.isEnabled() and not win.act_run.isEnabled()
    assert panel.invalid_label.isVisible() and panel.invalid_label.text() == ONE_FRAME_REASON
    panel.select_algorithm("auction")  # every algorithm: the problem, not an option, is the reason
    assert panel.invalid_reason() == ONE_FRAME_REASON and not panel.run_button.isEnabled()
    assert win.start_run() is None and win.session.runs == []  # nothing starts, nothing is listed
    win.compare_view.add_config("lsa", "cpu", {})
    assert win.run_comparison(list(win.compare_view.configs)) == [] and win.session.runs == []
    assert ONE_FRAME_REASON in win.errors[-1]
    save_shot(win, "leftovers-one-frame.png")


def test_a_failure_line_wraps_in_the_panel_and_the_views_say_why(window):
    from explorer.session import RunState
    from explorer.views.solver_panel import rows_html
    win = window
    reason = "/a/rather/long/path/to/some/data/file/particles_100_frame0.ply: " + ONE_FRAME_REASON
    run = RunState("lsa", "cpu", {}, "points", dataset="particles")
    run.status, run.error = "failed", reason
    win.session.add_run(run)
    html_text = rows_html(win.solver_panel._rows(run))
    row = next(part for part in html_text.split("<tr>") if ONE_FRAME_REASON in part)
    assert "nowrap" not in row and "colspan" in row  # the whole width, wrapped, never cut
    for view in (win.labels_view, win.activity_view):
        view.refresh(force=True)
        assert view.showing_message and ONE_FRAME_REASON in view.placeholder.text()
        assert "reported no" not in view.placeholder.text()


# ---- E. smaller ones: numbers in words -----------------------------------------------------------

def test_a_tiny_duration_is_not_zero_milliseconds():
    assert duration(5e-7) == "0.5 µs"
    assert duration(9.9e-6) == "9.9 µs" and duration(4.2e-4) == "0.42 ms"
    assert duration(0.0) == "0 ms"
    for seconds in (1e-9, 3e-8, 5e-7, 2e-6):
        assert duration(seconds) != "0.00 ms" and float(duration(seconds).split()[0]) > 0


def test_integer_option_ranges_print_as_integers():
    cycles = Option("cycles", 0, low=0, high=2**31 - 1)
    assert cycles.range_text() == "0 to 2147483647"
    assert "e+" not in str(pytest.raises(Exception, cycles.parse, "99999999999999999999").value)
    assert Option("n", 1, low=1).range_text() == "at least 1"
    assert Option("eps", 1.0, low=0.0, high=1e300).range_text() == "at least 0"  # a guard bound is no limit to show
    assert Option("x", 1.0, high=5.0).range_text() == "at most 5"


# ---- B. one meaning of "iteration": the charts and the timeline count reports, and say so ---------

def bottom_label(plot) -> str:
    return plot.getAxis("bottom").labelText


def test_charts_and_timeline_count_reports_and_the_panel_counts_iterations(window, qtbot, tmp_path):
    win = window
    path = tmp_path / "costs.npy"
    solvers.save(solvers.generate("dense-lap", n=30, seed=4), str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    win.solver_panel.select_algorithm("hungarian")
    run = win.start_run()
    wait_run(qtbot, run, timeout=600_000)
    assert run.status == "finished", run.error
    QtWidgets.QApplication.processEvents()
    iterations, reports = run.result.iterations, run.n_reports
    assert reports != iterations  # Hungarian reports its dual updates too: the two counts differ
    last_field = run.recorder.iterations[-1].iteration  # the report's own number: neither of them
    rows = {name: value for name, value, _ in win.solver_panel.rows}
    assert rows["iterations"] == f"{iterations:,}"
    win.timeline.update_position()
    assert win.timeline.position_label.text().startswith(f"report {reports:,} of {reports:,} · ")
    assert "iteration" not in win.timeline.position_label.text()
    win.show_view(win.activity_view)
    win.activity_view.refresh(force=True)
    view = win.activity_view
    for plot in (view.value_plot,):
        assert bottom_label(plot) == "report"
    assert view.x_mode.itemText(0) == "report"
    x = run.columns.x()
    assert x[0] == 1 and x[-1] == reports  # the axis ends at the count the timeline ends at
    assert view.tables()["activity"]["report"][-1] == reports
    win.show_view(win.labels_view)
    labels = win.labels_view
    labels.refresh(force=True)
    title = labels.hist_plot.titleLabel.text
    assert "iteration" not in title and f"report {reports}" in title, title
    assert bottom_label(labels.heat_plot) == "report"
    assert f"report {last_field}" not in title or last_field == reports


# ---- C. the wall time ends when the worker had the answer and never holds the warm-up -------------

def test_wall_time_is_the_workers_and_the_warm_up_is_its_own_figure(window):
    """Timings injected on the worker's clock: no wall time, no machine load in the test."""
    from explorer.session import RunState
    from explorer.worker import Job
    win = window
    graph = small_graph(3, 30)
    win.session.set_problem(graph)
    run = RunState("hopcroft-karp", "cpu", {}, "matching", problem=graph, dataset="g", group=win.session.new_group())
    win.session.add_run(run)
    job = Job("solve", {"problem": graph, "algorithm": "hopcroft-karp", "backend": "cpu"}, run=run)
    win._job_started(job)
    job.warmup_seconds = 8.0           # compiling took 8 s ...
    job.timed_from = 1000.0            # ... then the timed run started
    win._job_timed(job)
    job.finished_at = 1000.03          # and the worker had the certified answer 30 ms later
    win._job_finished(job, solvers.solve(graph, "hopcroft-karp", backend="cpu"))
    assert run.wall_seconds == pytest.approx(0.03)
    rows = {name: (value, note) for name, value, note in win.solver_panel.rows}
    assert rows["wall"] == ("30 ms", "solve, checks and certificate; no warm-up")
    assert rows["warm-up"] == ("8.00 s", "compiling before the run, not in wall")
    assert "(wall 30 ms; warm-up 8.00 s before it, not counted)" in win.log_panel.entries[-1][1]
    headers, table = win.compare_view.table_rows()
    assert table[0][headers.index("wall")] == pytest.approx(0.03) and table[0][headers.index("warm-up")] == 8.0
    shown = win.compare_view.result_table
    texts = {shown.horizontalHeaderItem(c).text(): shown.item(0, c).text() for c in range(shown.columnCount())}
    assert texts["wall (ms)"] == "30.00" and texts["warm-up (s)"] == "8.000"  # one unit per column, in its header
    report = win.export_report(Path(win.settings.fileName()).parent / "report.md").read_text()
    assert "wall time (solve, checks and certificate; without the warm-up) | 30 ms" in report
    assert "warm-up (compiling before the run, not counted) | 8.00 s" in report


# ---- D. a failed scripted run: the screenshot shows the error --------------------------------------

class ScriptApp:
    """Stands in for the QApplication a script drives: events go to the real one, exit is recorded."""

    def __init__(self, qapp):
        self.qapp, self.code = qapp, None

    def processEvents(self):  # noqa: N802 (Qt's name)
        self.qapp.processEvents()

    def exit(self, code):
        self.code = code


def run_script(qtbot, qapp, win, argv, monkeypatch, name):
    """Run the script; returns (exit code, what the window said when the screenshot was taken)."""
    import shutil

    from explorer.app import Script, _parse_opts, build_parser
    args = build_parser().parse_args(argv)
    app = ScriptApp(qapp)
    seen = {}
    original = Script._save_window

    def save_window(script):
        panel = script.window.solver_panel
        seen.update(log=[m for _, m in script.window.log_panel.entries], busy=script.window.busy_label.text(),
                    status=script.window.status_label.text(), invalid=panel.invalid_label.text(),
                    live=panel.live.text(), elapsed=panel.elapsed.text())
        original(script)
        shutil.copy(args.screenshot, _shots() / name)

    monkeypatch.setattr(Script, "_save_window", save_window)
    script = Script(app, win, args, _parse_opts(args.opt))
    script.start()
    qtbot.waitUntil(lambda: app.code is not None, timeout=300_000)
    return app.code, seen


def _shots() -> Path:
    import os
    folder = Path(os.environ.get("EXPLORER_SHOTS", "/tmp/explorer-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def refused_option_run(problem, backend, tel, eps=0.0):
    raise solvers.InputError("this stand-in refuses every problem")


def test_a_refused_option_in_a_script_is_in_the_form_and_the_screenshot(window, qtbot, qapp, tmp_path, monkeypatch):
    win = window
    win.interactive = False  # as in scripted mode: no dialog
    path = tmp_path / "costs.npy"
    solvers.save(solvers.generate("dense-lap", n=6, seed=2), str(path))
    shot = tmp_path / "out.png"
    code, seen = run_script(qtbot, qapp, win, [str(path), "--algo", "auction", "--opt", "eps=-1", "--run",
                                               "--screenshot", str(shot), "--quit"], monkeypatch,
                            "leftovers-script-bad-option.png")
    assert code == 2 and shot.exists()
    panel = win.solver_panel
    reason = "option eps must be at least 0, not -1"
    assert panel.option_widgets["eps"].lineEdit().text() == "-1"  # the refused value, not the default
    assert panel.invalid_reason() == reason and panel.invalid_label.isVisible()
    assert win.status_label.text() == reason and win.log_panel.entries[-1][1] == reason
    assert win.session.runs == []
    assert seen["invalid"] == reason and seen["status"] == reason and seen["log"][-1] == reason  # when shot


def test_a_run_that_fails_in_a_script_is_in_the_log_panel_and_screenshot(window, qtbot, qapp, tmp_path, monkeypatch):
    from solvers import registry
    from solvers.problems import CostMatrix
    algo = registry.Algorithm("refuser", ("assignment",), (CostMatrix,), ("cpu",), f"{__name__}:refused_option_run",
                              summary="test stand-in that refuses", compiled=False)
    monkeypatch.setitem(solvers.algorithms(), "refuser", algo)
    win = window
    win.interactive = False
    path = tmp_path / "costs.npy"
    solvers.save(solvers.generate("dense-lap", n=6, seed=2), str(path))
    shot = tmp_path / "out.png"
    code, seen = run_script(qtbot, qapp, win, [str(path), "--algo", "refuser", "--run", "--screenshot", str(shot),
                                               "--quit"], monkeypatch, "leftovers-script-failed-run.png")
    assert code == 2 and shot.exists()
    # when the screenshot was taken: the failure in the log and the panel, nothing still "running"
    assert any("refuses every problem" in message for message in seen["log"])
    assert "refuses every problem" in seen["live"] and seen["elapsed"] == "failed" and seen["busy"] == ""
    run = win.session.runs[-1]
    assert run.status == "failed" and "refuses every problem" in run.error
    assert any("refuses every problem" in message for _, message in win.log_panel.entries)
    assert "refuses every problem" in win.solver_panel.live.text()  # the panel's failure line
    assert win.busy_label.text() == ""  # not "running refuser…"
    assert win.solver_panel.elapsed.text() == "failed"


# ---- E. smaller ones: controls that fit, plain chart titles, legends that tell runs apart ---------

@pytest.mark.parametrize("size", [(1440, 900), (1024, 700)])
def test_playback_choices_and_the_position_are_not_cut(window, qtbot, size):
    win = window
    win.resize(*size)
    win.fit_docks()
    qtbot.waitUntil(lambda: win.width() == size[0], timeout=10_000)
    QtWidgets.QApplication.processEvents()
    combo = win.timeline.speed_combo
    metrics = combo.fontMetrics()
    room = combo.width() - combo.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_ScrollBarExtent) - 8
    for i in range(combo.count()):
        assert metrics.horizontalAdvance(combo.itemText(i)) <= room, (combo.itemText(i), combo.width())
    label = win.timeline.position_label
    assert label.width() >= label.fontMetrics().horizontalAdvance("report 46 of 46 · 6.41 ms"), label.width()
    save_shot(win, f"leftovers-timeline-{size[0]}.png")


@pytest.mark.parametrize("size", [(1800, 1000), (1024, 700)])
def test_result_notes_sit_beside_their_rows_in_a_wide_panel_and_under_them_in_a_narrow_one(window, qtbot, size):
    """In the 1024 x 700 window the notes column was a few words wide ("solve, checks and
    certificate; no warm-up" in three lines); there each note now takes its own line under its row."""
    from explorer.session import RunState
    from explorer.views.solver_panel import rows_html
    win = window
    win.resize(*size)
    win.fit_docks()
    qtbot.waitUntil(lambda: win.width() == size[0], timeout=10_000)
    QtWidgets.QApplication.processEvents()
    panel = win.solver_panel
    narrow = size[0] < 1200
    assert panel.notes_below() == narrow, panel.width()
    run = RunState("lsa", "cpu", {}, "assignment", dataset="d")
    run.status, run.wall_seconds = "finished", 0.322
    win.session.add_run(run)
    panel.show_live(run)
    wall = next(row for row in panel.rows if row[0] == "wall")
    assert panel.live.text() == rows_html(panel.rows, narrow)
    row_lines = panel.live.text().split("<tr>")
    holding = [i for i, part in enumerate(row_lines) if wall[2] in part]
    assert len(holding) == 1
    assert (wall[1] in row_lines[holding[0]]) != narrow  # beside the value, or on the line after it
    if narrow:
        assert wall[1] in row_lines[holding[0] - 1]
    save_shot(win, f"leftovers-result-notes-{size[0]}.png")


def test_a_short_window_keeps_four_solver_options_in_sight_beside_a_runs_lines(window, qtbot):
    """At 1024 x 700 the options box showed one option and half of the next after a tracking run: the
    Dataset dock (whose facts scroll) now gives way first. With a matching run's lines: four whole."""
    win = window
    win.resize(1024, 700)
    win.fit_docks()
    qtbot.waitUntil(lambda: win.height() == 700, timeout=10_000)
    win.session.set_problem(small_graph(1, 20))
    panel = win.solver_panel
    panel.select_algorithm("gpr")
    from explorer.session import RunState
    run = RunState("gpr", "cpu", {}, "matching", dataset="g")  # a finished run's lines below Run, as after a run
    run.status, run.wall_seconds, run.warmup_seconds = "finished", 0.322, 1.89
    win.session.add_run(run)
    panel.show_live(run)
    panel.certificate.setText("konig-cover: certified optimal (vertex cover of size 20 = |M|)")
    QtWidgets.QApplication.processEvents()
    form = panel.options_form
    assert form.rowCount() >= 4
    fourth = form.itemAt(3, QtWidgets.QFormLayout.ItemRole.FieldRole).widget()
    qtbot.waitUntil(lambda: fourth.height() > 0, timeout=10_000)  # laid out
    bottom = fourth.mapTo(panel.scroll.widget(), QtCore.QPoint(0, fourth.height())).y()
    assert bottom <= panel.scroll.viewport().height(), (bottom, panel.scroll.viewport().height())
    save_shot(win, "leftovers-options-1024.png")


@pytest.mark.parametrize("size", [(1600, 1000), (1024, 700)])
def test_the_empty_configurations_table_shows_its_headers_whole(window, qtbot, size):
    from explorer.session import RunState
    win = window
    win.resize(*size)
    win.fit_docks()
    win.show_view(win.compare_view)
    qtbot.waitUntil(lambda: win.width() == size[0], timeout=10_000)
    graph = small_graph(1, 20)
    win.session.set_problem(graph)
    run = RunState("gpr", "cpu", {"variant": "shrink", "gr": "adaptive"}, "matching", problem=graph, dataset="g")
    run.status = "finished"
    win.session.compare_with([run])  # the results take the width their columns need: the box gives way
    win.compare_view.refresh(force=True)
    QtWidgets.QApplication.processEvents()
    table = win.compare_view.config_table
    assert table.rowCount() == 0
    assert table.horizontalHeader().length() <= table.viewport().width()  # "options" was cut, with a scroll bar
    assert not table.horizontalScrollBar().isVisible()


@pytest.mark.parametrize("size", [(1440, 900), (1024, 700)])
def test_compare_empty_notes_stay_inside_their_charts(window, qtbot, tmp_path, size):
    win = window
    win.resize(*size)
    win.fit_docks()
    win.session.set_problem(small_graph(1, 20))
    win.show_view(win.compare_view)
    view = win.compare_view
    view.refresh(force=True)
    QtWidgets.QApplication.processEvents()
    for note, plot in ((view.active_note, view.active_plot), (view.value_note, view.value_plot)):
        assert note.text and note.label.isVisible()
        assert "<br>" in note.label.text  # lines, not one long run across the next chart
        assert note.label.item.boundingRect().width() <= plot.getViewBox().width(), note.text
    save_shot(win, f"leftovers-compare-empty-{size[0]}.png")


def test_legend_entries_name_the_options_that_differ(window):
    from explorer.session import RunState
    win = window
    graph = small_graph(1, 20)
    win.session.set_problem(graph)
    runs = [RunState("gpr", "cpu", options, "matching", problem=graph, dataset="g")
            for options in ({}, {"variant": "first"}, {"variant": "noshrink"})]
    runs.append(RunState("hopcroft-karp", "cpu", {}, "matching", problem=graph, dataset="g"))
    for run in runs:
        run.status = "finished"
    win.session.compare_with(runs)
    names = [win.compare_view.legend_name(run) for run in runs]
    assert len(set(names)) == len(names), names
    default = next(o.default for o in solvers.algorithms()["gpr"].options if o.name == "variant")
    assert names[0].endswith(f"gpr [{runs[0].backend_used}] variant={default}")
    assert "variant=first" in names[1] and "variant=noshrink" in names[2]
    assert "=" not in names[3]  # the only run of its algorithm: nothing to tell apart


def test_a_log_x_axis_is_numbered_once_per_decade():
    from explorer.views.compare import log_decades
    major, minor = log_decades(np.arange(1, 1041, dtype=float))
    assert [label for _, label in major] == ["1", "10", "100", "1000", "10000"] and minor == []
    assert [pos for pos, _ in major] == [0.0, 1.0, 2.0, 3.0, 4.0]  # log10 positions
    assert log_decades(np.array([0.0, -1.0])) is None


def test_chart_titles_use_plain_words_for_reported_fields(window, qtbot):
    from explorer.session import RunState
    from explorer.wording import field_words
    from solvers.telemetry import IterationStats, RunRecord
    assert field_words("max_level") == "highest label" and field_words("dual_objective") == "dual objective"
    assert field_words("some_new_field") == "some new field"
    stream = [IterationStats(i, 1e-3 * (i + 1), "push", 10 - i, float(i), {"max_level": float(i // 3)})
              for i in range(10)]
    run = RunState.from_record(RunRecord({"algorithm": "gpr", "backend": "cpu", "problem_kind": "matching"},
                                         stream, []))
    win = window
    win.session.add_run(run)
    win.show_view(win.activity_view)
    view = win.activity_view
    view.extra_combo.setCurrentIndex(view.extra_combo.findData("max_level"))
    view.refresh(force=True)
    assert view.extra_combo.currentText() == "highest label"
    assert view.extra_plot.titleLabel.text == "Highest label"
    assert view.extra_plot.getAxis("left").labelText == "highest label"


def test_the_points_preview_spans_the_data_and_one_value_is_one_bar(window, qtbot, tmp_path):
    from explorer.views.dataset import histogram
    win = window
    series = solvers.generate("particles", n=20, frames=3, seed=3)
    path = tmp_path / "particles.npz"
    solvers.save(series, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    pts = np.concatenate(series.frames)
    (x0, x1), (y0, y1) = win.dataset_panel.plot.viewRange()
    span = pts[:, 0].max() - pts[:, 0].min()
    assert pts[:, 0].min() - 0.1 * span <= x0 <= pts[:, 0].min() and pts[:, 0].max() <= x1 <= pts[:, 0].max() + 0.1 * span
    assert y0 <= pts[:, 1].min() and y1 >= pts[:, 1].max()

    counts, edges = histogram(np.ones(12))
    assert counts.tolist() == [12] and edges.tolist() == [0.5, 1.5]
    counts, edges = histogram(np.full(5, 2.5))
    assert counts.tolist() == [5] and edges[0] < 2.5 < edges[1] and edges[1] - edges[0] < 1
    network = solvers.FlowNetwork.from_edges(4, [0, 0, 1, 2], [1, 2, 3, 3], [1, 1, 1, 1], 0, 3)
    win.session.set_problem(network)
    win.dataset_panel.refresh(force=True)
    (x0, x1), _ = win.dataset_panel.plot.viewRange()
    assert (x0, x1) == pytest.approx((0.0, 2.0))  # centred on the one value, nothing below 0
    save_shot(win.dataset_panel, "leftovers-one-capacity.png")


def test_the_3d_legend_of_a_one_frame_series_names_one_frame(window, qtbot):
    win = window
    win.open_path(ONE_FRAME)
    wait_loaded(qtbot, win)
    rows = win.tracks_view._legend_rows(win.session.problem, 1, 0, False)
    assert [text for kind, _, text in rows if kind == "ring"] == ["frame 0"]
    win.show_view(win.tracks_view)
    win.tracks_view.refresh(force=True)
    if win.tracks_view.gl_error is None:  # the line under the view, when GL draws it
        assert "Run to track" not in win.tracks_view.info.text()


class _Screen:
    def __init__(self, width, height):
        self.area = (width, height)

    def availableGeometry(self):
        from PySide6 import QtCore
        return QtCore.QRect(0, 0, *self.area)


@pytest.mark.parametrize("screen, size", [((1600, 1000), (1440, 900)), ((1024, 700), (1024, 700)),
                                          ((1280, 1024), (1280, 900)), (None, (1440, 900))])
def test_the_first_window_fits_the_screen(screen, size):
    """A first start (nothing saved) opens at 1440 x 900, or the screen's available area where that
    is smaller: on a 1024 x 700 screen the window's right and bottom edges were off screen."""
    from explorer.main_window import first_size
    assert first_size(_Screen(*screen) if screen else None) == size


def test_a_new_window_takes_its_first_size_from_this_screen(qtbot, qapp, tmp_path):
    from PySide6 import QtCore
    from explorer.app import dispose
    from explorer.main_window import MainWindow, first_size
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, interactive=True)
    qtbot.addWidget(win)
    try:
        assert (win.width(), win.height()) == first_size(QtWidgets.QApplication.primaryScreen())
    finally:
        win.close()
        dispose(win)
