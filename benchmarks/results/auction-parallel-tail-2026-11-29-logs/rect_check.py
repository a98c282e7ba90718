import time, json, sys, statistics
import numpy as np
import solvers
from solvers.problems import CostMatrix
rng = np.random.default_rng(21)
bad = 0
for shape, kind in (((2000, 5000), "int"), ((4000, 8000), "int"), ((3000, 6000), "real"), ((1500, 4000), "forbid"), ((7000, 8000), "int")):
    if kind == "int": c = rng.integers(0, shape[0] // 5 + 1, shape).astype(float)
    elif kind == "real": c = rng.random(shape)
    else:
        c = rng.integers(0, 1000, shape).astype(float); c[rng.random(shape) < 0.3] = np.inf
    P = CostMatrix.from_array(c)
    ref = solvers.solve(P, "hungarian", backend="cuda").value
    solvers.solve(P, "auction", backend="cuda")
    ts, st = [], None
    for _ in range(3):
        t = time.perf_counter(); r = solvers.solve(P, "auction", backend="cuda"); ts.append(time.perf_counter() - t)
        ok = abs(r.value - ref) <= 1e-9 * max(1, abs(ref)) and r.certificate.status == "optimal"
        bad += not ok
    s = r.stats
    print(json.dumps(dict(shape=shape, kind=kind, s=round(statistics.median(ts), 4), ok=bool(ok), reverse_rounds=s.get("reverse_rounds"),
                          reverse_jacobi=s.get("reverse_jacobi_rounds", s.get("reverse_jacobi_launch_rounds")), reverse_gs=s.get("reverse_gs_bids"), launches=s.get("launches"))), flush=True)
print("BAD", bad)
