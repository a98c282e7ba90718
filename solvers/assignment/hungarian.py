"""GPU Hungarian algorithm for the linear assignment problem (Date & Nagi, Parallel Computing 2016).

Two variants, one host loop on every backend:

* ``classical`` (Kuhn-Munkres / Munkres): the zero-slack edges are compressed into a CSR
  (per-row counts, a prefix sum for the row pointers, a scatter), rebuilt only after a dual
  update; the dual update takes the minimum slack over forest rows x uncovered columns.
* ``tree`` (Lawler's alternating tree, the default): no CSR; one thread per column folds the
  frontier rows into the column's minimum slack and predecessor, and the dual update is an O(n)
  reduction over those slacks.

Each iteration: initial row/column reduction (once), optimality check (cover the assigned rows;
the free rows, compacted by prefix sum, are the first frontier; one counter read back), then the
augmenting path search in three passes: a forward BFS grown level by level from all free rows at
once (frontier compacted by prefix sum after each level; the trees are vertex-disjoint because a
column keeps one predecessor), a reverse pass from every free column reached back to its root (a
race keeps one path per tree) and an augmentation pass flipping all those paths at once. When the
BFS reaches no free column the duals are updated and the BFS resumes. The host reads back one
small counter array per BFS level or dual update, nothing else.

On the GPU the tree variant by default (option device_loop=on) runs that same loop inside one
cooperative kernel (``hungarian_kernels.solve_tree``): grid-wide barriers replace the launches and
readbacks, so thousands of BFS levels cost microseconds each instead of a host round trip. There
each BFS level and each dual update is a single grid-wide pass: the next frontier is an atomic
queue (no block-0 prefix sum), the forward pass also yields the minimum uncovered slack (no
separate reduction), and the dual update visits the columns it makes tight itself. If a
cooperative launch is not possible (e.g. no libcudadevrt to link), it falls back to the host loop
and says so in ``stats["loop"]`` and a RuntimeWarning.

Rectangular problems: columns no optimal assignment needs are dropped first (``narrow``: at most
rows^2 remain, so a 1 x 100000 matrix is a 1 x 1 problem), the view is transposed so rows <= cols,
then padded to square with dummy rows of cost 0 (never stored: ``cost_at`` returns 0 for them). Forbidden pairs stay +inf: they
never become tight, and a dual update whose step is +inf (no finite slack from the forest to an
uncovered column) proves by Hall's theorem that no complete assignment exists ->
InfeasibleError; so does a row or column with no allowed pair at the initial reduction.

Exactness: integer costs are handled exactly (float64 duals of integers; on the GPU an integer
matrix with |c| < 2^24 is stored as float32, still exact, halving the memory traffic). Real costs
use a zero-slack tolerance of 16 * n * machine epsilon * max|c| (relative to the data: no floor at 1)
for the rounding that dual steps accumulate. Returned duals are those of the original problem: u_i + v_j <= c_ij on allowed pairs,
equality on assigned pairs, and, for rectangular problems, potentials <= 0 on the larger side and 0
on its unassigned vertices (the dummy rows' common dual is shifted into u and v).
"""
from __future__ import annotations

import math
import time
import warnings
import weakref
from dataclasses import dataclass

import numpy as np

from ..errors import Cancelled, InfeasibleError
from ..problems import CostMatrix
from ..registry import Algorithm, Option
from ..result import Solution
from .hungarian_cpu import (CPU_KERNELS, DUALS, FOUND, FRONT, INFEAS, ITERS, KEEP_FLAGGED, KEEP_ZERO, LEVELS,
                            N_COUNTERS, N_SCALARS, NNZ, OVERFLOW, TREE, CpuLauncher, cost_stats)
from .narrow import narrow_long_side

ALGORITHMS = [
    Algorithm(
        name="hungarian", problem_kinds=("assignment",), accepts=(CostMatrix,), backends=("cpu", "cuda", "cudasim"),
        runner="solvers.assignment.hungarian:run",
        options=(Option("variant", "tree", ("classical", "tree"),
                        "classical: zero-slack CSR + O(n^2) dual update; tree: alternating tree, O(n) dual update"),
                 Option("device_loop", "on", ("on", "off"),
                        "GPU, tree variant: run the whole loop in one cooperative kernel (grid-wide barriers "
                        "instead of a launch and a readback per BFS level); off = the paper's host loop")),
        label="dual",
        summary="Hungarian method with a parallel multi-path augmenting search (exact; integer or real costs).",
        reference="Date & Nagi, GPU-accelerated Hungarian algorithms for the linear assignment problem, "
                  "Parallel Computing 57 (2016)"),
]

EXACT_FLOAT32 = 2 ** 24  # integers below this are exact in float32
EXACT_FLOAT64 = 2 ** 50  # keep integer duals well inside float64's exact range
EXACT_INTEGER = 2 ** 53  # every integer up to this is a float64
SMALL_MATRIX = 1 << 20  # entries below which the cost statistics come from numpy


# ---------------------------------------------------------------------------------------------
# shared preparation (also used by the auction)

@dataclass(frozen=True)
class CostStats:
    min_cost: float    # over finite entries (inf when none)
    max_cost: float
    n_forbidden: int
    integer: bool      # every finite entry is an integer

    @property
    def max_abs(self) -> float:
        finite = [abs(x) for x in (self.min_cost, self.max_cost) if math.isfinite(x)]
        return max(finite, default=0.0)

    @property
    def span(self) -> float:
        return self.max_cost - self.min_cost if math.isfinite(self.min_cost) else 0.0


class _PerArray:
    """Remembers one value per live numpy array (by identity; problems are immutable)."""

    def __init__(self, size: int):
        self.size = size
        self.entries: list[tuple] = []  # (key, weakref to the array, value), most recent last

    def get(self, array: np.ndarray, key):
        for k, ref, value in self.entries:
            if k == key and ref() is array:
                return value
        return None

    def put(self, array: np.ndarray, key, value) -> None:
        self.entries = [e for e in self.entries if e[1]() is not None and not (e[0] == key and e[1]() is array)]
        while len(self.entries) >= self.size:
            self.entries.pop(0)
        self.entries.append((key, weakref.ref(array, self._forget), value))

    def _forget(self, dead_ref) -> None:
        """The array was collected: drop its value now (a device copy frees GPU memory)."""
        self.entries = [e for e in self.entries if e[1] is not dead_ref]

    def clear(self) -> None:
        self.entries.clear()


_STATS = _PerArray(8)
_DEVICE = _PerArray(1)  # the last uploaded matrix stays on the GPU for re-solves of the same problem


def release_device_cache() -> None:
    """Free the device copy of the last solved cost matrix."""
    _DEVICE.clear()


def cost_stats_of(costs: np.ndarray) -> CostStats:
    stats = _STATS.get(costs, ("stats", costs.shape))
    if stats is None:
        if costs.size < SMALL_MATRIX:  # numpy is quicker than waking a thread team
            finite = costs[np.isfinite(costs)]
            lo, hi = (finite.min(), finite.max()) if finite.size else (np.inf, -np.inf)
            n_inf, integer = costs.size - finite.size, bool(np.all(finite == np.floor(finite)))
        else:  # one parallel pass, no temporaries the size of the matrix
            lo, hi, n_inf, integer = cost_stats(costs)
        stats = CostStats(float(lo), float(hi), int(n_inf), bool(integer))
        _STATS.put(costs, ("stats", costs.shape), stats)
    return stats


@dataclass(frozen=True)
class CostView:
    """The problem seen with rows <= cols: ``costs`` (maybe a transposed view), ``n_real`` real
    rows, padded to ``n`` x ``n`` by dummy rows of cost 0."""

    original: np.ndarray
    transposed: bool
    n_real: int
    n: int
    stats: CostStats

    @property
    def costs(self) -> np.ndarray:
        return self.original.T if self.transposed else self.original

    @property
    def exact_integer(self) -> bool:
        return self.stats.integer and self.stats.max_abs * (self.n + 1) < EXACT_FLOAT64


def cost_view(problem: CostMatrix) -> CostView:
    costs = problem.costs
    stats = cost_stats_of(costs)
    transposed = problem.n_rows > problem.n_cols
    n_real, n = sorted(problem.shape)
    return CostView(costs, transposed, n_real, n, stats)


def launcher_for(backend: str, cpu_kernels: dict, cuda_kernels: dict, kinds: dict):
    if backend == "cpu":
        return CpuLauncher(cpu_kernels)
    from .hungarian_kernels import CudaLauncher
    return CudaLauncher(cuda_kernels, kinds)


def device_costs(launcher, view: CostView, compact_integers: bool) -> tuple[object, float]:
    """The rows-<=-cols cost matrix where the kernels can read it, and the seconds spent uploading.

    CPU: the problem's own array (or a contiguous transposed copy). GPU: an upload, float32 when
    ``compact_integers`` and every cost is an integer below 2^24 (exact), else float64; the last
    upload is kept for re-solves of the same problem (keyed by array identity and layout)."""
    if launcher.backend == "cpu":
        if not view.transposed:
            return view.original, 0.0
        costs = np.ascontiguousarray(view.costs)
        costs.setflags(write=False)  # the same numba type as the problem's frozen array: one compile
        return costs, 0.0
    use32 = compact_integers and view.stats.integer and view.stats.max_abs < EXACT_FLOAT32
    dtype = np.float32 if use32 else np.float64
    key = ("device", view.transposed, np.dtype(dtype).str, launcher.backend)
    cached = _DEVICE.get(view.original, key)
    if cached is not None:
        return cached, 0.0
    _DEVICE.clear()  # free the previous matrix before allocating the next
    start = time.perf_counter()
    device = launcher.upload(view.costs, dtype)
    launcher.synchronize()
    _DEVICE.put(view.original, key, device)
    return device, time.perf_counter() - start


def zero_tolerance(view: CostView) -> float:
    """0 for exact integer costs; else a bound on the rounding the dual steps accumulate, relative
    to the costs' own scale (costs of 1e-20 get a tolerance of about 1e-33, not 1e-13). Integer
    costs too large for exact duals (but below 2^53, where 1 is still a float step) keep it below
    1/2, so a reduced cost of 1 is never "tight"."""
    if view.exact_integer:
        return 0.0
    tol = 16.0 * view.n * np.finfo(np.float64).eps * view.stats.max_abs
    resolvable = view.stats.integer and view.stats.max_abs < EXACT_INTEGER  # floats past 2^53 are all integers
    return min(tol, 0.5) if resolvable else tol


def empty_solution(problem: CostMatrix) -> Solution:
    """0 x n or n x 0: nothing to assign; all potentials 0."""
    rows, cols = problem.shape
    return Solution(value=0.0, iterations=0, row_match=np.full(rows, -1, np.int64),
                    col_match=np.full(cols, -1, np.int64),
                    duals={"u": np.zeros(rows), "v": np.zeros(cols)}, epsilon=0.0)


def original_solution(view: CostView, row_to_col: np.ndarray, u: np.ndarray, v: np.ndarray) -> tuple:
    """Map a square view solution back: drop dummy rows, shift duals so the larger side's
    potentials are <= 0 (0 where unassigned), undo the transposition.

    Returns (row_match, col_match, u, v, value) for the original problem."""
    n_real, n = view.n_real, view.n
    match = np.asarray(row_to_col[:n_real], dtype=np.int64)
    u = np.asarray(u[:n_real], dtype=np.float64).copy()
    v = np.asarray(v, dtype=np.float64).copy()
    if n_real < n and n:
        # every column matched to a dummy row has v = max(v): move that common value into u
        shift = float(v.max())
        v -= shift
        u += shift
    back = np.full(n, -1, dtype=np.int64)
    assigned = match >= 0
    back[match[assigned]] = np.flatnonzero(assigned)
    rows = np.flatnonzero(assigned)
    costs = view.costs
    value = float(costs[rows, match[rows]].sum()) if rows.size else 0.0
    if view.transposed:
        return back, match, v, u, value
    return match, back, u, v, value


# ---------------------------------------------------------------------------------------------
# the host loop

class _Hungarian:
    def __init__(self, launcher, C, view: CostView, variant: str, tol: float, tel):
        self.L = launcher
        self.C = C
        self.view = view
        self.n = n = view.n
        self.n_real = view.n_real
        self.variant = variant
        self.tol = float(tol)
        self.tel = tel
        L, i32 = launcher, np.int32
        self.u = L.full(n, 0.0, np.float64)
        self.v = L.full(n, 0.0, np.float64)
        self.Ar = L.full(n, -1, i32)
        self.Ac = L.full(n, -1, i32)
        self.Vr, self.Vc = L.full(n, 0, i32), L.full(n, 0, i32)
        self.Pr, self.Pc = L.full(n, -1, i32), L.full(n, -1, i32)
        self.Sr, self.Sc = L.full(n, -1, i32), L.full(n, -1, i32)
        self.slack = L.full(n, np.inf, np.float64)
        self.row_next = L.full(n, 0, i32)
        self.col_rev = L.full(n, 0, i32)
        self.root_aug = L.full(n, 0, i32)
        self.path_len = L.full(n, 0, i32)
        self.F = L.full(n, 0, i32)
        self.F2 = None
        self.counters = L.full(N_COUNTERS, 0, np.int64)
        self.scal = L.full(N_SCALARS, 0.0, np.float64)
        if variant == "classical":
            self.row_cnt = L.full(n, 0, np.int64)
            self.row_ptr = L.full(n + 1, 0, np.int64)
            self.z_cap = max(16, 4 * n)
            self.Z = L.full(self.z_cap, 0, i32)
            self.colmin = L.full(n, np.inf, np.float64)
            self.T = L.full(n, 0, i32)
        self.stats = {"variant": variant, "dual_updates": 0, "bfs_levels": 0, "csr_builds": 0,
                      "initial_assignments": 0}
        self.paths_per_iteration: list[int] = []
        self.step = 0

    # --- steps -----------------------------------------------------------------------------
    def build_csr(self) -> None:
        """Matrix compression of the zero-slack edges (counts, prefix sum, scatter)."""
        L, n = self.L, self.n
        L.launch("clear", n, n, self.row_cnt)
        L.launch("zero_count", (n, n), n, n, self.n_real, self.C, self.u, self.v, self.row_cnt, self.tol)
        L.launch("scan_rows", 1, n, self.row_cnt, self.row_ptr, self.counters)
        self._fill_csr()
        self.stats["csr_builds"] += 1

    def _fill_csr(self) -> None:
        n = self.n
        self.L.launch("zero_fill", (n, n), n, n, self.n_real, self.C, self.u, self.v, self.row_ptr,
                      self.row_cnt, self.Z, self.z_cap, self.counters, self.tol)

    def grow_csr(self, nnz: int) -> None:
        """The CSR outgrew its buffer: reallocate and scatter again (counts are kept)."""
        self.z_cap = max(int(nnz), 2 * self.z_cap)
        self.Z = self.L.full(self.z_cap, 0, np.int32)
        self.L.launch("scan_rows", 1, self.n, self.row_cnt, self.row_ptr, self.counters)
        self._fill_csr()

    def compact_frontier(self) -> None:
        self.L.launch("compact", 1, self.n, self.row_next, self.F, self.counters, FRONT, KEEP_FLAGGED)

    def expand(self, fsize: int) -> None:
        L, n = self.L, self.n
        if self.variant == "tree":
            L.launch("expand_tree", n, n, self.n_real, fsize, self.F, self.C, self.u, self.v, self.Ac, self.Vc,
                     self.Vr, self.Pc, self.Pr, self.slack, self.row_next, self.col_rev, self.counters, self.tol)
        else:
            L.launch("expand_classical", fsize, fsize, self.F, self.row_ptr, self.Z, self.Ac, self.Vc, self.Vr,
                     self.Pc, self.Pr, self.row_next, self.col_rev, self.counters)

    def dual_update(self) -> None:
        L, n = self.L, self.n
        if self.variant == "tree":
            L.launch("min_uncovered", 1, n, self.slack, self.Vc, self.scal, self.counters)
            L.launch("dual_tree", n, n, self.u, self.v, self.Vr, self.Vc, self.slack, self.scal)
            self.expand(0)  # visit the columns the update made tight
        else:
            L.launch("compact", 1, n, self.Vr, self.T, self.counters, TREE, KEEP_ZERO)
            L.launch("col_min_tree_rows", n, n, self.n_real, self.T, self.C, self.u, self.v, self.Vc,
                     self.colmin, self.counters)
            L.launch("min_uncovered", 1, n, self.colmin, self.Vc, self.scal, self.counters)
            L.launch("dual_classical", n, n, self.u, self.v, self.Vr, self.Vc, self.row_next, self.scal)
            self.build_csr()
        self.stats["dual_updates"] += 1

    def reverse_and_augment(self) -> None:
        L, n = self.L, self.n
        L.launch("reverse", n, n, self.col_rev, self.Pc, self.Pr, self.Sc, self.Sr, self.root_aug)
        L.launch("augment", n, n, self.root_aug, self.Sr, self.Sc, self.Ar, self.Ac, self.path_len)

    def read_counters(self) -> np.ndarray:
        c = self.L.read(self.counters)
        if c[INFEAS]:
            raise InfeasibleError(f"no complete assignment of {self.n_real} pairs exists with the allowed pairs "
                                  "(Hall's condition fails: a set of rows reaches too few columns)")
        if self.variant == "classical" and c[OVERFLOW]:
            self.grow_csr(c[NNZ])
            c[OVERFLOW] = 0
        return c

    # --- telemetry (only when someone listens) ---------------------------------------------
    def _emit_augment(self, it: int, matched: int, paths: int, final: bool = False, **extra) -> None:
        """One augmentation round; ``final``: the optimum was reached (its duals are the last labels)."""
        tel = self.tel
        u, v, Ar = self.L.read(self.u), self.L.read(self.v), self.L.read(self.Ar)
        rows = np.flatnonzero(Ar[:self.n_real] >= 0)
        primal = float(self.view.costs[rows, Ar[rows]].sum()) if rows.size else 0.0
        dual = float(u.sum() + v.sum())
        tel.iteration(self.step, "augment", active=self.n - matched, value=primal, paths=paths,
                      assigned=matched, dual_objective=dual, primal_cost=primal, round=it, **extra)
        if tel.snapshot_due("labels", final=final):
            tel.labels(self.step, rows=u[:self.n_real], cols=v)
        if paths and tel.snapshot_due("paths"):
            lengths = self.L.read(self.path_len)
            tel.snapshot(self.step, "paths", {"lengths": lengths[lengths > 0].astype(np.int64)})
        self.L.write(self.path_len, np.zeros(self.n, np.int32))
        self.step += 1

    def _emit_dual(self, it: int, front: int) -> None:
        delta = float(self.L.read(self.scal)[0])
        self.tel.iteration(self.step, "dual-update", active=front, delta=delta, round=it)
        if self.tel.snapshot_due("labels"):
            self.tel.labels(self.step, rows=self.L.read(self.u)[:self.n_real], cols=self.L.read(self.v))
        self.step += 1

    # --- the loops ---------------------------------------------------------------------------
    def initial_reduction(self) -> None:
        """Row then column reduction; a row or column with no allowed pair proves infeasibility,
        checked before its infinite potential enters any difference (inf - inf)."""
        L, n = self.L, self.n
        L.launch("row_min", n, n, self.n_real, self.C, self.u, self.counters)
        self.read_counters()
        L.launch("col_min", n, n, self.n_real, self.C, self.u, self.v, self.counters)
        self.read_counters()

    def device_loop_args(self, log, start: int, per_launch: int) -> tuple:
        """Arguments of the cooperative ``solve_tree`` kernel."""
        if self.F2 is None:  # the second frontier buffer (the loop alternates F and F2)
            self.F2 = self.L.full(self.n, 0, np.int32)
        return (self.n, self.n_real, self.C, self.u, self.v, self.Ar, self.Ac, self.Vr, self.Vc, self.Pr, self.Pc,
                self.Sr, self.Sc, self.slack, self.F, self.F2, self.root_aug, self.path_len, self.col_rev,
                self.counters, self.scal, log, int(start), int(per_launch), self.tol)

    def solve_device_loop(self) -> int:
        """Tree variant on the GPU: the loop runs in the cooperative ``solve_tree`` kernel; the host
        reads the counters once per launch (one launch in all, or one per augmentation when a
        listener wants per-iteration telemetry)."""
        L, n, tel = self.L, self.n, self.tel
        self.initial_reduction()
        log = L.full(n + 2, 0, np.int64)
        per_launch = 1 if tel.enabled else n + 1
        iterations, matched_before = 0, 0
        while True:
            L.launch("solve_tree", n, *self.device_loop_args(log, iterations, per_launch))
            c = self.read_counters()
            iterations += int(c[ITERS])
            matched = n - int(c[FRONT])
            if tel.enabled and (c[ITERS] or c[FRONT] == 0):
                self._emit_augment(iterations, matched, matched - matched_before, final=c[FRONT] == 0,
                                   dual_updates=int(c[DUALS]))
            matched_before = matched
            if c[FRONT] == 0:
                break
        matched_log = L.read(log)[:iterations + 1]
        self.paths_per_iteration = np.diff(matched_log).astype(int).tolist()
        self.stats.update(dual_updates=int(c[DUALS]), bfs_levels=int(c[LEVELS]),
                          initial_assignments=int(matched_log[1]) if iterations else 0)
        return iterations

    def solve(self) -> int:
        L, n, tel = self.L, self.n, self.tel
        self.initial_reduction()
        if self.variant == "classical":
            self.build_csr()
        it, matched_before = 0, 0
        while True:
            # optimality check: free rows are the roots of the next search
            L.launch("reset_search", n, n, self.Ar, self.Vr, self.Vc, self.Pr, self.Pc, self.Sr, self.Sc,
                     self.slack, self.row_next, self.col_rev, self.root_aug, self.counters)
            self.compact_frontier()
            c = self.read_counters()
            matched = n - int(c[FRONT])
            if it > 0:
                paths = matched - matched_before
                self.paths_per_iteration.append(paths)
                if it == 1:
                    self.stats["initial_assignments"] = matched
            if tel.enabled and (it > 0 or matched == n):  # round 0 only when the reduction alone is optimal
                self._emit_augment(it, matched, matched - matched_before, final=matched == n)
            matched_before = matched
            if matched == n:
                return it
            while True:  # augmenting path search
                front = int(c[FRONT])
                if front > 0:  # forward pass: one BFS level
                    self.expand(front)
                    self.compact_frontier()
                    self.stats["bfs_levels"] += 1
                    c = self.read_counters()
                    tel.check_cancel()  # a search can take thousands of levels between two reports
                    continue
                if c[FOUND]:  # reverse and augmentation passes
                    self.reverse_and_augment()
                    break
                self.dual_update()
                self.compact_frontier()
                c = self.read_counters()
                if tel.enabled:
                    self._emit_dual(it, int(c[FRONT]))
            it += 1


def run(problem: CostMatrix, backend: str, tel, variant: str = "tree", device_loop: str = "on") -> Solution:
    if min(problem.shape) == 0:
        return empty_solution(problem)
    narrowed = narrow_long_side(problem)  # 1 x 100000 is solved as 1 x 1, not padded to 100000^2
    if narrowed is not None:
        return narrowed.widen(run(narrowed.problem, backend, tel, variant, device_loop))
    from .hungarian_kernels import KERNELS, KINDS
    view = cost_view(problem)
    launcher = launcher_for(backend, CPU_KERNELS, KERNELS, KINDS)
    C, upload_seconds = device_costs(launcher, view, compact_integers=True)
    fused = launcher.backend != "cpu" and variant == "tree" and device_loop == "on"
    loop_note = "cooperative kernel" if fused else "host"
    with launcher.session(view.n):
        solver = _Hungarian(launcher, C, view, variant, zero_tolerance(view), tel)
        if fused:
            try:
                iterations = solver.solve_device_loop()
            except (InfeasibleError, Cancelled):
                raise
            except Exception as exc:  # no cooperative launch here (e.g. no cudadevrt to link): host loop
                loop_note = f"host (cooperative kernel unavailable: {type(exc).__name__}: {exc})"
                warnings.warn(f"hungarian: {loop_note}", RuntimeWarning, stacklevel=2)
                solver = _Hungarian(launcher, C, view, variant, zero_tolerance(view), tel)
                iterations = solver.solve()
        else:
            iterations = solver.solve()
        Ar, u, v = launcher.read(solver.Ar), launcher.read(solver.u), launcher.read(solver.v)
    row_match, col_match, u, v, value = original_solution(view, Ar, u, v)
    stats = dict(solver.stats, loop=loop_note, launches=launcher.launches, readbacks=launcher.readbacks,
                 upload_seconds=upload_seconds, paths_per_iteration=solver.paths_per_iteration,
                 tolerance=solver.tol)
    return Solution(value=value, iterations=iterations, row_match=row_match, col_match=col_match,
                    duals={"u": u, "v": v}, epsilon=0.0, stats=stats)
