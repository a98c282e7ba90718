"""Cluster: a run on a Dask cluster ("Run ▸ Run on cluster…") as it goes, and its results after.

A central tab, not a dock: the results table is what the run leaves behind, and it needs the
width of the central area (nine columns); a dock beside the Dataset and Solver docks would squeeze
it at 1024 pixels. The tab shows, top to bottom: what runs where and the dashboard link (opened in
the browser), Stop and Export CSV; the progress bar of tasks (its total can grow: a point series
with the automatic gate adds rounds as it goes); one line per worker (busy or idle, as the
scheduler says twice a second; tasks finished there and their time); and the results table, one
row per item (item, kind, algorithm, backend, value, certified, seconds, worker, error), sortable.
A task is one file, one chunk of a batch or one run of frame pairs of a series, so the workers'
task counts add up to the tasks done.

The results are a dataset in this sense: after the run the table is what the tab holds, sortable
and exported as CSV the way ``matchscope batch --out`` writes it (the rows, and each item's own
answer in NAME-items/ beside them; both through temporary names, solvers.cli_batch.write_outputs).
Double-clicking a row shows that item's result in the other tabs (explorer.cluster_run.show_row):
the loaded batch's problems in the Batch tab, the series' tracks in the 3D tab, a file of a folder
opened with its result as its run. A stopped run keeps no rows.
"""
from __future__ import annotations

import html
import math
from pathlib import Path

from PySide6 import QtCore, QtGui, QtWidgets

from ..wording import duration, plural
from .base import SORT_ROLE, NamedColumnsTable, View, sortable_table

COLUMNS = ("item", "kind", "algorithm", "backend", "value", "certified", "seconds", "worker", "error")
WORKER_COLUMNS = ("worker", "state", "tasks done", "time on tasks", "failed tasks")
KIND_WORDS = {"problem": "problem", "batch": "batch", "series": "point series"}
PHASE_WORDS = {"connecting": "starting", "running": "running", "finished": "finished", "cancelled": "stopped",
               "failed": "failed"}


def short_address(address: str) -> str:
    return address.split("://", 1)[-1] if address else ""


class ResultsTable(NamedColumnsTable):
    """The rows of a run (ItemResults), shown as text, sorted by their raw values (SORT_ROLE)."""

    columns = COLUMNS

    def __init__(self, parent=None):
        super().__init__(parent)
        self.rows: list = []
        self.labels: list[str] = []

    def set_rows(self, rows: list, labels: list[str]) -> None:
        """Show ``rows``; rows added to those shown are inserted (the selection and the scroll
        position stay while a run adds rows), anything else resets the table."""
        if [id(r) for r in rows] == [id(r) for r in self.rows]:
            return
        shown = {id(r) for r in self.rows}
        if [id(r) for r in rows if id(r) in shown] == [id(r) for r in self.rows] and len(shown) == len(self.rows):
            self.labels = list(labels)
            for position, row in enumerate(rows):
                if id(row) not in shown:
                    self.beginInsertRows(QtCore.QModelIndex(), position, position)
                    self.rows.insert(position, row)
                    self.endInsertRows()
            return
        self.beginResetModel()
        self.rows, self.labels = list(rows), list(labels)
        self.endResetModel()

    def label(self, row) -> str:
        return self.labels[row.index] if 0 <= row.index < len(self.labels) else str(row.item)

    def row_count(self) -> int:
        return len(self.rows)

    def cell(self, row, key: str):
        """The raw value of a cell (CSV, sorting)."""
        if key == "item":
            return self.label(row)
        if key == "worker":
            return " ".join(short_address(w) for w in (row.worker or "").split())
        if key == "error":
            return row.error or ""
        return getattr(row, key)

    def data(self, index, role=QtCore.Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, key = self.rows[index.row()], COLUMNS[index.column()]
        value = self.cell(row, key)
        if role == SORT_ROLE:
            if key in ("value", "seconds"):
                return -math.inf if value is None or not math.isfinite(value) else float(value)
            if key == "certified":
                return int(bool(value))
            return (value or "").lower() if isinstance(value, str) or value is None else value
        if role == QtCore.Qt.ItemDataRole.DisplayRole:
            if key == "kind":
                return KIND_WORDS.get(value, value)
            if key == "value":
                return "—" if value is None or not math.isfinite(value) else f"{value:.6g}"
            if key == "certified":
                return "—" if row.error else ("yes" if value else "NOT certified")
            if key == "seconds":
                return "—" if row.error and not value else duration(float(value))
            return "" if value is None else str(value)
        if role == QtCore.Qt.ItemDataRole.ToolTipRole:
            if key == "item":
                return str(row.item)
            if key in ("error", "worker") and value:
                return str(value)
        if role == QtCore.Qt.ItemDataRole.TextAlignmentRole and key in ("value", "seconds"):
            return int(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        if role == QtCore.Qt.ItemDataRole.ForegroundRole and (row.error or (key == "certified" and not value)):
            return QtGui.QBrush(QtGui.QColor("#c0392b"))
        return None


class ClusterView(View):
    """The Cluster tab; ``start(request)`` runs, ``stop()`` cancels, ``shutdown()`` on the window's close."""

    title = "Cluster"
    formats = ("csv",)  # through its Export CSV button (has_content is False: no chart to export)
    rowOpened = QtCore.Signal(object, object)   # the request, the row (ItemResult) double-clicked
    notice = QtCore.Signal(str, str)            # level ("info", "warning", "error"), one line
    exportRequested = QtCore.Signal()

    def __init__(self, session, parent=None):
        super().__init__(session, parent)
        self.runner = None       # the ClusterRun shown (the last one)
        self.state = None        # its last snapshot
        self.ended = None        # its final phase, once the window has heard it ended (its cluster closed)
        self.placeholder.setText("Run ▸ Run on cluster… solves a batch, a point series or a folder of files "
                                 "on a Dask cluster (a local one or a scheduler's address); its progress per "
                                 "worker and its results show here.")
        content = QtWidgets.QWidget()
        outer = QtWidgets.QVBoxLayout(content)
        outer.setContentsMargins(8, 8, 8, 8)
        outer.setSpacing(6)

        head = QtWidgets.QHBoxLayout()
        self.header = QtWidgets.QLabel(wordWrap=True)
        self.header.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.header.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)
        self.stop_button = QtWidgets.QPushButton("Stop")
        self.stop_button.setToolTip("Stop the cluster run: nothing new starts, running tasks are cancelled, "
                                    "no results are kept")
        self.stop_button.clicked.connect(self.stop)
        self.export_button = QtWidgets.QPushButton("Export CSV…")
        self.export_button.setToolTip("Write the results table as CSV, and each item's own answer into a "
                                      "folder beside it (as matchscope batch --out does)")
        self.export_button.clicked.connect(self.exportRequested)
        head.addWidget(self.header, 1)
        head.addWidget(self.stop_button)
        head.addWidget(self.export_button)
        outer.addLayout(head)

        self.dashboard = QtWidgets.QLabel()
        self.dashboard.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.dashboard.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.LinksAccessibleByMouse
                                               | QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dashboard.linkActivated.connect(self.open_link)
        outer.addWidget(self.dashboard)

        self.progress = QtWidgets.QProgressBar()
        self.progress.setTextVisible(True)
        outer.addWidget(self.progress)

        split = QtWidgets.QSplitter(QtCore.Qt.Orientation.Vertical)
        self.workers = QtWidgets.QTableWidget(0, len(WORKER_COLUMNS))
        self.workers.setHorizontalHeaderLabels(WORKER_COLUMNS)
        self.workers.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.NoEditTriggers)
        self.workers.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.NoSelection)
        self.workers.verticalHeader().setVisible(False)
        self.workers.verticalHeader().setDefaultSectionSize(22)
        self.workers.horizontalHeader().setStretchLastSection(False)
        split.addWidget(self.workers)

        lower = QtWidgets.QWidget()
        lv = QtWidgets.QVBoxLayout(lower)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.setSpacing(2)
        self.model = ResultsTable(self)
        self.proxy, self.table = sortable_table(self.model, self)
        self.table.sortByColumn(-1, QtCore.Qt.SortOrder.AscendingOrder)  # input order until a header is clicked
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.doubleClicked.connect(self._open_index)
        self.model.modelReset.connect(self._fit_columns)
        self.model.rowsInserted.connect(self._fit_columns)
        self._fit_columns()
        self.hint = QtWidgets.QLabel(wordWrap=True)
        self.hint.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)
        lv.addWidget(self.table, 1)
        lv.addWidget(self.hint)
        split.addWidget(lower)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 3)
        outer.addWidget(split, 1)
        self.set_content(content)
        self.show_message(self.placeholder.text())

    # ---- running -------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """A run is under way, or its end has not reached the window yet."""
        return self.runner is not None and (self.runner.alive or self.ended is None)

    def start(self, request):
        """Run ``request`` (explorer.cluster_run.ClusterRequest); refused (None) while one runs."""
        from ..cluster_run import ClusterRun
        if self.running:
            self.notice.emit("warning", "a cluster run is in progress: stop it first")
            return None
        if self.runner is not None:
            self.runner.deleteLater()  # its thread has ended
        self.runner = ClusterRun(request, self)
        self.runner.changed.connect(self._changed)
        self.runner.ended.connect(self._ended)
        self.state = self.runner.snapshot()
        self.ended = None
        self.model.set_rows([], [])
        self.notice.emit("info", f"run on cluster: {request.what} with {request.algorithm or 'the fastest algorithm'} "
                                 f"on {request.where}")
        self.runner.start()
        self.refresh(force=True)
        return self.runner

    def stop(self) -> None:
        if self.running and not self.runner.stopping:
            self.runner.stop()
            self.notice.emit("warning", "stopping the cluster run…")
            self.refresh(force=True)

    def shutdown(self, wait_s: float = 20.0) -> bool:
        """Stop the run and wait for its cluster to close (the window is closing); False if it did not in time."""
        if self.runner is None:
            return True
        self.runner.stop()
        done = self.runner.wait(wait_s)
        if not done:
            self.runner.changed.disconnect()
            self.runner.ended.disconnect()
        return done

    def _changed(self) -> None:
        if self.runner is not None and self.sender() in (None, self.runner):  # not a late word of an older run
            self.state = self.runner.snapshot()
            self.refresh(force=True)

    def _ended(self, phase: str) -> None:
        if self.sender() not in (None, self.runner):
            return
        self._changed()
        self.ended = phase
        state = self.state
        if phase == "failed":
            self.notice.emit("error", state.message)
        else:
            self.notice.emit("info" if phase == "finished" else "warning",
                             f"cluster run {PHASE_WORDS[phase]}: {state.message} ({duration(state.elapsed)})")

    # ---- drawing -------------------------------------------------------------------------------
    def drawn_from(self) -> tuple:
        """The run's state (a new snapshot per change), and whether a stop was asked: not the
        session's version, which the cluster run does not move."""
        return (self.state, self.runner is not None and self.runner.stopping)

    def redraw(self) -> None:
        state, runner = self.state, self.runner
        if state is None:
            self.show_message(self.placeholder.text())
            return
        self.show_message(None)
        req = runner.request
        phase = PHASE_WORDS[state.phase]
        if state.active and runner.stopping:
            phase = "stopping"
        algorithm = req.algorithm or "the fastest algorithm per item"
        line = (f"<b>{html.escape(req.what)}</b> · {html.escape(algorithm)} on the {html.escape(req.backend)} "
                f"backend · {html.escape(req.where)} · <b>{phase}</b>")
        if state.message:
            line += f"<br>{html.escape(state.message)}"
        self.header.setText(line)
        if state.dashboard:
            link = html.escape(state.dashboard)
            self.dashboard.setText(f"Dashboard: <a href=\"{link}\">{link}</a>"
                                   + (f" ({html.escape(state.dashboard_note)})" if state.dashboard_note else ""))
        else:
            self.dashboard.setText("Dashboard: " + ("none (the scheduler serves none)" if state.phase != "connecting"
                                                    else "not yet (connecting)"))
        self.stop_button.setEnabled(state.active and not runner.stopping)
        self.export_button.setEnabled(state.phase == "finished" and bool(state.results))
        total = max(state.total, 1)
        self.progress.setRange(0, total)
        self.progress.setValue(min(state.done, total))
        if state.phase == "connecting":
            self.progress.setFormat("starting the cluster…" if req.scheduler == "local"
                                    else f"connecting to {req.scheduler}…")
        else:
            self.progress.setFormat(f"{state.done:,} of {plural(state.total, 'task')} · {state.items_done:,} of "
                                    f"{plural(state.items, 'item')} · {duration(state.elapsed)}")
        self._draw_workers(state)
        rows = state.results if state.results is not None else [state.rows[k] for k in sorted(state.rows)]
        self.model.set_rows(rows, req.labels)
        if state.phase == "finished":
            self.hint.setText("Double-click a row to show its result in the other tabs; click a header to sort.")
        elif state.phase in ("cancelled", "failed"):
            self.hint.setText("No results were kept.")
        else:
            self.hint.setText("Items appear here as they finish.")

    def _fit_columns(self) -> None:
        """Columns as wide as their text, the long ones (item, worker, error) capped; the error column
        takes what is left."""
        self.table.resizeColumnsToContents()
        header = self.table.horizontalHeader()
        for name, cap in (("item", 260), ("worker", 170), ("error", 400)):
            column = COLUMNS.index(name)
            header.resizeSection(column, min(header.sectionSize(column), cap))

    def _draw_workers(self, state) -> None:
        workers = sorted(state.workers.values(), key=lambda w: w.address)
        self.workers.setRowCount(len(workers))
        for r, w in enumerate(workers):
            cells = (short_address(w.address), "busy" if w.busy else "idle", f"{w.tasks:,}", duration(w.seconds),
                     f"{w.failed:,}" if w.failed else "")
            for c, text in enumerate(cells):
                item = self.workers.item(r, c)
                if item is None:
                    item = QtWidgets.QTableWidgetItem()
                    self.workers.setItem(r, c, item)
                item.setText(text)
                if c in (2, 3, 4):
                    item.setTextAlignment(QtCore.Qt.AlignmentFlag.AlignRight | QtCore.Qt.AlignmentFlag.AlignVCenter)
        self.workers.resizeColumnsToContents()
        self.workers.setToolTip("A task is one file, one chunk of a batch or one run of frame pairs of a series; "
                                "busy means the scheduler has tasks on that worker now. The time on tasks is "
                                "their wall time there, a worker's first compile of the kernels included.")

    def open_link(self, link: str) -> None:
        QtGui.QDesktopServices.openUrl(QtCore.QUrl(link))

    def _open_index(self, index) -> None:
        row = self.model.rows[self.proxy.mapToSource(index).row()]
        if self.state is not None and self.state.phase == "finished":
            self.rowOpened.emit(self.runner.request, row)

    def open_row(self, position: int) -> None:
        """Double-click the row shown at ``position`` (scripts and tests)."""
        self._open_index(self.proxy.index(position, 0))

    # ---- export --------------------------------------------------------------------------------
    def has_content(self) -> bool:
        """False: the tab has no chart for Export Current View or the run report; its own Export CSV
        button writes the results (with each item's answer)."""
        return False

    def has_results(self) -> bool:
        return self.state is not None and self.state.phase == "finished" and bool(self.state.results)

    def tables(self) -> dict:
        if not self.has_results():
            return {}
        rows = self.state.results
        return {"results": {key: [self.model.cell(r, key) for r in rows] for key in COLUMNS}}

    def export_csv(self, path) -> list[Path]:
        """The rows as CSV and each item's answer into PATH-STEM-items/ (solvers.cli_batch.write_outputs)."""
        from solvers.cli_batch import items_folder, write_outputs
        if not self.has_results():
            raise ValueError("no finished cluster run to export")
        rows = self.state.results
        if self.runner.request.source == "dataset":  # named as the tab names it, not "item 0"
            from dataclasses import replace
            rows = [replace(r, item=self.model.label(r)) for r in rows]
        write_outputs(self.runner.run, rows, path, ".csv")
        return [Path(path), items_folder(path)]
