#!/usr/bin/env bash
# This stop's work on the GPU machine (issues 14, 15, 16), results into $OUT:
#   source .whl/preamble.sh; bash benchmarks/gpu_today.sh tests points batch   # then: ... scale-out
#   on a machine with several GPUs: bash benchmarks/gpu_today.sh tests multi-gpu
set -uo pipefail
out=${OUT:-benchmarks/results}
mkdir -p "$out"
export NUMBA_CACHE_DIR=/tmp/numba-cache
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/pycache
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for part in "$@"; do
  case "$part" in
    tests)
      echo "=== GPU tests: the Hungarian on point sets, the batch kernels"
      timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_hungarian_points.py tests/test_batch_device.py tests/test_certify_points_device.py \
        -k "gpu or GPU" 2>&1 | tail -8 ;;
    points)
      echo "=== points (issue 14)"
      timeout 200 python3 benchmarks/bench_points_exact.py --out "$out" --no-series-peers --repeat 3 \
        --rows pair:8000,unrelated:8000,series:100x8000,pair:1000000 2>&1 | tail -16 ;;
    batch)
      echo "=== batch on the GPU (issue 15)"
      timeout 150 python3 benchmarks/bench_batch_gpu.py --out "$out/batch-gpu-final.json" --repeats 5 2>&1 | tail -16 ;;
    scale-out)
      echo "=== scale-out on one GPU: one worker, then two sharing it (issue 16)"
      timeout 400 python3 benchmarks/bench_scale_out.py --gpu --laps 4000 --n 256 --frames 100 --workers-per-gpu 2 \
        --out "$out/scale-out-gpu.json" 2>&1 | grep -v -E "distributed\.|INFO|WARNING" | tail -14 ;;
    multi-gpu)
      echo "=== scale-out over every GPU: one worker per GPU, 1 GPU then all (issue 16's goal sizes)"
      timeout 450 python3 benchmarks/bench_scale_out.py --gpu --out "$out/scale-out-multi-gpu.json" 2>&1 \
        | grep -v -E "distributed\.|INFO|WARNING" | tail -14 ;;
  esac
done
