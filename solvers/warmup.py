"""Warm-up runs, so that a run's time is the algorithm's own (no Qt: the CLI and the explorer use it).

The first solve of a numba-compiled algorithm in a process loads its kernels from numba's cache or
compiles them: from a second to tens of seconds (gpr: 0.9 s for a 2 ms run; wbpr cold: 17 s). A
front end therefore runs each (algorithm, backend, options, problem class and size class) once,
untimed, on a tiny problem of the same kind before the first timed run, and says so:
``solvers.solve`` and ``solvers.track`` through ``prepare``, the CLI and the explorer themselves
(with their own progress words). A key warmed up once in a process is not warmed up again.

Graph solvers may switch between serial and threaded compiled loops by size (gpr at 4096 vertices
a side), so a graph warms up at its own size up to WARM_SIDE, and graphs are keyed by their
power-of-two size class: the same compiled loops as the run, at a few milliseconds' cost. A cost
matrix warms up on its own top-left corner (same dtype, same integrality), a point series on a
small series of its kind. An algorithm whose steps change with size declares where
(``Algorithm.warmup_rows``: the auction's tails); a problem past such a size also warms up one row
past it, and is keyed apart from smaller ones.

``watch_compiles`` tells, from numba's own "numba:compile" event, whether anything is actually
compiled (not merely loaded from numba's cache), so a front end can say "compiling ..." only then.
"""
from __future__ import annotations

import math
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from . import registry
from .errors import Cancelled
from .problems import BipartiteGraph, CostMatrix, EuclideanCosts, FlowNetwork, PointSeries, SparseCosts
from .telemetry import Observer

WARM_SIDE = 8192     # a larger graph warms up on a random one this size (above every threading threshold)
COST_CORNER = 48     # a cost matrix warms up on its top-left corner (same dtype, same integrality)
POINTS = 80          # points per frame of the warm-up series


def wants_warmup(algorithm: str, backend: str) -> bool:
    """An algorithm that declares compiled code (all of the package's, the scipy references too:
    their exact-arithmetic helpers and capacity bounds are numba-compiled) on a backend that
    compiles (the simulator compiles nothing)."""
    algo = registry.algorithms().get(algorithm)
    return algo is not None and backend != "cudasim" and algo.compiled


def resolved_backend(algorithm: str, backend: str) -> str | None:
    """The backend "auto" stands for here (None if the run will fail anyway: it reports why)."""
    from .targets import resolve_backend
    try:
        return resolve_backend(backend, registry.get(algorithm).backends, algorithm)
    except Exception:
        return None


def size_class(problem) -> int:
    if isinstance(problem, BipartiteGraph):
        side = max(problem.n_rows, problem.n_cols, 1)
        return min(int(math.log2(side)), int(math.log2(WARM_SIDE)))
    return 0


def shape_kind(problem) -> str:
    """"square", "wide" or "tall" for costs (each takes compiled paths of its own: a square
    assignment's column reduction, a rectangle's reverse auction, the point certificates' square
    case), "" for other problems. A newcomer saw a square solve after a rectangular one compile for
    a second inside its timed call: one warm-up had served both."""
    if not isinstance(problem, (CostMatrix, EuclideanCosts, SparseCosts)):
        return ""
    rows, cols = problem.shape
    return "square" if rows == cols else ("wide" if rows < cols else "tall")


TRACKING_GATE = "max_distance"  # solvers.track's gate: its warm-up always takes the automatic one, whose
# second round re-solves on gated sparse costs (the paths of a fixed gate), after the plain solves (no gate)


def warmup_key(problem, algorithm: str, backend: str, options: dict) -> tuple:
    """Runs with equal keys take the same compiled paths: one warm-up serves them all."""
    return (algorithm, backend, type(problem).__name__, size_class(problem), shape_kind(problem),
            rows_passed(problem, algorithm),
            tuple(sorted((k, repr(v)) for k, v in options.items() if k != TRACKING_GATE)))


def rows_passed(problem, algorithm: str | None) -> int:
    """The largest of the algorithm's ``warmup_rows`` that the problem's rows (the short side of a
    cost problem, the largest frame of a series) exceed; 0 if none."""
    algo = registry.algorithms().get(algorithm) if algorithm else None
    if algo is None or not algo.warmup_rows:
        return 0
    if isinstance(problem, (CostMatrix, EuclideanCosts, SparseCosts)):
        rows = min(problem.shape)
    elif isinstance(problem, PointSeries):
        rows = max((len(frame) for frame in problem.frames), default=0)
    else:
        return 0
    return max((size for size in algo.warmup_rows if rows > size), default=0)


def _corner(rows: int, cols: int, side: int = COST_CORNER) -> tuple[int, int]:
    """The warm-up's share of a rows x cols cost problem: at most ``side`` on the short side,
    twice that on the long one, square when the problem is (its shape_kind kept)."""
    small = min(side, rows, cols)
    big = min(2 * side, max(rows, cols)) if rows != cols else small
    return (small, big) if rows < cols else (big, small)


def warmup_problems(problem, algorithm: str | None = None) -> list:
    """The warm-up's problems: the tiny one (``warmup_problem``), and for a problem past one of
    the algorithm's ``warmup_rows`` also one of one row more than that size, run with the
    algorithm's ``warmup_past_options`` (the auction: the tiny one takes the tails and the price
    updates, the larger one, with no tail, the Jacobi rounds of both directions, which its data
    alone might not reach: a rectangle's reverse rounds need more than 64 overpriced objects)."""
    tiny = warmup_problem(problem)
    passed = rows_passed(problem, algorithm)
    if tiny is None or not passed:
        return [tiny] if tiny is not None else []
    return [tiny, warmup_problem(problem, passed + 1)]


def past_options(algorithm: str | None) -> tuple:
    """The options the warm-up past one of the algorithm's ``warmup_rows`` adds to the run's."""
    algo = registry.algorithms().get(algorithm) if algorithm else None
    return algo.warmup_past_options if algo is not None else ()


def warmup_problem(problem, side: int = 0):
    """A tiny problem of the same kind, taking the same compiled paths (None for an unknown kind);
    ``side``: the rows of a cost problem's corner or of a series' frames instead of the default."""
    from .generators import generate
    if isinstance(problem, BipartiteGraph):
        rows, cols = min(problem.n_rows, WARM_SIDE), min(problem.n_cols, WARM_SIDE)
        return generate("random-bipartite", rows=max(rows, 1), cols=max(cols, 1),
                        degree=min(3, max(cols, 1)), seed=1)
    if isinstance(problem, CostMatrix):
        problem.check()  # held integers not yet checked: refused here in their own name, not the corner's
        # the shape, not problem.costs: a held integer matrix would be made float64 whole
        rows, cols = _corner(*problem.shape, side or COST_CORNER)
        return CostMatrix.from_array(np.array(problem.values[:rows, :cols]), source="<warm-up>")
    if isinstance(problem, SparseCosts):  # in the problem's orientation, as the dense ones
        small = side or 16
        rows, cols = {"square": (small, small), "wide": (small, small * 3 // 2),
                      "tall": (small * 3 // 2, small)}[shape_kind(problem)]
        tiny = generate("sparse-lap", rows=rows, cols=cols, degree=4, seed=1)
        if problem.is_integer:
            return tiny
        # real costs: on a GPU the steps compile for float64 costs, integers for float32
        return SparseCosts(tiny.n_rows, tiny.n_cols, tiny.row_ptr, tiny.col_ind, tiny.cost + 0.5, "<warm-up>")
    if isinstance(problem, EuclideanCosts):  # the first points of each set: same dimension, same orientation
        first, second = _corner(*problem.shape, side or COST_CORNER)
        return EuclideanCosts.from_points(problem.a[:first], problem.b[:second], source="<warm-up>")
    if isinstance(problem, FlowNetwork):
        return generate("washington-rlg", rows=4, cols=4, seed=1)
    if isinstance(problem, PointSeries):
        # three frames: a pair of different sizes (the rectangular assignment) and a square one,
        # whose links include an outlier, so the automatic gate re-solves on gated sparse costs
        rng = np.random.default_rng(1)
        points = side or POINTS
        first = rng.random((points, 3))
        second = first + rng.normal(0, 0.01, first.shape)
        second[0] += 5.0
        second = np.vstack([second, rng.random((points // 8, 3))])  # new points: the reverse auction's objects
        third = second + rng.normal(0, 0.01, second.shape)
        sizes = (points, len(second), len(third))
        ids = [np.arange(size) for size in sizes] if problem.ids is not None else None
        return PointSeries.from_frames([first, second, third], ids, source="<warm-up>")
    return None


_WARMED: set = set()  # warm-up keys run in this process, by any front end: each runs once
_WARMING = threading.local()  # set while this thread runs a warm-up (its own solve must not warm up)


def prepare(problem, algorithm: str, backend: str, options: dict, *, track: bool = False,
            snapshot_interval: float | None = None) -> None:
    """For ``solvers.solve`` and ``solvers.track``: the first run of a warm-up key in this process
    is preceded by its warm-up (untimed), so that its ``Result.seconds`` counts no compiling or
    loading of kernels; one line on stderr says when something is compiled, not merely loaded from
    numba's cache (a run the CLI or the explorer warmed up already finds its key here)."""
    chosen = resolved_backend(algorithm, backend)
    if chosen is None or not wants_warmup(algorithm, chosen) or getattr(_WARMING, "active", False):
        return
    key = warmup_key(problem, algorithm, chosen, options)
    if key in _WARMED:
        return

    def say(watch) -> None:
        print(compiling_line(watch, f"{algorithm} ({problem_words(problem)})", chosen), file=sys.stderr, flush=True)

    with watch_compiles(say, chosen):
        warm_up(problem, algorithm, chosen, options, track=track, snapshot_interval=snapshot_interval)


_PROBLEM_WORDS = ((PointSeries, "point series"), (EuclideanCosts, "point sets"), (SparseCosts, "sparse costs"),
                  (CostMatrix, "cost matrices"), (FlowNetwork, "flow networks"), (BipartiteGraph, "graphs"))


def problem_words(problem) -> str:
    """What a compiling line says the kernels are for, so that two kinds' lines differ."""
    return next((words for kind, words in _PROBLEM_WORDS if isinstance(problem, kind)), "this problem")


def compiling_line(watch, name: str, backend: str) -> str:
    """The one line for a run that compiles (watch_compiles' callback)."""
    why = ("not in this machine's kernel cache yet; cached for later runs" if watch.cached else
           f"its {backend} kernels are compiled in every new process")
    return f"{'compiled' if watch.afterwards else 'compiling'} {name} for {backend} ({why})"


class _WarmupObserver(Observer):
    """Listens as the real run's observer will (same snapshot interval, so the same telemetry
    paths compile) and passes on a stop request; draws nothing."""

    def __init__(self, snapshot_interval: float, should_stop):
        self.snapshot_interval = snapshot_interval
        self._should_stop = should_stop

    def should_stop(self) -> bool:
        return bool(self._should_stop and self._should_stop())


def warm_up(problem, algorithm: str, backend: str, options: dict, *, track: bool = False,
            snapshot_interval: float | None = None, should_stop=None) -> float:
    """Run once, untimed, on each of ``warmup_problems(problem, algorithm)``; returns the seconds it took.

    ``snapshot_interval``: that of the observer the real run will have (None: it has none, and the
    warm-up runs without one unless ``should_stop`` is given); ``should_stop``: a callable polled
    like Observer.should_stop. ``track``: warm up ``solvers.track`` (a point series, with the
    automatic gate whatever ``options`` say of it: it takes every gate's paths). A failure is
    ignored (the real run reports its own; e.g. a corner of a cost matrix with no complete
    assignment has compiled the kernels anyway); Cancelled and KeyboardInterrupt propagate."""
    from .api import solve
    from .api import track as track_series

    tinies = warmup_problems(problem, algorithm)
    if not tinies:
        return 0.0
    _WARMED.add(warmup_key(problem, algorithm, backend, options))
    observer = None
    if snapshot_interval is not None or should_stop is not None:
        observer = _WarmupObserver(math.inf if snapshot_interval is None else snapshot_interval, should_stop)
    start = time.perf_counter()
    if track is False:
        warm_large_passes(problem)
    for index, tiny in enumerate(tinies):
        run_options = options if index == 0 else dict(options, **dict(past_options(algorithm)))
        try:
            with _warming():
                if track:
                    solve_options = {k: v for k, v in run_options.items() if k != TRACKING_GATE}
                    track_series(tiny, algorithm=algorithm, backend=backend, observer=observer, **solve_options)
                else:
                    solve(tiny, algorithm, backend=backend, observer=observer, **run_options)
        except Cancelled:
            raise
        except Exception:
            pass
    return time.perf_counter() - start


@contextmanager
def _warming():
    """A warm-up's own runs inside: they do not warm up first (``prepare``)."""
    outer, _WARMING.active = getattr(_WARMING, "active", False), True
    try:
        yield
    finally:
        _WARMING.active = outer


@dataclass
class CompileWatch:
    """What ``watch_compiles`` saw: how many functions numba compiled, whether what was compiled is
    kept in numba's on-disk cache (so the next process loads it instead), and ``afterwards``: True
    when it was told once the block was over (backend cuda, see watch_compiles)."""

    compiled: int = 0
    cached: bool = False
    afterwards: bool = False


@contextmanager
def watch_compiles(on_first=None, backend: str = "cpu"):
    """Count numba compilations inside the block (loads from numba's cache are not compilations).
    ``on_first(watch)`` is called when the first starts, before it compiles, so a front end can say
    why it is waiting. Yields the CompileWatch. Imports numba: use it where numba runs anyway.

    numba announces each compilation with its "numba:compile" event; numba-cuda compiles kernels
    without one, so for ``backend`` "cuda" the kernels its dispatchers compiled inside the block
    are counted (their cache misses) when it ends, and ``on_first`` is called only then, once: its
    kernels decide whether the compiled code is cached (the CPU helpers beside them always are)."""
    from numba.core import event

    watch = CompileWatch()
    cuda = backend == "cuda"

    class Listener(event.Listener):
        def on_start(self, ev):
            watch.compiled += 1
            if watch.compiled == 1:
                dispatcher = (ev.data or {}).get("dispatcher")
                watch.cached = getattr(getattr(dispatcher, "_cache", None), "cache_path", None) is not None
                if on_first is not None and not cuda:
                    on_first(watch)

        def on_end(self, ev):
            pass

    before = _cuda_kernels_compiled() if cuda else (0, 0)
    with event.install_listener("numba:compile", Listener()):
        yield watch
    if cuda:
        after = _cuda_kernels_compiled()
        kernels, uncached = after[0] - before[0], after[1] - before[1]
        if kernels > 0:  # what is said follows the kernels: kept in the on-disk cache unless one is not
            watch.compiled, watch.cached = watch.compiled + kernels, uncached == 0
        watch.afterwards = True
        if watch.compiled and on_first is not None:
            on_first(watch)


def _cuda_kernels_compiled() -> tuple[int, int]:
    """Kernels compiled in this process by numba-cuda (their cache misses), and those of them
    without an on-disk cache: every cuda kernel of the package is a solvers.targets.cuda_jit kernel,
    which keeps its dispatcher in a list."""
    from .targets.cuda_jit import kernels_compiled
    return kernels_compiled(), kernels_compiled(uncached=True)


# ---------------------------------------------------------------- ahead of time: every kernel, once per machine

PLAN_COMBINATIONS = 48   # above this many option combinations, vary one option at a time from the defaults
MARKER = "warmed-{backend}.json"


@dataclass(frozen=True)
class WarmupItem:
    """One untimed run of ``warm_all``: an algorithm on a tiny problem with some options."""

    algorithm: str
    problem: object
    options: dict
    observed: bool      # with an observer taking every snapshot (the telemetry paths)

    @property
    def label(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return f"{self.algorithm}{f' ({shown})' if shown else ''} on {self.problem.describe()}"


def _sample_problems(kind: str) -> list:
    """Tiny problems of one kind, one per specialisation the solvers compile: small and large
    graphs (serial and threaded loops), real, integer and rectangular costs, sparse costs."""
    from .generators import generate
    if kind == "matching":
        return [generate("random-bipartite", rows=32, cols=32, degree=3, seed=1),
                generate("random-bipartite", rows=WARM_SIDE // 2, cols=WARM_SIDE // 2, degree=2, seed=1)]
    if kind == "flow":
        return [generate("washington-rlg", rows=4, cols=4, seed=1)]
    if kind == "assignment":
        rng = np.random.default_rng(1)
        return [CostMatrix.from_array(rng.random((12, 12)), source="<warm-up>"),
                CostMatrix.from_array(rng.integers(0, 100, (12, 12)).astype(np.float64), source="<warm-up>"),
                CostMatrix.from_array(rng.random((6, 14)), source="<warm-up>"),
                generate("sparse-lap", rows=16, cols=16, degree=4, seed=1)]
    if kind == "points":  # a few neighbours each (rounds of widening), and far apart sets (the dense step)
        from .problems import EuclideanCosts
        rng = np.random.default_rng(1)
        near = rng.random((40, 3))
        return [EuclideanCosts.from_points(near, near + rng.normal(0, 0.01, near.shape)),
                EuclideanCosts.from_points(rng.random((12, 3)), rng.random((14, 3)) + 1.0)]
    return []


def _option_sets(algo) -> list[dict]:
    """Every combination of the categorical options (choices and switches), or, when there are
    too many, the defaults and each value of each option alone."""
    import itertools

    axes = [(o.name, list(o.choices) if o.choices else [True, False]) for o in algo.options
            if o.choices is not None or o.kind == "bool"]
    combos = list(itertools.product(*(values for _, values in axes)))
    if len(combos) <= PLAN_COMBINATIONS:
        return [dict(zip([name for name, _ in axes], combo)) for combo in combos] or [{}]
    sets = [{}]
    for name, values in axes:
        sets += [{name: v} for v in values if v != next(o.default for o in algo.options if o.name == name)]
    return sets


def warm_large_passes(problem) -> None:
    """The host passes that the problem's certificate reaches only by its size (its multi-core
    loops, from PARALLEL_MIN_ENTRIES costs), which the tiny warm-up problems never reach: without
    them a first 1500 x 1500 solve compiled three functions inside the caller's ``solve`` (2.2 s on an
    empty cache, for a 0.07 s solve; outside ``Result.seconds``), after the warm-up's line."""
    from .cost_summary import PARALLEL_MIN_ENTRIES
    if isinstance(problem, CostMatrix):
        entries, layout = problem.n_rows * problem.n_cols, "dense"
    elif isinstance(problem, SparseCosts):
        entries, layout = problem.n_edges, problem.col_ind.dtype
    else:
        return
    if entries >= PARALLEL_MIN_ENTRIES:
        # the dual check every such certificate runs, for this problem's argument types alone (each
        # variant costs a compile on an empty cache, a load in every process); not the near-tie
        # search, which only near ties reach
        from .certify import warm_parallel_loops
        warm_parallel_loops((layout,), ())
        from .exact_bins import warm as warm_exact_sums
        warm_exact_sums()  # the gap's exact sum, past its terms' limit


def warm_host_passes() -> None:
    """The compiled host passes that only large inputs reach (warm_all runs them first)."""
    from .formats._mtx_check import warm
    warm()  # the compiled check of a large Matrix Market file's body
    from .cost_summary import warm_parallel_pass
    warm_parallel_pass()  # a large dense matrix's checking pass
    from .certify import warm_parallel_loops
    warm_parallel_loops()  # a large assignment's certificate loops
    from .dense_potentials import warm as warm_sweeps
    warm_sweeps()  # a wide assignment's potentials: the start over each row's cheapest arcs
    from .graph_build import warm as warm_graph_build
    warm_graph_build()  # a large graph's adjacency lists
    from .konig import warm as warm_konig
    warm_konig()  # a large matching's certificate loops
    from .min_cut import warm as warm_min_cut
    warm_min_cut()  # a large flow's certificate loops
    from .exact_bins import warm as warm_exact_sums
    warm_exact_sums()  # a large certificate's exact sums
    from .exact_settle import warm as warm_settle
    warm_settle()  # a near tie's exact settle


def series_algorithms(backend: str) -> list[str]:
    """The compiled algorithms that track point series on ``backend`` (warm_all warms their tracking)."""
    return [a.name for a in registry.algorithms().values()
            if a.tracks_points and a.compiled and backend in a.backends and wants_warmup(a.name, backend)]


def _sample_series():
    from .generators import generate
    return generate("particles", n=60, frames=3, seed=1)  # warm_up makes its own warm-up series from it


def batch_kind(costs) -> tuple:
    """(float type, writeable) of a batch's costs: what numba compiles the batch solver for apart (a
    memory-mapped file is read-only). ``costs``: what solve_batch takes, or an AssignmentBatch."""
    import numpy as np
    packed = getattr(getattr(costs, "batch", None), "packed", None)
    array = packed.costs if packed is not None else costs
    if isinstance(array, np.ndarray):
        return (np.float32 if array.dtype == np.float32 else np.float64), bool(array.flags.writeable)
    # a list of matrices is copied into one new array: float32 when every item is
    single = len(array) > 0 and all(np.asarray(item).dtype == np.float32 for item in array)
    return (np.float32 if single else np.float64), True


def batch_warmed(kind: tuple, backend: str) -> bool:
    """Whether warm_batch ran for ``kind`` on ``backend`` with this cache (warm_all covers every
    kind): a run that finds it warmed loads the solver, one that does not will compile it."""
    marker = _batch_marker(kind, backend)
    return is_warm(backend) or (marker is not None and marker.is_file())


def mark_batch_warmed(kind: tuple, backend: str) -> None:
    marker = _batch_marker(kind, backend)
    if marker is not None:
        try:
            marker.touch()
        except OSError:  # a read-only cache: the next run checks its input first again, nothing worse
            pass


def _batch_marker(kind: tuple, backend: str):
    from .targets.cache import cache_dir
    directory = cache_dir()
    dtype, writeable = kind
    name = f"warmed-batch-{backend}-{np.dtype(dtype).name}-{'rw' if writeable else 'ro'}"
    return None if directory is None else directory / name


def warm_batch(kind: tuple, backend: str, algorithm: str = "hungarian") -> None:
    """solve_batch once, untimed, on tiny batches of ``kind`` (batch_kind's): compiles or loads what
    a batch of that kind then runs (on a GPU: an item for the warp kernel and one for the block
    kernel). Registers the kind, so that this process's solve_batch does not warm it up again."""
    from .batch.api import solve_batch
    _WARMED.add(_batch_key(kind, backend, algorithm))
    dtype, writeable = kind
    shapes = ((1, 2, 3), (1, 2, _wide_item())) if backend == "cuda" else ((1, 2, 3),)  # the simulator compiles nothing
    rng = np.random.default_rng(1)
    with _warming():
        for shape in shapes:  # real costs: their certificate searches near ties too (integers need not)
            tiny = rng.random(shape).astype(dtype)
            tiny.flags.writeable = writeable
            solve_batch(tiny, algorithm, backend=backend)


def warm_device_batch(dtype, backend: str, algorithm: str = "hungarian") -> None:
    """warm_batch for a batch that lives on the GPU (its packing and checking kernels too)."""
    from numba import cuda

    from .batch.api import solve_batch
    _WARMED.add(_batch_key(("device", np.dtype(dtype).str), backend, algorithm))
    rng = np.random.default_rng(1)
    # integers are packed as float64: the real float64 batch takes the certificate's near-tie search
    types = (dtype,) if np.dtype(dtype).kind == "f" else (dtype, np.float64)
    with _warming():
        for kind in types:
            for shape in ((1, 2, 3), (1, 2, _wide_item())):
                solve_batch(cuda.to_device((rng.random(shape) * 9).astype(kind)), algorithm, backend=backend)


def _wide_item() -> int:
    """Columns of a warm-up item that the block kernel solves (past the warp kernel's)."""
    from .batch.device_kernels import WARP_COLS
    return WARP_COLS + 1


def _device_dtype(costs) -> np.dtype:
    """The element type of a GPU array (numba, CuPy: a numpy dtype; PyTorch: torch.float32 and so on)."""
    try:
        return np.dtype(str(getattr(costs, "dtype", "float64")).removeprefix("torch."))
    except TypeError:  # a type numpy does not name (bfloat16): the packing refuses or converts it anyway
        return np.dtype(np.float64)


def _batch_key(kind: tuple, backend: str, algorithm: str) -> tuple:
    return ("batch", algorithm, backend, kind)


def prepare_batch_run(costs, algorithm: str, backend: str, on_device: bool) -> None:
    """For ``solvers.solve_batch``: the process's first batch of a kind (float type, writeable, or
    on the GPU) on ``backend`` is preceded by warm_batch (untimed), so that its seconds count no
    compiling or loading; one line on stderr says when something is compiled."""
    if backend == "cudasim" or getattr(_WARMING, "active", False):
        return
    if on_device:
        dtype = _device_dtype(costs)
        key = _batch_key(("device", dtype.str), backend, algorithm)
    else:
        if not isinstance(costs, (list, tuple)) and not hasattr(costs, "batch"):
            from .batch.inputs import host_array
            costs = host_array(costs)  # a CPU tensor, read in place: its float type and writeability
        kind = batch_kind(costs)
        key = _batch_key(kind, backend, algorithm)
    if key in _WARMED:
        return

    def say(watch) -> None:
        print(compiling_line(watch, f"{algorithm} (batches)", backend), file=sys.stderr, flush=True)

    with watch_compiles(say, backend):
        try:
            if on_device:
                warm_device_batch(dtype, backend, algorithm)
            else:
                warm_batch(kind, backend, algorithm)
        except (Cancelled, KeyboardInterrupt):
            raise
        except Exception:  # the real run reports its own failure
            pass


def warm_batches(backend: str) -> None:
    """solve_batch on ``backend`` for each path a batch can take: float64 and float32; square, wide,
    tall and ragged items; on a GPU, items for the warp kernel and the block kernel (with and
    without shared-memory column state), the certificate on the solver's copy, and batches that
    already live on the GPU (floats, and integers packed on the device)."""
    from .batch.api import solve_batch
    with _warming():  # each call its own warm-up: solve_batch does not warm up first
        _warm_batch_paths(solve_batch, backend)


def _warm_batch_paths(solve_batch, backend: str) -> None:
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        for shape in ((3, 4, 4), (2, 3, 6), (2, 6, 3)):
            solve_batch(rng.random(shape).astype(dtype), backend=backend)
        mapped = rng.random((3, 4, 4)).astype(dtype)
        mapped.flags.writeable = False  # as a memory-mapped batch file reads: numba compiles it apart
        solve_batch(mapped, backend=backend)
        sizes = ((4, 4), (3, 7)) if backend == "cpu" else ((4, 4), (3, 7), (2, 200), (2, 600))
        solve_batch([rng.random(size).astype(dtype) for size in sizes], backend=backend)
    if backend == "cuda":
        from numba import cuda
        for host in (rng.random((3, 4, 4)), rng.random((3, 4, 4)).astype(np.float32),
                     rng.integers(0, 9, (2, 5, 3))):
            solve_batch(cuda.to_device(host), backend=backend)


def warmup_plan(backend: str) -> list[WarmupItem]:
    """What ``warm_all`` runs for ``backend``: each compiled algorithm there, on each sample of
    each kind it solves, with each option set, once watched (telemetry paths) and once not."""
    items = []
    for algo in registry.algorithms().values():
        if backend not in algo.backends or not wants_warmup(algo.name, backend):
            continue
        problems = [p for kind in algo.problem_kinds for p in _sample_problems(kind)]
        problems = [p for p in problems if isinstance(p, algo.accepts) or p.kind in algo.problem_kinds]
        for problem in problems:
            for options in _option_sets(algo):
                items.append(WarmupItem(algo.name, problem, options, observed=True))
            items.append(WarmupItem(algo.name, problem, {}, observed=False))
    return items


def marker_path(backend: str):
    from .targets.cache import cache_dir
    directory = cache_dir()
    return None if directory is None else directory / MARKER.format(backend=backend)


def is_warm(backend: str) -> bool:
    """``warm_all`` finished for ``backend`` with this cache (same sources, same machine)."""
    marker = marker_path(backend)
    return marker is not None and marker.is_file()


@dataclass
class WarmAllReport:
    runs: int = 0
    compiled: int = 0      # functions numba compiled (not loaded from the cache)
    seconds: float = 0.0
    failures: list = None  # labels of runs that failed (a tiny problem that is infeasible, say)


def warm_all(backend: str, progress=None, should_stop=None) -> WarmAllReport:
    """Compile (or load) every kernel of every compiled algorithm for ``backend``, untimed, so that
    later runs compile nothing. ``progress(done, total, label)`` is called before each step (the
    host passes, each run of the plan, each series algorithm, the batch solver; ``total`` counts
    them all from the start) and once with done == total; ``should_stop()`` ends it early
    (Cancelled). Marks the backend warm when all ran."""
    import json

    plan = warmup_plan(backend)
    series = series_algorithms(backend)
    batches = backend in ("cpu", "cuda")
    total = 1 + len(plan) + len(series) + int(batches)
    report = WarmAllReport(failures=[])
    start = time.perf_counter()
    if progress is not None:  # the host passes first: on an empty cache they take a minute or more
        progress(0, total, "the certificates' host passes")
    with watch_compiles(backend="cpu") as watch:
        warm_host_passes()
    report.compiled += watch.compiled
    if backend in ("cuda", "cudasim"):
        with watch_compiles(backend=backend) as watch:
            from .certify_device import warm_up as warm_device_certificate
            warm_device_certificate(backend)  # the certificate's check on a GPU's copy (large problems only)
            from .konig_device import warm_up as warm_device_konig
            warm_device_konig(backend)  # the matching certificate's passes on a GPU's copy (large graphs only)
            if backend == "cuda":
                from .targets.staged_upload import warm_up as warm_staged_upload
                warm_staged_upload()  # a large matrix's upload, from float64 or held integers
        report.compiled += watch.compiled
    for done, item in enumerate(plan):
        if should_stop is not None and should_stop():
            raise Cancelled("warm-up stopped")
        if progress is not None:
            progress(1 + done, total, item.label)
        with watch_compiles(backend=backend) as watch:
            observer = _WarmupObserver(0.0, should_stop) if item.observed else None
            try:
                from .api import solve
                with _warming():
                    solve(item.problem, item.algorithm, backend=backend, observer=observer, **item.options)
            except Cancelled:
                raise
            except Exception:  # an option set a sample does not suit still compiled what it reached
                report.failures.append(item.label)
        report.compiled += watch.compiled
        report.runs += 1
    for done, name in enumerate(series):  # tracking a series takes paths a single solve does not
        if should_stop is not None and should_stop():
            raise Cancelled("warm-up stopped")
        if progress is not None:
            progress(1 + len(plan) + done, total, f"{name}: a point series")
        with watch_compiles(backend=backend) as watch:
            warm_up(_sample_series(), name, backend, {}, track=True)
        report.compiled += watch.compiled
        report.runs += 1
    if batches:
        if progress is not None:
            progress(total - 1, total, "batch solver")
        with watch_compiles(backend=backend) as watch:
            warm_batches(backend)
        report.compiled += watch.compiled
        report.runs += 1
    report.seconds = time.perf_counter() - start
    if progress is not None:
        progress(total, total, "done")
    marker = marker_path(backend)
    if marker is not None:
        try:
            marker.write_text(json.dumps({"backend": backend, "runs": report.runs,
                                          "algorithms": sorted({i.algorithm for i in plan})}))
        except OSError:  # a read-only cache still serves; only the note that it is complete is lost
            pass
    return report
