"""Where a fresh process's overhead goes (issue 12): the floors no solve can avoid, then a profile.

    python benchmarks/profile_startup.py [--backend cpu|cuda] [--algo gpr] [--file sample_graphs/rmat_s9.mtx]

Floors, each in its own fresh process: bare python; numpy; numba's import plus its first call of a
cached @njit function (the CPU target's own start); and on cuda the driver's cuInit plus the
primary context (through ctypes, no numba), then numba.cuda's import plus a cached kernel's first
launch. Then ``matchscope solve`` in a fresh process under cProfile, its top entries by cumulative
time. Run ``matchscope warmup`` first so that nothing compiles.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FLOORS = {
    "python": "pass",
    "numpy": "import numpy",
    "numba cached @njit call": """
        import numpy as np
        from numba import njit
        @njit(cache=True)
        def total(a):
            s = 0
            for x in a:
                s += x
            return s
        total(np.arange(10))
    """,
    "cuda driver + primary context (ctypes)": """
        import ctypes
        d = ctypes.CDLL("libcuda.so.1"); dev = ctypes.c_int(); ctx = ctypes.c_void_p()
        assert d.cuInit(0) == 0 and d.cuDeviceGet(ctypes.byref(dev), 0) == 0
        assert d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    """,
    "numba.cuda cached kernel launch": """
        import numpy as np
        from numba import cuda
        @cuda.jit(cache=True)
        def add_one(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += 1
        a = cuda.to_device(np.zeros(32))
        add_one[1, 32](a)
        cuda.synchronize()
    """,
}


def fresh(code: str, cwd: Path) -> float:
    """Seconds a new process takes to run ``code`` (from a file in ``cwd``: numba caches by file)."""
    script = cwd / f"floor_{abs(hash(code))}.py"
    script.write_text(textwrap.dedent(code))
    start = time.perf_counter()
    subprocess.run([sys.executable, str(script)], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                       filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))))
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--algo", default="gpr")
    ap.add_argument("--file", default="sample_graphs/rmat_s9.mtx")
    ap.add_argument("--top", type=int, default=45)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as scratch:  # the floors' own numba cache, warmed by a first run
        for name, code in FLOORS.items():
            if "cuda" in name and args.backend != "cuda":
                continue
            fresh(code, Path(scratch))
            times = sorted(fresh(code, Path(scratch)) for _ in range(3))
            print(f"floor  {name:<42} {times[1]:.3f} s (median of 3)")
    for _ in range(2):
        code = ("import sys; from solvers.cli import main; "
                f"main({['solve', str(ROOT / args.file), '--algo', args.algo, '--backend', args.backend, '--json']!r})")
        wall = fresh(code, Path(tempfile.mkdtemp()))
        print(f"matchscope solve wall {wall:.3f} s")
    prof = Path(tempfile.mkdtemp()) / "solve.prof"
    subprocess.run([sys.executable, "-m", "cProfile", "-o", str(prof), "-m", "solvers", "solve", args.file,
                    "--algo", args.algo, "--backend", args.backend], cwd=ROOT, check=True, capture_output=True)
    import pstats
    stats = pstats.Stats(str(prof))
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
