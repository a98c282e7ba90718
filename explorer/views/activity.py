"""Activity: active-vertex count and the objective (matching size / cost / flow) per report, with the
steps other than the main one (global relabels, dual updates, ε-scaling...) marked as events.

A run made of several solves (tracking: one or more per frame pair) restarts its iteration counter and
clock at each: the x axis then counts reports across the solves, each solve's start is marked (with
its frame pair, as recorded when the solve began: RunState.solve_starts), and curves are not joined
across solves. A
solver that runs as one call (the scipy-backed ones) reports only its start and end: the view says
so instead of drawing a lone point.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ..theme import PHASE_COLORS, faint, series_color
from ..wording import field_words
from .base import (ENDPOINT_PHASES, View, add_plot, add_side_legend, cursor_line, new_layout_widget, no_data_words,
                   reports_intermediate_state, set_axis_label, set_points, set_title, step_path, time_unit)

VALUE_NAMES = {"matching": "matching size", "flow": "flow value", "assignment": "cost", "points": "cost"}
MAX_EVENT_LINES = 40  # beyond this, events are drawn as markers only (hundreds of lines hide the data)
LABEL_GAP_PX = 4  # frame-pair labels closer than this on screen: the later one is hidden
MAX_SOLVE_LABELS = 30  # frame-pair labels over the solve boundaries; beyond this every k-th
# extras that are an amount per event, not a state: drawn point to point; every other extra (max_level,
# epsilon, unreachable, ...) holds its value until it is next reported, so it is drawn as steps
EVENT_EXTRAS = frozenset({"delta", "paths"})


def event_segments(x: np.ndarray, y_low: float, y_high: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertical segments at ``x`` as one connect="pairs" polyline."""
    xs = np.repeat(x, 2)
    ys = np.tile([y_low, y_high], x.size)
    return xs, ys


def solve_starts(columns, n: int | None = None) -> np.ndarray:
    """Report indices where a new solve begins (its clock or iteration counter went back), after the
    first: for a run record written before records kept where each solve began."""
    m = columns.n if n is None else min(n, columns.n)
    if m < 2:
        return np.zeros(0, dtype=np.int64)
    elapsed, its = columns.column("elapsed", m), columns.column("iteration", m)
    return np.flatnonzero((np.diff(elapsed) < 0) | (np.diff(its) < 0)) + 1


def reported_solves(run) -> list:
    """The run's solves that reported something, in order (SolveStart, with its frame pair where known).
    Several solves starting at one report: all but the last reported nothing (the last's reports
    begin there); a solve that has not reported yet is left out."""
    n = run.columns.n
    by_position = {}
    for solve in run.solve_starts:
        if 0 <= solve.position < n:
            by_position[solve.position] = solve
    return [by_position[p] for p in sorted(by_position)]


GATE_NOTE = "*&nbsp;solved&nbsp;again&nbsp;within&nbsp;the&nbsp;gate"  # beside the events, what a "*" label means


def solve_label(solve) -> tuple[str, str] | None:
    """(label, tooltip) of a solve of a tracking run: its frame pair, "*" for a re-solve within the
    automatic gate; None for a solve of no frame pair (a single solve)."""
    gated = solve.unit == "gated frame pair"
    if solve.item is not None:
        t = solve.item
        return (f"{t}→{t + 1}" + ("*" if gated else ""),
                f"frames {t} and {t + 1}" + (f", solved again within the gate (round {solve.sweep})" if gated else ""))
    if gated:
        return "*", (f"gated frame pair {solve.index + 1} of {solve.total}, solved within the gate (round "
                     f"{solve.sweep}); which frame pair it is was not recorded")
    return None


class ActivityView(View):
    title = "Activity"

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        body = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(body)
        v.setContentsMargins(0, 0, 0, 0)
        bar = QtWidgets.QHBoxLayout()
        self.x_mode = QtWidgets.QComboBox()
        self.x_mode.addItem("report", "iteration")
        self.x_mode.addItem("elapsed time", "time")
        self.log_scale = QtWidgets.QCheckBox("Log scale")
        self.extra_combo = QtWidgets.QComboBox()
        self.extra_combo.addItem("(none)", None)
        self.events_label = QtWidgets.QLabel(wordWrap=True)  # a narrow window: two lines, not cut off
        self.events_label.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        bar.addWidget(QtWidgets.QLabel("x axis"))
        bar.addWidget(self.x_mode)
        bar.addWidget(self.log_scale)
        bar.addSpacing(12)
        bar.addWidget(QtWidgets.QLabel("extra"))
        bar.addWidget(self.extra_combo)
        bar.addSpacing(12)
        bar.addWidget(self.events_label, 1)
        v.addLayout(bar)
        self.charts = new_layout_widget()
        v.addWidget(self.charts, 1)
        self.set_content(body)

        lay = self.charts.ci
        self.active_plot = add_plot(lay, 0, 0, "Active vertices", "", "active", integer_x=True)
        self.value_plot = add_plot(lay, 1, 0, "Objective", "report", "value", integer_x=True)
        self.extra_plot = add_plot(lay, 2, 0, "", "report", "", integer_x=True)
        self.legend = add_side_legend(lay, 0, 1, rowspan=3)
        self.value_plot.setXLink(self.active_plot)
        self.extra_plot.setXLink(self.active_plot)
        self.plots = (self.active_plot, self.value_plot, self.extra_plot)
        for p in self.plots:
            p.setDownsampling(auto=True, mode="peak")
            p.setClipToView(True)
        self.active_curve = self.active_plot.plot(pen=pg.mkPen(series_color(0), width=1.5), name="active")
        self.value_curve = self.value_plot.plot(pen=pg.mkPen(series_color(2), width=1.5), name="value")
        self.extra_curve = self.extra_plot.plot(pen=pg.mkPen(series_color(4), width=1.5))
        self.extra_marks = self.extra_plot.plot(pen=None, symbol="o", symbolSize=5, symbolPen=None,
                                                symbolBrush=series_color(4))  # where a step was reported
        self.legend.addItem(self.active_curve, "active vertices")
        self.legend.addItem(self.value_curve, "objective")
        # where each solve of a several-solve run (tracking) starts, and which frame pair it is
        self.solve_pen = pg.mkPen("#888", width=1, style=QtCore.Qt.PenStyle.DashLine)
        self.solve_lines = []
        for plot in self.plots:
            line = pg.PlotDataItem([], [], pen=self.solve_pen)
            plot.addItem(line, ignoreBounds=True)  # they span the chart's height: never widen its range
            self.solve_lines.append(line)
        self.solve_labels: list[pg.TextItem] = []
        self.active_plot.getViewBox().sigTransformChanged.connect(self._thin_solve_labels)  # zoom, pan, resize
        self.event_items: dict = {}  # phase -> (markers, lines)
        self._pinned = None
        self.cursors = [cursor_line() for _ in range(3)]
        for plot, line in zip(self.plots, self.cursors):
            plot.addItem(line, ignoreBounds=True)
        self.extra_plot.hide()
        self._table: dict = {}
        self.x_mode.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.log_scale.toggled.connect(lambda *_: self.refresh(force=True))
        self.extra_combo.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.show_message("Run a solver (or open a run record) to see its activity.")

    def has_content(self) -> bool:
        return not self.showing_message and bool(self._table.get("report", np.zeros(0)).size)

    def export_item(self):
        return self.charts.ci

    def tables(self) -> dict:
        return {"activity": self._table} if self._table else {}

    def _sync_extra_keys(self, keys: list[str]) -> None:
        have = [self.extra_combo.itemData(i) for i in range(1, self.extra_combo.count())]
        if have == keys:
            return
        current = self.extra_combo.currentData()
        self.extra_combo.blockSignals(True)
        self.extra_combo.clear()
        self.extra_combo.addItem("(none)", None)
        for k in keys:
            self.extra_combo.addItem(field_words(k), k)
            self.extra_combo.setItemData(self.extra_combo.count() - 1, f"reported as {k}",
                                         QtCore.Qt.ItemDataRole.ToolTipRole)
        index = self.extra_combo.findData(current) if current is not None else -1
        if index < 0 and keys and not have:
            # a useful default: the first of the documented scalars this run reports
            for preferred in ("max_level", "epsilon", "dual_objective", "unassigned", "excess_total"):
                if preferred in keys:
                    index = self.extra_combo.findData(preferred)
                    break
        self.extra_combo.setCurrentIndex(max(index, 0))
        self.extra_combo.blockSignals(False)

    def redraw(self) -> None:
        run = self.session.current_run
        if run is None:
            self._table = {}
            self.show_message("Run a solver (or open a run record) to see its activity.")
            return
        run.sync()
        cols = run.columns
        n = self.session.visible_length(run)
        if cols.n == 0:
            self._table = {}
            state = no_data_words(run, "waiting for the first report…", "this run sent no telemetry reports.")
            self.show_message(f"{run.label}: {state}")
            return
        if not run.is_active and not reports_intermediate_state(cols):
            self._table = {}
            self.show_message(f"{run.label}: this solver reports no intermediate state.\n\n"
                              f"{run.algorithm} runs as one call and reports only its start and its end, so "
                              "there is no activity to draw;\nits result is in the log and the Compare table.")
            return
        self.show_message(None)
        x_mode = self.x_mode.currentData()
        several = not cols.monotone  # several solves (tracking): the count axis is reports, in order
        # the count axis is telemetry reports (IterationColumns.x), named so: the solver's iteration
        # count (Result.iterations, in the panel and the table) is another number
        self.x_mode.setItemText(0, "report (across solves)" if several else "report")
        factor, unit = time_unit(float(cols.column("time")[-1]))
        x_all = cols.column("time") * factor if x_mode == "time" else cols.x()
        x = x_all[:n]
        count_name = "report (across solves)" if several else "report"
        x_label = f"elapsed time ({unit})" if x_mode == "time" else count_name
        active = cols.column("active", n).astype(np.float64)
        active[active < 0] = np.nan
        value = cols.column("value", n)
        log = self.log_scale.isChecked()
        for p in (self.active_plot, self.extra_plot):
            p.setLogMode(x=False, y=log)
        for p in self.plots:
            p.getAxis("bottom").set_integer(x_mode != "time")
        set_axis_label(self.active_plot, "bottom", "")
        set_axis_label(self.value_plot, "bottom", x_label)
        set_axis_label(self.extra_plot, "bottom", x_label)
        value_name = VALUE_NAMES.get(run.problem_kind, "value")
        set_title(self.value_plot, f"Objective: {value_name}" + (" of each solve" if several else ""))
        set_axis_label(self.value_plot, "left", value_name)
        set_title(self.active_plot, f"Active vertices — {run.label}")
        solves = reported_solves(run)
        # where each solve after the first begins; a record without solve starts: where the clock restarts
        starts_all = (np.array([s.position for s in solves[1:]], dtype=np.int64) if solves
                      else solve_starts(cols))
        starts = starts_all[starts_all < n]
        set_points(self.active_curve, x, _log_safe(active, log), starts)
        set_points(self.value_curve, x, value, starts)

        self._sync_extra_keys(sorted(cols.extras))
        extra_key = self.extra_combo.currentData()
        if extra_key:
            extra = cols.column(f"extra.{extra_key}", n)
            self.extra_plot.show()
            set_title(self.extra_plot, field_words(extra_key).capitalize())
            set_axis_label(self.extra_plot, "left", field_words(extra_key))
            shown = _log_safe(extra, log)
            if extra_key in EVENT_EXTRAS:
                set_points(self.extra_curve, x, shown)
                self.extra_marks.setData([], [])
            else:
                self.extra_curve.setSymbol(None)
                self.extra_curve.setData(*step_path(x, shown, x[-1] if x.size else None))
                ok = np.isfinite(shown)
                sparse = np.count_nonzero(ok) < 200
                self.extra_marks.setData(x[ok] if sparse else [], shown[ok] if sparse else [])
        else:
            self.extra_plot.hide()

        events = self._draw_events(cols, x, active, value, n, ignore=ENDPOINT_PHASES if several else frozenset())
        active_all = cols.column("active").astype(np.float64)
        active_all[active_all < 0] = np.nan
        extra_all = cols.column(f"extra.{extra_key}") if extra_key else None
        self._draw_solves(solves, x_all, starts_all, (active_all, cols.column("value"), extra_all), log)
        gated = starts_all.size and any(s.unit == "gated frame pair" for s in solves)  # their labels end in "*"
        self.events_label.setText("&nbsp;&nbsp; ".join(filter(None, [events, GATE_NOTE if gated else ""])))
        self._pin_ranges(x_all, cols, log)
        cursor_on = self.session.cursor is not None and n > 0
        for line in self.cursors:
            line.setVisible(cursor_on)
            if cursor_on:
                line.setValue(float(x[-1]))
        phases = cols.column("phase", n)
        self._table = {"report": x_all[:n] if x_mode != "time" else cols.x(n),
                       "reported_iteration": cols.column("iteration", n), "elapsed_s": cols.column("elapsed", n),
                       "phase": np.array([cols.phases[c] for c in phases], dtype=object),
                       "active": cols.column("active", n), "value": value}
        for key in sorted(cols.extras):
            self._table[f"extra.{key}"] = cols.column(f"extra.{key}", n)

    def _draw_solves(self, solves: list, x_all: np.ndarray, starts: np.ndarray, values: tuple, log: bool) -> None:
        """Dashed lines where each solve after the first starts; over them, the frame pair it solved
        (``solves``: those that reported, as recorded; empty for a record that did not keep them)."""
        for label in self.solve_labels:
            self.active_plot.removeItem(label)
        self.solve_labels = []
        if not starts.size:
            for line in self.solve_lines:
                line.setData([], [])
            return
        # a boundary halfway between the last report of one solve and the first of the next
        edges = (x_all[starts - 1] + x_all[starts]) / 2
        for line, y, logged in zip(self.solve_lines, values, (log, False, log)):
            lo, hi = _extent(y, logged)
            line.setLogMode(False, logged)
            line.setData(*event_segments(edges, lo, hi), connect="pairs")
        labels = [solve_label(s) for s in solves]
        if not any(labels):
            return
        low, top = _extent(values[0], log)
        if log:  # a TextItem sits in the view's coordinates
            low, top = np.log10(low), np.log10(top)
        bounds = np.concatenate([[x_all[0]], edges])
        step = max(1, int(np.ceil(len(labels) / MAX_SOLVE_LABELS)))
        for row, k in enumerate(range(0, len(labels), step)):
            if labels[k] is None:
                continue
            text, tip = labels[k]
            item = pg.TextItem(text, color="#888", anchor=(0, 0))
            item.setToolTip(tip)
            # two rows of labels, alternating, so the labels of short solves do not run into each other
            item.setPos(float(bounds[k]), top - (row % 2) * 0.12 * (top - low))
            self.active_plot.addItem(item, ignoreBounds=True)
            self.solve_labels.append(item)
        self._thin_solve_labels()

    def _thin_solve_labels(self, *_) -> None:
        """Hide a frame-pair label that would overlap one shown before it (on screen, at the chart's
        present size and zoom: the gated re-solves of a tracking run are often a few pixels apart,
        and in a short chart the two rows of labels overlap too); zooming in shows it again."""
        shown = []  # the scene rectangles of the labels kept, each widened by the gap
        for item in self.solve_labels:
            item.setVisible(True)  # (a hidden TextItem keeps its old placement)
            item.updateTransform(force=True)  # placed for the view's present scale before it is measured
            rect = item.mapRectToScene(item.boundingRect()).adjusted(-LABEL_GAP_PX, 0, LABEL_GAP_PX, 0)
            fits = not any(rect.intersects(other) for other in shown)
            item.setVisible(fits)
            if fits:
                shown.append(rect)

    def _draw_events(self, cols, x, active, value, n, ignore=frozenset()) -> str:
        """Markers (active plot) and vertical lines (objective plot) per non-main phase. The items
        are kept and only their data changes, so scrubbing does not rebuild the scene. Returns the
        events' line (their colours and counts)."""
        main = cols.main_phase()
        codes = cols.column("phase", n)
        log = self.log_scale.isChecked()
        full_value = cols.column("value")
        finite_value = full_value[np.isfinite(full_value)]
        texts, shown = [], []
        for code, phase in enumerate(cols.phases):
            if phase == main or phase in ignore:
                continue
            color = PHASE_COLORS[len(shown) % len(PHASE_COLORS)]
            shown.append(phase)
            where = np.flatnonzero(codes == code)
            # non-breaking spaces: a narrow window wraps between events, never inside one ("reverse ×" / "78")
            texts.append(f"<span style='color:{color}'>■</span>&nbsp;{phase}&nbsp;×&nbsp;{where.size}")
            scatter, lines = self._event_items(phase, color)
            ex = x[where]
            marker_y = np.where(np.isfinite(active[where]), active[where],
                                np.nanmax(active) if np.isfinite(active).any() else 0)
            if log:  # an event at 0 active vertices still shows, at the bottom of the log axis
                positive = active[np.isfinite(active) & (active > 0)]
                marker_y = np.where(marker_y > 0, marker_y, positive.min() if positive.size else 1.0)
            scatter.setLogMode(False, log)
            scatter.setData(ex, marker_y)
            total = int(np.count_nonzero(cols.column("phase") == code))
            if total <= MAX_EVENT_LINES and finite_value.size:  # the whole run's count: no flicker while scrubbing
                lo, hi = float(finite_value.min()), float(finite_value.max())
                if hi == lo:
                    lo, hi = lo - 0.5, hi + 0.5
                lines.setData(*event_segments(ex, lo, hi), connect="pairs")
            else:
                lines.setData([], [])
        for phase in [p for p in self.event_items if p not in shown]:
            scatter, lines = self.event_items.pop(phase)
            self.active_plot.removeItem(scatter)
            self.value_plot.removeItem(lines)
            self.legend.removeItem(scatter)
        return "events: " + "  ".join(texts) if texts else (f"one phase: {main}" if main else "")

    def _event_items(self, phase: str, color: str):
        items = self.event_items.get(phase)
        if items is None:
            # a PlotDataItem (not a bare ScatterPlotItem) so the markers follow the log axis
            scatter = pg.PlotDataItem([], [], pen=None, symbol="t", symbolSize=8, symbolBrush=pg.mkBrush(color),
                                      symbolPen=None)
            lines = pg.PlotDataItem([], [], pen=pg.mkPen(faint(color, 110), width=1))
            self.active_plot.addItem(scatter)
            self.value_plot.addItem(lines)
            self.legend.addItem(scatter, phase)
            items = self.event_items[phase] = (scatter, lines)
        return items

    def _pin_ranges(self, x_all, cols, log) -> None:
        """While replaying, keep the whole run's axes so the curves grow into a fixed frame (and the
        axes need no repaint); live, follow the data."""
        replay = self.session.cursor is not None
        if not replay:
            if self._pinned:
                for p in self.plots:
                    p.enableAutoRange()
                self._pinned = None
            return
        key = (id(self.session.current_run), cols.n, self.x_mode.currentData(), log, self.extra_combo.currentData())
        if self._pinned == key:
            return
        self._pinned = key
        finite_x = x_all[np.isfinite(x_all)]
        if finite_x.size:
            self.active_plot.setXRange(float(finite_x.min()), float(finite_x.max()), padding=0.02)
        active = cols.column("active").astype(np.float64)
        active[active < 0] = np.nan
        extra_key = self.extra_combo.currentData()
        for plot, values, logged in ((self.active_plot, active, log), (self.value_plot, cols.column("value"), False),
                                     (self.extra_plot, cols.column(f"extra.{extra_key}") if extra_key else None,
                                      log)):
            if values is None:
                continue
            v = _log_safe(values, logged)
            v = v[np.isfinite(v)]
            if v.size:
                lo, hi = float(v.min()), float(v.max())
                if logged:
                    lo, hi = np.log10(lo), np.log10(hi)
                plot.setYRange(lo, hi if hi > lo else lo + 1, padding=0.05)


def _extent(values, log: bool) -> tuple[float, float]:
    """The finite (positive, on a log axis) range of ``values``; (0, 1) when there is none."""
    if values is None:
        return (1.0, 10.0) if log else (0.0, 1.0)
    v = _log_safe(np.asarray(values, dtype=np.float64), log)
    v = v[np.isfinite(v)]
    if not v.size:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = float(v.min()), float(v.max())
    return (lo, hi) if hi > lo else ((lo / 2, lo * 2) if log else (lo - 0.5, hi + 0.5))


def _log_safe(values: np.ndarray, log: bool) -> np.ndarray:
    """Log axes cannot show values <= 0: blank them instead of letting them break the curve."""
    if not log:
        return values
    out = values.astype(np.float64, copy=True)
    out[out <= 0] = np.nan
    return out
