"""The explorer compiles every kernel in the background at its first start on a machine (issue 12):
the window keeps answering while it runs, progress is shown, and the backend is then marked warm."""
from __future__ import annotations

import threading

import pytest

from test_gui_fakes import configure_qt_platform, window  # noqa: F401

configure_qt_platform()

import numpy as np  # noqa: E402
import solvers  # noqa: E402
from PySide6 import QtCore  # noqa: E402
from solvers import registry, warmup  # noqa: E402
from solvers.problems import BipartiteGraph  # noqa: E402
from solvers.result import Solution  # noqa: E402

pytestmark = pytest.mark.gui
GATE = threading.Event()


def run_gated(problem: BipartiteGraph, backend, tel):
    """Blocks until the test opens the gate, as a long compilation would."""
    assert GATE.wait(120)
    return Solution(0.0, 1, np.full(problem.n_rows, -1), np.full(problem.n_cols, -1))


@pytest.fixture
def gated_plan(monkeypatch, tmp_path):
    algo = registry.Algorithm("gated-compile", ("matching",), (BipartiteGraph,), ("cpu",), f"{__name__}:run_gated")
    monkeypatch.setitem(registry.algorithms(), "gated-compile", algo)
    graph = solvers.generate("random-bipartite", rows=6, cols=6, degree=2, seed=1)
    plan = [warmup.WarmupItem("gated-compile", graph, {}, observed=True),
            warmup.WarmupItem("pr-seq", graph, {}, observed=False)]
    monkeypatch.setattr(warmup, "warmup_plan", lambda backend: plan)
    # the host passes, the series trackers and the batch solver are warmed around the plan (tested in
    # test_warmup_command); here they would only add a minute of compiling to what the window shows
    monkeypatch.setattr(warmup, "series_algorithms", lambda backend: [])
    monkeypatch.setattr(warmup, "warm_batches", lambda backend: None)
    monkeypatch.setattr(warmup, "warm_host_passes", lambda: None)
    monkeypatch.setattr(warmup, "marker_path", lambda backend: tmp_path / f"warmed-{backend}.json")
    GATE.clear()
    yield plan
    GATE.set()


def test_first_start_warms_up_in_the_background_without_blocking(window, qtbot, gated_plan):  # noqa: F811
    win = window
    assert not warmup.is_warm("cpu")
    assert win.start_background_warmup(["cpu"])
    # the first item is blocked: the window still handles events and shows where the warm-up is
    # steps: the host passes, the plan's two runs, the batch solver (no series algorithms here)
    qtbot.waitUntil(lambda: win.warmup_label.text().startswith("Preparing cpu kernels: step 2 of 4 ("), timeout=60_000)
    assert win.warmup_bar.isVisible() and win.warmup_bar.maximum() == 4 and win.warmup_bar.value() == 1
    ticked = []
    QtCore.QTimer.singleShot(0, lambda: ticked.append(True))
    qtbot.waitUntil(lambda: bool(ticked), timeout=60_000)
    assert win.background_warmup.running
    GATE.set()
    qtbot.waitUntil(lambda: not win.background_warmup.running, timeout=60_000)
    qtbot.waitUntil(lambda: win.warmup_bar.isHidden(), timeout=60_000)
    assert warmup.is_warm("cpu")
    qtbot.waitUntil(lambda: any("kernels for cpu are ready" in m for _, m in win.log_panel.entries), timeout=60_000)


def test_the_status_bar_shows_the_warm_up_from_its_first_step(window, qtbot, gated_plan, monkeypatch):  # noqa: F811
    """The certificates' host passes come before the plan's first run and take a minute or more on
    an empty cache: the status bar says so from the start (it stayed empty until the first run)."""
    host_passes = threading.Event()
    monkeypatch.setattr(warmup, "warm_host_passes", lambda: host_passes.wait(120))
    win = window
    try:
        assert win.start_background_warmup(["cpu"])
        qtbot.waitUntil(lambda: win.warmup_label.text() == "Preparing cpu kernels: step 1 of 4 (the certificates' "
                                                           "host passes)", timeout=60_000)
        assert win.warmup_bar.isVisible() and win.background_warmup.running
    finally:
        host_passes.set()
        GATE.set()
    qtbot.waitUntil(lambda: not win.background_warmup.running, timeout=60_000)


@pytest.mark.parametrize("paused", [False, True])
def test_closing_the_window_stops_the_warm_up_at_the_next_item(window, qtbot, gated_plan, paused):  # noqa: F811
    """Paused too (a run goes): stopping wakes it to stop, not to go on."""
    win = window
    assert win.start_background_warmup(["cpu"])
    qtbot.waitUntil(lambda: "step 2 of 4 (" in win.warmup_label.text(), timeout=60_000)
    if paused:
        win.background_warmup.pause()
        GATE.set()
    win.background_warmup.stop()
    GATE.set()
    qtbot.waitUntil(lambda: not win.background_warmup.running, timeout=60_000)
    assert not warmup.is_warm("cpu")  # stopped before the end: not marked warm


def test_nothing_to_warm_starts_nothing(window, monkeypatch):  # noqa: F811
    monkeypatch.setattr(warmup, "is_warm", lambda backend: True)
    assert not window.start_background_warmup()
    assert window.background_warmup is None


def test_the_warm_up_waits_while_a_run_goes(window, qtbot, gated_plan, monkeypatch):  # noqa: F811
    """A run's time is the user's measurement: the background warm-up pauses at its next step while
    a run goes (it took the cores and the interpreter: a 40 ms tracking run showed 200-260 ms), says
    so, and goes on when the run is over."""
    win = window
    assert win.start_background_warmup(["cpu"])
    qtbot.waitUntil(lambda: "step 2 of 4 (" in win.warmup_label.text(), timeout=60_000)
    runs = ["a run"]
    monkeypatch.setattr(win.session, "active_runs", lambda: list(runs))
    win._update_actions()  # what a run's start does
    assert win.background_warmup.paused and win.warmup_label.text().endswith("· paused while a run goes")
    waiting = threading.Event()

    class Watched(threading.Event):  # says when the warm-up thread is waiting at its next step
        def wait(self, timeout=None):
            waiting.set()
            return super().wait(timeout)
    win.background_warmup._go = Watched()  # cleared, as pause left it
    GATE.set()  # the step under way ends; the next one waits
    assert waiting.wait(60)
    QtCore.QCoreApplication.processEvents()  # any progress it had sent would be shown now
    assert win.background_warmup.running and "step 2 of 4 (" in win.warmup_label.text()
    runs.clear()
    win._update_actions()  # the run ended
    assert not win.background_warmup.paused and "paused" not in win.warmup_label.text()
    qtbot.waitUntil(lambda: not win.background_warmup.running, timeout=60_000)
    assert warmup.is_warm("cpu")

