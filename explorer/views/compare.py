"""Compare: several algorithm configurations on the loaded problem, run one after another, with a table
(algorithm, backend, seconds, iterations, value, certified) and their activity / workload overlaid."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..theme import series_color
from .base import View, add_plot, new_layout_widget, set_axis_label, set_points
from .workload import draw_boxes, run_mode, set_launch_axis, workload_series

TABLE_HEADERS = ("run", "algorithm", "backend", "seconds", "iterations", "value", "certified", "status", "options")


def format_cell(key: str, value) -> str:
    if value is None:
        return "—"
    if key == "seconds":
        return "—" if math.isnan(value) else (f"{value * 1e3:.2f} ms" if value < 1 else f"{value:.3f} s")
    if key == "value":
        return "—" if math.isnan(value) else f"{value:.6g}"
    if key == "certified":
        return "yes" if value else "NO"
    return str(value)


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
        buttons.addWidget(self.add_current_button, 0, 0)
        buttons.addWidget(self.add_all_button, 0, 1)
        buttons.addWidget(self.remove_button, 0, 2)
        buttons.addWidget(self.run_button, 1, 0, 1, 2)
        buttons.addWidget(self.stop_button, 1, 2)
        ll.addLayout(buttons)
        right = QtWidgets.QGroupBox("Results")
        rl = QtWidgets.QVBoxLayout(right)
        self.result_table = QtWidgets.QTableWidget(0, len(TABLE_HEADERS))
        self.result_table.setHorizontalHeaderLabels(list(TABLE_HEADERS))
        self.result_table.verticalHeader().setVisible(False)
        self.result_table.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.result_table.setSelectionBehavior(QtWidgets.QAbstractItemView.SelectionBehavior.SelectRows)
        self.result_table.horizontalHeader().setStretchLastSection(True)
        self.result_table.setSortingEnabled(False)
        rl.addWidget(self.result_table)
        top.addWidget(left)
        top.addWidget(right)
        top.setStretchFactor(0, 2)
        top.setStretchFactor(1, 5)
        for table in (self.config_table, self.result_table):
            table.verticalHeader().setDefaultSectionSize(22)
            table.setAlternatingRowColors(True)

        self.charts = new_layout_widget()
        lay = self.charts.ci
        self.active_plot = add_plot(lay, 0, 0, "Active vertices", "iteration", "active", integer_x=True)
        self.value_plot = add_plot(lay, 0, 1, "Objective", "iteration", "value", integer_x=True)
        self.work_plot = add_plot(lay, 1, 0, "Per-warp work ÷ mean, per launch", "launch", "work / mean", colspan=2)
        for p in (self.active_plot, self.value_plot):
            p.setDownsampling(auto=True, mode="peak")
            p.setClipToView(True)
        self.active_legend = self.active_plot.addLegend(offset=(-10, 10), labelTextSize="8pt")
        self.work_legend = self.work_plot.addLegend(offset=(-10, 10), labelTextSize="8pt")
        self.items: list = []
        body.addWidget(top)
        body.addWidget(self.charts)
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
        self._rows: list[dict] = []
        self._update_buttons()

    # ---- configurations ---------------------------------------------------------------------
    def add_config(self, algorithm: str, backend: str, options: dict) -> None:
        cfg = {"algorithm": algorithm, "backend": backend, "options": dict(options)}
        if cfg in self.configs:
            return
        self.configs.append(cfg)
        row = self.config_table.rowCount()
        self.config_table.insertRow(row)
        for col, text in enumerate((algorithm, backend, ", ".join(f"{k}={v}" for k, v in options.items()))):
            self.config_table.setItem(row, col, QtWidgets.QTableWidgetItem(text))
        self._update_buttons()

    def clear_configs(self) -> None:
        self.configs.clear()
        self.config_table.setRowCount(0)
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
        return [r.summary() for r in self.session.comparison]

    def _select_run(self) -> None:
        rows = self.result_table.selectionModel().selectedRows()
        if rows and rows[0].row() < len(self.session.comparison):
            self.session.set_current_run(self.session.comparison[rows[0].row()])

    def has_content(self) -> bool:
        return bool(self.session.comparison) and any(r.status == "finished" for r in self.session.comparison)

    def export_item(self):
        return self.charts.ci

    def table_rows(self) -> tuple[list[str], list[list]]:
        rows = self.rows()
        return list(TABLE_HEADERS), [[row[h] for h in TABLE_HEADERS] for row in rows]

    def tables(self) -> dict:
        headers, rows = self.table_rows()
        out = {"comparison": {h: np.array([r[i] for r in rows], dtype=object) for i, h in enumerate(headers)}}
        for run in self.session.comparison:
            run.sync()
            if run.columns.n:
                out[f"run{run.id}-activity"] = {"iteration": run.columns.column("iteration"),
                                                "active": run.columns.column("active"),
                                                "value": run.columns.column("value")}
        return out

    def redraw(self) -> None:
        self._update_buttons()
        self._fill_table()
        for plot, item in self.items:
            plot.removeItem(item)
        self.items = []
        self.active_legend.clear()
        self.work_legend.clear()
        runs = self.session.comparison
        if self.session.problem is None:
            self.show_message("Open or generate a problem, then add configurations to compare.")
            return
        self.show_message(None)
        with_work = [r for r in runs if r.snapshots("workload")]
        width = 0.7 / max(len(with_work), 1)
        for i, run in enumerate(runs):
            run.sync()
            color = series_color(i)
            name = f"#{run.id} {run.algorithm}"
            cols = run.columns
            if cols.n:
                active = cols.column("active").astype(float)
                active[active < 0] = np.nan
                x = cols.x()
                c1 = self.active_plot.plot(pen=pg.mkPen(color, width=1.5), name=name)
                c2 = self.value_plot.plot(pen=pg.mkPen(color, width=1.5))
                set_points(c1, x, active)
                set_points(c2, x, cols.column("value"))
                self.items += [(self.active_plot, c1), (self.value_plot, c2)]
            if run in with_work:
                k = with_work.index(run)
                st = workload_series(run)
                mode = run_mode(run)
                label = name + (f" mode={mode}" if mode else "")
                its = draw_boxes(self.work_plot, st, color, (k - (len(with_work) - 1) / 2) * width, width * 0.85)
                self.items += [(self.work_plot, it) for it in its]
                if its:
                    self.work_legend.addItem(its[1], label)
        x_name = "iteration" if all(r.columns.monotone for r in runs) else "step"  # restarted solves: ordinals
        set_axis_label(self.active_plot, "bottom", x_name)
        set_axis_label(self.value_plot, "bottom", x_name)
        self.work_plot.setVisible(bool(with_work))
        if with_work:  # the boxes sit at ordinals: name them by the first run's launches
            series = [workload_series(r) for r in with_work]
            set_launch_axis(self.work_plot, series[0]["launch"], max(st["median"].size for st in series))

    def _fill_table(self) -> None:
        rows = self.rows()
        self.result_table.setRowCount(len(rows))
        palette = self.palette()
        for r, row in enumerate(rows):
            for c, key in enumerate(TABLE_HEADERS):
                text = format_cell(key, row[key])
                item = self.result_table.item(r, c)
                if item is None:
                    item = QtWidgets.QTableWidgetItem()
                    self.result_table.setItem(r, c, item)
                item.setText(text)
                if key in ("seconds", "iterations", "value", "run"):
                    item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
                if key == "algorithm":
                    item.setForeground(QtGui.QBrush(QtGui.QColor(series_color(r))))
                elif key == "certified" and row[key] is False:
                    item.setForeground(QtGui.QBrush(QtGui.QColor("#d64541")))
                elif key == "status" and row[key] in ("failed", "cancelled"):
                    item.setForeground(QtGui.QBrush(QtGui.QColor("#d64541")))
                else:
                    item.setForeground(palette.text())
        self.result_table.resizeColumnsToContents()
