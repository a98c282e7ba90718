"""The user's clock (issue 13): from a numpy array, a scipy matrix or a file to a certified answer.

For every row, in one run: matchscope through the Python API from numpy/scipy objects in a warm
process (end to end, and the solve's own seconds beside it); matchscope through ``matchscope solve
FILE --json`` in a fresh process with the kernel cache warm (``matchscope warmup`` runs first);
scipy from the same objects (and from the file, for the command-line comparison); for assignment
rows lapx ``lapjvx`` and torch-linear-assignment (a (1, n, m) CUDA tensor made from the numpy
array inside the timing), each where installed (benchmark extras, not dependencies).

    python benchmarks/bench_e2e.py [--quick] [--rows dense-4000,rmat-21] [--backend auto] [--repeat 3]
                                   [--out benchmarks/results] [--slow-peers]

Every matchscope answer must be certified and equal the peers' value; a mismatch is marked in the
table. Results: e2e-DATE-DEVICE.json and .md in --out. Goals (issue 13, H100) are judged on end-to-end
time; the solve-only column is information, never the verdict.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import solvers  # noqa: E402  (the repository's own, not an installed copy)


@dataclass
class Row:
    name: str
    family: str             # dense, rect, matching, flow
    build: callable         # (quick) -> the data the API gets
    algorithm: str          # the explicit matchscope algorithm timed beside the default choice
    slow_peers: bool = False  # scipy / lapx would take minutes: timed only with --slow-peers
    extra: dict = field(default_factory=dict)


def dense(n, m, integer, seed):
    rng = np.random.default_rng(seed)
    if integer:
        return rng.integers(0, 10 * max(n, m) + 1, (n, m), dtype=np.int64)
    return rng.random((n, m))


def graph(kind, **params):
    g = solvers.generate(kind, **params)
    import scipy.sparse as sp
    rows, cols = g.edges()
    return sp.csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=g.shape)


def rows_table(quick: bool) -> list[Row]:
    q = quick
    return [
        Row("dense-4000-real", "dense", lambda: dense(300 if q else 4000, 300 if q else 4000, False, 1), "hungarian"),
        Row("dense-8000-int", "dense", lambda: dense(400 if q else 8000, 400 if q else 8000, True, 2), "hungarian"),
        Row("dense-20000-int", "dense", lambda: dense(600 if q else 20000, 600 if q else 20000, True, 3), "hungarian",
            slow_peers=not q),
        Row("rect-3000x9000", "rect", lambda: dense(100 if q else 3000, 300 if q else 9000, True, 4), "hungarian"),
        Row("rect-1000x20000", "rect", lambda: dense(50 if q else 1000, 600 if q else 20000, True, 5), "hungarian"),
        # not an issue-13 row: the same rectangle stood up (solved as its transpose), as users also hand it over
        Row("tall-9000x3000", "rect", lambda: dense(300 if q else 9000, 100 if q else 3000, True, 10), "hungarian"),
        Row("rmat-21-ef8", "matching", lambda: graph("rmat", scale=12 if q else 21, edge_factor=8, seed=6), "gpr"),
        Row("grid-1200-del20", "matching",
            lambda: graph("road-grid", width=60 if q else 1200, height=60 if q else 1200, deletion=0.2, seed=7), "gpr"),
        Row("uniform-3M-deg4", "matching",
            lambda: graph("random-bipartite", rows=20000 if q else 3_000_000, cols=20000 if q else 3_000_000,
                          degree=4, seed=8), "gpr"),
        Row("flow-grid-700", "flow",
            lambda: solvers.generate("washington-rlg", rows=30 if q else 700, cols=30 if q else 700,
                                     max_capacity=100, seed=9), "wbpr"),
    ]


def timed(fn, repeat: int, warm: bool = True):
    """(median seconds, last value) of ``repeat`` calls, after one untimed call when ``warm`` (a
    compiled or CUDA peer's first call pays for loading; scipy and lapx have nothing to warm)."""
    value = fn() if warm else None
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def timed_api(fn, repeat: int):
    """(median end-to-end seconds, median solve-only seconds, median host overhead, last Result) of
    ``repeat`` solves after an untimed one: each call's overhead is 1 - its solve / its end to end,
    so a fast solve in one call is never set against a slow end to end in another."""
    result = fn()
    e2e, solve, share = [], [], []
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        e2e.append(time.perf_counter() - start)
        solve.append(float(result.seconds))
        share.append(1.0 - solve[-1] / e2e[-1] if e2e[-1] > 0 else 0.0)
    return statistics.median(e2e), statistics.median(solve), statistics.median(share), result


def host_overhead(api: dict) -> float:
    """The API run's host overhead (results written before per-call shares: from its medians)."""
    if "overhead" in api:
        return api["overhead"]
    return 1 - api["solve"] / api["e2e"] if api["e2e"] > 0 else 0.0


def bounded(fn, limit: float):
    """{"seconds", "value"} of one call of ``fn`` in a forked child, or {"stopped_after": limit} when
    it runs longer (scipy's Hopcroft-Karp takes minutes on road grids): one slow peer must not eat
    the GPU machine's ten minutes. The child shares the data copy-on-write; nothing is pickled but
    the two numbers."""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)

    def child():
        start = time.perf_counter()
        value = fn()
        send.send((time.perf_counter() - start, value))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()
    got = receive.recv() if receive.poll(limit) else None
    if proc.is_alive():
        proc.kill()
    proc.join()
    if got is None:
        return {"stopped_after": limit}
    return {"seconds": got[0], "value": got[1]}


# ------------------------------------------------------------------ peers


def scipy_solve(row: Row, data):
    if row.family in ("dense", "rect"):
        from scipy.optimize import linear_sum_assignment
        r, c = linear_sum_assignment(data)
        return float(data[r, c].sum())
    if row.family == "matching":
        from scipy.sparse.csgraph import maximum_bipartite_matching
        return float((maximum_bipartite_matching(data, perm_type="column") >= 0).sum())
    return scipy_flow(data.tail, data.head, data.capacity, data.n_vertices, data.source_vertex, data.sink_vertex)


def scipy_flow(tail, head, capacity, n, source, sink):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import maximum_flow
    cap = sp.csr_matrix((capacity.astype(np.int32), (tail, head)), shape=(n, n))
    cap.sum_duplicates()
    return float(maximum_flow(cap, source, sink).flow_value)


def lapx_solve(data):
    import lap
    cost, _, _ = lap.lapjvx(data, extend_cost=data.shape[0] != data.shape[1])
    return float(cost)


def torch_solve(data):
    import torch
    from torch_linear_assignment import batch_linear_assignment
    # float32 where it holds every cost exactly (integers below 2^24), else float64: a rounded cost
    # could change the optimum, and the values would then differ for a reason that is not the solver's
    exact32 = data.dtype.kind in "iu" and (data.size == 0 or int(np.abs(data).max()) < 2**24)
    tensor = torch.from_numpy(np.ascontiguousarray(data, dtype=np.float32 if exact32 else np.float64)).cuda()[None]
    cols = batch_linear_assignment(tensor)[0].cpu().numpy()
    rows = np.flatnonzero(cols >= 0)
    return float(data[rows, cols[rows]].sum())


def available(module: str) -> bool:
    try:
        __import__(module)
        return True
    except Exception:  # a peer that cannot load (no CUDA, no wheel) is reported missing, not fatal
        return False


def torch_cuda() -> bool:
    return available("torch_linear_assignment") and __import__("torch").cuda.is_available()


# ------------------------------------------------------------------ matchscope


def api_data(row: Row, data):
    """What a user hands to solvers.solve, made inside the timing: the array, the csr, or for a
    flow network the FlowNetwork built from its edge arrays."""
    if row.family == "flow":
        return lambda: solvers.FlowNetwork.from_edges(data.n_vertices, data.tail, data.head, data.capacity,
                                                      data.source_vertex, data.sink_vertex)
    return lambda: data


def api_solve(row: Row, data, algorithm, backend):
    make = api_data(row, data)
    kind = "flow" if row.family == "flow" else None

    def run():
        return solvers.solve(make(), algorithm, backend=backend, problem=kind)
    return run


def write_file(row: Row, data, folder: Path) -> Path:
    if row.family in ("dense", "rect"):
        path = folder / f"{row.name}.npy"
        np.save(path, data)
    elif row.family == "matching":
        import scipy.io
        path = folder / f"{row.name}.mtx"
        scipy.io.mmwrite(str(path), data, field="pattern")
    else:  # Matrix Market too (the source and sink in its comment), so scipy has a file route as well
        path = folder / f"{row.name}.mtx"
        solvers.save(data, path)
    return path


def scipy_from_file(row: Row, path: Path):
    """scipy's own route from a Matrix Market file: scipy.io.mmread, then the solver."""
    import scipy.io
    if row.family == "matching":
        return lambda: scipy_solve(row, scipy.io.mmread(str(path), spmatrix=False).tocsr())
    source, sink = flow_ends(path)

    def flow():
        coo = scipy.io.mmread(str(path), spmatrix=False)
        return scipy_flow(coo.coords[0], coo.coords[1], coo.data, coo.shape[0], source, sink)
    return flow


def flow_ends(path: Path) -> tuple[int, int]:
    """The source and sink a matchscope flow .mtx names in its comment (read before the timing)."""
    import re
    with open(path) as fh:
        head = fh.read(4096)
    m = re.search(r"matchscope flow: source=(\d+) sink=(\d+)", head)
    return int(m.group(1)), int(m.group(2))


def cli(path: Path, algorithm: str | None, backend: str, problem: str | None = None):
    args = [sys.executable, "-m", "solvers", "solve", str(path), "--json", "--backend", backend]
    if algorithm:
        args += ["--algo", algorithm]
    if problem:  # a square .mtx reads as a graph unless told (wbpr solves both)
        args += ["--problem", problem]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        return {"wall": wall, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"wall": wall, "load": record.get("load_seconds"), "solve": record["seconds"],
            "algorithm": record["algorithm"], "backend": record["backend"], "value": record["value"],
            "certified": record["certified"], "compiled": record.get("compiled")}


# ------------------------------------------------------------------ one row


def measure(row: Row, backend: str, repeat: int, slow_peers: bool, folder: Path, peer_limit: float) -> dict:
    data = row.build()
    shape = list(data.shape) if hasattr(data, "shape") else [data.n_vertices, data.n_vertices]
    edges = int(data.nnz) if hasattr(data, "nnz") else getattr(data, "n_edges", None)
    # the host-overhead goal's rows: n >= 4000, or at least 1M edges
    big = (edges or 0) >= 1_000_000 if edges is not None else max(shape) >= 4000
    out = {"row": row.name, "family": row.family, "shape": shape, "edges": edges, "big": big}
    for label, algorithm in (("default", None), ("explicit", row.algorithm)):
        seconds, solve_seconds, share, result = timed_api(api_solve(row, data, algorithm, backend), repeat)
        out[f"api_{label}"] = {"e2e": seconds, "solve": solve_seconds, "overhead": share,
                               "algorithm": result.algorithm, "backend": result.backend, "value": result.value,
                               "certified": result.certificate.status}
    path = write_file(row, data, folder)
    out["file_bytes"] = path.stat().st_size
    kind = "flow" if row.family == "flow" else None
    cli(path, row.algorithm, backend, kind)  # the file in the page cache, as the peers get it
    out["cli"] = min((cli(path, row.algorithm, backend, kind) for _ in range(max(1, repeat - 1))),
                     key=lambda r: r["wall"])
    peers, notes = {}, []
    if row.slow_peers and not slow_peers:
        notes.append("scipy and lapx skipped (minutes at this size; --slow-peers times them)")
    else:
        peers["scipy"] = bounded(lambda: scipy_solve(row, data), peer_limit)
        if "stopped_after" in peers["scipy"]:
            peers["scipy_file"] = dict(peers["scipy"])  # the same solve after a load: no need to wait again
            notes.append(f"scipy stopped after {peer_limit:g} s: its ratio is a lower bound, and the values "
                         "are checked by the certificate alone")
        elif row.family in ("dense", "rect"):  # np.load, then the same solve: no need to wait for the solve twice
            load_seconds, _ = timed(lambda: np.load(path), 1, warm=False)
            peers["scipy_file"] = {"seconds": load_seconds + peers["scipy"]["seconds"],
                                   "value": peers["scipy"]["value"]}
        else:
            peers["scipy_file"] = bounded(scipy_from_file(row, path), peer_limit)
        if row.family in ("dense", "rect"):
            if available("lap"):
                peers["lapx"] = bounded(lambda: lapx_solve(data), peer_limit)
            else:
                notes.append("lapx not installed (pip install lapx)")
    if row.family in ("dense", "rect"):
        if not torch_cuda():
            notes.append("torch-linear-assignment not timed (needs torch with CUDA and torch_linear_assignment)")
        elif max(data.shape) <= 4000 or slow_peers:  # its Hungarian took 12 s at 4000 x 4000 on the H100
            peers["torch_linear_assignment"] = dict(zip(("seconds", "value"), timed(lambda: torch_solve(data), 1)))
        else:
            notes.append("torch-linear-assignment skipped above 4000 (12 s at 4000 on the H100; --slow-peers "
                         "times it)")
    out["peers"] = peers
    out["notes"] = notes
    reference = peers.get("scipy", {}).get("value")
    out["agree"] = all(_same(r["value"], reference) for r in (out["api_default"], out["api_explicit"], out["cli"])
                       if reference is not None and "value" in r)
    # a peer that disagrees with scipy is flagged too (its fault, but its comparison is then void)
    out["peers_differ"] = sorted(k for k, v in peers.items()
                                 if reference is not None and "value" in v and not _same(v["value"], reference))
    path.unlink()
    return out


def _same(a, b) -> bool:
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


# ------------------------------------------------------------------ verdicts


def verdicts(r: dict) -> list[str]:
    """The issue's goals that apply to this row, met or not."""
    best = min(r["api_default"]["e2e"], r["api_explicit"]["e2e"])
    scipy, lapx = peer_seconds(r["peers"], "scipy"), peer_seconds(r["peers"], "lapx")
    out = []
    if r["family"] == "dense" and r["shape"][0] >= 4000:
        if scipy:
            out.append(f"{'met' if scipy / best >= 10 else 'NOT met'}: >= 10x scipy ({scipy / best:.2f}x)")
        if lapx:
            out.append(f"{'met' if lapx / best >= 5 else 'NOT met'}: >= 5x lapx ({lapx / best:.2f}x)")
    if r["family"] == "dense" and r["shape"][0] == 20000:
        out.append(f"{'met' if best <= 0.6 else 'NOT met'}: <= 0.6 s from numpy ({best:.2f} s)")
    if r["family"] == "rect" and max(r["shape"]) >= 9000 and scipy:
        out.append(f"{'met' if scipy / best >= 5 else 'NOT met'}: >= 5x scipy ({scipy / best:.2f}x)")
    if r["big"]:
        share = host_overhead(_best_api(r))
        out.append(f"{'met' if share <= 0.2 else 'NOT met'}: host overhead <= 20% ({share:.0%})")
    if r["family"] == "matching" and (r["edges"] or 0) >= 8_000_000:
        via_scipy = peer_seconds(r["peers"], "scipy_file")
        if via_scipy and "wall" in r["cli"]:
            ratio = r["cli"]["wall"] / via_scipy
            out.append(f"{'met' if ratio <= 0.5 else 'NOT met'}: command line <= half of mmread + Hopcroft-Karp "
                       f"({ratio:.2f})")
    if not r["agree"]:
        out.append("**MATCHSCOPE VALUE DIFFERS FROM SCIPY**")
    for peer in r.get("peers_differ", []):
        out.append(f"**{peer} value differs from scipy**")
    if any(x.get("certified") not in ("optimal", True) for x in (r["api_default"], r["api_explicit"], r["cli"])
           if "certified" in x) or "error" in r["cli"]:
        out.append("**NOT CERTIFIED OPTIMAL somewhere**")
    return out


COLUMNS = ["row", "size", "matchscope API e2e, warm (default / explicit)", "CLI e2e, fresh process", "CLI load",
           "solve-only (default / explicit)", "host overhead", "scipy (objects / file)", "lapx",
           "torch-linear-assignment", "vs scipy", "vs lapx", "goals"]


def peer_seconds(peers: dict, name: str) -> float | None:
    """A peer's seconds; for one stopped at the time limit, the limit (a lower bound: every ratio
    made with it understates the peer's time)."""
    peer = peers.get(name, {})
    return peer.get("seconds", peer.get("stopped_after"))


def _best_api(r: dict) -> dict:
    return r["api_explicit"] if r["api_explicit"]["e2e"] <= r["api_default"]["e2e"] else r["api_default"]


def table(results: list[dict]) -> list[str]:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in results:
        d, e, c, p = r["api_default"], r["api_explicit"], r["cli"], r["peers"]
        best = _best_api(r)
        size = "x".join(map(str, r["shape"])) + (f", {r['edges']:,} edges" if r["edges"] else "")
        def peer(k):
            if k not in p:
                return "-"
            return f"{p[k]['seconds']:.3f}" if "seconds" in p[k] else f"> {p[k]['stopped_after']:g} (stopped)"

        def ratio(k):
            if k not in p:
                return "-"
            return (f"{p[k]['seconds'] / best['e2e']:.1f}x" if "seconds" in p[k]
                    else f"> {p[k]['stopped_after'] / best['e2e']:.0f}x")
        overhead = host_overhead(best)
        cells = [
            r["row"], size,
            f"{d['e2e']:.3f} ({d['algorithm']}/{d['backend']}) / {e['e2e']:.3f} ({e['algorithm']}/{e['backend']})",
            f"{c['wall']:.3f} ({c['algorithm']}/{c['backend']})" if "error" not in c else f"failed: {c['error']}",
            f"{c['load']:.3f}" if c.get("load") is not None else "-",
            f"{d['solve']:.3f} / {e['solve']:.3f}",
            f"{overhead:.0%}",
            f"{peer('scipy')} / {peer('scipy_file')}",
            peer("lapx"), peer("torch_linear_assignment"), ratio("scipy"), ratio("lapx"),
            "; ".join(verdicts(r) + r.get("notes", [])) or "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def device_name() -> str:
    from solvers.targets import gpu_present
    if gpu_present():
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip().splitlines()
        if out:
            return out[0]
    return f"{platform.machine()} x{os.cpu_count()}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (about a minute on 2 cores)")
    ap.add_argument("--rows", default="", help="comma-separated row names (default: all)")
    ap.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--slow-peers", action="store_true")
    ap.add_argument("--no-warmup", action="store_true", help="skip `matchscope warmup` (the cache is warm already)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--peer-limit", type=float, default=150.0,
                    help="seconds a peer may take before it is stopped (its ratio is then a lower bound)")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="combine the rows of earlier result files (a later file's row replaces an earlier one "
                         "of the same name) into one table in --out; measures nothing")
    args = ap.parse_args()
    if args.merge:
        return merge(args)
    rows = rows_table(args.quick)
    if args.rows:
        wanted = set(args.rows.split(","))
        unknown = wanted - {r.name for r in rows}
        if unknown:
            ap.error(f"unknown rows: {', '.join(sorted(unknown))}; choose from {', '.join(r.name for r in rows)}")
        rows = [r for r in rows if r.name in wanted]
    if not args.no_warmup:
        warm = subprocess.run([sys.executable, "-m", "solvers", "warmup", "--backend", args.backend], cwd=ROOT,
                              capture_output=True, text=True)
        print(((warm.stdout or warm.stderr).strip().splitlines() or ["warmup ran"])[0])
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for row in rows:
            result = measure(row, args.backend, args.repeat, args.slow_peers, Path(folder), args.peer_limit)
            results.append(result)
            print(table([result])[-1], flush=True)
            write_results(results, args)  # after every row: a run cut short keeps what it measured
    return 0


def merge(args) -> int:
    """One table from the rows of several runs (the GPU machine allows ten minutes a command, so the
    rows are measured a few per command). Every file must come from the same device and backend."""
    loaded = [json.loads(Path(f).read_text()) for f in args.merge]
    devices = {(d["device"], d["backend"], d["quick"]) for d in loaded}
    if len(devices) != 1:
        print("bench_e2e: the files come from different devices, backends or sizes: "
              + "; ".join(f"{d} backend {b}{' quick' if q else ''}" for d, b, q in sorted(devices)), file=sys.stderr)
        return 2
    by_name = {}
    for d in loaded:
        by_name.update({r["row"]: r for r in d["rows"]})
    order = [r.name for r in rows_table(False)]
    results = sorted(by_name.values(), key=lambda r: order.index(r["row"]) if r["row"] in order else len(order))
    first = loaded[0]
    args.backend, args.quick = first["backend"], first["quick"]
    write_results(results, args, device=first["device"], stamp=max(d["date"] for d in loaded))
    return 0


def write_results(results: list[dict], args, device: str | None = None, stamp: str | None = None) -> None:
    device = device or device_name()
    stamp = stamp or datetime.date.today().isoformat()
    summary = {"date": stamp, "device": device, "backend": args.backend, "quick": args.quick,
               "python": platform.python_version(), "numpy": np.__version__, "rows": results}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"e2e-{stamp}-" + "".join(ch if ch.isalnum() else "-" for ch in device.lower()).strip("-")
    if args.quick:
        stem += "-quick"
    (out / f"{stem}.json").write_text(json.dumps(summary, indent=1, default=float))
    lines = [f"# End to end, {stamp}, {device} (backend {args.backend}{', quick sizes' if args.quick else ''})", "",
             "Seconds, medians of the repeats. **API**: `solvers.solve(data)` in a warm process, from the numpy "
             "array or scipy csr matrix (a flow network: from its edge arrays) to a certified Result, with the "
             "algorithm `solvers.solve` picks (default) and with the explicit one. **CLI**: `matchscope solve FILE "
             "--json --algo EXPLICIT` in a fresh process after `matchscope warmup` (the best of the repeats; the file "
             "is .npy for costs, Matrix Market for graphs and flow networks); **CLI load**: the load_seconds it "
             "reports (reading and parsing, numba's first call included). **Host overhead**: of the faster API run, "
             "the median over its calls of 1 - solve-only / e2e. **scipy**: linear_sum_assignment, maximum_bipartite_matching or maximum_flow "
             "from the same objects / from the file (np.load or scipy.io.mmread, then the same call). **Ratios**: "
             "the peer's time over matchscope's faster API e2e. Values: every matchscope answer is checked against "
             "scipy's; a difference is flagged in bold in the goals column. Rows: dense-lap-style uniform costs "
             "(real in [0, 1), integer in [0, 10n]), R-MAT, road-grid, random-bipartite and washington-rlg "
             "(the flow grid: 700 levels of 700 vertices, capacities 1..100) from `solvers.generate`, seeded.", ""]
    lines += table(results)
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
