"""Compare: several algorithm configurations on the loaded problem, run one after another, with a table
(algorithm, backend, time, iterations, reports, value, certified) and their activity / workload overlaid.

"iterations" is the solver's own count (``Result.iterations``); "reports" is how many telemetry reports
the run sent (what the charts can draw). They differ (a Hungarian run reports its dual updates too),
so both are named as what they are, and the charts' count axis is the reports'. Runs of very
different lengths share the charts through the x axis choice: progress (each run from 0 to 100 %
of its own time), elapsed time or report number, each optionally logarithmic.
"""
from __future__ import annotations

import math
import numbers

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from solvers.text import duration

from ..theme import series_color
from ..wording import settings_words
from .base import SORT_ROLE, EmptyNote, View, add_plot, add_side_legend, new_layout_widget, \
    reports_intermediate_state, set_axis_label, set_points, time_decimals, time_unit
from .workload import draw_boxes, mode_words, set_launch_axis, workload_series

# the table as exported (CSV / Markdown): raw numbers, seconds in seconds
TABLE_HEADERS = ("run", "algorithm", "backend", "seconds", "wall", "warm-up", "iterations", "reports", "value",
                 "certified", "status", "options")
RIGHT_ALIGNED = ("run", "seconds", "wall", "warm-up", "iterations", "reports", "value")
TIME_COLUMNS = {"seconds": "time", "wall": "wall", "warm-up": "warm-up"}  # shown in one unit each, named in the header
X_MODES = (("progress", "progress (% of each run's time)"), ("time", "elapsed time"), ("reports", "report number"))


def format_cell(key: str, value, time_factor: float = 1e3, decimals: int | None = None) -> str:
    """A table cell; a time column ("seconds", "wall", "warm-up") is shown in that column's one unit
    (``time_factor`` per second) with the column's ``decimals``, so a column reads and compares by
    eye; no warm-up is "—"."""
    if value is None:
        return "—"
    if key in TIME_COLUMNS:
        if math.isnan(value) or not shows_time(key, value):
            return "—"
        return f"{value * time_factor:.{time_decimals(time_factor) if decimals is None else decimals}f}"
    if key == "value":
        return "—" if math.isnan(value) else f"{value:.6g}"
    if key == "certified":
        return "yes" if value else "NO"
    if key in ("iterations", "reports"):
        return f"{value:,}"
    if key == "options":
        return value or "defaults"  # the session's "k=v, ..." text
    return str(value)


RUN_ROLE = QtCore.Qt.ItemDataRole.UserRole + 1  # a results row's run (its place in the comparison)


def sort_key(key: str, value):
    """What a results cell sorts by: numbers as numbers (no time, no value: after every number),
    the rest by its text."""
    if key in TIME_COLUMNS or key in ("run", "iterations", "reports", "value"):
        number = float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else math.nan
        shown = number == number and (key not in TIME_COLUMNS or shows_time(key, number))
        return (0, number) if shown else (1, 0.0)
    if key == "certified":
        return (0, 0.0 if value is None else 1.0 if value else 2.0)  # failed checks together
    return (0, str(value or "").lower())


class ResultItem(QtWidgets.QTableWidgetItem):
    """A results cell that sorts by its SORT_ROLE key (numbers numerically), not by its text; a
    cell without a value goes last in either order."""

    def __lt__(self, other):  # noqa: D105
        mine, theirs = self.data(SORT_ROLE), other.data(SORT_ROLE)
        if mine is None or theirs is None:
            return super().__lt__(other)
        mine, theirs = tuple(mine), tuple(theirs)
        if mine[0] != theirs[0]:  # one has no value: Qt reverses "less" for a descending sort
            table = self.tableWidget()
            descending = table is not None and (table.horizontalHeader().sortIndicatorOrder()
                                                == QtCore.Qt.SortOrder.DescendingOrder)
            return mine[0] > theirs[0] if descending else mine[0] < theirs[0]
        return mine < theirs


def shows_time(key: str, value) -> bool:
    """Whether a time cell shows a number: a warm-up of a millisecond or less is none ("—")."""
    return value is not None and math.isfinite(value) and not (key == "warm-up" and value <= 0.001)


def run_x(run, mode: str) -> np.ndarray:
    """x of each report of ``run`` for an x-axis mode: % of the run's time, seconds, or report number."""
    cols = run.columns
    n = cols.n
    if mode == "reports":
        return np.arange(1, n + 1, dtype=np.float64)
    t = cols.column("time").astype(np.float64)
    if mode == "time" or n == 0:
        return t
    if n == 1:
        return np.array([100.0])
    span = float(t[-1] - t[0])
    if not span > 0:  # every report at the same instant: spread them evenly
        return np.linspace(0.0, 100.0, n)
    return 100.0 * (t - t[0]) / span


class CompareView(View):
    title = "Compare"
    formats = ("png", "svg", "csv", "md")

    runRequested = QtCore.Signal(list)   # list of {"algorithm", "backend", "options"}
    addCurrentRequested = QtCore.Signal()
    addAllRequested = QtCore.Signal()
    stopRequested = QtCore.Signal()

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.configs: list[dict] = []
        body = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        top = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)

        left = QtWidgets.QGroupBox("Configurations to run")
        ll = QtWidgets.QVBoxLayout(left)
        self.config_table = QtWidgets.QTableWidget(0, 3)
        self.config_table.setHorizontalHeaderLabels(["algorithm", "backend", "options"])
        self.config_table.horizontalHeader().setStretchLastSection(True)
        self.config_table.resizeColumnsToContents()  # empty: the headers' widths, so "options" is not cut
        self.config_table.verticalHeader().setVisible(False)
        self.config_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.config_table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        ll.addWidget(self.config_table, 1)
        buttons = QtWidgets.QGridLayout()
        self.add_current_button = QtWidgets.QPushButton("Add solver settings")
        self.add_current_button.setToolTip("Add the algorithm, backend and options chosen in the Solver panel")
        self.add_all_button = QtWidgets.QPushButton("Add every algorithm")
        self.remove_button = QtWidgets.QPushButton("Remove")
        self.run_button = QtWidgets.QPushButton("Run comparison")
        self.run_button.setDefault(True)
        self.stop_button = QtWidgets.QPushButton("Stop")
        # two buttons a row: the box stays narrow, so the results table beside it gets the width
        buttons.addWidget(self.add_current_button, 0, 0)
        buttons.addWidget(self.add_all_button, 0, 1)
        buttons.addWidget(self.remove_button, 1, 0)
        buttons.addWidget(self.stop_button, 1, 1)
        buttons.addWidget(self.run_button, 2, 0, 1, 2)
        ll.addLayout(buttons)
        right = QtWidgets.QGroupBox("Results")
        rl = QtWidgets.QVBoxLayout(right)
        self.result_table = QtWidgets.QTableWidget(0, len(TABLE_HEADERS))
        self.result_table.verticalHeader().setVisible(False)
        self.result_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.result_table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.result_table.horizontalHeader().setStretchLastSection(True)
        # sorted by a clicked header (not the table's own sorting: it reserves room for the arrow in
        # every header, and the columns a small window shows lost one)
        self._sort = None  # (column, order) chosen by clicking headers; None: the runs' order
        header = self.result_table.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(False)
        header.setToolTip("Click a column's header to sort the runs by it (again: the other way; "
                          "a third time: the runs' order)")
        rl.addWidget(self.result_table)
        top.addWidget(left)
        top.addWidget(right)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 5)
        self.top = top
        self._fitted = None  # the runs (and how many had finished) the results' width was fitted to
        for table in (self.config_table, self.result_table):
            table.verticalHeader().setDefaultSectionSize(22)
            table.setAlternatingRowColors(True)

        bottom = QtWidgets.QWidget()
        bl = QtWidgets.QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bar = QtWidgets.QHBoxLayout()
        self.x_mode = QtWidgets.QComboBox()
        for key, text in X_MODES:
            self.x_mode.addItem(text, key)
        self.x_mode.setToolTip("Progress puts runs of any length side by side: each goes from 0 to 100 % of its "
                               "own time")
        self.log_x = QtWidgets.QCheckBox("Log x")
        self.log_x.setToolTip("A logarithmic x axis (a report at 0 has no place on it and is left out)")
        bar.addWidget(QtWidgets.QLabel("x axis"))
        bar.addWidget(self.x_mode)
        bar.addWidget(self.log_x)
        bar.addStretch(1)
        bl.addLayout(bar)
        self.charts = new_layout_widget()
        bl.addWidget(self.charts, 1)
        lay = self.charts.ci
        self.active_plot = add_plot(lay, 0, 0, "Active vertices", "", "active")
        self.value_plot = add_plot(lay, 0, 1, "Objective", "", "value")
        self.work_plot = add_plot(lay, 1, 0, "Per-warp work ÷ mean, per launch", "launch", "work / mean", colspan=2)
        self.legend = add_side_legend(lay, 0, 2, rowspan=2)
        for p in (self.active_plot, self.value_plot):
            p.setDownsampling(auto=True, mode="peak")
            p.setClipToView(True)
        self.active_note, self.value_note = EmptyNote(self.active_plot), EmptyNote(self.value_plot)
        self.items: list = []
        self._legend_items: list = []  # samples for the legend (runs without curves get one too)
        body.addWidget(top)
        body.addWidget(bottom)
        body.setStretchFactor(0, 2)
        body.setStretchFactor(1, 3)
        body.setSizes([290, 430])
        self.set_content(body)
        self.add_current_button.clicked.connect(self.addCurrentRequested)
        self.add_all_button.clicked.connect(self.addAllRequested)
        self.remove_button.clicked.connect(self.remove_selected)
        self.run_button.clicked.connect(lambda: self.runRequested.emit(list(self.configs)))
        self.stop_button.clicked.connect(self.stopRequested)
        self.result_table.itemSelectionChanged.connect(self._select_run)
        self.result_table.horizontalHeader().sectionClicked.connect(self._header_clicked)
        self.x_mode.currentIndexChanged.connect(lambda *_: self.refresh(force=True))
        self.log_x.toggled.connect(lambda *_: self.refresh(force=True))
        self._update_buttons()

    # ---- configurations ---------------------------------------------------------------------
    def add_config(self, algorithm: str, backend: str, options: dict) -> None:
        cfg = {"algorithm": algorithm, "backend": backend, "options": dict(options)}
        if cfg in self.configs:
            return
        self.configs.append(cfg)
        row = self.config_table.rowCount()
        self.config_table.insertRow(row)
        for col, text in enumerate((algorithm, backend, settings_words(options, "defaults"))):
            self.config_table.setItem(row, col, QtWidgets.QTableWidgetItem(text))
        self.config_table.resizeColumnsToContents()  # "backend" needs no 100 pixels: the options get them
        self._update_buttons()

    def clear_configs(self) -> None:
        self.configs.clear()
        self.config_table.setRowCount(0)
        self.config_table.resizeColumnsToContents()
        self._update_buttons()

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.config_table.selectedIndexes()}, reverse=True)
        for r in rows:
            self.config_table.removeRow(r)
            del self.configs[r]
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = any(r.is_active for r in self.session.comparison)
        self.run_button.setEnabled(bool(self.configs) and self.session.problem is not None and not running)
        self.stop_button.setEnabled(running)

    # ---- results ----------------------------------------------------------------------------
    def rows(self) -> list[dict]:
        """One dict per compared run: the session's summary ("iterations": the solver's own count, None
        until known), "reports": the telemetry reports the charts draw, "options" in plain words."""
        out = []
        for run in self.session.comparison:
            run.sync()
            out.append(dict(run.summary(), reports=int(run.columns.n), options=settings_words(run.options, "")))
        return out

    def _header_clicked(self, column: int) -> None:
        """Ascending, then descending, then the runs' order again."""
        ascending, descending = QtCore.Qt.SortOrder.AscendingOrder, QtCore.Qt.SortOrder.DescendingOrder
        if self._sort is None or self._sort[0] != column:
            self._sort = (column, ascending)
        elif self._sort[1] == ascending:
            self._sort = (column, descending)
        else:
            self._sort = None
        header = self.result_table.horizontalHeader()
        header.setSortIndicatorShown(self._sort is not None)
        if self._sort is not None:
            header.setSortIndicator(*self._sort)
        self._fill_table()

    def _select_run(self) -> None:
        rows = self.result_table.selectionModel().selectedRows()
        item = self.result_table.item(rows[0].row(), 0) if rows else None
        run = item.data(RUN_ROLE) if item is not None else None
        if run is not None and run < len(self.session.comparison):
            self.session.set_current_run(self.session.comparison[run])

    def has_content(self) -> bool:
        return bool(self.session.comparison) and any(r.status == "finished" for r in self.session.comparison)

    def export_item(self):
        return self.charts.ci

    def table_rows(self) -> tuple[list[str], list[list]]:
        """Headers and rows as exported: raw numbers ("seconds" in seconds, "iterations" the solver's)."""
        rows = self.rows()
        return list(TABLE_HEADERS), [[row.get(h) for h in TABLE_HEADERS] for row in rows]

    def tables(self) -> dict:
        headers, rows = self.table_rows()
        out = {"comparison": {h: np.array([r[i] for r in rows], dtype=object) for i, h in enumerate(headers)}}
        for run in self.session.comparison:
            run.sync()
            if run.columns.n:
                out[f"run{run.id}-activity"] = {"report": np.arange(1, run.columns.n + 1),
                                                "reported_iteration": run.columns.column("iteration"),
                                                "elapsed_s": run.columns.column("time"),
                                                "active": run.columns.column("active"),
                                                "value": run.columns.column("value")}
        return out

    def redraw(self) -> None:
        self._update_buttons()
        self._fill_table()
        for plot, item in self.items:
            plot.removeItem(item)
        self.items = []
        self.legend.clear()
        self._legend_items = []
        runs = self.session.comparison
        if self.session.problem is None and not runs:
            self.show_message("Open or generate a problem, then add configurations to compare.")
            return
        self.show_message(None)
        mode = self.x_mode.currentData()
        log_x = self.log_x.isChecked()
        factor, unit = time_unit(max((float(r.columns.column("time")[-1]) for r in runs if r.columns.n),
                                     default=0.0))
        with_work = [r for r in runs if r.snapshots("workload")]
        width = 0.7 / max(len(with_work), 1)
        drew_active = drew_value = False
        # end states are drawn beside the curves of runs that report their way there; alone, a dot
        # per run on a made-up axis says nothing the table does not
        stepwise = any(r.columns.n and reports_intermediate_state(r.columns) for r in runs)
        for i, run in enumerate(runs):
            run.sync()
            color = series_color(i)
            pen = pg.mkPen(color, width=1.5)
            cols = run.columns
            if cols.n and (stepwise or run.is_active):
                x = run_x(run, mode) * (factor if mode == "time" else 1.0)
                active = cols.column("active").astype(float)
                active[active < 0] = np.nan
                value = cols.column("value")
                if not reports_intermediate_state(cols):  # start and end only: a line between them is made up
                    active, value = end_only(active), end_only(value)
                for plot, y in ((self.active_plot, active), (self.value_plot, value)):
                    if np.isfinite(y).any():
                        curve = plot.plot(pen=pen)
                        set_points(curve, x, y)
                        if np.count_nonzero(np.isfinite(y)) == 1:
                            curve.setSymbolSize(9)
                        self.items.append((plot, curve))
                drew_active |= bool(np.isfinite(active).any())
                drew_value |= bool(np.isfinite(value).any())
            if run in with_work:
                k = with_work.index(run)
                its = draw_boxes(self.work_plot, workload_series(run), color, (k - (len(with_work) - 1) / 2) * width,
                                 width * 0.85)
                self.items += [(self.work_plot, it) for it in its]
            sample = pg.PlotDataItem([], [], pen=pg.mkPen(color, width=4))
            self._legend_items.append(sample)
            self.legend.addItem(sample, self.legend_name(run))
        x_label = {"progress": "progress (% of each run's time)", "time": f"elapsed time ({unit})",
                   "reports": "report number"}[mode]
        xs = [run_x(r, mode) * (factor if mode == "time" else 1.0) for r in runs if r.columns.n]
        decades = log_decades(np.concatenate(xs) if xs else np.zeros(0)) if log_x else None
        for plot in (self.active_plot, self.value_plot):
            plot.setLogMode(x=log_x, y=False)
            set_axis_label(plot, "bottom", x_label + (", log scale" if log_x else ""))
            plot.getAxis("bottom").setTicks(decades)  # log x: one label per decade, never run together
            plot.enableAutoRange()
        if not runs:
            # one short line each (a chart can be narrow): the note never runs across the next chart
            self.active_note.set("Add configurations,\nthen Run comparison")
            self.value_note.set("the runs are drawn\nhere side by side")
        elif not stepwise and not any(r.is_active for r in runs):
            self.active_note.set("These solvers\nreport no intermediate state:\neach runs as one call")
            self.value_note.set("Their results are\nin the table above")
        else:
            self.active_note.set(None if drew_active else "no run reported active vertices")
            self.value_note.set(None if drew_value else "no run reported its objective on the way")
        self.work_plot.setVisible(bool(with_work))
        self.work_plot.setMaximumHeight(1e6 if with_work else 0)  # hidden, it gives its row back
        if with_work:  # the boxes sit at ordinals: name them by the first run's launches
            series = [workload_series(r) for r in with_work]
            set_launch_axis(self.work_plot, series[0]["launch"], max(st["median"].size for st in series))
            set_axis_label(self.work_plot, "bottom", "launch" if len(with_work) == 1 else
                           f"snapshotted launches in order (numbers: #{with_work[0].id}'s launches)")

    def legend_name(self, run) -> str:
        """``#3 wbpr [cpu] mode=vc``; runs of one algorithm are told apart by the options in which
        they differ (``#5 gpr [cpu] variant=first``); a run drawn by its end state only, or one that
        did not finish, says so."""
        mode = mode_words(run) if run.snapshots("workload") else ""
        differ = differing_options(run, self.session.comparison)
        name = f"#{run.id} {run.algorithm} [{run.backend_used}]" + (f" {differ}" if differ else "")
        name += mode if "mode=" not in differ else ""
        if run.status not in ("finished", "running", "queued"):
            name += f" ({run.status})"
        elif run.columns.n and not reports_intermediate_state(run.columns) and not run.is_active:
            name += " (end state only)"
        return name

    def time_column(self, rows: list[dict], key: str = "seconds") -> tuple[float, str, int]:
        """(factor, unit, decimals) of a time column ("seconds", "wall" or "warm-up"): one unit,
        chosen by its largest entry, and decimals enough for its smallest."""
        shown = [r[key] for r in rows if shows_time(key, r.get(key))]
        factor, unit = time_unit(max(shown, default=0.0))
        return factor, unit, time_decimals(factor, shown)

    def _fill_table(self) -> None:
        # the rows are rewritten in the runs' order and sorted again: the selection must stay on its
        # run, and the moves in between must not make another run current
        table = self.result_table
        picked = table.selectionModel().selectedRows()
        picked_item = table.item(picked[0].row(), 0) if picked else None
        picked_run = picked_item.data(RUN_ROLE) if picked_item is not None else None
        with QtCore.QSignalBlocker(table), QtCore.QSignalBlocker(table.selectionModel()):
            self._write_rows()
            if picked_run is not None:
                table.clearSelection()
                for r in range(table.rowCount()):
                    item = table.item(r, 0)
                    if item is not None and item.data(RUN_ROLE) == picked_run:
                        table.selectRow(r)
                        break
        table.viewport().update()

    def _write_rows(self) -> None:
        rows = self.rows()
        units = {key: self.time_column(rows, key) for key in TIME_COLUMNS}
        headers = [f"{TIME_COLUMNS[h]} ({units[h][1]})" if h in TIME_COLUMNS else h for h in TABLE_HEADERS]
        self.result_table.setHorizontalHeaderLabels(headers)
        header = self.result_table.horizontalHeaderItem(TABLE_HEADERS.index("seconds"))
        header.setToolTip("time inside the solver (without loading, warm-up or the certificate check)")
        for key, tip in (("wall", "from the timed start to the certified answer (solve, checks, certificate); "
                                  "without the warm-up"),
                         ("warm-up", "compiling the solver's kernels before the run (once per session); "
                                     "not in the solver or wall time"),
                         ("iterations", "the solver's own iteration count"),
                         ("reports", "telemetry reports the solver sent: what the charts draw")):
            self.result_table.horizontalHeaderItem(TABLE_HEADERS.index(key)).setToolTip(tip)
        # filled in the runs' order, then sorted again by the column the user chose (if any): a row
        # knows its run (RUN_ROLE), which selection and colour follow, wherever sorting puts it
        self.result_table.setRowCount(len(rows))
        palette = self.palette()
        for r, row in enumerate(rows):
            for c, key in enumerate(TABLE_HEADERS):
                text = format_cell(key, row.get(key), *((units[key][0], units[key][2]) if key in TIME_COLUMNS else ()))
                item = self.result_table.item(r, c)
                if item is None:
                    item = ResultItem()
                    self.result_table.setItem(r, c, item)
                item.setText(text)
                item.setData(RUN_ROLE, r)
                item.setData(SORT_ROLE, sort_key(key, row.get(key)))
                if key in TIME_COLUMNS:
                    value = row.get(key)
                    item.setToolTip(duration(value) if value is not None and text != "—" else "")
                if key in RIGHT_ALIGNED:
                    item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                if key == "algorithm":
                    item.setForeground(QtGui.QBrush(QtGui.QColor(series_color(r))))
                elif key == "certified" and row.get(key) is False:
                    item.setForeground(QtGui.QBrush(QtGui.QColor("#d64541")))
                elif key == "status" and row.get(key) in ("failed", "cancelled"):
                    item.setForeground(QtGui.QBrush(QtGui.QColor("#d64541")))
                else:
                    item.setForeground(palette.text())
        if self._sort is not None:
            self.result_table.sortItems(*self._sort)
        self.result_table.resizeColumnsToContents()
        key = (tuple(r["run"] for r in rows), sum(r.get("status") == "finished" for r in rows))
        if key != self._fitted and self._fit_results():  # new rows or finished runs: widen once; a
            self._fitted = key                               # splitter the user moved stays where it is

    def _fit_results(self) -> bool:
        """Give the results the width their columns need, taken from the configurations box down to
        its smallest (a small window showed four of the twelve columns, the fifth cut through).
        False when the splitter has no size yet (never shown)."""
        sizes = self.top.sizes()
        total = sum(sizes)
        if total <= 0:
            return False
        table = self.result_table
        scroll_bar = self.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_ScrollBarExtent)
        box = self.top.widget(1)
        chrome = box.width() - table.width() if box.width() > table.width() else 24  # the group box's margins
        wanted = table.horizontalHeader().length() + scroll_bar + 2 * table.frameWidth() + chrome
        results = min(wanted, total - self.top.widget(0).minimumSizeHint().width())
        if results > sizes[1]:
            self.top.setSizes([total - results, results])
        return True


def end_only(values: np.ndarray) -> np.ndarray:
    """Only the last finite value kept (the others NaN)."""
    out = np.full(values.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(values))
    if finite.size:
        out[finite[-1]] = values[finite[-1]]
    return out


def effective_options(run) -> dict:
    """The options a run ran with: those given, the declared defaults for the rest."""
    from .solver_panel import algorithm_named
    algo = algorithm_named(run.algorithm, run.problem) if run.problem_kind != "batch" or run.problem is not None \
        else None
    options = {o.name: o.default for o in (algo.options if algo is not None else ())}
    options.update(run.options)
    return options


def differing_options(run, runs: list) -> str:
    """``variant=first``: the options in which ``run`` differs from another compared run of the same
    algorithm ("" when it is the only one, or they all ran alike)."""
    same = [r for r in runs if r.algorithm == run.algorithm]
    if len(same) < 2:
        return ""
    mine, others = effective_options(run), [effective_options(r) for r in same if r is not run]
    keys = [k for k in mine if any(o.get(k) != mine[k] for o in others)]
    return " ".join(f"{k}={mine[k]}" for k in keys)


def log_decades(x: np.ndarray) -> list | None:
    """Ticks for a log x axis in pyqtgraph's log mode (positions are log10 of the values): one
    labelled tick per decade of the positive data ("1", "10", "100", "1000", else "10^k"), so the
    labels never run together as the automatic minor ones do ("910¹")."""
    positive = x[np.isfinite(x) & (x > 0)]
    if not positive.size:
        return None
    low, high = int(np.floor(np.log10(positive.min()))), int(np.ceil(np.log10(positive.max())))
    step = max(1, (high - low + 1) // 8)
    major = [(float(k), f"{10.0 ** k:g}" if -3 <= k <= 4 else f"1e{k}") for k in range(low, high + 1, step)]
    return [major, []]

