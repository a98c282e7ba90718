"""Timeline: choose a run, scrub its telemetry reports, play it back at a chosen speed.

Two clocks: "even steps" plays any run in about five seconds, the same time per report; the
"× real time" speeds follow the run's own recorded clock (elapsed seconds, made monotone across
restarts) slowed down or sped up, so a 20 ms GPU run can be watched over seconds with its slow
and fast phases as they happened. The position is ``session.cursor`` (reports shown); Live
follows the newest state.

Playback is driven by ``advance(seconds)``: the QTimer calls ``tick()``, which advances by the
time ``clock()`` says has passed since the last tick. A test injects its own clock (or calls
``advance`` directly) and gets the same positions on an idle and on a loaded machine.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets

from solvers.text import duration

from ..theme import icon

SPEEDS = (("in ≈5 s", None), ("1/1000× time", 1e-3), ("1/100× time", 1e-2),
          ("1/10× time", 0.1), ("real time", 1.0), ("10× time", 10.0))
SPEED_TIPS = {None: "the whole run in about 5 s, in even steps of reports",
              1e-3: "1/1000 of the run's recorded speed", 1e-2: "1/100 of the run's recorded speed",
              0.1: "1/10 of the run's recorded speed", 1.0: "as fast as the run went", 10.0: "10 times as fast"}
FIT_SECONDS = 5.0
TICK_MS = 33
SLIDER_MIN_WIDTH = 110  # the slider never collapses to a square; at 1024 wide the run list keeps "#1 auction [cpu]" whole
RUN_TIP = "The run shown in the views: the newest, or one picked to replay"
# a batch run solves every problem in one call and reports no steps (as Save Run Record says): the
# bar says where a problem's run can be watched instead of offering an empty slider
BATCH_HINT = "A batch has no steps to replay: select a problem, then Solve alone"
BATCH_TIP = ("A batch solves all its problems in one call and records no steps. Select a problem in the "
             "Batch tab and press Solve alone: its run is replayed here.")


def position_room(reports: int) -> str:
    """The longest position a run of ``reports`` reports shows, about (at least that of 999 reports)."""
    n = max(int(reports), 999)
    return f"report {n:,} of {n:,} · 000.00 ms"


class ElidedLabel(QtWidgets.QLabel):
    """A one-line label that may shrink below its text: it then ends in "…" (full text as tooltip).
    It asks for the room of ``keep_room_for``'s text (else its own), so a position that changes with
    every step does not move the controls beside it."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(60)
        self._room_for = ""

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self.setToolTip(text)

    def keep_room_for(self, text: str) -> None:
        if text != self._room_for:
            self._room_for = text
            self.updateGeometry()

    def sizeHint(self) -> QtCore.QSize:  # noqa: N802
        width = self.fontMetrics().horizontalAdvance(self._room_for or self.text()) + 8
        return QtCore.QSize(width, super().sizeHint().height())

    def paintEvent(self, event) -> None:  # noqa: N802
        painter = QtGui.QPainter(self)
        rect = self.contentsRect()
        text = self.fontMetrics().elidedText(self.text(), QtCore.Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, int(QtCore.Qt.AlignmentFlag.AlignVCenter | QtCore.Qt.AlignmentFlag.AlignLeft), text)


class ElidedCombo(QtWidgets.QComboBox):
    """A combo box narrower than its choice ends it in "…" (Qt cuts it off mid-letter); the owner
    puts the whole of it in the tooltip."""

    def shown_text(self) -> str:
        """What the box shows now: its choice, elided to the room it has."""
        option = QtWidgets.QStyleOptionComboBox()
        self.initStyleOption(option)
        room = self.style().subControlRect(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option,
                                           QtWidgets.QStyle.SubControl.SC_ComboBoxEditField, self).width()
        return self.fontMetrics().elidedText(option.currentText, QtCore.Qt.TextElideMode.ElideRight, max(room, 0))

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt's name
        painter = QtWidgets.QStylePainter(self)
        option = QtWidgets.QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QtWidgets.QStyle.ComplexControl.CC_ComboBox, option)
        option.currentText = self.shown_text()
        painter.drawControl(QtWidgets.QStyle.ControlElement.CE_ComboBoxLabel, option)


def shrinkable_combo(min_chars: int) -> QtWidgets.QComboBox:
    combo = ElidedCombo()
    combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(min_chars)
    combo.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred, QtWidgets.QSizePolicy.Policy.Fixed)
    return combo


class Timeline(QtWidgets.QWidget):
    def __init__(self, session, parent=None, clock: Callable[[], float] = time.perf_counter):
        super().__init__(parent)
        self.session = session
        self.clock = clock  # seconds; playback advances by its differences between ticks
        layout = QtWidgets.QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 6, 2)
        self.run_combo = shrinkable_combo(10)
        self.run_combo.setToolTip(RUN_TIP)
        self.run_combo.setPlaceholderText("none yet")
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
        self.slider.setMinimumWidth(SLIDER_MIN_WIDTH)
        self.slider.setToolTip("Scrub through the recorded telemetry reports")
        self.speed_combo = QtWidgets.QComboBox()  # as wide as its longest choice: never cut
        self.speed_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.speed_combo.setSizePolicy(QtWidgets.QSizePolicy.Policy.Fixed, QtWidgets.QSizePolicy.Policy.Fixed)
        self.speed_combo.setToolTip("Playback speed")
        for text, value in SPEEDS:
            self.speed_combo.addItem(text, value)
            self.speed_combo.setItemData(self.speed_combo.count() - 1, SPEED_TIPS.get(value, text),
                                         QtCore.Qt.ItemDataRole.ToolTipRole)
        self.position_label = ElidedLabel("no run")
        layout.addWidget(QtWidgets.QLabel("Replay"))  # "Run" is the toolbar's action
        # the position takes the room its text needs ("report 46 of 46 · 6.41 ms", whole at 1024 wide);
        # the run's name and the slider share the rest
        layout.addWidget(self.run_combo, 3)
        layout.addWidget(self.play_button)
        layout.addWidget(self.live_button)
        layout.addWidget(self.slider, 2)
        layout.addWidget(self.speed_combo)
        layout.addWidget(self.position_label)
        self.timer = QtCore.QTimer(self)
        self.timer.setInterval(TICK_MS)
        self.timer.timeout.connect(self.tick)
        self._play_time = 0.0   # recorded seconds (real-time clocks) or reports (even steps)
        self._last_tick = 0.0
        self.fit_seconds = FIT_SECONDS
        self.run_combo.currentIndexChanged.connect(self._run_chosen)
        self.slider.valueChanged.connect(self._scrubbed)
        self.play_button.toggled.connect(self.set_playing)
        self.speed_combo.currentIndexChanged.connect(self._speed_changed)
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
        # adding to an empty list selects the first item: with no current run, nothing is selected
        current = self.session.current_run
        self.run_combo.setCurrentIndex(self.run_combo.findData(current.id) if current is not None else -1)
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
        # no current run (a new dataset): the list shows no run rather than the one before
        i = self.run_combo.findData(run.id) if run is not None else -1
        if i != self.run_combo.currentIndex() and (i >= 0 or run is None):
            self.run_combo.blockSignals(True)
            self.run_combo.setCurrentIndex(i)
            self.run_combo.blockSignals(False)
        self.live_button.setChecked(True)
        self.update_position()

    # ---- position ---------------------------------------------------------------------------
    def _show_replay_controls(self, shown: bool) -> None:
        """The slider, speed, play and Live, or (a batch run: nothing to replay) none of them."""
        for w in (self.slider, self.speed_combo):
            w.setVisible(shown)
        for w in (self.play_button, self.live_button):
            w.setEnabled(shown)

    @staticmethod
    def is_batch(run) -> bool:
        return run is not None and run.problem_kind == "batch"

    def update_position(self) -> None:
        run = self.session.current_run
        self._show_replay_controls(not self.is_batch(run))
        label = self.run_combo.currentText()  # whole, where the box is too narrow to show it
        self.run_combo.setToolTip(f"{label}\n{RUN_TIP}" if label else RUN_TIP)
        if run is None:
            self.slider.setRange(0, 0)
            self.position_label.keep_room_for(position_room(0))  # a run's position fits without moving the bar
            self.position_label.setText("no run")
            return
        if self.is_batch(run):
            self.slider.setRange(0, 0)
            self.position_label.keep_room_for(BATCH_HINT)
            self.position_label.setText(BATCH_HINT)
            self.position_label.setToolTip(BATCH_TIP)
            return
        run.sync()
        n = run.columns.n
        self.position_label.keep_room_for(position_room(n))
        self.slider.blockSignals(True)
        self.slider.setRange(0, n)
        pos = n if self.session.cursor is None else min(self.session.cursor, n)
        self.slider.setValue(pos)
        self.slider.blockSignals(False)
        if pos == 0:
            self.position_label.setText(f"start · 0 of {n:,} reports")
            return
        t = float(run.columns.column("time")[pos - 1])
        # reports, as the charts' axis counts them: the solver's iteration count is in the Solver panel
        self.position_label.setText(f"report {pos:,} of {n:,} · {duration(t)}")

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

    # ---- playback ---------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        return self.play_button.isChecked()

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
        self._last_tick = self.clock()
        self.timer.start()

    def _speed_changed(self) -> None:
        if self.playing:  # the play clock counts reports or recorded seconds: re-anchor at the cursor
            self.set_playing(True)

    def tick(self) -> None:
        """The timer's step: advance by the time the clock says passed since the last tick."""
        now = self.clock()
        elapsed, self._last_tick = max(now - self._last_tick, 0.0), now
        self.advance(elapsed)

    def advance(self, seconds: float) -> int | None:
        """Play ``seconds`` of wall time forward; returns the new position (None when not playing).
        Playback stops at the last report."""
        if not self.playing:
            return None
        run = self.session.current_run
        if run is None or run.columns.n == 0:
            self.set_playing(False)
            return None
        n = run.columns.n
        speed = self.speed_combo.currentData()
        if speed is None:  # even steps: the whole run in fit_seconds
            self._play_time += seconds * n / self.fit_seconds
            position = int(self._play_time)
        else:
            self._play_time += seconds * float(speed)
            position = int(np.searchsorted(run.columns.column("time"), self._play_time, side="right"))
        position = max(1, min(position, n))
        self.session.set_cursor(position)
        if position >= n:
            self.set_playing(False)
        return position

    def step(self, delta: int) -> None:
        run = self.session.current_run
        if run is None or self.is_batch(run):
            return
        cur = run.columns.n if self.session.cursor is None else self.session.cursor
        self._scrubbed(max(0, min(run.columns.n, cur + delta)))
