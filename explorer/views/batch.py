"""Batch: the problems of a batch run, one row each (size, value, search steps, time, certificate),
sortable, with the distributions of search steps and of time per problem beside them. Double-click
a problem (or select it and press "Solve alone") to solve it on its own and watch that run in the
other tabs."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ..wording import duration
from .base import (SORT_ROLE, NamedColumnsTable, View, add_plot, new_layout_widget, set_axis_label, sortable_table,
                   time_decimals, time_unit)

COLUMNS = ("problem", "size", "value", "search steps", "time", "certificate")
CHARTS_MIN_WIDTH = 220  # pixels the distribution charts keep beside the table
BINS = 40


class BatchTable(NamedColumnsTable):
    """The problems of one BatchResult; sorting by the raw numbers (SORT_ROLE), shown as text."""

    columns = COLUMNS

    def __init__(self, parent=None):
        super().__init__(parent)
        self.result = None
        self.shapes = np.zeros((0, 2), dtype=np.int64)
        self.time_factor, self.time_unit = time_unit(0.0)
        self.time_digits = time_decimals(self.time_factor)

    def set_result(self, result, shapes: np.ndarray) -> None:
        self.beginResetModel()
        self.result, self.shapes = result, shapes
        # one unit for the whole time column, by its largest entry, named in the header
        times = np.zeros(0) if result is None else np.asarray(result.item_seconds, dtype=np.float64)
        times = times[np.isfinite(times)]
        self.time_factor, self.time_unit = time_unit(float(times.max()) if times.size else 0.0)
        self.time_digits = time_decimals(self.time_factor, times)
        self.endResetModel()

    def headerData(self, section, orientation, role=QtCore.Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == QtCore.Qt.Orientation.Horizontal and COLUMNS[section] == "time":
            if role == QtCore.Qt.ItemDataRole.DisplayRole:
                return f"time ({self.time_unit})"
            if role == QtCore.Qt.ItemDataRole.ToolTipRole:
                return "each problem's own solve time, in one unit for the whole column"
        return super().headerData(section, orientation, role)

    def row_count(self) -> int:
        return 0 if self.result is None else len(self.result)

    def data(self, index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or self.result is None:
            return None
        b, key = index.row(), COLUMNS[index.column()]
        r = self.result
        if role == SORT_ROLE:
            return {"problem": b, "size": int(self.shapes[b, 0]) * int(self.shapes[b, 1]),
                    "value": _sortable(r.values[b]), "search steps": int(r.iterations[b]),
                    "time": _sortable(r.item_seconds[b]), "certificate": r.status[b]}[key]
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            if key == "problem":
                return str(b)
            if key == "size":
                return f"{int(self.shapes[b, 0]):,} × {int(self.shapes[b, 1]):,}"
            if key == "value":
                return "—" if not math.isfinite(r.values[b]) else f"{r.values[b]:.6g}"
            if key == "search steps":
                return f"{int(r.iterations[b]):,}"
            if key == "time":
                seconds = float(r.item_seconds[b])
                return "—" if not math.isfinite(seconds) else \
                    f"{seconds * self.time_factor:.{self.time_digits}f}"
            return "optimal" if r.certified[b] else "infeasible" if r.infeasible[b] else "NOT certified"
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and key == "certificate":
            return r.status[b]  # the certificate's whole sentence
        if role == QtCore.Qt.ItemDataRole.ToolTipRole and key == "time" and math.isfinite(r.item_seconds[b]):
            return duration(float(r.item_seconds[b]))
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and key not in ("certificate",):
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and key == "certificate" \
                and not (r.certified[b] or r.infeasible[b]):
            from PySide6 import QtGui
            return QtGui.QBrush(QtGui.QColor("#d64541"))
        return None


def _sortable(x: float) -> float:
    return float(x) if math.isfinite(x) else math.inf  # unknown values sort last


class BatchView(View):
    title = "Batch"
    itemRequested = QtCore.Signal(int)  # solve this problem of the batch alone

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self._shown = None  # (run id, result) the table holds
        content = QtWidgets.QWidget()
        outer = QtWidgets.QVBoxLayout(content)
        outer.setContentsMargins(4, 4, 4, 4)
        self.header = QtWidgets.QLabel(wordWrap=True)
        outer.addWidget(self.header)
        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Horizontal)
        left = QtWidgets.QWidget()
        lv = QtWidgets.QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        self.model = BatchTable(self)
        self.proxy, self.table = sortable_table(self.model, self)
        self.table.sortByColumn(0, QtCore.Qt.SortOrder.AscendingOrder)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.doubleClicked.connect(self._request_selected)
        lv.addWidget(self.table, 1)
        row = QtWidgets.QHBoxLayout()
        self.solve_button = QtWidgets.QPushButton("Solve alone")
        self.solve_button.setToolTip("Solve the selected problem on its own and watch the run "
                                     "(labels, activity) in the other tabs; double-click does the same")
        self.solve_button.clicked.connect(self._request_selected)
        self.solve_button.setEnabled(False)
        self.table.selectionModel().selectionChanged.connect(
            lambda *_: self.solve_button.setEnabled(bool(self.table.selectionModel().selectedRows())))
        row.addWidget(self.solve_button)
        row.addStretch(1)
        lv.addLayout(row)
        split.addWidget(left)
        self.charts = new_layout_widget()
        self.steps_plot = add_plot(self.charts.ci, 0, 0, "Search steps per problem", "search steps", "problems")
        self.time_plot = add_plot(self.charts.ci, 1, 0, "Time per problem", "time", "problems")
        self.steps_bars = pg.BarGraphItem(x0=[], x1=[], height=[], brush="#4c8bf5")
        self.time_bars = pg.BarGraphItem(x0=[], x1=[], height=[], brush="#2ca25f")
        self.steps_plot.addItem(self.steps_bars)
        self.time_plot.addItem(self.time_bars)
        self.time_note = pg.TextItem("", anchor=(0.5, 0.5), color="#888")
        self.time_plot.addItem(self.time_note)
        self.charts.setMinimumWidth(CHARTS_MIN_WIDTH)  # below the plots' own hint, so the table can fit a small window
        split.addWidget(self.charts)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        self.split = split
        outer.addWidget(split, 1)
        self.set_content(content)
        self._histograms: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    # ---- which run ----------------------------------------------------------------------------
    def batch_run(self):
        """The current run if it is a batch run, else the newest finished batch run of this dataset."""
        run = self.session.current_run
        if run is not None and run.batch is not None:
            return run
        problem = self.session.problem
        return next((r for r in reversed(self.session.runs) if r.batch is not None and r.problem is problem), None)

    def has_content(self) -> bool:
        return self.batch_run() is not None

    def redraw(self) -> None:
        run = self.batch_run()
        problem = self.session.problem
        if run is None:
            self.model.set_result(None, np.zeros((0, 2), dtype=np.int64))
            self._shown = None
            if problem is not None and problem.kind == "batch":
                self.show_message(f"A batch of {len(problem):,} problems: press Run to solve them all.")
            else:
                self.show_message("Open a batch of assignment problems (a 3-D .npy, or an .npz of matrices) "
                                  "to see its problems here.")
            return
        self.show_message(None)
        result = run.batch
        if self._shown != (run.id, id(result)):
            self._shown = (run.id, id(result))
            shapes = run.problem.shapes if run.problem is not None else np.zeros((len(result), 2), dtype=np.int64)
            self.model.set_result(result, shapes)
            self._fit_table()
            self._draw_histograms(result)
        seconds = result.seconds
        self.header.setText(f"<b>#{run.id} {run.algorithm} on {result.backend}</b> · {run.certificate_text} · "
                            f"solved in {duration(seconds.get('solve', 0.0))}, certified in "
                            f"{duration(seconds.get('certify', 0.0))}")

    def _fit_table(self) -> None:
        """Size the columns to their contents and give the table their width where the charts keep
        CHARTS_MIN_WIDTH (a small window otherwise showed four of the six columns and a scroll bar)."""
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)  # measured unstretched, then the last one fills what is left
        self.table.resizeColumnsToContents()
        columns = header.length()
        header.setStretchLastSection(True)
        total = sum(self.split.sizes())
        scroll_bar = self.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_ScrollBarExtent)
        table = min(columns + scroll_bar + 2 * self.table.frameWidth() + 2, total - CHARTS_MIN_WIDTH)
        if total > 0 and table > self.split.sizes()[0]:
            self.split.setSizes([table, total - table])

    def _draw_histograms(self, result) -> None:
        steps = result.iterations.astype(np.float64)
        self._histograms = {"search_steps": _histogram(steps)}
        edges, counts = self._histograms["search_steps"]
        self.steps_bars.setOpts(x0=edges[:-1], x1=edges[1:], height=counts)
        times = result.item_seconds[np.isfinite(result.item_seconds)]
        if times.size:
            factor, unit = time_unit(float(times.max()))
            edges, counts = _histogram(times)
            self._histograms["seconds"] = (edges, counts)
            self.time_bars.setOpts(x0=edges[:-1] * factor, x1=edges[1:] * factor, height=counts)
            set_axis_label(self.time_plot, "bottom", f"time ({unit})")
            self.time_note.setText("")
        else:
            self.time_bars.setOpts(x0=[], x1=[], height=[])
            self.time_note.setText("no problems" if len(result) == 0 else
                                   f"the {result.backend} backend\ndoes not time each problem")  # two lines: a narrow chart
            self.time_note.setPos(0.5, 0.5)
        for plot in (self.steps_plot, self.time_plot):
            plot.enableAutoRange()

    # ---- solving one problem alone --------------------------------------------------------
    def selected_item(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        return int(self.proxy.mapToSource(rows[0]).row()) if rows else None

    def select_item(self, b: int) -> None:
        index = self.proxy.mapFromSource(self.model.index(int(b), 0))
        self.table.selectRow(index.row())
        self.table.scrollTo(index)

    def _request_selected(self, *_) -> None:
        b = self.selected_item()
        if b is not None:
            self.itemRequested.emit(b)

    # ---- export --------------------------------------------------------------------------------
    def export_item(self):
        return self.charts.ci

    def tables(self) -> dict:
        run = self.batch_run()
        if run is None:
            return {}
        r = run.batch
        shapes = run.problem.shapes if run.problem is not None else np.zeros((len(r), 2), dtype=np.int64)
        out = {"problems": {"problem": np.arange(len(r)), "rows": shapes[:, 0], "cols": shapes[:, 1],
                            "value": r.values, "search_steps": r.iterations, "seconds": r.item_seconds,
                            "certified": r.certified, "infeasible": r.infeasible,
                            "status": np.array(r.status, dtype=object)}}
        for name, (edges, counts) in self._histograms.items():
            out[f"{name}_histogram"] = {"from": edges[:-1], "to": edges[1:], "problems": counts}
        return out


def _histogram(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edges, counts): BINS equal bins over the values (one bin around a single value)."""
    if values.size == 0:
        return np.zeros(2), np.zeros(1)
    low, high = float(values.min()), float(values.max())
    if high <= low:
        pad = max(abs(low) * 0.05, 0.5)
        low, high = low - pad, high + pad
    counts, edges = np.histogram(values, bins=BINS, range=(low, high))
    return edges, counts.astype(np.float64)
