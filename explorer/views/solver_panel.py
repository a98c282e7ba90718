"""Solver dock: algorithms that fit the loaded problem, the backends this machine has, the algorithm's
declared options as a form (checked as they are typed), Run / Stop, progress and the run's numbers.

Only the description and the options scroll: Run, Stop, the progress bar and the result lines stay
in sight at any window height. "iterations" is always the solver's own count (Result.iterations);
telemetry reports, when shown, are called reports."""
from __future__ import annotations

import html
import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

import solvers
from solvers import registry
from solvers.errors import InputError
from solvers.targets import available_backends

from ..forms import editor_changed, option_widget, set_widget_value, widget_text, widget_value
from ..theme import icon
from ..wording import certificate_short, duration, plain_text, plural, problem_words, settings_words

IDLE = "no run yet"  # the status line before any run (a lone dash read as a stray mark)
NOTES_BESIDE_EMS = 34  # a result panel narrower than this many ems puts each note under its row
BACKEND_NOTES = {"cuda": "needs an NVIDIA GPU and driver (none usable in this process)",
                 "cudasim": "the CUDA simulator must be chosen before numba loads: start with NUMBA_ENABLE_CUDASIM=1"}


def algorithms_for(problem) -> list[registry.Algorithm]:
    """What can run on ``problem``; a point series is tracked frame pair by frame pair with an assignment
    solver, those made for point sets first (they need no distance matrices). The panel selects what
    solvers.track runs when none is named (solvers.default_algorithm)."""
    if problem is None:
        return []
    if problem.kind == "batch":  # the batch solvers declare themselves (solvers.batch.api)
        from solvers.batch.api import BATCH_SOLVERS
        return list(BATCH_SOLVERS.values())
    if problem.kind == "points":
        usable = [a for a in solvers.algorithms().values() if a.tracks_points]
        return sorted(usable, key=lambda a: "points" not in a.problem_kinds)
    return registry.for_problem(problem)


def algorithm_named(name: str, problem):
    """The algorithm called ``name`` among those for ``problem`` (a batch has its own), else the registry's."""
    if problem is not None and problem.kind == "batch":
        return next((a for a in algorithms_for(problem) if a.name == name), None)
    return solvers.algorithms().get(name)


def uninterruptible(algo: registry.Algorithm) -> bool:
    """As the algorithm declares it (one scipy call never polls the observer, so Stop cannot cut it short)."""
    return not algo.interruptible


INVALID_STYLE = "border: 1px solid #d64541; border-radius: 2px;"


def default_for(problem) -> str | None:
    """The algorithm solvers.solve picks for ``problem`` unnamed; None for a batch, which
    solvers.solve does not take (solve_batch: the list's first)."""
    if problem.kind == "batch":
        return None
    return solvers.default_algorithm(problem, "auto").algorithm


class SolverPanel(QtWidgets.QWidget):
    runRequested = QtCore.Signal()
    stopRequested = QtCore.Signal()
    validityChanged = QtCore.Signal()  # an option became valid or invalid: Run follows

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.option_widgets: dict[str, QtWidgets.QWidget] = {}
        self.option_errors: dict[str, str] = {}
        self._shown_run = None
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QtWidgets.QFormLayout()
        self.algo_combo = QtWidgets.QComboBox()
        self.algo_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.backend_combo = QtWidgets.QComboBox()
        top.addRow("Algorithm", self.algo_combo)
        top.addRow("Backend", self.backend_combo)
        layout.addLayout(top)

        # ---- what scrolls: description, options, notes -------------------------------------
        self.scroll = QtWidgets.QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QtWidgets.QWidget()
        v = QtWidgets.QVBoxLayout(inner)
        v.setContentsMargins(0, 0, 0, 0)
        self.description = QtWidgets.QLabel(wordWrap=True)
        self.description.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)  # follows theme changes
        self.options_box = QtWidgets.QGroupBox("Options")
        self.options_form = QtWidgets.QFormLayout(self.options_box)
        v.addWidget(self.options_box)  # first: in a short window the options matter more than the description
        v.addWidget(self.description)
        self.note = QtWidgets.QLabel(wordWrap=True)
        self.note.setStyleSheet("color: #b36b00;")
        v.addWidget(self.note)
        v.addStretch(1)
        self.scroll.setWidget(inner)
        self.scroll.setMinimumHeight(40)
        layout.addWidget(self.scroll, 1)

        # ---- always in sight: why Run is disabled, Run / Stop, progress, the run's numbers -----
        self.invalid_label = QtWidgets.QLabel(wordWrap=True)
        self.invalid_label.setStyleSheet("color: #d64541;")
        self.invalid_label.hide()
        layout.addWidget(self.invalid_label)
        buttons = QtWidgets.QHBoxLayout()
        self.run_button = QtWidgets.QPushButton(icon("run"), "Run")
        self.run_button.setToolTip("Run the algorithm (Ctrl+R, F5)")
        self.stop_button = QtWidgets.QPushButton(icon("stop"), "Stop")
        self.stop_button.setToolTip("Stop the running solver (Esc)")
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.stop_button)
        layout.addLayout(buttons)
        self.progress = QtWidgets.QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(False)
        self.progress.setMaximumHeight(10)
        layout.addWidget(self.progress)
        self.rows: list[tuple[str, str, str]] = []
        self.elapsed = QtWidgets.QLabel(IDLE)  # the status line: running · 1.20 s, finished · certified optimal
        self.elapsed.setWordWrap(True)
        bold = self.elapsed.font()
        bold.setBold(True)
        self.elapsed.setFont(bold)
        self.live = QtWidgets.QLabel("")       # the run's numbers, a small table
        self.live.setWordWrap(True)
        self.live.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.live.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.elapsed)
        layout.addWidget(self.live)
        self.certificate = QtWidgets.QLabel("")  # the certificate's own words: wrapped, never cut
        self.certificate.setWordWrap(True)
        self.certificate.setTextFormat(QtCore.Qt.TextFormat.PlainText)  # the certificate's words, as they are
        self.certificate.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        self.certificate.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)
        layout.addWidget(self.certificate)
        self.footer = (self.invalid_label, self.run_button, self.progress, self.elapsed, self.live, self.certificate)
        self.setMinimumWidth(260)  # the forms and the result table stay readable; the charts give way
        self.algo_combo.currentIndexChanged.connect(self._algorithm_changed)
        self.picked = None  # the algorithm the user chose (from the list, or --algo), not a default
        self.algo_combo.activated.connect(lambda _: setattr(self, "picked", self.algo_combo.currentData()))
        self.run_button.clicked.connect(self.runRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        self.clock = QtCore.QElapsedTimer()
        self.set_problem(None)

    # ---- keeping the footer in sight ---------------------------------------------------------
    def _fit_height(self) -> None:
        """Ask the dock for the height the fixed part needs at this width (wrapped lines included):
        the options scroll, the dataset dock above gives way, Run and the result lines are never cut."""
        width = max(self.width() - 8, 100)
        needed = 0
        for widget in self.footer:
            if widget.isHidden():
                continue
            hint = widget.heightForWidth(width) if widget.hasHeightForWidth() else -1
            needed += max(hint, widget.minimumSizeHint().height(), widget.sizeHint().height()
                          if not widget.hasHeightForWidth() else 0)
        layout = self.layout()
        top = layout.itemAt(0).layout().sizeHint().height()
        spacing = layout.spacing() * (len(self.footer) + 2) + 8
        self.setMinimumHeight(top + self.scroll.minimumHeight() + needed + spacing)

    def notes_below(self) -> bool:
        """Whether the result notes go under their rows: the panel is narrower than NOTES_BESIDE_EMS."""
        return self.width() < NOTES_BESIDE_EMS * self.fontMetrics().horizontalAdvance("m")

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        if event.oldSize().width() != event.size().width():
            if self.rows:
                self.live.setText(rows_html(self.rows, self.notes_below()))
            self._fit_height()

    # ---- algorithm / backend / options ------------------------------------------------------
    def set_problem(self, problem) -> None:
        previous = self.algo_combo.currentData()
        self.algo_combo.blockSignals(True)
        self.algo_combo.clear()
        algos = algorithms_for(problem)
        for algo in algos:
            self.algo_combo.addItem(algo.name, algo.name)
            self.algo_combo.setItemData(self.algo_combo.count() - 1, algo.summary or algo.name,
                                        QtCore.Qt.ItemDataRole.ToolTipRole)
        index = self.algo_combo.findData(previous)
        if problem is not None and algos and (index < 0 or previous != self.picked):
            # what `matchscope solve` (solvers.solve, solvers.track) runs on this problem when no
            # algorithm is named (it depends on its kind and size), unless the user picked one
            index = self.algo_combo.findData(default_for(problem))
        self.algo_combo.setCurrentIndex(index if index >= 0 else (0 if algos else -1))
        self.algo_combo.blockSignals(False)
        if problem is None:
            self.description.setText("Load or generate a problem to choose an algorithm.")
        elif not algos:
            self.description.setText(f"No registered algorithm solves {problem.kind} problems yet.")
        self._algorithm_changed()

    def current_algorithm(self) -> registry.Algorithm | None:
        name = self.algo_combo.currentData()
        if not name:
            return None
        return algorithm_named(name, self.session.problem)

    def available_names(self) -> list[str]:
        return [self.algo_combo.itemData(i) for i in range(self.algo_combo.count())]

    def select_algorithm(self, name: str) -> None:
        index = self.algo_combo.findData(name)
        if index < 0:
            known = ", ".join(self.available_names()) or "none"
            problem = self.session.problem
            kind = f"{problem.kind} problems" if problem is not None else "this dataset"
            hint = ""
            algo = solvers.algorithms().get(name)
            readings = getattr(self.session, "readings", ())
            if algo is not None and problem is not None:
                other = [k for k in algo.problem_kinds if k in readings and k != problem.kind]
                if other:
                    hint = f" (read the file as {other[0]} to run it: Dataset ▸ Read as, or --problem {other[0]})"
            if algo is None:
                raise InputError(f"there is no algorithm called {name}; for {kind} choose from {known}")
            raise InputError(f"{name} cannot run on {kind}{hint}; choose from {known}")
        self.picked = name  # as a choice from the list: kept when another series opens
        self.algo_combo.setCurrentIndex(index)

    def _algorithm_changed(self) -> None:
        algo = self.current_algorithm()
        while self.options_form.rowCount():
            self.options_form.removeRow(0)
        self.option_widgets.clear()
        self.option_errors.clear()
        self.backend_combo.clear()
        if algo is None:
            self.options_box.setVisible(False)
            self.note.setText("")
            self._show_validity()
            return
        text = html.escape(plain_text(algo.summary or ""))
        if algo.reference:
            text += f"<br><i>{html.escape(plain_text(algo.reference))}</i>"
        if self.session.problem is not None and self.session.problem.kind == "points":
            text += "<br>Tracks the series: one assignment per consecutive frame pair."
        if self.session.problem is not None and self.session.problem.kind == "batch":
            text += "<br>Solves every problem of the batch in one call; the Batch tab lists them."
        self.description.setText(text)
        have = available_backends()
        self.backend_combo.addItem("auto", "auto")
        for b in algo.backends:
            self.backend_combo.addItem(b, b)
            if b not in have:
                i = self.backend_combo.count() - 1
                item = self.backend_combo.model().item(i)
                item.setEnabled(False)
                self.backend_combo.setItemData(i, BACKEND_NOTES.get(b, "not available here"),
                                               QtCore.Qt.ItemDataRole.ToolTipRole)
        for opt in algo.options:
            w = option_widget(opt)
            limits = opt.range_text()
            tip = plain_text(opt.help) + (f"\nAllowed: {limits}." if limits else "")
            w.setToolTip(tip)
            label = QtWidgets.QLabel(opt.name)
            label.setToolTip(tip)
            self.options_form.addRow(label, w)
            self.option_widgets[opt.name] = w
            editor_changed(w).connect(lambda *_, o=opt: self._check_option(o))
        self.options_box.setVisible(bool(algo.options))
        self.note.setText("Runs as one library call: Stop cannot interrupt it; the result is discarded "
                          "when it returns." if uninterruptible(algo) else "")
        self._show_validity()

    def _check_option(self, opt: registry.Option) -> None:
        """Check what the option's editor holds now with the Option's own rules; mark it if refused."""
        w = self.option_widgets.get(opt.name)
        if w is None:
            return
        text = widget_text(w)
        try:
            if text is not None and (text.strip() or opt.kind != "text"):
                opt.parse(text.strip())
            elif text is None:
                opt.parse(widget_value(w))
        except InputError as exc:
            self.option_errors[opt.name] = str(exc)
            w.setStyleSheet(INVALID_STYLE)
            w.setToolTip(str(exc))
        else:
            self.option_errors.pop(opt.name, None)
            w.setStyleSheet("")
            limits = opt.range_text()
            w.setToolTip(plain_text(opt.help) + (f"\nAllowed: {limits}." if limits else ""))
        self._show_validity()

    def problem_reason(self) -> str:
        """Why nothing can run on the loaded problem as it is ("" when it can): a point series of one
        frame has no frame pair to track (solvers.tracking.check_trackable says so in one line)."""
        problem = self.session.problem
        if problem is None or problem.kind != "points":
            return ""
        from solvers.tracking import check_trackable
        try:
            check_trackable(problem)
        except InputError as exc:
            return exc.message  # the panel is about the loaded file: its path is in the Dataset header
        return ""

    def invalid_reason(self) -> str:
        """Why Run is refused ("" when it can run): the problem's reason, else the first refused option,
        in one line."""
        return self.problem_reason() or next(iter(self.option_errors.values()), "")

    def _show_validity(self) -> None:
        reason = self.invalid_reason()
        self.invalid_label.setText(reason)
        self.invalid_label.setVisible(bool(reason))
        self._fit_height()
        self.update_buttons()
        self.validityChanged.emit()

    def set_backend(self, name: str) -> None:
        index = self.backend_combo.findData(name)
        if index < 0:
            algo = self.current_algorithm()
            choices = ", ".join(self.backend_combo.itemData(i) for i in range(self.backend_combo.count()))
            raise InputError(f"{algo.name if algo else 'this algorithm'} has no backend {name}; "
                             f"choose from {choices}")
        self.backend_combo.setCurrentIndex(index)

    def set_option(self, name: str, value) -> None:
        """Set an option from a string (CLI) or a value; InputError (one line) if the algorithm refuses it."""
        algo = self.current_algorithm()
        if algo is None:
            raise InputError("choose an algorithm before setting options")
        try:
            parsed = algo.parse_options({name: value})[name]
        except InputError as exc:
            self._show_refused(name, value, str(exc))
            raise
        w = self.option_widgets[name]
        try:
            set_widget_value(w, parsed)
        except (ValueError, OverflowError) as exc:
            raise InputError(f"option {name}={value}: {exc}") from None
        self._check_option(next(o for o in algo.options if o.name == name))

    def _show_refused(self, name: str, value, reason: str) -> None:
        """A refused value from a script (``--opt eps=-1``) is shown as if typed: in its editor, marked,
        with the reason above Run, so a screenshot shows what was refused and why."""
        w = self.option_widgets.get(name)
        if w is None:
            return
        edit = w.lineEdit() if hasattr(w, "lineEdit") else w if isinstance(w, QtWidgets.QLineEdit) else None
        if edit is not None:
            edit.blockSignals(True)
            edit.setText(str(value))
            edit.blockSignals(False)
        self.option_errors[name] = reason
        w.setStyleSheet(INVALID_STYLE)
        w.setToolTip(reason)
        self._show_validity()

    def options(self) -> dict:
        return {name: widget_value(w) for name, w in self.option_widgets.items()
                if widget_value(w) is not None}

    def config(self) -> dict | None:
        algo = self.current_algorithm()
        if algo is None:
            return None
        return {"algorithm": algo.name, "backend": self.backend_combo.currentData() or "auto",
                "options": self.options()}

    # ---- run state --------------------------------------------------------------------------
    def update_buttons(self) -> None:
        busy = any(r.is_active for r in self.session.runs)
        reason = self.invalid_reason()
        self.run_button.setEnabled(self.current_algorithm() is not None and self.session.problem is not None
                                   and not busy and not reason)
        self.run_button.setToolTip(f"Cannot run: {reason}" if reason else "Run the algorithm (Ctrl+R, F5)")
        self.stop_button.setEnabled(busy)

    def run_started(self, run) -> None:
        self.progress.setRange(0, 0)  # busy: solvers do not know how far they are (tracking does)
        self.clock.start()
        self.update_buttons()

    def run_timed(self, run) -> None:
        """The warm-up is over: the elapsed time counts from here."""
        self.clock.restart()
        self.show_live(run)

    def run_ended(self, run) -> None:
        if not any(r.is_active for r in self.session.runs):
            self.progress.setRange(0, 1)
            self.progress.setValue(1 if run.status == "finished" else 0)
        self.update_buttons()
        self.show_live(run)

    def show_live(self, run) -> None:
        if run is None:
            self.rows = []
            self.elapsed.setText(IDLE)
            self.live.setText("")
            self.certificate.setText("")
            if not any(r.is_active for r in self.session.runs):
                self.progress.setRange(0, 1)
                self.progress.setValue(0)
            self._fit_height()
            return
        run.sync()
        self.elapsed.setText(self._status_line(run))
        self.rows = self._rows(run)
        self.live.setText(rows_html(self.rows, self.notes_below()))
        finished = run.status == "finished"
        self.certificate.setText(run.certificate_text if finished else "")
        units = self._units(run)
        if units is not None:  # known progress: a determinate bar
            done, total, _ = units
            self.progress.setRange(0, total)
            self.progress.setValue(done)
        self._fit_height()

    def live_text(self) -> str:
        """The run's numbers as plain lines ("iterations 31"), as shown (for tests and copying)."""
        return "\n".join(" ".join(part for part in row if part) for row in self.rows)

    def _status_line(self, run) -> str:
        """One short line: what the run is doing, or how it ended."""
        if run.is_active:
            if run.preparing:
                return f"{run.preparing}… (not counted in the run's time)"
            seconds = self.clock.elapsed() / 1e3 if self.clock.isValid() else run.wall_seconds
            return f"{run.status} · {duration(seconds)}"
        what = "replay" if run.replayed else run.status
        if run.status == "finished":
            gap = getattr(getattr(run.result, "certificate", None), "gap", None)
            if gap is None and run.recorded_summary:
                gap = run.recorded_summary.get("gap") or 0.0
            return f"{what} · {certificate_short(run.certificate_status, gap or 0.0)}"
        return what

    @staticmethod
    def _units(run) -> tuple[int, int, str] | None:
        """(done, total, unit) while a run of many solves works through them (tracking), else None."""
        if not run.is_active or run.progress is None or run.progress[1] <= 0:
            return None
        return run.progress

    def _rows(self, run) -> list[tuple[str, str, str]]:
        """(name, value, note) per line: progress while it runs, the outcome after; each number named once."""
        rows = []
        cols = run.columns
        if run.replayed:
            rows.append(("problem", problem_words(run.problem_info), ""))
            rows.append(("ran on", f"{run.backend_used}", settings_words(run.options)))
        if run.is_active:
            units = self._units(run)
            if units is not None:
                done, total, unit = units
                note = "re-solved with the gate" if unit.startswith("gated") else ""
                rows.append((unit, f"{min(done + 1, total):,} of {total:,}", note))
            reports = run.reports_so_far
            if reports and units is None:  # as the charts and the timeline count; "iterations" is the end's
                rows.append(("report", f"{reports:,}", "telemetry reports so far"))
            if cols.n:
                active = last_reported(cols.column("active")[-256:])  # solvers may skip costly counts
                if active is not None:
                    rows.append(("active", f"{active:,}", ""))
                values = cols.column("value")[-256:]
                finite = values[np.isfinite(values)]
                if finite.size:
                    rows.append(("value", f"{finite[-1]:.6g}", ""))
                rows.append(("phase", run.recorder.iterations[cols.n - 1].phase, ""))
        elif run.status == "finished":
            if run.batch is not None:
                batch = run.batch
                rows.append(("problems", f"{len(batch):,}", f"{int(batch.certified.sum()):,} certified optimal"
                             + (f", {int(batch.infeasible.sum()):,} infeasible" if batch.infeasible.any() else "")))
                finite = batch.values[np.isfinite(batch.values)]
                if finite.size:
                    rows.append(("total cost", f"{float(finite.sum()):.6g}", ""))
            elif run.track is not None:
                acc = getattr(run.track, "accuracy", None)
                frames = getattr(run.track, "frame_stats", None) or []
                rows.append(("tracked", plural(len(frames), "frame pair"),
                             f"accuracy {acc:.2%}" if isinstance(acc, float) and not math.isnan(acc) else ""))
            else:
                value = run.result.value if run.result is not None else (run.recorded_summary or {}).get("value")
                if value is not None:
                    why = run.problem.zero_flow_reason() if (
                        float(value) == 0 and getattr(run.problem, "kind", None) == "flow") else ""
                    rows.append(("value", f"{float(value):.6g}", why))
            if run.iterations is not None:  # the solver's own count (a tracking run: its assignment solves)
                noun = "solves" if run.track is not None else "search steps" if run.batch is not None else "iterations"
                rows.append((noun, f"{run.iterations:,}", f"{plural(run.n_reports, 'telemetry report')}"
                             if run.n_reports else ""))
            if run.solver_seconds is not None:
                rows.append(("solver", duration(run.solver_seconds), "the algorithm only"))
            if run.batch is not None:
                rows.append(("certifying", duration(run.batch.seconds.get("certify", 0.0)), "every problem"))
            if not run.replayed:
                rows.append(("wall", duration(run.wall_seconds), "solve, checks and certificate; no warm-up"))
                if run.warmup_seconds > 0.001:
                    rows.append(("warm-up", duration(run.warmup_seconds), "compiling before the run, not in wall"))
        if run.error and run.status != "finished":
            rows.append(("", run.error, ""))
        return rows


def rows_html(rows: list[tuple[str, str, str]], notes_below: bool = False) -> str:
    """A small table: name, value, and a muted note that explains it (wrapped, never cut). With
    ``notes_below`` (a narrow panel) each note takes its own line under its row, the panel's whole
    width: beside the value it wrapped into a column a few words wide."""
    if not rows:
        return ""
    cells = []
    for name, value, note in rows:
        if not name and not note:  # a message (a failure's reason): the whole width, wrapped, never cut
            cells.append(f"<tr><td colspan='3' style='color:#d64541'>{html.escape(value)}</td></tr>")
            continue
        cells.append(f"<tr><td style='padding-right:8px; white-space:nowrap'>{html.escape(name)}</td>"
                     f"<td style='padding-right:8px; white-space:nowrap'><b>{html.escape(value)}</b></td>"
                     + ("" if notes_below else f"<td style='color:#888'>{html.escape(note)}</td>") + "</tr>")
        if notes_below and note:
            cells.append(f"<tr><td colspan='2' style='color:#888; padding-left:12px; padding-bottom:3px'>"
                         f"{html.escape(note)}</td></tr>")
    return "<table cellspacing='0' cellpadding='0'>" + "".join(cells) + "</table>"


def last_reported(active: np.ndarray) -> int | None:
    """The newest active count that was reported (-1 marks an iteration without one)."""
    known = np.flatnonzero(active >= 0)
    return int(active[known[-1]]) if known.size else None

