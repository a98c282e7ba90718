"""Progress events of a scale-out run (solvers.scale_out.run.ManyRun yields them) and the command
line's progress bar, drawn from them.

Events, in order: "started"; then per finished task a "task" event, and when that finished its
item an "item" event carrying the item's row; last "finished" or "cancelled". Items that fail
before any task runs (an unreadable batch or series file) have their "item" event right after
"started". A series with the automatic gate adds tasks as it goes, so ``total`` can grow.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """``event``: "started" | "task" | "item" | "finished" | "cancelled". ``done`` / ``total``:
    tasks; ``items_done`` / ``items``: items. For "task" and "item": ``index`` and ``label`` of
    the item, ``part`` (which chunk or run, "" for a whole item), ``worker`` (address; for an
    item, every worker that ran part of it), ``seconds`` (the task's wall time), ``error`` (the
    line, or None). "item" carries ``row`` (the ItemResult)."""
    event: str
    done: int
    total: int
    items_done: int
    items: int
    index: int | None = None
    label: str = ""
    part: str = ""
    worker: str = ""
    seconds: float = 0.0
    error: str | None = None
    row: object = None


class ProgressBar:
    """One self-overwriting line on a terminal (stderr): a bar of tasks and the items finished.
    Off a terminal it draws nothing, so logs and captured output stay clean."""

    def __init__(self, stream=None, width: int = 28, interval: float = 0.1):
        self.stream = stream if stream is not None else sys.stderr
        self.width, self.interval = width, interval
        self.on = bool(getattr(self.stream, "isatty", lambda: False)())
        self.last = 0.0
        self.drawn = 0
        self.failed = 0  # items whose row carries an error: counted on the bar, listed with the rows

    def update(self, event: Progress) -> None:
        if event.event == "item" and event.error:
            self.failed += 1
        if not self.on:
            return
        now = time.monotonic()
        if event.event == "task" and now - self.last < self.interval:
            return
        self.last = now
        filled = self.width * event.done // max(event.total, 1)
        text = (f"[{'#' * filled}{'.' * (self.width - filled)}] {event.done}/{event.total} tasks, "
                f"{event.items_done}/{event.items} items" + (f", {self.failed} failed" if self.failed else ""))
        self.stream.write("\r" + text.ljust(self.drawn))
        self.stream.flush()
        self.drawn = len(text)

    def clear(self) -> None:
        if self.on and self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
            self.drawn = 0
