"""Where a wbpr run spends its time: residual build, preflow, upload, push-relabel launches, global
relabels and status reads, per instance of the benchmark suite (each step synchronised, so the sum is a
little above an unprofiled run). A diagnostic for tuning, not a benchmark: no speed claims come from it.

    python benchmarks/profile_wbpr.py                       # cuda, a few suite instances, vc+rcsr
    python benchmarks/profile_wbpr.py --backend cpu --instances snap_random_100k --combos vc+rcsr,tc+rcsr
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_wbpr  # noqa: E402
from solvers.flow import residual as residual_module  # noqa: E402
from solvers.flow import wbpr, wbpr_device  # noqa: E402
from solvers.telemetry import NULL  # noqa: E402

DEFAULT = "washington_64x64,genrmf_16,washington_256x256,snap_random_100k,snap_powerlaw_100k,snap_powerlaw_300k"


class Timings:
    def __init__(self, sync):
        self.sync = sync
        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)

    def wrap(self, name, fn):
        def timed(*args, **kwargs):
            self.sync()
            start = time.perf_counter()
            out = fn(*args, **kwargs)
            self.sync()
            self.seconds[name] += time.perf_counter() - start
            self.calls[name] += 1
            return out
        return timed


class ProfiledEngine:
    def __init__(self, engine, timings):
        self._engine = engine
        for name in ("push_relabel", "global_relabel", "status", "residual", "counters", "reopen_stranded"):
            setattr(self, name, timings.wrap(name, getattr(engine, name)))

    def __getattr__(self, name):
        return getattr(self._engine, name)


def profile(problem, backend, mode, csr, sync):
    timings = Timings(sync)
    # wbpr.run imports these where it runs: patch them at their homes
    original_build, original_preflow = residual_module.build_residual, wbpr.preflow
    original_engine = wbpr_device.WbprDevice
    residual_module.build_residual = timings.wrap("build residual", original_build)
    wbpr.preflow = timings.wrap("preflow", original_preflow)
    engine_upload = timings.wrap("engine + upload", original_engine)
    wbpr_device.WbprDevice = lambda *a, **k: ProfiledEngine(engine_upload(*a, **k), timings)
    try:
        start = time.perf_counter()
        solution = wbpr.run(problem, backend, NULL, mode=mode, csr=csr)
        total = time.perf_counter() - start
    finally:
        residual_module.build_residual, wbpr.preflow = original_build, original_preflow
        wbpr_device.WbprDevice = original_engine
    return total, solution, timings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--instances", default=DEFAULT)
    parser.add_argument("--combos", default="vc+rcsr")
    args = parser.parse_args(argv)
    sync = lambda: None  # noqa: E731
    if args.backend == "cuda":
        from numba import cuda
        sync = cuda.synchronize
    catalogue = {name: (kind, params) for suite in bench_wbpr.FLOWS.values() for name, kind, params in suite}
    for name in args.instances.split(","):
        kind, params = catalogue[name]
        net = bench_wbpr.make_network(kind, params)
        for combo in args.combos.split(","):
            mode, csr = combo.split("+")
            profile(net, args.backend, mode, csr, sync)  # warm-up: compilation
            total, solution, timings = profile(net, args.backend, mode, csr, sync)
            parts = "  ".join(f"{key} {seconds * 1e3:.1f} ms/{timings.calls[key]}"
                              for key, seconds in timings.seconds.items())
            print(f"{name:22s} {combo:8s} total {total * 1e3:8.1f} ms  value {solution.value}  "
                  f"launches {solution.stats['launches']} (return {solution.stats['return_launches']})  | {parts}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
