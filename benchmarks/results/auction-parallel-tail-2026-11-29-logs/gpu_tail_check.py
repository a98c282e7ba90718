import time, json, sys
import numpy as np
import solvers
from solvers.problems import CostMatrix
rng = np.random.default_rng(7)
bad = 0
for n in (300, 2000, 8000):
    for kind in ("ties", "wide", "real", "rect"):
        if kind == "ties": c = rng.integers(0, max(2, n // 50), (n, n))
        elif kind == "wide": c = rng.integers(0, 10 * n, (n, n))
        elif kind == "real": c = rng.random((n, n))
        else: c = rng.integers(0, n // 5 + 1, (n // 2, n))
        P = CostMatrix.from_array(c)
        ref = solvers.solve(P, "hungarian", backend="cuda").value
        vals, ts, bids = [], [], []
        for rep in range(4):
            t = time.perf_counter(); r = solvers.solve(P, "auction", backend="cuda"); ts.append(time.perf_counter() - t)
            vals.append(r.value); bids.append(r.stats["gs_bids"])
            ok = abs(r.value - ref) <= 1e-9 * max(1, abs(ref)) and r.certificate.status == "optimal"
            bad += not ok
        print(json.dumps(dict(n=n, kind=kind, ref=ref, vals_equal=all(abs(v - ref) <= 1e-9 * max(1, abs(ref)) for v in vals), cert=r.certificate.status, times=[round(x, 4) for x in ts], tail_bids=bids)), flush=True)
print("BAD", bad)
