"""The explorer's model and views fed with synthetic telemetry streams (no worker thread, no solver)."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from test_gui_fakes import (assert_real_content, flush_deleted_widgets,  # noqa: F401
                             colourful_fraction, configure_qt_platform, image_array,
                            run_fake_pr, small_graph)

configure_qt_platform()

from solvers.telemetry import IterationStats, RunInfo, RunRecord, Snapshot, Telemetry  # noqa: E402

from explorer.session import IterationColumns, RunState, Session, positions_for  # noqa: E402
from explorer.views.labels import common_edges, heatmap, rebin  # noqa: E402
from explorer.views.workload import launch_stats, workload_series  # noqa: E402
from explorer.worker import ForwardingObserver  # noqa: E402

pytestmark = pytest.mark.gui


def random_stream(rng, n, restarts=0):
    """IterationStats with random phases/extras; ``restarts`` times the iteration counter and clock restart."""
    out, it, t = [], 0, 0.0
    cut = set(rng.choice(np.arange(1, n), size=restarts, replace=False)) if restarts else set()
    for i in range(n):
        if i in cut:
            it, t = 0, 0.0
        t += float(rng.exponential(1e-3))
        extra = {"max_level": float(rng.integers(0, 9))} if rng.random() < 0.5 else {}
        if rng.random() < 0.2:
            extra["epsilon"] = float(rng.random())
        out.append(IterationStats(it, t, str(rng.choice(["push", "push", "global-relabel", "bid"])),
                                  int(rng.integers(-1, 50)), float(rng.normal()), extra))
        it += int(rng.integers(1, 4))
    return out


def test_columns_match_the_record_table_when_synced_in_chunks():
    rng = np.random.default_rng(0)
    for trial in range(40):
        stream = random_stream(rng, int(rng.integers(1, 400)))
        cols = IterationColumns()
        i = 0
        while i < len(stream):  # the worker appends while the GUI syncs: arbitrary chunks
            i = min(len(stream), i + int(rng.integers(1, 50)))
            cols.sync(stream[:i])
        table = RunRecord({}, stream, []).iteration_table()  # the contract's own columnar view: the oracle
        for key in ("iteration", "elapsed", "active", "value"):
            np.testing.assert_array_equal(cols.column(key), table[key])
        np.testing.assert_array_equal(np.array([cols.phases[c] for c in cols.column("phase")]), table["phase"])
        for key in [k for k in table if k.startswith("extra.")]:
            np.testing.assert_array_equal(cols.column(key), table[key])
        assert cols.monotone
        assert not cols.sync(stream), "a second sync with nothing new must report no change"


def test_restarted_streams_get_monotone_time_and_ordinal_x():
    rng = np.random.default_rng(1)
    stream = random_stream(rng, 300, restarts=3)
    cols = IterationColumns()
    cols.sync(stream)
    assert not cols.monotone
    assert np.all(np.diff(cols.column("time")) > 0)
    np.testing.assert_array_equal(cols.x(), np.arange(1, 301))  # report numbers, as the charts say


def test_main_phase_ignores_known_events():
    cols = IterationColumns()
    cols.sync([IterationStats(i, i * 1e-3, "global-relabel" if i % 3 else "push") for i in range(30)])
    assert cols.main_phase() == "push"  # global-relabel is more frequent but is an event


def test_rebin_preserves_counts_and_matches_numpy_on_aligned_axes():
    rng = np.random.default_rng(2)
    for _ in range(200):
        values = rng.integers(0, int(rng.integers(2, 60)), int(rng.integers(1, 500)))
        edges = np.arange(values.min() - 0.5, values.max() + 1.5)
        counts, _ = np.histogram(values, edges)
        step = int(rng.integers(1, 5))  # the target merges `step` unit bins, aligned with the source
        target = np.arange(edges[0], edges[-1] + step, step, dtype=float)
        expected, _ = np.histogram(values, target)
        np.testing.assert_allclose(rebin(edges, counts, target), expected, atol=1e-9)
        wide = np.linspace(edges[0] - 3, edges[-1] + 7, int(rng.integers(2, 90)))
        assert math.isclose(rebin(edges, counts, wide).sum(), values.size, rel_tol=1e-9)


def test_common_edges_cover_every_snapshot_and_heatmap_holds_the_newest_column():
    e1, e2 = np.arange(-0.5, 5.5), np.arange(2.5, 12.5)
    axis = common_edges([e1, e2])
    assert axis[0] <= e1[0] and axis[-1] >= e2[-1]
    np.testing.assert_allclose(np.diff(axis), 1.0)  # unit bins stay unit bins
    hists = np.array([[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    # iterations 0..20 (x1 = the last one + 1) in 5 columns of 4.2: [0, 4.2), [4.2, 8.4), ... [16.8, 21)
    image = heatmap(np.array([0.0, 10.0, 20.0]), hists, 0.0, 21.0, 5)
    np.testing.assert_array_equal(image.T, hists[[0, 0, 1, 1, 2]])  # the last snapshot gets its column
    # one column per iteration: iteration i shows the newest snapshot taken at or before it
    image = heatmap(np.array([0.0, 10.0, 20.0]), hists, 0.0, 21.0, 21)
    np.testing.assert_array_equal(image.T, hists[[0] * 10 + [1] * 10 + [2]])


def test_launch_stats_against_numpy():
    rng = np.random.default_rng(3)
    for _ in range(50):
        w = rng.gamma(2.0, 3.0, int(rng.integers(1, 200)))
        st = launch_stats(w)
        q = np.quantile(w / w.mean(), [0, 0.25, 0.5, 0.75, 1])
        np.testing.assert_allclose([st["min"], st["q1"], st["median"], st["q3"], st["max"]], q)
        assert st["warps"] == w.size
    assert math.isnan(launch_stats(np.zeros(4))["median"])  # no work: nothing to normalise


def fed_run(problem, **options) -> RunState:
    """A RunState filled through the same observer the worker uses, by the stand-in solver."""
    run = RunState("fake-pr", "cpu", options, problem.kind)
    observer = ForwardingObserver(run, threading.Event(), notify=lambda: None)
    tel = Telemetry(observer, RunInfo("fake-pr", "cpu", problem.kind, problem.describe(), options, "psi"))
    run_fake_pr(problem, "cpu", tel, **options)
    run.status = "finished"
    run.sync()
    return run


def test_positions_for_a_loaded_record_equal_the_live_ones():
    run = fed_run(small_graph(), steps=50)
    rec = run.record()
    assert positions_for(run.columns, rec.snapshots) == run.snapshot_positions
    replay = RunState.from_record(rec)
    assert replay.snapshot_positions == run.snapshot_positions
    np.testing.assert_array_equal(replay.columns.column("value"), run.columns.column("value"))


def test_views_draw_a_stream_and_follow_the_replay_cursor(qtbot, tmp_path):
    from explorer.theme import apply_app_theme
    from explorer.views import ActivityView, LabelsView, WorkloadView
    from PySide6 import QtWidgets
    apply_app_theme(QtWidgets.QApplication.instance(), "light")
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    views = {cls.__name__: cls(session) for cls in (ActivityView, LabelsView, WorkloadView)}
    for view in views.values():
        qtbot.addWidget(view)
        view.resize(900, 600)
        view.show()
        view.refresh(force=True)
        assert not view.has_content()
    empty = colourful_fraction(image_array(views["ActivityView"].grab()))
    run = fed_run(problem, steps=60)
    session.add_run(run)
    for name, view in views.items():
        view.refresh(force=True)
        assert view.has_content(), name
        assert_real_content(image_array(view.charts.grab()), name)
    assert colourful_fraction(image_array(views["ActivityView"].grab())) > 10 * max(empty, 1e-4)

    activity = views["ActivityView"]
    assert activity.tables()["activity"]["active"].size == run.columns.n == 61
    labels = views["LabelsView"]
    # the histogram shown is the one of the newest labels snapshot
    last = run.snapshots("labels")[-1][1]
    np.testing.assert_array_equal(labels.tables()["histogram"]["count"], last.data["rows.hist_counts"])
    # the heatmap keeps every row label: each snapshot's column sums to the number of finite labels below the cap
    heat = labels.tables()["heatmap"]
    per_snapshot = heat["count"].reshape(len(run.snapshots("labels")), -1).sum(axis=1)
    expected = [s.data["rows.hist_counts"].sum() for _, s in run.snapshots("labels")]
    np.testing.assert_allclose(per_snapshot, expected)

    session.set_cursor(25)  # replay: 25 iterations
    for view in views.values():
        view.refresh()
    assert activity.tables()["activity"]["report"].size == 25
    shown = [s for p, s in run.snapshots("labels") if p <= 25][-1]
    np.testing.assert_array_equal(labels.tables()["histogram"]["count"], shown.data["rows.hist_counts"])
    workload = views["WorkloadView"]
    launches = workload.tables()[f"run{run.id}"]["launch"]
    assert launches.size == len(run.snapshots("workload", 25)) < len(run.snapshots("workload"))
    # measured cycles are preferred when present
    assert set(workload.tables()[f"run{run.id}"]["measure"]) == {"cycles"}
    session.set_cursor(None)
    activity.refresh()
    assert activity.tables()["activity"]["report"].size == 61


def test_workload_shows_tc_and_vc_side_by_side(qtbot):
    from explorer.views import WorkloadView
    session = Session()
    problem = small_graph()
    session.set_problem(problem)
    group = session.new_group()
    tc, vc = fed_run(problem, mode="TC"), fed_run(problem, mode="VC")
    tc.group = vc.group = group
    session.add_run(tc)
    session.add_run(vc, make_current=False)
    view = WorkloadView(session)
    qtbot.addWidget(view)
    assert view.runs_to_show() == [tc, vc]
    view.refresh(force=True)
    assert set(view.tables()) == {f"run{tc.id}", f"run{vc.id}"}
    assert {m for t in view.tables().values() for m in t["mode"]} == {"TC", "VC"}


def test_activity_marks_events_and_log_scale(qtbot):
    from explorer.views import ActivityView
    session = Session()
    session.set_problem(small_graph())
    session.add_run(fed_run(session.problem, steps=40, relabel_every=8))
    view = ActivityView(session)
    qtbot.addWidget(view)
    view.refresh(force=True)
    from PySide6 import QtGui
    shown = QtGui.QTextDocument()
    shown.setHtml(view.events_label.text())
    assert "global-relabel\u00a0×\u00a05" in shown.toRawText()  # one event never wraps inside itself
    view.log_scale.setChecked(True)
    assert view.active_plot.getAxis("left").logMode
    assert view.extra_combo.currentData() == "max_level"  # a documented scalar is picked by default


def test_session_discards_a_result_that_arrives_after_stop():
    session = Session()
    session.set_problem(small_graph())
    run = RunState("fake-scipy", "cpu", {}, "matching", uninterruptible=True)
    session.add_run(run)
    session.mark_started(run)
    run.stop_requested = True
    session.mark_finished(run, object())
    assert run.status == "cancelled" and run.result is None and run.track is None


def test_recorder_snapshots_without_positions_are_not_shown_early():
    run = RunState("x", "cpu", {}, "matching")
    run.recorder.snapshots.append(Snapshot(0, 0.0, "labels", {}))
    assert run.snapshots("labels") == []  # the observer writes the position first; half-written is invisible
    run.snapshot_positions.append(0)
    assert len(run.snapshots("labels")) == 1


def replay_session(stream) -> Session:
    session = Session()
    session.set_problem(small_graph())
    session.add_run(RunState.from_record(RunRecord({"algorithm": "x"}, stream, [])))
    return session


def test_real_time_playback_follows_the_recorded_clock(qtbot):
    """At 1/100× real time, a run recorded over 10 ms plays in one second: 0.25 s of playback shows
    the reports of the first 2.5 ms, whatever the machine's load (playback is driven by steps)."""
    from explorer.views import Timeline
    stream = [IterationStats(i, (i + 1) * 1e-5, "push", 10, float(i)) for i in range(1000)]  # 10 ms, even
    session = replay_session(stream)
    timeline = Timeline(session)
    qtbot.addWidget(timeline)
    timeline.speed_combo.setCurrentIndex(timeline.speed_combo.findData(1e-2))
    seen = []
    session.cursorChanged.connect(seen.append)
    timeline.set_playing(True)
    assert session.cursor == 1  # from the start: the first report
    positions = []
    while timeline.playing:
        positions.append(timeline.advance(0.2504))  # 2.504 ms of the recording per step
    # the reports recorded by 0.01 ms + k × 2.504 ms: 251, 501, 752, then the end
    assert positions == [251, 501, 752, 1000]
    assert seen == [1, 251, 501, 752, 1000]
    assert session.cursor == 1000 and timeline.advance(1.0) is None  # stopped at the end


def test_even_steps_playback_is_driven_by_the_injected_clock(qtbot):
    """The QTimer's tick advances by the clock's differences: a test clock gives exact positions."""
    from explorer.views import Timeline
    stream = [IterationStats(i, 1e-3 * (i + 1) ** 2, "push", 10, float(i)) for i in range(100)]  # uneven times
    session = replay_session(stream)
    now = [0.0]
    timeline = Timeline(session, clock=lambda: now[0])
    qtbot.addWidget(timeline)
    timeline.speed_combo.setCurrentIndex(0)  # even steps: every report the same time
    timeline.fit_seconds = 4.0
    timeline.slider.setValue(30)  # start from report 30
    assert session.cursor == 30 and not timeline.live_button.isChecked()
    timeline.set_playing(True)
    assert timeline.timer.isActive()
    seen = []
    session.cursorChanged.connect(seen.append)
    timeline.tick()  # no time has passed: no move
    assert seen == [] and session.cursor == 30
    while timeline.playing:
        now[0] += 0.5  # 0.5 s of 4 s: 12.5 reports per tick
        timeline.tick()
    assert seen == [42, 55, 67, 80, 92, 100]
    assert not timeline.timer.isActive() and not timeline.play_button.isChecked()
    # playing again from the end replays from the start; a speed change keeps the position
    timeline.set_playing(True)
    assert session.cursor == 1
    now[0] += 0.5
    timeline.tick()
    assert session.cursor == 13  # 1 + 12.5
    timeline.speed_combo.setCurrentIndex(timeline.speed_combo.findData(1.0))  # 1× real time from report 13
    assert timeline.playing and session.cursor == 13
    now[0] += 0.25  # the recorded clock: report k at k² ms; 0.169 s + 0.25 s = 0.419 s -> report 20
    timeline.tick()
    assert session.cursor == 20
    timeline.live_button.setChecked(True)
    assert session.cursor is None and not timeline.playing


def test_timeline_slider_keeps_its_room_in_a_narrow_window(qtbot):
    from explorer.views import Timeline
    from explorer.views.timeline import SLIDER_MIN_WIDTH
    stream = [IterationStats(i, 1e-3 * i, "push", 10, float(i)) for i in range(50)]
    session = replay_session(stream)
    session.current_run.name = "#12 hungarian [cpu] with a long name that does not fit"
    timeline = Timeline(session)
    qtbot.addWidget(timeline)
    timeline.sync_runs()
    timeline.show()
    # the central area of a 1024 × 700 window (the docks take the rest)
    assert timeline.minimumSizeHint().width() <= 660, "the other controls shrink, the bar does not overflow"
    for width in (740, 660):
        timeline.resize(width, 40)
        qtbot.waitUntil(lambda: timeline.width() == width)
        assert timeline.slider.width() >= SLIDER_MIN_WIDTH
    timeline.resize(1400, 40)
    qtbot.waitUntil(lambda: timeline.slider.width() > 2 * SLIDER_MIN_WIDTH)
    assert "report 50 of 50" in timeline.position_label.text()


def test_timeline_shows_no_run_after_a_new_dataset(qtbot):
    """Generate or Open clears the current run: the run list selects none rather than showing the
    previous run (earlier runs stay listed), also when the list is rebuilt afterwards."""
    from explorer.views import Timeline
    session = replay_session([IterationStats(i, 1e-3 * (i + 1), "push", 10, float(i)) for i in range(20)])
    timeline = Timeline(session)
    qtbot.addWidget(timeline)
    earlier = session.current_run
    assert timeline.run_combo.currentIndex() == 0 and timeline.run_combo.currentText() == earlier.label
    session.set_problem(small_graph(seed=2))  # a new dataset: no current run
    assert timeline.run_combo.count() == 1 and timeline.run_combo.currentIndex() == -1
    assert timeline.run_combo.currentText() == "" and timeline.position_label.text() == "no run"
    session.add_run(RunState.from_record(RunRecord({"algorithm": "y"}, [], [])), make_current=False)
    assert timeline.run_combo.count() == 2 and timeline.run_combo.currentIndex() == -1  # rebuilt: still none
    assert session.current_run is None
    session.set_current_run(earlier)  # choosing a run again shows it
    assert timeline.run_combo.currentIndex() == 0 and session.cursor is None


def test_a_running_solve_counts_reports_as_the_charts_do_not_solver_iterations(qtbot):
    """While a run goes, the panel says how many telemetry reports came ("report N", as the charts and
    the timeline count them); a solver's own iteration numbers may run past its final count (gpr's
    final check is loop 32 of a 31-loop run), so the panel never shows them as "iterations" live."""
    from explorer.views.solver_panel import SolverPanel
    session = Session()
    session.set_problem(small_graph())
    run = RunState("x", "cpu", {}, "matching")
    session.add_run(run)
    session.mark_started(run)
    for number in (0, 5, 32):
        run.recorder.iterations.append(IterationStats(number, 0.001 * number, "push", 3, 1.0))
    panel = SolverPanel(session)
    qtbot.addWidget(panel)
    rows = {name: (value, note) for name, value, note in panel._rows(run)}
    assert rows["report"][0] == "3" and "iteration" not in rows and "iterations" not in rows


def test_the_replay_bar_names_itself_and_says_when_there_is_no_run_yet(qtbot):
    """The toolbar's Run starts a solve; the bar below picks a run to replay, so it is labelled
    Replay, and before any run its list says so instead of showing an empty box."""
    from PySide6 import QtWidgets
    from explorer.session import Session
    from explorer.views import Timeline
    timeline = Timeline(Session())
    qtbot.addWidget(timeline)
    labels = [w.text() for w in timeline.findChildren(QtWidgets.QLabel) if w is not timeline.position_label]
    assert "Replay" in labels and "Run" not in labels
    assert timeline.run_combo.count() == 0 and timeline.run_combo.placeholderText() == "none yet"


def test_the_solver_panel_starts_on_the_algorithm_solve_picks_unnamed(qtbot):
    """The explorer offers first what `matchscope solve` and solvers.solve run on the same problem
    when no algorithm is named, not the list's first name; a user's own pick is kept."""
    import solvers
    from explorer.views import SolverPanel
    panel = SolverPanel(Session())
    qtbot.addWidget(panel)
    costs = solvers.CostMatrix.from_array(np.random.default_rng(0).random((20, 20)))
    panel.set_problem(costs)
    assert panel.algo_combo.currentData() == solvers.default_algorithm(costs, "auto").algorithm
    other = next(panel.algo_combo.itemData(i) for i in range(panel.algo_combo.count())
                 if panel.algo_combo.itemData(i) != panel.algo_combo.currentData())
    panel.select_algorithm(other)
    panel.set_problem(solvers.CostMatrix.from_array(np.ones((5, 5))))
    assert panel.algo_combo.currentData() == other


def test_a_runs_algorithm_and_backend_stay_whole_in_a_1024_wide_window(qtbot):
    """At 1024 × 700 the Replay bar has about 740 pixels: the run list showed "#1 auction [cp…"; the
    dataset's name may be cut ("#1 auction [cpu] · …", the tooltip has it whole), the run's own not."""
    from PySide6 import QtWidgets
    from explorer.views import Timeline
    stream = [IterationStats(i, 1e-3 * i, "push", 10, float(i)) for i in range(466)]
    session = replay_session(stream)
    session.current_run.name = "#1 auction [cpu]"
    session.current_run.dataset = "particles_100x10.npz"
    timeline = Timeline(session)
    qtbot.addWidget(timeline)
    timeline.sync_runs()
    timeline.show()
    timeline.resize(740, 40)
    qtbot.waitUntil(lambda: timeline.width() == 740)
    combo = timeline.run_combo
    shown = combo.style().subControlRect(QtWidgets.QStyle.ComplexControl.CC_ComboBox, _combo_option(combo),
                                         QtWidgets.QStyle.SubControl.SC_ComboBoxEditField, combo)
    assert combo.fontMetrics().horizontalAdvance("#1 auction [cpu] · …") <= shown.width()


def _combo_option(combo):
    from PySide6 import QtWidgets
    option = QtWidgets.QStyleOptionComboBox()
    combo.initStyleOption(option)
    return option
