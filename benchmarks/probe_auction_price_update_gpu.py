"""The GPU auction's global price updates (issue 14) on dense integer costs: the tree Hungarian, the
auction without updates (``price_updates="off"``) and with them at a few settings of
``auction_device``'s UPDATE_EVERY (tail bids between updates) and UPDATE_LEVELS (the levels an update
settles), in one warm process: median seconds of R runs, tail bids, updates and their rounds, and
whether the value equals the Hungarian's and the certificate's verdict.

    PYTHONPATH=. python benchmarks/probe_auction_price_update_gpu.py [N] [R] [--no-off] [--cpu] [--profile]

``--threshold=64,16`` runs the first setting again with the Gauss-Seidel tail starting at that
many unassigned persons (Jacobi rounds above it; the updates start at
``auction_device.UPDATE_BELOW`` either way). ``--try=GS_TAIL:256:1+PRICE_UPDATE:1024:32``
(repeatable) runs the first setting again with those kernels' blocks (threads) and cooperative
grids (objects a block) replaced. ``--profile`` adds one more run of the first setting with a
synchronisation after every launch, and prints the seconds spent per kernel (the launches then no
longer overlap: a breakdown, not a time).
"""
import json
import statistics
import sys
import time

import numpy as np

import solvers
from solvers.assignment import auction_device
from solvers.problems import CostMatrix

args = [a for a in sys.argv[1:] if not a.startswith("--")]
n = int(args[0]) if args else 8000
repeats = int(args[1]) if len(args) > 1 else 2
backend = "cuda" if "--cpu" not in sys.argv else "cpu"
settings = [(400, 16), (400, 8), (300, 16)]


def timed(problem, algorithm, **options):
    solvers.solve(problem, algorithm, backend=backend, **options)  # compile or load, untimed
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = solvers.solve(problem, algorithm, backend=backend, **options)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


class try_kernels:
    """Kernel records replaced for a run: "GS_TAIL:1024:1+PRICE_UPDATE:1024:32" (name:threads:tiles;
    GS_TAIL and JACOBI live in auction_kernels, PRICE_UPDATE in auction_device's namespace)."""

    def __init__(self, specs: str):
        import dataclasses

        from solvers.assignment import auction_kernels
        self.changes = []
        for spec in specs.split("+"):
            name, threads, tiles = spec.split(":")
            module = auction_device if name == "PRICE_UPDATE" else auction_kernels
            original = getattr(module, name)
            self.changes.append((module, name, original,
                                 dataclasses.replace(original, name=f"{original.name}@{threads}:{tiles}",
                                                     threads=int(threads), tiles=int(tiles))))

    def __enter__(self):
        for module, name, _, changed in self.changes:
            setattr(module, name, changed)

    def __exit__(self, *exc):
        for module, name, original, _ in self.changes:
            setattr(module, name, original)


def profiled(problem, **options):
    """Seconds per kernel name, each launch synchronised."""
    from collections import defaultdict

    from numba import cuda

    from solvers.targets.cuda import CudaLauncher
    spent = defaultdict(float)
    plain = CudaLauncher.launch

    def launch(self, kernel, size, *args):
        start = time.perf_counter()
        plain(self, kernel, size, *args)
        cuda.synchronize()
        spent[kernel.name] += time.perf_counter() - start
    CudaLauncher.launch = launch
    try:
        start = time.perf_counter()
        solvers.solve(problem, "auction", backend=backend, **options)
        spent["total"] = time.perf_counter() - start
    finally:
        CudaLauncher.launch = plain
    return {name: round(seconds, 4) for name, seconds in sorted(spent.items(), key=lambda kv: -kv[1])}


rng = np.random.default_rng(11)
for name, high in (("[0, 10n]", 10 * n), ("[0, n/5]", n // 5)):
    problem = CostMatrix.from_array(rng.integers(0, high + 1, (n, n)))
    seconds, reference = timed(problem, "hungarian")
    print(json.dumps({"case": f"{n} int {name}", "solver": "hungarian", "seconds": round(seconds, 4)}), flush=True)
    runs = [("off", None)] if "--no-off" not in sys.argv else []
    runs += [("on", s) for s in settings]
    for updates, setting in runs:
        if setting:
            auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = setting
        seconds, result = timed(problem, "auction", price_updates=updates)
        st = result.stats
        print(json.dumps({"case": f"{n} int {name}", "solver": "auction", "updates": updates,
                          "every": setting and setting[0], "levels": setting and setting[1],
                          "seconds": round(seconds, 4), "equal": bool(result.value == reference.value),
                          "certificate": result.certificate.status, "tail_bids": st.get("gs_bids"),
                          "price_updates": st.get("price_updates"), "update_rounds": st.get("price_update_rounds"),
                          "gs_launches": st.get("gs_launches"), "launches": st.get("launches")}), flush=True)
    for arg in sys.argv:
        if arg.startswith("--threshold="):
            default = auction_device.GS_THRESHOLD
            auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = settings[0]
            for threshold in map(int, arg.split("=")[1].split(",")):
                auction_device.GS_THRESHOLD = threshold
                seconds, result = timed(problem, "auction", price_updates="on")
                print(json.dumps({"case": f"{n} int {name}", "gs_threshold": threshold, "seconds": round(seconds, 4),
                                  "equal": bool(result.value == reference.value),
                                  "tail_bids": result.stats.get("gs_bids"),
                                  "jacobi_rounds": result.stats.get("jacobi_rounds"),
                                  "updates": result.stats.get("price_updates"),
                                  "update_rounds": result.stats.get("price_update_rounds")}), flush=True)
            auction_device.GS_THRESHOLD = default
        if arg.startswith("--try="):
            tried = try_kernels(arg.split("=", 1)[1])
            auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = settings[0]
            with tried:
                seconds, result = timed(problem, "auction", price_updates="on")
            print(json.dumps({"case": f"{n} int {name}", "try": arg.split("=", 1)[1], "seconds": round(seconds, 4),
                              "equal": bool(result.value == reference.value), "tail_bids": result.stats.get("gs_bids"),
                              "jacobi_rounds": result.stats.get("jacobi_rounds"),
                              "update_rounds": result.stats.get("price_update_rounds")}), flush=True)
    if "--profile" in sys.argv:
        auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = settings[0]
        print(json.dumps({"case": f"{n} int {name}", "profile": profiled(problem, price_updates="on"),
                          "profile_off": profiled(problem, price_updates="off")}), flush=True)
