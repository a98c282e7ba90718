"""The public entry points: load, save, generate, solve, track, algorithms."""
from __future__ import annotations

from . import registry
from .errors import InputError
from .api_inputs import as_observer, as_problem, as_series
from .problems import BipartiteGraph, CostMatrix, EuclideanCosts, FlowNetwork, PointSeries, SparseCosts
from .result import Result
from .solving import run_algorithm
from .telemetry import Observer


def load(path, problem: str | None = None, **options):
    """Read a file into a Problem. ``problem`` ("matching", "flow", "assignment", "points")
    picks the interpretation where a format allows several; see solvers.formats."""
    from .formats import load as _load
    return _load(path, problem=problem, **options)


def save(obj, path, **options) -> None:
    """Write a Problem (by extension), a Result (matching / assignment / flow as CSV, JSON or MTX),
    a TrackResult (tracks as CSV or JSON, solvers.formats.tracks), an AssignmentBatch (.npy / .npz)
    or a BatchResult (CSV ``item,row,col`` or JSON, as ``matchscope solve --out`` writes them; pass
    ``costs=`` the batch for the cost column). Atomic."""
    kind = type(obj).__name__
    if kind in ("AssignmentBatch", "BatchResult"):
        from .formats.batch import save_batch, save_batch_result
        from .io_util import check_output_name
        check_output_name(path)
        if kind == "AssignmentBatch":
            if options:
                raise InputError(f"a batch is saved without options (given: {', '.join(sorted(options))})", str(path))
            save_batch(obj.costs(), path)
        else:
            costs = options.pop("costs", None)
            if options:
                raise InputError(f"batch results take only costs= (given: {', '.join(sorted(options))})", str(path))
            save_batch_result(obj, path, costs.costs() if type(costs).__name__ == "AssignmentBatch" else costs)
        return
    from .formats import save as _save
    _save(obj, path, **options)


def generate(kind: str, **params):
    """Build a seeded synthetic problem; ``solvers.generators.KINDS`` lists the kinds and their parameters."""
    from .generators import generate as _generate
    return _generate(kind, **params)


def algorithms() -> dict[str, registry.Algorithm]:
    return registry.algorithms()


def solve(data, /, algorithm: str | None = None, backend: str = "auto", observer: Observer | None = None, *,
          problem: str | None = None, **options) -> Result:
    """Run ``algorithm`` on ``data`` and certify the answer independently.

    ``data``: a Problem, a file path, a 2-D array-like of assignment costs (list of lists, numpy
    array, pandas DataFrame), a scipy.sparse matrix (a bipartite graph: stored entries are edges)
    or a networkx bipartite graph; a batch of problems (or its file) is solvers.solve_batch's.
    ``problem`` ("matching", "flow", "assignment") reads a matrix or a file as that kind (see
    solvers.api_inputs). ``algorithm``: a name from ``algorithms()``; None picks the fastest for
    the problem on this machine (``solvers.choice.choose``).
    ``backend``: "auto" (cuda when a GPU is here, else cpu), "cpu", "cuda" or "cudasim".
    ``observer`` receives live telemetry (see solvers.telemetry); None costs nothing.
    ``options`` are the algorithm's declared options (``solvers.algorithms()[name].options``).
    ``Result.seconds`` is the algorithm's run alone: not loading, converting or certifying, nor
    compiling: the first call of a kind of run in a process first runs it untimed on a tiny problem
    of the same kind (``solvers.warmup.prepare``: its kernels are compiled, or loaded from the
    cache), and says so in one line on stderr when it compiles.
    """
    from .warmup import prepare
    observer = as_observer(observer)
    algo = registry.get(algorithm) if algorithm is not None else None
    problem_obj = as_problem(data, algo, problem)  # a batch (or its file) is refused there: solve_batch solves it
    if algo is None:
        from .choice import choose
        algo = registry.get(choose(problem_obj, backend).algorithm)
    parsed = algo.parse_options(options)  # bad options are refused before any warm-up
    prepare(problem_obj, algo.name, backend, options, snapshot_interval=_interval(observer))
    return run_algorithm(problem_obj, algo, backend, observer, parsed)


def _interval(observer) -> float | None:
    """The snapshot interval a run's observer asks for (None without one): its warm-up takes the
    same telemetry paths."""
    return None if observer is None else float(getattr(observer, "snapshot_interval", 0.0))


def track(series, algorithm: str | None = None, backend: str = "auto",
          observer: Observer | None = None, **options):
    """Match each consecutive pair of frames (Euclidean costs) and chain the matches into tracks.

    ``series``: a PointSeries, a file path, or a sequence of (n_t, 3) arrays, one per frame (at
    least two frames). ``algorithm``: "knn" (exact, without distance matrices: see
    solvers.points_exact) or any assignment algorithm (given the frame pair's distances); None picks
    the fastest here (``solvers.choice``: knn on the CPU). ``observer`` hears every
    solve and ``on_progress(done, total, "frame pair")``.
    ``max_distance`` (in ``options``): "auto" (default: entering and leaving points stay unmatched,
    with a gate derived from the link lengths), a positive number (a fixed gate), or None / "off"
    (the plain rectangular assignment). See solvers.tracking; ``save(result, "tracks.csv")``
    writes the tracks."""
    from .tracking import track as _track
    from .warmup import prepare
    series = as_series(series)
    observer = as_observer(observer)
    if algorithm is None:
        from .choice import choose
        algorithm = choose(series, backend).algorithm
    if "max_distance" in options:  # a bad gate is refused before the warm-up (seconds, perhaps a compile)
        from .tracking import gating_mode
        gating_mode(options["max_distance"], series.source)
    if algorithm in registry.algorithms():  # an unknown one is refused by the run, in its words
        prepare(series, algorithm, backend, options, track=True, snapshot_interval=_interval(observer))
    return _track(series, algorithm=algorithm, backend=backend, observer=observer, **options)


__all__ = ["load", "save", "generate", "solve", "track", "algorithms",
           "BipartiteGraph", "FlowNetwork", "CostMatrix", "SparseCosts", "EuclideanCosts", "PointSeries"]


def release_device_memory() -> None:
    """Free the GPU memory matchscope keeps between solves: the arrays of earlier solves, kept for
    the next (at most an eighth of the device's memory, and given up by matchscope itself when the
    device is full), and the pinned host buffers of its uploads. For a process that shares its GPU
    with other libraries (as ``torch.cuda.empty_cache()``). A no-op where nothing is kept."""
    import sys
    pool = sys.modules.get("solvers.targets.device_pool")
    if pool is not None:
        pool.release()
    staging = sys.modules.get("solvers.targets.staged_upload")
    if staging is not None:
        staging.release_staging()
