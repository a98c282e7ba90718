"""The main window: docks, central tabs, menus, shortcuts, and the wiring between the worker thread,
the Session and the views. Everything a menu does is also a plain method taking paths, so scripts
and tests drive the window without file dialogs."""
from __future__ import annotations

import logging
import math
import os
import time
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

import solvers
from solvers.errors import InputError
from solvers.formats import readings

from . import cluster_dialog, export
from .dialogs import GenerateDialog, ReadAsDialog, SampleGallery
from .session import RunState, Session
from .theme import apply_app_theme, icon
from .wording import (bytes_words, certificate_short, duration, plural, problem_words, run_iterations_words,
                      settings_words, time_words)
from .views import (ActivityView, BatchView, ClusterView, CompareView, DatasetPanel, LabelsView, LogPanel, SolverPanel,
                    Timeline, Tracks3DView, WorkloadView)
from .views.solver_panel import algorithm_named, algorithms_for, uninterruptible
from .worker import Job, WorkerHost

log = logging.getLogger("matchscope.explorer")

REFRESH_MS = 33  # views redraw at most ~30 times a second, whatever the solver emits
# while a run is live, redrawing the view takes at most about this share of the time: the solver's
# thread shares the interpreter with the window, and a slow redraw (a large chart, the 3-D view
# under software GL) holds it from the run it is drawing
LIVE_REDRAW_SHARE = 0.2
MAX_RECENT = 10
FAILED_VERBS = {"saved": "save", "exported": "export"}  # an export's words when it could not be written
CENTRAL_MIN_WIDTH = 744  # the views and the timeline (see where the central widget is made)


def check_backend(algo, backend: str) -> None:
    """InputError (one line) unless ``algo`` can run on ``backend`` in this process."""
    from solvers.targets import available_backends

    from .views.solver_panel import BACKEND_NOTES
    if backend in (None, "", "auto"):
        return
    if backend not in algo.backends:
        raise InputError(f"{algo.name} runs on {', '.join(algo.backends)}, not {backend}")
    if backend not in available_backends():
        raise InputError(f"backend {backend} is not available here: {BACKEND_NOTES.get(backend, 'not installed')}")


def is_run_record(path: str) -> bool:
    """A .npz written by RunRecord.save (it holds a JSON "header"); point-series .npz files do not."""
    if not str(path).lower().endswith(".npz"):
        return False
    try:
        with np.load(path, allow_pickle=False) as z:
            return "header" in z.files
    except Exception:
        return False


class ElidedLabel(QtWidgets.QLabel):
    """A status-bar label that never widens the window: long text is elided, the whole of it is the tooltip."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored, QtWidgets.QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = text
        self.setToolTip(text if text else "")
        self._elide()

    def text(self) -> str:  # the whole message, as set
        return self._full

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, QtCore.Qt.TextElideMode.ElideRight, max(self.width(), 40))
        super().setText(shown)


PREFERRED_SIZE = (1440, 900)


def first_size(screen) -> tuple[int, int]:
    """The window's size when no earlier session saved one: PREFERRED_SIZE, within the screen's
    available area (a 1024 x 700 laptop screen would otherwise hide the right and bottom edges)."""
    width, height = PREFERRED_SIZE
    if screen is None:
        return width, height
    available = screen.availableGeometry()
    return min(width, available.width()), min(height, available.height())


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, settings: QtCore.QSettings | None = None, interactive: bool = True, parent=None):
        super().__init__(parent)
        self.settings = settings if settings is not None else QtCore.QSettings()
        self.interactive = interactive  # False: errors go to the log and ``errors`` only (scripts)
        self.errors: list[str] = []
        self.error_box: QtWidgets.QMessageBox | None = None
        self.session = Session(self)
        self.host = WorkerHost(self)
        self.jobs: dict[int, Job] = {}  # run id -> its job
        self.setWindowTitle("matchscope explorer")
        self.setWindowIcon(icon("app"))
        self.setAcceptDrops(True)
        self.setDockOptions(QtWidgets.QMainWindow.DockOption.AnimatedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks)
        self._build_views()
        self._build_actions()
        self._build_menus()
        self._wire()
        self.clock = time.perf_counter  # tests move their own
        self._redraw_due = -math.inf  # while a run is live, the next redraw waits until then
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.tick)
        self.timer.start()
        self.resize(*first_size(QtGui.QGuiApplication.primaryScreen()))
        self.fit_docks()
        self._restore_layout()
        self._tab_changed()
        self.log_message("info", "Ready. Open a file (Ctrl+O), a sample or generate a problem.")

    # ==== construction ========================================================================
    def _build_views(self) -> None:
        s = self.session
        self.labels_view = LabelsView(s)
        self.activity_view = ActivityView(s)
        self.workload_view = WorkloadView(s)
        self.tracks_view = Tracks3DView(s)
        self.batch_view = BatchView(s)
        self.compare_view = CompareView(s)
        self.cluster_view = ClusterView(s)  # Run on cluster… (explorer/cluster_dialog.py)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        for view in self.views:
            self.tabs.addTab(view, view.title)
        self.timeline = Timeline(s)
        central = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(central)
        v.setContentsMargins(0, 0, 0, 0)
        v.setSpacing(0)
        v.addWidget(self.tabs, 1)
        line = QtWidgets.QFrame()
        line.setFrameShape(QtWidgets.QFrame.Shape.HLine)
        line.setFrameShadow(QtWidgets.QFrame.Shadow.Sunken)
        v.addWidget(line)
        v.addWidget(self.timeline)
        # the views and the timeline below them keep this much: at 1024 pixels the docks take the
        # rest, and the timeline's position ("report 46 of 46 · 6.41 ms") still shows whole
        central.setMinimumWidth(CENTRAL_MIN_WIDTH)
        self.setCentralWidget(central)

        self.dataset_panel = DatasetPanel(s)
        self.solver_panel = SolverPanel(s)
        self.log_panel = LogPanel()
        self.dataset_dock = self._dock("Dataset", self.dataset_panel, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea)
        # the Solver panel scrolls only its options: Run, Stop, progress and the result stay in sight
        self.solver_dock = self._dock("Solver", self.solver_panel, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea,
                                      scroll=False)
        self.log_dock = self._dock("Log", self.log_panel, QtCore.Qt.DockWidgetArea.BottomDockWidgetArea,
                                   scroll=False)
        # the left column runs the full height: the log sits under the charts only
        self.setCorner(QtCore.Qt.Corner.BottomLeftCorner, QtCore.Qt.DockWidgetArea.LeftDockWidgetArea)

        bar = self.statusBar()
        self.status_label = ElidedLabel()
        self.busy_bar = QtWidgets.QProgressBar()
        self.busy_bar.setRange(0, 0)
        self.busy_bar.setMaximumWidth(160)
        self.busy_bar.setMaximumHeight(14)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        self.busy_label = QtWidgets.QLabel()
        self._status_timer = QtCore.QTimer(self)  # owned by the window: never fires after it is gone
        self._status_timer.setSingleShot(True)
        self._status_timer.timeout.connect(lambda: self.status_label.setText(""))
        self.warmup_label = QtWidgets.QLabel()
        self.warmup_bar = QtWidgets.QProgressBar()
        self.warmup_bar.setMaximumWidth(120)
        self.warmup_bar.setMaximumHeight(14)
        self.warmup_bar.setTextVisible(False)
        for w in (self.warmup_label, self.warmup_bar):
            w.setToolTip("Compiling every solver's kernels once for this machine, in the background; "
                         "runs do not wait for it, and later starts load them from the cache.")
            w.hide()
        self.background_warmup = None
        self._warmup_text = ""  # the background warm-up's last progress words
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.warmup_label)
        bar.addPermanentWidget(self.warmup_bar)
        bar.addPermanentWidget(self.busy_label)
        bar.addPermanentWidget(self.busy_bar)

    def _dock(self, title: str, widget: QtWidgets.QWidget, area, scroll: bool = True) -> QtWidgets.QDockWidget:
        dock = QtWidgets.QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower()}")
        if scroll:
            area_widget = QtWidgets.QScrollArea()
            area_widget.setWidgetResizable(True)
            area_widget.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
            area_widget.setWidget(widget)
            widget = area_widget
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    @property
    def views(self) -> list:
        return [self.labels_view, self.activity_view, self.workload_view, self.tracks_view, self.batch_view,
                self.compare_view, self.cluster_view]

    def _action(self, text: str, slot, shortcut=None, icon_name: str | None = None, tip: str = "") -> QtGui.QAction:
        action = QtGui.QAction(text, self)
        if icon_name:
            action.setIcon(icon(icon_name))
        if shortcut is not None:
            keys = shortcut if isinstance(shortcut, (list, tuple)) else [shortcut]
            action.setShortcuts([QtGui.QKeySequence(k) for k in keys])
            action.setShortcutContext(QtCore.Qt.ShortcutContext.ApplicationShortcut)
        if tip:
            action.setStatusTip(tip)
            action.setToolTip(tip)
        action.triggered.connect(lambda *_: slot())
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        K = QtGui.QKeySequence.StandardKey
        self.act_open = self._action("&Open…", self.open_dialog, K.Open, "open", "Open a problem or run record")
        self.act_sample = self._action("Open &Sample…", self.open_sample_dialog, "Ctrl+Shift+O", "sample",
                                       "Open one of the bundled sample graphs")
        self.act_generate = self._action("&Generate…", self.generate_dialog, "Ctrl+G", "generate",
                                         "Generate a synthetic problem")
        self.act_open_run = self._action("Open &Run Record…", self.open_run_dialog, None, None,
                                         "Load a recorded run for replay")
        self.act_save_run = self._action("Save Run Record…", self.save_run_dialog, "Ctrl+S", None,
                                         "Save the current run's telemetry for replay")
        self.act_save_dataset = self._action("Save Dataset &As…", self.save_dataset_dialog, "Ctrl+Shift+S", None,
                                             "Write the current problem to a file (the format follows the extension)")
        self.act_quit = self._action("&Quit", self.close, K.Quit)
        self.act_run = self._action("&Run", self.start_run, ["Ctrl+R", "F5"], "run", "Run the chosen algorithm")
        self.act_stop = self._action("&Stop", self.stop, "Esc", "stop", "Stop the running solver")
        self.act_compare = self._action("Compare…", lambda: self.tabs.setCurrentWidget(self.compare_view), None,
                                        None, "Compare algorithms on this problem")
        self.act_cluster = self._action("Run on C&luster…", lambda: cluster_dialog.open_dialog(self), None, None,
                                        "Solve a batch, a point series or a folder of files on a Dask cluster")
        self.act_export_view = self._action("&Export Current View…", self.export_view_dialog, "Ctrl+E", "export",
                                            "Save the current view as PNG / SVG, or its data as CSV")
        self.act_export_solution = self._action("Export &Solution…", self.export_solution_dialog, "Ctrl+Shift+E",
                                                None, "Save the matching / assignment / flow")
        self.act_export_3d = self._action("Export 3D View as PNG…", self.export_3d_dialog, None, None,
                                          "Save the 3D view of a point series as PNG")
        self.act_export_dataset = self._action("Export Dataset Preview…", self.export_dataset_dialog, None, None,
                                               "Save the dataset dock's chart as PNG / SVG, or its data as CSV")
        self.act_export_compare = self._action("Export Comparison Table…", self.export_comparison_dialog)
        self.act_export_report = self._action("Export Run &Report…", self.export_report_dialog, None, None,
                                              "Markdown summary with every chart as PNG")
        self.act_step_back = self._action("Step Back", lambda: self.timeline.step(-1), "Ctrl+Left")
        self.act_step_fwd = self._action("Step Forward", lambda: self.timeline.step(1), "Ctrl+Right")
        self.act_play = self._action("Play / Pause", lambda: self.timeline.set_playing(
            not self.timeline.play_button.isChecked()), "Ctrl+P")
        self.act_reset_layout = self._action("Reset Layout", self.reset_layout)
        # one entry per tab, Ctrl+1..Ctrl+5 in tab order
        self.view_actions = []
        self.view_group = QtGui.QActionGroup(self)  # exclusive: the shown tab is the checked entry
        for index, view in enumerate(self.views):
            action = self._action(f"{view.title} View", lambda v=view: self.show_view(v), f"Ctrl+{index + 1}",
                                  None, f"Show the {view.title} tab")
            action.setCheckable(True)
            self.view_group.addAction(action)
            self.view_actions.append(action)
        self.act_about = self._action("About", self.about)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        file_menu.addActions([self.act_open, self.act_sample, self.act_generate])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addSeparator()
        file_menu.addAction(self.act_save_dataset)
        file_menu.addSeparator()
        file_menu.addActions([self.act_open_run, self.act_save_run])
        file_menu.addSeparator()
        file_menu.addAction(self.act_quit)
        run_menu = mb.addMenu("&Run")
        run_menu.addActions([self.act_run, self.act_stop, self.act_compare, self.act_cluster])
        run_menu.addSeparator()
        run_menu.addActions([self.act_play, self.act_step_back, self.act_step_fwd])
        self.export_menu = export_menu = mb.addMenu("&Export")
        export_menu.addActions([self.act_export_view, self.act_export_solution, self.act_export_3d,
                                self.act_export_dataset, self.act_export_compare, self.act_export_report])
        # what can be exported depends on what the views hold now: decided when the menu opens
        export_menu.aboutToShow.connect(self._update_export_actions)
        view_menu = mb.addMenu("&View")
        view_menu.addActions(self.view_actions)
        view_menu.addSeparator()
        for dock in (self.dataset_dock, self.solver_dock, self.log_dock):
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addSeparator()
        view_menu.addAction(self.act_reset_layout)
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self.act_about)
        tb = self.addToolBar("Main")
        tb.setObjectName("toolbar-main")
        tb.setIconSize(QtCore.QSize(20, 20))
        tb.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tb.addActions([self.act_open, self.act_sample, self.act_generate])
        tb.addSeparator()
        tb.addActions([self.act_run, self.act_stop])
        tb.addSeparator()
        tb.addAction(self.act_export_view)
        self._rebuild_recent()

    def _wire(self) -> None:
        w = self.host.worker
        w.jobStarted.connect(self._job_started)
        w.jobWarming.connect(self._job_warming)
        w.jobTimed.connect(self._job_timed)
        w.jobProgress.connect(self._job_progress)
        w.jobLoadProgress.connect(self._job_load_progress)
        w.jobFinished.connect(self._job_finished)
        w.jobFailed.connect(self._job_failed)
        s = self.session
        s.datasetChanged.connect(self._dataset_changed)
        s.runStarted.connect(self._run_state_changed)
        s.runFinished.connect(self._run_state_changed)
        s.runFailed.connect(lambda run, msg: self._run_state_changed(run))
        s.currentRunChanged.connect(self._current_run_changed)
        self.solver_panel.runRequested.connect(self.start_run)
        self.solver_panel.stopRequested.connect(self.stop)
        self.solver_panel.validityChanged.connect(self._update_actions)
        self.compare_view.addCurrentRequested.connect(self.add_current_to_compare)
        self.compare_view.addAllRequested.connect(self.add_all_to_compare)
        self.compare_view.runRequested.connect(self.run_comparison)
        self.compare_view.stopRequested.connect(self.stop)
        self.batch_view.itemRequested.connect(self.run_batch_item)
        cluster_dialog.attach(self)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.dataset_panel.readAsRequested.connect(self.reread_as)
        app = QtWidgets.QApplication.instance()
        hints = app.styleHints() if app is not None else None
        if hints is not None and hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._system_scheme_changed)
        self._update_actions()

    # ==== the frame clock =====================================================================
    def tick(self) -> None:
        """~30 Hz: pull new telemetry into columns and redraw the visible view if anything changed."""
        run = self.session.current_run
        live = run is not None and run.is_active
        if live:
            run.sync()
            self.solver_panel.show_live(run)
            self.timeline.update_position()
        started = self.clock()
        if live and started < self._redraw_due:
            return  # the last redraw was slow: the solver gets the interpreter meanwhile
        if self.current_view().refresh():
            self.act_export_view.setEnabled(self.current_view().has_content())
        ended = self.clock()
        self._redraw_due = ended + (ended - started) * (1.0 / LIVE_REDRAW_SHARE - 1.0)

    def current_view(self):
        return self.tabs.currentWidget()

    def show_view(self, view) -> None:
        self.tabs.setCurrentWidget(view)

    def _tab_changed(self, *_) -> None:
        self.current_view().refresh(force=True)
        for action, view in zip(self.view_actions, self.views):
            action.setChecked(view is self.current_view())
        self._update_export_actions()

    def refresh_all(self) -> None:
        """Redraw every view now (scripts and tests; the GUI redraws lazily)."""
        for run in self.session.runs:
            run.sync()
        for view in self.views:
            view.refresh(force=True)
        self.dataset_panel.refresh(force=True)
        self.timeline.update_position()

    # ==== status, errors, log =================================================================
    def log_message(self, level: str, message: str) -> None:
        self.log_panel.log(level, message)

    def status(self, message: str, timeout_ms: int = 0) -> None:
        """Show ``message`` in the status bar; a timed one clears itself unless replaced meanwhile."""
        self.status_label.setText(message)
        self._status_timer.stop()
        if timeout_ms:
            self._status_timer.start(timeout_ms)

    def report_error(self, message: str, title: str = "matchscope", short: str | None = None) -> None:
        """The one place errors reach the user: log, status bar (``short``, or the message elided),
        and a (non-blocking) message box with the whole message."""
        self.errors.append(message)
        self.log_message("error", message)
        self.status(short or message)
        if self.interactive:
            self._show_error_dialog(title, message)

    def _show_error_dialog(self, title: str, message: str) -> None:
        if self.error_box is not None:
            self.error_box.close()
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Critical, title, message,
                                    QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setWindowModality(QtCore.Qt.WindowModality.WindowModal)
        box.open()  # open(), not exec(): nothing waits on the user
        self.error_box = box

    def _set_busy(self, text: str | None, done: int | None = None, total: int | None = None) -> None:
        """Show what the worker does; with ``done`` / ``total`` the bar shows how far (else it is busy)."""
        self.busy_label.setText(text or "")
        self.busy_bar.setVisible(bool(text))
        if done is not None and total:
            self.busy_bar.setRange(0, 1000)
            self.busy_bar.setValue(round(1000 * min(1.0, done / total)))
        else:
            self.busy_bar.setRange(0, 0)

    # ==== opening =============================================================================
    def _last_dir(self, key: str) -> str:
        return str(self.settings.value(f"paths/{key}", str(Path.home())))

    def _remember_dir(self, key: str, path: str) -> None:
        self.settings.setValue(f"paths/{key}", str(Path(path).resolve().parent))

    def open_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open problem or run record", self._last_dir("open"),
                                                        ";;".join(export.open_filters()))
        if not path:
            return
        problem = None
        kinds = readings(path) if not is_run_record(path) else ()
        if len(kinds) > 1:  # a format that can mean several problems: ask how to read it
            problem = self.ask_read_as(path, kinds)
            if problem is None:
                return
        self.open_path(path, problem=problem)

    def ask_read_as(self, path: str, kinds: tuple[str, ...]) -> str | None:
        """Which problem to read ``path`` as (the format's default first); None if cancelled."""
        dialog = ReadAsDialog(Path(path).name, kinds, self)
        return dialog.chosen() if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted else None

    def reread_as(self, problem: str) -> Job | None:
        """Read the current file again as another kind of problem (Dataset dock ▸ Read as)."""
        if not self.session.path or (self.session.problem is not None and self.session.problem.kind == problem):
            return None
        return self.open_path(self.session.path, problem=problem)

    def open_run_dialog(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self, "Open run record", self._last_dir("open"),
                                                        ";;".join(export.run_record_filters()))
        if path:
            self.open_path(path, as_record=True)

    def open_sample_dialog(self) -> None:
        gallery = SampleGallery(self)
        if gallery.exec() == QtWidgets.QDialog.DialogCode.Accepted and gallery.selected_path():
            self.open_path(gallery.selected_path())

    def generate_dialog(self) -> None:
        try:
            dialog = GenerateDialog(self)
        except Exception as exc:
            self.report_error(f"generators unavailable: {exc}")
            return
        if dialog.exec() == QtWidgets.QDialog.DialogCode.Accepted:
            kind, params = dialog.request()
            self.generate(kind, params)

    def open_path(self, path, as_record: bool | None = None, problem: str | None = None) -> Job:
        """Load a problem file (or a run record) in the worker; the current dataset stays until it succeeds."""
        path = str(path)
        self._remember_dir("open", path)
        record = is_run_record(path) if as_record is None else as_record
        job = Job("run-record" if record else "load", {"path": path, "problem": problem})
        self._set_busy(f"loading {Path(path).name}…")
        self.log_message("info", f"opening {path}" + (f" as {problem}" if problem else ""))
        return self.host.submit(job)

    def _job_load_progress(self, job: Job, done: int, total: int) -> None:
        if job in self.host.pending and total > 0:
            name = Path(job.params["path"]).name
            self._set_busy(f"loading {name}: {done / total:.0%} of {bytes_words(total)}", done, total)

    def generate(self, kind: str, params: dict) -> Job:
        self._set_busy(f"generating {kind}…")
        self.log_message("info", f"generating {kind} ({settings_words(params, 'default parameters')})")
        return self.host.submit(Job("generate", {"kind": kind, "params": dict(params)}))

    def _add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())  # the list is read from other working folders too
        recent = [p for p in self.recent_files() if p != path]
        recent.insert(0, path)
        self.settings.setValue("recent", recent[:MAX_RECENT])
        self._rebuild_recent()

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for p in files:
            action = self.recent_menu.addAction(Path(p).name)
            action.setToolTip(p)
            action.setStatusTip(p)
            action.triggered.connect(lambda *_, p=p: self.open_path(p))
        self.recent_menu.setEnabled(bool(files))

    # drag and drop
    def dragEnterEvent(self, event: QtGui.QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QtGui.QDropEvent) -> None:
        files = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if files:
            event.acceptProposedAction()
            self.open_path(files[0])

    # ==== running =============================================================================
    def start_run(self) -> RunState | None:
        cfg = self.solver_panel.config()
        if self.session.problem is None:
            self.report_error("Open or generate a problem first.")
            return None
        if cfg is None:
            self.report_error(f"No algorithm can run on {self.session.problem.kind} problems.")
            return None
        if self.session.active_runs():
            self.status("A run is in progress: stop it first.", 3000)
            return None
        invalid = self.solver_panel.invalid_reason()
        if invalid:  # Run is disabled then; a script or a shortcut gets the same reason
            self.report_error(invalid)
            return None
        return self.run_config(cfg)

    def run_config(self, cfg: dict, group: int | None = None, make_current: bool = True) -> RunState | None:
        """Queue a run of ``cfg`` on the current problem. Options and backend are checked first: a
        configuration that cannot run is reported and never becomes a run in the list."""
        problem = self.session.problem
        try:
            algo = algorithm_named(cfg["algorithm"], problem)
            if algo is None:
                raise InputError(f"there is no algorithm called {cfg['algorithm']}")
            options = algo.parse_options(dict(cfg["options"]))
            options = {k: v for k, v in options.items() if k in cfg["options"]}
            check_backend(algo, cfg["backend"])
            reason = self.solver_panel.problem_reason()
            if reason:  # e.g. a one-frame point series: refused here, never a failed run in the list
                raise InputError(reason)
        except InputError as exc:
            self.report_error(str(exc), title=f"{cfg['algorithm']} cannot run")
            return None
        run = RunState(cfg["algorithm"], cfg["backend"], options, problem.kind, group=group,
                       uninterruptible=uninterruptible(algo), problem=problem, dataset=self.session.dataset_name)
        kind = {"points": "track", "batch": "batch"}.get(problem.kind, "solve")
        job = Job(kind, {"problem": problem, "algorithm": cfg["algorithm"], "backend": cfg["backend"],
                         "options": dict(options)}, run=run)
        self.jobs[run.id] = job
        self.session.add_run(run, make_current=make_current)
        self.log_message("info", f"run #{run.id}: {cfg['algorithm']} on {cfg['backend']} backend, "
                                 f"{settings_words(options)}, on {run.dataset}")
        self.host.submit(job)
        self._update_actions()
        return run

    def run_batch_item(self, b: int) -> RunState | None:
        """Solve problem ``b`` of the loaded batch on its own, with telemetry, to watch it in the other
        tabs: the single-problem Hungarian, on the backend the batch ran on (the registry's)."""
        batch = self.session.problem
        if batch is None or batch.kind != "batch":
            return None
        if self.session.active_runs():
            self.status("A run is in progress: stop it first.", 3000)
            return None
        shown = self.batch_view.batch_run()
        backend = shown.batch.backend if shown is not None and shown.batch.backend != "cudasim" else "auto"
        try:
            problem = batch.item(int(b))
            algo = solvers.algorithms()["hungarian"]
            check_backend(algo, backend)
        except InputError as exc:
            self.report_error(str(exc), title="cannot solve that problem alone")
            return None
        run = RunState(algo.name, backend, {}, problem.kind, uninterruptible=uninterruptible(algo), problem=problem,
                       dataset=f"{self.session.dataset_name}, problem {int(b)}")
        job = Job("solve", {"problem": problem, "algorithm": algo.name, "backend": backend, "options": {}}, run=run)
        self.jobs[run.id] = job
        self.session.add_run(run)
        self.log_message("info", f"run #{run.id}: problem {int(b)} of the batch alone, {algo.name} on {backend}")
        self.host.submit(job)
        self.tabs.setCurrentWidget(self.labels_view)
        self._update_actions()
        return run

    def stop(self) -> None:
        active = self.session.active_runs()
        if not active:
            return
        for run in active:
            job = self.jobs.get(run.id)
            run.stop_requested = True
            if job is not None:
                job.request_stop()
            if run.uninterruptible:
                # the scipy call cannot be cut short: free the GUI now, drop its answer when it comes
                self.session.mark_failed(run, "cancelled", "stopped; the result will be discarded when it returns")
                self.status(f"{run.algorithm} runs as one call and cannot be interrupted mid-call; "
                            "its result will be discarded when it returns.")
            else:
                self.status(f"stopping {run.algorithm}…", 3000)
        self.log_message("warning", f"stop requested for {', '.join(r.label for r in active)}")

    def _job_started(self, job: Job) -> None:
        if job.run is not None:
            self.session.mark_started(job.run)
            self._set_busy(f"running {job.run.algorithm}…")
            if job.run.uninterruptible:
                self.status(f"{job.run.algorithm} runs as one call: Stop cannot interrupt it mid-call.")

    def _job_warming(self, job: Job, what: str, first: bool) -> None:
        job.run.preparing = what
        if first:  # later warm-ups (another size class or options) are logged only if they took long
            self.log_message("info", f"run #{job.run.id}: {what}… (once per session; not counted in the run's time)")
        self._set_busy(f"{what}…")
        self.solver_panel.show_live(job.run)

    def _job_timed(self, job: Job) -> None:
        """The timed solve starts: the run's clock starts here, after any warm-up."""
        run = job.run
        run.preparing = ""
        if run.status != "running":
            return
        if job.timed_from is not None:
            run.started_at = job.timed_from
        run.warmup_seconds = job.warmup_seconds
        if job.warmup_seconds > 0.2:
            self.log_message("info", f"run #{run.id}: {run.algorithm} ready after {duration(job.warmup_seconds)} "
                                     "of compiling / loading its kernels; timing the run now")
        self.solver_panel.run_timed(run)
        self._set_busy(f"running {run.algorithm}…")

    def _job_progress(self, job: Job) -> None:
        run = job.run
        if run is not None and run.status == "running":
            self.session.mark_progress(run)
            if run.progress is not None and run.progress[1] > 0:  # work of many solves: how far it is
                done, total, unit = run.progress
                self._set_busy(f"{run.algorithm}: {unit} {min(done + 1, total):,} of {total:,}", done, total)

    def _job_finished(self, job: Job, payload) -> None:
        if job.kind in ("load", "generate"):
            path = job.params.get("path")
            generator = (job.params["kind"], job.params.get("params", {})) if job.kind == "generate" else None
            self.session.set_problem(payload, path, generator=generator)
            if path:
                self._add_recent(path)
            name = self.session.dataset_name
            self.setWindowTitle(f"matchscope explorer — {name}")
            verb = "loaded" if path else "generated"
            self.log_message("info", f"{verb} {name}: {problem_words(payload.describe())}")
            self.status(f"{verb} {name}", 5000)
        elif job.kind == "run-record":
            path = job.params["path"]
            run = RunState.from_record(payload, path=path)
            run.dataset = f"replay of {Path(path).name}"
            self.session.add_run(run)
            self._add_recent(path)
            self.log_message("info", f"loaded run record {path}: {run.algorithm} on {run.backend_used}, "
                                     f"{problem_words(run.problem_info)}, "
                                     f"{run_iterations_words(run.iterations)}, "
                                     f"{plural(len(run.recorder.snapshots), 'snapshot')}; "
                                     f"{run.certificate_text or 'no certificate recorded'}")
            self.status(f"replaying {run.label}", 5000)
        else:
            run = job.run
            if run.status == "cancelled":  # stopped while an uninterruptible solver ran: discard
                self.log_message("warning", f"run #{run.id} returned after Stop; result discarded")
            else:
                run.ended_at = job.finished_at
                self.session.mark_finished(run, payload)
                if run.batch is not None and run is self.session.current_run:
                    self.tabs.setCurrentWidget(self.batch_view)
                level = "info" if run.certificate_status in ("optimal", "within-gap", "proven-infeasible") else "warning"
                self.log_message(level, self._outcome(run))
                self.status(self._short_outcome(run), 8000)
        self._job_done()

    def _job_failed(self, job: Job, category: str, message: str) -> None:
        if job.run is None:
            self.report_error(message)
        else:
            run = job.run
            run.error_category = category
            if category == "cancelled":
                latency = ""
                if job.stop_requested_at is not None and job.cancelled_at is not None:
                    latency = f" ({(job.cancelled_at - job.stop_requested_at) * 1e3:.0f} ms after Stop)"
                if run.status != "cancelled":
                    self.session.mark_failed(run, "cancelled", message)
                self.log_message("warning", f"run #{run.id} {run.algorithm} stopped{latency}")
                self.status(f"{run.algorithm} stopped{latency}", 5000)
            else:
                run.ended_at = job.finished_at
                source = getattr(run.problem, "source", None)
                if category == "input" and source and not message.startswith(str(source)):
                    message = f"{source}: {message}"  # named once, as the command line names it
                self.session.mark_failed(run, "failed", message)
                self.report_error(message, title=f"{run.algorithm} failed",
                                  short=f"run #{run.id} {run.algorithm} failed (see the log)")
        self._job_done()

    def _job_done(self) -> None:
        running = [r for r in self.session.runs if r.status == "running"]
        self._set_busy(f"running {running[0].algorithm}…" if running else
                       ("working…" if self.host.busy and len(self.host.pending) > 1 else None))
        self._update_actions()
        self.refresh_visible()

    def refresh_visible(self) -> None:
        self.timeline.update_position()
        self.current_view().refresh(force=True)

    @staticmethod
    def _outcome(run: RunState) -> str:
        """The log's line for a finished run: everything, the certificate's own words included."""
        head = f"run #{run.id} {run.algorithm} on {run.backend_used}: "
        times = time_words(run.solver_seconds, run.wall_seconds, run.warmup_seconds)
        short = certificate_short(run.certificate_status, getattr(getattr(run.result, "certificate", None), "gap", 0))
        if run.result is not None:
            r = run.result
            return (f"{head}value {r.value:.6g} on {run.dataset}, {run_iterations_words(r.iterations)}, {times}; "
                    f"{short}. Certificate: {r.certificate.summary()}")
        if run.batch is not None:
            return f"{head}{run.dataset}, {times}; {run.certificate_text}"
        track = run.track
        frames = getattr(track, "frame_stats", None) or []
        parts = [plural(len(frames), "frame pair"), plural(run.iterations or 0, "assignment solve")]
        acc = getattr(track, "accuracy", None)
        if acc is not None:
            parts.append(f"accuracy {acc:.2%}")
        recall = (getattr(track, "summary", None) or {}).get("recall")
        if recall is not None:
            parts.append(f"recall {recall:.2%}")
        return f"{head}{run.dataset}, {', '.join(parts)}, {times}; {short} ({run.certificate_text})"

    @staticmethod
    def _short_outcome(run: RunState) -> str:
        """The status bar's line: which run, its value, certified or not. The details are in the log."""
        gap = getattr(getattr(run.result, "certificate", None), "gap", 0)
        if run.result is not None:
            return (f"run #{run.id} {run.algorithm}: value {run.result.value:.6g} · "
                    f"{certificate_short(run.certificate_status, gap)}")
        if run.batch is not None:
            return f"run #{run.id} {run.algorithm}: {len(run.batch):,} problems · {certificate_short(run.certificate_status)}"
        acc = getattr(run.track, "accuracy", None)
        value = f"accuracy {acc:.2%}" if acc is not None else "tracked"
        return f"run #{run.id} {run.algorithm}: {value} · {certificate_short(run.certificate_status)}"

    def _current_run_changed(self, run) -> None:
        self.solver_panel.show_live(run)
        self.dataset_panel.refresh(force=True)  # a replayed run's record stands in for a missing dataset
        self._update_actions()

    def _dataset_changed(self, problem) -> None:
        self._fit_view_to(problem)
        self.solver_panel.set_problem(problem)
        self.dataset_panel.refresh(force=True)
        self.compare_view.clear_configs()
        self._update_actions()
        self.refresh_visible()

    def _fit_view_to(self, problem) -> None:
        """A view that cannot show the new dataset's kind gives way to one that can: Batch for one
        problem, 3D without points (the window reopens on the last session's tab, which may be
        either). A batch opens on Batch, where its runs are read; other views stay as chosen."""
        if problem is None:
            return
        kind, view = problem.kind, self.current_view()
        fitting = {"batch": self.batch_view, "points": self.tracks_view}.get(kind, self.labels_view)
        if kind == "batch" and view in (self.labels_view, self.activity_view, self.workload_view, self.tracks_view):
            self.tabs.setCurrentWidget(fitting)
        elif (view is self.batch_view and kind != "batch") or (view is self.tracks_view and kind != "points"):
            self.tabs.setCurrentWidget(fitting)

    def _run_state_changed(self, run: RunState) -> None:
        if run.status == "running":
            self.solver_panel.run_started(run)
        else:
            self.solver_panel.run_ended(run)
        self._update_actions()

    def _update_actions(self) -> None:
        busy = bool(self.session.active_runs())
        self._pace_background_warmup(busy)
        have_problem = self.session.problem is not None
        self.act_run.setEnabled(have_problem and not busy and self.solver_panel.current_algorithm() is not None
                                and not self.solver_panel.invalid_reason())
        self.act_stop.setEnabled(busy)
        run = self.session.current_run
        # a batch run sends no telemetry to record: its answers go out through Export ▸ Solution
        self.act_save_run.setEnabled(run is not None and not run.is_active and run.batch is None)
        # a kind no format writes (a batch: its .npy is the file it came from) has nothing to save as
        self.act_save_dataset.setEnabled(have_problem and bool(export.dataset_filters(self.session.problem)))
        self._update_export_actions()
        self.solver_panel.update_buttons()

    def _update_export_actions(self) -> None:
        """An export is offered only when it can write something real (the views say what they hold)."""
        run = self.session.current_run
        finished = run is not None and not run.is_active
        for view in (self.current_view(), self.tracks_view, self.compare_view):
            view.refresh()
        self.dataset_panel.refresh()
        self.act_export_view.setEnabled(self.current_view().has_content())
        self.act_export_solution.setEnabled(finished and (run.result is not None or run.track is not None
                                                          or run.batch is not None))
        self.act_export_3d.setEnabled(self.tracks_view.has_content())
        self.act_export_dataset.setEnabled(self.dataset_panel.has_content() and self.session.problem is not None)
        self.act_export_compare.setEnabled(bool(self.compare_view.table_rows()[1]))
        self.act_export_report.setEnabled(finished)

    # ==== compare =============================================================================
    def add_current_to_compare(self) -> None:
        cfg = self.solver_panel.config()
        if cfg is not None:
            self.compare_view.add_config(cfg["algorithm"], cfg["backend"], cfg["options"])

    def add_all_to_compare(self) -> None:
        problem = self.session.problem
        if problem is not None and problem.kind == "batch":  # one solver: its backends side by side
            from solvers.targets import available_backends
            for algo in algorithms_for(problem):
                for backend in algo.backends:
                    if backend in available_backends() and backend != "cudasim":  # the simulator: tiny work only
                        self.compare_view.add_config(algo.name, backend, {})
            return
        for algo in algorithms_for(problem):
            self.compare_view.add_config(algo.name, "auto", {})

    def run_comparison(self, configs: list[dict]) -> list[RunState]:
        """Queue every configuration; the worker runs them one after another."""
        if self.session.problem is None or not configs:
            return []
        reason = self.solver_panel.problem_reason()
        if reason:  # no configuration can run on this problem: said once, nothing is queued
            self.report_error(reason, title="Nothing can run on this dataset")
            return []
        group = self.session.new_group()
        self.session.comparison = []
        runs = [self.run_config(cfg, group=group, make_current=(i == 0)) for i, cfg in enumerate(configs)]
        runs = [run for run in runs if run is not None]  # a refused configuration is reported, not queued
        self.tabs.setCurrentWidget(self.compare_view)
        return runs

    # ==== export ==============================================================================
    def _ask_save(self, title: str, filters: list[str], suggested: str) -> str | None:
        start = os.path.join(self._last_dir("export"), suggested)
        path, chosen = QtWidgets.QFileDialog.getSaveFileName(self, title, start, ";;".join(filters))
        if not path:
            return None
        if not Path(path).suffix and chosen and "*." in chosen:
            path += chosen[chosen.index("*.") + 1:].split()[0].rstrip(")")
        self._remember_dir("export", path)
        return path

    def _guarded(self, what: str, fn, *args):
        """Run an export; say where it went, or why it could not be written (one line, no traceback)."""
        try:
            out = fn(*args)
        except Exception as exc:  # an export failing must say why, not crash
            if isinstance(exc, (InputError, ValueError, RuntimeError)):
                reason = str(exc)
            elif isinstance(exc, OSError):
                reason = f"cannot write: {exc.strerror or exc}"
            else:  # a bug of ours: said plainly, the traceback goes to the log
                log.exception("%s failed", what)
                reason = f"internal error: {exc} (the log has the details)"
            verb, _, rest = what.partition(" ")  # "saved the dataset" -> "could not save the dataset"
            self.report_error(f"could not {FAILED_VERBS.get(verb, verb)} {rest}: {reason}", title="Export failed")
            return None
        files = out if isinstance(out, (list, tuple)) else [out]
        where = ", ".join(str(f) for f in files)
        self.log_message("info", f"{what}: {where}")
        self.status(f"{what}: {where if len(files) == 1 else plural(len(files), 'file')}", 5000)
        return out

    def export_dataset_dialog(self) -> None:
        self.export_view_dialog(self.dataset_panel)

    def export_view_dialog(self, view=None) -> None:
        view = view or self.current_view()
        path = self._ask_save(f"Export {view.title}", export.view_filters(view.formats),
                              f"{view.title.lower()}.{view.formats[0]}")
        if path:
            self._guarded(f"exported the {view.title.lower()} view", self.export_view, view, path)

    def export_view(self, view, path) -> list[Path]:
        """PNG / SVG of the view's charts, CSV of their data, Markdown (comparison table)."""
        view.refresh(force=True)
        suffix = Path(path).suffix.lower()
        if view is self.compare_view and suffix in (".md", ".csv"):
            return [self.export_comparison(path)]
        if not view.has_content():
            raise ValueError(f"the {view.title} view has nothing to export yet")
        if view is self.tracks_view:
            if suffix == ".png":
                return [self.export_3d(path)]
            if suffix == ".csv" and view.tables():
                return export.tables_csv(view.tables(), path)
            raise ValueError("the 3D view exports as PNG (and its links as CSV once tracked)")
        if suffix == ".png":
            return [export.chart_png(view.export_item(), path)]
        if suffix == ".svg":
            return [export.chart_svg(view.export_item(), path)]
        if suffix == ".csv":
            return export.tables_csv(view.tables(), path)
        raise ValueError(f"cannot export {view.title} as {suffix or 'a file without extension'}")

    def export_solution_dialog(self) -> None:
        run = self.session.current_run
        if run is None or (run.result is None and run.track is None and run.batch is None):
            return
        filters = export.batch_filters() if run.batch is not None else export.solution_filters(tracks=run.track is not None)
        stem = f"{run.algorithm}-{'tracks' if run.track is not None else 'batch' if run.batch is not None else 'solution'}"
        path = self._ask_save("Export solution", filters, f"{stem}.csv")
        if path:
            self._guarded("exported the solution", self.export_solution, path)

    def export_solution(self, path, run: RunState | None = None) -> Path:
        """The matching / assignment / flow, or a point series' tracks, in the format the extension
        names (as `matchscope solve --out` writes them)."""
        run = run or self.session.current_run
        if run is None or (run.result is None and run.track is None and run.batch is None):
            raise ValueError("no finished run to export")
        if run.track is not None:
            return export.tracks(run.track, path)
        if run.batch is not None:
            return export.batch_solution(run.batch, path, run.problem)
        return export.solution(run.result, path, run.problem)

    def export_3d_dialog(self) -> None:
        path = self._ask_save("Export 3D view", export.view_filters(["png"]), "view3d.png")
        if path:
            self._guarded("exported the 3D view", self.export_3d, path)

    def export_3d(self, path) -> Path:
        view = self.tracks_view
        view.refresh(force=True)
        if not view.has_content():
            raise ValueError("the 3D view shows a point series; this dataset has none")
        if Path(path).suffix.lower() != ".png":
            raise ValueError(f"the 3D view is exported as PNG, not {Path(path).suffix or 'a file without extension'}")
        return export.array_png(view.render_image(), path)

    def save_dataset_dialog(self) -> None:
        problem = self.session.problem
        if problem is None:
            return
        stem = Path(self.session.path).name.split(".")[0] if self.session.path else (
            self.session.generator[0] if self.session.generator else "dataset")
        filters = export.dataset_filters(problem)
        path = self._ask_save("Save dataset as", filters, f"{stem}{export.dataset_default_extension(problem)}")
        if path:
            self._guarded("saved the dataset", self.save_dataset, path)

    def save_dataset(self, path) -> Path:
        """Write the current problem with solvers.save (the format the extension names; atomic)."""
        if self.session.problem is None:
            raise ValueError("there is no dataset to save")
        return export.dataset(self.session.problem, path)

    def export_comparison_dialog(self) -> None:
        path = self._ask_save("Export comparison", export.view_filters(["csv", "md"]), "comparison.csv")
        if path:
            self._guarded("exported comparison", self.export_comparison, path)

    def export_comparison(self, path) -> Path:
        headers, rows = self.compare_view.table_rows()
        if not rows:
            raise ValueError("no comparison has been run")
        if Path(path).suffix.lower() == ".md":
            title = f"Comparison on {Path(self.session.path).name if self.session.path else 'generated problem'}"
            return export.rows_markdown(headers, rows, path, title=title)
        return export.rows_csv(headers, rows, path)

    def save_run_dialog(self) -> None:
        run = self.session.current_run
        if run is None:
            return
        path = self._ask_save("Save run record", [export.RUN_RECORD_FILTER], f"{run.algorithm}-run{run.id}.npz")
        if path:
            self._guarded("saved run record", self.save_run, path)

    def save_run(self, path, run: RunState | None = None) -> Path:
        run = run or self.session.current_run
        if run is None:
            raise ValueError("no run to save")
        if run.batch is not None:
            raise InputError("a batch run records no steps to replay: export its answers with Export ▸ Solution",
                             str(path))
        run.record().save(path)
        return Path(path)

    def export_report_dialog(self) -> None:
        run = self.session.current_run
        if run is None:
            return
        path = self._ask_save("Export run report", [export.REPORT_FILTER], f"{run.algorithm}-report.md")
        if path:
            self._guarded("exported report", self.export_report, path)

    def export_report(self, path) -> Path:
        from .report import write_report
        return write_report(self, path)

    # ==== layout, theme, lifecycle ============================================================
    def _restore_layout(self) -> None:
        self._default_state = self.saveState()
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        if state is not None:
            self.restoreState(state)
        tab = self.settings.value("window/tab")
        if tab is not None:
            try:
                self.tabs.setCurrentIndex(int(tab))
            except (TypeError, ValueError):
                pass

    def fit_docks(self) -> None:
        """Dock sizes for the window's size: a left column wide enough for the forms, most of its
        height for the Solver (its Run button and result lines must stay in sight), a short log."""
        width = min(max(int(self.width() * 0.28), 330), 430)
        self.resizeDocks([self.dataset_dock], [width], QtCore.Qt.Orientation.Horizontal)
        column = max(self.height() - 120, 300)
        # a short window gives the Dataset less (its facts scroll) so that the options keep a few rows
        share = 0.28 + 0.10 * min(max((self.height() - 700) / 200, 0.0), 1.0)
        self.resizeDocks([self.dataset_dock, self.solver_dock], [int(column * share), int(column * (1 - share))],
                         QtCore.Qt.Orientation.Vertical)
        self.resizeDocks([self.log_dock], [max(90, int(self.height() * 0.13))], QtCore.Qt.Orientation.Vertical)

    def reset_layout(self) -> None:
        self.restoreState(self._default_state)
        for dock in (self.dataset_dock, self.solver_dock, self.log_dock):
            dock.show()
        self.fit_docks()

    def _system_scheme_changed(self, *_):
        apply_app_theme(QtWidgets.QApplication.instance(), "system")

    def changeEvent(self, event: QtCore.QEvent) -> None:
        if event.type() in (QtCore.QEvent.Type.PaletteChange, QtCore.QEvent.Type.ApplicationPaletteChange):
            for view in [*self.views, self.dataset_panel]:
                view.apply_theme(self.palette())
            self.refresh_visible()
        super().changeEvent(event)

    def about(self) -> None:
        QtWidgets.QMessageBox.about(self, "matchscope explorer",
                                    f"<b>matchscope</b> {solvers.__version__}<br>GPU bipartite matching, assignment "
                                    "and maximum flow, with live telemetry.")

    def start_background_warmup(self, backends: list[str] | None = None) -> bool:
        """Compile every kernel in the background for the backends not yet warm here (first start
        on a machine); False when there is nothing to do."""
        from .background_warmup import BackgroundWarmup, backends_to_warm
        backends = backends_to_warm() if backends is None else backends
        if not backends:
            return False
        self.background_warmup = BackgroundWarmup(backends, self)
        self.background_warmup.progress.connect(self._warmup_progress)
        self.background_warmup.finished.connect(self._warmup_finished)
        self.log_message("info", "first start on this machine: the solvers' kernels are being compiled in the "
                                 f"background ({', '.join(backends)}); you can run solvers meanwhile")
        self.background_warmup.start()
        return True

    def _pace_background_warmup(self, busy: bool) -> None:
        """The background warm-up waits (at its next step) while a run goes: a run's time is not
        shared with compiling ahead."""
        if self.background_warmup is None or not self.background_warmup.running:
            return
        self.background_warmup.pause() if busy else self.background_warmup.resume()
        self._show_warmup_text()

    def _show_warmup_text(self) -> None:
        paused = self.background_warmup is not None and self.background_warmup.paused
        self.warmup_label.setText(self._warmup_text + (" · paused while a run goes" if paused else ""))

    def _warmup_progress(self, backend: str, done: int, total: int, label: str) -> None:
        # what is being prepared now: the first step alone can take a minute on an empty cache, and
        # "0 of 119" with an empty bar looked stuck (a newcomer pass); the whole label as a tooltip
        now = label.split(" on ")[0].split(" (")[0]
        self._warmup_text = (f"Preparing {backend} kernels: step {min(done + 1, total)} of {total}"
                             + (f" ({now})" if now else ""))
        self._show_warmup_text()
        self.warmup_label.setToolTip(label)
        self.warmup_bar.setRange(0, max(total, 1))
        self.warmup_bar.setValue(done)
        for w in (self.warmup_label, self.warmup_bar):
            w.show()

    def _warmup_finished(self, backend: str, summary: str) -> None:
        if summary:
            self.log_message("info", summary)
        if self.background_warmup is None or not self.background_warmup.running or backend == \
                self.background_warmup.backends[-1]:
            for w in (self.warmup_label, self.warmup_bar):
                w.hide()

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        if self.background_warmup is not None:
            self.background_warmup.stop()
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/tab", self.tabs.currentIndex())
        self.settings.sync()
        self.timer.stop()
        self.timeline.set_playing(False)
        if not self.cluster_view.shutdown():  # stops a cluster run and closes the cluster it started
            log.warning("a cluster run is still closing; leaving it behind")
        if not self.host.shutdown(wait_ms=2000):
            log.warning("a solver that cannot be interrupted is still running; leaving it behind")
        self.log_panel.detach()
        super().closeEvent(event)
