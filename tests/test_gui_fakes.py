"""Support for the GUI tests (no tests here): a telemetry-rich stand-in solver, registered for a test only.

``fake-pr`` solves maximum matching exactly (scipy's Hopcroft–Karp, so solvers.solve certifies it) but
first replays a scripted push-relabel-like telemetry stream: push / global-relabel phases, an active
count that falls to 0, a matching size that grows to the optimum, "labels" snapshots of rows and
cols whose distribution drifts upwards, and "workload" snapshots (modelled work and measured
cycles, meta mode = the ``mode`` option). ``delay`` > 0 makes it slow enough to stop; it polls the
observer at every iteration, so Stop lands within one ``delay``.

``fake-scipy`` blocks in one call for ``seconds`` without polling, like the scipy-backed reference
solvers, to test that Stop frees the GUI and the late result is discarded.
"""
from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse.csgraph as csg

import solvers
from solvers import registry
from solvers.problems import BipartiteGraph
from solvers.result import Solution

RUNNER_MODULE = __name__


def _exact_matching(graph: BipartiteGraph):
    perm = csg.maximum_bipartite_matching(graph.to_sparse().tocsr(), perm_type="column")
    row_match = np.asarray(perm, dtype=np.int64)
    col_match = np.full(graph.n_cols, -1, dtype=np.int64)
    rows = np.flatnonzero(row_match >= 0)
    col_match[row_match[rows]] = rows
    return row_match, col_match


def run_fake_pr(problem: BipartiteGraph, backend, tel, steps=60, delay=0.0, mode="TC", relabel_every=10,
                snapshot_every=3):
    row_match, col_match = _exact_matching(problem)
    size = int(np.count_nonzero(row_match >= 0))
    rng = np.random.default_rng(7 if mode == "TC" else 8)
    rows_psi = np.zeros(problem.n_rows)
    cols_psi = np.zeros(problem.n_cols)
    for it in range(steps):
        active = int(round(problem.n_rows * (1 - (it + 1) / steps) ** 2))
        value = size * (0.6 + 0.4 * (it + 1) / steps)
        if tel.enabled:
            phase = "global-relabel" if it % relabel_every == relabel_every - 1 else "push"
            tel.iteration(it, phase, active=active, value=value, max_level=float(it // 3 + 2))
            due = it % snapshot_every == 0 if snapshot_every else tel.snapshot_due("labels")
            if due:
                rows_psi = rows_psi + rng.integers(0, 3, problem.n_rows)
                cols_psi = cols_psi + rng.integers(0, 2, problem.n_cols)
                tel.labels(it, cap=float(steps), rows=rows_psi, cols=cols_psi)
                warps = 32
                modelled = rng.gamma(2.0 + it % 5, 10.0, warps)
                cycles = (modelled * 150 + rng.integers(0, 400, warps)).astype(np.int64)
                tel.workload(it, modelled, cycles, launch=len(tel.observer.recorder.snapshots) // 2, kernel="push",
                             mode=mode)
        if delay:
            time.sleep(delay)
    if tel.enabled:
        tel.iteration(steps, "done", active=0, value=float(size))
    return Solution(float(size), steps + 1, row_match, col_match, stats={"pushes": steps})


def run_fake_scipy(problem: BipartiteGraph, backend, tel, seconds=0.5):
    if tel.enabled:
        tel.iteration(0, "start", active=problem.n_rows)
    time.sleep(seconds)  # one blocking call: nothing polls the observer here
    row_match, col_match = _exact_matching(problem)
    size = int(np.count_nonzero(row_match >= 0))
    if tel.enabled:
        tel.iteration(1, "done", value=float(size))
    return Solution(float(size), 1, row_match, col_match)


FAKE_PR = registry.Algorithm(
    "fake-pr", ("matching",), (BipartiteGraph,), ("cpu",), f"{RUNNER_MODULE}:run_fake_pr",
    (registry.Option("steps", 60, help="iterations to emit"), registry.Option("delay", 0.0, help="seconds per step"),
     registry.Option("mode", "TC", ("TC", "VC"), "workload mode"), registry.Option("relabel_every", 10),
     registry.Option("snapshot_every", 3, help="0: only when the observer's throttle allows")),
    label="psi", summary="test stand-in with scripted telemetry", reference="matchscope tests", compiled=False)
FAKE_SCIPY = registry.Algorithm(
    "fake-scipy", ("matching",), (BipartiteGraph,), ("cpu",), f"{RUNNER_MODULE}:run_fake_scipy",
    (registry.Option("seconds", 0.5),), summary="test stand-in blocking in one scipy call",
    reference="scipy (test stand-in)", compiled=False, interruptible=False)


@pytest.fixture
def fake_algorithms(monkeypatch):
    """Register the stand-ins in the live registry for one test."""
    algos = solvers.algorithms()
    monkeypatch.setitem(algos, "fake-pr", FAKE_PR)
    monkeypatch.setitem(algos, "fake-scipy", FAKE_SCIPY)
    return algos


def small_graph(seed: int = 1, n: int = 120, degree: int = 3) -> BipartiteGraph:
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), degree)
    cols = rng.integers(0, n, rows.size)
    return BipartiteGraph.from_edges(rows, cols, n, n, source=f"<test graph {seed}>")


# ---- Qt environment, the window fixture and picture checks shared by the GUI tests -------------

def configure_qt_platform() -> None:
    """xcb on a (virtual) display; offscreen without one (then GL is missing and the 3D test fails).
    Importing explorer also applies its PySide6 reference-count fix before any test emits a signal."""
    import os
    if os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "xcb")
    else:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import explorer  # noqa: F401


@pytest.fixture
def window(qtbot, qapp, tmp_path):
    """A MainWindow with settings in tmp_path, shown, closed (worker stopped) after the test."""
    from PySide6 import QtCore

    from explorer.main_window import MainWindow
    from explorer.theme import apply_app_theme

    apply_app_theme(qapp, "light")
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, interactive=True)
    qtbot.addWidget(win)
    win.resize(1280, 820)
    win.show()
    qtbot.waitExposed(win)
    yield win
    if win.error_box is not None:
        win.error_box.close()
    win.close()
    from explorer.app import dispose
    dispose(win)


@pytest.fixture(scope="module", autouse=True)
def flush_deleted_widgets():
    """Delete every widget a module's tests left for deleteLater before the next module (and before
    interpreter exit, where Qt's teardown would call into half-finalised Python and crash)."""
    yield
    import gc

    from PySide6 import QtCore, QtWidgets
    app = QtWidgets.QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        widget.close()
        widget.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
    gc.collect()


def wait_loaded(qtbot, win, timeout=30_000):
    qtbot.waitUntil(lambda: win.session.problem is not None and not win.host.busy, timeout=timeout)


def wait_run(qtbot, run, timeout=60_000):
    qtbot.waitUntil(lambda: not run.is_active, timeout=timeout)


def image_array(image) -> np.ndarray:
    """QImage/QPixmap -> (h, w, 3) uint8."""
    from PySide6 import QtGui
    if isinstance(image, QtGui.QPixmap):
        image = image.toImage()
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    h, w = image.height(), image.width()
    buf = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.bytesPerLine() * h)
    return buf.reshape(h, image.bytesPerLine())[:, : 3 * w].reshape(h, w, 3).copy()


def load_png(path) -> np.ndarray:
    from PySide6 import QtGui
    image = QtGui.QImage(str(path))
    assert not image.isNull(), f"{path} is not a readable image"
    return image_array(image)


def colourful_fraction(rgb: np.ndarray) -> float:
    """Share of clearly coloured pixels (data: curves, boxes, heatmaps), as opposed to the greys of
    backgrounds, axes, grid lines and text that an empty chart is made of."""
    rgb = rgb.astype(np.int16)
    chroma = rgb.max(axis=2) - rgb.min(axis=2)
    return float(np.mean(chroma > 60))


def distinct_colours(rgb: np.ndarray, quant: int = 32) -> int:
    q = (rgb // quant).reshape(-1, 3).astype(np.int64)
    return int(np.unique(q[:, 0] * 10_000 + q[:, 1] * 100 + q[:, 2]).size)


def assert_real_content(rgb: np.ndarray, what: str, min_colourful: float = 0.002, min_colours: int = 8) -> None:
    assert rgb.std() > 10, f"{what}: the picture is (nearly) uniform"
    frac = colourful_fraction(rgb)
    assert frac >= min_colourful, f"{what}: only {frac:.4%} coloured pixels — no data drawn"
    n = distinct_colours(rgb)
    assert n >= min_colours, f"{what}: only {n} distinct colours"


def save_shot(widget, name: str) -> np.ndarray:
    """Grab a widget, keep the picture in $EXPLORER_SHOTS (default /tmp/explorer-shots) for people to
    look at, and return its pixels."""
    import os
    from pathlib import Path
    folder = Path(os.environ.get("EXPLORER_SHOTS", "/tmp/explorer-shots"))
    folder.mkdir(parents=True, exist_ok=True)
    pixmap = widget.grab()
    pixmap.save(str(folder / name))
    return image_array(pixmap)
