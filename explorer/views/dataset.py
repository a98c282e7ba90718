"""Dataset dock: what was loaded (problem.describe() plus degree / cost statistics) and a small preview:
degree histograms for graphs, a capacity histogram for networks, a cost heatmap or histogram for
assignment problems, the point cloud (x-y, coloured by frame) for point series."""
from __future__ import annotations

import html
import warnings
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ..theme import series_color, style_plot_widget
from ..wording import problem_words, settings_words, value_words
from .base import (DecadeAxis, EmptyNote, View, add_plot, add_side_legend, log_scale_wanted, new_layout_widget,
                   set_axis_label, set_title)

HEATMAP_MAX = 256
# a degree distribution is drawn on log axes when its largest degree is this many times the typical
# (median) one: a heavy tail (the power-law and R-MAT samples: 27 to 41 times), which linear axes
# squeeze into one corner; random, Delaunay and grid graphs stay within 3 times and stay linear
DEGREE_SPREAD = 10.0
CHART_MIN_HEIGHT = 130
CHART_AROUND_AXIS = 82  # pixels of the chart above and below its left axis (title, bottom axis), until laid out
DEGREE_TITLE = "Vertex degrees"  # short: the title's width and the legend's must fit a narrow dock


def _number(x) -> str:
    """A statistic as a person writes it: 30000 and 7284 (not 3e+04), 0.0167, 1.5e-07."""
    x = float(x)
    if np.isfinite(x) and abs(x) < 1e15 and (x.is_integer() or abs(x) >= 1e4):
        return f"{x:.0f}"
    return f"{x:.4g}"


def _stats(name: str, values: np.ndarray) -> tuple[str, str]:
    v = np.asarray(values)
    if v.size == 0:
        return name, "—"
    # short, so that it stays on one line in a narrow dock
    return name, f"{_number(v.min())} to {_number(v.max())}, mean {_number(v.mean())}"


def problem_facts(problem) -> list[tuple[str, str]]:
    """(label, text) rows for the dataset form."""
    facts = []
    described = dict(problem.describe())
    if problem.kind == "batch" and len(problem):  # one line of sizes instead of four
        for key in ("rows_min", "rows_max", "cols_min", "cols_max"):
            described.pop(key, None)
        sizes = f"{_span(problem.shapes[:, 0])} rows × {_span(problem.shapes[:, 1])} columns"
        described = {"problems": described.pop("problems"), "sizes": sizes, **described}
    for key, value in described.items():
        if key == "points" and isinstance(value, list):
            # short: "994 in all (per frame 96–104)" wrapped in the dock at 1024 x 700 and lost its end
            low, high = (min(value), max(value)) if value else (0, 0)
            value = (f"{sum(value):,} ({low:,} a frame)" if low == high
                     else f"{sum(value):,} ({low:,}–{high:,} a frame)") if value else "0"
        elif isinstance(value, bool):  # a fact, said as the command line's summary says it
            value = "yes" if value else "no"
        elif isinstance(value, int):
            value = f"{value:,}"  # 1,874,790: counts read at a glance
        facts.append((key.replace("_", " "), "—" if value is None else value_words(value)))
    kind = type(problem).__name__
    if kind == "BipartiteGraph":
        rd, cd = problem.row_degrees(), problem.col_degrees()
        facts += [_stats("row degree", rd), _stats("col degree", cd),
                  ("isolated", f"{int(np.sum(rd == 0))} rows · {int(np.sum(cd == 0))} cols"),
                  ("density", f"{problem.n_edges / max(problem.n_rows * problem.n_cols, 1):.3g}")]
    elif kind == "FlowNetwork":
        out_deg = np.bincount(problem.tail, minlength=problem.n_vertices)
        facts += [_stats("out-degree", out_deg), _stats("capacity", problem.capacity)]
    elif kind == "CostMatrix":
        finite = problem.costs[np.isfinite(problem.costs)]
        facts += [_stats("cost", finite)]
    elif kind == "SparseCosts":
        facts += [_stats("row degree", np.diff(problem.row_ptr)), _stats("cost", problem.cost)]
    elif kind == "PointSeries":
        pts = np.concatenate(problem.frames) if problem.frames else np.zeros((0, 3))
        if pts.size:
            lo, hi = pts.min(0), pts.max(0)
            facts += [(f"{axis} range", f"{low:.4g} to {high:.4g}") for axis, low, high in zip("xyz", lo, hi)]
    return facts


def _span(values: np.ndarray) -> str:
    low, high = int(values.min()), int(values.max())
    return f"{low:,}" if low == high else f"{low:,}–{high:,}"


def histogram(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(counts, edges) of ``values``; a single value is one bar at it, a unit wide for whole numbers
    (else a tenth of its size), not numpy's ten bins spread over value ± 0.5 (0.6 to 1.4 around 1)."""
    low, high = float(values.min()), float(values.max())
    if low == high:
        half = 0.5 if low.is_integer() else max(abs(low) * 0.05, 1e-12)
        return np.array([values.size]), np.array([low - half, low + half])
    return np.histogram(values, bins=min(50, max(5, int(np.sqrt(values.size)))))


def kind_name(problem) -> str:
    return type(problem).__name__


def downsample_image(costs: np.ndarray, limit: int = HEATMAP_MAX) -> np.ndarray:
    """Block means of a dense matrix (inf -> NaN), at most ``limit`` x ``limit``."""
    a = np.where(np.isfinite(costs), costs, np.nan)
    fr = max(1, int(np.ceil(a.shape[0] / limit)))
    fc = max(1, int(np.ceil(a.shape[1] / limit)))
    if fr == 1 and fc == 1:
        return a
    rows, cols = a.shape[0] // fr * fr, a.shape[1] // fc * fc
    a = a[:rows, :cols].reshape(rows // fr, fr, cols // fc, fc)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a block of forbidden pairs only: NaN, drawn blank
        return np.nanmean(a, axis=(1, 3))


class DatasetPanel(View):
    """The dataset dock. Its header names where the problem came from: the file (and, for a format
    that can mean several problems, a Read as choice), the generator and its parameters, or, with
    no dataset loaded, what a replayed run record holds."""

    title = "Dataset"
    readAsRequested = QtCore.Signal(str)  # read the current file again as this problem kind

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        body = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(body)
        v.setContentsMargins(4, 4, 4, 4)
        self.source_label = QtWidgets.QLabel(wordWrap=True)
        self.source_label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.read_as_row = QtWidgets.QWidget()
        row = QtWidgets.QHBoxLayout(self.read_as_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QtWidgets.QLabel("Read as"))
        self.read_as_combo = QtWidgets.QComboBox()
        self.read_as_combo.setToolTip("This file's format can hold several kinds of problem: "
                                      "choose how to read it (it is read again)")
        row.addWidget(self.read_as_combo, 1)
        self.read_as_row.hide()
        self.read_as_combo.activated.connect(
            lambda i: self.readAsRequested.emit(self.read_as_combo.itemData(i)))
        v.addWidget(self.read_as_row)
        self.form = QtWidgets.QFormLayout()
        self.form.setFieldGrowthPolicy(QtWidgets.QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setVerticalSpacing(2)
        v.addWidget(self.source_label)
        v.addLayout(self.form)
        self.charts = new_layout_widget()
        self.charts.setMinimumHeight(CHART_MIN_HEIGHT)  # raised to what the axis names need (_fit_height)
        # take the height that is left rather than asking for more (the dock would scroll instead)
        self.charts.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding, QtWidgets.QSizePolicy.Policy.Ignored)
        v.addWidget(self.charts, 1)
        self.plot = add_plot(self.charts.ci, 0, 0, "", "", "",
                             axisItems={"left": DecadeAxis("left"), "bottom": DecadeAxis("bottom")})
        self.legend = add_side_legend(self.charts.ci, 0, 1)  # beside the chart: never over a curve
        self.plot.getAxis("left").geometryChanged.connect(self._fit_height)  # what is around it may change too
        self.empty_note = EmptyNote(self.plot)
        self.set_content(body)
        self.show_message("No dataset.\nFile ▸ Open (Ctrl+O), Open Sample or Generate.")
        self._tables: dict = {}

    def has_content(self) -> bool:
        return self.session.problem is not None

    def drawn_from(self) -> tuple:
        """The dataset, or the replayed record shown in its place: not every change of the session
        (a run's start and progress change it, and redrawing the preview, 0.1 s for a point series,
        slowed the run's own thread)."""
        problem = self.session.problem
        run = self.session.current_run
        return (problem, str(self.session.path), tuple(getattr(self.session, "readings", ()) or ()),
                repr(getattr(self.session, "generator", None)),
                run if problem is None and run is not None and run.replayed else None)

    def export_item(self):
        return self.charts.ci

    def tables(self) -> dict:
        return dict(self._tables)

    def redraw(self) -> None:
        problem = self.session.problem
        if problem is None:
            run = self.session.current_run
            if run is not None and run.replayed:
                self._show_record(run)
                return
            self.show_message("No dataset.\nFile ▸ Open (Ctrl+O), Open Sample or Generate.")
            return
        self.show_message(None)
        self.charts.show()
        rows = []
        generator = getattr(self.session, "generator", None)
        if self.session.path:
            header = html.escape(str(self.session.path))
        elif generator is not None:
            header = f"generated: {html.escape(generator[0])}"
            rows.append(("parameters", settings_words(generator[1], "defaults")))
        else:
            header = html.escape(str(getattr(problem, "source", None) or "unnamed dataset"))
        self.source_label.setText(f"<b>{header}</b>")
        self._fill_read_as(problem)
        self._fill_form(rows + problem_facts(problem))
        self._draw_preview(problem)

    def _fill_read_as(self, problem) -> None:
        kinds = tuple(getattr(self.session, "readings", ()) or ())
        self.read_as_row.setVisible(len(kinds) > 1 and bool(self.session.path))
        self.read_as_combo.blockSignals(True)
        self.read_as_combo.clear()
        for kind in kinds:
            self.read_as_combo.addItem(kind + (" (default)" if kind == kinds[0] else ""), kind)
        index = self.read_as_combo.findData(problem.kind)
        self.read_as_combo.setCurrentIndex(max(index, 0))
        self.read_as_combo.blockSignals(False)

    def _fill_form(self, facts) -> None:
        while self.form.rowCount():
            self.form.removeRow(0)
        for label, text in facts:
            value = QtWidgets.QLabel(text, wordWrap=True)
            value.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # "<= 4" or a certificate's words, never markup
            value.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
            self.form.addRow(f"{label}:", value)

    def _show_record(self, run) -> None:
        """No dataset is loaded, but a run record is replayed: show what the record says of its run."""
        self.show_message(None)
        self.read_as_row.hide()
        self.charts.hide()
        self._tables = {}
        where = Path(run.record_path).name if run.record_path else "a run record"
        self.source_label.setText(f"<b>run record: {html.escape(where)}</b><br>"
                                  "The problem itself is not stored in a run record.")
        facts = [("problem", problem_words(run.problem_info)), ("algorithm", run.algorithm),
                 ("backend", run.backend_used), ("options", settings_words(run.options))]
        if run.certificate_text:
            facts.append(("certificate", run.certificate_text))
        self._fill_form(facts)

    def _draw_preview(self, problem) -> None:
        plot = self.plot
        plot.clear()
        self.legend.clear()
        self.legend.setVisible(False)
        self.empty_note.set(None)
        plot.setLogMode(False, False)
        plot.setAspectLocked(False)
        plot.invertY(False)
        kind = type(problem).__name__
        self._tables = {}
        if kind == "BipartiteGraph":
            self._draw_degrees(problem)
        elif kind in ("FlowNetwork", "SparseCosts") or (kind == "CostMatrix" and min(problem.shape) < 2):
            values = (problem.capacity if kind == "FlowNetwork" else
                      problem.cost if kind == "SparseCosts" else problem.costs[np.isfinite(problem.costs)])
            name = "capacity" if kind == "FlowNetwork" else "cost"
            if values.size:
                counts, edges = histogram(values.astype(float))
                plot.plot(edges, counts, stepMode="center", fillLevel=0, brush=pg.mkBrush(series_color(0) + "80"),
                          pen=pg.mkPen(series_color(0)))
                self._tables[f"{name}_histogram"] = {"low": edges[:-1], "high": edges[1:], "count": counts}
            else:
                self.empty_note.set("no edges" if kind != "CostMatrix" else "no allowed pair")
            self._name_axes(f"{name.capitalize()} distribution", name, "edges" if kind != "CostMatrix" else "pairs")
            if values.size and counts.size == 1:  # one bar: room either side of it, no negative axis below a
                value, span = float(edges[0] + edges[1]) / 2, 2.0 * float(edges[1] - edges[0])  # non-negative value
                left = value - span if value - span >= 0 or value < 0 else 0.0
                plot.autoRange()
                plot.setXRange(left, value + (value - left), padding=0)  # centred on the value
                return
        elif kind == "CostMatrix":
            image = downsample_image(problem.costs)
            item = pg.ImageItem(image, axisOrder="row-major")
            item.setColorMap(pg.colormap.get("viridis"))
            item.setRect(QtCore.QRectF(0, 0, problem.n_cols, problem.n_rows))
            plot.addItem(item)
            plot.invertY(True)
            self._name_axes("Cost matrix" + (" (block means)" if image.shape != problem.shape else ""), "column", "row")
        elif kind == "AssignmentBatch":
            sides = problem.shapes.min(axis=1).astype(float) if len(problem) else np.zeros(0)
            if sides.size:
                counts, edges = histogram(sides)
                plot.plot(edges, counts, stepMode="center", fillLevel=0, brush=pg.mkBrush(series_color(0) + "80"),
                          pen=pg.mkPen(series_color(0)))
                self._tables["problem_sizes"] = {"low": edges[:-1], "high": edges[1:], "count": counts}
            else:
                self.empty_note.set("no problems")
            self._name_axes("Problem sizes", "rows or columns, the fewer", "problems")
        elif kind == "PointSeries":
            frames = [f for f in problem.frames if f.shape[0]]
            if frames:
                frame_of = np.concatenate([np.full(f.shape[0], t) for t, f in enumerate(problem.frames)])
                pts = np.concatenate(problem.frames)
                step = max(1, pts.shape[0] // 20000)
                cmap = pg.colormap.get("viridis")
                colors = cmap.map(frame_of[::step] / max(problem.n_frames - 1, 1), mode="qcolor")
                plot.addItem(pg.ScatterPlotItem(pts[::step, 0], pts[::step, 1], size=3, pen=None, brush=colors))
                # the data's own ranges (a locked aspect in this wide, short chart stretched x to -2..3
                # for points in 0..1)
                finite = pts[np.all(np.isfinite(pts[:, :2]), axis=1)]
                if finite.size:
                    (x0, y0), (x1, y1) = finite[:, :2].min(axis=0), finite[:, :2].max(axis=0)
                    plot.setRange(xRange=(x0, x1 if x1 > x0 else x0 + 1), yRange=(y0, y1 if y1 > y0 else y0 + 1),
                                  padding=0.03)
                    self._name_axes("Points (x, y), coloured by frame", "x", "y")
                    return
            else:
                self.empty_note.set("no points")
            self._name_axes("Points (x, y), coloured by frame", "x", "y")
        plot.autoRange()

    def _draw_degrees(self, graph) -> None:
        """Degree histograms of both sides; on log axes when the degrees have a heavy tail. A graph
        without edges has nothing to distribute: a note says so instead of a lone bar at degree 0."""
        plot = self.plot
        sides = (("rows", graph.row_degrees()), ("cols", graph.col_degrees()))
        for name, deg in sides:
            counts = np.bincount(deg) if deg.size else np.zeros(0, np.int64)
            self._tables[f"{name}_degree"] = {"degree": np.arange(counts.size), "count": counts}
        if graph.n_edges == 0:
            vertices = graph.n_rows + graph.n_cols
            self.empty_note.set("no edges: every vertex has degree 0" if vertices else "no vertices")
            self._name_axes(DEGREE_TITLE, "degree", "vertices")
            return
        log = log_scale_wanted(np.concatenate([deg for _, deg in sides]), spread=DEGREE_SPREAD)
        self.legend.setVisible(True)
        for i, (name, deg) in enumerate(sides):
            counts = self._tables[f"{name}_degree"]["count"]
            pen = pg.mkPen(series_color(i), width=1.5)
            if log:  # points joined by lines: degree 0 has no place on a log axis, and steps mislead there
                degree = np.flatnonzero(counts)
                degree = degree[degree > 0]
                curve = plot.plot(degree, counts[degree], pen=pen, symbol="o", symbolSize=4, symbolPen=None,
                                  symbolBrush=series_color(i))
            else:
                curve = plot.plot(np.arange(counts.size + 1) - 0.5, counts, stepMode="center", pen=pen)
            self.legend.addItem(curve, name)
        plot.setLogMode(log, log)
        scale = " (log)" if log else ""  # short: the dock's chart is about 100 pixels high
        self._name_axes(DEGREE_TITLE, f"degree{scale}", f"vertices{scale}")

    def _name_axes(self, title: str, x_label: str, y_label: str) -> None:
        set_title(self.plot, title, size="9pt")
        set_axis_label(self.plot, "bottom", x_label)
        set_axis_label(self.plot, "left", y_label)
        self._fit_height()

    def _fit_height(self) -> None:
        """At least the height that shows the left axis' name whole along the axis, with the title
        and the bottom axis above and below it: the axis cuts off what is longer than itself (at 130
        pixels a small window showed "blems" for "problems"). The dock scrolls when it has less."""
        left = self.plot.getAxis("left")
        name = left.label
        along = name.boundingRect().width() - 2 * name.document().documentMargin()  # turned: its length runs up
        # the title, the bottom axis and the margins take the rest of the chart's height, whatever it is
        laid_out = left.height() > 0 and self.charts.height() > left.height()
        around = self.charts.height() - left.height() if laid_out else CHART_AROUND_AXIS
        self.charts.setMinimumHeight(max(CHART_MIN_HEIGHT, int(np.ceil(around + along + 2))))

    def apply_theme(self, palette=None) -> None:
        style_plot_widget(self.charts, palette)
        self.invalidate()
