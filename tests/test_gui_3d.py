"""The 3D view (vispy in Qt): a tracked particle series under Xvfb + Mesa. GL must work here: if it
does not, these tests fail with the reason rather than skip."""
from __future__ import annotations

import numpy as np
import pytest

from test_gui_fakes import (assert_real_content, configure_qt_platform, flush_deleted_widgets,  # noqa: F401
                            image_array, load_png, save_shot, wait_loaded, wait_run, window)

configure_qt_platform()

import solvers  # noqa: E402

pytestmark = pytest.mark.gui


def open_particles(qtbot, win, tmp_path):
    series = solvers.generate("particles", n=60, frames=6, seed=2, speed=0.02, enter_rate=0.05, leave_rate=0.05)
    path = tmp_path / "particles.npz"
    solvers.save(series, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    return solvers.load(str(path))


def require_gl(view) -> None:
    view.check_gl()
    assert view.gl_error is None, f"OpenGL is not usable, the 3D view shows an error instead: {view.gl_error}"


def test_tracked_particles_in_3d(window, qtbot, tmp_path):
    win = window
    series = open_particles(qtbot, win, tmp_path)
    view = win.tracks_view
    win.tabs.setCurrentWidget(view)
    qtbot.wait(50)
    require_gl(view)
    names = [win.solver_panel.algo_combo.itemData(i) for i in range(win.solver_panel.algo_combo.count())]
    assert "lsa" in names and "gpr" not in names  # tracking takes assignment solvers
    before = image_array(view.canvas.native.grab())
    win.solver_panel.select_algorithm("lsa")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "finished", run.error
    track = run.track
    assert len(track.links) == series.n_frames - 1
    # the accuracy the view reports is the ground truth's: recompute it from the links and ids
    correct = sum(int(np.sum(series.ids[t][l[:, 0]] == series.ids[t + 1][l[:, 1]]))
                  for t, l in enumerate(np.asarray(x).reshape(-1, 2) for x in track.links))
    total = sum(np.asarray(l).reshape(-1, 2).shape[0] for l in track.links)
    assert track.accuracy == pytest.approx(correct / total)
    view.refresh(force=True)
    qtbot.wait(50)
    assert view.has_content()
    links = view.tables()["links"]
    assert links["frame"].size == total and int(links["correct"].sum()) == correct
    assert f"accuracy {track.accuracy:.1%}" in view.info.text()

    image = view.render_image()
    assert image.shape[2] == 4
    assert_real_content(image[..., :3], "3D render")
    shot = save_shot(win, "3d-tracks.png")
    assert_real_content(shot, "window with 3D view")
    assert not np.array_equal(before, image_array(view.canvas.native.grab())), "tracking adds links to the scene"

    # the frame-pair slider moves the highlighted pair
    view.frame_slider.setValue(3)
    assert win.session.frame_pair == 3 and view.frame_label.text() == "frames 3 → 4"
    moved = view.render_image()
    assert not np.array_equal(moved, image)

    out = tmp_path / "view3d.png"
    win.export_view(view, out)
    assert_real_content(load_png(out), "exported 3D PNG")
    win.export_solution(tmp_path / "links.csv")
    rows = np.loadtxt(tmp_path / "links.csv", delimiter=",", skiprows=1, dtype=np.int64).reshape(-1, 3)
    assert rows.shape[0] == total
    np.testing.assert_array_equal(rows[rows[:, 0] == 0][:, 1:], np.asarray(track.links[0]).reshape(-1, 2))


def test_3d_view_explains_itself_for_other_problems(window, qtbot, tmp_path):
    win = window
    graph = solvers.generate("random-bipartite", rows=30, cols=30, degree=2, seed=1)
    path = tmp_path / "g.mtx"
    solvers.save(graph, str(path))
    win.open_path(path)
    wait_loaded(qtbot, win)
    win.tabs.setCurrentWidget(win.tracks_view)
    win.tracks_view.refresh(force=True)
    assert win.tracks_view.showing_message and "point series" in win.tracks_view.placeholder.text()
    with pytest.raises(ValueError):
        win.export_view(win.tracks_view, tmp_path / "x.csv")


def test_a_gl_failure_becomes_a_message_not_a_crash(qtbot, monkeypatch):
    from explorer.session import Session
    from explorer.views import Tracks3DView
    view = Tracks3DView(Session())
    qtbot.addWidget(view)
    if view.canvas is None:
        pytest.fail(f"vispy canvas could not be created: {view.gl_error}")

    def broken(*args, **kwargs):
        raise RuntimeError("no GL context")

    monkeypatch.setattr(view.canvas, "render", broken)
    assert view.check_gl() == "RuntimeError: no GL context"
    assert view.showing_message and "OpenGL could not be used" in view.placeholder.text()
    view.refresh(force=True)  # drawing with GL unavailable keeps the message and does not raise
    assert view.showing_message
    with pytest.raises(RuntimeError, match="3D view unavailable"):
        view.render_image()
