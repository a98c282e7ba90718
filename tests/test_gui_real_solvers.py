"""The explorer driving the real telemetry solvers (cpu backend) on the bundled samples, through the
real worker: what a user sees after a short run must be populated (several label snapshots up to
the last iteration, workload boxes for the push-relabel solvers, activity curves), the first run of
an algorithm is warmed up out of its time, and Stop reaches a real solver quickly."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_gui_fakes import (assert_real_content, configure_qt_platform, fake_algorithms,  # noqa: F401
                            flush_deleted_widgets, image_array, save_shot, wait_loaded, wait_run, window)

configure_qt_platform()

import solvers  # noqa: E402

from explorer.views.workload import workload_series  # noqa: E402

pytestmark = pytest.mark.gui
SAMPLES = Path(__file__).resolve().parent.parent / "sample_graphs"


def run_sample(qtbot, win, sample: str, algorithm: str, backend="cpu", timeout=240_000):
    win.open_path(SAMPLES / sample)
    wait_loaded(qtbot, win)
    win.solver_panel.select_algorithm(algorithm)
    win.solver_panel.set_backend(backend)
    run = win.start_run()
    wait_run(qtbot, run, timeout=timeout)  # the first run also compiles (or loads) the kernels
    assert run.status == "finished", run.error
    win.refresh_all()
    return run


def shown(win, view, name: str) -> np.ndarray:
    win.tabs.setCurrentWidget(view)
    view.refresh(force=True)
    return save_shot(win, name)


@pytest.mark.parametrize("sample, algorithm, workload", [
    ("random-bipartite_200x200_d3.mtx", "gpr", True),
    ("random-bipartite_200x200_d3.mtx", "wbpr", True),  # a matching as a flow: a dozen launches
    ("dense-lap_50.npy", "hungarian", False),
    ("dense-lap_50.npy", "auction", False),
])
def test_a_real_run_populates_every_view(window, qtbot, step_clock, sample, algorithm, workload):
    win = window
    run = run_sample(qtbot, win, sample, algorithm)
    last = run.recorder.iterations[-1].iteration

    # labels: several snapshots, the last of the end state; the heatmap spans the run's iterations
    labels = run.snapshots("labels")
    assert len(labels) >= 3, [s.iteration for _, s in labels]
    assert labels[-1][1].iteration == last
    view = win.labels_view
    shown(win, view, f"real-{algorithm}-labels.png")
    qtbot.wait(50)
    assert view.has_content()
    # the x axis counts reports (1..n_reports), as the timeline does; the solver's iteration count is
    # the panel's (Result.iterations), a different number
    heat_x = np.unique(view.tables()["heatmap"]["report"])
    assert heat_x[0] == labels[0][0] and heat_x[-1] == labels[-1][0] == run.n_reports
    span = view.image.mapRectToParent(view.image.boundingRect())
    assert span.left() <= labels[0][0] and span.right() >= run.n_reports + 0.9
    x_range = view.heat_plot.viewRange()[0]
    assert x_range[0] <= span.left() + 0.5 and x_range[1] >= span.right() - 0.5
    assert f"at report {run.n_reports}" in view.hist_plot.titleLabel.text
    traces_x, traces_y = view.trace_curve.getData()
    assert np.isfinite(traces_y).sum() >= 2 * len(labels), "the sampled traces must show their values"
    assert_real_content(image_array(view.charts.grab()), f"{algorithm} labels")

    # activity: active and objective curves
    shown(win, win.activity_view, f"real-{algorithm}-activity.png")
    assert win.activity_view.has_content()
    for curve in (win.activity_view.active_curve, win.activity_view.value_curve):
        x, y = curve.getData()
        assert x is not None and np.isfinite(y).sum() >= 3, algorithm
    assert_real_content(image_array(win.activity_view.charts.grab()), f"{algorithm} activity")

    # workload: boxes per snapshotted launch for the GPU push-relabel solvers, an explanation otherwise
    shown(win, win.workload_view, f"real-{algorithm}-workload.png")
    if workload:
        boxes = workload_series(run)
        assert boxes["median"].size >= 2 and np.isfinite(boxes["median"].astype(float)).all()
        assert win.workload_view.has_content()
        ticks = win.workload_view.box_plot.getAxis("bottom")._tickLevels[0]  # box ordinals named by launch
        assert ticks and all(float(v).is_integer() and label.isdigit() for v, label in ticks)
        assert "1 launches" not in win.workload_view.info.text()
        assert_real_content(image_array(win.workload_view.charts.grab()), f"{algorithm} workload")
    else:
        assert not win.workload_view.has_content()


def test_gpr_on_a_perfect_matching_shows_its_final_labels_snapshot(window, qtbot):
    """delaunay_500 has a perfect matching: gpr's final check reaches no vertex, so its end-state
    labels are all at the cap. The snapshot arrives (the last, at the last iteration) and the
    Labels view shows it as the last of its snapshots rather than one from the middle of the run."""
    win = window
    run = run_sample(qtbot, win, "delaunay_500.mtx", "gpr")
    last = run.recorder.iterations[-1].iteration
    labels = run.snapshots("labels")
    assert labels[-1][1].iteration == last and labels[-1][0] == run.n_reports
    assert labels[-1][1].meta["rows.unreachable"] == 500
    view = win.labels_view
    shown(win, view, "real-gpr-delaunay-labels.png")
    assert view.info.text() == f"{len(labels)} of {len(labels)} snapshots · label: psi (distance to a free column)"
    assert view.hist_plot.titleLabel.text == f"psi histogram at report {run.n_reports}"
    assert view.hist_note.text.startswith("all 500 rows at the cap (unreachable):\nnone can reach a free vertex")


def test_the_first_run_is_warmed_up_and_its_time_is_the_algorithms(window, qtbot):
    win = window
    first = run_sample(qtbot, win, "random-bipartite_200x200_d3.mtx", "gpr")
    text = win.log_panel.text.toPlainText()
    assert "preparing gpr for cpu (compiling or loading its kernels)" in text
    assert text.index("preparing gpr for cpu (compiling or loading its kernels)") < text.index(f"run #{first.id} gpr on cpu: value")
    job = win.jobs[first.id]
    assert job.timed_from is not None and first.started_at == job.timed_from
    # the timed part is the solve: far below the warm-up's compile / cache load, on any machine
    assert first.result.seconds < 2.0
    assert first.wall_seconds < job.warmup_seconds + first.result.seconds + 5.0
    second = win.start_run()
    wait_run(qtbot, second)
    assert second.status == "finished"
    assert win.log_panel.text.toPlainText().count("preparing gpr for cpu (compiling or loading its kernels)") == 1  # once per configuration
    # a larger graph takes other compiled loops (threaded ones): it is warmed up again
    win.session.set_problem(solvers.generate("random-bipartite", rows=5000, cols=5000, degree=3, seed=2))
    win.solver_panel.select_algorithm("gpr")
    win.solver_panel.set_backend("cpu")
    third = win.start_run()
    wait_run(qtbot, third, timeout=240_000)
    assert third.status == "finished", third.error
    assert win.jobs[third.id].warmup_seconds > 0 and win.jobs[second.id].warmup_seconds == 0
    assert win.log_panel.text.toPlainText().count("preparing gpr for cpu (compiling or loading its kernels)") == 1  # logged for the pair once


def test_stop_cancels_the_warm_up_and_stand_ins_are_not_warmed_up(fake_algorithms):
    """The worker's warm-up (solvers.warmup) polls the job's Stop like the run does; a test's
    stand-in solver, whose runner lies outside the package, is never warmed up."""
    from solvers.errors import Cancelled

    from explorer.session import RunState
    from explorer.worker import Job, Worker
    from solvers.warmup import wants_warmup
    graph = solvers.generate("random-bipartite", rows=50, cols=50, degree=3, seed=1)
    job = Job("solve", {"problem": graph, "algorithm": "gpr", "backend": "cpu", "options": {}},
              run=RunState("gpr", "cpu", {}, "matching", problem=graph))
    job.request_stop()
    worker = Worker()
    with pytest.raises(Cancelled):
        worker._warm_up(job)
    assert not worker.warmed  # a cancelled warm-up is done again next time
    assert wants_warmup("gpr", "cpu") and wants_warmup("lsa", "cpu") and not wants_warmup("gpr", "cudasim")
    assert not wants_warmup("fake-pr", "cpu") and not wants_warmup("no-such-algorithm", "cpu")


def test_stop_reaches_a_real_gpr_run(window, qtbot):
    """Stop on a real solver (not a stand-in): cancelled at its next check, the app usable. The
    bound is loose for a busy CI machine; tests/test_telemetry.py measures the gaps between checks."""
    win = window
    graph = solvers.generate("road-grid", width=300, height=300, seed=1)
    win.session.set_problem(graph)
    win.solver_panel.select_algorithm("gpr")
    win.solver_panel.set_backend("cpu")
    warm = win.start_run()  # compiles; then the next run is the one stopped mid-way
    wait_run(qtbot, warm, timeout=240_000)
    assert warm.status == "finished", warm.error
    run = win.start_run()
    qtbot.waitUntil(lambda: run.n_reports > 5, timeout=60_000)
    win.stop()
    qtbot.waitUntil(lambda: run.status == "cancelled", timeout=10_000)
    job = win.jobs[run.id]
    assert job.cancelled_at - job.stop_requested_at < 1.0
    assert "stopped" in win.log_panel.text.toPlainText()
    assert win.act_run.isEnabled()


def test_compare_shows_the_backend_a_tracking_run_used(window, qtbot):
    win = window
    run = run_sample(qtbot, win, "particles_100x10.npz", "auction", backend="auto")
    assert run.track is not None and run.backend == "auto"
    win.session.compare_with([run])
    win.compare_view.refresh(force=True)
    headers, rows = win.compare_view.table_rows()
    assert rows[0][headers.index("backend")] == "cpu"
    assert 0 < rows[0][headers.index("seconds")] < run.wall_seconds + 1e-9


def test_the_dataset_preview_exports_like_any_chart(window, qtbot, tmp_path):
    from test_gui_fakes import load_png
    win = window
    run_sample(qtbot, win, "dense-lap_50.npy", "hungarian")
    assert win.act_export_dataset.isEnabled()
    written = win.export_view(win.dataset_panel, tmp_path / "dataset.png")
    assert_real_content(load_png(written[0]), "dataset preview export")
    win.export_view(win.dataset_panel, tmp_path / "dataset.svg")
    assert (tmp_path / "dataset.svg").read_text().lstrip().startswith("<?xml")
    report = win.export_report(tmp_path / "report.md")
    assert (tmp_path / "report_files" / "dataset.png").exists()
    assert "### Dataset" in report.read_text()
