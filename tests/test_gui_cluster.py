"""Run ▸ Run on cluster… (issue 16): a batch, a point series and a folder of files solved on a real
Dask cluster of two worker processes from the explorer: the progress reaches the total, the
workers' task counts add up, the rows equal solvers.solve_batch / solvers.track / solvers.solve
run here, rows open in the other tabs, the results export as `matchscope batch --out` writes them,
Stop ends the run with no rows and a usable window, a local cluster closes with its run and with
the window, and a bad scheduler address is one line in the dialog."""
from __future__ import annotations

import csv
import threading

import numpy as np
import pytest

from test_gui_fakes import configure_qt_platform, save_shot, wait_loaded, window  # noqa: F401

distributed = pytest.importorskip("distributed", reason="dask is not installed here: pip install 'matchscope[dask]'")
configure_qt_platform()

import solvers  # noqa: E402
from explorer import cluster_dialog  # noqa: E402
from explorer.cluster_dialog import ClusterDialog  # noqa: E402

pytestmark = pytest.mark.gui

RUN_TIMEOUT = 60_000


@pytest.fixture(scope="module")
def scheduler():
    """A LocalCluster of two worker processes for the module; the tests reach it by its address."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       env={"NUMBA_NUM_THREADS": "1"})
    yield cluster.scheduler_address
    cluster.close()


def batch_file(tmp_path, count=200, n=20, seed=3):
    costs = np.random.default_rng(seed).random((count, n, n))
    path = tmp_path / "batch.npy"
    np.save(path, costs)
    return costs, path


def request_for(win, scheduler_text, algorithm=None, folder=None, workers=None):
    dialog = ClusterDialog(win.session.problem, win.session.dataset_name, win)
    if folder is not None:
        dialog.set_folder(str(folder))
    if algorithm is not None:
        dialog.set_algorithm(algorithm)
    dialog.set_backend("cpu")
    dialog.set_scheduler(scheduler_text, workers)
    request, reason = dialog.build()
    dialog.deleteLater()
    assert reason is None, reason
    return request


def through_the_menu(win, configure) -> list[str]:
    """Run ▸ Run on cluster…: ``configure(dialog)`` fills the dialog, then Start; the lines it said
    (the dialog is cancelled if Start refused, so nothing waits for a person)."""
    from PySide6 import QtCore, QtWidgets
    said = []

    def fill():
        dialog = QtWidgets.QApplication.activeModalWidget()
        assert isinstance(dialog, ClusterDialog)
        configure(dialog)
        dialog.start_button.click()
        if dialog.isVisible():
            said.append(dialog.error_text)
            dialog.reject()

    QtCore.QTimer.singleShot(0, fill)
    win.act_cluster.trigger()
    return said


def wait_ended(qtbot, view, timeout=RUN_TIMEOUT):
    qtbot.waitUntil(lambda: view.ended is not None and not view.running, timeout=timeout)
    return view.state


def check_progress(state):
    print(f"cluster run: {state.elapsed:.2f} s")
    assert state.phase == "finished", state.message
    assert state.total > 0 and state.done == state.total
    assert state.items_done == state.items
    assert sum(w.tasks for w in state.workers.values()) == state.done
    assert len(state.workers) == 2 and not any(w.busy for w in state.workers.values())


def test_a_batch_on_the_cluster_equals_solve_batch_and_opens_in_the_batch_tab(window, qtbot, tmp_path, scheduler):
    win = window
    costs, path = batch_file(tmp_path)
    win.open_path(path)
    wait_loaded(qtbot, win)
    assert win.session.problem.kind == "batch" and win.act_cluster.isEnabled()

    dialog = ClusterDialog(win.session.problem, win.session.dataset_name, win)
    qtbot.addWidget(dialog)
    assert dialog.use_dataset.isChecked() and [dialog.algorithm.itemData(i) for i in range(dialog.algorithm.count())] \
        == ["hungarian"]
    save_shot(dialog, "cluster-dialog-batch.png")
    request = request_for(win, scheduler)
    assert request.algorithm == "hungarian" and request.source == "dataset"
    view = win.cluster_view
    cluster_dialog.start(win, request)
    assert win.current_view() is view
    state = wait_ended(qtbot, view)
    check_progress(state)
    assert state.total > 1  # cut into chunks, spread over both workers' queue
    assert state.cluster_closed

    want = solvers.solve_batch(costs, backend="cpu")
    (row,) = state.results
    assert row.error is None and row.certified and row.kind == "batch"
    assert np.array_equal(row.result.values, want.values)
    assert all(np.array_equal(a, b) for a, b in zip(row.result.assignments, want.assignments))
    assert row.value == pytest.approx(float(want.values.sum()), rel=1e-12)
    model = view.model
    assert model.rowCount() == 1
    assert model.data(model.index(0, 1)) == "batch" and model.data(model.index(0, 5)) == "yes"
    assert "Dashboard" in view.dashboard.text()

    win.resize(1600, 1000)
    qtbot.wait(50)
    save_shot(win, "cluster-batch-1600.png")
    win.resize(1024, 700)
    qtbot.wait(50)
    save_shot(win, "cluster-batch-1024.png")

    # the row opens in the Batch tab: every problem, as solve_batch gives it
    view.open_row(0)
    assert win.current_view() is win.batch_view
    run = win.session.current_run
    assert run.status == "finished" and run.batch is not None and len(run.batch) == 200
    win.batch_view.refresh(force=True)
    assert win.batch_view.model.rowCount() == 200

    # exported as matchscope batch --out writes it: the rows, and the batch's answers beside them
    out = tmp_path / "results.csv"
    files = win.cluster_view.export_csv(out)
    with open(out, newline="") as f:
        (record,) = list(csv.DictReader(f))
    assert record["item"] == "batch.npy" and record["kind"] == "batch" and record["certified"] == "true"
    assert record["error"] == "" and record["output"].endswith(".csv")
    assert files[1].is_dir() and any(files[1].iterdir())


def test_a_point_series_on_the_cluster_equals_track(window, qtbot, scheduler):
    win = window
    win.generate("particles", {"n": 300, "frames": 6, "seed": 2})
    wait_loaded(qtbot, win)
    series = win.session.problem
    assert series.kind == "points"
    request = request_for(win, scheduler)
    assert request.algorithm == win.solver_panel.current_algorithm().name == solvers.default_algorithm(series).algorithm
    cluster_dialog.start(win, request)
    state = wait_ended(qtbot, win.cluster_view)
    check_progress(state)
    (row,) = state.results
    want = solvers.track(series, algorithm=request.algorithm, backend="cpu")
    got = row.result
    assert row.certified and got.tracks == want.tracks
    assert all(np.array_equal(a, b) for a, b in zip(got.links, want.links))
    assert row.value == pytest.approx(want.summary["cost"], rel=1e-9)

    win.cluster_view.open_row(0)
    assert win.current_view() is win.tracks_view
    assert win.session.current_run.track is not None
    save_shot(win, "cluster-series-3d.png")


def test_a_folder_of_files_one_row_each_and_a_row_opens_its_file(window, qtbot, tmp_path, scheduler):
    win = window
    folder = tmp_path / "problems"
    folder.mkdir()
    graphs = []
    for k in range(3):
        g = solvers.generate("random-bipartite", rows=40 + k, cols=40, degree=3, seed=k)
        solvers.save(g, folder / f"g{k}.mtx")
        graphs.append(g)
    (folder / "notes.md").write_text("not a problem\n")
    (folder / "sub").mkdir()
    solvers.save(graphs[0], folder / "sub" / "inner.mtx")  # subfolders are not searched

    def configure(dialog):
        dialog.set_folder(str(folder))
        dialog.set_backend("cpu")
        dialog.set_scheduler(scheduler)

    assert through_the_menu(win, configure) == []
    request = win.cluster_view.runner.request
    assert request.labels == ["g0.mtx", "g1.mtx", "g2.mtx"] and request.algorithm is None
    assert win.settings.value("cluster/scheduler") == scheduler  # offered again next time
    state = wait_ended(qtbot, win.cluster_view)
    check_progress(state)
    assert state.done == 3  # one task per file
    for row, graph in zip(state.results, graphs):
        assert row.error is None and row.certified
        assert row.value == solvers.solve(graph, row.algorithm, backend="cpu").value

    # exported: one row per file, each file's matching beside them (rendered on its worker)
    view = win.cluster_view
    out = tmp_path / "out" / "folder.csv"
    out.parent.mkdir()
    view.export_csv(out)
    with open(out, newline="") as f:
        records = list(csv.DictReader(f))
    assert [r["item"] for r in records] == [str(folder / f"g{k}.mtx") for k in range(3)]
    assert sorted(p.name for p in (tmp_path / "out" / "folder-items").iterdir()) == \
        ["0000-g0.mtx.csv", "0001-g1.mtx.csv", "0002-g2.mtx.csv"]

    # sorted by value (descending), the last row is the smallest
    from PySide6 import QtCore
    view.table.sortByColumn(4, QtCore.Qt.SortOrder.DescendingOrder)
    values = [view.proxy.data(view.proxy.index(r, 4), QtCore.Qt.ItemDataRole.UserRole) for r in range(3)]
    assert values == sorted(values, reverse=True)

    view.open_row(0)  # loads that file, and its result becomes its run
    first = view.model.rows[view.proxy.mapToSource(view.proxy.index(0, 0)).row()]
    qtbot.waitUntil(lambda: win.session.path == first.item and win.session.current_run is not None
                    and win.session.current_run.result is not None, timeout=30_000)
    assert win.session.current_run.result.value == first.value
    save_shot(win, "cluster-file-opened.png")
    win.show_view(win.labels_view)
    save_shot(win, "cluster-file-labels.png")

    # another row: its file, its result (the first row's wait for its file is over)
    runs = len(win.session.runs)
    view.open_row(2)
    last = view.model.rows[view.proxy.mapToSource(view.proxy.index(2, 0)).row()]
    qtbot.waitUntil(lambda: win.session.path == last.item and len(win.session.runs) == runs + 1, timeout=30_000)
    assert win.session.current_run.result.value == last.value


def _pause_after_first_task(monkeypatch):
    """The run pauses after its first finished task until it is cancelled (at most 30 s), so a
    Stop lands mid-run whatever the machine's speed; returns the event set when it pauses."""
    from solvers.scale_out.run import ManyRun
    paused = threading.Event()
    original = ManyRun.__iter__

    def iterate(self):
        for event in original(self):
            yield event
            if event.event == "task" and not paused.is_set():
                paused.set()
                self._cancel.wait(30)

    monkeypatch.setattr(ManyRun, "__iter__", iterate)
    return paused


def test_stop_mid_run_keeps_no_rows_and_the_window_goes_on(window, qtbot, tmp_path, scheduler, monkeypatch):
    win = window
    paused = _pause_after_first_task(monkeypatch)
    costs, path = batch_file(tmp_path, count=300)
    win.open_path(path)
    wait_loaded(qtbot, win)
    view = win.cluster_view
    cluster_dialog.start(win, request_for(win, scheduler))
    qtbot.waitUntil(lambda: paused.is_set() and view.state.done >= 1, timeout=RUN_TIMEOUT)
    assert view.stop_button.isEnabled() and not view.export_button.isEnabled()
    view.refresh(force=True)
    save_shot(win, "cluster-running.png")
    win.resize(1024, 700)
    qtbot.wait(50)
    save_shot(win, "cluster-running-1024.png")
    view.stop_button.click()
    state = wait_ended(qtbot, view)
    assert state.phase == "cancelled" and state.done < state.total
    assert state.results is None and not state.rows and view.model.rowCount() == 0
    assert not view.export_button.isEnabled() and view.tables() == {}
    assert "No results were kept" in view.hint.text()
    save_shot(win, "cluster-stopped-1024.png")

    # the window goes on: the same batch again, to the end
    monkeypatch.undo()
    cluster_dialog.start(win, request_for(win, scheduler))
    check_progress(wait_ended(qtbot, view))


def test_a_local_cluster_closes_with_its_run_and_with_the_window(window, qtbot, tmp_path, monkeypatch):
    win = window
    costs, path = batch_file(tmp_path, count=100, n=10)
    win.open_path(path)
    wait_loaded(qtbot, win)
    view = win.cluster_view
    paused = _pause_after_first_task(monkeypatch)
    runner = cluster_dialog.start(win, request_for(win, "local", workers=2))
    qtbot.waitUntil(lambda: paused.is_set(), timeout=RUN_TIMEOUT)
    qtbot.waitUntil(lambda: view.state.done >= 1, timeout=5_000)
    assert len(view.state.workers) == 2 and view.state.dashboard
    assert "href" in view.dashboard.text()
    win.close()  # mid-run: the run stops and its cluster closes before the window is gone
    assert not runner.alive and runner.state.cluster_closed and runner.state.phase == "cancelled"


def test_a_bad_scheduler_address_is_one_line(window, qtbot, tmp_path):
    win = window
    folder = tmp_path / "one"
    folder.mkdir()
    solvers.save(solvers.generate("random-bipartite", rows=20, cols=20, degree=3, seed=1), folder / "g.mtx")
    dialog = ClusterDialog(None, "", win, folder=str(folder))
    qtbot.addWidget(dialog)
    assert not dialog.use_dataset.isEnabled() and dialog.use_folder.isChecked()
    assert "1 problem file" in dialog.folder_note.text()
    for address, words in (("head:port", "not a scheduler address"), ("http://head:8786", "not a scheduler address"),
                           ("tcp://127.0.0.1:1", "cannot reach a scheduler at tcp://127.0.0.1:1"),
                           ("tcp://no-such-host.invalid:8786", "cannot reach a scheduler")):
        dialog.set_scheduler(address)
        dialog.accept()
        assert dialog.result() != dialog.DialogCode.Accepted and dialog.request() is None
        text = dialog.error_text
        assert words in text and "\n" not in text and "Traceback" not in text and "Error" not in text, text
    save_shot(dialog, "cluster-dialog-bad-address.png")
    dialog.set_scheduler("local", 2)
    assert dialog.error_text == ""  # a change clears the line
    dialog.folder_edit.setText(str(tmp_path / "missing"))
    dialog.accept()
    assert "there is no folder" in dialog.error_text


def test_a_cluster_that_cannot_be_reached_is_one_line_in_the_error_dialog(window, qtbot, monkeypatch):
    import solvers.scale_out
    from solvers.errors import InputError

    def unreachable(scheduler, workers=None, backend="auto"):
        raise InputError(f"cannot reach the Dask scheduler at {scheduler}: Timed out trying to connect")

    monkeypatch.setattr(solvers.scale_out, "connect", unreachable)
    win = window
    win.generate("particles", {"n": 50, "frames": 3, "seed": 1})
    wait_loaded(qtbot, win)
    request = request_for(win, "local", workers=1)
    cluster_dialog.start(win, request)
    state = wait_ended(qtbot, win.cluster_view)
    assert state.phase == "failed" and state.cluster_closed
    assert win.errors and win.errors[-1].startswith("cannot reach the Dask scheduler at local")
    assert "\n" not in win.errors[-1] and win.error_box is not None and win.error_box.isVisible()
    assert win.cluster_view.model.rowCount() == 0 and not win.cluster_view.export_button.isEnabled()


def test_a_flood_of_events_pokes_the_window_a_few_times(qtbot, qapp):
    from explorer.cluster_run import ClusterRequest, ClusterRun
    from solvers.scale_out.progress import Progress

    run = ClusterRun(ClusterRequest([], [], "folder", "nothing"))
    pokes = []
    run.changed.connect(lambda: pokes.append(1))  # same thread: a direct call, counted at once
    events = 20_000
    run._take(Progress("started", 0, events, 0, 1))
    for k in range(events):
        run._take(Progress("task", k + 1, events, 0, 1, 0, "x", "", "tcp://w:1" if k % 2 else "tcp://w:2", 0.001))
    run._take(Progress("finished", events, events, 1, 1))
    state = run.snapshot()
    assert state.done == events and sum(w.tasks for w in state.workers.values()) == events
    # forced on "started" and "finished"; between them at most one per POKE_INTERVAL of this loop's time
    assert len(pokes) <= 2 + state.elapsed / 0.1 + 1 and len(pokes) < events / 100


def test_a_poll_answered_after_the_run_ended_leaves_no_worker_busy(qtbot, qapp):
    """The poller asks the scheduler which workers are busy; on a loaded machine the answer came back
    after the run had ended (the poller's join gave up after 5 s) and marked a worker busy for good."""
    from explorer.cluster_run import ClusterRequest, ClusterRun

    asked, answer = threading.Event(), threading.Event()

    class SlowScheduler:
        def processing(self):
            asked.set()
            answer.wait(10)
            return {"tcp://w:1": ["task-7"], "tcp://w:2": []}

    run = ClusterRun(ClusterRequest([], [], "folder", "nothing"))
    run.state.worker("tcp://w:1")
    run.state.worker("tcp://w:2")
    stop = threading.Event()
    poller = threading.Thread(target=run._poll, args=(SlowScheduler(), stop), daemon=True)
    poller.start()
    assert asked.wait(10)
    stop.set()  # the run ends as the cluster run's own ending does: stop, then every worker idle
    with run._lock:
        for worker in run.state.workers.values():
            worker.busy = False
    answer.set()
    poller.join(10)
    assert not poller.is_alive()
    assert sorted(run.state.workers) == ["tcp://w:1", "tcp://w:2"]
    assert not any(worker.busy for worker in run.state.workers.values())


def test_rows_arriving_during_a_run_are_inserted_in_input_order(qtbot, qapp):
    from explorer.views.cluster import ResultsTable
    from solvers.scale_out import ItemResult

    rows = [ItemResult(k, f"f{k}.mtx", "problem", "gpr", "cpu", float(k), True, 0.001) for k in range(5)]
    labels = [r.item for r in rows]
    model = ResultsTable()
    resets, inserted = [], []
    model.modelReset.connect(lambda: resets.append(1))
    model.rowsInserted.connect(lambda parent, first, last: inserted.append(first))
    model.set_rows([rows[3]], labels)
    model.set_rows([rows[1], rows[3]], labels)
    model.set_rows([rows[0], rows[1], rows[3], rows[4]], labels)
    model.set_rows(rows, labels)  # the whole run, in input order: nothing to reset
    assert [model.data(model.index(r, 0)) for r in range(5)] == labels
    assert inserted == [0, 0, 0, 3, 2] and resets == []
    model.set_rows(rows[:2], labels)  # another run: a reset
    assert resets == [1] and model.rowCount() == 2


def test_the_cluster_view_redraws_for_a_new_state_a_stop_or_a_theme_change_only(qtbot, qapp):
    from explorer.cluster_run import ClusterRequest, ClusterRun
    from explorer.session import Session
    from explorer.views.cluster import ClusterView
    from solvers.scale_out.progress import Progress

    view = ClusterView(Session())
    qtbot.addWidget(view)
    drawn = []
    original = view.redraw
    view.redraw = lambda: (drawn.append(view.state), original())
    run = ClusterRun(ClusterRequest([], [], "folder", "nothing"))
    view.runner = run
    run._take(Progress("started", 0, 4, 0, 1))
    view.state = run.snapshot()
    assert view.refresh() and not view.refresh()  # the same state: nothing to draw again
    run._take(Progress("task", 1, 4, 0, 1, 0, "x", "", "tcp://w:1", 0.001))
    view.state = run.snapshot()
    assert view.refresh() and drawn[-1] is view.state
    run.stop()  # asked to stop: the view says "stopping" before the run's next word
    assert view.refresh() and len(drawn) == 3 and "stopping" in view.header.text()
    view.invalidate()  # a theme change
    assert view.refresh() and len(drawn) == 4
    assert not view.refresh()
