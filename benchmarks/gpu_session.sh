#!/usr/bin/env bash
# Everything the GPU machine is needed for, in as few calls as possible (device time is scarce).
# Run from the repository root after `source .whl/preamble.sh` (see ../shared/device/README.md):
#   bash benchmarks/gpu_session.sh check        # environment + every cuda test (correctness on hardware)
#   bash benchmarks/gpu_session.sh bench NAME.. # benchmarks (gpr, assignment, wbpr), results into $OUT or benchmarks/results
set -uo pipefail
what=${1:-check}; shift || true
out=${OUT:-benchmarks/results}
mkdir -p "$out"
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/numba-cache}

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
      tests/test_gpr_cuda.py tests/test_assignment_cuda.py tests/test_wbpr_cuda.py 2>&1 | tail -60
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
