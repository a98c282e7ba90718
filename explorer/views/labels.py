"""Labels: how the vertex labels (push-relabel ψ / heights, Hungarian duals, auction prices) evolve.

Each "labels" snapshot carries a histogram of one side's finite labels; its bins differ from one
snapshot to the next, so every histogram is re-binned onto one common axis by interpolating its
cumulative counts (mass spread uniformly within a bin) before the snapshots are laid side by side
as a heatmap (iteration × label value, colour = count). Below: the histogram at the replay position
and the label traces of the fixed vertex sample.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from solvers.text import plural

from ..theme import faint, series_color
from ..wording import label_words
from .base import (EmptyNote, View, add_plot, cursor_line, new_layout_widget, no_data_words, no_si_prefix,
                   set_axis_label, set_title)

HEATMAP_COLUMNS = 480
MAX_TRACES = 64


def is_unit(edges: np.ndarray) -> bool:
    """Unit bins centred on whole numbers: the labels are integers (telemetry.label_histogram's choice)."""
    return edges.size > 1 and np.allclose(np.diff(edges), 1.0) and float(edges[0]) % 1 == 0.5


def label_domain(edges: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """The range the labels of one histogram really take: its occupied bins, and for unit bins the
    whole numbers they are centred on (a bin [-0.5, 0.5) holds zeros, not negative labels)."""
    occupied = np.flatnonzero(np.asarray(counts) > 0)
    if not occupied.size:
        return float(edges[0]), float(edges[-1])
    lo, hi = float(edges[occupied[0]]), float(edges[occupied[-1] + 1])
    return (lo + 0.5, hi - 0.5) if is_unit(edges) else (lo, hi)


def common_edges(edge_list: list[np.ndarray], max_bins: int = 128,
                 count_list: list[np.ndarray] | None = None) -> np.ndarray:
    """One axis covering every snapshot's labels: unit bins for small integer ranges, else ``max_bins``
    over the labels' real range (with ``count_list``: the occupied bins, so the unit bins of an all-zero
    snapshot do not stretch the axis below zero)."""
    unit = all(is_unit(e) for e in edge_list)
    if unit or count_list is None:
        lo = min(float(e[0]) for e in edge_list)
        hi = max(float(e[-1]) for e in edge_list)
    else:
        domains = [label_domain(e, c) for e, c in zip(edge_list, count_list)]
        lo, hi = min(d[0] for d in domains), max(d[1] for d in domains)
    if hi <= lo:
        hi = lo + 1.0
    if unit and hi - lo <= max_bins * 2:
        return np.arange(lo, hi + 0.5)
    return np.linspace(lo, hi, max_bins + 1)


def rebin(edges: np.ndarray, counts: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Counts of a histogram (edges, counts) re-binned onto ``target`` edges (mass spread uniformly
    within a source bin). Mass outside the target range goes to its first / last bin, so the total is kept."""
    if counts.size == 0:
        return np.zeros(target.size - 1)
    cumulative = np.concatenate([[0.0], np.cumsum(counts, dtype=np.float64)])
    at = np.interp(target, edges, cumulative)
    out = np.diff(at)
    out[0] += at[0]
    out[-1] += cumulative[-1] - at[-1]
    return out


def heatmap(columns_x: np.ndarray, hists: np.ndarray, x0: float, x1: float, width: int) -> np.ndarray:
    """(bins, width) image of [x0, x1) in ``width`` equal columns: each shows the newest histogram
    taken before the column ends (the first one before any was taken)."""
    ends = x0 + (x1 - x0) * np.arange(1, width + 1) / width
    idx = np.clip(np.searchsorted(columns_x, ends, side="left") - 1, 0, len(columns_x) - 1)
    return hists[idx].T


def histogram_when(run, position: int, snapshot, shown: int, cursor) -> str:
    """When the histogram shown was taken, in words, on the charts' report axis: " at report 46" when
    that is the newest state shown; else which snapshot it is (": last snapshot, report 4 of 46" at
    the end of a run whose final state was not snapshotted)."""
    unit = "report"
    taken = int(run.snapshot_x(position, snapshot))
    now = max(int(shown), taken)
    if taken >= now:
        return f" at {unit} {taken}"
    if cursor is not None:
        return f" at {unit} {taken} (the latest snapshot at {unit} {now})"
    if run.is_active:
        return f" at {unit} {taken} (the latest snapshot; the run is at {unit} {now})"
    return f": last snapshot, {unit} {taken} of {now}"


def column_starts(x0: float, x1: float, width: int) -> np.ndarray:
    return x0 + (x1 - x0) * np.arange(width) / width


class LabelsView(View):
    title = "Labels"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        body = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(body)
        v.setContentsMargins(0, 0, 0, 0)
        bar = QtWidgets.QHBoxLayout()
        self.side_combo = QtWidgets.QComboBox()
        self.log_color = QtWidgets.QCheckBox("Log colour")
        self.log_color.setChecked(True)
        self.info = QtWidgets.QLabel()
        bar.addWidget(QtWidgets.QLabel("side"))
        bar.addWidget(self.side_combo)
        bar.addWidget(self.log_color)
        bar.addSpacing(12)
        bar.addWidget(self.info, 1)
        v.addLayout(bar)
        self.charts = new_layout_widget()
        v.addWidget(self.charts, 1)
        self.set_content(body)

        lay = self.charts.ci
        self.heat_plot = add_plot(lay, 0, 0, "Label distribution over time", "report", "label", colspan=2,
                                  integer_x=True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.heat_plot.addItem(self.image)
        self.colorbar = pg.ColorBarItem(colorMap=pg.colormap.get("viridis"), interactive=False,
                                        width=14)
        self.colorbar.setImageItem(self.image)
        no_si_prefix(self.colorbar)
        lay.addItem(self.colorbar, row=0, col=2)
        self.cursor = cursor_line()
        self.heat_plot.addItem(self.cursor, ignoreBounds=True)
        self.hist_plot = add_plot(lay, 1, 0, "Histogram at the replay position", "label", "vertices")
        self.hist_bars = pg.BarGraphItem(x0=[], x1=[], height=[], brush=series_color(0), pen=None)
        self.hist_plot.addItem(self.hist_bars)
        self.hist_note = EmptyNote(self.hist_plot)
        self.trace_plot = add_plot(lay, 1, 1, "Sampled vertices", "report", "label", integer_x=True)
        self.trace_curve = self.trace_plot.plot(pen=pg.mkPen(faint(series_color(1), 170), width=1))
        lay.layout.setRowStretchFactor(0, 3)
        lay.layout.setRowStretchFactor(1, 2)
        self._tables: dict = {}
        self.side_combo.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.log_color.toggled.connect(lambda *_: self.refresh(force=True))
        self.show_message("Label snapshots appear here while a solver that reports labels runs\n"
                          "(push-relabel ψ, Hungarian duals, auction prices).")

    def has_content(self) -> bool:
        return not self.showing_message and bool(self._tables)

    def export_item(self):
        return self.charts.ci

    def tables(self) -> dict:
        return dict(self._tables)

    def _sides(self, snaps) -> list[str]:
        sides = []
        for _, s in snaps:
            for key in s.data:
                if key.endswith(".hist_counts"):
                    side = key[: -len(".hist_counts")]
                    if side not in sides:
                        sides.append(side)
        return sides

    def _sync_sides(self, sides: list[str]) -> str | None:
        have = [self.side_combo.itemText(i) for i in range(self.side_combo.count())]
        if have != sides:
            current = self.side_combo.currentText()
            self.side_combo.blockSignals(True)
            self.side_combo.clear()
            self.side_combo.addItems(sides)
            if current in sides:
                self.side_combo.setCurrentText(current)
            self.side_combo.blockSignals(False)
        return self.side_combo.currentText() or None

    def redraw(self) -> None:
        run = self.session.current_run
        if run is None:
            self._tables = {}
            self.show_message("Label snapshots appear here while a solver that reports labels runs\n"
                              "(push-relabel ψ, Hungarian duals, auction prices).")
            return
        run.sync()
        n = self.session.visible_length(run)
        all_snaps = run.snapshots("labels")
        snaps = [(p, s) for p, s in all_snaps if self.session.cursor is None or p <= n]
        if not all_snaps:
            self._tables = {}
            state = no_data_words(run, "waiting for label snapshots…", f"{run.algorithm} reported no label snapshots.")
            self.show_message(f"{run.label}: {state}")
            return
        side = self._sync_sides(self._sides(all_snaps))
        # a snapshot whose labels are all at the cap (gpr's final check on a perfect matching: no
        # vertex is reachable) has an empty histogram; it is kept, and drawn as what it is
        usable = [(p, s) for p, s in snaps if f"{side}.hist_counts" in s.data]
        all_usable = [(p, s) for p, s in all_snaps if f"{side}.hist_counts" in s.data]
        finite = [s for _, s in all_usable if s.data[f"{side}.hist_counts"].size]
        if not finite:
            self._tables = {}
            self.show_message(f"{run.label}: no finite {side} labels recorded.")
            return
        self.show_message(None)
        name = run.label_name
        # one axis for the whole run, so the picture does not jump while scrubbing
        edges = common_edges([s.data[f"{side}.hist_edges"] for s in finite],
                             count_list=[s.data[f"{side}.hist_counts"] for s in finite])
        xs_all = np.array([run.snapshot_x(p, s) for p, s in all_usable])
        if not usable:
            usable = all_usable[:1]
        hists = np.stack([rebin(s.data[f"{side}.hist_edges"], s.data[f"{side}.hist_counts"], edges)
                          for _, s in usable])
        xs = xs_all[: len(usable)]
        # the run's iterations, one unit each: a snapshot holds until the next one (the last: to the end)
        run_x = run.columns.x()
        x0 = float(min(xs_all[0], run_x[0])) if run_x.size else float(xs_all[0])
        x1 = float(max(xs_all[-1], run_x[-1] if run_x.size else xs_all[-1])) + 1.0
        width = int(min(HEATMAP_COLUMNS, max(1, np.ceil(x1 - x0))))
        image = heatmap(xs, hists, x0, x1, width)
        x_end = float(run_x[n - 1]) if self.session.cursor is not None and 0 < n <= run_x.size else x1
        image[:, column_starts(x0, x1, width) > x_end + 1e-9] = np.nan  # after the replay position: empty
        image[image <= 0] = np.nan  # empty bins show the background, so the occupied band stands out
        shown = np.log1p(image) if self.log_color.isChecked() else image
        finite = shown[np.isfinite(shown)]
        top = float(finite.max()) if finite.size and finite.max() > 0 else 1.0
        self.image.setImage(shown, autoLevels=False, levels=(0.0, top))
        self.image.setRect(QtCore.QRectF(x0, float(edges[0]), x1 - x0, float(edges[-1] - edges[0])))
        self.colorbar.setLevels((0.0, top))
        set_axis_label(self.colorbar, "axis", "log(1 + count)" if self.log_color.isChecked() else "count")
        set_title(self.heat_plot, f"{name} distribution ({side}) — {run.label}")
        set_axis_label(self.heat_plot, "left", name)
        set_axis_label(self.heat_plot, "bottom", "report" if run.columns.monotone else "report (across solves)")
        self.cursor.setVisible(self.session.cursor is not None)
        self.cursor.setValue(x_end)
        lo, hi = float(edges[0]), float(edges[-1])
        self._clamp(self.heat_plot, (x0, x1), (lo, hi))
        self._clamp(self.trace_plot, (x0, x1), (lo, hi))  # the heatmap's iterations, so the two line up
        self._clamp(self.hist_plot, (lo, hi), None)

        pos, last = usable[-1]
        e, c = last.data[f"{side}.hist_edges"], last.data[f"{side}.hist_counts"]
        # the whole run's label range, as the heatmap: a lone bin is not stretched across the chart,
        # and the axis holds still while scrubbing; a bin far narrower than that range (the labels of
        # one step bunched together) is widened to stay visible
        centre, half = (e[:-1] + e[1:]) / 2, np.maximum((e[1:] - e[:-1]) / 2, (edges[-1] - edges[0]) / 400)
        self.hist_bars.setOpts(x0=centre - half, x1=centre + half, height=c.astype(float))
        unreachable = last.meta.get(f"{side}.unreachable")
        extra = f", {unreachable} at the cap" if unreachable and c.size else ""
        set_title(self.hist_plot, f"{name} histogram{histogram_when(run, pos, last, n, self.session.cursor)}{extra}")
        if c.size:
            self.hist_note.set(None)
        else:
            self.hist_note.set(f"all {unreachable} {side} at the cap (unreachable):\nnone can reach a free vertex, so\n"
                               f"there is no finite {name} to draw\n(the heatmap's column is empty too)"
                               if unreachable else
                               f"no finite {side} labels in this snapshot")
        set_axis_label(self.hist_plot, "bottom", name)
        self._draw_traces(run, usable, side, name, float(edges[-1]))
        self.info.setText(f"{len(usable)} of {plural(len(all_usable), 'snapshot')} · label: {label_words(name)}")
        centers = 0.5 * (edges[:-1] + edges[1:])
        self._tables = {
            "heatmap": {"report": np.repeat(xs, centers.size), "label": np.tile(centers, xs.size),
                        "count": hists.reshape(-1)},
            "histogram": {"bin_low": e[:-1], "bin_high": e[1:], "count": c},
        }

    def _clamp(self, plot: pg.PlotItem, x: tuple[float, float], y: tuple[float, float] | None) -> None:
        """Show exactly the data's domain (no padding below a label of 0, no negative counts) and keep
        panning and zooming inside it; ``y`` None: counts from 0 up, the height following the data."""
        key = (x, y)
        if getattr(plot, "_clamped", None) == key:
            return
        plot._clamped = key
        view = plot.getViewBox()
        if y is None:
            view.setLimits(xMin=x[0], xMax=x[1], yMin=0.0, yMax=None)
            view.setXRange(*x, padding=0)
            view.enableAutoRange(y=True)
        else:
            view.setLimits(xMin=x[0], xMax=x[1], yMin=y[0], yMax=y[1])
            view.setRange(xRange=x, yRange=y, padding=0)

    def _draw_traces(self, run, usable, side, name, top: float) -> None:
        key = f"{side}.sample"
        rows = [(run.snapshot_x(p, s), s.data[key]) for p, s in usable if key in s.data]
        if not rows:
            self.trace_curve.setData([], [])
            return
        width = min(min(r[1].size for r in rows), MAX_TRACES)
        if width == 0:
            self.trace_curve.setData([], [])
            return
        xs = np.array([r[0] for r in rows])
        values = np.stack([np.asarray(r[1][:width], dtype=np.float64) for r in rows])  # (snapshots, k)
        # a new solve (tracking: the next frame pair) samples other vertices: break the traces there
        its = np.array([s.iteration for p, s in usable if key in s.data])
        restarts = np.flatnonzero(np.diff(its) < 0) + 1
        xs = np.insert(xs, restarts, np.nan)
        values = np.insert(values, restarts, np.nan, axis=0)
        # labels past every histogram's range are at the cap (unreachable): leave them out of the traces
        values[~np.isfinite(values) | (values > top)] = np.nan
        # all traces in one item: each vertex's polyline separated by a NaN break
        tx = np.concatenate([np.append(xs, np.nan) for _ in range(width)])
        ty = np.concatenate([np.append(values[:, k], np.nan) for k in range(width)])
        few = xs.size < 24  # a trace of a few snapshots is a few points: mark them
        self.trace_curve.setData(tx, ty, connect="finite", symbol="o" if few else None, symbolSize=4,
                                 symbolPen=None, symbolBrush=series_color(1))
        set_title(self.trace_plot, f"{name} of {width} sampled {side}")
        set_axis_label(self.trace_plot, "left", name)
        set_axis_label(self.trace_plot, "bottom", "report" if run.columns.monotone else "report (across solves)")
