"""G-PR benchmark shaped like Table I of Deveci et al. 2013: gpr (every variant x global-relabel
strategy, and several ``sync_every`` settings) against scipy's Hopcroft-Karp and pr-seq.

    python benchmarks/bench_gpr.py                      # full suite on the GPU (about 15 minutes on an H100)
    python benchmarks/bench_gpr.py --graphs delaunay_n22,delaunay_n23 --tag part2   # a part of it
    python benchmarks/bench_gpr.py --merge benchmarks/results/gpr-DATE-DEVICE-part*.json   # one report of the parts
    python benchmarks/bench_gpr.py --sizes small --backend cpu   # smoke run on a CPU-only machine

Per graph and configuration: one untimed warm-up run (JIT compilation), then the median of
``--repeats`` timed runs; the last timed answer is certified by solvers.certify (König cover).
gpr and pr-seq start from the cheap matching, as in the paper, and their times include it (and,
for gpr on cuda, the upload of the graph); scipy's maximum_bipartite_matching has no initial
matching option and is timed from its CSR input. Writes benchmarks/results/gpr-<date>-<device>.md
and .json (atomically). Needs only numpy, scipy, numba and numba-cuda.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from scipy.sparse.csgraph import maximum_bipartite_matching

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402
from solvers.io_util import atomic_write_text  # noqa: E402
from solvers.problems import BipartiteGraph  # noqa: E402
from solvers.telemetry import NULL  # noqa: E402

# (name, generator kind, parameters, configurations), per size: "all" runs CONFIGS, "core" runs
# CORE_CONFIGS (the largest graphs: every extra configuration there costs minutes)
SUITES = {
    "full": [
        ("delaunay_n20", "delaunay", {"n": 2**20}, "all"),
        ("delaunay_n21", "delaunay", {"n": 2**21}, "all"),
        ("delaunay_n22", "delaunay", {"n": 2**22}, "core"),
        ("delaunay_n23", "delaunay", {"n": 2**23}, "core"),
        ("kron_logn20", "rmat", {"scale": 20, "edge_factor": 16}, "all"),
        ("kron_logn21", "rmat", {"scale": 21, "edge_factor": 16}, "core"),
        ("road_1000x1000", "road-grid", {"width": 1000, "height": 1000, "deletion": 0.1}, "core"),
        ("road_1448x1448", "road-grid", {"width": 1448, "height": 1448, "deletion": 0.1}, "all"),
        ("road_2000x2000", "road-grid", {"width": 2000, "height": 2000, "deletion": 0.1}, "core"),
        ("random_2M_d3", "random-bipartite", {"rows": 2_000_000, "cols": 2_000_000, "degree": 3}, "all"),
        ("powerlaw_1M", "powerlaw-bipartite", {"rows": 1_000_000, "cols": 1_000_000, "edges": 8_000_000}, "all"),
    ],
    "small": [
        ("delaunay_n12", "delaunay", {"n": 2**12}, "all"),
        ("kron_logn12", "rmat", {"scale": 12, "edge_factor": 16}, "all"),
        ("road_96x96", "road-grid", {"width": 96, "height": 96, "deletion": 0.05}, "all"),  # scipy HK stalls here
        ("random_4k_d3", "random-bipartite", {"rows": 4096, "cols": 4096, "degree": 3}, "all"),
        ("powerlaw_4k", "powerlaw-bipartite", {"rows": 4096, "cols": 4096, "edges": 30_000}, "core"),
    ],
}

# The paper's six configurations (variant x global-relabel strategy), each with the host loop (one
# launch per step, flags read every sync_every launches) and with the device-resident cooperative
# loop; the sync_every sweep of the host loop on the paper's best configuration.
DEFAULT_NAME = "shrink/adaptive/resident"  # what solvers.solve(graph, "gpr") runs on cuda
CONFIGS = ([{"variant": v, "gr": g, "device_loop": loop} for loop in ("off", "on")
            for v in ("shrink", "noshrink", "first") for g in ("adaptive", "fixed")]
           + [{"variant": "shrink", "gr": "adaptive", "device_loop": "off", "sync_every": s} for s in (1, 32)])
CORE_CONFIGS = [{"variant": "shrink", "gr": "adaptive", "device_loop": loop} for loop in ("on", "off")] + [
    {"variant": "first", "gr": "adaptive", "device_loop": loop} for loop in ("on", "off")]


def config_name(cfg: dict) -> str:
    name = f"{cfg['variant']}/{cfg['gr']}"
    if "sync_every" in cfg:
        name += f"/sync{cfg['sync_every']}"
    return name + ("/resident" if cfg.get("device_loop") == "on" else "")


def make_graph(kind: str, params: dict, seed: int = 1) -> BipartiteGraph:
    try:
        return solvers.generate(kind, seed=seed, **params)
    except (ImportError, ModuleNotFoundError, KeyError):
        if kind != "delaunay":
            raise
    # the generator is missing: the triangulation's edges as a symmetric n x n pattern
    from scipy.spatial import Delaunay
    pts = np.random.default_rng(seed).random((params["n"], 2))
    tri = Delaunay(pts).simplices
    a = np.concatenate([tri[:, 0], tri[:, 1], tri[:, 2]])
    b = np.concatenate([tri[:, 1], tri[:, 2], tri[:, 0]])
    return BipartiteGraph.from_edges(np.concatenate([a, b]), np.concatenate([b, a]), params["n"], params["n"])


SLOW_SECONDS = 5.0  # a baseline whose warm-up takes longer is timed once more only, to keep the suite short


def timed(fn, repeats: int, on_warm=None):
    """(median seconds, last result) after one untimed warm-up call (``on_warm(seconds)`` after it)."""
    start = time.perf_counter()
    fn()
    warm = time.perf_counter() - start
    if on_warm is not None:
        on_warm(warm)
    if warm > SLOW_SECONDS:
        repeats = 1
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def hopcroft_karp(csr, repeats: int, timeout: float):
    """(median seconds, |M|) of scipy's maximum_bipartite_matching, or (None, None) when one run
    takes longer than ``timeout``.

    It runs in a forked child (which inherits the matrix, so nothing is copied): scipy's
    implementation can take far longer than its O(E sqrt(V)) bound on road-like grids (a 128 x 128
    grid with 5% of its edges deleted did not finish in 40 s), and a stuck baseline must not stall
    the suite. The child never touches CUDA."""
    import multiprocessing as mp

    def child(conn):
        seconds, match = timed(lambda: maximum_bipartite_matching(csr, perm_type="column"), repeats,
                               on_warm=lambda w: conn.send(("warm", w)))
        conn.send(("done", (seconds, int(np.count_nonzero(match >= 0)))))

    ctx = mp.get_context("fork")
    parent, end = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=child, args=(end,), daemon=True)
    proc.start()
    end.close()
    try:
        if not parent.poll(timeout):  # the warm-up run alone took too long
            return None, None
        _, warm = parent.recv()
        runs = 1 if warm > SLOW_SECONDS else repeats
        if not parent.poll(timeout * runs):
            return None, None
        return parent.recv()[1]
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()


def certified(graph, solution) -> bool:
    from solvers.certify import certify
    return bool(certify(graph, solution).certified)


def bench_graph(name, graph, backend, repeats, configs, hk_timeout, log) -> dict:
    row = {"graph": name, "rows": graph.n_rows, "cols": graph.n_cols, "edges": graph.n_edges, "runs": {}}
    hk_time, hk_size = hopcroft_karp(graph.to_sparse().tocsr(), repeats, hk_timeout)
    row["hk_seconds"], row["maximum"] = hk_time, hk_size
    if hk_time is None:
        row["hk_timeout"] = hk_timeout
        log(f"  scipy HK          > {hk_timeout:.0f} s (stopped)")
    else:
        log(f"  scipy HK          {hk_time:8.3f} s  |M| = {hk_size}")
    if "pr-seq" in solvers.algorithms():
        from solvers.matching.pr_seq_solver import run as pr_run
        seconds, sol = timed(lambda: pr_run(graph, "cpu", NULL), repeats)
        row["pr_seq"] = {"seconds": seconds, "value": int(sol.value), "certified": certified(graph, sol),
                         "initial_matching": int(sol.stats.get("initial_matching", -1))}
        log(f"  pr-seq            {seconds:8.3f} s")
    from solvers.matching.gpr import run as gpr_run
    for cfg in configs:
        seconds, sol = timed(lambda: gpr_run(graph, backend, NULL, **cfg), repeats)
        st = sol.stats
        entry = {"seconds": seconds, "value": int(sol.value), "certified": certified(graph, sol),
                 "loops": int(st["loops"]), "global_relabels": int(st["global_relabels"]),
                 "max_level": int(st["max_level"]), "shrinks": int(st["shrinks"]), "syncs": int(st["syncs"]),
                 "restarts": int(st["restarts"]), "sync_every": int(st["sync_every"]), "k": float(st["k"]),
                 "initial_matching": int(st["initial_matching"]), "device_loop": bool(st["device_loop"])}
        if cfg.get("device_loop") == "on" and not st["device_loop"]:
            entry["device_loop_error"] = st.get("device_loop_error", "")
            log(f"  (device loop unavailable: {entry['device_loop_error']})")
        row["runs"][config_name(cfg)] = entry
        row["initial_matching"] = entry["initial_matching"]
        if row["maximum"] is None and entry["certified"]:
            row["maximum"] = entry["value"]  # HK gave up; a certified answer is the maximum
        ok = "certified" if _correct(row, entry) else "NOT MAXIMUM"
        log(f"  gpr {config_name(cfg):22s}{seconds:8.3f} s  loops {entry['loops']:6d}  "
            f"GR {entry['global_relabels']:4d}  {ok}")
    return row


def _correct(row, entry) -> bool:
    return bool(entry["certified"]) and entry["value"] == row["maximum"]


def geomean(values) -> float:
    values = [v for v in values if v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def summarise(rows) -> dict:
    names = [config_name(c) for c in CONFIGS]
    full = [r for r in rows if all(n in r["runs"] for n in names)]  # the graphs that ran every configuration
    per_config = {n: geomean([r["runs"][n]["seconds"] for r in full]) for n in names} if full else {}
    host = {n: v for n, v in per_config.items() if "resident" not in n and "sync" not in n}
    resident = {n: v for n, v in per_config.items() if "resident" in n}
    default, best_of, slower, timeouts = [], [], [], []
    for r in rows:
        best = min(r["runs"].values(), key=lambda e: e["seconds"])
        if r["hk_seconds"] is None:  # HK never finished: the speed-up is at least timeout / gpr time
            timeouts.append(r["graph"])
            continue
        best_of.append(r["hk_seconds"] / best["seconds"])
        if DEFAULT_NAME in r["runs"]:
            default.append(r["hk_seconds"] / r["runs"][DEFAULT_NAME]["seconds"])
            if r["runs"][DEFAULT_NAME]["seconds"] > r["hk_seconds"]:
                slower.append(r["graph"])
    all_ok = all(_correct(r, e) for r in rows for e in r["runs"].values())
    pick = lambda d: min(d, key=d.get) if d else None  # noqa: E731
    return {"geomean_speedup_default_over_hk": geomean(default),
            "geomean_speedup_best_per_graph_over_hk": geomean(best_of),
            "default_slower_than_hk": slower, "hk_timed_out": timeouts,
            "best_configuration": pick(per_config), "best_host_loop_configuration": pick(host),
            "best_resident_configuration": pick(resident), "configurations_compared_on": [r["graph"] for r in full],
            "geomean_seconds_per_configuration": per_config, "all_certified": all_ok}


def markdown(meta, rows, summary) -> str:
    names = [config_name(c) for c in CONFIGS]
    names += [n for n in (config_name(c) for c in CORE_CONFIGS) if n not in names]
    head = ["graph", "rows", "cols", "edges", "IM", "MM", "HK s"] + (["pr-seq s"] if any("pr_seq" in r for r in rows)
                                                                     else []) + [f"{n} s" for n in names]
    lines = [f"# G-PR benchmark, {meta['date']}, {meta['device']} (backend {meta['backend']})", "",
             f"Median of {meta['repeats']} warm runs after an untimed one (a single timed run where the warm-up "
             f"took over {SLOW_SECONDS:.0f} s); each gpr cell: seconds (loops, global relabels); * = not certified "
             "maximum; - = not run (the largest graphs run the default and the paper's best configuration, "
             "with and without the resident loop). `/resident`: the device-resident cooperative loop "
             f"(device_loop=on); the others use the host loop. The default configuration is `{DEFAULT_NAME}`.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        hk = f"{r['hk_seconds']:.3f}" if r["hk_seconds"] is not None else f"> {r['hk_timeout']:.0f}"
        cells = [r["graph"], f"{r['rows']:,}", f"{r['cols']:,}", f"{r['edges']:,}",
                 f"{r.get('initial_matching', 0):,}", f"{r['maximum'] or 0:,}", hk]
        if "pr_seq" in r:
            cells.append(f"{r['pr_seq']['seconds']:.3f}")
        for n in names:
            e = r["runs"].get(n)
            if e is None:
                cells.append("-")
                continue
            mark = "" if _correct(r, e) else "*"
            cells.append(f"{e['seconds']:.3f}{mark} ({e['loops']}, {e['global_relabels']})")
        lines.append("| " + " | ".join(cells) + " |")
    per = summary["geomean_seconds_per_configuration"]
    ranked = ", ".join(f"{n} {v:.3f}" for n, v in sorted(per.items(), key=lambda kv: kv[1]))
    lines += ["", "## Summary", "",
              f"- default configuration ({DEFAULT_NAME}): geometric-mean speed-up over scipy Hopcroft-Karp "
              f"{summary['geomean_speedup_default_over_hk']:.2f}x (goal >= 10x: "
              f"{'met' if summary['geomean_speedup_default_over_hk'] >= 10 else 'NOT met'})",
              f"- graphs where the default configuration is slower than Hopcroft-Karp: "
              f"{', '.join(summary['default_slower_than_hk']) or 'none'}",
              f"- best configuration per graph: geometric-mean speed-up {summary['geomean_speedup_best_per_graph_over_hk']:.2f}x",
              f"- graphs where Hopcroft-Karp was stopped (not in the means; gpr is faster there): "
              f"{', '.join(summary['hk_timed_out']) or 'none'}",
              f"- geometric mean of seconds per configuration over {', '.join(summary['configurations_compared_on'])}: "
              f"{ranked}",
              f"- best overall: {summary['best_configuration']}; best with the host loop (the paper's setting): "
              f"{summary['best_host_loop_configuration']}; best resident: {summary['best_resident_configuration']}",
              f"- every gpr answer certified maximum: {summary['all_certified']}",
              f"- graphs skipped for the time budget: {', '.join(summary.get('skipped_for_time', [])) or 'none'}", ""]
    return "\n".join(lines)


def device_name(backend: str) -> str:
    if backend == "cuda":
        from numba import cuda
        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    import os
    return f"{platform.processor() or platform.machine()} x{os.cpu_count()}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", choices=sorted(SUITES), default="full")
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--graphs", default="", help="comma-separated subset of graph names")
    ap.add_argument("--tag", default="", help="suffix of the output files (for a run split into parts)")
    ap.add_argument("--budget", type=float, default=math.inf,
                    help="seconds after which the remaining graphs are skipped (said so in the report)")
    ap.add_argument("--hk-timeout", type=float, default=None,
                    help="seconds one run of scipy's Hopcroft-Karp may take before the baseline is dropped "
                         "for that graph (default 60, 10 with --sizes small)")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="write one report of the graphs of earlier runs' .json files (a suite run in parts) "
                         "and delete those parts; nothing is measured")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge, Path(args.out), args.tag)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if args.hk_timeout is None:
        args.hk_timeout = 10.0 if args.sizes == "small" else 60.0
    if args.backend == "cuda" and not solvers.targets.cuda_available():
        print("no usable GPU here; use --backend cpu", file=sys.stderr)
        return 2
    device = device_name(args.backend)
    meta = {"date": dt.date.today().isoformat(), "device": device, "backend": args.backend,
            "repeats": args.repeats, "sizes": args.sizes, "python": platform.python_version(),
            "numpy": np.__version__}
    wanted = {g for g in args.graphs.split(",") if g}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    slug = "".join(ch if ch.isalnum() else "-" for ch in device).strip("-").lower()
    stem = out / f"gpr-{meta['date']}-{slug}{'-' + args.tag if args.tag else ''}"
    rows, skipped, started = [], [], time.perf_counter()

    def report():  # after every graph: a run cut short still leaves its finished graphs on disk
        summary = summarise(rows)
        summary["skipped_for_time"] = skipped
        meta["seconds"] = time.perf_counter() - started
        text = markdown(meta, rows, summary)
        atomic_write_text(stem.with_suffix(".md"), text)
        atomic_write_text(stem.with_suffix(".json"), json.dumps({"meta": meta, "summary": summary, "graphs": rows},
                                                                indent=1, default=float))
        return summary, text

    for name, kind, params, scope in SUITES[args.sizes]:
        if wanted and name not in wanted:
            continue
        if time.perf_counter() - started > args.budget:
            print(f"{name}: skipped (--budget {args.budget:.0f} s spent)", flush=True)
            skipped.append(name)
            continue
        t0 = time.perf_counter()
        graph = make_graph(kind, params)
        print(f"{name}: {graph.n_rows:,} x {graph.n_cols:,}, {graph.n_edges:,} edges "
              f"(generated in {time.perf_counter() - t0:.1f} s)", flush=True)
        configs = CONFIGS if scope == "all" else CORE_CONFIGS
        rows.append(bench_graph(name, graph, args.backend, args.repeats, configs, args.hk_timeout,
                                lambda s: print(s, flush=True)))
        del graph
        report()
    summary, text = report()
    print()
    print(text)
    print(f"wrote {stem}.md and .json")
    return 0 if summary["all_certified"] else 1


def merge(paths, out: Path, tag: str = "") -> int:
    """One report (in suite order) of the graphs of several runs of the same device and date."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    metas = {(m["device"], m["backend"], m["date"], m["repeats"]) for m in (part["meta"] for part in parts)}
    if len(metas) != 1:
        print(f"cannot merge runs of different devices, backends, dates or repeats: {sorted(metas)}", file=sys.stderr)
        return 2
    order = {name: i for suite in SUITES.values() for i, (name, *_rest) in enumerate(suite)}
    rows = sorted((r for part in parts for r in part["graphs"]), key=lambda r: order.get(r["graph"], len(order)))
    if len({r["graph"] for r in rows}) != len(rows):
        print("a graph appears in more than one part", file=sys.stderr)
        return 2
    meta = dict(parts[0]["meta"], seconds=sum(part["meta"]["seconds"] for part in parts),
                merged_from=[Path(p).name for p in paths])
    summary = summarise(rows)
    summary["skipped_for_time"] = [g for part in parts for g in part["summary"].get("skipped_for_time", [])]
    slug = "".join(ch if ch.isalnum() else "-" for ch in meta["device"]).strip("-").lower()
    stem = out / f"gpr-{meta['date']}-{slug}{'-' + tag if tag else ''}"
    atomic_write_text(stem.with_suffix(".md"), markdown(meta, rows, summary))
    atomic_write_text(stem.with_suffix(".json"), json.dumps({"meta": meta, "summary": summary, "graphs": rows},
                                                            indent=1, default=float))
    for p in paths:
        if Path(p).resolve() != stem.with_suffix(".json").resolve():
            Path(p).unlink()
            Path(p).with_suffix(".md").unlink(missing_ok=True)
    print(f"wrote {stem}.md and .json from {len(paths)} parts")
    return 0 if summary["all_certified"] else 1


if __name__ == "__main__":
    sys.exit(main())
