"""Timeline: choose a run, scrub its iterations, play it back at a chosen speed.

Two clocks: "even steps" plays any run in about five seconds, the same time per iteration; the
"× real time" speeds follow the run's own recorded clock (elapsed seconds, made monotone across
restarts) slowed down or sped up, so a 20 ms GPU run can be watched over seconds with its slow
and fast phases as they happened. The position is ``session.cursor`` (iterations shown); Live
follows the newest state.
"""
from __future__ import annotations

import time

import numpy as np
from PySide6 import QtCore, QtWidgets

from ..theme import icon

SPEEDS = (("≈5 s, even steps", None), ("1/1000× real time", 1e-3), ("1/100× real time", 1e-2),
          ("1/10× real time", 0.1), ("1× real time", 1.0), ("10× real time", 10.0))
FIT_SECONDS = 5.0
TICK_MS = 33


class Timeline(QtWidgets.QWidget):
    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.run_combo = QtWidgets.QComboBox()
        self.run_combo.setMinimumWidth(220)
        self.run_combo.setToolTip("Run shown in the views")
        self.play_button = QtWidgets.QToolButton()
        self.play_button.setIcon(icon("play"))
        self.play_button.setToolTip("Play back the run")
        self.play_button.setCheckable(True)
        self.live_button = QtWidgets.QToolButton()
        self.live_button.setIcon(icon("live"))
        self.live_button.setText("Live")
        self.live_button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.live_button.setToolTip("Show the newest state (follow a running solver)")
        self.live_button.setCheckable(True)
        self.live_button.setChecked(True)
        self.slider = QtWidgets.QSlider(QtCore.Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setToolTip("Scrub through the recorded iterations")
        self.speed_combo = QtWidgets.QComboBox()
        for text, value in SPEEDS:
            self.speed_combo.addItem(text, value)
        self.position_label = QtWidgets.QLabel("no run")
        self.position_label.setMinimumWidth(230)
        layout.addWidget(QtWidgets.QLabel("Run"))
        layout.addWidget(self.run_combo)
        layout.addWidget(self.play_button)
        layout.addWidget(self.live_button)
        layout.addWidget(self.slider, 1)
        layout.addWidget(self.speed_combo)
        layout.addWidget(self.position_label)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self._tick)
        self._play_time = 0.0   # recorded seconds (real-time clocks) or iterations (even steps)
        self._last_tick = 0.0
        self.fit_seconds = FIT_SECONDS
        self.run_combo.currentIndexChanged.connect(self._run_chosen)
        self.slider.valueChanged.connect(self._scrubbed)
        self.play_button.toggled.connect(self.set_playing)
        self.live_button.toggled.connect(self._live_toggled)
        session.runsChanged.connect(self.sync_runs)
        session.currentRunChanged.connect(self._current_changed)
        session.cursorChanged.connect(lambda *_: self.update_position())
        self.sync_runs()

    # ---- runs -------------------------------------------------------------------------------
    def sync_runs(self) -> None:
        runs = self.session.runs
        self.run_combo.blockSignals(True)
        self.run_combo.clear()
        for run in runs:
            self.run_combo.addItem(run.label, run.id)
        current = self.session.current_run
        if current is not None:
            self.run_combo.setCurrentIndex(self.run_combo.findData(current.id))
        self.run_combo.blockSignals(False)
        self.update_position()

    def _run_chosen(self, index: int) -> None:
        run_id = self.run_combo.itemData(index)
        for run in self.session.runs:
            if run.id == run_id:
                self.session.set_current_run(run)
                return

    def _current_changed(self, run) -> None:
        self.set_playing(False)
        if run is not None:
            i = self.run_combo.findData(run.id)
            if i >= 0 and i != self.run_combo.currentIndex():
                self.run_combo.blockSignals(True)
                self.run_combo.setCurrentIndex(i)
                self.run_combo.blockSignals(False)
        self.live_button.setChecked(True)
        self.update_position()

    # ---- position ---------------------------------------------------------------------------
    def update_position(self) -> None:
        run = self.session.current_run
        if run is None:
            self.slider.setRange(0, 0)
            self.position_label.setText("no run")
            return
        run.sync()
        n = run.columns.n
        self.slider.blockSignals(True)
        self.slider.setRange(0, n)
        pos = n if self.session.cursor is None else min(self.session.cursor, n)
        self.slider.setValue(pos)
        self.slider.blockSignals(False)
        if pos == 0:
            self.position_label.setText(f"0 / {n:,} iterations")
            return
        it = int(run.columns.column("iteration")[pos - 1])
        t = float(run.columns.column("time")[pos - 1])
        self.position_label.setText(f"iter {it:,} ({pos:,} / {n:,}) · t = {t * 1e3:.3f} ms")

    def _scrubbed(self, value: int) -> None:
        run = self.session.current_run
        if run is None:
            return
        self.live_button.blockSignals(True)
        self.live_button.setChecked(False)
        self.live_button.blockSignals(False)
        self.session.set_cursor(value)

    def _live_toggled(self, live: bool) -> None:
        if live:
            self.set_playing(False)
            self.session.set_cursor(None)
        else:
            run = self.session.current_run
            self.session.set_cursor(run.columns.n if run is not None else 0)

    def set_playing(self, playing: bool) -> None:
        run = self.session.current_run
        if playing and (run is None or run.columns.n == 0):
            playing = False
        self.play_button.blockSignals(True)
        self.play_button.setChecked(playing)
        self.play_button.blockSignals(False)
        self.play_button.setIcon(icon("pause" if playing else "play"))
        if not playing:
            self.timer.stop()
            return
        times = run.columns.column("time")
        cursor = self.session.cursor
        if cursor is None or cursor >= run.columns.n:
            cursor = 0  # replay from the start
        if self.speed_combo.currentData() is None:
            self._play_time = float(max(cursor, 1))
        else:
            self._play_time = float(times[cursor - 1]) if cursor > 0 else float(times[0])
        self.live_button.blockSignals(True)
        self.live_button.setChecked(False)
        self.live_button.blockSignals(False)
        self.session.set_cursor(max(cursor, 1))
        self._last_tick = time.perf_counter()
        self.timer.start()

    def _tick(self) -> None:
        run = self.session.current_run
        if run is None or run.columns.n == 0:
            self.set_playing(False)
            return
        now = time.perf_counter()
        dt, self._last_tick = now - self._last_tick, now
        n = run.columns.n
        speed = self.speed_combo.currentData()
        if speed is None:  # even steps: the whole run in fit_seconds
            self._play_time += dt * n / self.fit_seconds
            position = int(self._play_time)
        else:
            self._play_time += dt * float(speed)
            position = int(np.searchsorted(run.columns.column("time"), self._play_time, side="right"))
        position = max(1, min(position, n))
        self.session.set_cursor(position)
        if position >= n:
            self.set_playing(False)

    def step(self, delta: int) -> None:
        run = self.session.current_run
        if run is None:
            return
        cur = run.columns.n if self.session.cursor is None else self.session.cursor
        self._scrubbed(max(0, min(run.columns.n, cur + delta)))
