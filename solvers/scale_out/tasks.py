"""What runs on a worker (or in this process, without a cluster): one solve, one batch chunk, one
run of frame pairs. Each step is wrapped by ``execute``, which never raises for a failed item: the
error becomes one plain line in the Outcome, so the item's row reports it and the rest go on.

Kernels are warmed up once per process before the first timed run of each kind (as the command
line does before every run), so an item's ``seconds`` is its solve alone, not a worker's first
compile or cache load.
"""
from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from ..errors import BackendUnavailable, Cancelled, InfeasibleError, InputError

@dataclass
class Outcome:
    """What a task hands back: its payload (or None), the error line (or None), the worker that
    ran it, its wall time there, and the item's rendered output file (bytes) when asked for."""
    payload: object
    error: str | None
    worker: str
    wall_seconds: float
    output: bytes | None = None


def worker_name() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return "this process"


def plain_error(exc: BaseException) -> str:
    """One line for people: the error's own words for bad input, otherwise a plain sentence."""
    text = " ".join(str(exc).split())
    if isinstance(exc, (InputError, InfeasibleError, BackendUnavailable, Cancelled, TypeError)) and text:
        return text
    if isinstance(exc, MemoryError):
        return "ran out of memory on its worker"
    return f"could not be solved: {text}" if text else "could not be solved (an internal error; nothing more known)"


def execute(step, *args, output_format: str | None = None) -> Outcome:
    """Run ``step(*args)``; a failure is the Outcome's error line, not an exception."""
    start = time.perf_counter()
    output = None
    try:
        payload, error = step(*args), None
        if output_format and step is solve_problem:
            output = render_result(payload, args[0], output_format)
    except Exception as exc:  # every item failure becomes its row's error; KeyboardInterrupt still stops
        payload, error = None, plain_error(exc)
    return Outcome(payload, error, worker_name(), time.perf_counter() - start, output)


def solve_problem(data, algorithm: str | None, backend: str, options: dict):
    """One certified solve (a file read here); a file that reads as a point series is tracked."""
    from .. import registry
    from ..api import solve, track
    from ..api_inputs import as_problem
    algo = registry.get(algorithm) if algorithm is not None else None
    problem = as_problem(data, algo)
    if problem.kind == "points":
        return track(problem, algorithm, backend, **options)
    if algo is None:
        from ..choice import choose
        algorithm = choose(problem, backend).algorithm
    return solve(problem, algorithm, backend, **options)  # warmed up (untimed) and certified inside, as every solve


def solve_batch_chunk(costs, algorithm: str | None, backend: str, first: int = 0):
    """One chunk of a batch through solvers.solve_batch (certified per item); ``first``: the batch's
    number of the chunk's first item, so that a refused item is named by its number in the batch."""
    try:
        return _solve_chunk(costs, algorithm, backend)
    except InputError as exc:
        if first:
            exc.message = re.sub(r"^item (\d+)", lambda m: f"item {int(m.group(1)) + first}", exc.message)
        raise


def _solve_chunk(costs, algorithm: str | None, backend: str):
    from ..batch.api import solve_batch
    from .items import NpySlices
    if isinstance(costs, NpySlices):
        costs = costs.read()
    return solve_batch(costs, algorithm or "hungarian", backend)  # warmed up per kind inside, untimed


def track_series(series, algorithm: str, backend: str, options: dict):
    """A whole series in one task: solvers.track itself."""
    from ..api import track
    return track(series, algorithm, backend, **options)  # warmed up inside, untimed


def track_stretches(stretches, gate, algorithm: str, backend: str, options: dict, source) -> list[dict]:
    """Frame pairs solved at one gate (None: the plain assignment). ``stretches``: (first pair,
    frames, ids) of consecutive frames; each is tracked with solvers.track at that fixed gate,
    which solves every pair of it exactly as a whole-series run solves that pair at that gate.
    Returns per pair: t, links, lengths (as tracking measures them), entry (its frame_stats)."""
    from ..problems import EuclideanCosts, PointSeries
    out = []
    for first, frames, ids in stretches:
        part = PointSeries.from_frames(frames, ids, source)
        tracked = track_series(part, algorithm, backend, dict(options, max_distance=gate))
        for j, (links, entry) in enumerate(zip(tracked.links, tracked.frame_stats)):
            lengths = EuclideanCosts(part.frames[j], part.frames[j + 1], source).distances(links[:, 0], links[:, 1])
            out.append({"t": first + j, "links": links, "lengths": lengths, "entry": dict(entry, frame=first + j)})
    return out


def render_result(result, data, suffix: str) -> bytes | None:
    """An item's result as the file ``solvers.save`` writes (``suffix`` .csv or .json), read
    back as bytes: made where the problem is (flow exports need its edges), sent back whole."""
    from ..api import save
    from ..api_inputs import as_problem
    problem = None
    if getattr(result, "problem_kind", None) == "flow":
        problem = as_problem(data, None, "flow")
    with tempfile.TemporaryDirectory(prefix="matchscope-item-") as folder:
        path = os.path.join(folder, "item" + suffix)
        if problem is not None:
            save(result, path, problem=problem)
        else:
            save(result, path)
        with open(path, "rb") as f:
            return f.read()
