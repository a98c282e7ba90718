"""At the explorer's first start on a machine, compile every kernel in the background.

``solvers.warmup.warm_all`` runs in a daemon thread (never the GUI thread, never the worker that
runs the user's jobs, so neither the window nor a run waits for it; a run compiles what it needs
itself). Progress reaches the window through queued Qt signals. It runs only for backends not yet
marked warm in this machine's kernel cache, and stops at the next item when the window closes. It
pauses at the next item while a run goes (``pause`` / ``resume``): it would take the cores and the
interpreter from the run, whose time is the user's measurement.
"""
from __future__ import annotations

import logging
import threading

from PySide6 import QtCore

from solvers import warmup
from solvers.errors import Cancelled
from solvers.text import duration, plural

log = logging.getLogger("matchscope.explorer")


def backends_to_warm() -> list[str]:
    """cpu, and cuda when a GPU is here, unless already warm; decided without importing numba (the
    window is being built), the GPU by its driver alone."""
    from solvers.targets import gpu_present
    here = ["cpu"] + (["cuda"] if gpu_present() else [])
    return [b for b in here if not warmup.is_warm(b)]


class BackgroundWarmup(QtCore.QObject):
    progress = QtCore.Signal(str, int, int, str)  # backend, done, total, what runs now
    finished = QtCore.Signal(str, str)            # backend, summary ("" when stopped)

    def __init__(self, backends: list[str], parent=None):
        super().__init__(parent)
        self.backends = list(backends)
        self._stop = threading.Event()
        self._go = threading.Event()  # cleared: paused before the next item
        self._go.set()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="matchscope-warmup", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._go.set()  # a paused warm-up wakes to stop

    def pause(self) -> None:
        self._go.clear()

    def resume(self) -> None:
        self._go.set()

    @property
    def paused(self) -> bool:
        return not self._go.is_set()

    def _should_stop(self) -> bool:
        """Polled by warm_all before each item: waits while paused."""
        self._go.wait()
        return self._stop.is_set()

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def _run(self) -> None:
        for backend in self.backends:
            try:
                report = warmup.warm_all(backend, should_stop=self._should_stop,
                                         progress=lambda done, total, label, b=backend: self.progress.emit(
                                             b, done, total, label))
            except Cancelled:
                self.finished.emit(backend, "")
                return
            except Exception:  # a broken backend must not take the window down; the log says what
                log.exception("background warm-up for %s failed", backend)
                self.finished.emit(backend, "")
                return
            compiled = plural(report.compiled, "function")
            self.finished.emit(backend, f"kernels for {backend} are ready ({compiled} compiled in "
                                        f"{duration(report.seconds)}; later starts load them from the cache)")
