"""Workload: how evenly work spreads over warps, per kernel launch, from "workload" snapshots.

Each launch becomes a box plot of per-warp work divided by the launch's mean (1 = perfectly even):
box = quartiles, whiskers = min..max, tick = median. Measured clock64 "cycles" are used where the
run recorded them, the modelled cost otherwise. When the comparison holds runs whose meta ``mode``
differs (WBPR's thread-centric vs vertex-centric), their boxes are drawn side by side.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

import solvers
from solvers.text import plural

from ..theme import faint, series_color
from .base import View, add_plot, add_side_legend, new_layout_widget, no_data_words, set_title

MEASURES = (("auto", "cycles where measured, else modelled"), ("cycles", "measured cycles"),
            ("modelled", "modelled work"))


def launch_stats(work: np.ndarray) -> dict:
    """Quantiles of one launch's per-warp work normalised to its mean (NaN when there is no work)."""
    w = np.asarray(work, dtype=np.float64)
    w = w[np.isfinite(w)]
    mean = float(w.mean()) if w.size else 0.0
    if mean <= 0:
        return {k: np.nan for k in ("min", "q1", "median", "q3", "max")} | {"mean": mean, "warps": int(w.size)}
    q = np.quantile(w / mean, [0.0, 0.25, 0.5, 0.75, 1.0])
    return {"min": q[0], "q1": q[1], "median": q[2], "q3": q[3], "max": q[4], "mean": mean, "warps": int(w.size)}


def workload_series(run, measure: str = "auto", upto: int | None = None) -> dict:
    """Per-launch box statistics of one run; columns are arrays (empty when the run has no workload)."""
    rows = []
    for pos, snap in run.snapshots("workload", upto):
        key = "cycles" if (measure == "cycles" or (measure == "auto" and "cycles" in snap.data)) else "modelled"
        if key not in snap.data:
            continue
        st = launch_stats(snap.data[key])
        st.update(launch=snap.meta.get("launch", len(rows)), iteration=snap.iteration, measure=key,
                  kernel=str(snap.meta.get("kernel", "")), mode=str(snap.meta.get("mode", "")))
        rows.append(st)
    keys = ("launch", "iteration", "kernel", "mode", "measure", "warps", "mean", "min", "q1", "median", "q3", "max")
    return {k: np.array([r[k] for r in rows], dtype=object if k in ("kernel", "mode", "measure") else np.float64)
            for k in keys}


def launch_ticks(launches, max_labels: int = 12) -> list:
    """Integer ticks for an axis of boxes at x = 0, 1, ..., labelled with their launch numbers
    (at most ``max_labels`` of them, evenly picked)."""
    launches = [int(v) for v in launches]
    if not launches:
        return [[], []]
    step = max(1, int(np.ceil(len(launches) / max_labels)))
    return [[(float(i), str(launches[i])) for i in range(0, len(launches), step)], []]


def set_launch_axis(plot: pg.PlotItem, launches, boxes: int | None = None) -> None:
    """Boxes sit at ordinals; the axis names the launch each one is (never 0.5 of a launch) and
    shows ``boxes`` of them (default: one per launch)."""
    plot.getAxis("bottom").setTicks(launch_ticks(launches))
    n = len(launches) if boxes is None else boxes
    plot.setXRange(-0.6, max(n - 1, 0) + 0.6, padding=0)


def run_mode(run) -> str:
    modes = {str(s.meta.get("mode", "")) for _, s in run.snapshots("workload")}
    modes.discard("")
    return "/".join(sorted(modes))


def mode_words(run) -> str:
    """" mode=vc" for a legend when the run's workload mode is an option of its algorithm (wbpr's
    vc / tc); "" when it is the kernel's fixed layout (gpr's snapshots say "column": no option of
    gpr's, so a legend naming it would send a user looking for one)."""
    mode = run_mode(run)
    if not mode:
        return ""
    algo = solvers.algorithms().get(run.algorithm)  # None: a record of an algorithm this build lacks
    return f" mode={mode}" if algo is None or "mode" in {o.name for o in algo.options} else ""


def draw_boxes(plot: pg.PlotItem, stats: dict, color, offset: float = 0.0, width: float = 0.6) -> list:
    """Box plots at x = ordinal launch + offset. Returns the items added."""
    n = stats["median"].size
    if n == 0:
        return []
    x = np.arange(n, dtype=np.float64) + offset
    q1, q3 = stats["q1"].astype(float), stats["q3"].astype(float)
    med, lo, hi = stats["median"].astype(float), stats["min"].astype(float), stats["max"].astype(float)
    ok = np.isfinite(med)
    if not ok.any():
        return []
    x, q1, q3, med, lo, hi = x[ok], q1[ok], q3[ok], med[ok], lo[ok], hi[ok]
    boxes = pg.BarGraphItem(x=x, y0=q1, height=np.maximum(q3 - q1, 1e-3), width=width,
                            brush=faint(color, 150), pen=pg.mkPen(color, width=1))
    whiskers = pg.ErrorBarItem(x=x, y=med, top=hi - med, bottom=med - lo, beam=width * 0.5,
                               pen=pg.mkPen(color, width=1))
    medians = pg.ScatterPlotItem(x=x, y=med, symbol="s", size=5, brush=pg.mkBrush("w"), pen=pg.mkPen(color))
    items = [whiskers, boxes, medians]
    for item in items:
        plot.addItem(item)
    return items


class WorkloadView(View):
    title = "Workload"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        body = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(body)
        v.setContentsMargins(0, 0, 0, 0)
        bar = QtWidgets.QHBoxLayout()
        self.measure_combo = QtWidgets.QComboBox()
        for key, text in MEASURES:
            self.measure_combo.addItem(text, key)
        self.info = QtWidgets.QLabel()
        bar.addWidget(QtWidgets.QLabel("measure"))
        bar.addWidget(self.measure_combo)
        bar.addSpacing(12)
        bar.addWidget(self.info, 1)
        v.addLayout(bar)
        self.charts = new_layout_widget()
        v.addWidget(self.charts, 1)
        self.set_content(body)
        lay = self.charts.ci
        self.box_plot = add_plot(lay, 0, 0, "Per-warp work per launch (÷ launch mean)", "launch", "work / mean")
        self.imbalance_plot = add_plot(lay, 1, 0, "Imbalance: busiest warp ÷ mean", "launch", "max / mean")
        self.imbalance_plot.setXLink(self.box_plot)
        self.legend = add_side_legend(lay, 0, 1, rowspan=2)  # beside the charts: never over a box or whisker
        self.box_plot.addItem(pg.InfiniteLine(pos=1.0, angle=0, pen=pg.mkPen("#888", style=pg.QtCore.Qt.PenStyle.DotLine)))
        lay.layout.setRowStretchFactor(0, 3)
        lay.layout.setRowStretchFactor(1, 2)
        self.items: list = []
        self._tables: dict = {}
        self.measure_combo.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.show_message("Per-warp workload appears here for GPU solvers that report it (G-PR, WBPR).")

    def has_content(self) -> bool:
        return not self.showing_message and bool(self._tables)

    def export_item(self):
        return self.charts.ci

    def tables(self) -> dict:
        return dict(self._tables)

    def runs_to_show(self) -> list:
        """The current run, plus compared runs with workload in another mode (TC vs VC side by side)."""
        run = self.session.current_run
        if run is None:
            return []
        shown = [run]
        mode = run_mode(run)
        for other in self.session.comparison:
            if other is run or not other.snapshots("workload"):
                continue
            other_mode = run_mode(other)
            if other_mode and other_mode != mode and other_mode not in {run_mode(r) for r in shown}:
                shown.append(other)
        return shown

    def redraw(self) -> None:
        for plot, item in self.items:
            plot.removeItem(item)
        self.items = []
        self.legend.clear()
        run = self.session.current_run
        if run is None:
            self._tables = {}
            self.show_message("Per-warp workload appears here for GPU solvers that report it (G-PR, WBPR).")
            return
        run.sync()
        runs = self.runs_to_show()
        measure = self.measure_combo.currentData()
        series = []
        for r in runs:
            upto = self.session.visible_length(r) if r is run and self.session.cursor is not None else None
            st = workload_series(r, measure, upto)
            if st["median"].size or r is run:
                series.append((r, st))
        if not series or series[0][1]["median"].size == 0:
            self._tables = {}
            has_any = bool(run.snapshots("workload"))
            state = ("no launch before the replay position." if has_any else
                     no_data_words(run, "waiting for workload snapshots…",
                                   f"{run.algorithm} reports no per-warp workload (GPU push-relabel solvers do)."))
            self.show_message(f"{run.label}: {state}")
            return
        self.show_message(None)
        k = len(series)
        width = 0.7 / k
        self._tables = {}
        for i, (r, st) in enumerate(series):
            color = series_color(i)
            offset = (i - (k - 1) / 2) * width
            name = f"{r.algorithm}{mode_words(r)} (#{r.id})"
            items = draw_boxes(self.box_plot, st, color, offset, width * 0.85)
            self.items += [(self.box_plot, it) for it in items]
            if items:
                self.legend.addItem(items[1], name)
            x = np.arange(st["max"].size, dtype=float)
            curve = self.imbalance_plot.plot(x, st["max"].astype(float), pen=pg.mkPen(color, width=1.5),
                                             symbol="o", symbolSize=4, symbolBrush=color)
            self.items.append((self.imbalance_plot, curve))
            self._tables[f"run{r.id}"] = st
        measures = sorted({m for _, st in series for m in st["measure"]})
        names = {"modelled": "modelled work", "cycles": "measured cycles"}
        set_title(self.box_plot, f"Per-warp {' / '.join(names.get(m, m) for m in measures)} per launch "
                                 "(÷ launch mean)")
        last = series[0][1]
        boxes = max(st["median"].size for _, st in series)
        set_launch_axis(self.box_plot, last["launch"], boxes)
        set_launch_axis(self.imbalance_plot, last["launch"], boxes)
        launches = plural(int(last["median"].size), "launch", "launches")
        self.info.setText(f"{launches} snapshotted · median imbalance (max/mean) "
                          f"{np.nanmedian(last['max'].astype(float)):.2f}")
