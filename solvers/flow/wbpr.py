"""wbpr: workload-balanced GPU push-relabel maximum flow (Hsieh, Lin & Kuo 2024), also for matchings.

The lock-free push-relabel of He & Hong (the paper's Algorithm 1) on an O(V+E) residual layout
(``csr``: RCSR or BCSR, solvers.flow.residual), thread-centric (``mode=tc``, one thread per vertex)
or vertex-centric (``mode=vc``, Algorithm 2: an active-vertex queue and one warp per active vertex;
beyond the paper, a hub with more than wbpr_device.HUB_CHUNK arcs is split into pieces of that many
arcs, one warp each, in the vc kernel and in the device global relabel, see solvers.flow.wbpr_push).

This module declares the algorithm and runs its host loop; it imports neither numba nor scipy (the
steps load when a run starts). The steps: solvers.flow.wbpr_push (push-relabel launches) and
solvers.flow.wbpr_relabel (global relabel), each one file of bodies, cpu loops and cuda kernels;
solvers.flow.wbpr_device.WbprDevice holds a run's arrays and launches them through the launcher
``solvers.targets.launcher_for(backend)`` gives.

Host loop (one code path for every backend):
  preflow: saturate the source's arcs; Excess_total = what left the source.
  global relabel: exact heights by a backward BFS from the sink over residual arcs (on the device).
      A vertex the BFS cannot reach can never pass its excess to the sink: its excess is subtracted
      from Excess_total once and it stays inactive (height |V|). This is what lets the loop end.
  loop while e(s) + e(t) < Excess_total: a push-relabel launch of ``cycles`` cycles, then a global
      relabel. The host reads the three counters only every 1, 2, 4, then 8 launches (each read
      is a device sync); extra launches after the end are harmless (nothing is active).
  return phase (FlowNetwork only, when excess was stranded): the same loop with the source as the
      BFS root sends stranded excess back to the source, so the per-edge flow is a flow.
A BipartiteGraph becomes source -> rows -> columns -> sink with unit capacities; the matching is read
off the saturated row -> column arcs of the first phase (a column passing one unit to the sink
takes the lowest row that sent it one).

KERNEL_CYCLES (``cycles``): the paper's code runs |V| cycles per launch. Here 0 (the default) picks
it per launch from the last global relabel: as many cycles as its BFS had levels (a level-synchronous
BFS costs about one grid-wide step per level, a cycle about two), at least AUTO_CYCLES_MIN and at
most |V|, so the global relabels take about as long as the pushing and heights stay fresh; a
positive value fixes it. vc ends a launch early anyway once no vertex is active.

Telemetry: per launch batch "push-relabel" and "global-relabel" iterations (active vertices,
value = e(t), excess_total, max_level, stranded), "labels" snapshots of the heights and "workload"
snapshots (per-warp modelled work of one launch: Eq. 1's arcs scanned plus pushes/relabels, plus the
activity checks, the max over the warp's lanes; and measured clock64 cycles on cuda when
``measure=auto``: every launch of a watched run is then timed, a few clock reads per warp), throttled, plus the final heights and the last launch's work. Stop is checked
after every launch and global relabel. Nothing is copied for telemetry unless an observer listens.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..exact import int_sum
from ..io_util import atomic_write_text
from ..problems import BipartiteGraph, FlowNetwork
from ..registry import Algorithm, Option
from ..result import Solution
from ..targets.geometry import WARP_SIZE

AUTO_CYCLES_MIN = 16
MAX_BATCH = 8          # launches between two reads of the termination counters
WARP = WARP_SIZE
INT64_MAX = np.iinfo(np.int64).max

OPTIONS = (
    Option("mode", "vc", ("tc", "vc"),
           "tc: thread-centric, one thread per vertex (He & Hong); vc: vertex-centric, an active-vertex "
           "queue and one warp per active vertex (WBPR)"),
    Option("csr", "bcsr", ("rcsr", "bcsr"),
           "residual layout: reversed CSR with flow indices, or bidirectional CSR (binary search for reverse arcs)"),
    Option("cycles", 0, None,
           f"push-relabel cycles per launch between global relabels (KERNEL_CYCLES); 0 = auto: "
           f"the last global relabel's BFS levels, at least {AUTO_CYCLES_MIN}, at most |V|",
           low=0, high=2**31 - 1),
    Option("measure", "auto", ("auto", "off"),
           "cuda: time each warp of every launch with clock64 while an observer listens (workload snapshots)"),
)

ALGORITHMS = [
    Algorithm("wbpr", ("flow", "matching"), (FlowNetwork, BipartiteGraph), ("cpu", "cuda", "cudasim"),
              "solvers.flow.wbpr:run", OPTIONS, label="height",
              summary="Workload-balanced lock-free push-relabel max flow on RCSR/BCSR residual graphs, "
                      "thread- or vertex-centric, global relabel by device BFS; matchings via unit-capacity flow",
              reference="Hsieh et al. 2024", phases=("push-relabel", "global-relabel", "return-excess")),
]


@dataclass
class _Counts:
    launches: int = 0
    global_relabels: int = 0
    workload_launch: int = 0  # the last launch a workload snapshot was taken of (telemetry)


def matching_network(graph: BipartiteGraph) -> FlowNetwork:
    """source -> each row -> its columns -> sink, unit capacities. Rows are 0..R-1, columns R..R+C-1,
    the source R+C and the sink R+C+1; edges: R source edges, the graph's edges (row-major), C sink edges."""
    r, c = graph.n_rows, graph.n_cols
    source, sink = r + c, r + c + 1
    rows, cols = graph.edges()
    tail = np.concatenate([np.full(r, source), rows, np.arange(r, r + c)])
    head = np.concatenate([np.arange(r), cols.astype(np.int64) + r, np.full(c, sink)])
    return FlowNetwork.from_edges(r + c + 2, tail, head, np.ones(tail.size, dtype=np.int64), source, sink,
                                  graph.source)


def preflow(graph, network: FlowNetwork):
    """Saturate every arc out of the source, in place in ``graph.residual`` (a layout built for this
    run: copying its 2m residuals would cost more than the preflow itself): (excess, Excess_total)."""
    out = np.flatnonzero(network.tail == network.source_vertex)
    caps = network.capacity[out]
    if caps.size and int(caps.max()) > INT64_MAX // caps.size and int_sum(caps) > INT64_MAX:
        # run() lowers capacities first (capacity_bound), so this guards direct callers only
        raise InputError("the capacities out of the source sum past 2^63 - 1", network.source)
    graph.residual[graph.forward_slot[out]] = 0
    graph.residual[graph.backward_slot[out]] = caps
    excess = np.zeros(network.n_vertices, dtype=np.int64)
    np.add.at(excess, network.head[out].astype(np.int64), caps)
    return excess, int(caps.sum())


def warp_workload(lane_work: np.ndarray) -> np.ndarray:
    """Eq. 1 per warp: the warp is done when its busiest lane is (max over each 32 lanes)."""
    lanes = np.asarray(lane_work, dtype=np.int64)
    pad = (-lanes.size) % WARP
    if pad:
        lanes = np.concatenate([lanes, np.zeros(pad, dtype=np.int64)])
    return lanes.reshape(-1, WARP).max(axis=1)


def _label_sides(heights: np.ndarray, n_rows: int | None) -> dict:
    if n_rows is None:
        return {"vertices": heights}
    n_cols = heights.size - 2 - n_rows
    return {"rows": heights[:n_rows], "cols": heights[n_rows:n_rows + n_cols]}


def _discharge(engine, tel, root: int, blocked: int, cycles: int, counts: _Counts, meta: dict,
               measure: bool, n_rows: int | None, phase: str):
    """Global relabel, then push-relabel launches + global relabels until e(s) + e(t) = Excess_total;
    returns the last status (wbpr_device.Status)."""
    n = engine.graph.n
    limit = counts.launches + 64 * n + 10_000  # a bound no correct run comes near; a bug must not hang
    engine.global_relabel(root, blocked)
    counts.global_relabels += 1
    batch, launched = 1, 0
    while True:
        status = engine.status()
        done = status.source_excess + status.sink_excess >= status.total
        if tel.enabled:
            scalars = dict(value=float(status.sink_excess), excess_total=float(status.total),
                           max_level=float(status.levels), stranded=float(status.stranded))
            if launched:
                tel.iteration(counts.launches, phase, active=status.active, **scalars)
            tel.iteration(counts.launches, "global-relabel", active=status.active, **scalars)
            # the end state: this phase is done and no return phase follows (see run)
            last = done and (phase == "return-excess" or n_rows is not None or not status.stranded)
            if tel.snapshot_due("labels", final=last):
                tel.labels(counts.launches, cap=n, **_label_sides(engine.heights(), n_rows))
        if done:
            return status
        if counts.launches >= limit:
            raise RuntimeError(f"wbpr made no progress in {counts.launches} launches (excess left: "
                               f"{status.total - status.source_excess - status.sink_excess})")
        launch_cycles = cycles or int(min(max(status.levels, AUTO_CYCLES_MIN), max(n, 1)))
        for _ in range(batch):
            engine.push_relabel(launch_cycles, measured=measure)  # every launch: the last one is a snapshot too
            counts.launches += 1
            if tel.snapshot_due("workload"):  # asked after the launch: its cost is the readback, not the launch
                lane_work, warp_cycles = engine.workload(measured=measure)
                tel.workload(counts.launches, modelled=warp_workload(lane_work), cycles=warp_cycles,
                             kernel="push-relabel", launch=counts.launches, **meta)
                counts.workload_launch = counts.launches
            tel.check_cancel()
            engine.global_relabel(root, blocked)
            counts.global_relabels += 1
            tel.check_cancel()
        launched = batch
        batch = min(2 * batch, MAX_BATCH)


def run(problem, backend: str, tel, mode: str = "vc", csr: str = "bcsr", cycles: int = 0,
        measure: str = "auto") -> Solution:
    if cycles < 0:
        raise InputError(f"option cycles={cycles} must be >= 0")
    from ..targets import launcher_for
    from .capacity_bound import clamp_capacities, refuse_unless_maximum
    from .residual import build_residual
    from .wbpr_device import WbprDevice

    launcher = launcher_for(backend)
    n_rows = problem.n_rows if isinstance(problem, BipartiteGraph) else None
    clamped = clamp_capacities(problem) if n_rows is None else None  # no int64 sum may wrap
    network = matching_network(problem) if n_rows is not None else clamped.network
    source, sink = network.source_vertex, network.sink_vertex
    graph = build_residual(network, csr)
    excess, total = preflow(graph, network)
    may_measure = measure == "auto" and tel.enabled and tel.wants_snapshots
    engine = WbprDevice(launcher, graph, mode == "vc", source, sink, excess, total, may_measure,
                        tel.check_cancel if tel.enabled else None)
    measured = engine.measure  # clock64 on a real GPU only
    meta = {"mode": mode, "csr": csr}
    counts = _Counts()
    status = _discharge(engine, tel, sink, source, cycles, counts, meta, measured, n_rows, "push-relabel")
    value = status.sink_excess
    stranded = status.stranded
    first_phase_launches = counts.launches
    if n_rows is None and stranded:
        engine.reopen_stranded(total)
        _discharge(engine, tel, source, sink, cycles, counts, meta, measured, None, "return-excess")
    if counts.launches > counts.workload_launch and tel.snapshot_due("workload", final=True):
        # the last launch's work (the engine keeps it, with its clock64 cycles when launches are measured)
        lane_work, warp_cycles = engine.workload(measured=measured)
        tel.workload(counts.launches, modelled=warp_workload(lane_work), cycles=warp_cycles, kernel="push-relabel",
                     launch=counts.launches, **meta)
    pushes, relabels = engine.counters()
    stats = {"launches": counts.launches, "global_relabels": counts.global_relabels, "mode": mode, "csr": csr,
             "cycles": cycles or "auto", "pushes": pushes, "relabels": relabels, "stranded": stranded,
             "return_launches": counts.launches - first_phase_launches, "threads": engine.threads}
    flow = graph.flow(engine.residual())
    if n_rows is None:
        refuse_unless_maximum(clamped, problem, flow)
        if clamped.limit is not None:
            stats["capacity_limit"] = clamped.limit
        return Solution(value, counts.launches, flow=flow, stats=stats)  # an exact int, even past 2^53
    row_match, col_match = _matching_from_flow(problem, flow)
    return Solution(int(np.count_nonzero(row_match >= 0)), counts.launches, row_match=row_match,
                    col_match=col_match, stats=stats)


def _matching_from_flow(graph: BipartiteGraph, flow: np.ndarray):
    """Pairs from saturated row -> column arcs whose column passes its unit on to the sink."""
    r, c, e = graph.n_rows, graph.n_cols, graph.n_edges
    rows, cols = graph.edges()
    to_sink = flow[r + e:] > 0
    carrying = np.flatnonzero((flow[r:r + e] > 0) & to_sink[cols])
    _, first = np.unique(cols[carrying], return_index=True)  # row-major edges: the lowest row per column
    chosen = carrying[first]
    row_match = np.full(r, -1, dtype=np.int64)
    col_match = np.full(c, -1, dtype=np.int64)
    row_match[rows[chosen]] = cols[chosen]
    col_match[cols[chosen]] = rows[chosen]
    return row_match, col_match


def workload_csv(record_or_snapshots, path) -> int:
    """Write the "workload" snapshots of a RunRecord (or a list of Snapshots) as CSV, atomically:
    one row per launch and warp: launch, warp, modelled, cycles (empty without a clock), mode, csr.
    Returns the number of rows."""
    snapshots = getattr(record_or_snapshots, "snapshots", record_or_snapshots)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["launch", "warp", "modelled", "cycles", "mode", "csr"])
    rows = 0
    for snap in snapshots:
        if snap.kind != "workload":
            continue
        modelled = np.asarray(snap.data["modelled"])
        cycles = snap.data.get("cycles")
        cycles = None if cycles is None else np.asarray(cycles)
        launch = snap.meta.get("launch", snap.iteration)
        for warp, work in enumerate(modelled):
            measured = "" if cycles is None or warp >= cycles.size else int(cycles[warp])
            writer.writerow([int(launch), warp, f"{float(work):g}", measured, snap.meta.get("mode", ""),
                             snap.meta.get("csr", "")])
            rows += 1
    atomic_write_text(path, buffer.getvalue())
    return rows
