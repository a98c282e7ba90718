"""Solver dock: algorithms that fit the loaded problem, the backends this machine has, the algorithm's
declared options as a form, Run / Stop, progress and live counters."""
from __future__ import annotations

import math

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

import solvers
from solvers import registry
from solvers.errors import InputError
from solvers.targets import available_backends

from ..forms import set_widget_value, value_widget, widget_value
from ..theme import icon

BACKEND_NOTES = {"cuda": "needs an NVIDIA GPU and driver (none usable in this process)",
                 "cudasim": "the CUDA simulator must be chosen before numba loads: start with NUMBA_ENABLE_CUDASIM=1"}


def algorithms_for(problem) -> list[registry.Algorithm]:
    """What can run on ``problem``; a point series is tracked frame pair by frame pair with an assignment solver."""
    if problem is None:
        return []
    if problem.kind == "points":
        return [a for a in solvers.algorithms().values() if "assignment" in a.problem_kinds]
    return registry.for_problem(problem)


def uninterruptible(algo: registry.Algorithm) -> bool:
    """Solvers that run inside one scipy call never poll the observer, so Stop cannot cut them short."""
    module = algo.runner.partition(":")[0]
    text = f"{algo.reference} {algo.summary}".lower()
    return module.endswith(".reference") or "scipy" in text


class SolverPanel(QtWidgets.QWidget):
    runRequested = QtCore.Signal()
    stopRequested = QtCore.Signal()

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.option_widgets: dict[str, QtWidgets.QWidget] = {}
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        top = QtWidgets.QFormLayout()
        self.algo_combo = QtWidgets.QComboBox()
        self.algo_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.backend_combo = QtWidgets.QComboBox()
        top.addRow("Algorithm", self.algo_combo)
        top.addRow("Backend", self.backend_combo)
        layout.addLayout(top)
        self.description = QtWidgets.QLabel(wordWrap=True)
        self.description.setForegroundRole(QtGui.QPalette.ColorRole.PlaceholderText)  # follows theme changes
        layout.addWidget(self.description)
        self.options_box = QtWidgets.QGroupBox("Options")
        self.options_form = QtWidgets.QFormLayout(self.options_box)
        layout.addWidget(self.options_box)
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
        self.elapsed = QtWidgets.QLabel("—")
        self.live = QtWidgets.QLabel("")
        self.live.setWordWrap(True)
        font = QtGui.QFontDatabase.systemFont(QtGui.QFontDatabase.SystemFont.FixedFont)
        self.live.setFont(font)
        self.elapsed.setFont(font)
        layout.addWidget(self.elapsed)
        layout.addWidget(self.live)
        self.note = QtWidgets.QLabel(wordWrap=True)
        self.note.setStyleSheet("color: #b36b00;")
        layout.addWidget(self.note)
        layout.addStretch(1)
        self.algo_combo.currentIndexChanged.connect(self._algorithm_changed)
        self.run_button.clicked.connect(self.runRequested)
        self.stop_button.clicked.connect(self.stopRequested)
        self.clock = QtCore.QElapsedTimer()
        self.set_problem(None)

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
        self.algo_combo.setCurrentIndex(index if index >= 0 else (0 if algos else -1))
        self.algo_combo.blockSignals(False)
        if problem is None:
            self.description.setText("Load or generate a problem to choose an algorithm.")
        elif not algos:
            self.description.setText(f"No registered algorithm solves {problem.kind} problems yet.")
        self._algorithm_changed()

    def current_algorithm(self) -> registry.Algorithm | None:
        name = self.algo_combo.currentData()
        return solvers.algorithms().get(name) if name else None

    def select_algorithm(self, name: str) -> None:
        index = self.algo_combo.findData(name)
        if index < 0:
            known = ", ".join(self.algo_combo.itemData(i) for i in range(self.algo_combo.count())) or "none"
            kind = self.session.problem.kind if self.session.problem is not None else "this"
            raise InputError(f"algorithm {name!r} cannot run on {kind} problems here; available: {known}",
                             "<options>")
        self.algo_combo.setCurrentIndex(index)

    def _algorithm_changed(self) -> None:
        algo = self.current_algorithm()
        while self.options_form.rowCount():
            self.options_form.removeRow(0)
        self.option_widgets.clear()
        self.backend_combo.clear()
        if algo is None:
            self.options_box.setVisible(False)
            self.update_buttons()
            return
        text = algo.summary or ""
        if algo.reference:
            text += f"<br><i>{algo.reference}</i>"
        if self.session.problem is not None and self.session.problem.kind == "points":
            text += "<br>Tracks the series: one assignment per consecutive frame pair."
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
            w = value_widget(opt.default, type(opt.default) if opt.default is not None else None,
                             choices=opt.choices)
            w.setToolTip(opt.help)
            label = QtWidgets.QLabel(opt.name)
            label.setToolTip(opt.help)
            self.options_form.addRow(label, w)
            self.option_widgets[opt.name] = w
        self.options_box.setVisible(bool(algo.options))
        self.note.setText("Runs inside one scipy call: Stop cannot interrupt it; the result is discarded "
                          "when it returns." if uninterruptible(algo) else "")
        self.update_buttons()

    def set_backend(self, name: str) -> None:
        index = self.backend_combo.findData(name)
        if index < 0:
            algo = self.current_algorithm()
            raise InputError(f"{algo.name if algo else 'this algorithm'} has no backend {name!r}; choose from "
                             f"{', '.join(self.backend_combo.itemData(i) for i in range(self.backend_combo.count()))}",
                             "<options>")
        self.backend_combo.setCurrentIndex(index)

    def set_option(self, name: str, value) -> None:
        """Set an option from a string (CLI) or a value; InputError if the algorithm rejects it."""
        algo = self.current_algorithm()
        if algo is None:
            raise InputError("choose an algorithm before setting options", "<options>")
        parsed = algo.parse_options({name: value})[name]
        w = self.option_widgets[name]
        try:
            set_widget_value(w, parsed)
        except (ValueError, OverflowError) as exc:
            raise InputError(f"option {name}={value!r}: {exc}", "<options>") from None

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
        self.run_button.setEnabled(self.current_algorithm() is not None and self.session.problem is not None
                                   and not busy)
        self.stop_button.setEnabled(busy)

    def run_started(self, run) -> None:
        self.progress.setRange(0, 0)  # busy: solvers do not know how far they are
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
            self.elapsed.setText("—")
            self.live.setText("")
            return
        seconds = run.wall_seconds
        if run.is_active and self.clock.isValid():
            seconds = self.clock.elapsed() / 1e3
        status = "compiling" if run.preparing and run.is_active else run.status
        self.elapsed.setText(f"{status:<9} {_duration(seconds)}")
        cols = run.columns
        run.sync()
        lines = [f"iterations {cols.n:,}"]
        if run.preparing and run.is_active:
            lines.append(f"{run.preparing}…")
        if cols.n:
            last = run.recorder.iterations[cols.n - 1]
            active = last_reported(cols.column("active")[-256:])  # solvers may skip costly counts
            if active is not None:
                lines.append(f"active     {active:,}")
            values = cols.column("value")[-256:]
            finite = values[np.isfinite(values)]
            if finite.size:
                lines.append(f"value      {finite[-1]:.6g}")
            lines.append(f"phase      {last.phase}")
        if run.result is not None:
            r = run.result
            lines.append(f"result     {r.value:.6g} · {'certified' if r.certified else 'NOT certified'}")
            lines.append(f"solver     {_duration(r.seconds)} on {r.backend}")
        elif run.track is not None:
            acc = getattr(run.track, "accuracy", float("nan"))
            lines.append(f"accuracy   {acc:.2%}" if isinstance(acc, float) and not math.isnan(acc) else "tracked")
        if run.error and run.status != "finished":
            lines.append(run.error)
        self.live.setText("\n".join(lines))


def last_reported(active: np.ndarray) -> int | None:
    """The newest active count that was reported (-1 marks an iteration without one)."""
    known = np.flatnonzero(active >= 0)
    return int(active[known[-1]]) if known.size else None


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    if seconds < 120:
        return f"{seconds:.2f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"
