"""The GPU auction's host loop (Vasconcelos & Rosenhahn 2009): ``AuctionDevice`` holds one solve's
arrays on the target and runs the epsilon phases by launching the steps of ``auction_kernels``
through a launcher from ``solvers.targets.launcher_for``: per phase the forward auction until every
person holds an object, then, for a rectangular problem, the reverse auction until no unassigned
object is priced above lambda (Bertsekas & Castanon). Both loops stay on the target; the host reads
one small counter array per launch (of many Jacobi rounds, or of a tail's bids, or per few pairs of
a price update and a tail), and launches the global price updates of the tail
(``auction_price_update``). It never asks which backend it runs on, only whether the arrays live
on a device (where the forward tail bids in parallel, so it starts earlier). Imported only when a
run starts (it imports the kernels)."""
from __future__ import annotations

import numpy as np

from ..errors import InfeasibleError
from ..telemetry import Budget
from . import auction_kernels as K
from .auction import NO_ASSIGNMENT, PARALLEL_TAIL_BELOW, TAIL_BELOW
from .auction_kernels import BIDS, INFEAS, JROUNDS, N_COUNTERS, NO_BIDDER, RBIDS, RJROUNDS, UCOUNT, VCOUNT
from .auction_price_update import PRICE_UPDATE, ROUNDS, UPDATE_SLOTS, UPDATES
from .hungarian_kernels import COMPACT, KEEP_FLAGGED, KEEP_NEGATIVE

# at or below GS_THRESHOLD bidders (persons, or objects in the reverse auction) the tail bids; a GPU's
# forward tail starts at PARALLEL_TAIL_BELOW instead (not at all where GS_THRESHOLD is 0)
GS_THRESHOLD = TAIL_BELOW
GS_BUDGET = 8192    # bids per tail launch before the host looks again (telemetry, cancellation)
JACOBI_ROUNDS_PER_LAUNCH = 64  # a Jacobi rounds' launch (forward or reverse) returns to the host after this many
UPDATE_EVERY = 400   # tail bids between two global price updates (200 and 100: more time in updates)
UPDATE_BELOW = 64    # the updates start when this few persons are unassigned
UPDATES_PER_READ = 8  # (price update, UPDATE_EVERY tail bids) pairs launched between two readbacks
FEASIBILITY_AFTER = 256  # a phase's forward launches before a problem not known feasible is checked
UPDATE_LEVELS = 16   # a price update settles distances up to this many epsilons (the rest: this many)


class AuctionDevice:
    def __init__(self, launcher, C, view, scale: float, cap: float, tel, price_updates: bool = True,
                 tail: bool = True, feasible=None):
        self.L = L = launcher
        self.C = C
        self.view = view
        self.n_rows = nr = view.n_rows  # persons
        self.n_cols = nc = view.n_cols  # objects, nc >= nr
        self.rectangular = nr < nc
        self.scale = float(scale)
        self.cap = float(cap)
        self.tel = tel
        self.use_tail = tail  # False: Jacobi rounds to the end, in both directions
        # None, or a check that a complete assignment exists, made once a phase has run long
        # (FEASIBILITY_AFTER launches): an infeasible problem's auction never ends
        self.feasible = feasible
        self.K = K.steps_for(C)  # the kernels for dense or sparse costs
        i32, f64 = np.int32, np.float64
        # person arrays: n_rows; object arrays: n_cols (no dummy persons)
        self.prices = L.full(nc, 0.0, f64)
        self.a_p = L.full(nr, -1, i32)
        self.a_o = L.full(nc, -1, i32)
        self.bid_obj = L.full(nr, -1, i32)
        self.bid_val = L.full(nr, 0.0, f64)
        self.obj_top = L.full(nc, -np.inf, f64)
        self.obj_win = L.full(nc, NO_BIDDER, i32)
        self.U = L.full(nr, 0, i32)
        self.U_next = L.full(nr, 0, i32)  # the GPU's Jacobi rounds alternate between U and this
        self.counters = L.full(N_COUNTERS, 0, np.int64)
        self.locks = L.full(nc, 0, i32)  # the GPU's parallel tail takes an object's lock to bid for it
        self.counters_host = L.scratch(N_COUNTERS, np.int64)
        # the reverse auction's: lambda, the persons' profits, the flagged objects, the offers
        self.lam = L.full(1, 0.0, f64)
        if self.rectangular:
            self.profit = L.full(nr, 0.0, f64)
            self.flags = L.full(nc, 0, i32)
            self.V = L.full(nc, 0, i32)
            self.V_next = L.full(nc, 0, i32)  # the GPU's reverse Jacobi rounds alternate between V and this
            self.rbid_person = L.full(nc, -1, i32)
            self.rbid_price = L.full(nc, 0.0, f64)
            self.rbid_offer = L.full(nc, 0.0, f64)
            self.person_top = L.full(nr, -np.inf, f64)
            self.person_win = L.full(nr, NO_BIDDER, i32)
        # the global price updates' (auction_price_update): levels, tentative levels, each object's
        # value to its owner, two frontiers, counts
        self.price_updates = price_updates
        if price_updates:
            self.settled = L.full(nc, 0, i32)
            self.tentative = L.full(nc, 0, i32)
            self.own_values = L.full(nc, 0.0, f64)
            self.frontier_a = L.full(nc, 0, i32)
            self.frontier_b = L.full(nc, 0, i32)
            self.update_state = L.full(UPDATE_SLOTS, 0, np.int64)
        self.stats = {"phases": 0, "gs_launches": 0, "reverse_rounds": 0, "reverse_gs_launches": 0, "loop": "host",
                      "solved_shape": [nr, nc]}
        self.rounds = 0
        self.step = 0
        self.labels_step = -1  # step of the last prices snapshot
        # the dual objective of a completed phase is a pass over every pair: reported when its cost
        # so far leaves it at most a fifth of the run (every phase of a large problem; about one
        # phase in three of a small one, where the passes' fixed costs add up)
        self.dual_budget = Budget(free=0.0)

    def read_counters(self) -> np.ndarray:
        """The counters, into a reused host buffer (valid until the next read)."""
        c = self.L.read(self.counters, out=self.counters_host)
        if c[INFEAS]:
            raise InfeasibleError(f"no complete assignment of {self.n_rows} pairs exists with the allowed pairs")
        return c

    def run_counts(self) -> dict:
        """What the kernels counted so far: the tails' bids (forward, reverse), the Jacobi rounds
        (forward, reverse), the price updates and their rounds (one read of each counter array)."""
        c = self.L.read(self.counters, out=self.counters_host)
        counts = {"gs_bids": int(c[BIDS]), "reverse_gs_bids": int(c[RBIDS]), "jacobi_rounds": int(c[JROUNDS]),
                  "reverse_jacobi_rounds": int(c[RJROUNDS]), "price_updates": 0, "price_update_rounds": 0}
        if self.price_updates:
            state = self.L.read(self.update_state)
            counts.update(price_updates=int(state[UPDATES]), price_update_rounds=int(state[ROUNDS]))
        return counts

    def compact_unassigned(self) -> None:
        self.L.launch(COMPACT, 1, self.n_rows, self.a_p, self.U, self.counters, UCOUNT, KEEP_NEGATIVE)

    def compact_flagged(self) -> None:
        self.L.launch(COMPACT, 1, self.n_cols, self.flags, self.V, self.counters, VCOUNT, KEEP_FLAGGED)

    def phase(self, eps: float, first: bool) -> None:
        """One epsilon phase: the forward auction until every person holds an object, then (for a
        rectangular problem) the reverse auction."""
        L, nr, nc, C, scale, cap = self.L, self.n_rows, self.n_cols, self.C, self.scale, self.cap
        eps = float(eps)
        if self.tel.enabled:  # before the new phase frees anyone: the last phase's result is complete
            self._emit("eps-scale", nr if first else 0, eps)
        if not first:
            L.launch(self.K.phase_start, nr, nr, nc, C, scale, self.prices, eps, self.a_p, self.a_o)
        self.compact_unassigned()
        c = self.read_counters()
        self.stats["phases"] += 1
        tail_below = PARALLEL_TAIL_BELOW if L.device and GS_THRESHOLD > 0 else GS_THRESHOLD
        if not self.use_tail:
            tail_below = 0
        launches = 0
        while c[UCOUNT] > 0:
            launches += 1
            if launches == FEASIBILITY_AFTER and self.feasible is not None:
                if not self.feasible():
                    raise InfeasibleError(NO_ASSIGNMENT.format(self.n_rows))
                self.feasible = None  # proven: never again
            count = int(c[UCOUNT])
            updating = self.price_updates and count <= UPDATE_BELOW
            if count <= tail_below and updating:
                # the displaced persons then walk to free objects instead of bidding an epsilon at a
                # time; both kernels leave at once when nobody is left unassigned
                for _ in range(UPDATES_PER_READ):
                    self.update_prices(eps)
                    self.tail(count, eps, UPDATE_EVERY)
            elif count <= tail_below:
                self.tail(count, eps, GS_BUDGET)
            else:  # Jacobi rounds, in one launch on a GPU (sized by the count, which only falls)
                if updating:  # about UPDATE_EVERY bids between two updates, as in the tail
                    self.update_prices(eps)
                    rounds, threshold = max(1, UPDATE_EVERY // count), tail_below
                else:  # down to the tail, or to where the updates start
                    rounds = JACOBI_ROUNDS_PER_LAUNCH
                    threshold = max(tail_below, UPDATE_BELOW if self.price_updates else 0)
                L.launch(self.K.jacobi, count, nr, nc, C, scale, self.prices, eps, cap, self.U, self.U_next,
                         self.counters, self.bid_obj, self.bid_val, self.obj_top, self.obj_win, self.a_p, self.a_o,
                         threshold, rounds)
                self.compact_unassigned()
            c = self.read_counters()
            self.rounds += 1
            if self.tel.enabled:
                self._emit("bid", int(c[UCOUNT]), eps)
        if self.rectangular:
            self.reverse(eps)

    def tail(self, count: int, eps: float, budget: int) -> None:
        """At most ``budget`` bids of the unassigned persons (at most ``count``), each displaced
        person bidding next: one at a time on the cpu, a block per person on a GPU; then U holds
        those still unassigned."""
        L = self.L
        L.launch(self.K.tail, count, self.n_rows, self.n_cols, self.C, self.scale, self.prices, eps, self.cap, self.U,
                 self.counters, self.a_p, self.a_o, self.locks, budget)
        self.compact_unassigned()
        self.stats["gs_launches"] += 1

    def update_prices(self, eps: float) -> None:
        """Every object's price up by its distance to a free object, in whole epsilons
        (``auction_price_update``): epsilon-CS holds after it."""
        self.L.launch(PRICE_UPDATE, self.n_cols, self.n_cols, self.C, self.scale, self.prices, float(eps), self.a_o,
                      self.counters, UPDATE_LEVELS, self.settled, self.tentative, self.own_values, self.frontier_a,
                      self.frontier_b, self.update_state)

    def reverse(self, eps: float) -> None:
        """Bertsekas & Castanon's reverse auction: lambda = the lowest price of an assigned object;
        every unassigned object priced above it bids for persons (freeing their objects, which may
        bid in turn) until none is. Then every pair is eps-CS, assigned objects are priced >= lambda
        and unassigned ones <= lambda: the assignment is within n_rows * eps of optimal."""
        L, nr, nc, C, scale = self.L, self.n_rows, self.n_cols, self.C, self.scale
        L.launch(self.K.reverse_start, 1, nr, nc, C, scale, self.prices, self.a_p, self.a_o, self.profit, self.lam,
                 self.flags)
        self.compact_flagged()
        c = self.read_counters()
        reverse_below = GS_THRESHOLD if self.use_tail else 0
        while c[VCOUNT] > 0:
            count = int(c[VCOUNT])
            if count <= reverse_below:
                L.launch(self.K.reverse_tail, 1, nr, C, scale, eps, self.lam, self.V, self.counters, self.profit,
                         self.prices, self.a_p, self.a_o, GS_BUDGET)
                self.stats["reverse_gs_launches"] += 1
            else:  # Jacobi rounds, in one launch on a GPU (sized by the count, which never grows either)
                L.launch(self.K.reverse_jacobi, count, nr, self.n_cols, C, scale, eps, self.lam, self.V, self.V_next,
                         self.counters, self.profit, self.prices, self.rbid_person, self.rbid_price, self.rbid_offer,
                         self.person_top, self.person_win, self.a_p, self.a_o, self.flags, reverse_below,
                         JACOBI_ROUNDS_PER_LAUNCH)
                self.compact_flagged()
            c = self.read_counters()
            self.stats["reverse_rounds"] += 1
            if self.tel.enabled:
                self._emit("reverse", int(c[VCOUNT]), eps)

    def finish(self) -> float:
        """After the last phase: lambda (0 for a square problem), with the unassigned objects'
        prices raised to it (they are at most lambda; raising them keeps eps-CS), so that prices
        less lambda are the rectangular LP's potentials (0 on unassigned objects, >= 0 elsewhere)."""
        if not self.rectangular:
            return 0.0
        self.L.launch(self.K.settle_free_prices, self.n_cols, self.n_cols, self.lam, self.prices, self.a_o)
        return float(self.L.read(self.lam)[0])

    def duality_gap(self) -> tuple[float, float, float, float]:
        """After a completed phase, in cost units: (the assignment's cost, the objective of the
        feasible dual the prices give, the sum of |assigned costs|), and in scaled units the largest
        |price| or |person value| (how small an epsilon can still move a price)."""
        a_p = self.L.read(self.a_p)
        prices = self.L.read(self.prices)
        values = self.person_values()
        costs = self.view.pair_costs(np.arange(self.n_rows), a_p)
        top = max(float(np.abs(prices).max()), float(np.abs(values).max()))
        return float(costs.sum()), self.dual_objective(a_p, prices, values), float(np.abs(costs).sum()), top

    def dual_objective(self, a_p, prices, values) -> float:
        """The objective, in cost units, of the feasible dual that the prices of a completed phase
        give: u_i = -(pi_i + lam), v_j = -max(p_j - lam, 0) (scaled back) is feasible for any lam,
        pi_i = max_j (b_ij - p_j) (``values``); lam = the lowest assigned price."""
        lam = float(prices[a_p].min())
        bound = values.sum() + self.n_rows * lam + np.maximum(prices - lam, 0.0).sum()
        return float(-bound / self.scale)

    def person_values(self) -> np.ndarray:
        values = self.L.full(self.n_rows, 0.0, np.float64)
        self.L.launch(self.K.person_values, self.n_rows, self.n_rows, self.n_cols, self.C, self.scale, self.prices,
                      values)
        return self.L.read(values)

    def _emit(self, phase: str, unassigned: int, eps: float) -> None:
        tel, view = self.tel, self.view
        a_p = self.L.read(self.a_p)
        rows = np.flatnonzero(a_p >= 0)
        primal = float(view.pair_costs(rows, a_p[rows]).sum()) if rows.size else 0.0
        extra = {"unassigned": unassigned, "epsilon": eps / self.scale, "assigned": int(rows.size),
                 "primal_cost": primal}
        if phase == "reverse":
            extra["unassigned"] = 0  # every person holds an object; ``active`` counts the overpriced objects
            extra["overpriced_objects"] = unassigned
        if phase == "eps-scale" and unassigned == 0 and self.dual_budget.due():  # a completed phase
            self.dual_budget.start()
            extra["dual_objective"] = self.dual_objective(a_p, self.L.read(self.prices), self.person_values())
            self.dual_budget.stop()
        tel.iteration(self.step, phase, active=unassigned, value=primal, **extra)
        if tel.snapshot_due("labels"):
            self._prices_snapshot()
        self.step += 1

    def _prices_snapshot(self) -> None:
        self.labels_step = self.step
        self.tel.labels(self.step, objects=self.L.read(self.prices) / self.scale)

    def final_snapshot(self) -> None:
        """The final prices, unless the last report's snapshot already holds them."""
        if self.step and self.labels_step != self.step - 1 and self.tel.snapshot_due("labels", final=True):
            self.step -= 1  # at the last reported step: nothing moved since
            self._prices_snapshot()
            self.step += 1
