"""The GPU Hungarian's host loop (Date & Nagi 2016): ``HungarianDevice`` holds the solve's arrays on
the target and launches the steps of ``hungarian_kernels`` (and, on a GPU, the cooperative loop of
``hungarian_fused``) through a launcher from ``solvers.targets.launcher_for``. Target-independent:
it never asks which backend it runs on. Imported only when a run starts (it imports the kernels).

Rectangular problems are solved as they are (rows <= columns, every row assigned, no dummy rows):
arrays over rows hold n_rows entries, arrays over columns n_cols (``shape``)."""
from __future__ import annotations

import numpy as np

from ..errors import InfeasibleError
from . import hungarian_kernels as K
from .hungarian_fused import SOLVE_TREE
from .hungarian_kernels import (DUALS, FOUND, FRONT, INFEAS, ITERS, KEEP_FLAGGED, KEEP_ZERO, KEPT, LEVELS, N_COUNTERS,
                                N_SCALARS, NNZ, OVERFLOW, TREE, WALKED)


class HungarianDevice:
    def __init__(self, launcher, C, view, variant: str, tol: float, tel):
        self.L = launcher
        self.C = C
        self.view = view
        self.n_rows = nr = view.n_rows
        self.n_cols = nc = view.n_cols
        if nr > nc:
            raise ValueError(f"the Hungarian's view needs rows <= columns, got {nr} x {nc}")
        self.variant = variant
        self.tol = float(tol)
        self.tel = tel
        L, i32 = launcher, np.int32
        self.u = L.full(nr, 0.0, np.float64)
        self.v = L.full(nc, 0.0, np.float64)
        self.Ar = L.full(nr, -1, i32)
        self.Ac = L.full(nc, -1, i32)
        self.Vr, self.Vc = L.full(nr, 0, i32), L.full(nc, 0, i32)
        self.Pr, self.Pc = L.full(nr, -1, i32), L.full(nc, -1, i32)
        self.Sr, self.Sc = L.full(nr, -1, i32), L.full(nc, -1, i32)
        self.slack = L.full(nc, np.inf, np.float64)
        self.row_next = L.full(nr, 0, i32)
        self.col_rev = L.full(nc, 0, i32)
        self.root_aug = L.full(nr, 0, i32)
        self.path_len = L.full(nr, 0, i32)  # by the root row of each path
        self.F = L.full(nr, 0, i32)
        self.F2 = None
        self.counters = L.full(N_COUNTERS, 0, np.int64)
        self.counters_host = L.scratch(N_COUNTERS, np.int64)
        self.scal = L.full(N_SCALARS, 0.0, np.float64)
        if variant == "classical":
            self.row_cnt = L.full(nr, 0, np.int64)
            self.row_ptr = L.full(nr + 1, 0, np.int64)
            self.z_cap = max(16, 4 * nc)
            self.Z = L.full(self.z_cap, 0, i32)
            self.colmin = L.full(nc, np.inf, np.float64)
            self.T = L.full(nr, 0, i32)
        self.stats = {"variant": variant, "dual_updates": 0, "bfs_levels": 0, "csr_builds": 0,
                      "initial_assignments": 0, "solved_shape": [nr, nc]}
        self.paths_per_iteration: list[int] = []
        self.step = 0

    # --- steps -----------------------------------------------------------------------------
    def build_csr(self) -> None:
        """Matrix compression of the zero-slack edges (counts, prefix sum, scatter)."""
        L, nr, nc = self.L, self.n_rows, self.n_cols
        L.launch(K.CLEAR, nr, nr, self.row_cnt)
        L.launch(K.ZERO_COUNT, (nr, nc), nr, nc, self.C, self.u, self.v, self.row_cnt, self.tol)
        L.launch(K.SCAN_ROWS, 1, nr, self.row_cnt, self.row_ptr, self.counters)
        self._fill_csr()
        self.stats["csr_builds"] += 1

    def _fill_csr(self) -> None:
        nr, nc = self.n_rows, self.n_cols
        self.L.launch(K.ZERO_FILL, (nr, nc), nr, nc, self.C, self.u, self.v, self.row_ptr, self.row_cnt, self.Z,
                      self.z_cap, self.counters, self.tol)

    def grow_csr(self, nnz: int) -> None:
        """The CSR outgrew its buffer: reallocate and scatter again (counts are kept)."""
        self.z_cap = max(int(nnz), 2 * self.z_cap)
        self.Z = self.L.full(self.z_cap, 0, np.int32)
        self.L.launch(K.SCAN_ROWS, 1, self.n_rows, self.row_cnt, self.row_ptr, self.counters)
        self._fill_csr()

    def compact_frontier(self) -> None:
        self.L.launch(K.COMPACT, 1, self.n_rows, self.row_next, self.F, self.counters, FRONT, KEEP_FLAGGED)

    def expand(self, fsize: int) -> None:
        L, nc = self.L, self.n_cols
        if self.variant == "tree":
            L.launch(K.EXPAND_TREE, nc, nc, fsize, self.F, self.C, self.u, self.v, self.Ac, self.Vc, self.Vr,
                     self.Pc, self.Pr, self.slack, self.row_next, self.col_rev, self.counters, self.tol)
        else:
            L.launch(K.EXPAND_CLASSICAL, fsize, fsize, self.F, self.row_ptr, self.Z, self.Ac, self.Vc, self.Vr,
                     self.Pc, self.Pr, self.row_next, self.col_rev, self.counters)

    def dual_update(self) -> None:
        L, nr, nc = self.L, self.n_rows, self.n_cols
        if self.variant == "tree":
            L.launch(K.MIN_UNCOVERED, 1, nc, self.slack, self.Vc, self.scal, self.counters)
            L.launch(K.DUAL_TREE, nc, nr, nc, self.u, self.v, self.Vr, self.Vc, self.slack, self.scal)
            self.expand(0)  # visit the columns the update made tight
        else:
            L.launch(K.COMPACT, 1, nr, self.Vr, self.T, self.counters, TREE, KEEP_ZERO)
            L.launch(K.COL_MIN_TREE_ROWS, nc, nc, self.T, self.C, self.u, self.v, self.Vc, self.colmin,
                     self.counters)
            L.launch(K.MIN_UNCOVERED, 1, nc, self.colmin, self.Vc, self.scal, self.counters)
            L.launch(K.DUAL_CLASSICAL, nc, nr, nc, self.u, self.v, self.Vr, self.Vc, self.row_next, self.scal)
            self.build_csr()
        self.stats["dual_updates"] += 1

    def reverse_and_augment(self) -> None:
        L, nr, nc = self.L, self.n_rows, self.n_cols
        L.launch(K.REVERSE, nc, nc, self.col_rev, self.Pc, self.Pr, self.Sc, self.Sr, self.root_aug)
        L.launch(K.AUGMENT, nr, nr, self.root_aug, self.Sr, self.Sc, self.Ar, self.Ac, self.path_len)

    def read_counters(self) -> np.ndarray:
        """The counters, into a reused host buffer (valid until the next read)."""
        c = self.L.read(self.counters, out=self.counters_host)
        if c[INFEAS]:
            raise InfeasibleError(f"no complete assignment of {self.n_rows} pairs exists with the allowed pairs "
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
        rows = np.flatnonzero(Ar >= 0)
        primal = float(self.view.pair_costs(rows, Ar[rows]).sum()) if rows.size else 0.0
        dual = float(u.sum() + v.sum())
        tel.iteration(self.step, "augment", active=self.n_rows - matched, value=primal, paths=paths,
                      assigned=matched, dual_objective=dual, primal_cost=primal, round=it, **extra)
        if tel.snapshot_due("labels", final=final):
            tel.labels(self.step, rows=u, cols=v)
        if paths and tel.snapshot_due("paths"):
            lengths = self.L.read(self.path_len)
            tel.snapshot(self.step, "paths", {"lengths": lengths[lengths > 0].astype(np.int64)})
        self.L.write(self.path_len, np.zeros(self.n_rows, np.int32))
        self.step += 1

    def _emit_dual(self, it: int, front: int) -> None:
        delta = float(self.L.read(self.scal)[0])
        self.tel.iteration(self.step, "dual-update", active=front, delta=delta, round=it)
        if self.tel.snapshot_due("labels"):
            self.tel.labels(self.step, rows=self.L.read(self.u), cols=self.L.read(self.v))
        self.step += 1

    # --- the loops ---------------------------------------------------------------------------
    def initial_reduction(self) -> None:
        """Row reduction, then, for a square problem only, column reduction; a row (or a square
        problem's column) with no allowed pair proves infeasibility, checked before its infinite
        potential enters any difference (inf - inf). A rectangular problem keeps v = 0: columns may
        stay unassigned, and the rectangular LP wants v_j <= 0 with v_j = 0 on those, which dual
        updates keep (they only lower the potentials of covered, hence assigned, columns)."""
        L, nr, nc = self.L, self.n_rows, self.n_cols
        L.launch(K.ROW_MIN, nr, nr, nc, self.C, self.u, self.counters)
        self.read_counters()
        if nr == nc:
            L.launch(K.COL_MIN, nc, nr, nc, self.C, self.u, self.v, self.counters)
            self.read_counters()

    def device_loop_args(self, log, start: int, per_launch: int) -> tuple:
        """Arguments of the cooperative ``solve_tree`` kernel."""
        if self.F2 is None:  # the second frontier buffer (the loop alternates F and F2), each vertex's
            # root row in the forest the loop keeps between augmentations, and the iteration that
            # augmented from each root (0: none yet)
            L, i32, nr = self.L, np.int32, self.n_rows
            self.F2 = L.full(nr, 0, i32)
            self.Rr, self.Rc, self.done = L.full(nr, 0, i32), L.full(self.n_cols, 0, i32), L.full(nr, 0, i32)
        return (self.n_rows, self.n_cols, self.C, self.u, self.v, self.Ar, self.Ac, self.Vr, self.Vc, self.Pr, self.Pc,
                self.Sr, self.Sc, self.Rr, self.Rc, self.done, self.slack, self.F, self.F2, self.root_aug,
                self.path_len, self.col_rev, self.counters, self.scal, log, int(start), int(per_launch), self.tol)

    def solve_device_loop(self) -> int:
        """Tree variant on the GPU: the loop runs in the cooperative ``solve_tree`` kernel; the host
        reads the counters once per launch (one launch in all, or one per augmentation when a
        listener wants per-iteration telemetry)."""
        L, nr, tel = self.L, self.n_rows, self.tel
        self.initial_reduction()
        log = L.full(nr + 2, 0, np.int64)
        per_launch = 1 if tel.enabled else nr + 1
        iterations, matched_before = 0, 0
        while True:
            L.launch(SOLVE_TREE, self.n_cols, *self.device_loop_args(log, iterations, per_launch))
            c = self.read_counters()
            iterations += int(c[ITERS])
            matched = nr - int(c[FRONT])
            if tel.enabled and (c[ITERS] or c[FRONT] == 0):
                self._emit_augment(iterations, matched, matched - matched_before, final=c[FRONT] == 0,
                                   dual_updates=int(c[DUALS]))
            matched_before = matched
            if c[FRONT] == 0:
                break
        dual_updates, levels = int(c[DUALS]), int(c[LEVELS])
        matched_log = L.read(log)[:iterations + 1]
        self.paths_per_iteration = np.diff(matched_log).astype(int).tolist()
        self.stats.update(dual_updates=dual_updates, bfs_levels=levels, forests_kept=int(c[KEPT]),
                          single_path_walks=int(c[WALKED]),
                          initial_assignments=int(matched_log[1]) if iterations else 0)
        return iterations

    def solve(self) -> int:
        L, nr, nc, tel = self.L, self.n_rows, self.n_cols, self.tel
        self.initial_reduction()
        if self.variant == "classical":
            self.build_csr()
        it, matched_before = 0, 0
        while True:
            # optimality check: free rows are the roots of the next search
            L.launch(K.RESET_SEARCH, nc, nr, nc, self.Ar, self.Vr, self.Vc, self.Pr, self.Pc, self.Sr, self.Sc,
                     self.slack, self.row_next, self.col_rev, self.root_aug, self.counters)
            self.compact_frontier()
            c = self.read_counters()
            matched = nr - int(c[FRONT])
            if it > 0:
                paths = matched - matched_before
                self.paths_per_iteration.append(paths)
                if it == 1:
                    self.stats["initial_assignments"] = matched
            if tel.enabled and (it > 0 or matched == nr):  # round 0 only when the reduction alone is optimal
                self._emit_augment(it, matched, matched - matched_before, final=matched == nr)
            matched_before = matched
            if matched == nr:
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
