"""3D: a point series in a vispy scene embedded in Qt — frames coloured by time, the selected frame
pair's correspondences, tracks as trails across frames, links coloured by correctness against the
ground-truth ids. Orbit with the left mouse button, zoom with the wheel, pan with shift-drag.

GL can be missing or broken (remote sessions, old drivers): then the tab shows why, instead of
crashing the application; ``gl_error`` holds the reason (tests check it is None).
"""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore, QtWidgets

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
    VISPY_ERROR = f"{type(exc).__name__}: {exc}"

MAX_POINTS = 400_000  # beyond this the "all frames" cloud is subsampled (llvmpipe stays interactive)


def time_colors(frame_of_point: np.ndarray, n_frames: int, alpha: float) -> np.ndarray:
    cmap = get_colormap("viridis")
    t = frame_of_point / max(n_frames - 1, 1)
    rgba = cmap.map(t.astype(np.float32)).reshape(-1, 4).copy()
    rgba[:, 3] = alpha
    return rgba


def link_correctness(ids, t: int, links: np.ndarray) -> np.ndarray | None:
    """True where a link (i in frame t -> j in frame t+1) joins the same ground-truth particle."""
    if ids is None or links.size == 0:
        return None
    return ids[t][links[:, 0]] == ids[t + 1][links[:, 1]]


def track_links(track) -> list[np.ndarray]:
    links = getattr(track, "links", None) or []
    return [np.asarray(l, dtype=np.int64).reshape(-1, 2) for l in links]


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
        self.frame_label = QtWidgets.QLabel("frames 0 → 1")
        self.frame_label.setMinimumWidth(110)
        self.show_all = QtWidgets.QCheckBox("All frames")
        self.show_all.setChecked(True)
        self.show_trails = QtWidgets.QCheckBox("Trails")
        self.show_trails.setChecked(True)
        self.trail_length = QtWidgets.QSpinBox()
        self.trail_length.setRange(1, 10_000)
        self.trail_length.setValue(10_000)
        self.trail_length.setSpecialValueText("1")
        self.trail_length.setToolTip("frame pairs of track drawn on each side of the selected pair")
        self.color_mode = QtWidgets.QComboBox()
        self.color_mode.addItem("links by correctness", "correct")
        self.color_mode.addItem("links by time", "time")
        self.reset_camera = QtWidgets.QPushButton("Reset view")
        bar.addWidget(QtWidgets.QLabel("pair"))
        bar.addWidget(self.frame_slider, 1)
        bar.addWidget(self.frame_label)
        bar.addWidget(self.show_all)
        bar.addWidget(self.show_trails)
        bar.addWidget(QtWidgets.QLabel("trail"))
        bar.addWidget(self.trail_length)
        bar.addWidget(self.color_mode)
        bar.addWidget(self.reset_camera)
        v.addLayout(bar)
        self.info = QtWidgets.QLabel()
        self.canvas_host = QtWidgets.QWidget()
        self.canvas_layout = QtWidgets.QVBoxLayout(self.canvas_host)
        self.canvas_layout.setContentsMargins(0, 0, 0, 0)
        v.addWidget(self.canvas_host, 1)
        v.addWidget(self.info)
        self.set_content(body)
        self._bounds = None
        self._tables: dict = {}
        if self.gl_error is None:
            try:
                self._build_scene()
            except Exception as exc:
                self.gl_error = f"{type(exc).__name__}: {exc}"
        self.frame_slider.valueChanged.connect(self.session.set_frame_pair)
        self.session.framePairChanged.connect(self._on_pair)
        for w in (self.show_all, self.show_trails):
            w.toggled.connect(lambda *_: self.refresh(force=True))
        self.trail_length.valueChanged.connect(lambda *_: self.refresh(force=True))
        self.color_mode.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.reset_camera.clicked.connect(self.fit_camera)
        self._update_message()

    # ---- GL ---------------------------------------------------------------------------------
    def _build_scene(self) -> None:
        bg, _ = plot_colors()
        self.canvas = scene.SceneCanvas(keys=None, show=False, bgcolor=bg.name(), size=(640, 480))
        self.canvas_layout.addWidget(self.canvas.native)
        self.view3d = self.canvas.central_widget.add_view()
        self.view3d.camera = scene.cameras.TurntableCamera(fov=40, elevation=22, azimuth=35)
        self.cloud = scene.visuals.Markers(parent=self.view3d.scene)
        self.trails = scene.visuals.Line(parent=self.view3d.scene, connect="segments", width=1.5,
                                         antialias=True)
        self.links = scene.visuals.Line(parent=self.view3d.scene, connect="segments", width=2.5, antialias=True)
        self.frame_a = scene.visuals.Markers(parent=self.view3d.scene)
        self.frame_b = scene.visuals.Markers(parent=self.view3d.scene)
        self.box = scene.visuals.Line(parent=self.view3d.scene, connect="segments", color=(0.5, 0.5, 0.5, 0.6))
        self.axes = scene.visuals.XYZAxis(parent=self.view3d.scene, width=2)
        # the selected pair is drawn over the cloud (the same points are in both): no depth test, drawn last
        self.cloud.set_gl_state("translucent", depth_test=True)
        for order, visual in enumerate((self.trails, self.frame_a, self.frame_b, self.links), start=1):
            visual.set_gl_state("translucent", depth_test=False)
            visual.order = order

    def check_gl(self) -> str | None:
        """Render once off-screen; on failure keep the reason and show it in place of the canvas."""
        if self._gl_checked or self.gl_error is not None:
            return self.gl_error
        self._gl_checked = True
        try:
            image = self.canvas.render(size=(64, 48))
            if image is None or image.size == 0 or not np.any(image[..., 3]):
                raise RuntimeError("the GL context rendered nothing")
        except Exception as exc:
            self.gl_error = f"{type(exc).__name__}: {exc}"
        self._update_message()
        return self.gl_error

    def showEvent(self, event):
        super().showEvent(event)
        if not self._gl_checked and self.gl_error is None:
            QtCore.QTimer.singleShot(0, self, self.check_gl)

    def _update_message(self) -> bool:
        if self.gl_error is not None:
            self.show_message("3D view unavailable: OpenGL could not be used here.\n\n"
                              f"{self.gl_error}\n\nThe other views work without it.")
            return True
        problem = self.session.problem
        if problem is None or getattr(problem, "kind", None) != "points":
            self.show_message("The 3D view shows point series: open a .npz / .ply / .xyz / points .csv file\n"
                              "or generate “particles”, then Run to track them.")
            return True
        self.show_message(None)
        return False

    # ---- drawing ----------------------------------------------------------------------------
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

    def has_content(self) -> bool:
        return self.gl_error is None and not self.showing_message and self._bounds is not None

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
        frame_of = np.concatenate([np.full(f.shape[0], t) for t, f in enumerate(frames)])
        points = np.concatenate(frames) if frame_of.size else np.zeros((0, 3))
        new_bounds = (points.min(0), points.max(0)) if points.size else (np.zeros(3), np.ones(3))
        refit = self._bounds is None or not all(np.array_equal(a, b) for a, b in zip(self._bounds, new_bounds))
        self._bounds = new_bounds
        if self.show_all.isChecked() and points.size:
            step = max(1, points.shape[0] // MAX_POINTS)
            self.cloud.set_data(points[::step], face_color=time_colors(frame_of[::step], n_frames, 0.6),
                                size=5, edge_width=0)
            self.cloud.visible = True
        else:
            self.cloud.visible = False
        a = frames[pair]
        b = frames[pair + 1] if n_frames > 1 else np.zeros((0, 3))
        if a.size:
            self.frame_a.set_data(a, face_color=(0.0, 0.45, 0.70, 1.0), size=7, edge_width=1,
                                  edge_color=(0, 0, 0, 0.6))
        self.frame_a.visible = bool(a.size)
        if b.size:
            self.frame_b.set_data(b, face_color=(0.90, 0.62, 0.0, 1.0), size=7, edge_width=1,
                                  edge_color=(0, 0, 0, 0.6))
        self.frame_b.visible = bool(b.size)
        self._draw_box(*new_bounds)
        run = self.current_track()
        links = track_links(run.track) if run is not None else []
        self._draw_links(series, links, pair, n_frames)
        text = f"frames {pair} → {pair + 1}" if n_frames > 1 else "one frame"
        self.frame_label.setText(text)
        if run is None:
            self.info.setText(f"{n_frames} frames, {points.shape[0]} points · Run to track them "
                              f"(blue: frame {pair}, orange: frame {pair + 1}).")
        else:
            acc = getattr(run.track, "accuracy", None)
            acc_text = f", accuracy {acc:.1%}" if isinstance(acc, (float, int)) and np.isfinite(acc) else ""
            self.info.setText(f"{n_frames} frames, {points.shape[0]} points · tracked by {run.label}{acc_text}"
                              f" · blue: frame {pair}, orange: frame {pair + 1}")
        if refit:
            self.fit_camera()
        self.canvas.update()

    def _draw_box(self, lo: np.ndarray, hi: np.ndarray) -> None:
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        edges = [(0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 3), (2, 6), (3, 7), (4, 5), (4, 6), (5, 7), (6, 7)]
        self.box.set_data(pos=corners[np.array(edges).reshape(-1)])
        span = float(np.max(hi - lo)) or 1.0
        self.axes.transform = scene.transforms.STTransform(translate=lo, scale=(span * 0.15,) * 3)

    def _link_segments(self, series, links, t):
        l = links[t]
        seg = np.empty((2 * l.shape[0], 3))
        seg[0::2] = series.frames[t][l[:, 0]]
        seg[1::2] = series.frames[t + 1][l[:, 1]]
        return seg

    def _segment_colors(self, series, links, t, n_frames, alpha) -> np.ndarray:
        l = links[t]
        correct = link_correctness(series.ids, t, l) if self.color_mode.currentData() == "correct" else None
        if correct is None:
            rgba = time_colors(np.full(l.shape[0], t), n_frames, alpha)
        else:
            good, bad = np.array(Color(CORRECT_COLOR).rgba), np.array(Color(WRONG_COLOR).rgba)
            rgba = np.where(correct[:, None], good, bad)
            rgba[:, 3] = alpha
        return np.repeat(rgba, 2, axis=0)

    def _draw_links(self, series, links, pair, n_frames) -> None:
        usable = [t for t in range(min(len(links), n_frames - 1)) if links[t].size]
        self._tables = {}
        if pair in usable:
            self.links.set_data(pos=self._link_segments(series, links, pair),
                                color=self._segment_colors(series, links, pair, n_frames, 1.0))
            self.links.visible = True
        else:
            self.links.visible = False
        reach = self.trail_length.value()
        trail = [t for t in usable if t != pair and abs(t - pair) <= reach]
        if self.show_trails.isChecked() and trail:
            self.trails.set_data(pos=np.concatenate([self._link_segments(series, links, t) for t in trail]),
                                 color=np.concatenate([self._segment_colors(series, links, t, n_frames, 0.55)
                                                       for t in trail]))
            self.trails.visible = True
        else:
            self.trails.visible = False
        if usable:
            rows = [(t, int(i), int(j)) for t in usable for i, j in links[t]]
            arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
            cols = {"frame": arr[:, 0], "index": arr[:, 1], "next_index": arr[:, 2]}
            if series.ids is not None:
                cols["correct"] = np.concatenate([link_correctness(series.ids, t, links[t]) for t in usable])
            self._tables = {"links": cols}

    def fit_camera(self) -> None:
        if self.canvas is None or self._bounds is None:
            return
        lo, hi = self._bounds
        pad = 0.05 * float(np.max(hi - lo) or 1.0)
        self.view3d.camera.set_range(x=(lo[0] - pad, hi[0] + pad), y=(lo[1] - pad, hi[1] + pad),
                                     z=(lo[2] - pad, hi[2] + pad))

    # ---- export -----------------------------------------------------------------------------
    def render_image(self) -> np.ndarray:
        if self.gl_error is not None or self.canvas is None:
            raise RuntimeError(f"3D view unavailable: {self.gl_error}")
        return self.canvas.render()

    def tables(self) -> dict:
        return dict(self._tables)

    def apply_theme(self, palette=None) -> None:
        if self.canvas is not None:
            bg, _ = plot_colors(palette)
            self.canvas.bgcolor = bg.name()
        self.invalidate()
