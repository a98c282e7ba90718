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

On the GPU the tree variant by default (option device_loop=auto or on) runs that same loop inside one
cooperative kernel (``hungarian_fused.solve_tree_cuda``): grid-wide barriers replace the launches and
readbacks, so thousands of BFS levels cost microseconds each instead of a host round trip. There
each BFS level and each dual update is a single grid-wide pass: the next frontier is an atomic
queue (no block-0 prefix sum), the forward pass also yields the minimum uncovered slack (no
separate reduction), and the dual update visits the columns it makes tight itself. If a
cooperative launch is not possible (e.g. no libcudadevrt to link), it falls back to the host loop
and says so in ``stats["loop"]`` and a RuntimeWarning.

Rectangular problems are solved natively: the view is transposed so rows <= cols (a tall matrix
is read through its transpose), every row is augmented, and the search ends when all rows are
assigned; there are no dummy rows (the kernels take n_rows and n_cols, ``stats["solved_shape"]``).
No column is dropped beforehand either (``narrow``, which the auction uses): a pass over the
columns is all a 1 x 100000 problem costs here, less than finding the candidate columns.
The initial reduction is by rows only (a column reduction would give columns that may stay
unassigned a positive potential); a square problem also gets the column reduction. Dual updates
only lower the potentials of covered columns, which are all assigned (an update comes only when
no tree reached a free column), so a column never assigned keeps v_j = 0 and the others v_j <= 0:
the rectangular LP's conditions. Forbidden pairs stay +inf: they never become tight, and a dual
update whose step is +inf (no finite slack from the forest to an uncovered column) proves by
Hall's theorem that the rows cannot all be assigned -> InfeasibleError; so does a row (or a square
problem's column) with no allowed pair at the initial reduction.

Exactness: integer costs are handled exactly (float64 duals of integers; on the GPU an integer
matrix with |c| < 2^24 is stored as float32, still exact, halving the memory traffic). Real costs
use a zero-slack tolerance of 16 * n * machine epsilon * max|c| (n the longer side; relative to the
data: no floor at 1) for the rounding that dual steps accumulate. Returned duals are those of the
original problem: u_i + v_j <= c_ij on allowed pairs, equality on assigned pairs, and, for
rectangular problems, potentials <= 0 on the larger side and 0 on its unassigned vertices.

Points (EuclideanCosts) are solved from the points: one kernel fills the distance matrix in target
memory from the two uploaded point sets (``point_costs``), so the n x m distances are never made
on the host or sent over the bus; the value is recomputed from the points for the assigned pairs,
and the certificate is the point certificate (solvers.certify_points).

Files: this module declares the algorithm and prepares the problem (it imports no numba); the
host loop is ``hungarian_device.HungarianDevice``, run through ``solvers.targets.launcher_for``;
the steps' bodies, cpu loops and cuda kernels are in ``hungarian_kernels``, the cooperative loop in
``hungarian_fused``; the cost statistics are the problem's own (``CostMatrix.describe``).
"""
from __future__ import annotations

import math
import time
import warnings
import weakref
from dataclasses import dataclass

import numpy as np

from ..errors import Cancelled, InfeasibleError
from ..problems import CostMatrix, EuclideanCosts
from ..registry import Algorithm, Option
from ..result import Solution

ALGORITHMS = [
    Algorithm(
        name="hungarian", problem_kinds=("assignment",), accepts=(CostMatrix, EuclideanCosts), backends=("cpu", "cuda", "cudasim"),
        runner="solvers.assignment.hungarian:run",
        options=(Option("variant", "tree", ("classical", "tree"),
                        "classical: zero-slack CSR + O(n^2) dual update; tree: alternating tree, O(n) dual update"),
                 Option("device_loop", "auto", ("auto", "on", "off"),
                        "GPU, tree variant: run the whole loop in one cooperative kernel (grid-wide barriers "
                        "instead of a launch and a readback per BFS level); off = the paper's host loop; "
                        "auto = on where it applies (the cpu always runs the host loop)")),
        label="dual",
        summary="Hungarian method with a parallel multi-path augmenting search (exact; integer or real costs).",
        reference="Date & Nagi, GPU-accelerated Hungarian algorithms for the linear assignment problem, "
                  "Parallel Computing 57 (2016)",
        phases=("augment", "dual-update"), checks_on_upload=("cuda", "cudasim")),
]

EXACT_FLOAT32 = 2 ** 24  # integers below this are exact in float32
EXACT_FLOAT64 = 2 ** 50  # keep integer duals well inside float64's exact range
EXACT_INTEGER = 2 ** 53  # every integer up to this is a float64


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


_DEVICE = _PerArray(1)  # the last uploaded matrix stays on the GPU for re-solves of the same problem


def release_device_cache() -> None:
    """Free the device copy of the last solved cost matrix."""
    _DEVICE.clear()


@dataclass(frozen=True)
class CostView:
    """The problem seen with rows <= cols: ``costs`` (maybe a transposed view), ``n_rows`` x
    ``n_cols``."""

    original: np.ndarray
    transposed: bool
    n_rows: int
    n_cols: int
    stats: CostStats

    @property
    def costs(self) -> np.ndarray:
        return self.original.T if self.transposed else self.original

    def pair_costs(self, rows, cols) -> np.ndarray:
        """The costs of the view's pairs (rows[k], cols[k]), as float64."""
        return self.costs[rows, cols].astype(np.float64, copy=False)

    # the auction's names: it pads the view to n x n with n - n_real dummy persons
    @property
    def n_real(self) -> int:
        return self.n_rows

    @property
    def n(self) -> int:
        return self.n_cols

    @property
    def exact_integer(self) -> bool:
        return self.stats.integer and self.stats.max_abs * (self.n_cols + 1) < EXACT_FLOAT64


def problem_stats(problem: CostMatrix) -> CostStats:
    """The problem's own summary (one pass, made when it was validated or first described) as
    CostStats: no second pass over the matrix."""
    described = problem.describe()
    some = described["min_cost"] is not None
    return CostStats(float(described["min_cost"]) if some else np.inf,
                     float(described["max_cost"]) if some else -np.inf,
                     int(described["forbidden"]), bool(described["integer"]))


def cost_view(problem: CostMatrix, for_upload: bool = False) -> CostView:
    """The problem seen with rows <= cols. ``for_upload``: the costs go to a GPU only, so integers the
    problem holds as given stay integers (the upload converts them; no n^2 float64 copy on the host)."""
    costs = problem.values if for_upload else problem.costs
    stats = problem_stats(problem)
    transposed = problem.n_rows > problem.n_cols
    n_rows, n_cols = sorted(problem.shape)
    return CostView(costs, transposed, n_rows, n_cols, stats)


def _device_key(launcher, transposed: bool, dtype) -> tuple:
    """What a device copy kept in _DEVICE is kept under, beside its array's identity."""
    return ("device", transposed, np.dtype(dtype).str, launcher.backend)


def device_costs(launcher, view: CostView, compact_integers: bool) -> tuple[object, float]:
    """The rows-<=-cols cost matrix where the kernels can read it, and the seconds spent uploading.

    Host memory (cpu): the problem's own array (or a contiguous transposed copy, frozen like the
    problem's so that both are the same numba type: one compile). Device memory: an upload
    (``launcher.upload_matrix``), float32 when ``compact_integers`` and every cost is an integer
    below 2^24 (exact), else float64; the last upload is kept for re-solves of the same problem
    (keyed by array identity and layout)."""
    if not launcher.device:
        if not view.transposed:
            return view.original, 0.0
        costs = np.ascontiguousarray(view.costs)
        costs.setflags(write=False)  # the same numba type as the problem's frozen array: one compile
        return costs, 0.0
    use32 = compact_integers and view.stats.integer and view.stats.max_abs < EXACT_FLOAT32
    dtype = np.float32 if use32 else np.float64
    key = _device_key(launcher, view.transposed, dtype)
    cached = _DEVICE.get(view.original, key)
    if cached is not None:
        return cached, 0.0
    _DEVICE.clear()  # free the previous matrix before allocating the next
    start = time.perf_counter()
    device = launcher.upload_matrix(view.costs, dtype)
    launcher.synchronize()
    _DEVICE.put(view.original, key, device)
    return device, time.perf_counter() - start


def upload_while_checking(launcher, problem: CostMatrix) -> float:
    """Held integers of a problem with rows <= cols handed over unchecked (CostMatrix.check_pending):
    one pass checks them and converts them into their float32 upload (cost_summary.HeldScan), then
    the problem takes the check's summary (InputError for a cost it cannot take, and nothing is
    kept on the GPU). The copy is kept where device_costs looks for it when float32 holds the
    costs exactly (below 2^24, as device_costs would choose); larger integers go up again as
    float64 there. Returns the seconds spent."""
    from ..cost_summary import HeldScan
    scan = HeldScan(problem.values)
    _DEVICE.clear()  # free the previous matrix before allocating the next
    start = time.perf_counter()
    device = launcher.upload_matrix(problem.values, np.float32, scan)
    launcher.synchronize()
    seconds = time.perf_counter() - start
    problem.accept_scan(*scan.result())
    if problem_stats(problem).max_abs < EXACT_FLOAT32:
        _DEVICE.put(problem.values, _device_key(launcher, False, np.float32), device)
    return seconds


def zero_tolerance(view: CostView) -> float:
    """0 for exact integer costs; else a bound on the rounding the dual steps accumulate, relative
    to the costs' own scale (costs of 1e-20 get a tolerance of about 1e-33, not 1e-13). Integer
    costs too large for exact duals (but below 2^53, where 1 is still a float step) keep it below
    1/2, so a reduced cost of 1 is never "tight"."""
    if view.exact_integer:
        return 0.0
    tol = 16.0 * view.n_cols * np.finfo(np.float64).eps * view.stats.max_abs
    resolvable = view.stats.integer and view.stats.max_abs < EXACT_INTEGER  # floats past 2^53 are all integers
    return min(tol, 0.5) if resolvable else tol


def empty_solution(problem: CostMatrix) -> Solution:
    """0 x n or n x 0: nothing to assign; all potentials 0."""
    rows, cols = problem.shape
    return Solution(value=0.0, iterations=0, row_match=np.full(rows, -1, np.int64),
                    col_match=np.full(cols, -1, np.int64),
                    duals={"u": np.zeros(rows), "v": np.zeros(cols)}, epsilon=0.0)


def original_solution(view: CostView, row_to_col: np.ndarray, u: np.ndarray, v: np.ndarray) -> tuple:
    """Map a view solution back: keep the view's rows (the auction's padded square has dummy rows
    after them), shift the duals so the columns' potentials are <= 0 with the largest 0, undo the
    transposition. For the Hungarian the shift is 0: its unassigned columns keep v = 0. For the
    auction every column matched to a dummy row has v = max(v), which moves into u.

    Returns (row_match, col_match, u, v, value) for the original problem."""
    n_rows, n_cols = view.n_rows, view.n_cols
    match = np.asarray(row_to_col[:n_rows], dtype=np.int64)
    u = np.asarray(u[:n_rows], dtype=np.float64).copy()
    v = np.asarray(v, dtype=np.float64).copy()
    if n_rows < n_cols and n_cols:
        shift = float(v.max())
        if shift != 0.0:
            v -= shift
            u += shift
    back = np.full(n_cols, -1, dtype=np.int64)
    assigned = match >= 0
    back[match[assigned]] = np.flatnonzero(assigned)
    rows = np.flatnonzero(assigned)
    value = float(view.pair_costs(rows, match[rows]).sum()) if rows.size else 0.0
    if view.transposed:
        return back, match, v, u, value
    return match, back, u, v, value


def run(problem: CostMatrix | EuclideanCosts, backend: str, tel, variant: str = "tree",
        device_loop: str = "auto") -> Solution:
    if min(problem.shape) == 0:
        return empty_solution(problem)
    from ..targets import launcher_for
    from .hungarian_device import HungarianDevice
    launcher = launcher_for(backend)
    checked_seconds = 0.0
    if isinstance(problem, CostMatrix):
        # solvers.solve left the check to this upload; a tall problem's upload reads its transpose
        # column by column, where the check's arithmetic does not vectorize (9000 x 3000 took 18 ms
        # more than checking first on the GPU machine's host), so it is checked first, as before
        if problem.check_pending and launcher.device and problem.n_rows <= problem.n_cols:
            checked_seconds = upload_while_checking(launcher, problem)
        from .offset import without_offset
        reduced = without_offset(problem)  # 1e6 plus noise of 1e-3: the noise decides, not the offset
        if reduced is not None:
            return reduced.restore(run(reduced.problem, backend, tel, variant, device_loop))
    if isinstance(problem, EuclideanCosts):  # points: the distances are made on the target, never uploaded
        from .point_costs import fill_distances, point_view
        view = point_view(problem)
        _DEVICE.clear()  # free the last cached matrix before filling this one
        start = time.perf_counter()
        C = fill_distances(launcher, view, problem.source)
        launcher.synchronize()
        preparation = {"distance_seconds": time.perf_counter() - start}
    else:
        view = cost_view(problem, for_upload=launcher.device)
        C, upload_seconds = device_costs(launcher, view, compact_integers=True)
        preparation = {"upload_seconds": checked_seconds + upload_seconds}
        if checked_seconds:
            preparation["checked_while_uploading"] = True
    fused = launcher.device and variant == "tree" and device_loop in ("auto", "on")
    loop_note = "cooperative kernel" if fused else "host"
    with launcher.session(view.n_cols):
        solver = HungarianDevice(launcher, C, view, variant, zero_tolerance(view), tel)
        if fused:
            try:
                iterations = solver.solve_device_loop()
            except (InfeasibleError, Cancelled):
                raise
            except Exception as exc:  # no cooperative launch here (e.g. no cudadevrt to link): host loop
                loop_note = f"host (cooperative kernel unavailable: {type(exc).__name__}: {exc})"
                warnings.warn(f"hungarian: {loop_note}", RuntimeWarning, stacklevel=2)
                solver = HungarianDevice(launcher, C, view, variant, zero_tolerance(view), tel)
                iterations = solver.solve()
        else:
            iterations = solver.solve()
        Ar, u, v = launcher.read(solver.Ar), launcher.read(solver.u), launcher.read(solver.v)
    row_match, col_match, u, v, value = original_solution(view, Ar, u, v)
    stats = dict(solver.stats, loop=loop_note, launches=launcher.launches, readbacks=launcher.readbacks,
                 **preparation, paths_per_iteration=solver.paths_per_iteration,
                 tolerance=solver.tol)
    return Solution(value=value, iterations=iterations, row_match=row_match, col_match=col_match,
                    duals={"u": u, "v": v}, epsilon=0.0, stats=stats,
                    # the certificate checks a matrix's duals on its device copy (points: from the points)
                    device_costs=C if launcher.device and isinstance(view, CostView) else None,
                    on_gpu=launcher.device and not launcher.simulated)
