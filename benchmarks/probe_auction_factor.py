"""The GPU auction's epsilon schedule (issue 14): how many phases (``eps_factor``: epsilon falls by
it per phase) against the tree Hungarian on dense integer costs, and a few of ``auction_device``'s
update settings (UPDATE_EVERY tail bids between updates, UPDATE_LEVELS levels an update settles)
at the best factors. One warm process; median seconds of R runs; per run the phases, tail bids,
Jacobi rounds, updates and their rounds; whether the value equals the Hungarian's and the
certificate's verdict. ``--real`` adds uniform real costs (float64) at the same factors;
``--factors=5,20`` and ``--seeds=1,2,3`` (one instance of each range per seed; default 11) change
the sweep; ``--no-settings`` leaves out the update settings.

    PYTHONPATH=. python benchmarks/probe_auction_factor.py [N,N2,...] [R] [--cpu] [--real] [--factors=..] [--seeds=..]
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
sizes = [int(x) for x in args[0].split(",")] if args else [8000]
repeats = int(args[1]) if len(args) > 1 else 3
backend = "cpu" if "--cpu" in sys.argv else "cuda"


def listed(flag, default, kind):
    for a in sys.argv:
        if a.startswith(flag + "="):
            return tuple(kind(x) for x in a.split("=", 1)[1].split(","))
    return default


FACTORS = listed("--factors", (5.0, 8.0, 12.0, 16.0, 20.0, 30.0), float)
SEEDS = listed("--seeds", (11,), int)
SETTINGS = ((200, 16), (800, 16), (400, 32))


def timed(problem, algorithm, **options):
    solvers.solve(problem, algorithm, backend=backend, **options)  # compile or load, untimed
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = solvers.solve(problem, algorithm, backend=backend, **options)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 4), result


def row(case, label, seconds, result, reference, **extra):
    s = result.stats
    print(json.dumps(dict(case=case, run=label, seconds=seconds, **extra, phases=s.get("phases"),
                          tail_bids=s.get("gs_bids"), jacobi_rounds=s.get("jacobi_rounds"),
                          updates=s.get("price_updates"), update_rounds=s.get("price_update_rounds"),
                          equal=bool(abs(result.value - reference) <= 1e-9 * max(1.0, abs(reference))),
                          certificate=result.certificate.status)), flush=True)


for n, seed in ((n, seed) for n in sizes for seed in SEEDS):
    rng = np.random.default_rng(seed)
    cases = [("[0, 10n]", rng.integers(0, 10 * n + 1, (n, n))), ("[0, n/5]", rng.integers(0, n // 5 + 1, (n, n)))]
    if "--real" in sys.argv:
        cases.append(("real [0, 1)", rng.random((n, n))))
    for name, costs in cases:
        problem = CostMatrix.from_array(costs)
        case = f"{n} {name} seed {seed}"
        seconds, reference = timed(problem, "hungarian")
        print(json.dumps(dict(case=case, run="tree hungarian", seconds=seconds, value=reference.value)), flush=True)
        best = []
        for factor in FACTORS:
            seconds, result = timed(problem, "auction", eps_factor=factor)
            row(case, f"auction factor {factor:g}", seconds, result, reference.value)
            best.append((seconds, factor))
        if name.startswith("real") or n < 8000 or "--no-settings" in sys.argv:
            continue
        for _, factor in sorted(best)[:2]:
            for every, levels in SETTINGS:
                auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = every, levels
                try:
                    seconds, result = timed(problem, "auction", eps_factor=factor)
                finally:
                    auction_device.UPDATE_EVERY, auction_device.UPDATE_LEVELS = 400, 16
                row(case, f"auction factor {factor:g} every {every} levels {levels}", seconds, result,
                    reference.value)
