import json, sys, time, statistics, math
import numpy as np
import solvers
from numba import cuda
from solvers.problems import CostMatrix
from solvers.assignment import auction, auction_device
n = 8000
plain_schedule = auction.epsilon_schedule

def backward(f):
    def schedule(view, eps, scaling, factor):
        scale, eps_list, cap = plain_schedule(view, eps, scaling, factor)
        final = eps_list[-1]; span = scale * view.stats.span
        out = [final]
        while out[-1] * f < span / f:
            out.append(out[-1] * f)
        out = out[::-1]
        return scale, [float(x) for x in out], span + out[0]
    return schedule

def timed(P, **o):
    solvers.solve(P, "auction", backend="cuda", **o)
    ts = []
    for _ in range(3):
        t = time.perf_counter(); r = solvers.solve(P, "auction", backend="cuda", **o); ts.append(time.perf_counter() - t)
    return round(statistics.median(ts), 4), r

for seed in (1, 2):
    rng = np.random.default_rng(seed)
    for name, high in (("[0, 10n]", 10 * n), ("[0, n/5]", n // 5)):
        P = CostMatrix.from_array(rng.integers(0, high + 1, (n, n)))
        ref = solvers.solve(P, "hungarian", backend="cuda").value
        s, r = timed(P)
        print(json.dumps(dict(case=f"{name} seed {seed}", run="default", s=s, ok=r.value == ref, phases=r.stats["phases"])), flush=True)
        for f in (8, 20, 40):
            auction.epsilon_schedule = backward(f)
            try:
                s, r = timed(P)
            finally:
                auction.epsilon_schedule = plain_schedule
            print(json.dumps(dict(case=f"{name} seed {seed}", run=f"backward {f}", s=s, ok=r.value == ref, phases=r.stats["phases"], tail=r.stats["gs_bids"])), flush=True)
        if seed == 1:
            plain = auction_device.AuctionDevice.phase
            rows = []
            def phase(self, eps, first, *a, **k):
                cuda.synchronize(); t = time.perf_counter(); c0 = self.run_counts()
                plain(self, eps, first, *a, **k)
                cuda.synchronize(); dt = time.perf_counter() - t; c1 = self.run_counts()
                rows.append(dict(eps=eps, ms=round(dt * 1e3, 2), **{k2: c1[k2] - c0[k2] for k2 in c1}))
            auction_device.AuctionDevice.phase = phase
            t = time.perf_counter(); r = solvers.solve(P, "auction", backend="cuda"); tt = time.perf_counter() - t
            auction_device.AuctionDevice.phase = plain
            print(name, "phases total", round(tt, 4), "sum", round(sum(x["ms"] for x in rows), 2), "seconds", r.seconds)
            for x in rows: print("  ", json.dumps(x))
