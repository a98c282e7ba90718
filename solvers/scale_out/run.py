"""``solve_many``: many items solved, in this process or on a Dask cluster, gathered in input order.

    rows = solvers.solve_many(["a.mtx", "b.mtx", costs, series], client=client)
    for row in rows: print(row.item, row.value, row.certified, row.worker, row.error)

Without a client every task runs here, one after another (a batch in one solve_batch call, a
series in one solvers.track call, as without scale-out). With a ``dask.distributed.Client`` the
tasks go to its workers. Dask recomputes a task lost with a dying worker (up to its
``distributed.scheduler.allowed-failures``); each task has its own key and is taken in once, so
every item is in the output exactly once. An item that fails is a row with its error line; the
rest go on.

``submit_many`` is the same run as an iterator of Progress events (per task, per item), usable
from a worker thread and stoppable with ``cancel()`` from any thread; the GUI's "Run on cluster…"
uses it.
"""
from __future__ import annotations

import collections
import itertools
import threading
import uuid
import warnings

from .items import classify
from .jobs import BatchJob, ItemResult, Job, ProblemJob, TaskSpec
from .progress import Progress
from .stitch import SeriesJob
from . import tasks

JOBS = {"problem": ProblemJob, "batch": BatchJob, "series": SeriesJob}
LOST_TEXT = ("its worker stopped each time it ran it ({why}); it may need more memory than a worker has")


def solve_many(items, algorithm: str | None = None, backend: str = "auto", client=None, **options) -> list[ItemResult]:
    """Solve every item and certify every answer; one ItemResult per item, in input order.

    ``items``: paths (read where the task runs; batch and series files are read here to be cut
    up), Problems, cost matrices (2-D arrays), 3-D arrays or ``Batch`` es (batches of assignment
    problems, split into chunks of many items), PointSeries (tracked in runs of frame pairs that
    overlap by one frame, joined into the whole series' tracks). ``algorithm``: a name from
    ``solvers.algorithms()``, or None for the fastest per item. ``client``: a
    ``dask.distributed.Client``, or None to run here. ``options``: the algorithm's options
    (``max_distance`` goes to point series only)."""
    run = submit_many(items, algorithm, backend, client, **options)
    for _ in run:
        pass
    return run.results()


def submit_many(items, algorithm: str | None = None, backend: str = "auto", client=None, *,
                output_format: str | None = None, **options) -> "ManyRun":
    """The run of ``solve_many`` as a ManyRun: iterate it for Progress events (it runs as it is
    iterated), ``cancel()`` it from any thread, read ``results()`` at the end. ``output_format``
    (".csv" or ".json"): also render each problem's solution as the file ``solvers.save`` writes."""
    return ManyRun(list(items), algorithm, backend, client, options, output_format)


class ManyRun:
    def __init__(self, items: list, algorithm, backend: str, client, options: dict, output_format):
        self.client = client
        self.output_format = output_format
        self.workers = _worker_count(client)
        self.gpu = _solves_on_gpu(client, backend)
        self.jobs: list[Job] = []
        for index, data in enumerate(items):
            item = classify(index, data, algorithm)
            opts = options if item.kind == "series" else {k: v for k, v in options.items() if k != "max_distance"}
            self.jobs.append(JOBS[item.kind](item, algorithm, backend, dict(opts)))
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._futures: dict = {}
        self.done_tasks = self.total_tasks = 0
        self.cancelled = False

    def cancel(self) -> None:
        """Stop: nothing new starts, running tasks are cancelled; iteration ends with a "cancelled" event."""
        self._cancel.set()
        with self._lock:
            futures = list(self._futures.values())
        if futures and self.client is not None:
            self.client.cancel(futures)

    def results(self) -> list[ItemResult]:
        """The rows, in input order (after the iteration has ended)."""
        if self.cancelled:
            from ..errors import Cancelled
            raise Cancelled("the run was cancelled")
        return [job.row for job in self.jobs]

    def __iter__(self):
        specs = []
        for job in self.jobs:
            if not job.finished:
                specs.extend(job.start(self.workers, self.gpu))
        items_total = len(self.jobs)
        finished = sum(job.finished for job in self.jobs)
        self.total_tasks = len(specs)
        yield Progress("started", 0, self.total_tasks, finished, items_total)
        for job in self.jobs:
            if job.finished:
                yield Progress("item", 0, self.total_tasks, finished, items_total, job.item.index, job.item.label,
                               error=job.row.error, row=job.row)
        runner = (_Here if self.client is None else _OnCluster)(self, specs)
        reported = set()
        for spec, outcome in runner:
            job = spec.job
            more = job.take(spec, outcome)
            runner.add(more)
            self.done_tasks += 1
            self.total_tasks += len(more)
            yield Progress("task", self.done_tasks, self.total_tasks, finished, items_total, job.item.index,
                           job.item.label, spec.part, outcome.worker, outcome.wall_seconds, outcome.error)
            if job.finished and job.item.index not in reported:
                reported.add(job.item.index)
                finished += 1
                yield Progress("item", self.done_tasks, self.total_tasks, finished, items_total, job.item.index,
                               job.item.label, worker=job.row.worker, error=job.row.error, row=job.row)
        if self._cancel.is_set():
            self.cancelled = True
            yield Progress("cancelled", self.done_tasks, self.total_tasks, finished, items_total)
        else:
            yield Progress("finished", self.done_tasks, self.total_tasks, finished, items_total)

    def output_for(self, spec: TaskSpec) -> str | None:
        return self.output_format if spec.step is tasks.solve_problem else None


class _Here:
    """Every task in this process, in order; tasks added while iterating run after the others."""

    def __init__(self, run: ManyRun, specs: list[TaskSpec]):
        self.run, self.queue = run, collections.deque(specs)

    def add(self, specs) -> None:
        self.queue.extend(specs)

    def __iter__(self):
        while self.queue and not self.run._cancel.is_set():
            spec = self.queue.popleft()
            yield spec, tasks.execute(spec.step, *spec.args, output_format=self.run.output_for(spec))


class _OnCluster:
    """Tasks on the client's workers, taken in as they finish, each key once."""

    def __init__(self, run: ManyRun, specs: list[TaskSpec]):
        from distributed import as_completed
        self.run = run
        self.run_id = uuid.uuid4().hex[:8]
        self.counter = itertools.count()
        self.pending: dict = {}  # key -> spec, until taken in
        self.stream = as_completed([self._submit(s) for s in specs])

    def _submit(self, spec: TaskSpec):
        key = f"matchscope-{self.run_id}-{spec.job.item.index}-{next(self.counter)}"
        with warnings.catch_warnings():  # chunks travel inside their tasks, so that a lost one can be run again
            warnings.filterwarnings("ignore", message=".*[Ll]arge graph.*")
            future = self.run.client.submit(tasks.execute, spec.step, *spec.args, key=key, pure=False,
                                            output_format=self.run.output_for(spec))
        self.pending[key] = spec
        with self.run._lock:
            self.run._futures[key] = future
        return future

    def add(self, specs) -> None:
        for spec in specs:
            self.stream.add(self._submit(spec))

    def __iter__(self):
        try:
            for future in self.stream:
                if self.run._cancel.is_set():
                    break
                spec = self.pending.pop(future.key, None)
                if spec is None:  # already taken in: a key counts once
                    continue
                outcome = _outcome_of(future)
                with self.run._lock:
                    self.run._futures.pop(future.key, None)
                future.release()
                yield spec, outcome
        finally:
            with self.run._lock:
                left = list(self.run._futures.values())
                self.run._futures.clear()
            if left:
                self.run.client.cancel(left)


def _outcome_of(future) -> tasks.Outcome:
    """The task's Outcome; a task dask gave up on (its workers kept dying) or cancelled is an error row."""
    try:
        return future.result()
    except Exception as exc:  # KilledWorker, CancelledError, a worker's lost connection
        name = type(exc).__name__
        if name == "KilledWorker":
            text = LOST_TEXT.format(why="the cluster gave up on it")
        elif name == "CancelledError":
            text = "cancelled"
        else:
            text = tasks.plain_error(exc)
        return tasks.Outcome(None, text, "", 0.0)


def _worker_count(client) -> int:
    if client is None:
        return 1
    return max(1, len(client.nthreads()))


def _solves_on_gpu(client, backend: str) -> bool:
    """Whether the tasks will solve on GPUs: backend cuda, or auto on workers that have one."""
    if backend == "cuda":
        return True
    if backend != "auto" or client is None:
        return False
    from ..targets import gpu_present
    try:
        return any(client.run(gpu_present).values())
    except Exception:  # a worker that cannot answer: size the chunks for CPUs, which only costs balance
        return False
