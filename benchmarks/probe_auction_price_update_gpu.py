"""The GPU auction's global price updates (issue 14) on dense integer costs: the tree Hungarian, the
auction without updates (``price_updates="off"``) and with them at a few settings of
``auction_device``'s UPDATE_EVERY (tail bids between updates) and UPDATE_LEVELS (the levels an update
settles), in one warm process: median seconds of R runs, tail bids, updates and their rounds, and
whether the value equals the Hungarian's and the certificate's verdict.

    PYTHONPATH=. python benchmarks/probe_auction_price_update_gpu.py [N] [R] [--no-off] [--cpu] [--profile]

``--tiles=8,32`` runs the first setting again with the update kernel's grid sized for that many
objects a block (fewer blocks: cheaper grid syncs, more objects a warp). ``--profile`` adds one more run of the first setting with a synchronisation after every launch,
and prints the seconds spent per kernel (the launches then no longer overlap: a breakdown, not a
time).
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
settings = [(200, 16), (400, 16), (200, 32), (100, 16)]


def timed(problem, algorithm, **options):
    solvers.solve(problem, algorithm, backend=backend, **options)  # compile or load, untimed
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = solvers.solve(problem, algorithm, backend=backend, **options)
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


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
        if arg.startswith("--tiles="):
            import dataclasses
            original = auction_device.PRICE_UPDATE
            auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = settings[0]
            for tiles in map(int, arg.split("=")[1].split(",")):
                auction_device.PRICE_UPDATE = dataclasses.replace(original, tiles=tiles)
                seconds, result = timed(problem, "auction", price_updates="on")
                print(json.dumps({"case": f"{n} int {name}", "tiles": tiles, "seconds": round(seconds, 4),
                                  "equal": bool(result.value == reference.value),
                                  "update_rounds": result.stats.get("price_update_rounds")}), flush=True)
            auction_device.PRICE_UPDATE = original
    if "--profile" in sys.argv:
        auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = settings[0]
        print(json.dumps({"case": f"{n} int {name}", "profile": profiled(problem, price_updates="on"),
                          "profile_off": profiled(problem, price_updates="off")}), flush=True)
