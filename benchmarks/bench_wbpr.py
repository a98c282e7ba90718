"""WBPR benchmark shaped like Tables 1-2 and Figure 3 of Hsieh et al. 2024: wbpr (TC/VC x RCSR/BCSR)
against scipy's maximum_flow (dinic) on max-flow networks, and against gpr and scipy's Hopcroft-Karp
on power-law bipartite matchings, with the per-warp workload spread of TC and VC.

    python benchmarks/bench_wbpr.py                               # full suite on the GPU (< 6 min on an H100)
    python benchmarks/bench_wbpr.py --sizes small --backend cpu   # smoke run on a CPU-only machine (< 60 s)
    python benchmarks/bench_wbpr.py --sizes large --budget 1800   # the paper's sizes (scipy takes minutes)

Flow networks: DIMACS Washington random level graphs and Genrmf (solvers.generate), and SNAP-like
directed graphs (uniform random and Chung-Lu power-law, unit capacities) with 20 sources and 20
sinks joined to a super source / super sink as in the paper (sinks drawn from the quarter of
vertices farthest from the sources). Per instance and solver: one untimed warm-up run (JIT
compilation), then the median of ``--repeats`` timed runs; wbpr times include building the residual
layout and the upload. The last answer of each wbpr configuration is certified (solvers.certify) and
compared with scipy's value. Workload spread: one extra run per mode on RCSR (the paper's Figure 3
setting) records a workload snapshot of every push-relabel launch; per launch, max/mean and
IQR/mean of the per-warp work (measured clock64 cycles on cuda, else the Eq. 1 model), averaged over
launches. A time budget (``--budget``) skips what no longer fits and says so. Writes
benchmarks/results/wbpr-<date>-<device>.md and .json (atomically). Needs numpy, scipy, numba and
numba-cuda only.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching, maximum_flow, shortest_path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402
from solvers.certify import certify  # noqa: E402
from solvers.io_util import atomic_write_text  # noqa: E402
from solvers.problems import BipartiteGraph, FlowNetwork  # noqa: E402
from solvers.telemetry import NULL, Recorder  # noqa: E402

COMBOS = [(mode, csr) for mode in ("tc", "vc") for csr in ("rcsr", "bcsr")]
PAIRS = 20  # source / sink pairs of the SNAP-like networks (the paper's setting)

FLOWS = {
    # every scipy dinic run here takes seconds at most, so the whole suite fits 6 minutes on an H100 host
    "full": [
        ("washington_64x64", "washington-rlg", {"rows": 64, "cols": 64}),
        ("washington_128x128", "washington-rlg", {"rows": 128, "cols": 128}),
        ("washington_256x256", "washington-rlg", {"rows": 256, "cols": 256}),
        ("genrmf_16", "genrmf", {"a": 16, "b": 16}),
        ("genrmf_24", "genrmf", {"a": 24, "b": 24}),
        ("genrmf_32", "genrmf", {"a": 32, "b": 32}),
        ("snap_random_100k", "snap-random", {"n": 100_000, "m": 500_000}),
        ("snap_random_300k", "snap-random", {"n": 300_000, "m": 1_500_000}),
        ("snap_powerlaw_100k", "snap-powerlaw", {"n": 100_000, "m": 1_000_000}),
        ("snap_powerlaw_300k", "snap-powerlaw", {"n": 300_000, "m": 3_000_000}),
    ],
    # the paper's sizes (Table 1: S0 is Washington 512x512; Genrmf 64^3 is an eighth of S1): scipy dinic
    # alone needs minutes per run on these, so this suite does not fit the 6-minute budget
    "large": [
        ("washington_512x512", "washington-rlg", {"rows": 512, "cols": 512}),
        ("genrmf_64", "genrmf", {"a": 64, "b": 64}),
        ("snap_random_1M", "snap-random", {"n": 1_000_000, "m": 5_000_000}),
        ("snap_powerlaw_1M", "snap-powerlaw", {"n": 1_000_000, "m": 5_000_000}),
    ],
    "small": [
        ("washington_16x16", "washington-rlg", {"rows": 16, "cols": 16}),
        ("washington_48x48", "washington-rlg", {"rows": 48, "cols": 48}),
        ("genrmf_6", "genrmf", {"a": 6, "b": 6}),
        ("genrmf_12", "genrmf", {"a": 12, "b": 12}),
        ("snap_random_5k", "snap-random", {"n": 5000, "m": 25_000}),
        ("snap_powerlaw_5k", "snap-powerlaw", {"n": 5000, "m": 50_000}),
    ],
}
# |L| x |R|, |E| shaped like the paper's Table 2 (KONECT user-item graphs: |R| ~ |L|/3, |E| ~ 4|L|)
MATCHINGS = {
    "full": [("powerlaw_L10k", {"rows": 10_000, "cols": 3_300, "edges": 40_000}),
             ("powerlaw_L100k", {"rows": 100_000, "cols": 33_000, "edges": 400_000}),
             ("powerlaw_L500k", {"rows": 500_000, "cols": 100_000, "edges": 1_300_000})],
    "large": [("powerlaw_L1M", {"rows": 1_000_000, "cols": 300_000, "edges": 4_000_000})],
    "small": [("powerlaw_L10k", {"rows": 10_000, "cols": 3_300, "edges": 40_000})],
}


# ---- instances --------------------------------------------------------------------------------

def _chung_lu(rng, n: int, m: int, exponent: float = 2.1) -> tuple[np.ndarray, np.ndarray]:
    weights = rng.permutation(np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (exponent - 1.0)))
    cdf = np.cumsum(weights)
    draw = lambda: np.minimum(np.searchsorted(cdf, rng.random(m) * cdf[-1], side="right"), n - 1)  # noqa: E731
    return draw(), draw()


def snap_like(kind: str, n: int, m: int, seed: int = 1) -> FlowNetwork:
    """Unit-capacity directed graph plus a super source feeding 20 sources and a super sink fed by 20 sinks."""
    rng = np.random.default_rng(seed)
    if kind == "snap-random":
        tail, head = rng.integers(0, n, m), rng.integers(0, n, m)
    else:
        tail, head = _chung_lu(rng, n, m)
    keep = tail != head
    tail, head = tail[keep], head[keep]
    out_degree = np.bincount(tail, minlength=n)
    sources = rng.choice(np.flatnonzero(out_degree > 0), PAIRS, replace=False)
    super_source, super_sink = n, n + 1
    adjacency = csr_matrix((np.ones(tail.size + PAIRS), (np.concatenate([tail, np.full(PAIRS, super_source)]),
                                                       np.concatenate([head, sources]))), shape=(n + 1, n + 1))
    dist = shortest_path(adjacency, method="D", unweighted=True, indices=super_source)[:n]
    reached = np.flatnonzero(np.isfinite(dist) & (dist > 1))
    far = reached[dist[reached] >= np.quantile(dist[reached], 0.75)]
    sinks = rng.choice(np.setdiff1d(far, sources), PAIRS, replace=False)
    big = tail.size  # no cut through the super arcs
    tail = np.concatenate([tail, np.full(PAIRS, super_source), sinks])
    head = np.concatenate([head, sources, np.full(PAIRS, super_sink)])
    cap = np.concatenate([np.ones(keep.sum(), dtype=np.int64), np.full(2 * PAIRS, big, dtype=np.int64)])
    return FlowNetwork.from_edges(n + 2, tail, head, cap, super_source, super_sink, f"<{kind}>")


def make_network(kind: str, params: dict, seed: int = 1) -> FlowNetwork:
    if kind.startswith("snap-"):
        return snap_like(kind, seed=seed, **params)
    return solvers.generate(kind, seed=seed, **params)


def make_bipartite(params: dict, seed: int = 1) -> BipartiteGraph:
    try:
        return solvers.generate("powerlaw-bipartite", seed=seed, **params)
    except (ImportError, KeyError):  # generator missing: Chung-Lu pairs, de-duplicated by BipartiteGraph
        rng = np.random.default_rng(seed)
        rows, _ = _chung_lu(rng, params["rows"], params["edges"])
        cols, _ = _chung_lu(rng, params["cols"], params["edges"])
        return BipartiteGraph.from_edges(rows, cols, params["rows"], params["cols"])


# ---- measuring --------------------------------------------------------------------------------

class Budget:
    def __init__(self, seconds: float | None):
        self.deadline = math.inf if seconds is None else time.perf_counter() + seconds

    def left(self) -> float:
        return self.deadline - time.perf_counter()


def timed(fn, repeats: int, budget: Budget):
    """(median seconds of the timed runs, last answer, runs): one untimed warm-up first; fewer timed runs
    (at least one, the warm-up reused if need be) when the budget runs short."""
    start = time.perf_counter()
    out = fn()
    warm = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        if times and budget.left() < 2 * warm:
            break
        if not times and budget.left() < warm:
            return warm, out, 0
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out, len(times)


def spread(snapshots) -> dict:
    """Mean over launches of max/mean and IQR/mean of the per-warp work (measured cycles where present)."""
    out = {}
    for key in ("modelled", "cycles"):
        ratios_max, ratios_iqr = [], []
        for snap in snapshots:
            if key not in snap.data:
                continue
            work = np.asarray(snap.data[key], dtype=np.float64)
            mean = work.mean()
            if mean <= 0:
                continue
            q1, q3 = np.percentile(work, [25, 75])
            ratios_max.append(work.max() / mean)
            ratios_iqr.append((q3 - q1) / mean)
        if ratios_max:
            out[key] = {"max_over_mean": float(np.mean(ratios_max)), "iqr_over_mean": float(np.mean(ratios_iqr)),
                        "launches": len(ratios_max)}
    return out


def workload_spread(problem, backend: str, budget: Budget, log) -> dict:
    result = {}
    for mode in ("tc", "vc"):
        if budget.left() < 5:
            result[mode] = {"skipped": "time budget"}
            continue
        recorder = Recorder(snapshot_interval=0.0)
        solvers.solve(problem, "wbpr", backend=backend, observer=recorder, mode=mode, csr="rcsr")
        result[mode] = spread([s for s in recorder.snapshots if s.kind == "workload"])
        shown = result[mode].get("cycles") or result[mode].get("modelled") or {}
        log(f"    spread {mode}: max/mean {shown.get('max_over_mean', math.nan):.2f}  "
            f"IQR/mean {shown.get('iqr_over_mean', math.nan):.2f}")
    return result


def bench_wbpr(problem, backend, repeats, budget, reference_value, log) -> dict:
    from solvers.flow.wbpr import run as wbpr_run
    runs = {}
    for mode, csr in sorted(COMBOS, key=lambda combo: combo[0] != "vc"):  # vc first: the budget cuts tc, not vc
        name = f"{mode}+{csr}"
        if budget.left() < 1:
            runs[name] = {"skipped": "time budget"}
            continue
        seconds, sol, n = timed(lambda m=mode, c=csr: wbpr_run(problem, backend, NULL, mode=m, csr=c),
                                repeats, budget)
        cert = certify(problem, sol)
        entry = {"seconds": seconds, "timed_runs": n, "value": float(sol.value), "certified": bool(cert.certified),
                 "value_ok": float(sol.value) == float(reference_value), "launches": int(sol.stats["launches"]),
                 "global_relabels": int(sol.stats["global_relabels"]), "pushes": int(sol.stats["pushes"]),
                 "relabels": int(sol.stats["relabels"])}
        runs[name] = entry
        ok = "certified" if entry["certified"] and entry["value_ok"] else "WRONG"
        log(f"    wbpr {name:10s} {seconds:8.3f} s  launches {entry['launches']:5d}  {ok}")
    return runs


def bench_flow(name, net, backend, repeats, budget, log) -> dict:
    row = {"instance": name, "vertices": net.n_vertices, "edges": net.n_edges}
    capacity = net.to_sparse().astype(np.int32).tocsr()
    seconds, res, n = timed(lambda: maximum_flow(capacity, net.source_vertex, net.sink_vertex, method="dinic"),
                            repeats, budget)
    row.update(value=int(res.flow_value), dinic_seconds=seconds, dinic_runs=n)
    log(f"    scipy dinic     {seconds:8.3f} s  value {row['value']}")
    row["wbpr"] = bench_wbpr(net, backend, repeats, budget, row["value"], log)
    row["spread"] = workload_spread(net, backend, budget, log)
    return row


def bench_matching(name, graph, backend, repeats, budget, log) -> dict:
    row = {"instance": name, "rows": graph.n_rows, "cols": graph.n_cols, "edges": graph.n_edges}
    csr = graph.to_sparse().tocsr()
    seconds, match, _ = timed(lambda: maximum_bipartite_matching(csr, perm_type="column"), repeats, budget)
    row.update(value=int(np.count_nonzero(match >= 0)), hk_seconds=seconds)
    log(f"    scipy HK        {seconds:8.3f} s  |M| {row['value']}")
    if "gpr" in solvers.algorithms() and budget.left() > 1:
        from solvers.matching.gpr import run as gpr_run
        seconds, sol, _ = timed(lambda: gpr_run(graph, backend, NULL), repeats, budget)
        row["gpr"] = {"seconds": seconds, "value": float(sol.value), "certified": bool(certify(graph, sol).certified)}
        log(f"    gpr             {seconds:8.3f} s")
    row["wbpr"] = bench_wbpr(graph, backend, repeats, budget, row["value"], log)
    row["spread"] = workload_spread(graph, backend, budget, log)
    return row


# ---- report -----------------------------------------------------------------------------------

def geomean(values) -> float:
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def _best(runs: dict):
    done = {k: v for k, v in runs.items() if "seconds" in v}
    return min(done.items(), key=lambda kv: kv[1]["seconds"]) if done else (None, None)


def _spread_of(row, mode):
    s = row["spread"].get(mode, {})
    return (s.get("cycles") or s.get("modelled") or {}).get("max_over_mean")


def summarise(flows, matchings, skipped_instances=()) -> dict:
    speedups, measured = [], []
    for row in flows:
        _, best = _best(row["wbpr"])
        if best:
            speedups.append(row["dinic_seconds"] / best["seconds"])
            measured.append(row)
    per_combo = {f"{m}+{c}": geomean([r["wbpr"][f"{m}+{c}"]["seconds"] for r in flows + matchings
                                      if "seconds" in r["wbpr"].get(f"{m}+{c}", {})]) for m, c in COMBOS}
    skewed = [r for r in flows if "powerlaw" in r["instance"]] + matchings
    spread_pairs = [(r["instance"], _spread_of(r, "tc"), _spread_of(r, "vc")) for r in skewed]
    spread_pairs = [p for p in spread_pairs if p[1] is not None and p[2] is not None]
    gpr_ratio = geomean([r["gpr"]["seconds"] / _best(r["wbpr"])[1]["seconds"] for r in matchings
                         if "gpr" in r and _best(r["wbpr"])[1]])
    every = [e for r in flows + matchings for e in r["wbpr"].values() if "seconds" in e]
    geo = geomean(speedups)
    return {"geomean_speedup_best_wbpr_over_dinic": geo, "goal_3x_over_dinic_met": bool(geo >= 3.0),
            "flow_instances_slower_than_dinic": [r["instance"] for r, s in zip(measured, speedups) if s < 1],
            "geomean_seconds_per_combination": per_combo,
            "workload_spread_max_over_mean_tc_vs_vc_on_skewed": spread_pairs,
            "vc_reduces_spread_on_all_skewed": bool(spread_pairs) and all(vc < tc for _, tc, vc in spread_pairs),
            "geomean_gpr_seconds_over_best_wbpr_on_matchings": gpr_ratio,
            "all_certified_and_equal_to_scipy": all(e["certified"] and e["value_ok"] for e in every),
            "skipped_for_time": list(skipped_instances) + [
                f"{r['instance']}:{k}" for r in flows + matchings for k, v in r["wbpr"].items() if "skipped" in v]}


def _cell(entry) -> str:
    if "seconds" not in entry:
        return "skipped"
    mark = "" if entry["certified"] and entry["value_ok"] else " WRONG"
    return f"{entry['seconds']:.3f} ({entry['launches']}){mark}"


def _spread_cell(row, mode) -> str:
    s = row["spread"].get(mode, {})
    parts = []
    for key, label in (("modelled", "model"), ("cycles", "clock")):
        if key in s:
            parts.append(f"{label} {s[key]['max_over_mean']:.2f} / {s[key]['iqr_over_mean']:.2f}")
    return ", ".join(parts) or "-"


def markdown(meta, flows, matchings, summary) -> str:
    combos = [f"{m}+{c}" for m, c in COMBOS]
    lines = [f"# WBPR benchmark, {meta['date']}, {meta['device']} (backend {meta['backend']})", "",
             f"Median of up to {meta['repeats']} warm runs in seconds; wbpr cells: seconds (push-relabel launches);"
             " WRONG = not certified or not scipy's value. Spread: per-warp work max/mean / IQR/mean, averaged"
             " over launches (model = Eq. 1, clock = measured clock64 cycles).", "",
             "## Maximum flow", "",
             "| instance | V | E | max flow | scipy dinic | " + " | ".join(combos)
             + " | best speed-up | spread TC | spread VC |",
             "|" + "---|" * (8 + len(combos))]
    for r in flows:
        name, best = _best(r["wbpr"])
        speed = f"{r['dinic_seconds'] / best['seconds']:.2f}x ({name})" if best else "-"
        lines.append(f"| {r['instance']} | {r['vertices']:,} | {r['edges']:,} | {r['value']:,} | "
                     f"{r['dinic_seconds']:.3f} | " + " | ".join(_cell(r["wbpr"][c]) for c in combos)
                     + f" | {speed} | {_spread_cell(r, 'tc')} | {_spread_cell(r, 'vc')} |")
    lines += ["", "## Bipartite matching (power-law, shaped like the paper's Table 2)", "",
              "| instance | L | R | E | max matching | scipy HK | gpr | " + " | ".join(combos)
              + " | spread TC | spread VC |", "|" + "---|" * (9 + len(combos))]
    for r in matchings:
        gpr = r.get("gpr")
        gpr_cell = "-" if not gpr else f"{gpr['seconds']:.3f}" + ("" if gpr["certified"] else " WRONG")
        lines.append(f"| {r['instance']} | {r['rows']:,} | {r['cols']:,} | {r['edges']:,} | {r['value']:,} | "
                     f"{r['hk_seconds']:.3f} | {gpr_cell} | " + " | ".join(_cell(r["wbpr"][c]) for c in combos)
                     + f" | {_spread_cell(r, 'tc')} | {_spread_cell(r, 'vc')} |")
    s = summary
    pairs = ", ".join(f"{n}: {tc:.2f} -> {vc:.2f}"
                      for n, tc, vc in s["workload_spread_max_over_mean_tc_vs_vc_on_skewed"])
    lines += ["", "## Summary", "",
              f"- geometric-mean speed-up of the best wbpr configuration over scipy dinic (flow suite): "
              f"{s['geomean_speedup_best_wbpr_over_dinic']:.2f}x; goal >= 3x "
              f"{'met' if s['goal_3x_over_dinic_met'] else 'NOT met'}",
              f"- flow instances where the best wbpr is slower than dinic: "
              f"{', '.join(s['flow_instances_slower_than_dinic']) or 'none'}",
              "- geometric-mean seconds per combination: " + ", ".join(
                  f"{k} {v:.3f}" for k, v in s["geomean_seconds_per_combination"].items()),
              f"- workload spread (max/mean) TC -> VC on skewed inputs: {pairs or 'not measured'}; VC lower on all: "
              f"{s['vc_reduces_spread_on_all_skewed']}",
              f"- matchings: gpr seconds / best wbpr seconds (geometric mean): "
              f"{s['geomean_gpr_seconds_over_best_wbpr_on_matchings']:.2f} (> 1: wbpr faster)",
              f"- every wbpr answer certified and equal to scipy: {s['all_certified_and_equal_to_scipy']}",
              f"- skipped for the time budget: {', '.join(s['skipped_for_time']) or 'nothing'}",
              f"- total benchmark time: {meta['seconds']:.0f} s", ""]
    return "\n".join(lines)


def device_name(backend: str) -> str:
    if backend == "cuda":
        from numba import cuda
        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    return f"{platform.processor() or platform.machine()} x{os.cpu_count()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", choices=sorted(FLOWS), default="full")
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=None,
                    help="seconds for the whole run (default: 330 for full, none for small)")
    ap.add_argument("--instances", default="", help="comma-separated subset of instance names")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args(argv)
    if args.repeats < 3:
        ap.error("--repeats must be >= 3 (median of at least three warm runs)")
    if args.backend == "cuda" and not solvers.targets.cuda_available():
        print("no usable GPU here; use --backend cpu", file=sys.stderr)
        return 2
    budget = Budget(args.budget if args.budget is not None else (330.0 if args.sizes == "full" else None))
    device = device_name(args.backend)
    meta = {"date": dt.date.today().isoformat(), "device": device, "backend": args.backend, "repeats": args.repeats,
            "sizes": args.sizes, "python": platform.python_version(), "numpy": np.__version__}
    wanted = {x for x in args.instances.split(",") if x}
    log = lambda s: print(s, flush=True)  # noqa: E731
    started = time.perf_counter()
    flows, matchings, skipped = [], [], []
    for name, kind, params in FLOWS[args.sizes]:
        if wanted and name not in wanted:
            continue
        if budget.left() < 5:
            log(f"{name}: skipped (time budget)")
            skipped.append(name)
            continue
        t0 = time.perf_counter()
        net = make_network(kind, params)
        log(f"{name}: {net.n_vertices:,} vertices, {net.n_edges:,} edges (built in {time.perf_counter() - t0:.1f} s)")
        flows.append(bench_flow(name, net, args.backend, args.repeats, budget, log))
    for name, params in MATCHINGS[args.sizes]:
        if wanted and name not in wanted:
            continue
        if budget.left() < 5:
            log(f"{name}: skipped (time budget)")
            skipped.append(name)
            continue
        graph = make_bipartite(params)
        log(f"{name}: {graph.n_rows:,} x {graph.n_cols:,}, {graph.n_edges:,} edges")
        matchings.append(bench_matching(name, graph, args.backend, args.repeats, budget, log))
    summary = summarise(flows, matchings, skipped)
    meta["seconds"] = time.perf_counter() - started
    text = markdown(meta, flows, matchings, summary)
    print()
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = "".join(ch if ch.isalnum() else "-" for ch in device).strip("-").lower()
    stem = out / f"wbpr-{meta['date']}-{slug}"
    atomic_write_text(stem.with_suffix(".md"), text)
    atomic_write_text(stem.with_suffix(".json"), json.dumps(
        {"meta": meta, "summary": summary, "flows": flows, "matchings": matchings}, indent=1, default=float))
    print(f"wrote {stem}.md and .json")
    return 0 if summary["all_certified_and_equal_to_scipy"] else 1


if __name__ == "__main__":
    sys.exit(main())
