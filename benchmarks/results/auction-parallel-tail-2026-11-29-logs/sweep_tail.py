import time, json, sys, statistics, dataclasses
import numpy as np
import solvers
from solvers.problems import CostMatrix
from solvers.assignment import auction_device, auction_kernels as K
n = 8000
factor = float(sys.argv[1]) if len(sys.argv) > 1 else 20.0
configs = [(64, 64, 1024), (256, 64, 1024), (256, 256, 1024), (1024, 64, 1024), (1024, 256, 1024), (256, 64, 256), (1024, 256, 256), (4096, 256, 256)]
plain = K.GS_TAIL
for seed in (1, 2):
    rng = np.random.default_rng(seed)
    for name, high in (("[0, 10n]", 10 * n), ("[0, n/5]", n // 5)):
        P = CostMatrix.from_array(rng.integers(0, high + 1, (n, n)))
        ref = solvers.solve(P, "hungarian", backend="cuda")
        ts = []
        for _ in range(3):
            t = time.perf_counter(); solvers.solve(P, "hungarian", backend="cuda"); ts.append(time.perf_counter() - t)
        print(json.dumps(dict(case=f"{name} seed {seed}", run="hungarian", s=round(statistics.median(ts), 4))), flush=True)
        for thr, below, threads in configs:
            auction_device.GS_THRESHOLD, auction_device.UPDATE_BELOW = thr, below
            K.GS_TAIL = dataclasses.replace(plain, threads=threads)
            solvers.solve(P, "auction", backend="cuda", eps_factor=factor)
            ts = []
            for _ in range(3):
                t = time.perf_counter(); r = solvers.solve(P, "auction", backend="cuda", eps_factor=factor); ts.append(time.perf_counter() - t)
            st = r.stats
            print(json.dumps(dict(case=f"{name} seed {seed}", run=f"thr {thr} below {below} threads {threads}", s=round(statistics.median(ts), 4),
                                  ok=bool(r.value == ref.value and r.certificate.status == "optimal"), tail=st["gs_bids"], jr=st["jacobi_rounds"], upd=st["price_updates"], updr=st["price_update_rounds"], launches=st["launches"])), flush=True)
        auction_device.GS_THRESHOLD, auction_device.UPDATE_BELOW = 64, 64
        K.GS_TAIL = plain
