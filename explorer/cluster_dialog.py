"""Run ▸ Run on cluster…: what to run, with which algorithm and backend, and where.

What: the loaded dataset when it is a batch or a point series, or a folder (every readable problem
file in it, not its subfolders, sorted by name). Algorithm: a batch's solvers
(solvers.batch.api.BATCH_SOLVERS), a series' trackers (as the Solver dock lists them), for a
folder "automatic" (the fastest for each file) or any algorithm by name. Where: a local cluster of
N workers (started for the run and closed after it) or a scheduler's address (tcp://host:port).
Start checks everything first and says what is wrong in one line under the form; an address is
checked by opening a connection to it (at most ``REACH_TIMEOUT`` seconds), so an address nobody
answers at is refused here rather than after dask's own 20 s of retries.
"""
from __future__ import annotations

import os
import re
import socket

from PySide6 import QtCore, QtGui, QtWidgets

from .cluster_run import ClusterRequest, problem_files
from .wording import plural

REACH_TIMEOUT = 2.0
ADDRESS = re.compile(r"^(?:(tcp|tls)://)?(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.\-_]+):(\d{1,5})$")
AUTOMATIC = "automatic"


def check_address(text: str, reach: bool = True) -> str | None:
    """None when ``text`` is a scheduler address that answers, else the one line that says why not."""
    text = text.strip()
    if not text:
        return "give the scheduler's address, e.g. tcp://head:8786"
    match = ADDRESS.match(text)
    if match is None:
        return f"{text} is not a scheduler address: write it as tcp://host:port, e.g. tcp://head:8786"
    host, port = match.group(2).strip("[]"), int(match.group(3))
    if not 0 < port < 65536:
        return f"{port} is not a port number (1 to 65535)"
    if not reach:
        return None
    try:
        with socket.create_connection((host, port), timeout=REACH_TIMEOUT):
            return None
    except socket.gaierror:
        return f"cannot reach a scheduler at {text}: there is no host called {host}"
    except socket.timeout:
        return f"cannot reach a scheduler at {text}: no answer within {REACH_TIMEOUT:g} s"
    except OSError as exc:
        why = (exc.strerror or str(exc) or "no connection").lower()
        return f"cannot reach a scheduler at {text}: {why}"


def algorithm_names(problem) -> list[str]:
    """What the loaded dataset (a batch or a series) can be solved with; [] for anything else."""
    from .views.solver_panel import algorithms_for
    if problem is None or problem.kind not in ("batch", "points"):
        return []
    return [a.name for a in algorithms_for(problem)]


def backends_for(name: str | None, problem) -> list[str]:
    """``auto`` and the backends the algorithm declares (the workers may have what this machine lacks)."""
    import solvers
    from solvers.targets import BACKENDS
    algo = None
    if name and problem is not None and problem.kind == "batch":
        from solvers.batch.api import BATCH_SOLVERS
        algo = BATCH_SOLVERS.get(name)
    elif name:
        algo = solvers.algorithms().get(name)
    declared = list(algo.backends) if algo is not None else [b for b in BACKENDS if b != "cudasim"]
    return ["auto"] + [b for b in declared if b != "auto"]


class ClusterDialog(QtWidgets.QDialog):
    """``request()`` is the ClusterRequest once accepted (Start); Start keeps it open on a bad entry."""

    def __init__(self, problem=None, dataset_name: str = "", parent=None, folder: str = "", scheduler: str = ""):
        super().__init__(parent)
        self.setWindowTitle("Run on cluster")
        self.problem = problem if problem is not None and problem.kind in ("batch", "points") else None
        self.dataset_name = dataset_name
        self._request: ClusterRequest | None = None

        # what
        self.use_dataset = QtWidgets.QRadioButton()
        self.use_folder = QtWidgets.QRadioButton("the problem files in a folder:")
        if self.problem is not None:
            kind = "batch" if self.problem.kind == "batch" else "point series"
            self.use_dataset.setText(f"the loaded {kind}: {dataset_name}")
        else:
            self.use_dataset.setText("the loaded dataset (only a batch or a point series)")
            self.use_dataset.setEnabled(False)
        self.folder_edit = QtWidgets.QLineEdit(folder)
        self.folder_edit.setPlaceholderText("a folder of problem files")
        self.folder_button = QtWidgets.QPushButton("Choose…")
        self.folder_button.clicked.connect(self._choose_folder)
        self.folder_note = QtWidgets.QLabel()
        self.folder_note.setWordWrap(True)
        what = QtWidgets.QGroupBox("What to run")
        wl = QtWidgets.QGridLayout(what)
        wl.addWidget(self.use_dataset, 0, 0, 1, 3)
        wl.addWidget(self.use_folder, 1, 0)
        wl.addWidget(self.folder_edit, 1, 1)
        wl.addWidget(self.folder_button, 1, 2)
        wl.addWidget(self.folder_note, 2, 1, 1, 2)
        wl.setColumnStretch(1, 1)

        # how
        self.algorithm = QtWidgets.QComboBox()
        self.backend = QtWidgets.QComboBox()
        how = QtWidgets.QGroupBox("Algorithm")
        hl = QtWidgets.QFormLayout(how)
        hl.addRow("Algorithm", self.algorithm)
        hl.addRow("Backend", self.backend)
        note = QtWidgets.QLabel("with the algorithm's default options (the Solver dock's are not used)")
        note.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)
        hl.addRow("", note)

        # where
        self.use_local = QtWidgets.QRadioButton("a local cluster of")
        self.workers = QtWidgets.QSpinBox()
        self.workers.setRange(0, 256)
        self.workers.setSpecialValueText("automatic")
        self.workers.setSuffix(" workers")
        self.workers.setValue(min(os.cpu_count() or 1, 4))
        self.workers.setToolTip("automatic: one worker per GPU where there are GPUs, else one per core")
        self.use_address = QtWidgets.QRadioButton("the scheduler at")
        self.address = QtWidgets.QLineEdit(scheduler)
        self.address.setPlaceholderText("tcp://head:8786")
        where = QtWidgets.QGroupBox("Where")
        gl = QtWidgets.QGridLayout(where)
        gl.addWidget(self.use_local, 0, 0)
        gl.addWidget(self.workers, 0, 1)
        gl.addWidget(QtWidgets.QLabel("(started for this run, closed after it)"), 0, 2)
        gl.addWidget(self.use_address, 1, 0)
        gl.addWidget(self.address, 1, 1, 1, 2)
        gl.setColumnStretch(2, 1)
        (self.use_address if scheduler else self.use_local).setChecked(True)

        self.error = QtWidgets.QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #c0392b;")
        self.error.hide()
        buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Ok
                                             | QtWidgets.QDialogButtonBox.StandardButton.Cancel)
        self.start_button = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Ok)
        self.start_button.setText("Start")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)

        layout = QtWidgets.QVBoxLayout(self)
        for box in (what, how, where):
            layout.addWidget(box)
        layout.addWidget(self.error)
        layout.addStretch(1)
        layout.addWidget(buttons)

        (self.use_dataset if self.problem is not None else self.use_folder).setChecked(True)
        for button in (self.use_dataset, self.use_folder):
            button.toggled.connect(self._source_changed)
        self.folder_edit.textChanged.connect(self._folder_changed)
        self.algorithm.currentIndexChanged.connect(self._algorithm_changed)
        self.address.textEdited.connect(lambda *_: self.use_address.setChecked(True))
        self.workers.valueChanged.connect(lambda *_: self.use_local.setChecked(True))
        for w in (self.use_local, self.use_address, self.address, self.folder_edit, self.workers):
            signal = w.toggled if isinstance(w, QtWidgets.QRadioButton) else (
                w.valueChanged if isinstance(w, QtWidgets.QSpinBox) else w.textChanged)
            signal.connect(self._clear_error)
        self._source_changed()
        self.address.setToolTip("A scheduler started with 'dask scheduler', its workers with 'dask worker ADDRESS'. "
                                "Files are read where they are solved: the workers must see the folder at the "
                                "same path.")
        self.resize(640, 0)

    # ---- the form ------------------------------------------------------------------------------
    @property
    def source(self) -> str:
        return "dataset" if self.use_dataset.isChecked() else "folder"

    def _choose_folder(self) -> None:
        start = self.folder_edit.text() or os.path.expanduser("~")
        folder = QtWidgets.QFileDialog.getExistingDirectory(self, "Folder of problem files", start)
        if folder:
            self.set_folder(folder)

    def set_folder(self, folder: str) -> None:
        self.folder_edit.setText(str(folder))
        self.use_folder.setChecked(True)

    def set_scheduler(self, text: str, workers: int | None = None) -> None:
        """``local`` (with ``workers``) or an address, as the user would enter it."""
        if text == "local":
            self.use_local.setChecked(True)
            if workers is not None:
                self.workers.setValue(workers)
        else:
            self.address.setText(text)
            self.use_address.setChecked(True)

    def set_algorithm(self, name: str | None) -> None:
        index = self.algorithm.findData(name or AUTOMATIC)
        if index < 0:
            raise KeyError(name)
        self.algorithm.setCurrentIndex(index)

    def set_backend(self, name: str) -> None:
        index = self.backend.findData(name)
        if index < 0:
            raise KeyError(name)
        self.backend.setCurrentIndex(index)

    def _source_changed(self, *_) -> None:
        folder = self.source == "folder"
        for w in (self.folder_edit, self.folder_button, self.folder_note):
            w.setEnabled(folder)
        self.algorithm.blockSignals(True)
        self.algorithm.clear()
        if folder:
            import solvers
            self.algorithm.addItem("automatic (the fastest for each file)", AUTOMATIC)
            for name in solvers.algorithms():
                self.algorithm.addItem(name, name)
        else:
            for name in algorithm_names(self.problem):
                self.algorithm.addItem(name, name)
            if self.problem is not None and self.problem.kind == "points":  # as solvers.track would choose
                import solvers
                self.algorithm.setCurrentIndex(max(0, self.algorithm.findData(
                    solvers.default_algorithm(self.problem).algorithm)))
        self.algorithm.blockSignals(False)
        self._algorithm_changed()
        self._folder_changed()

    def _algorithm_changed(self, *_) -> None:
        chosen = self.backend.currentData()
        name = self.algorithm.currentData()
        self.backend.clear()
        problem = self.problem if self.source == "dataset" else None
        for backend in backends_for(None if name == AUTOMATIC else name, problem):
            self.backend.addItem(backend, backend)
        index = self.backend.findData(chosen)
        self.backend.setCurrentIndex(max(index, 0))

    def _folder_changed(self, *_) -> None:
        text = self.folder_edit.text().strip()
        if not text:
            self.folder_note.setText("")
            return
        if not os.path.isdir(text):
            self.folder_note.setText("no such folder")
            return
        files = problem_files(text)
        self.folder_note.setText(f"{plural(len(files), 'problem file')} (its subfolders are not searched)"
                                 if files else "no readable problem files in it")

    def _clear_error(self, *_) -> None:
        self.error.hide()

    def show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.show()

    @property
    def error_text(self) -> str:
        return self.error.text() if not self.error.isHidden() else ""

    # ---- Start ---------------------------------------------------------------------------------
    def build(self, reach: bool = True) -> tuple[ClusterRequest | None, str | None]:
        """(the request, None) or (None, the line that says what is wrong)."""
        algorithm = self.algorithm.currentData()
        algorithm = None if algorithm in (None, AUTOMATIC) else algorithm
        backend = self.backend.currentData() or "auto"
        if self.use_local.isChecked():
            scheduler, workers = "local", (self.workers.value() or None)
        else:
            scheduler, workers = self.address.text().strip(), None
            reason = check_address(scheduler, reach=reach)
            if reason:
                return None, reason
        if self.source == "dataset":
            if self.problem is None:
                return None, "the loaded dataset is not a batch or a point series: choose a folder"
            if algorithm is None:
                return None, "no algorithm can run on this dataset"
            if self.problem.kind == "points" and getattr(self.problem, "n_frames", 2) < 2:
                return None, "a point series needs at least two frames to be tracked"
            if self.problem.kind == "batch":
                kind, size = "batch", f" ({plural(len(self.problem), 'problem')})"
            else:  # a series' name says its frames already
                kind, size = "point series", ""
            what = f"the {kind} {self.dataset_name}{size}" if self.dataset_name else f"the {kind}{size}"
            return ClusterRequest([self.problem], [self.dataset_name or kind], "dataset", what, algorithm, backend,
                                  scheduler, workers, problem=self.problem), None
        folder = self.folder_edit.text().strip()
        if not folder:
            return None, "choose a folder of problem files"
        if not os.path.isdir(folder):
            return None, f"there is no folder {folder}"
        files = problem_files(folder)
        if not files:
            return None, f"there are no readable problem files in {folder}"
        name = os.path.basename(os.path.normpath(folder)) or folder
        return ClusterRequest(files, [os.path.basename(f) for f in files], "folder",
                              f"{plural(len(files), 'file')} of {name}", algorithm, backend, scheduler, workers,
                              folder=folder), None

    def accept(self) -> None:
        QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
        try:
            request, reason = self.build()
        finally:
            QtWidgets.QApplication.restoreOverrideCursor()
        if reason:
            self.show_error(reason)
            return
        self._request = request
        super().accept()

    def request(self) -> ClusterRequest | None:
        return self._request


# ---- the window's side ---------------------------------------------------------------------------

def attach(window) -> None:
    """Wire the Cluster tab to the window: its lines to the log (errors to the error dialog), its
    rows to the other tabs, its Export button to a save dialog."""
    from .cluster_run import show_row
    view = window.cluster_view

    def notice(level: str, text: str) -> None:
        if level == "error":
            window.report_error(text, title="Run on cluster", short=f"cluster run failed: {text}")
        else:
            window.log_message(level, text)
            window.status(text, 5000)

    view.notice.connect(notice)
    view.rowOpened.connect(lambda request, row: show_row(window, request, row))
    view.exportRequested.connect(lambda: export_dialog(window))


def open_dialog(window) -> ClusterRequest | None:
    """Ask what to run where; start it in the Cluster tab. Returns the request started (or None)."""
    view = window.cluster_view
    if view.running:
        window.status("a cluster run is in progress: stop it first", 5000)
        window.tabs.setCurrentWidget(view)
        return None
    settings = window.settings
    dialog = ClusterDialog(window.session.problem, window.session.dataset_name, window,
                           folder=str(settings.value("cluster/folder", "")),
                           scheduler=str(settings.value("cluster/scheduler", "")))
    if dialog.exec() != QtWidgets.QDialog.DialogCode.Accepted or dialog.request() is None:
        return None
    request = dialog.request()
    if request.folder:
        settings.setValue("cluster/folder", request.folder)
    if request.scheduler != "local":
        settings.setValue("cluster/scheduler", request.scheduler)
    start(window, request)
    return request


def start(window, request: ClusterRequest):
    """Start ``request`` in the Cluster tab and show it (scripts and tests call this directly)."""
    runner = window.cluster_view.start(request)
    if runner is not None:
        window.tabs.setCurrentWidget(window.cluster_view)
    return runner


def export_dialog(window) -> None:
    from pathlib import Path

    from solvers.cli_batch import items_folder

    from .export import view_filters
    path = window._ask_save("Export cluster results", view_filters(["csv"]), "cluster-results.csv")
    if path:
        if Path(path).suffix.lower() != ".csv":
            path += ".csv"
        window._guarded(f"exported the cluster results (each item's answer in {items_folder(path).name}/)",
                        window.cluster_view.export_csv, path)
