"""End-to-end GUI workflows in a real window under Xvfb: open -> run -> views -> compare -> export ->
replay, errors, Stop, the worker not flooding the GUI, dialogs, settings, drag and drop."""
from __future__ import annotations

import csv
import json
import time

import networkx as nx
import pytest

from test_gui_fakes import (assert_real_content, configure_qt_platform, fake_algorithms,  # noqa: F401
                            flush_deleted_widgets, image_array, load_png, save_shot, small_graph, wait_loaded,
                            wait_run, window)

configure_qt_platform()

import solvers  # noqa: E402
from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

pytestmark = pytest.mark.gui


def networkx_matching_size(graph) -> int:
    g = nx.Graph()
    rows, cols = graph.edges()
    top = [("r", i) for i in range(graph.n_rows)]
    g.add_nodes_from(top)
    g.add_nodes_from(("c", j) for j in range(graph.n_cols))
    g.add_edges_from((("r", int(r)), ("c", int(c))) for r, c in zip(rows, cols))
    return len(nx.bipartite.hopcroft_karp_matching(g, top_nodes=top)) // 2


def open_graph(qtbot, win, tmp_path, seed=1, n=300):
    graph = small_graph(seed, n)
    path = tmp_path / f"graph{seed}.mtx"
    solvers.save(graph, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    return graph, path


def test_open_run_views_compare_export_replay(window, qtbot, tmp_path, fake_algorithms):
    win = window
    graph, path = open_graph(qtbot, win, tmp_path)
    optimum = networkx_matching_size(graph)
    assert win.session.path == str(path)
    assert win.dataset_panel.has_content()
    names = [win.solver_panel.algo_combo.itemData(i) for i in range(win.solver_panel.algo_combo.count())]
    algos = solvers.algorithms()
    assert "fake-pr" in names
    assert all("matching" in algos[n].problem_kinds or isinstance(graph, algos[n].accepts) for n in names)
    assert "dinic" not in names  # flow solvers are filtered out for a matching problem

    # ---- run ------------------------------------------------------------------------------
    win.solver_panel.select_algorithm("fake-pr")
    win.solver_panel.set_option("steps", "90")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "finished", run.error
    assert run.result.certified and run.result.value == optimum
    assert run.n_reports == 91
    win.refresh_all()
    for view, name in ((win.labels_view, "labels"), (win.activity_view, "activity"), (win.workload_view, "workload")):
        win.tabs.setCurrentWidget(view)
        qtbot.wait(50)
        assert view.has_content(), name
        assert_real_content(image_array(view.charts.grab()), name)
        save_shot(win, f"workflow-{name}.png")

    # ---- compare: TC vs VC of the stand-in, and the real CPU reference solvers ------------------
    # (gpr / wbpr are left to their own tests: their first numba compile alone would take this file's budget)
    win.compare_view.add_config("fake-pr", "auto", {"mode": "TC", "steps": 30})
    win.compare_view.add_config("fake-pr", "auto", {"mode": "VC", "steps": 30})
    real = [n for n in ("hopcroft-karp", "pr-seq") if n in names]
    assert real, f"no real matching solver registered: {names}"
    for name in real:
        win.compare_view.add_config(name, "cpu", {})
    runs = win.run_comparison(list(win.compare_view.configs))
    for r in runs:
        wait_run(qtbot, r, timeout=120_000)
    assert [r.status for r in runs] == ["finished"] * len(runs), [r.error for r in runs]
    headers, rows = win.compare_view.table_rows()
    assert len(rows) == 2 + len(real)
    assert all(row[headers.index("value")] == optimum for row in rows)
    assert all(row[headers.index("certified")] is True for row in rows)
    win.refresh_all()
    assert win.compare_view.result_table.rowCount() == len(rows)
    assert_real_content(image_array(win.compare_view.charts.grab()), "compare charts")
    win.tabs.setCurrentWidget(win.compare_view)
    qtbot.wait(50)
    save_shot(win, "workflow-compare.png")
    win.session.set_current_run(runs[0])
    shown = win.workload_view.runs_to_show()
    assert shown[:2] == runs[:2]  # the TC run, then the VC run beside it (other modes may follow)
    win.tabs.setCurrentWidget(win.workload_view)
    win.workload_view.refresh(force=True)
    qtbot.wait(50)
    save_shot(win, "workflow-workload-tc-vc.png")

    # ---- export -----------------------------------------------------------------------------
    out = tmp_path / "out"
    out.mkdir()
    win.session.set_current_run(run)
    win.export_solution(out / "m.csv")
    with open(out / "m.csv") as f:
        pairs = [tuple(map(int, r[:2])) for r in list(csv.reader(f))[1:]]
    assert sorted(pairs) == [tuple(p) for p in run.result.pairs()]
    win.export_solution(out / "m.json")
    assert json.loads((out / "m.json").read_text())["value"] == optimum
    win.export_solution(out / "m.mtx")
    assert solvers.load(str(out / "m.mtx")).n_edges == optimum
    for view in (win.labels_view, win.activity_view, win.workload_view, win.compare_view):
        stem = view.title.lower()
        win.export_view(view, out / f"{stem}.png")
        assert_real_content(load_png(out / f"{stem}.png"), f"{stem}.png export")
        win.export_view(view, out / f"{stem}.svg")
        assert (out / f"{stem}.svg").read_text().lstrip().startswith("<?xml")
        written = win.export_view(view, out / f"{stem}.csv")
        assert written and all(p.stat().st_size > 20 for p in written)
    with open(out / "activity.csv") as f:
        table = list(csv.DictReader(f))
    assert len(table) == run.columns.n and table[-1]["phase"] == "done"
    win.export_comparison(out / "cmp.csv")
    win.export_comparison(out / "cmp.md")
    md = (out / "cmp.md").read_text()
    assert md.count("\n| ") >= len(rows) + 1 and "fake-pr" in md
    report = win.export_report(out / "report.md")
    text = report.read_text()
    assert "konig-cover: certified" in text
    images = sorted((out / "report_files").glob("*.png"))
    assert {p.name for p in images} >= {"labels.png", "activity.png", "workload.png"}
    assert not [p for p in out.rglob("*.tmp")], "atomic writes leave no temporary files"

    # ---- replay: save the run, load it back, scrub and play ----------------------------------
    win.save_run(out / "run.npz")
    win.open_path(out / "run.npz")
    qtbot.waitUntil(lambda: win.session.current_run is not None and win.session.current_run.replayed, timeout=20_000)
    replay = win.session.current_run
    assert replay.n_reports == run.n_reports and len(replay.recorder.snapshots) == len(run.recorder.snapshots)
    win.tabs.setCurrentWidget(win.activity_view)
    win.timeline.slider.setValue(30)
    win.activity_view.refresh()
    assert win.session.cursor == 30
    assert win.activity_view.tables()["activity"]["report"].size == 30
    seen = []
    win.session.cursorChanged.connect(lambda pos: seen.append(pos))
    now = [0.0]
    win.timeline.clock = lambda: now[0]  # playback advances by this clock: no dependence on machine load
    win.timeline.speed_combo.setCurrentIndex(0)  # even steps, the whole run in ...
    win.timeline.fit_seconds = 4.0  # ... four seconds: 91 reports, 11.375 per half-second tick
    win.timeline.set_playing(True)
    while win.timeline.playing:
        now[0] += 0.5
        win.timeline.tick()
    assert replay.columns.n == 91 and win.session.cursor == replay.columns.n
    assert seen == [41, 52, 64, 75, 86, 91], "playback moves forward through intermediate states"
    win.timeline.live_button.setChecked(True)
    assert win.session.cursor is None


def test_bad_file_shows_the_one_line_error_and_keeps_the_dataset(window, qtbot, tmp_path):
    win = window
    graph, path = open_graph(qtbot, win, tmp_path)
    before = win.session.problem
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 1\nx y\n")
    with pytest.raises(solvers.InputError) as expected:
        solvers.load(str(bad))
    win.open_path(bad)
    qtbot.waitUntil(lambda: win.error_box is not None and win.error_box.isVisible(), timeout=20_000)
    assert win.error_box.text() == str(expected.value)
    assert win.error_box.text().startswith(f"{bad}:4: ")
    assert win.session.problem is before and win.session.path == str(path)
    assert win.dataset_panel.source_label.text().endswith(f"{path}</b>")
    save_shot(win, "error-window.png")
    save_shot(win.error_box, "error-dialog.png")
    win.error_box.close()
    # a missing file is the same kind of one-line error
    win.open_path(tmp_path / "missing.mtx")
    qtbot.waitUntil(lambda: len(win.errors) == 2, timeout=20_000)
    assert win.errors[-1].startswith(str(tmp_path / "missing.mtx")) and win.session.problem is before
    # the window is still usable: the same file opens again
    win.open_path(path)
    qtbot.waitUntil(lambda: win.session.problem is not before, timeout=20_000)


def test_failed_solve_reports_and_keeps_previous_results(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path)
    win.solver_panel.select_algorithm("fake-pr")
    good = win.start_run()
    wait_run(qtbot, good)
    with pytest.raises(solvers.InputError) as bad_option:
        win.solver_panel.set_option("mode", "XX")
    assert str(bad_option.value) == "option mode must be one of TC, VC, not XX"
    # a backend this algorithm does not have is refused before it becomes a run: the list keeps only real runs
    runs_before = list(win.session.runs)
    assert win.run_config({"algorithm": "fake-pr", "backend": "cuda", "options": {}}) is None
    assert win.session.runs == runs_before
    assert win.error_box.text() == win.errors[-1] == "fake-pr runs on cpu, not cuda"
    assert good.result is not None and good.status == "finished"


def test_stop_cancels_within_100_ms_and_the_app_stays_usable(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path)
    win.solver_panel.select_algorithm("fake-pr")
    win.solver_panel.set_option("steps", 1_000_000)
    win.solver_panel.set_option("delay", 0.002)
    run = win.start_run()
    qtbot.waitUntil(lambda: run.n_reports > 20, timeout=20_000)
    assert win.act_stop.isEnabled() and not win.act_run.isEnabled()
    ticks = run.n_reports
    QtWidgets.QApplication.processEvents()
    assert run.n_reports >= ticks  # the GUI thread keeps running while the solver works
    win.stop()
    qtbot.waitUntil(lambda: run.status == "cancelled", timeout=5_000)
    job = win.jobs[run.id]
    assert job.cancelled_at - job.stop_requested_at < 0.1
    assert run.result is None
    assert win.act_run.isEnabled()
    win.solver_panel.set_option("steps", 5)
    win.solver_panel.set_option("delay", 0.0)
    again = win.start_run()
    wait_run(qtbot, again)
    assert again.status == "finished"


def test_scipy_solver_cannot_be_interrupted_its_result_is_discarded(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path)
    win.solver_panel.select_algorithm("fake-scipy")
    assert "cannot interrupt" in win.solver_panel.note.text()
    win.solver_panel.set_option("seconds", 0.8)
    run = win.start_run()
    qtbot.waitUntil(lambda: run.status == "running", timeout=10_000)
    win.stop()
    assert run.status == "cancelled"  # the GUI lets go at once
    assert "cannot be interrupted" in win.status_label.text()
    assert win.act_run.isEnabled()
    qtbot.waitUntil(lambda: not win.host.busy, timeout=10_000)
    assert run.result is None and run.status == "cancelled"


def test_a_flood_of_iterations_is_coalesced(window, qtbot, tmp_path, fake_algorithms):
    win = window
    open_graph(qtbot, win, tmp_path, n=60)
    progress = []
    win.host.worker.jobProgress.connect(lambda job: progress.append(time.perf_counter()))
    win.solver_panel.select_algorithm("fake-pr")
    win.solver_panel.set_option("steps", 60_000)
    win.solver_panel.set_option("snapshot_every", 0)
    start = time.perf_counter()
    run = win.start_run()
    wait_run(qtbot, run, timeout=120_000)
    elapsed = time.perf_counter() - start
    assert run.status == "finished" and run.n_reports == 60_001
    assert len(progress) <= 70 * elapsed + 5, f"{len(progress)} notifications in {elapsed:.2f} s"
    win.tabs.setCurrentWidget(win.activity_view)
    win.activity_view.refresh(force=True)
    assert win.activity_view.tables()["activity"]["active"].size == 60_001


def test_generate_dialog_is_built_from_the_generator_kinds(window, qtbot):
    from explorer.dialogs import GenerateDialog
    from solvers.generators import KINDS
    dialog = GenerateDialog(window)
    qtbot.addWidget(dialog)
    for name, entry in KINDS.items():
        dialog.set_kind(name)
        assert list(dialog.widgets) == list(entry.params)
    dialog.set_kind("random-bipartite")
    dialog.set_param("rows", 40)
    dialog.set_param("cols", 50)
    dialog.set_param("degree", 2)
    kind, params = dialog.request()
    assert kind == "random-bipartite" and params["rows"] == 40 and params["seed"] == 0
    window.generate(kind, params)
    wait_loaded(qtbot, window)
    assert window.session.problem.shape == (40, 50) and window.session.problem.n_edges == 80
    # bad parameters come back as the generator's one-line error
    window.generate("random-bipartite", {"rows": 4, "cols": 4, "degree": 9})
    qtbot.waitUntil(lambda: bool(window.errors), timeout=10_000)
    assert window.errors[-1] == "degree (9) must be <= cols (4)"  # no "<generate>:" prefix


def test_sample_gallery_reads_the_samples_readme(qtbot, tmp_path):
    from explorer.dialogs import SampleGallery
    graph = small_graph()
    solvers.save(graph, str(tmp_path / "tiny.mtx"))
    (tmp_path / "README.md").write_text("| file | kind | sizes |\n|---|---|---|\n| `tiny.mtx` | matching | 120 x 120 |\n")
    gallery = SampleGallery(folder=tmp_path)
    qtbot.addWidget(gallery)
    assert gallery.table.rowCount() == 1
    cells = [gallery.table.item(0, c).text() for c in range(gallery.table.columnCount())]
    assert cells[:4] == ["tiny.mtx", "matching", "120 x 120", ""]
    assert gallery.selected_path() == str(tmp_path / "tiny.mtx")


def test_sample_gallery_with_a_folder_name_too_long_is_empty_not_an_error(qtbot, tmp_path):
    """Path.is_dir() raises OSError on a name longer than the file system allows: the gallery
    answers as for any folder that is not there (an empty list, an empty table)."""
    from explorer.dialogs import SampleGallery, sample_descriptions, sample_files
    too_long = tmp_path / ("x" * 300)
    assert sample_files(too_long) == [] and sample_descriptions(too_long) == {}
    gallery = SampleGallery(folder=too_long)
    qtbot.addWidget(gallery)
    assert gallery.table.rowCount() == 0


def test_recent_files_layout_and_shortcuts_persist(window, qtbot, tmp_path):
    win = window
    _, path = open_graph(qtbot, win, tmp_path)
    assert win.recent_files()[0] == str(path)
    assert [a.text() for a in win.recent_menu.actions()] == [path.name]
    shortcuts = {a.text(): [s.toString() for s in a.shortcuts()] for a in win.actions()}
    assert shortcuts["&Run"] == ["Ctrl+R", "F5"] and shortcuts["&Stop"] == ["Esc"]
    assert shortcuts["&Open…"] == ["Ctrl+O"] and shortcuts["&Export Current View…"] == ["Ctrl+E"]
    win.log_dock.hide()
    win.tabs.setCurrentIndex(2)
    win.close()
    from explorer.main_window import MainWindow
    again = MainWindow(settings=win.settings)
    qtbot.addWidget(again)
    assert again.recent_files()[0] == str(path)
    assert again.tabs.currentIndex() == 2
    assert again.log_dock.isHidden()
    again.close()


def test_a_recent_file_opened_by_a_relative_path_is_listed_by_its_full_path(window, qtbot, tmp_path, monkeypatch):
    """Open Recent works from any working folder: the list holds full paths."""
    win = window
    _, path = open_graph(qtbot, win, tmp_path)
    monkeypatch.chdir(path.parent)
    win._add_recent(path.name)
    assert win.recent_files()[0] == str(path.resolve())
    assert win.recent_files().count(str(path.resolve())) == 1


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # Qt 6 keeps only the QPoint drag-enter constructor
def test_drop_a_file_opens_it(window, qtbot, tmp_path):
    graph = small_graph(3, 50)
    path = tmp_path / "dropped.mtx"
    solvers.save(graph, str(path))
    mime = QtCore.QMimeData()
    mime.setUrls([QtCore.QUrl.fromLocalFile(str(path))])
    pos = QtCore.QPointF(200, 200)
    enter = QtGui.QDragEnterEvent(pos.toPoint(), QtCore.Qt.DropAction.CopyAction, mime,
                                  QtCore.Qt.MouseButton.LeftButton, QtCore.Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QtGui.QDropEvent(pos, QtCore.Qt.DropAction.CopyAction, mime, QtCore.Qt.MouseButton.LeftButton,
                            QtCore.Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    wait_loaded(qtbot, window)
    assert window.session.path == str(path) and window.session.problem.n_edges == graph.n_edges


def test_dark_palette_reaches_the_charts(window, qtbot, qapp, tmp_path, fake_algorithms):
    from explorer.theme import apply_app_theme
    open_graph(qtbot, window, tmp_path, n=80)
    window.solver_panel.select_algorithm("fake-pr")
    wait_run(qtbot, window.start_run())
    apply_app_theme(qapp, "dark")
    try:
        qtbot.wait(50)
        window.tabs.setCurrentWidget(window.activity_view)
        window.activity_view.refresh(force=True)
        qtbot.wait(100)  # let the relayout after the palette change settle before the picture
        rgb = save_shot(window, "workflow-dark.png")
        chart = image_array(window.activity_view.charts.grab())
        assert chart[5, 5].mean() < 80, "chart background follows the dark palette"
        assert rgb[-5, 5].mean() < 100, "window follows the dark palette"
        assert_real_content(chart, "dark activity")
    finally:
        apply_app_theme(qapp, "light")


def test_flow_solution_exports_per_edge_flows(window, qtbot, tmp_path):
    """A flow result holds flows per edge, not the edges: the export must take them from the problem."""
    win = window
    network = solvers.generate("washington-rlg", rows=4, cols=4, seed=3)
    path = tmp_path / "net.max"
    solvers.save(network, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    win.solver_panel.select_algorithm("dinic")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "finished", run.error
    win.export_solution(tmp_path / "flow.csv")
    with open(tmp_path / "flow.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == network.n_edges
    flows = [int(r["flow"]) for r in rows]
    assert all(0 <= fl <= int(r["capacity"]) for fl, r in zip(flows, rows))
    out_of_source = sum(fl for fl, r in zip(flows, rows) if int(r["tail"]) == network.source_vertex)
    into_source = sum(fl for fl, r in zip(flows, rows) if int(r["head"]) == network.source_vertex)
    assert out_of_source - into_source == run.result.value


def test_the_dataset_preview_redraws_for_a_new_dataset_not_for_every_run_event(window, qtbot, tmp_path):
    """A run's start and progress change the session; the dataset dock shows the same dataset and
    must not redraw its preview for them (0.1 s a time for a point series, in the solver's way)."""
    win = window
    open_graph(qtbot, win, tmp_path, n=60)
    redraws = []
    real = win.dataset_panel.redraw
    win.dataset_panel.redraw = lambda: (redraws.append(1), real())[1]
    win.dataset_panel.refresh()
    for _ in range(5):
        win.session.touch()  # what a run's start, progress and end do
        assert not win.dataset_panel.refresh()
    assert redraws == []
    assert win.dataset_panel.refresh(force=True) and len(redraws) == 1  # a theme change forces it
    win.dataset_panel.invalidate()
    assert win.dataset_panel.refresh() and len(redraws) == 2
    open_graph(qtbot, win, tmp_path, seed=2, n=40)  # another dataset: redrawn, with its own name
    assert len(redraws) >= 3 and "graph2.mtx" in win.dataset_panel.source_label.text()


def test_while_a_run_is_live_a_slow_view_redraws_at_most_a_fifth_of_the_time(window, qtbot, tmp_path):
    """The window's 30 Hz tick redraws the current view; while a run is live, a redraw that took
    t waits 4 t before the next, so drawing takes at most about a fifth of the time the solver
    shares the interpreter with (on a clock the test moves; none of it is wall time)."""
    from explorer import main_window
    win = window
    now = [100.0]
    win.clock = lambda: now[0]
    view = win.current_view()
    redraws = []

    def slow_refresh(force=False):
        redraws.append(now[0])
        now[0] += 0.050  # this view takes 50 ms to draw
        return True
    view.refresh = slow_refresh

    class LiveRun:
        is_active = True

        def sync(self):
            pass
    win.solver_panel.show_live = lambda run: None
    win.timeline.update_position = lambda: None
    win.session.current_run = LiveRun()
    win._redraw_due = -float("inf")
    for _ in range(60):  # two seconds of ticks
        win.tick()
        now[0] += main_window.REFRESH_MS / 1000
    drawing = 0.050 * len(redraws)
    elapsed = now[0] - 100.0
    assert 2 <= len(redraws) and drawing <= main_window.LIVE_REDRAW_SHARE * elapsed + 0.050, (len(redraws), elapsed)
    win.session.current_run = None  # no run: every tick may redraw (nothing changed: cheap)
    count = len(redraws)
    for _ in range(3):
        win.tick()
        now[0] += main_window.REFRESH_MS / 1000
    assert len(redraws) == count + 3
