"""The GPU auction's host loop (Vasconcelos & Rosenhahn 2009): ``AuctionDevice`` holds one solve's
arrays on the target and runs the epsilon phases by launching the steps of ``auction_kernels``
through a launcher from ``solvers.targets.launcher_for``. Target-independent: it never asks which
backend it runs on. Imported only when a run starts (it imports the kernels)."""
from __future__ import annotations

import numpy as np

from ..errors import InfeasibleError
from . import auction_kernels as K
from .auction_kernels import BIDS, INFEAS, N_COUNTERS, NO_BIDDER, UCOUNT
from .hungarian_kernels import COMPACT, KEEP_NEGATIVE

GS_THRESHOLD = 64   # at or below this many unassigned persons the single-block Gauss-Seidel tail bids
GS_BUDGET = 8192    # bids per tail launch before the host looks again (telemetry, cancellation)
ROUNDS_PER_READ = 4  # Jacobi rounds launched between two counter readbacks


class AuctionDevice:
    def __init__(self, launcher, C, view, scale: float, cap: float, tel):
        self.L = L = launcher
        self.C = C
        self.view = view
        self.n = n = view.n
        self.n_real = view.n_real
        self.scale = float(scale)
        self.cap = float(cap)
        self.tel = tel
        i32 = np.int32
        self.prices = L.full(n, 0.0, np.float64)
        self.a_p = L.full(n, -1, i32)
        self.a_o = L.full(n, -1, i32)
        self.bid_obj = L.full(n, -1, i32)
        self.bid_val = L.full(n, 0.0, np.float64)
        self.obj_top = L.full(n, -np.inf, np.float64)
        self.obj_win = L.full(n, NO_BIDDER, i32)
        self.U = L.full(n, 0, i32)
        self.counters = L.full(N_COUNTERS, 0, np.int64)
        self.counters_host = L.host_buffer(N_COUNTERS, np.int64)
        self.stats = {"phases": 0, "jacobi_launch_rounds": 0, "gs_launches": 0, "loop": "host"}
        self.rounds = 0
        self.step = 0
        self.labels_step = -1  # step of the last prices snapshot

    def read_counters(self) -> np.ndarray:
        """The counters, into a reused host buffer (valid until the next read)."""
        c = self.L.read(self.counters, out=self.counters_host)
        if c[INFEAS]:
            raise InfeasibleError(f"no complete assignment of {self.n_real} pairs exists with the allowed pairs")
        return c

    def gs_bids(self) -> int:
        """Bids made by the Gauss-Seidel tail so far."""
        return int(self.L.read(self.counters, out=self.counters_host)[BIDS])

    def compact_unassigned(self) -> None:
        self.L.launch(COMPACT, 1, self.n, self.a_p, self.U, self.counters, UCOUNT, KEEP_NEGATIVE)

    def phase(self, eps: float, first: bool) -> None:
        L, n, nr, C, scale, cap = self.L, self.n, self.n_real, self.C, self.scale, self.cap
        eps = float(eps)
        if self.tel.enabled:  # before the new phase frees anyone: the last phase's result is complete
            self._emit("eps-scale", n if first else 0, eps)
        if not first:
            L.launch(K.PHASE_START, n, n, nr, C, scale, self.prices, eps, self.a_p, self.a_o)
        self.compact_unassigned()
        c = self.read_counters()
        self.stats["phases"] += 1
        while c[UCOUNT] > 0:
            count = int(c[UCOUNT])
            if count <= GS_THRESHOLD:
                L.launch(K.GS_TAIL, 1, n, nr, C, scale, self.prices, eps, cap, self.U, self.counters, self.a_p,
                         self.a_o, GS_BUDGET)
                self.stats["gs_launches"] += 1
            else:
                # the kernels read the live count on the device, and it never grows within a phase, so
                # the last count read sizes the grids of several rounds (idle blocks leave at once)
                for _ in range(ROUNDS_PER_READ):
                    L.launch(K.BID, count, n, nr, C, scale, self.prices, eps, cap, self.U, self.counters,
                             self.bid_obj, self.bid_val, self.obj_top)
                    L.launch(K.RESOLVE, count, self.U, self.counters, self.bid_obj, self.bid_val, self.obj_top,
                             self.obj_win)
                    L.launch(K.AWARD, count, self.U, self.counters, self.bid_obj, self.bid_val, self.obj_top,
                             self.obj_win, self.prices, self.a_p, self.a_o)
                    self.compact_unassigned()
                self.stats["jacobi_launch_rounds"] += ROUNDS_PER_READ
            c = self.read_counters()
            self.rounds += 1
            if self.tel.enabled:
                self._emit("bid", int(c[UCOUNT]), eps)

    def person_values(self) -> np.ndarray:
        values = self.L.full(self.n, 0.0, np.float64)
        self.L.launch(K.PERSON_VALUES, self.n, self.n, self.n_real, self.C, self.scale, self.prices, values)
        return self.L.read(values)

    def _emit(self, phase: str, unassigned: int, eps: float) -> None:
        tel, view = self.tel, self.view
        a_p = self.L.read(self.a_p)
        rows = np.flatnonzero(a_p[:self.n_real] >= 0)
        primal = float(view.costs[rows, a_p[rows]].sum()) if rows.size else 0.0
        extra = {"unassigned": unassigned, "epsilon": eps / self.scale, "assigned": self.n - unassigned,
                 "primal_cost": primal}
        if phase == "eps-scale" and unassigned == 0:
            # a completed phase: every person holds an object, so its duals bound the optimum
            prices = self.L.read(self.prices)
            extra["dual_objective"] = float(-(self.person_values().sum() + prices.sum()) / self.scale)
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
