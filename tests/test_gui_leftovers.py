"""What a second newcomer pass still found (issue 11 leftovers A-E): a one-frame series refused in
the form, one meaning of "iteration", wall time apart from the warm-up, scripted screenshots of a
failed run, and smaller wording and chart fixes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from test_gui_fakes import (configure_qt_platform, fake_algorithms, flush_deleted_widgets,  # noqa: F401
                            save_shot, small_graph, wait_loaded, wait_run, window)

configure_qt_platform()

import solvers  # noqa: E402
from PySide6 import QtWidgets  # noqa: E402
from solvers.registry import Option  # noqa: E402
from solvers.text import duration  # noqa: E402

pytestmark = pytest.mark.gui
ROOT = Path(__file__).resolve().parent.parent
ONE_FRAME = ROOT / "sample_graphs" / "particles_100_frame0.ply"
ONE_FRAME_REASON = "a point series needs at least two frames to track; it holds one"


# ---- A. a one-frame point series is refused in the form, like an invalid option ------------------

def test_a_one_frame_series_disables_run_with_the_reason_in_the_panel(window, qtbot):
    win = window
    win.open_path(ONE_FRAME)
    wait_loaded(qtbot, win)
    panel = win.solver_panel
    panel.select_algorithm("lsa")
    assert panel.invalid_reason() == ONE_FRAME_REASON
    assert not panel.run_button.isEnabled() and not win.act_run.isEnabled()
    assert panel.invalid_label.isVisible() and panel.invalid_label.text() == ONE_FRAME_REASON
    panel.select_algorithm("auction")  # every algorithm: the problem, not an option, is the reason
    assert panel.invalid_reason() == ONE_FRAME_REASON and not panel.run_button.isEnabled()
    assert win.start_run() is None and win.session.runs == []  # nothing starts, nothing is listed
    win.compare_view.add_config("lsa", "cpu", {})
    assert win.run_comparison(list(win.compare_view.configs)) == [] and win.session.runs == []
    assert ONE_FRAME_REASON in win.errors[-1]
    save_shot(win, "leftovers-one-frame.png")


def test_a_failure_line_wraps_in_the_panel_and_the_views_say_why(window):
    from explorer.session import RunState
    from explorer.views.solver_panel import rows_html
    win = window
    reason = "/a/rather/long/path/to/some/data/file/particles_100_frame0.ply: " + ONE_FRAME_REASON
    run = RunState("lsa", "cpu", {}, "points", dataset="particles")
    run.status, run.error = "failed", reason
    win.session.add_run(run)
    html_text = rows_html(win.solver_panel._rows(run))
    row = next(part for part in html_text.split("<tr>") if ONE_FRAME_REASON in part)
    assert "nowrap" not in row and "colspan" in row  # the whole width, wrapped, never cut
    for view in (win.labels_view, win.activity_view):
        view.refresh(force=True)
        assert view.showing_message and ONE_FRAME_REASON in view.placeholder.text()
        assert "reported no" not in view.placeholder.text()


# ---- E. smaller ones: numbers in words -----------------------------------------------------------

def test_a_tiny_duration_is_not_zero_milliseconds():
    assert duration(5e-7) == "0.5 µs"
    assert duration(9.9e-6) == "9.9 µs" and duration(4.2e-4) == "0.42 ms"
    assert duration(0.0) == "0 ms"
    for seconds in (1e-9, 3e-8, 5e-7, 2e-6):
        assert duration(seconds) != "0.00 ms" and float(duration(seconds).split()[0]) > 0


def test_integer_option_ranges_print_as_integers():
    cycles = Option("cycles", 0, low=0, high=2**31 - 1)
    assert cycles.range_text() == "0 to 2147483647"
    assert "e+" not in str(pytest.raises(Exception, cycles.parse, "99999999999999999999").value)
    assert Option("n", 1, low=1).range_text() == ">= 1"
    assert Option("eps", 1.0, low=0.0, high=1e300).range_text() == "0 to 1e+300"  # floats as before
