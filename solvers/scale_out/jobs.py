"""One job per input item: the tasks it needs, what it does with each finished task, and its row.

A job is told about each of its tasks exactly once (solvers.scale_out.run keys every task and
drops a repeat), so a task run twice after a worker died still counts once.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import tasks
from .items import Item, batch_chunks


@dataclass
class TaskSpec:
    """A task to run: ``step(*args)`` through tasks.execute; ``part`` says which piece it is."""
    job: "Job"
    step: object
    args: tuple
    part: str = ""
    chunk: int = 0


@dataclass
class ItemResult:
    """One row of the output: the item (its path, or "item N"), its kind, how it ran and what
    came out. ``value``: the solve's value (a batch: the sum over its items; a series: the total
    link distance). ``seconds``: the algorithm's time, as Result.seconds (summed over chunks);
    ``wall_seconds``: the workers' time on it, reading and certifying included. ``worker``: the
    worker(s) that ran it. ``error``: one plain line when it could not be solved, else None.
    ``result``: the Result, BatchResult or TrackResult. ``output``: the rendered output file."""
    index: int
    item: str
    kind: str
    algorithm: str | None = None
    backend: str | None = None
    value: float | None = None
    certified: bool = False
    seconds: float = 0.0
    wall_seconds: float = 0.0
    worker: str = ""
    error: str | None = None
    result: object = field(default=None, repr=False)   # printed rows stay one line: the answer is big
    output: bytes | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None and self.certified

    def record(self) -> dict:
        """The row as plain values (CSV / JSON)."""
        return {"item": self.item, "kind": self.kind, "algorithm": self.algorithm, "backend": self.backend,
                "value": self.value, "certified": self.certified, "seconds": self.seconds,
                "wall_seconds": self.wall_seconds, "worker": self.worker, "error": self.error or ""}


class Job:
    """Base: tasks to start, finished tasks in, a row out."""

    def __init__(self, item: Item, algorithm, backend: str, options: dict):
        self.item, self.algorithm, self.backend, self.options = item, algorithm, backend, options
        self.row = ItemResult(item.index, item.label, item.kind, algorithm, backend, error=item.error)
        self.workers: list[str] = []
        self.finished = item.error is not None

    def start(self, workers: int, gpu: bool = False) -> list[TaskSpec]:
        """The first tasks, for ``workers`` workers (``gpu``: they solve on GPUs)."""
        raise NotImplementedError

    def take(self, spec: TaskSpec, outcome: tasks.Outcome) -> list[TaskSpec]:
        """A finished task of this job: record it; returns the tasks it leads to (usually none)."""
        self.row.wall_seconds += outcome.wall_seconds
        if outcome.worker not in self.workers:
            self.workers.append(outcome.worker)
            self.row.worker = " ".join(self.workers)
        if outcome.error is not None and self.row.error is None:
            self.row.error = f"{spec.part}: {outcome.error}" if spec.part else outcome.error
        return []

    def fail(self, text: str) -> None:
        if self.row.error is None:
            self.row.error = text
        self.finished = True


class ProblemJob(Job):
    def start(self, workers: int, gpu: bool = False) -> list[TaskSpec]:
        return [TaskSpec(self, tasks.solve_problem, (self.item.data, self.algorithm, self.backend, self.options))]

    def take(self, spec, outcome):
        super().take(spec, outcome)
        result = outcome.payload
        if result is not None:
            row = self.row
            row.result, row.output = result, outcome.output
            if hasattr(result, "certificate"):
                row.algorithm, row.backend = result.algorithm, result.backend
                row.value, row.certified, row.seconds = float(result.exact_value), bool(result.certified), result.seconds
            else:  # a file that read as a point series, tracked in one task
                row.value, row.certified = result.summary.get("cost"), bool(result.certified)
                row.seconds = float(result.summary.get("seconds", 0.0))
        self.finished = True
        return []


class BatchJob(Job):
    """Chunks of a batch, each a solve_batch call; the row holds their BatchResults joined."""

    def start(self, workers: int, gpu: bool = False) -> list[TaskSpec]:
        if self.options:
            self.fail("a batch of assignment problems takes no options "
                      f"(given: {', '.join(sorted(self.options))})")
            return []
        chunks = batch_chunks(self.item.data, workers, gpu)
        self.parts: list = [None] * len(chunks)
        self.reported = 0
        return [TaskSpec(self, tasks.solve_batch_chunk, (costs, self.algorithm, self.backend, first),
                         f"items {first}-{first + len(costs) - 1}" if len(chunks) > 1 else "", k)
                for k, (first, costs) in enumerate(chunks)]

    def take(self, spec, outcome):
        super().take(spec, outcome)
        self.parts[spec.chunk] = outcome.payload
        self.reported += 1
        if self.reported < len(self.parts):
            return []
        self.finished = True
        if self.row.error is None:
            joined = join_batches(self.parts)
            row = self.row
            row.result, row.algorithm, row.backend = joined, self.algorithm or "hungarian", joined.backend
            row.value, row.certified = joined.summary()["total_cost"], joined.all_certified
            row.seconds = float(joined.seconds.get("solve", 0.0))
        return []


def join_batches(parts: list):
    """One BatchResult from the BatchResults of consecutive chunks (item order kept): every
    per-item field joined (arrays concatenated, lists of ragged items chained), seconds added."""
    from dataclasses import fields, replace
    first = parts[0]
    if len(parts) == 1:
        return first
    joined = {}
    for f in fields(first):
        values = [getattr(p, f.name) for p in parts]
        if f.name == "seconds":
            joined[f.name] = {k: sum(v.get(k, 0.0) for v in values) for k in dict.fromkeys(k for v in values for k in v)}
        elif isinstance(values[0], np.ndarray):
            joined[f.name] = np.concatenate(values)
        elif isinstance(values[0], list):
            joined[f.name] = [x for v in values for x in v]
        elif values[0] is None or f.name == "backend":
            joined[f.name] = values[0]
    return replace(first, **joined)
