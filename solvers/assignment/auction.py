"""GPU auction algorithm with epsilon-scaling (Vasconcelos & Rosenhahn 2009; Bertsekas 1992),
made exact for integer costs and certified within n * epsilon for real costs.

Minimisation: persons (rows) bid for objects (columns) with benefit -cost. One phase per epsilon:
  * phase start: keep the assignments that still satisfy epsilon-complementary slackness (a
    person's object is within epsilon of its best value), free the others;
  * Jacobi rounds while many persons are unassigned: bidding (a block per unassigned person on a
    GPU: best and second-best value b_ij - p_j over its row, bid p_j + best - second + eps), then
    the assignment (each object takes its highest bid, ties to the lowest person; atomics on the
    GPU, the same winner on the CPU). On a GPU many rounds run in one cooperative launch, with grid
    barriers between the steps and the unassigned kept in lists on the device; the host reads one
    count per launch and compacts the unassigned in order;
  * a tail for the last few: each unassigned person bids, the person it displaces bidding next,
    without returning to the host. The cpu makes one bid at a time (Gauss-Seidel, from 64
    unassigned). A GPU runs a block per person from 1024 unassigned, all bidding at once
    (Bertsekas & Castanon's asynchronous auction): a bid takes the object's lock and counts
    only if the object's price is still the one its scan read, else the person scans again. So
    the GPU's choice among tied optima may vary from run to run; the optimum and its
    certificate do not;
  * global price updates in that tail (``price_updates``; by default on a GPU): when at most 64
    persons are unassigned and every ``auction_device.UPDATE_EVERY`` bids after that, every
    object's price rises by its distance (in whole epsilons, capped) to a free object, which
    keeps epsilon-CS and spares the displaced persons long price wars (``auction_price_update``):
    at n = 8000 on an H200, 120k tail bids fall to about 11k. On the cpu an update costs more
    than the bids it saves.

Epsilon-scaling: epsilon falls from (cost range)/eps_factor by eps_factor per phase, prices carry
over. The default factor, 20, is measured (``benchmarks/probe_auction_factor.py``): at n = 8000 on
an H200 it took 15-30% off the time of 5 (the textbook's 4-7) on integer and real costs, as fewer
phases mean fewer sequential tails; on the cpu it was faster too at n = 2000-4000. Integer costs
are scaled by (n + 1), n = max(rows, cols), and the last phase runs at epsilon = 1, i.e. epsilon = 1/(n+1) < 1/n on the original costs: the assignment is optimal, and
prices stay integers (exact in float64; the reverse auction's too). Real costs are scaled by a
power of two (exact) that brings max|c| to order 1, and finish at eps (option) or, by default,
2.5e-10 times the cost range, times 4096 / rows past 4096 rows (at least 1e-13 * max|c|, where
prices stop moving): the claim gap <= n * epsilon is relative to the data at any magnitude, and
does not grow with n. The range follows the largest cost, so one outlier inflates it: real costs
then run more phases while the prices' duality gap exceeds 1e-9 of the answer's sum of |costs|
(``refined_epsilons``). Reals with an outlier 1e15 times the rest still end epsilon-optimal only.

Rectangular problems are solved natively: the view is transposed so persons (rows) <= objects
(columns), with no dummy persons (person arrays n_rows long, object arrays n_cols;
``stats["solved_shape"]``). The plain forward auction would leave objects unassigned at prices
that break epsilon-complementary slackness for the asymmetric problem once epsilon-scaling has
raised them, so every phase ends with Bertsekas & Castanon's reverse auction (Bertsekas, Castanon &
Tsaknakis 1993): with lambda = the lowest price of an assigned object, each unassigned object
priced above lambda bids for the person maximising b_ij - pi_i (pi_i = b_ik - p_k, person i's
profit at its object k) and either drops to lambda or takes that person at max(lambda, second best
- epsilon), freeing the person's object, until no unassigned object is priced above lambda. Then
every pair is epsilon-CS, the assigned objects are the highest priced, and the assignment is
within n_rows * epsilon of optimal (the certificate is told max(rows, cols) * epsilon, a looser
claim). The reverse steps run on the target like the forward ones (``auction_kernels``).
Forbidden pairs (+inf cost) are never bid on, in either direction; a feasibility pre-check (scipy
maximum_bipartite_matching on the allowed pattern: can every line of the shorter side be
assigned?) raises InfeasibleError first, since the auction never ends on an infeasible problem.

Sparse costs (``SparseCosts``; only the stored pairs are allowed) run the same steps: the kernels
read costs through accessors written for a dense matrix and for CSR/CSC arrays
(``auction_sparse``), and on a GPU a warp, not a block, scans a sparse row. Their price updates are
off by default (each arc is a bisection in a row). The matching check of an infeasible pattern runs
only after a phase has run long (``auction_device.FEASIBILITY_AFTER``): on k-NN candidates it took
longer than the solve. Measured on an H200 (``benchmarks/bench_sparse_auction.py``): faster than
sparse-sap on random sparse problems and on a million points' nearest-neighbour candidates, slower on
8,000-100,000 such points (their rows are mostly uncontested, and the phases' launches dominate).

Duals returned: with the unassigned objects' prices raised to lambda (they are at most lambda, so
epsilon-CS holds), v_j = -(p_j - lambda) / scale (<= 0, and 0 on every unassigned object: the
rectangular LP's conditions) and u_i = -(max_j (b_ij - p_j) + lambda) / scale, so u_i + v_j <= c_ij;
a square problem keeps lambda = 0. Solution.epsilon is the last epsilon in cost units.

Files: this module declares the algorithm and plans the epsilon schedule (it imports neither numba
nor scipy.sparse); the host loop is ``auction_device.AuctionDevice``, run through
``solvers.targets.launcher_for``; the bodies, cpu loops and cuda kernels are in ``auction_kernels``.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InfeasibleError, InputError
from ..problems import CostMatrix, SparseCosts
from ..registry import Algorithm, Option
from ..result import Solution
from .hungarian import cost_view, device_costs, empty_solution, original_solution
from .offset import without_offset

TAIL_BELOW = 64     # the tail (cpu: one bid at a time) starts at this many unassigned persons
# a GPU's forward tail, a block per person bidding in parallel, starts at this many instead:
# measured at n = 8000 on an H200 against 64 and 256 (benchmarks/results/auction-parallel-tail-*)
PARALLEL_TAIL_BELOW = 1024

ALGORITHMS = [
    Algorithm(
        name="auction", problem_kinds=("assignment",), accepts=(CostMatrix, SparseCosts),
        backends=("cpu", "cuda", "cudasim"),
        runner="solvers.assignment.auction:run",
        options=(Option("eps", 0.0, help="final epsilon in cost units; 0 = automatic (exact for integer costs)",
                        low=0.0, high=1e300),
                 Option("scaling", "on", ("on", "off"), "epsilon-scaling; off = a single phase at the final epsilon"),
                 Option("eps_factor", 20.0, help="epsilon shrinks by this factor per phase (> 1; fewer phases "
                        "when larger, each of them longer)",
                        low=1.0, low_open=True, high=1e6),
                Option("tail", "auto", ("auto", "off"),
                       "the tail of chained bids for the last few unassigned (in parallel on a GPU); off = "
                       "Jacobi rounds to the end, in both directions"),
                Option("price_updates", "auto", ("auto", "on", "off"),
                       "global price updates in the Gauss-Seidel tail: prices rise by the distance to a free "
                       "object, so far fewer bids follow one another; auto = on a GPU (on the cpu an update "
                       "costs more than the bids it saves)")),
        label="price",
        summary="Auction with epsilon-scaling: Jacobi bidding rounds (one launch on a GPU), atomic assignment, "
                "a tail of chained bids (in parallel under object locks on a GPU) with global price updates "
                "(by default on a GPU); rectangles natively, with a reverse auction for the objects left "
                "unassigned; dense or sparse costs.",
        reference="Vasconcelos & Rosenhahn, Bipartite graph matching computation on GPU (EMMCVPR 2009); "
                  "Bertsekas, Auction algorithms for network flow problems (1992); "
                  "Bertsekas, Castanon & Tsaknakis, Reverse auction and the solution of inequality "
                  "constrained assignment problems (1993); "
                  "Goldberg & Kennedy, An efficient cost scaling algorithm for the assignment problem "
                  "(1995: global price updates); "
                  "Bertsekas & Castanon, Parallel synchronous and asynchronous implementations of the "
                  "auction algorithm (1991: the GPU's parallel tail)",
        phases=("bid", "reverse", "eps-scale"), warmup_rows=(TAIL_BELOW, PARALLEL_TAIL_BELOW),
        warmup_past_options=(("tail", "off"),)),
]


NO_ASSIGNMENT = "no complete assignment of {} pairs exists with the stored pairs (maximum matching of the stored " \
                 "pattern is smaller)"
REAL_EPS = 2.5e-10  # default final epsilon for real costs, relative to the cost range
# from this many rows the default final epsilon shrinks as 1/rows: at a million k-NN rows, 2.5e-10 of
# the range claimed a gap within which the certificate could not rule out a cheaper assignment (too
# many pairs to settle exactly), and it derived potentials of its own, 1 s on the H200's host against
# the auction's 0.16 s; 1e-14 in cost units cost two phases more and the prices proved it at once
CLAIM_ROWS = 4096
MIN_EPS = 1e-13     # smallest epsilon relative to max|c| (below it prices stop moving in float64)
GAP_SHARE = 1e-9   # real costs: phases continue while the duality gap exceeds this share of sum |assigned costs|
MAX_REFINED = 40    # phases at most past the schedule (each divides epsilon by eps_factor)


def complete_assignment_exists(allowed) -> bool:
    """Whether the allowed pattern (a boolean array, or a scipy sparse matrix of the stored pairs)
    has a matching covering the smaller side (Hall / Hopcroft-Karp)."""
    rows, cols = allowed.shape
    small = min(rows, cols)
    degrees = np.asarray(allowed.sum(axis=1 if rows <= cols else 0)).ravel()
    if degrees.min() >= small:
        return True  # greedy never gets stuck: each vertex has more partners than can be taken
    if degrees.min() == 0:
        return False
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching
    match = maximum_bipartite_matching(csr_matrix(allowed), perm_type="column")
    return int(np.count_nonzero(match >= 0)) == small


def epsilon_schedule(view, eps: float, scaling: str, factor: float) -> tuple[float, list[float], float]:
    """(scale, epsilons in scaled units, cap): benefits are -scale * cost.

    Integer costs: scale n + 1 and a last epsilon of 1 (exact). Real costs: scale is the power of
    two that brings max|c| into [1/2, 1) (exact: it only shifts exponents), and the last epsilon is
    REAL_EPS times the cost range (times CLAIM_ROWS / rows past CLAIM_ROWS rows), at least MIN_EPS
    times max|c| (below that a price no longer moves in float64), at most the range itself: costs
    of 1e-20 and 1e300 get the same schedule."""
    exact = view.exact_integer and eps == 0.0
    if exact:
        scale, final = float(view.n_cols + 1), 1.0
    else:
        scale = power_of_two_scale(view.stats.max_abs)
        top, span = scale * view.stats.max_abs, scale * view.stats.span
        # the claim n * epsilon stays at most REAL_EPS * CLAIM_ROWS times the range at any n: past
        # CLAIM_ROWS rows epsilon shrinks with n (so the certificate can accept the prices at once)
        automatic = REAL_EPS * span * min(1.0, CLAIM_ROWS / max(view.n_rows, 1))
        final = max(eps * scale if eps > 0 else automatic, MIN_EPS * top)
        if span > 0:
            final = min(final, span)  # a larger epsilon claims no more: any assignment is that close
        if not final > 0:
            final = 1.0  # every cost is 0
    span = scale * view.stats.span
    epsilons = []
    if scaling == "on":
        e = math.floor(span / factor) if exact else span / factor  # integer epsilons keep prices integral
        while e > final:
            epsilons.append(e)
            e = math.floor(e / factor) if exact else e / factor
    epsilons.append(final)
    cap = span + epsilons[0]  # raise for a person with a single allowed object (no second best)
    return scale, epsilons, cap


def refined_epsilons(solver, last: float, factor: float) -> list[float]:
    """Phases past the scheduled last epsilon of real costs (the default one), while the duality gap
    of the prices exceeds GAP_SHARE of the assigned costs' magnitude, down to where prices stop
    moving. The scheduled epsilon follows the cost range, and one outlier inflates it: 300 costs in
    [0, 1] and one of 1e9 ended 7% above the optimum (within the claimed n * epsilon = 12.5, so
    "certified"); the gap follows the answer's own scale. Returns the epsilons run."""
    run = []
    e = last
    while len(run) < MAX_REFINED:
        primal, dual, magnitude, floor = solver.duality_gap()
        if primal - dual <= GAP_SHARE * magnitude or e / factor < MIN_EPS * floor:
            break
        e /= factor
        solver.phase(e, first=False)
        run.append(e)
    return run


def power_of_two_scale(max_abs: float) -> float:
    """2^-e with max_abs = f * 2^e, f in [1/2, 1): multiplying by it is exact (no rounding), and
    brings the largest |cost| to order 1 (the exponent is kept within +-1000 so the scale itself
    is a normal float)."""
    if not max_abs > 0 or not math.isfinite(max_abs):
        return 1.0
    _, exponent = math.frexp(max_abs)
    return math.ldexp(1.0, -min(max(exponent, -1000), 1000))


def _check_options(eps: float, scaling: str, eps_factor: float, price_updates: str, tail: str) -> None:
    if not (eps >= 0.0 and math.isfinite(eps)):
        raise InputError(f"option eps={eps!r} must be a finite number >= 0")
    if not (eps_factor > 1.0 and math.isfinite(eps_factor)):
        raise InputError(f"option eps_factor={eps_factor!r} must be > 1")
    if scaling not in ("on", "off"):
        raise InputError(f"option scaling={scaling!r}: choose from on, off")
    if price_updates not in ("auto", "on", "off"):
        raise InputError(f"option price_updates={price_updates!r}: choose from auto, on, off")
    if tail not in ("auto", "off"):
        raise InputError(f"option tail={tail!r}: choose from auto, off")


def run(problem: CostMatrix | SparseCosts, backend: str, tel, eps: float = 0.0, scaling: str = "on",
        eps_factor: float = 20.0, price_updates: str = "auto", tail: str = "auto") -> Solution:
    _check_options(eps, scaling, eps_factor, price_updates, tail)
    if min(problem.shape) == 0:
        return empty_solution(problem)
    sparse = isinstance(problem, SparseCosts)
    if sparse:
        from .auction_sparse import columns_with_pairs, sparse_view
        view = sparse_view(problem)
        # the matching check (Hopcroft-Karp) can take longer than the solve (11 s on 100,000 points'
        # 8 nearest neighbours): the cheap necessary conditions here, the check itself only if the
        # auction runs long (an infeasible problem's prices rise without end)
        if np.diff(view.row_ptr).min() == 0 or columns_with_pairs(view) < view.n_rows:
            raise InfeasibleError(NO_ASSIGNMENT.format(view.n_rows))
        feasible = lambda: complete_assignment_exists(view.allowed())  # noqa: E731
    else:
        view, feasible = cost_view(problem), None
        if view.stats.n_forbidden and not complete_assignment_exists(np.isfinite(problem.costs)):
            raise InfeasibleError(f"no complete assignment of {view.n_rows} pairs exists with the allowed pairs "
                                  "(maximum matching of the allowed pattern is smaller)")
        reduced = without_offset(problem)  # prices that carry a huge shared offset leave epsilon no room
        if reduced is not None:
            return reduced.restore(run(reduced.problem, backend, tel, eps, scaling, eps_factor, price_updates, tail))
    scale, epsilons, cap = epsilon_schedule(view, eps, scaling, eps_factor)
    from ..targets import launcher_for
    from .auction_device import AuctionDevice
    launcher = launcher_for(backend)
    if sparse:
        from .auction_sparse import target_costs
        C, upload_seconds = target_costs(launcher, view, compact_integers=True)
    else:
        C, upload_seconds = device_costs(launcher, view, compact_integers=True)
    with launcher.session(view.n_cols):
        # a price update relaxes every object against a frontier, each arc a lookup: on sparse rows a
        # bisection, which costs more than the bids it saves
        updates = price_updates == "on" or (price_updates == "auto" and launcher.device and not sparse)
        solver = AuctionDevice(launcher, C, view, scale, cap, tel, updates, tail=tail != "off", feasible=feasible)
        for k, e in enumerate(epsilons):
            solver.phase(e, first=(k == 0))
        if eps == 0.0 and not view.exact_integer:  # real costs at the default epsilon
            epsilons += refined_epsilons(solver, epsilons[-1], eps_factor)
        lam = solver.finish()
        solver.final_snapshot()
        values = solver.person_values()
        prices = launcher.read(solver.prices)
        a_p = launcher.read(solver.a_p)
        counts = solver.run_counts()
    # prices less lambda: >= 0 on assigned objects, 0 on the others (the rectangular LP's signs)
    u = -(values + lam) / scale
    v = -(prices - lam) / scale
    row_match, col_match, u, v, value = original_solution(view, a_p, u, v)
    stats = dict(solver.stats, **counts, rounds=solver.rounds, launches=launcher.launches,
                 readbacks=launcher.readbacks, upload_seconds=upload_seconds, scale=scale,
                 eps_first=epsilons[0] / scale, epsilon=epsilons[-1] / scale)
    return Solution(value=value, iterations=solver.rounds, row_match=row_match, col_match=col_match,
                    duals={"u": u, "v": v}, epsilon=epsilons[-1] / scale, stats=stats,
                    # a GPU's dense matrix: the certificate checks the duals there
                    device_costs=C if launcher.device and not sparse else None)
