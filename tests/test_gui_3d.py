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
    assert_axes_and_legend(view, series)
    assert_whole_box_in_view(view)

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
    # the solution export is Track CSV: every point once, consecutive points of a track are a link
    win.export_solution(tmp_path / "tracks.csv")
    import csv
    with open(tmp_path / "tracks.csv") as f:
        rows = [(int(r["track"]), int(r["frame"]), int(r["index"])) for r in csv.DictReader(f)]
    assert sorted((t, i) for _, t, i in rows) == [(t, i) for t, f in enumerate(series.frames) for i in range(len(f))]
    exported = {(a[1], a[2], b[2]) for a, b in zip(rows, rows[1:]) if a[0] == b[0]}
    made = {(t, int(i), int(j)) for t, l in enumerate(track.links) for i, j in np.asarray(l).reshape(-1, 2)}
    assert exported == made


def assert_axes_and_legend(view, series) -> None:
    """Ticked x / y / z axes with round values inside the data's range, and a legend naming the
    colours of the frames, the links (correct / wrong) and the time scale."""
    points = np.concatenate(series.frames)
    labels = list(view.tick_labels.text)
    values = np.array([float(t) for t in labels])
    assert len(labels) >= 6 and np.all(values >= points.min() - 1e-9) and np.all(values <= points.max() + 1e-9)
    assert list(view.axis_names.text) == ["x", "y", "z"]
    legend = list(view.legend_text.text)
    pair = view.session.frame_pair
    assert legend[:2] == [f"frame {pair}", f"frame {pair + 1}"]
    assert "correct link (same id)" in legend and "wrong link (other id)" in legend
    assert f"points: frames 0 to {series.n_frames - 1}" in legend and view.legend_bar.visible
    view.color_mode.setCurrentIndex(view.color_mode.findData("time"))
    legend = list(view.legend_text.text)
    assert "correct link (same id)" not in legend and f"points, links: frames 0 to {series.n_frames - 1}" in legend
    # by track: every link drawn in its track's colour, the links of one track alike, of others apart
    view.color_mode.setCurrentIndex(view.color_mode.findData("track"))
    assert "… each track its own colour" in list(view.legend_text.text)
    run = view.session.current_run
    links = run.track.links[pair]
    colours = view._segment_colors(series, run.track.links, pair, series.n_frames, 1.0, run.track)[0::2]
    owner = run.track.point_tracks()[pair][links[:, 0]]
    assert len({tuple(c) for c in np.round(colours, 4)}) >= min(20, len(set(owner.tolist()))) // 2
    for k in sorted(set(owner.tolist()))[:5]:
        assert len({tuple(c) for c in np.round(colours[owner == k], 4)}) == 1
    view.color_mode.setCurrentIndex(view.color_mode.findData("correct"))


def assert_whole_box_in_view(view) -> None:
    """The fitted camera shows every corner of the data's box (and the axis labels) from any side."""
    lo, hi = view._bounds
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    camera = view.view3d.camera
    start = (camera.azimuth, camera.elevation)
    width, height = view.view3d.size
    try:
        for elevation in (-60, -20, 22, 60, 89):
            for azimuth in range(0, 360, 30):
                camera.azimuth, camera.elevation = azimuth, elevation
                for pts, what in ((corners, "box corner"), (np.asarray(view.tick_labels.pos), "tick label")):
                    mapped = view.view3d.scene.node_transform(view.view3d).map(pts)
                    xy = mapped[:, :2] / mapped[:, 3:4]
                    inside = (xy[:, 0] >= 0) & (xy[:, 0] <= width) & (xy[:, 1] >= 0) & (xy[:, 1] <= height)
                    assert inside.all(), f"a {what} is out of the view at azimuth {azimuth}, elevation {elevation}"
    finally:
        camera.azimuth, camera.elevation = start


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
    assert "this problem is a bipartite matching" in win.tracks_view.placeholder.text()
    assert not win.tracks_view.has_content()  # the window disables the 3D export then
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
    assert view.check_gl() == "OpenGL rendering failed: no GL context"
    assert view.showing_message and "OpenGL could not be used" in view.placeholder.text()
    view.refresh(force=True)  # drawing with GL unavailable keeps the message and does not raise
    assert view.showing_message
    with pytest.raises(RuntimeError, match="3D view unavailable"):
        view.render_image()


class FailingContext:
    """Stands for QOpenGLContext on a display without a usable GL visual."""

    tries = 0

    def create(self):
        FailingContext.tries += 1
        return False

    def isValid(self):  # noqa: N802 - Qt's name
        return False


def test_no_gl_context_gives_the_plain_reason_and_no_canvas(qtbot, monkeypatch):
    """On an 8-bit X screen Qt cannot make a GL context: the view says so in words (it used to fail
    later, inside vispy, with 'IndexError: list index out of range') and makes no canvas."""
    from explorer.session import Session
    from explorer.views import Tracks3DView, tracks3d
    from PySide6 import QtWidgets

    class EightBitScreen:
        def depth(self):
            return 8

    app = QtWidgets.QApplication.instance()
    monkeypatch.setattr(tracks3d.QtGui, "QOpenGLContext", FailingContext)
    monkeypatch.setattr(type(app), "primaryScreen", lambda self: EightBitScreen())
    monkeypatch.setattr(type(app), "platformName", lambda self: "xcb")
    FailingContext.tries = 0
    view = Tracks3DView(Session())
    qtbot.addWidget(view)
    assert FailingContext.tries == tracks3d.GL_ATTEMPTS  # tried again before giving up
    assert view.canvas is None
    assert view.gl_error.startswith("no OpenGL context: the display has no GLX visual with 24-bit colour")
    assert "Error" not in view.gl_error and "[" not in view.gl_error
    assert view.check_gl() == view.gl_error
    assert view.showing_message and view.gl_error in view.placeholder.text() and not view.has_content()
    with pytest.raises(RuntimeError, match="3D view unavailable: no OpenGL context"):
        view.render_image()
    monkeypatch.setattr(type(app), "platformName", lambda self: "offscreen")
    assert "offscreen platform" in tracks3d.opengl_unavailable_reason()


def test_a_canvas_that_fails_to_come_up_is_made_again(qtbot, monkeypatch):
    from explorer.session import Session
    from explorer.views import Tracks3DView
    original = Tracks3DView._make_canvas
    calls = []

    def flaky(self):
        calls.append(1)
        if len(calls) == 1:
            original(self)  # half made, then broken: it must be dropped, not kept
            raise RuntimeError("context lost")
        original(self)

    monkeypatch.setattr(Tracks3DView, "_make_canvas", flaky)
    view = Tracks3DView(Session())
    qtbot.addWidget(view)
    assert len(calls) == 2 and view.gl_error is None and view.canvas is not None
    assert view.canvas_layout.count() == 1  # the broken canvas' widget is gone


def test_nice_ticks_and_camera_fit_formula():
    from explorer.views.tracks3d import fit_scale_factor, nice_ticks
    np.testing.assert_allclose(nice_ticks(0.00094, 0.9998), [0.2, 0.4, 0.6, 0.8])
    np.testing.assert_allclose(nice_ticks(-3.0, 7.0), [-2, 0, 2, 4, 6])
    np.testing.assert_allclose(nice_ticks(1e-20, 5e-20), [1e-20, 2e-20, 3e-20, 4e-20, 5e-20])
    np.testing.assert_allclose(nice_ticks(2e300, 9e300), [2e300, 4e300, 6e300, 8e300])
    assert nice_ticks(5.0, 5.0).tolist() == [5.0]
    # a unit sphere seen through a 90° field of view: its silhouette is √2 across at the centre's depth
    assert fit_scale_factor(1.0, 90.0, margin=1.0) == pytest.approx(2 * np.sqrt(2))


def tracked_with_knn(qtbot, win, tmp_path):
    """(series, the 3D view shown, the finished knn run) for the generated particles."""
    series = open_particles(qtbot, win, tmp_path)
    view = win.tracks_view
    win.tabs.setCurrentWidget(view)
    require_gl(view)
    win.solver_panel.select_algorithm("knn")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "finished", run.error
    return series, view, run


def test_play_steps_through_the_pairs_and_subsampling_is_said(window, qtbot, tmp_path, monkeypatch):
    """Play advances one frame pair per timer tick (driven here by calling the step, not by waiting),
    wrapping after the last; a series larger than the drawing limits is drawn subsampled, and the
    info line says how."""
    from explorer.views import tracks3d
    win = window
    series, view, run = tracked_with_knn(qtbot, win, tmp_path)
    pairs = series.n_frames - 1
    seen = []
    for _ in range(pairs + 1):
        view.advance()
        seen.append(win.session.frame_pair)
    assert seen == [1, 2, 3, 4, 0, 1][:pairs + 1] and view.frame_label.text() == "frames 1 → 2"
    view.play.setChecked(True)
    assert view.play_timer.isActive() and view.play.text() == "Pause"
    assert view.play_timer.interval() == round(1000 / tracks3d.PLAY_FPS)
    view.fps.setValue(10)
    assert view.play_timer.interval() == 100
    view.play.setChecked(False)
    assert not view.play_timer.isActive() and view.play.text() == "Play"
    assert "subsampled" not in view.info.text()

    total = sum(series.sizes)
    monkeypatch.setattr(tracks3d, "MAX_POINTS", total // 3)
    monkeypatch.setattr(tracks3d, "MAX_FRAME_POINTS", 20)
    monkeypatch.setattr(tracks3d, "MAX_TRAIL_SEGMENTS", 50)
    view._cloud = None  # the cloud is made once per series: made again under the new limit
    view.refresh(force=True)
    text = view.info.text()
    assert "drawn subsampled" in text and f"of {total:,}" in text
    assert "selected frames: 1 point in" in text and "trails: 1 link in" in text
    drawn = view.tables()["links"]  # the table keeps every link, whatever is drawn
    assert drawn["frame"].size == sum(np.asarray(l).reshape(-1, 2).shape[0] for l in run.track.links)
    assert_real_content(view.render_image()[..., :3], "subsampled 3D render")


def test_picking_a_point_shows_its_track_and_link_costs(window, qtbot, tmp_path):
    """A click on a point of the selected pair (here: at the canvas pixel the point is drawn at)
    highlights its whole track and says the costs of its links, checked against the links."""
    series, view, run = tracked_with_knn(qtbot, window, tmp_path)
    view.frame_slider.setValue(2)
    view.refresh(force=True)
    links = [np.asarray(l).reshape(-1, 2) for l in run.track.links]
    t, i = 2, int(links[2][0, 0])  # a point of frame 2 linked on to frame 3
    transform = view.view3d.scene.node_transform(view.canvas.scene)
    mapped = transform.map(series.frames[t][i][None, :])
    pos = mapped[0, :2] / mapped[0, 3]
    assert view.pick_at(pos) == (t, i)
    chain = run.track.track_through(t, i)
    assert (t, i) in chain and [f for f, _ in chain] == list(range(chain[0][0], chain[-1][0] + 1))
    j = int(links[2][0, 1])
    cost = float(np.linalg.norm(series.frames[3][j] - series.frames[2][i]))
    assert f"picked point {i} of frame 2" in view.info.text() and f"link to frame 3: cost {cost:.6g}" in view.info.text()
    assert view.picked_point.visible and view.picked_track.visible
    assert_real_content(view.render_image()[..., :3], "3D render with a picked track")
    assert view.pick_at((-500, -500)) is None and not view.picked_point.visible  # far from every point
    view.frame_slider.setValue(3)  # another pair: the pick is cleared
    assert view.picked is None and "picked" not in view.info.text()


def test_a_picked_points_track_follows_links_both_ways():
    from solvers.result import TrackResult
    from solvers.tracking import chain_tracks
    links = [np.array([[0, 1], [1, 0]]), np.array([[0, 2]]), np.zeros((0, 2), dtype=int)]
    track = TrackResult(chain_tracks([2, 2, 3, 1], links), links, [])
    assert track.track_through(1, 0) == [(0, 1), (1, 0), (2, 2)]
    assert track.track_through(2, 2) == [(0, 1), (1, 0), (2, 2)]
    assert track.track_through(1, 1) == [(0, 0), (1, 1)]
    assert track.track_through(3, 0) == [(3, 0)]


def test_a_series_opens_with_the_algorithm_track_would_run(window, qtbot, tmp_path):
    """The Solver panel selects what `matchscope solve` and solvers.track run on the series when no
    algorithm is named: lsa on small frames, knn once frame pairs hold many point pairs."""
    win = window
    for n, want in ((60, "lsa"), (900, "knn")):
        series = solvers.generate("particles", n=n, frames=3, seed=1, speed=0.01)
        path = tmp_path / f"particles-{n}.npz"
        solvers.save(series, str(path))
        win.open_path(path)
        wait_loaded(qtbot, win)
        assert solvers.default_algorithm(win.session.problem).algorithm == want
        assert win.solver_panel.current_algorithm().name == want
        assert win.solver_panel.available_names()[0] == "knn"  # the point-set solver stays listed first
    win.solver_panel.select_algorithm("hungarian")  # a choice is kept for the next series
    win.open_path(tmp_path / "particles-60.npz")
    wait_loaded(qtbot, win)
    assert win.solver_panel.current_algorithm().name == "hungarian"


def test_the_3d_view_redraws_when_what_it_shows_changes_not_at_every_report(window, qtbot, tmp_path):
    """A run under way changes the session at every report, but its tracks come with its answer:
    the scene is redrawn for a new frame pair or a finished run, not for each report."""
    win = window
    open_particles(qtbot, win, tmp_path)
    view = win.tracks_view
    win.tabs.setCurrentWidget(view)
    redraws = []
    real = view.redraw
    view.redraw = lambda: (redraws.append(win.session.frame_pair), real())[1]
    view.refresh()
    for _ in range(5):
        win.session.touch()  # what each report of a run does
        assert not view.refresh()
    assert redraws == []
    win.session.set_frame_pair(1)  # the view follows at once (its slider), or at the next refresh
    view.refresh()
    assert redraws == [1]
    win.solver_panel.select_algorithm("lsa")
    run = win.start_run()
    wait_run(qtbot, run)
    assert run.status == "finished" and run.track is not None
    view.refresh()
    assert len(redraws) >= 2  # the answer's tracks are drawn
    count = len(redraws)
    view.invalidate()  # a theme change
    assert view.refresh() and len(redraws) == count + 1
