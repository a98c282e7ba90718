#!/usr/bin/env bash
# This stop's work on the GPU machine (issues 13 to 16, and the certificates), results into $OUT:
#   source .whl/preamble.sh; bash benchmarks/gpu_today.sh tests points batch   # then: ... scale-out
#   on a machine with several GPUs: bash benchmarks/gpu_today.sh tests multi-gpu
#   the whole non-GUI suite: bash benchmarks/gpu_today.sh suite-1, then (another command) suite-2
set -uo pipefail
out=${OUT:-benchmarks/results}
mkdir -p "$out"
export NUMBA_CACHE_DIR=/tmp/numba-cache
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/pycache
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for part in "$@"; do
  case "$part" in
    gpu-tests)
      echo "=== the GPU tests of the changed paths (uploads, memsets, certificates, held integers)"
      timeout 420 python3 -m pytest -q -p no:cacheprovider tests/test_batch_device.py tests/test_certify_device.py \
        tests/test_assignment_cuda.py tests/test_gpr_cuda.py tests/test_wbpr_cuda.py tests/test_held_integers.py \
        tests/test_staged_upload.py -k "gpu or GPU or cuda" 2>&1 | tail -8 ;;
    transpose-tests)
      echo "=== the column lists built on the GPU, and the G-PR and matching-certificate GPU tests around them (issue 13)"
      timeout 400 python3 -m pytest -q -p no:cacheprovider tests/test_transpose_device.py tests/test_gpr_cuda.py \
        tests/test_konig_device.py tests/test_gpr.py -k "gpu or GPU or ptx or PTX or (cuda and not cudasim)" 2>&1 | tail -8 ;;
    cli)
      echo "=== the command line on the R-MAT .mtx, fresh processes: this checkout against _baseline (issue 13)"
      unset NUMBA_CACHE_DIR  # the command line's own cache
      timeout 400 python3 benchmarks/probe_cli_load.py --rows "${CLI_ROWS:-rmat-21-ef8}" --repeat 3 \
        ${BASELINE:+--baseline "$BASELINE"} 2>&1 | tail -14
      export NUMBA_CACHE_DIR=/tmp/numba-cache ;;
    profile)
      echo "=== host overhead, warm API: cProfile of one solve per row (issue 13)"
      timeout 300 python3 benchmarks/profile_host_overhead.py --rows "${PROFILE_ROWS:-uniform-3M-deg4,rmat-21-ef8}" \
        --top 18 2>&1 | grep -v -i "warn" | tail -120 ;;
    upload-check)
      echo "=== held integers checked in the pass that uploads them, and the mixed checksum: this checkout against \$BASELINE, alternating (issue 13)"
      rows=${CHECK_ROWS:-rect-3000x9000,rect-1000x20000,dense-8000-int,tall-9000x3000}
      for tree in . "$BASELINE" . "$BASELINE" . "$BASELINE"; do
        echo "--- ${tree}"
        (cd "$tree" && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 benchmarks/profile_host_overhead.py --rows "$rows" \
          --top 0 --repeat "${CHECK_REPEAT:-15}" 2>&1 | grep -v -i warn | tail -8)
      done ;;
    tests)
      echo "=== GPU tests: the Hungarian on point sets, the batch kernels"
      timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_hungarian_points.py tests/test_batch_device.py tests/test_certify_points_device.py \
        -k "gpu or GPU" 2>&1 | tail -8
      echo "=== the batch warm-up on cuda, then a fresh process: first calls of other batches (seconds; a compile takes several)"
      export NUMBA_CACHE_DIR=/tmp/numba-cache-warm
      timeout 200 python3 -c "import time; from solvers import warmup; t = time.perf_counter(); warmup.warm_batches('cuda'); print(f'warm_batches cuda {time.perf_counter() - t:.1f} s')"
      timeout 120 python3 -c "
import time, numpy as np, solvers
from numba import cuda
rng = np.random.default_rng(3)
for label, data in (('float32 50x40x40', rng.random((50, 40, 40), dtype=np.float32)), ('float64 9x30x300', rng.random((9, 30, 300))),
                    ('ragged', [rng.random((n, n + 3)) for n in (5, 140, 700)]), ('device float32', cuda.to_device(rng.random((20, 8, 9), dtype=np.float32)))):
    t = time.perf_counter(); r = solvers.solve_batch(data, backend='cuda'); cuda.synchronize()
    print(f'{label}: first call {time.perf_counter() - t:.2f} s, all certified {r.all_certified}')"
      export NUMBA_CACHE_DIR=/tmp/numba-cache ;;
    held)
      echo "=== integer matrices held as given (issue 13): the cuda tests around them, then the dense stages"
      timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_assignment_cuda.py tests/test_certify_device.py \
        tests/test_held_integers.py tests/test_staged_upload.py 2>&1 | tail -8
      timeout 200 python3 benchmarks/probe_dense_stages.py --repeats 5 2>&1 | tail -6 ;;
    points)
      echo "=== points (issue 14)"
      timeout 200 python3 benchmarks/bench_points_exact.py --out "$out" --no-series-peers --repeat 3 \
        --rows pair:8000,unrelated:8000,series:100x8000,pair:1000000 2>&1 | tail -16 ;;
    exact)
      echo "=== certified means exactly optimal: the near-tie search on the GPU (batch kernel) and the single path"
      timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_batch_device.py tests/test_certify_device.py \
        tests/test_near_ties.py tests/test_exact_refutation.py -k "gpu or GPU or near or refut or huge or swap" 2>&1 | tail -6
      timeout 300 python3 benchmarks/probe_certified_exact.py --backend cuda --items 200 \
        --out "$out/certified-exact-$(date +%F)-cuda.md" 2>&1 | tail -25 ;;
    probe)
      echo "=== solve_batch stage by stage (issue 15)"
      timeout 240 python3 benchmarks/probe_batch_stages.py 2>&1 | tail -45 ;;
    early-solve)
      echo "=== a host batch solved while it goes up (issue 15): its GPU tests, then the from-numpy clock with and without"
      timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_batch_early_solve.py tests/test_batch_device.py \
        tests/test_staged_upload.py -k "gpu or GPU or cuda" 2>&1 | tail -8
      timeout 300 python3 benchmarks/probe_early_solve.py --repeats "${EARLY_REPEATS:-9}" 2>&1 \
        | tee "$out/early-solve.jsonl" | tail -8 ;;
    auction-ab)
      echo "=== the auction against the tree Hungarian at n = 8000 (issue 14): this checkout and \$BASELINE, alternating"
      root=$PWD
      for tree in . "$BASELINE" . "$BASELINE"; do
        echo "--- ${tree}"
        (cd "$tree" && NUMBA_CACHE_DIR=/tmp/nc-$(echo "$tree" | tr -c 'a-zA-Z0-9' _) PYTHONPATH=$PWD:${PYTHONPATH:-} \
          timeout 200 python3 "$root/benchmarks/probe_auction_quick.py" "${AUCTION_N:-8000}" 2 2>&1 | grep -v -i warn | tail -3)
      done ;;
    batch)
      echo "=== batch on the GPU (issue 15)"
      timeout 150 python3 benchmarks/bench_batch_gpu.py --out "$out/batch-gpu-final.json" --repeats 3 --scipy-sample 50 2>&1 \
        | grep -v "^{" | tail -12 ;;
    scale-out)
      echo "=== scale-out on one GPU: one worker, then two sharing it (issue 16)"
      timeout 400 python3 benchmarks/bench_scale_out.py --gpu --laps 4000 --n 256 --frames 100 --workers-per-gpu 2 \
        --out "$out/scale-out-gpu.json" 2>&1 | grep -v -E "distributed\.|INFO|WARNING" | tail -14 ;;
    suite-1|suite-2)
      # the whole non-GUI suite on the GPU in two commands (each under the device's ten minutes on
      # 14 workers; the explorer's tests need PySide6, which the GPU machine lacks); failures named
      echo "=== the non-GUI test suite, half ${part#suite-} of 2"
      files=$(ls tests/test_*.py | grep -v test_gui_ | awk -v half="${part#suite-}" '{ if ((NR <= 28) == (half == 1)) print }')
      timeout "${SUITE_LIMIT:-540}" python3 -m pytest -q -p no:cacheprovider -n "${SUITE_JOBS:-14}" --dist loadfile \
        -rfE --tb=line $files 2>&1 | grep -v -i -E "warn|^\.+ *\[" | tail -40 ;;
    multi-gpu)
      echo "=== scale-out over every GPU: one worker per GPU, 1 GPU then all (issue 16's goal sizes)"
      timeout 450 python3 benchmarks/bench_scale_out.py --gpu --out "$out/scale-out-multi-gpu.json" 2>&1 \
        | grep -v -E "distributed\.|INFO|WARNING" | tail -14 ;;
  esac
done
