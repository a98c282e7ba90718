#!/usr/bin/env bash
# Everything the GPU machine is needed for, in as few calls as possible (device time is scarce).
# Run from the repository root after `source .whl/preamble.sh` (see ../shared/device/README.md):
#   bash benchmarks/gpu_session.sh check        # environment + every cuda test (correctness on hardware)
#   bash benchmarks/gpu_session.sh bench NAME.. # benchmarks (gpr, assignment, wbpr), results into $OUT or benchmarks/results
#   bash benchmarks/gpu_session.sh startup      # compile once per machine: warmup twice, the cache test, bench_startup
#   bash benchmarks/gpu_session.sh e2e ROWS     # bench_e2e on the named rows (comma-separated; empty: all)
#   bash benchmarks/gpu_session.sh points [ROWS] # bench_points_exact (issue 14 rows; empty: all)
set -uo pipefail
what=${1:-check}; shift || true
out=${OUT:-benchmarks/results}
mkdir -p "$out"
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/numba-cache}
# The GPU machine sets PYTHONDONTWRITEBYTECODE=1 and its numba-cuda ships without bytecode, so every
# fresh process there byte-compiles ~240 modules (0.8 s) that a pip install would have compiled once.
# Fresh-process timings would measure that artefact: let Python keep its bytecode, in a writable place.
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-/tmp/pycache}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 - <<'PY'
import numpy, scipy, numba
from numba import cuda
print("numpy", numpy.__version__, "scipy", scipy.__version__, "numba", numba.__version__,
      "gpu", cuda.get_current_device().name.decode() if isinstance(cuda.get_current_device().name, bytes) else cuda.get_current_device().name)
PY

case "$what" in
  check)
    python3 -m pytest -q -p no:cacheprovider --durations=15 "$@" \
      tests/test_gpr_cuda.py tests/test_assignment_cuda.py tests/test_wbpr_cuda.py tests/test_kernel_cache.py \
    tests/test_early_context.py 2>&1 | tail -60
    ;;
  startup)
    # the machine is fresh: the first warmup compiles every cuda kernel, the second must compile nothing
    unset NUMBA_CACHE_DIR
    for attempt in first second; do
      echo "=== warmup ($attempt) ==="
      /usr/bin/time -f "%e s wall" python3 -m solvers warmup --backend cuda 2>&1 | tail -4
    done
    python3 -m pytest -q -p no:cacheprovider tests/test_kernel_cache.py 2>&1 | tail -8
    python3 benchmarks/bench_startup.py --backend cuda --repeat 2 --out "$out" 2>&1 | tail -30
    ;;
  e2e)
    unset NUMBA_CACHE_DIR  # the command line's own cache, which `matchscope warmup` fills
    python3 benchmarks/bench_e2e.py --out "$out" ${1:+--rows "$1"} ${E2E_ARGS:-} 2>&1 | tail -30
    ;;
  points)
    python3 benchmarks/bench_points_exact.py --out "$out" ${1:+--rows "$1"} 2>&1 | tail -30
    ;;
  bench)
    for name in "$@"; do
      echo "=== bench $name ==="
      case "$name" in
        gpr) python3 benchmarks/bench_gpr.py --out "$out" ${GPR_ARGS:-} ;;
        assignment) python3 benchmarks/bench_assignment.py --out "$out" ${ASSIGN_ARGS:-} ;;
        wbpr) python3 benchmarks/bench_wbpr.py --out "$out" ${WBPR_ARGS:-} ;;
      esac 2>&1 | tail -80
    done
    ;;
esac
