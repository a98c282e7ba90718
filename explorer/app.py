"""Entry point: ``python -m explorer [PATH] [options]`` (also ``matchscope gui ...``).

Scripted mode, for docs, tests and CI:
    python -m explorer PATH --algo NAME [--backend B] [--opt K=V]... --run \
        --screenshot OUT.png [--screenshot-views DIR] --quit
opens the file, runs to the end, switches through every view so all are drawn, saves a screenshot
of the whole window (and one per tab), and exits 0; bad input prints ``error: <one line>`` to
stderr and exits 2 (1 for an internal failure), after saving the screenshot of the window in its
error state. ``--problem KIND`` reads a file whose format can hold several problems as KIND (by
default, as the kind ``--algo`` solves when the format allows it, as `matchscope solve` does).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from PySide6 import QtCore  # Qt reads QT_QPA_PLATFORM when the application starts, not on import

from solvers.problems import PROBLEM_KINDS  # imports no numba: the simulator can still be chosen

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="matchscope gui", description="matchscope explorer: watch matching, "
                                "assignment and max-flow solvers run")
    p.add_argument("path", nargs="?", help="problem file or run record (.npz) to open")
    p.add_argument("--algo", help="algorithm to select (see `matchscope algos`)")
    p.add_argument("--backend", default=None, help="auto, cpu, cuda or cudasim")
    p.add_argument("--opt", action="append", default=[], metavar="K=V", help="algorithm option (repeatable)")
    p.add_argument("--problem", choices=PROBLEM_KINDS,
                   help="how to read a file whose format can hold several problems (a .mtx as matching, "
                        "assignment or flow); default: what --algo solves, if the format allows it")
    p.add_argument("--run", action="store_true", help="run the algorithm once the file is loaded")
    p.add_argument("--screenshot", metavar="OUT.png", help="save a screenshot of the window when done")
    p.add_argument("--screenshot-views", metavar="DIR", help="save one PNG per tab into DIR when done")
    p.add_argument("--quit", action="store_true", help="exit when done (scripted mode)")
    p.add_argument("--theme", choices=("system", "light", "dark"), default="system")
    p.add_argument("--size", default="1440x900", help="window size WIDTHxHEIGHT")
    return p


def _parse_opts(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--opt expects K=V, not {pair}")
        out[key.strip()] = value.strip()
    return out


def parse_size(text: str) -> tuple[int, int]:
    """``1440x900`` -> (1440, 900); ValueError with one plain line otherwise."""
    width, sep, height = text.lower().strip().partition("x")
    try:
        size = (int(width), int(height))
    except ValueError:
        size = None
    if not sep or size is None or not (200 <= size[0] <= 20000 and 200 <= size[1] <= 20000):
        raise ValueError(f"--size must be WIDTHxHEIGHT in pixels, each 200 to 20000 (e.g. 1440x900), not {text}")
    return size


def reading_for(path: str, requested: str | None, algorithm: str | None) -> str | None:
    """The problem kind to read ``path`` as: the one asked for, else the rule ``matchscope solve``
    follows (solvers.formats.reading_for)."""
    if requested:
        return requested
    from solvers.formats import reading_for as rule
    return rule(path, algorithm)


def _prepare_environment(args) -> None:
    if os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    from solvers.targets import configure_numba
    configure_numba(args.backend)  # must precede numba's import


class Script(QtCore.QObject):
    """Drives a MainWindow through open -> configure -> run -> screenshots -> quit, one step per event.
    A QObject living in the GUI thread, so the worker's signals reach it queued, after the window's."""

    def __init__(self, app, window, args, options: dict):
        super().__init__(window)
        self.app, self.window, self.args, self.options = app, window, args, options
        self.exit_code = EXIT_OK
        self.load_job = None
        self.run = None
        w = window.host.worker
        w.jobFinished.connect(self._job_finished)
        w.jobFailed.connect(self._job_failed)
        window.session.runFinished.connect(self._run_ended)
        window.session.runFailed.connect(lambda run, msg: self._run_ended(run))

    def start(self) -> None:
        if self.args.path:
            from .main_window import is_run_record
            problem = None if is_run_record(self.args.path) else \
                reading_for(self.args.path, self.args.problem, self.args.algo)
            self.load_job = self.window.open_path(self.args.path, problem=problem)
        else:
            self.after_load()

    def fail(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        """One line on stderr; the window says it too (log, status bar: ``report_error``, once), so the
        screenshot shows the window in its error state."""
        print(f"error: {message}", file=sys.stderr, flush=True)
        self.exit_code = code
        if message and message not in self.window.errors:
            self.window.report_error(message)
        if self.args.screenshot:
            self.window.refresh_all()
            self.settle()
            self._save_window()
        if self.args.quit:
            self.app.exit(code)

    def _save_window(self) -> None:
        from .export import pixmap_png
        Path(self.args.screenshot).parent.mkdir(parents=True, exist_ok=True)
        pixmap_png(self.window.grab(), self.args.screenshot)

    def _job_finished(self, job, payload) -> None:
        if job is self.load_job:
            self.after_load()

    def _job_failed(self, job, category: str, message: str) -> None:
        if job is self.load_job:
            self.fail(message, EXIT_BAD_INPUT if category == "input" else EXIT_FAILURE)

    def after_load(self) -> None:
        panel = self.window.solver_panel
        try:
            if self.args.algo:
                panel.select_algorithm(self.args.algo)
            if self.args.backend:
                panel.set_backend(self.args.backend)
            for key, value in self.options.items():
                panel.set_option(key, value)
        except Exception as exc:  # InputError from the option/algorithm checks
            self.fail(str(exc))
            return
        if self.args.run:
            self.run = self.window.start_run()
            if self.run is None:
                self.fail(self.window.errors[-1] if self.window.errors else "nothing to run")
            return
        self.finish()

    def _run_ended(self, run) -> None:
        if run is not self.run:
            return
        if run.status != "finished":
            # after the window has handled the failure too (its log line, the panel's failure line,
            # the busy label cleared): the session's signal reaches this script before that
            code = EXIT_BAD_INPUT if run.error_category == "input" else EXIT_FAILURE
            QtCore.QTimer.singleShot(0, self.window, lambda: self.fail(run.error, code))
            return
        # let the queued finish signal reach every view before drawing
        QtCore.QTimer.singleShot(0, self.window, self.finish)

    def settle(self, seconds: float = 0.15) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            self.app.processEvents()
            time.sleep(0.01)

    def finish(self) -> None:
        from .export import pixmap_png
        w = self.window
        views_dir = Path(self.args.screenshot_views) if self.args.screenshot_views else None
        if views_dir is not None:
            views_dir.mkdir(parents=True, exist_ok=True)
        if self.run is not None and not w.session.comparison:
            w.session.compare_with([self.run])  # so the Compare tab shows the run too
        w.refresh_all()
        for index in range(w.tabs.count()):
            w.tabs.setCurrentIndex(index)
            self.settle()
            view = w.tabs.widget(index)
            if hasattr(view, "check_gl"):
                view.check_gl()
            view.refresh(force=True)
            self.settle()
            if views_dir is not None:  # the tab page: the view itself, for docs and tests
                pixmap_png(w.tabs.grab(), views_dir / f"{index + 1:02d}-{view.title.lower()}.png")
        w.tabs.setCurrentWidget(self._best_tab())
        w.current_view().refresh(force=True)
        self.settle()
        if self.args.screenshot:
            self._save_window()
        if self.args.quit:
            self.app.exit(self.exit_code)

    def _best_tab(self):
        w = self.window
        problem = w.session.problem
        if problem is not None and problem.kind == "points" and w.tracks_view.gl_error is None:
            return w.tracks_view
        if problem is not None and problem.kind == "batch":
            return w.batch_view
        for view in (w.labels_view, w.activity_view):
            if view.has_content():
                return view
        return w.labels_view  # nothing drawn yet: the first tab, as a window opens


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        options = _parse_opts(args.opt)
        size = parse_size(args.size)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _prepare_environment(args)

    from PySide6 import QtWidgets

    from .main_window import MainWindow
    from .theme import apply_app_theme, icon

    QtCore.QCoreApplication.setOrganizationName("matchscope")
    QtCore.QCoreApplication.setApplicationName("explorer")
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication([sys.argv[0]])
    apply_app_theme(app, args.theme)
    app.setWindowIcon(icon("app"))
    scripted = bool(args.quit or args.screenshot or args.screenshot_views)
    window = MainWindow(interactive=not scripted)
    if scripted:
        window.resize(*size)
        window.fit_docks()
    window.show()
    if not scripted and os.environ.get("MATCHSCOPE_BACKGROUND_WARMUP", "1") != "0":
        window.start_background_warmup()
    script = Script(app, window, args, options)
    QtCore.QTimer.singleShot(0, script.start)
    wake = close_on_interrupt(window)
    code = app.exec()
    wake.stop()
    window.close()
    dispose(window)
    return code if code else script.exit_code


def close_on_interrupt(window) -> QtCore.QTimer:
    """Ctrl+C in the terminal closes the window as its close button does (it raised
    KeyboardInterrupt inside a timer's callback, printed a traceback and left the window open).
    Python runs its signal handlers only between bytecodes, so a timer wakes it; returns that timer."""
    import signal
    signal.signal(signal.SIGINT, lambda *_: window.close())
    wake = QtCore.QTimer(window)
    wake.timeout.connect(lambda: None)
    wake.start(200)
    return wake


def dispose(widget) -> None:
    """Delete a top-level widget now, while Python is alive. Left to interpreter shutdown, Qt's
    teardown events reach pyqtgraph's Python overrides after Python has gone and crash the process."""
    widget.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
