"""The chunked pinned upload of cost matrices (solvers.targets.staged_upload), run under the CUDA
simulator with buffers of a few rows so every path is taken: many chunks alternating between the two
buffers, a last partial chunk, transposed (strided) sources, float and integer sources, float32 and
float64 targets, and a row
longer than a buffer (the plain-copy fallback)."""
from __future__ import annotations

import json

CODE = """
import json
import numpy as np
from solvers.targets import staged_upload as su
su.STAGED_MIN_BYTES = 0
rng = np.random.default_rng(4)
costs = rng.integers(-500, 500, (37, 53)).astype(np.float64)
out = []
for chunk_rows in (1, 3, 36, 37, 100):
    su.CHUNK_BYTES = chunk_rows * 53 * 8 + 4  # a few float64 rows (more float32 ones), never a whole number
    su.release_staging()
    held = costs.astype(np.int64)  # integers a Problem holds as given go up converted
    for source, dtype in [(costs, np.float32), (costs.T, np.float32), (costs * 0.37, np.float64),
                          (costs.T * 1.5, np.float64), (held, np.float32), (held.T, np.float64),
                          (held.astype(np.int32).T, np.float32)]:
        host = su.upload_matrix(source, dtype).copy_to_host()
        out.append([chunk_rows, str(host.dtype), list(host.shape), bool(host.flags.c_contiguous),
                    bool(np.array_equal(host, source.astype(dtype)))])
su.CHUNK_BYTES = 16  # shorter than one row: the plain copy
host = su.upload_matrix(costs, np.float32).copy_to_host()
out.append(["row too long", str(host.dtype), list(host.shape), True, bool(np.array_equal(host, costs.astype(np.float32)))])
print(json.dumps(out))
"""


def test_chunked_pinned_upload_copies_every_element_in_the_device_dtype(run_cudasim):
    rows = json.loads(run_cudasim(CODE).strip().splitlines()[-1])
    assert len(rows) == 5 * 7 + 1
    for chunk, dtype, shape, contiguous, equal in rows:
        assert equal and contiguous, (chunk, dtype, shape)
        assert dtype in ("float32", "float64") and sorted(shape) == [37, 53]


FLAT = """
import json
import numpy as np
from solvers.targets import staged_upload as su
su.STAGED_MIN_BYTES = 0
values = np.random.default_rng(5).random(1001).astype(np.float32)
out = []
for chunk_bytes in (4 * 7 + 2, 4 * 500, 4 * 1001, 1 << 20):  # many chunks, two, one exactly, one larger
    su.CHUNK_BYTES = chunk_bytes
    su.release_staging()
    for source, dtype in [(values, np.float32), (values.astype(np.float64), np.float64), (values, np.float64)]:
        host = su.upload_flat(source, dtype).copy_to_host()
        out.append([chunk_bytes, str(host.dtype), bool(np.array_equal(host, source.astype(dtype)))])
print(json.dumps(out))
"""


def test_a_flat_array_goes_through_the_same_stages(run_cudasim):
    rows = json.loads(run_cudasim(FLAT).strip().splitlines()[-1])
    assert len(rows) == 12 and all(equal for _, _, equal in rows), rows


LAUNCHER_UPLOAD = """
import json
import numpy as np
from solvers.targets import staged_upload as su
from solvers.targets.cuda import CudaLauncher  # the GPU launcher itself (not the simulator's): its staged path
su.STAGED_MIN_BYTES = 64
su.CHUNK_BYTES = 4 * 37 + 4
su.release_staging()
rng = np.random.default_rng(6)
ints = rng.integers(-2**31, 2**31, 501).astype(np.int64)
frozen = ints.astype(np.int32)
frozen.setflags(write=False)  # a graph's arrays are read-only
out = []
for source, dtype in [(ints.astype(np.int32), np.int64), (ints, np.int32), (ints, np.int64), (frozen, np.int64),
                      (rng.random(501).astype(np.float32), np.float64), (rng.random(501), None), (ints[::2], np.int64)]:
    host = CudaLauncher().upload(source, dtype).copy_to_host()
    want = source.astype(dtype) if dtype is not None else source
    out.append([str(source.dtype), str(host.dtype), bool(host.dtype == want.dtype and np.array_equal(host, want))])
print(json.dumps(out))
"""


def test_the_gpu_launcher_converts_large_index_arrays_on_the_way_and_others_first(run_cudasim):
    """A graph's int32 pointers go up as a solver's int64 (and int64 indices as int32) converted in
    the staged copy, not in a one-thread host pass first; any other conversion is made first."""
    rows = json.loads(run_cudasim(LAUNCHER_UPLOAD).strip().splitlines()[-1])
    assert len(rows) == 7 and all(equal for _, _, equal in rows), rows


LAUNCHER_READ = """
import json
import numpy as np
from numba import cuda
from solvers.targets import staged_upload as su
from solvers.targets.cuda import CudaLauncher  # the GPU launcher itself: its staged read
su.STAGED_MIN_BYTES = 64
rng = np.random.default_rng(7)
out = []
for chunk_bytes in (4 * 37 + 4, 4 * 250, 4 * 501, 1 << 20):  # many chunks (both buffers in turn), two, one, one larger
    su.CHUNK_BYTES = chunk_bytes
    su.release_staging()
    for host, dtype in [(rng.integers(-2**31, 2**31, 501).astype(np.int32), np.int64),
                        (rng.integers(-2**31, 2**31, 501), np.int32), (rng.integers(0, 9, 5).astype(np.int32), np.int64),
                        (rng.random(501).astype(np.float32), np.float64)]:
        got = CudaLauncher().read_as(cuda.to_device(host), dtype)
        want = host.astype(dtype)
        out.append([chunk_bytes, str(got.dtype), bool(got.dtype == want.dtype and np.array_equal(got, want))])
print(json.dumps(out))
"""


def test_the_gpu_launcher_reads_large_index_arrays_back_converted_through_the_stages(run_cudasim):
    """A matching's int32 arrays come back as int64 through the pinned buffers, converted on all
    cores, chunk after chunk in both buffers; small arrays and other types by a plain copy."""
    rows = json.loads(run_cudasim(LAUNCHER_READ).strip().splitlines()[-1])
    assert len(rows) == 16 and all(equal for _, _, equal in rows), rows
