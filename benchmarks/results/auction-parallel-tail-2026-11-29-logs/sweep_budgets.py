import time, json, sys, statistics, itertools
import numpy as np
import solvers
from solvers.problems import CostMatrix
from solvers.assignment import auction_device as AD
n = 8000
configs = [(8192, 400, 64), (2048, 400, 64), (512, 400, 64), (8192, 200, 64), (2048, 200, 64), (512, 200, 64),
           (2048, 400, 256), (512, 400, 256), (512, 200, 256), (256, 100, 64), (1024, 100, 64), (512, 800, 64)]
for seed in (1, 2):
    rng = np.random.default_rng(seed)
    for name, high in (("[0, 10n]", 10 * n), ("[0, n/5]", n // 5)):
        P = CostMatrix.from_array(rng.integers(0, high + 1, (n, n)))
        ref = solvers.solve(P, "hungarian", backend="cuda")
        ts = []
        for _ in range(3):
            t = time.perf_counter(); solvers.solve(P, "hungarian", backend="cuda"); ts.append(time.perf_counter() - t)
        h = statistics.median(ts)
        print(json.dumps(dict(case=f"{name} seed {seed}", run="hungarian", s=round(h, 4))), flush=True)
        for budget, every, below in configs:
            AD.GS_BUDGET, AD.UPDATE_EVERY, AD.UPDATE_BELOW = budget, every, below
            solvers.solve(P, "auction", backend="cuda")
            ts = []
            for _ in range(3):
                t = time.perf_counter(); r = solvers.solve(P, "auction", backend="cuda"); ts.append(time.perf_counter() - t)
            st = r.stats
            s = statistics.median(ts)
            print(json.dumps(dict(case=f"{name} seed {seed}", run=f"budget {budget} every {every} below {below}", s=round(s, 4), ratio=round(s / h, 2),
                                  ok=bool(r.value == ref.value and r.certificate.status == "optimal"), tail=st["gs_bids"], jr=st["jacobi_rounds"], upd=st["price_updates"], updr=st["price_update_rounds"], launches=st["launches"])), flush=True)
        AD.GS_BUDGET, AD.UPDATE_EVERY, AD.UPDATE_BELOW = 8192, 400, 64
