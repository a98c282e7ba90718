"""3D: a point series in a vispy scene embedded in Qt — frames coloured by time, the selected frame
pair's correspondences, tracks as trails across frames, links coloured by correctness against the
ground-truth ids, a box with ticked x / y / z axes and a colour legend. Orbit with the left mouse
button, zoom with the wheel, pan with shift-drag.

GL can be missing or broken (remote sessions, an 8-bit X screen, old drivers): before any canvas is
made, an OpenGL context is created and checked (a few tries); when there is none the tab says why
in plain words instead of crashing, and ``gl_error`` holds that reason (tests check it is None).
"""
from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from solvers.text import plural

from ..theme import CORRECT_COLOR, WRONG_COLOR, plot_colors
from .base import View

try:
    import vispy
    vispy.use(app="pyside6")
    from vispy import scene
    from vispy.color import Color, get_colormap
    VISPY_ERROR = None
except Exception as exc:  # pragma: no cover - exercised only on machines without vispy/GL
    scene = None
    VISPY_ERROR = f"vispy could not be loaded ({exc})"

MAX_POINTS = 400_000  # beyond this the "all frames" cloud is subsampled (llvmpipe stays interactive)
MAX_FRAME_POINTS = 200_000  # a selected frame beyond this is drawn subsampled (the view says so)
MAX_TRAIL_SEGMENTS = 400_000  # trail links drawn at most; beyond, every k-th link of each frame pair
PLAY_FPS = 30         # frame pairs a second when playing (the spin box changes it)
PICK_PIXELS = 8       # a click picks the nearest point of the selected pair within this many pixels
GL_ATTEMPTS = 3       # an OpenGL context that fails to come up is tried again this many times in all
FOV = 40.0
FIT_MARGIN = 1.06     # room around the bounding sphere (tick labels included) when the camera is fitted
FRAME_A_COLOR = (0.0, 0.45, 0.70, 1.0)   # blue: frame t of the selected pair
FRAME_B_COLOR = (0.90, 0.62, 0.0, 1.0)   # orange: frame t + 1
KIND_NAMES = {"matching": "a bipartite matching", "assignment": "an assignment", "flow": "a flow network"}


def opengl_unavailable_reason() -> str | None:
    """Why no OpenGL context can be made here, in plain words (None: one can). Tries GL_ATTEMPTS times:
    a busy X server may refuse the first."""
    app = QtWidgets.QApplication.instance()
    if app is None:
        return "no OpenGL context: the explorer's window system is not running"
    for _ in range(GL_ATTEMPTS):
        context = QtGui.QOpenGLContext()
        if context.create() and context.isValid():
            return None
    platform = app.platformName()
    if platform in ("offscreen", "minimal", "vnc"):
        return (f"no OpenGL context: Qt's {platform} platform has none (run on a display, or under "
                "xvfb-run -s \"-screen 0 1600x1000x24\")")
    screen = app.primaryScreen()
    depth = screen.depth() if screen is not None else 0
    if 0 < depth < 24:
        return (f"no OpenGL context: the display has no GLX visual with 24-bit colour (its screen has "
                f"{depth}-bit colour; start Xvfb with -screen 0 1600x1000x24)")
    return "no OpenGL context: the display offers neither GLX nor EGL (is an OpenGL driver such as Mesa installed?)"


def time_colors(frame_of_point: np.ndarray, n_frames: int, alpha: float) -> np.ndarray:
    cmap = get_colormap("viridis")
    t = frame_of_point / max(n_frames - 1, 1)
    rgba = cmap.map(t.astype(np.float32)).reshape(-1, 4).copy()
    rgba[:, 3] = alpha
    return rgba


GOLDEN = 0.6180339887498949  # hue steps of the golden ratio: neighbouring ids get distant hues


def id_colors(track_ids: np.ndarray, alpha: float) -> np.ndarray:
    """A colour per track id, distinct for nearby ids (hues spread by the golden ratio, two lightness
    levels so that every tenth hue is not the same as the first)."""
    ids = np.asarray(track_ids, dtype=np.float64)
    hue = (ids * GOLDEN) % 1.0
    light = np.where(ids.astype(np.int64) % 2 == 0, 0.55, 0.7)
    # HSL with saturation 0.75 to RGB, vectorised
    c = (1.0 - np.abs(2.0 * light - 1.0)) * 0.75
    h6 = hue * 6.0
    x = c * (1.0 - np.abs(h6 % 2.0 - 1.0))
    m = light - c / 2.0
    sector = np.floor(h6).astype(np.int64) % 6
    zero = np.zeros_like(c)
    r = np.choose(sector, [c, x, zero, zero, x, c])
    g = np.choose(sector, [x, c, c, x, zero, zero])
    b = np.choose(sector, [zero, zero, x, c, c, x])
    rgba = np.stack([r + m, g + m, b + m, np.full_like(c, alpha)], axis=1)
    return rgba.astype(np.float32)


def link_correctness(ids, t: int, links: np.ndarray) -> np.ndarray | None:
    """True where a link (i in frame t -> j in frame t+1) joins the same ground-truth particle."""
    if ids is None or links.size == 0:
        return None
    return ids[t][links[:, 0]] == ids[t + 1][links[:, 1]]


def track_links(track) -> list[np.ndarray]:
    links = getattr(track, "links", None) or []
    return [np.asarray(l, dtype=np.int64).reshape(-1, 2) for l in links]


def thinning(count: int, limit: int) -> int:
    """k such that every k-th of ``count`` items is at most ``limit`` of them (1: draw them all)."""
    return max(1, -(-count // limit))


def nice_ticks(lo: float, hi: float, target: int = 5) -> np.ndarray:
    """Round tick values inside [lo, hi]: steps of 1, 2 or 5 times a power of ten, about ``target`` of them."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return np.array([lo])
    raw = span / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = np.arange(first, hi + step * 1e-9, step)
    return np.round(ticks / step) * step  # 0.30000000000000004 -> 0.3


def tick_text(values: np.ndarray) -> list[str]:
    return [f"{v:.6g}" if v != 0 else "0" for v in values]


def fit_scale_factor(radius: float, fov_degrees: float, margin: float = FIT_MARGIN) -> float:
    """vispy's scale_factor (the view's smaller extent at the centre's depth) that shows a sphere of
    ``radius`` around the centre whole, from any direction: the sphere's silhouette is R / cos(fov/2)."""
    half = math.radians(fov_degrees) / 2
    return 2.0 * radius * margin / math.cos(half)


class Tracks3DView(View):
    title = "3D"
    formats = ("png", "csv")

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.gl_error: str | None = VISPY_ERROR
        self.canvas = None
        self._gl_checked = False
        body = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(body)
        v.setContentsMargins(0, 0, 0, 0)
        bar = QtWidgets.QHBoxLayout()
        self.frame_slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.frame_slider.setMinimum(0)
        self.frame_slider.setMinimumWidth(120)
        self.frame_label = QtWidgets.QLabel("frames 0 → 1")
        self.frame_label.setMinimumWidth(90)
        self.show_all = QtWidgets.QCheckBox("All frames")
        self.show_all.setChecked(True)
        self.show_trails = QtWidgets.QCheckBox("Trails")
        self.show_trails.setChecked(True)
        self.trail_length = QtWidgets.QSpinBox()
        self.trail_length.setRange(1, 10_000)
        self.trail_length.setValue(10_000)
        self.trail_length.setToolTip("frame pairs of track drawn on each side of the selected pair")
        self.color_mode = QtWidgets.QComboBox()
        self.color_mode.addItem("links by correctness", "correct")
        self.color_mode.addItem("tracks by id", "track")
        self.color_mode.addItem("links by time", "time")
        self.reset_camera = QtWidgets.QPushButton("Reset view")
        self.play = QtWidgets.QToolButton()
        self.play.setText("Play")
        self.play.setCheckable(True)
        self.play.setToolTip("step through the frame pairs, starting again after the last")
        self.fps = QtWidgets.QSpinBox()
        self.fps.setRange(1, 120)
        self.fps.setValue(PLAY_FPS)
        self.fps.setSuffix(" /s")
        self.fps.setToolTip("frame pairs a second while playing")
        self.play_timer = QtCore.QTimer(self)
        # two rows, so that the view fits a 1024-pixel window: playing the pairs, then what is drawn
        bar.addWidget(self.play)
        bar.addWidget(self.fps)
        bar.addWidget(QtWidgets.QLabel("pair"))
        bar.addWidget(self.frame_slider, 1)
        bar.addWidget(self.frame_label)
        drawn = QtWidgets.QHBoxLayout()
        drawn.addWidget(self.show_all)
        drawn.addWidget(self.show_trails)
        drawn.addWidget(QtWidgets.QLabel("trail"))
        drawn.addWidget(self.trail_length)
        drawn.addWidget(self.color_mode)
        drawn.addStretch(1)
        drawn.addWidget(self.reset_camera)
        v.addLayout(bar)
        v.addLayout(drawn)
        self.info = QtWidgets.QLabel(wordWrap=True)
        self.canvas_host = QtWidgets.QWidget()
        self.canvas_layout = QtWidgets.QVBoxLayout(self.canvas_host)
        self.canvas_layout.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.canvas_host, 1)
        v.addWidget(self.info)
        self.set_content(body)
        self._bounds = None
        self._tables: dict = {}
        if self.gl_error is None:
            self.gl_error = self._build_scene()
        self.frame_slider.valueChanged.connect(self.session.set_frame_pair)
        self.session.framePairChanged.connect(self._on_pair)
        for w in (self.show_all, self.show_trails):
            w.toggled.connect(lambda *_: self.refresh(force=True))
        self.trail_length.valueChanged.connect(lambda *_: self.refresh(force=True))
        self.color_mode.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.reset_camera.clicked.connect(self.fit_camera)
        self.play.toggled.connect(self._set_playing)
        self.fps.valueChanged.connect(self._pace)
        self._pace()
        self.play_timer.timeout.connect(self.advance)
        self._cloud = None  # (series, points drawn, their frames, points in all, step, bounds): once per series
        self._link_table = None  # (track, the links table): made once per track
        self._drawn: dict = {}  # what the cloud and the trails were last sent to GL for
        self.picked: tuple[int, int] | None = None  # (frame, index) of the picked point
        self.pick_info = ""
        self.info_text = ""
        self._update_message()

    # ---- GL ---------------------------------------------------------------------------------
    def _build_scene(self) -> str | None:
        """Make the canvas once an OpenGL context is known to exist (a few tries); the reason otherwise."""
        reason = opengl_unavailable_reason()
        if reason is not None:
            return reason
        for attempt in range(GL_ATTEMPTS):
            try:
                self._make_canvas()
                return None
            except Exception as exc:  # a canvas that failed to come up is dropped and made again
                self._drop_canvas()
                reason = f"the OpenGL canvas could not be created ({exc})"
        return reason

    def _make_canvas(self) -> None:
        bg, fg = plot_colors()
        self.canvas = scene.SceneCanvas(keys=None, show=False, bgcolor=bg.name(), size=(640, 480))
        self.canvas_layout.addWidget(self.canvas.native)
        self.view3d = self.canvas.central_widget.add_view()
        self.view3d.camera = scene.cameras.TurntableCamera(fov=FOV, elevation=22, azimuth=35)
        self.cloud = scene.visuals.Markers(parent=self.view3d.scene)
        self.trails = scene.visuals.Line(parent=self.view3d.scene, connect="segments", width=2.0)
        self.links = scene.visuals.Line(parent=self.view3d.scene, connect="segments", width=3.0)
        self.frame_a = scene.visuals.Markers(parent=self.view3d.scene)
        self.frame_b = scene.visuals.Markers(parent=self.view3d.scene)
        self.picked_track = scene.visuals.Line(parent=self.view3d.scene, connect="strip", width=4.0)
        self.picked_point = scene.visuals.Markers(parent=self.view3d.scene)
        self.picked_track.visible = self.picked_point.visible = False
        self.canvas.events.mouse_release.connect(self._on_release)
        self.box = scene.visuals.Line(parent=self.view3d.scene, connect="segments")
        self.ticks = scene.visuals.Line(parent=self.view3d.scene, connect="segments")
        self.tick_labels = scene.visuals.Text(parent=self.view3d.scene, font_size=7, anchor_x="center",
                                              anchor_y="center")
        self.axis_names = scene.visuals.Text(parent=self.view3d.scene, font_size=9, bold=True,
                                             anchor_x="center", anchor_y="center")
        # the colour legend: drawn in the canvas' pixels, over the scene (exports include it)
        self.legend_marks = scene.visuals.Markers(parent=self.canvas.scene)
        self.legend_text = scene.visuals.Text(parent=self.canvas.scene, font_size=8, anchor_x="left",
                                              anchor_y="center")
        self.legend_bar = scene.visuals.Image(np.zeros((1, 2, 4), np.float32), parent=self.canvas.scene)
        # the selected pair is drawn over the cloud (the same points are in both): no depth test, drawn last
        self.cloud.set_gl_state("translucent", depth_test=True)
        for order, visual in enumerate((self.trails, self.frame_a, self.frame_b, self.links, self.picked_track,
                                        self.picked_point), start=1):
            visual.set_gl_state("translucent", depth_test=False)
            visual.order = order
        for order, visual in enumerate((self.legend_bar, self.legend_marks, self.legend_text), start=10):
            visual.set_gl_state("translucent", depth_test=False)
            visual.order = order
        self._apply_foreground(fg)

    def _drop_canvas(self) -> None:
        if self.canvas is not None:
            try:
                self.canvas_layout.removeWidget(self.canvas.native)
                self.canvas.native.deleteLater()
                self.canvas.close()
            except Exception:
                pass
        self.canvas = None

    def _apply_foreground(self, fg: QtGui.QColor) -> None:
        rgba = (fg.redF(), fg.greenF(), fg.blueF())
        self.box.set_data(color=(*rgba, 0.45))
        self.ticks.set_data(color=(*rgba, 0.8))
        self.tick_labels.color = (*rgba, 0.9)
        self.axis_names.color = (*rgba, 1.0)
        self.legend_text.color = (*rgba, 1.0)

    def check_gl(self) -> str | None:
        """Render once off-screen; on failure keep the reason and show it in place of the canvas."""
        if self._gl_checked or self.gl_error is not None:
            return self.gl_error
        self._gl_checked = True
        try:
            image = self.canvas.render(size=(64, 48))
            if image is None or image.size == 0 or not np.any(image[..., 3]):
                raise RuntimeError("the OpenGL context drew nothing")
        except Exception as exc:
            self.gl_error = opengl_unavailable_reason() or f"OpenGL rendering failed: {exc}"
        self._update_message()
        return self.gl_error

    def showEvent(self, event):  # noqa: N802 - Qt's name
        super().showEvent(event)
        if not self._gl_checked and self.gl_error is None:
            QtCore.QTimer.singleShot(0, self, self.check_gl)

    def _is_points(self) -> bool:
        problem = self.session.problem
        return problem is not None and getattr(problem, "kind", None) == "points"

    def _update_message(self) -> bool:
        if self.gl_error is not None:
            self.show_message("3D view unavailable: OpenGL could not be used here.\n\n"
                              f"{self.gl_error}\n\nThe other views work without it.")
            return True
        problem = self.session.problem
        if problem is None:
            self.show_message("The 3D view shows point series: open a .npz / .ply / .xyz / points .csv file\n"
                              "or generate “particles”, then Run to track them.")
            return True
        if not self._is_points():
            kind = KIND_NAMES.get(getattr(problem, "kind", ""), "not a point series")
            self.show_message(f"Nothing to show in 3D: this problem is {kind}.\n\n"
                              "The 3D view shows point series (.npz / .ply / .xyz / points .csv files,\n"
                              "or generated “particles”) and the tracks found in them.")
            return True
        self.show_message(None)
        return False

    # ---- playing ----------------------------------------------------------------------------
    def _set_playing(self, on: bool) -> None:
        self.play.setText("Pause" if on else "Play")
        if on:
            self.play_timer.start()
        else:
            self.play_timer.stop()

    def _pace(self, *_) -> None:
        self.play_timer.setInterval(round(1000 / self.fps.value()))

    def advance(self) -> None:
        """The next frame pair (after the last, the first again): one step of Play."""
        problem = self.session.problem
        pairs = problem.n_frames - 1 if self._is_points() else 0
        if pairs < 1:
            self.play.setChecked(False)
            return
        self.session.set_frame_pair((self.session.frame_pair + 1) % pairs)

    # ---- picking ----------------------------------------------------------------------------
    def _on_release(self, event) -> None:
        press = getattr(event, "press_event", None)
        if event.button != 1 or press is None or np.hypot(*(np.asarray(event.pos) - press.pos)) > 3:
            return  # a drag turns the camera; a click picks
        self.pick_at(event.pos)

    def pick_at(self, pos) -> tuple[int, int] | None:
        """Pick the point of the selected frame pair nearest to canvas pixel ``pos`` (within
        PICK_PIXELS): highlight its track and say its link costs. Returns (frame, index) or None."""
        if not self.has_content():
            return None
        series = self.session.problem
        pair = min(self.session.frame_pair, max(series.n_frames - 2, 0))
        best = None
        transform = self.view3d.scene.node_transform(self.canvas.scene)
        for t in (pair, pair + 1)[:series.n_frames]:
            pts = series.frames[t]
            if not pts.size:
                continue
            mapped = transform.map(pts)
            xy = mapped[:, :2] / mapped[:, 3:4]
            gap = np.hypot(xy[:, 0] - pos[0], xy[:, 1] - pos[1])
            i = int(np.argmin(gap))
            if gap[i] <= PICK_PIXELS and (best is None or gap[i] < best[0]):
                best = (float(gap[i]), t, i)
        if best is None:
            self.picked_track.visible = self.picked_point.visible = False
            self.picked = None
            self.canvas.update()
            return None
        _, t, i = best
        self.picked = (t, i)
        self._show_pick(series, t, i)
        return t, i

    def _show_pick(self, series, t: int, i: int) -> None:
        run = self.current_track()
        chain = run.track.track_through(t, i) if run is not None else [(t, i)]
        where = np.array([series.frames[f][k] for f, k in chain])
        self.picked_point.set_data(series.frames[t][i][None, :], face_color=(1, 1, 1, 1), size=14,
                                   edge_width=2.5, edge_color=(0.8, 0.1, 0.6, 1))
        self.picked_point.visible = True
        if len(chain) > 1:
            self.picked_track.set_data(pos=where, color=(0.8, 0.1, 0.6, 1.0))
        self.picked_track.visible = len(chain) > 1
        here = chain.index((t, i))
        parts = [f"picked point {i} of frame {t}"]
        if series.ids is not None:
            parts[0] += f" (id {int(series.ids[t][i])})"
        if len(chain) > 1:
            parts.append(f"its track: {len(chain)} points, frames {chain[0][0]} to {chain[-1][0]}")
        for step, name in ((-1, "from"), (1, "to")):
            if 0 <= here + step < len(chain):
                f, k = chain[here + step]
                cost = float(np.linalg.norm(series.frames[f][k] - series.frames[t][i]))
                parts.append(f"link {name} frame {f}: cost {cost:.6g}")
        if run is None:
            parts.append("Run to track it")
        elif len(chain) == 1:
            parts.append("not linked to either neighbouring frame")
        self.pick_info = " · ".join(parts)
        self.info.setText(f"{self.info_text}\n{self.pick_info}")
        self.canvas.update()

    # ---- drawing ----------------------------------------------------------------------------
    def _all_points(self, series):
        """(points drawn, their frames, points in all, step, bounds) of the all-frames cloud, made once
        per series: every step-th point, at most about MAX_POINTS."""
        if self._cloud is None or self._cloud[0] is not series:
            total = sum(f.shape[0] for f in series.frames)
            step = thinning(total, MAX_POINTS)
            frame_of = np.repeat(np.arange(series.n_frames), [f.shape[0] for f in series.frames])
            points = np.concatenate(series.frames) if total else np.zeros((0, 3))
            self._cloud = (series, points[::step], frame_of[::step], total, step,
                           (points.min(0), points.max(0)) if total else (np.zeros(3), np.ones(3)))
        return self._cloud[1:]

    def _on_pair(self, pair: int) -> None:
        if self.frame_slider.value() != pair:
            self.frame_slider.blockSignals(True)
            self.frame_slider.setValue(pair)
            self.frame_slider.blockSignals(False)
        self.refresh(force=True)

    def current_track(self):
        run = self.session.current_run
        if run is not None and run.track is not None:
            return run
        for r in reversed(self.session.runs):
            if r.track is not None and r.problem_kind == "points":
                return r
        return None

    def drawn_from(self) -> tuple:
        """The series, the frame pair, the tracking run it shows and its answer, the OpenGL state
        (its own controls force a redraw): not every report of a run under way, whose tracks come
        with its answer (redrawing the same scene meanwhile took the interpreter from it)."""
        run = self.current_track()
        return (self.session.problem, self.session.frame_pair, run, None if run is None else run.track, self.gl_error)

    def has_content(self) -> bool:
        """A point series drawn on a working canvas (a matching or a flow has nothing to show here)."""
        return self.gl_error is None and self.canvas is not None and self._is_points() and self._bounds is not None

    def redraw(self) -> None:
        if self._update_message():
            self._bounds = None
            self._tables = {}
            return
        series = self.session.problem
        n_frames = series.n_frames
        self.frame_slider.setMaximum(max(n_frames - 2, 0))
        pair = min(self.session.frame_pair, max(n_frames - 2, 0))
        frames = series.frames
        cloud, cloud_frames, total, step, new_bounds = self._all_points(series)
        refit = self._bounds is None or not all(np.array_equal(a, b) for a, b in zip(self._bounds, new_bounds))
        self._bounds = new_bounds
        thinned = []  # what is drawn subsampled, for the info line
        if self.show_all.isChecked() and total:
            if self._drawn.get("cloud") is not cloud:  # the same for every pair: sent to GL once
                self.cloud.set_data(cloud, face_color=time_colors(cloud_frames, n_frames, 0.45), size=4,
                                    edge_width=0)
                self._drawn["cloud"] = cloud
            self.cloud.visible = True
            if step > 1:
                thinned.append(f"all frames: 1 point in {step}, {cloud.shape[0]:,} of {total:,}")
        else:
            self.cloud.visible = False
        a = frames[pair]
        b = frames[pair + 1] if n_frames > 1 else np.zeros((0, 3))
        # rings, not discs: a link between two of them (often a few pixels long) shows through
        for markers, pts, color in ((self.frame_a, a, FRAME_A_COLOR), (self.frame_b, b, FRAME_B_COLOR)):
            every = thinning(pts.shape[0], MAX_FRAME_POINTS)
            if pts.size:
                markers.set_data(pts[::every], face_color=(*color[:3], 0.15), size=8, edge_width=1.6,
                                 edge_color=color)
            markers.visible = bool(pts.size)
            if every > 1 and markers is self.frame_a:
                thinned.append(f"selected frames: 1 point in {every}")
        if refit:
            self._draw_box(*new_bounds)
        run = self.current_track()
        links = track_links(run.track) if run is not None else []
        trail_step = self._draw_links(series, links, pair, n_frames, run.track if run is not None else None)
        if trail_step > 1:
            thinned.append(f"trails: 1 link in {trail_step}")
        self._draw_legend(series, n_frames, pair, bool(links))
        text = f"frames {pair} → {pair + 1}" if n_frames > 1 else "one frame"
        self.frame_label.setText(text)
        counts = f"{plural(n_frames, 'frame')}, {plural(total, 'point')}"
        if thinned:  # said, not hidden: a subsample is drawn so that the view stays interactive
            counts += f" (drawn subsampled: {'; '.join(thinned)})"
        if run is None and n_frames < 2:  # nothing to link: no promise of a run (the Solver panel says why)
            self.info_text = f"{counts} · tracking needs at least two frames."
        elif run is None:
            self.info_text = f"{counts} · Run to track them (blue: frame {pair}, orange: frame {pair + 1})."
        else:
            acc = getattr(run.track, "accuracy", None)
            acc_text = f", accuracy {acc:.1%}" if isinstance(acc, (float, int)) and np.isfinite(acc) else ""
            self.info_text = (f"{counts} · tracked by {run.label}{acc_text}"
                              f" · blue: frame {pair}, orange: frame {pair + 1} · click a point for its track")
        self.info.setText(self.info_text)
        self.picked, self.pick_info = None, ""  # a pick belongs to the pair it was made on
        self.picked_track.visible = self.picked_point.visible = False
        if refit:
            self.fit_camera()
        self.canvas.update()

    def _draw_box(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """The data's bounding box, and along three of its edges the x, y, z axes with round ticks."""
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        edges = [(0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 3), (2, 6), (3, 7), (4, 5), (4, 6), (5, 7), (6, 7)]
        self.box.set_data(pos=corners[np.array(edges).reshape(-1)])
        span = np.where(hi - lo > 0, hi - lo, 1.0)
        size = float(span.max())
        tick_len = 0.025 * size
        segments, label_pos, labels, name_pos = [], [], [], []
        # each axis runs along an edge of the box; its ticks point away from the box
        outward = {0: np.array([0.0, -1.0, -1.0]), 1: np.array([1.0, 0.0, -1.0]), 2: np.array([-1.0, -1.0, 0.0])}
        for axis in range(3):
            base = np.where(outward[axis] > 0, hi, lo).astype(np.float64)
            direction = outward[axis] / np.linalg.norm(outward[axis])
            values = nice_ticks(float(lo[axis]), float(hi[axis]))
            for value in values:
                p = base.copy()
                p[axis] = value
                segments += [p, p + direction * tick_len]
                label_pos.append(p + direction * tick_len * 3.2)
            labels += tick_text(values)
            middle = base.copy()
            middle[axis] = (lo[axis] + hi[axis]) / 2
            name_pos.append(middle + direction * tick_len * 6.5)
        self.ticks.set_data(pos=np.array(segments))
        self.tick_labels.text = labels
        self.tick_labels.pos = np.array(label_pos)
        self.axis_names.text = ["x", "y", "z"]
        self.axis_names.pos = np.array(name_pos)
        self._label_reach = tick_len * 7.5  # how far the labels stand out of the box (camera fit)

    def _legend_rows(self, series, n_frames: int, pair: int, tracked: bool) -> list[tuple]:
        """(kind, colour or None, text): the legend's lines, top to bottom; kind is "ring" (a frame's
        points), "mark" (a link colour) or "bar" (the time colour scale)."""
        rows = [("ring", FRAME_A_COLOR, f"frame {pair}")]
        if pair + 1 < n_frames:  # a one-frame series has no next frame to name
            rows.append(("ring", FRAME_B_COLOR, f"frame {pair + 1}"))
        by_correctness = self.color_mode.currentData() == "correct" and series.ids is not None
        by_track = self.color_mode.currentData() == "track"
        if tracked and by_correctness:
            rows += [("mark", Color(CORRECT_COLOR).rgba, "correct link (same id)"),
                     ("mark", Color(WRONG_COLOR).rgba, "wrong link (other id)")]
        if tracked and by_track:
            rows += [("mark", tuple(id_colors(np.array([k]), 1.0)[0]), f"track {k}") for k in range(3)]
            rows.append(("mark", (0.6, 0.6, 0.6, 1.0), "… each track its own colour"))
        if self.show_all.isChecked() or (tracked and not by_correctness and not by_track):
            what = "points" if not tracked or by_correctness or by_track else "points, links"
            rows.append(("bar", None, f"{what}: frames 0 to {n_frames - 1}"))
        return rows

    def _draw_legend(self, series, n_frames: int, pair: int, tracked: bool) -> None:
        rows = self._legend_rows(series, n_frames, pair, tracked)
        x0, y0, line = 14.0, 16.0, 17.0
        marks, faces, edges, texts, text_pos = [], [], [], [], []
        bar_y = None
        for i, (kind, color, text) in enumerate(rows):
            y = y0 + i * line
            if kind in ("ring", "mark"):
                marks.append((x0 + 5, y))
                edges.append(color)
                faces.append((*color[:3], 0.15) if kind == "ring" else color)
                texts.append(text)
                text_pos.append((x0 + 16, y))
            else:  # the time colour scale: a gradient bar, then its meaning
                bar_y = y
                texts.append(text)
                text_pos.append((x0 + 70, y))
        self.legend_marks.set_data(np.array(marks, dtype=np.float32), face_color=np.array(faces),
                                   edge_color=np.array(edges), size=9, edge_width=1.6)
        self.legend_text.text = texts
        self.legend_text.pos = np.array(text_pos, dtype=np.float32)
        self.legend_bar.visible = bar_y is not None
        if bar_y is not None:
            ramp = time_colors(np.arange(64), 64, 1.0).reshape(1, 64, 4).astype(np.float32)
            self.legend_bar.set_data(ramp)
            self.legend_bar.transform = scene.transforms.STTransform(scale=(60 / 64, 10), translate=(x0, bar_y - 5))

    def _link_segments(self, series, links, t):
        l = links[t]
        seg = np.empty((2 * l.shape[0], 3))
        seg[0::2] = series.frames[t][l[:, 0]]
        seg[1::2] = series.frames[t + 1][l[:, 1]]
        return seg

    def _segment_colors(self, series, links, t, n_frames, alpha, track=None) -> np.ndarray:
        l = links[t]
        mode = self.color_mode.currentData()
        if mode == "track" and track is not None and l.size:  # each track its own colour, from its start
            return np.repeat(id_colors(track.point_tracks()[t][l[:, 0]], alpha), 2, axis=0)
        correct = link_correctness(series.ids, t, l) if mode == "correct" else None
        if correct is None:
            rgba = time_colors(np.full(l.shape[0], t), n_frames, alpha)
        else:
            good, bad = np.array(Color(CORRECT_COLOR).rgba), np.array(Color(WRONG_COLOR).rgba)
            rgba = np.where(correct[:, None], good, bad)
            rgba[:, 3] = alpha
        return np.repeat(rgba, 2, axis=0)

    def _draw_links(self, series, links, pair, n_frames, track=None) -> int:
        """The selected pair's links, and the trails: the links of the pairs within the trail length,
        every k-th link of each when they would pass MAX_TRAIL_SEGMENTS. Returns k."""
        usable = [t for t in range(min(len(links), n_frames - 1)) if links[t].size]
        if pair in usable:
            self.links.set_data(pos=self._link_segments(series, links, pair),
                                color=self._segment_colors(series, links, pair, n_frames, 1.0, track))
            self.links.visible = True
        else:
            self.links.visible = False
        reach = self.trail_length.value()
        # the selected pair is among its trail (drawn over it): with a reach past both ends, the
        # trail is the same for every pair, and is sent to GL once while playing
        trail = [t for t in usable if abs(t - pair) <= reach]
        step = thinning(sum(links[t].shape[0] for t in trail), MAX_TRAIL_SEGMENTS)
        key = (id(track), tuple(trail), step, self.color_mode.currentData())
        if self.show_trails.isChecked() and trail:
            if self._drawn.get("trails") != key or track is None:
                thin = {t: links[t][::step] for t in trail}
                self.trails.set_data(pos=np.concatenate([self._link_segments(series, thin, t) for t in trail]),
                                     color=np.concatenate([self._segment_colors(series, thin, t, n_frames, 0.85,
                                                                                track) for t in trail]))
                self._drawn["trails"] = key
            self.trails.visible = True
        else:
            self.trails.visible = False
        self._tables = {"links": self._links_table(series, links, usable, track)} if usable else {}
        return step if self.show_trails.isChecked() and trail else 1

    def _links_table(self, series, links, usable, track) -> dict:
        """Every link of the run (frame, index, next_index, correct), made once per track."""
        if self._link_table is not None and track is not None and self._link_table[0] is track:
            return self._link_table[1]
        frame = np.concatenate([np.full(links[t].shape[0], t, dtype=np.int64) for t in usable])
        pairs = np.concatenate([links[t] for t in usable]).astype(np.int64)
        cols = {"frame": frame, "index": pairs[:, 0], "next_index": pairs[:, 1]}
        if series.ids is not None:
            cols["correct"] = np.concatenate([link_correctness(series.ids, t, links[t]) for t in usable])
        self._link_table = (track, cols)
        return cols

    def fit_camera(self) -> None:
        """Centre on the data and back off until its bounding sphere (axis labels included) fits the
        view from every direction, so no corner is clipped however the scene is turned."""
        if self.canvas is None or self._bounds is None:
            return
        lo, hi = (np.asarray(b, dtype=np.float64) for b in self._bounds)
        centre = (lo + hi) / 2
        radius = float(np.linalg.norm(hi - lo)) / 2 + getattr(self, "_label_reach", 0.0)
        if not radius > 0:
            radius = 1.0
        camera = self.view3d.camera
        camera.center = tuple(centre)
        camera.distance = None
        camera.scale_factor = fit_scale_factor(radius, camera.fov)

    # ---- export -----------------------------------------------------------------------------
    def render_image(self) -> np.ndarray:
        if self.gl_error is not None or self.canvas is None:
            raise RuntimeError(f"3D view unavailable: {self.gl_error}")
        return self.canvas.render()

    def tables(self) -> dict:
        return dict(self._tables)

    def apply_theme(self, palette=None) -> None:
        if self.canvas is not None:
            bg, fg = plot_colors(palette)
            self.canvas.bgcolor = bg.name()
            self._apply_foreground(fg)
        self.invalidate()
