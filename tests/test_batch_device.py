"""The GPU batch kernels (solvers.batch.device, device_kernels): under numba's CUDA simulator on tiny
items (one simulator process for the whole module: square, wide, tall via the transposed packing,
integer ties, float32, forbidden pairs, an infeasible item, an item wider than the shared-memory
limit), every value equal to scipy's, every answer passing the device certificate, the certificate
refusing tampered duals and assignments, and repeated runs identical; on a real GPU (skipped
without one) 1000 items of 64 x 64 and device-resident inputs against scipy."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from conftest import result_line, run_early_cudasim
from solvers.targets import cuda_available

# shared by the simulator child and the GPU tests: packing and the cases (seeded)
HELPERS = r'''
import numpy as np
from types import SimpleNamespace
from scipy.optimize import linear_sum_assignment


def pack(mats, dtype=np.float64):
    flat, rows, cols, transposed = [], [], [], []
    for M in mats:
        M = np.asarray(M, dtype=np.float64)
        tall = M.shape[0] > M.shape[1]
        if tall:
            M = M.T
        flat.append(np.ascontiguousarray(M, dtype=dtype).ravel())
        rows.append(M.shape[0])
        cols.append(M.shape[1])
        transposed.append(tall)
    sizes = [f.size for f in flat]
    prefix = lambda a: np.concatenate([[0], np.cumsum(a)]).astype(np.int64)
    return SimpleNamespace(costs=np.concatenate(flat), offsets=prefix(sizes), rows=np.array(rows, np.int64),
                           cols=np.array(cols, np.int64), transposed=np.array(transposed),
                           row_offsets=prefix(rows), col_offsets=prefix(cols))


def scipy_value(M):
    """scipy's optimum (None when infeasible)."""
    try:
        r, c = linear_sum_assignment(M)
    except ValueError:
        return None
    value = float(np.asarray(M, dtype=np.float64)[r, c].sum())
    return value if np.isfinite(value) else None


def item_value(packed, sol, b):
    n, m = int(packed.rows[b]), int(packed.cols[b])
    C = packed.costs[packed.offsets[b]:packed.offsets[b + 1]].reshape(n, m).astype(np.float64)
    cols = sol.row_to_col[packed.row_offsets[b]:packed.row_offsets[b] + n]
    return float(C[np.arange(n), cols].sum())


def cases():
    rng = np.random.default_rng(15)
    mats = [rng.random((5, 5)), rng.random((6, 6)) * 100 - 50, rng.random((4, 7)), rng.random((3, 8)),
            rng.random((7, 4)), rng.random((8, 5)),                            # tall: stored transposed
            rng.integers(0, 3, (6, 6)).astype(float), rng.integers(0, 2, (5, 8)).astype(float),  # ties
            rng.integers(0, 3, (8, 6)).astype(float), np.zeros((4, 4)),
            rng.integers(-5, 5, (1, 1)).astype(float), rng.random((1, 6))]
    forbidden = rng.random((6, 6))
    forbidden[rng.random((6, 6)) < 0.35] = np.inf
    perm = rng.permutation(6)
    forbidden[0, (perm[0] + 1) % 6] = np.inf
    forbidden[np.arange(6), perm] = rng.random(6)                     # still feasible
    mats.append(forbidden)
    wide_forbidden = rng.integers(0, 9, (4, 9)).astype(float)
    wide_forbidden[rng.random((4, 9)) < 0.4] = np.inf
    wide_forbidden[np.arange(4), [1, 3, 5, 7]] = 4.0
    mats.append(wide_forbidden)
    infeasible = rng.random((4, 5))
    infeasible[:2, :] = np.inf
    infeasible[:2, 2] = 1.0                                           # two rows, one column
    mats.append(infeasible)
    mats.append(rng.random((3, 6)))                                   # after the infeasible one
    return mats
'''

SIM_CODE = HELPERS + r'''
import json
from solvers.batch import device_kernels as K
from solvers.batch.device import certify_solution, solve_packed_cudasim

out = {}
mats = cases()
packed = pack(mats)
first = solve_packed_cudasim(packed)
runs = [solve_packed_cudasim(packed) for _ in range(1)]
blocks = solve_packed_cudasim(packed, warp_cols=0)                 # every item by the block kernel
out["block_kernel_same"] = all(np.array_equal(getattr(first, f), getattr(blocks, f))
                               for f in ("row_to_col", "u", "v", "iterations", "status"))
out["identical"] = all(np.array_equal(getattr(first, f), getattr(r, f), equal_nan=True)
                       for r in runs for f in ("row_to_col", "u", "v", "iterations", "status"))
out["status"] = first.status.tolist()
out["iterations"] = first.iterations.tolist()
out["values"] = [item_value(packed, first, b) if first.status[b] == 0 else None for b in range(len(mats))]
out["scipy"] = [scipy_value(M) for M in mats]
out["shapes"] = [[int(packed.rows[b]), int(packed.cols[b])] for b in range(len(mats))]
out["v_max"] = [float(first.v[packed.col_offsets[b]:packed.col_offsets[b + 1]].max()) for b in range(len(mats))]
cert = certify_solution(packed, first, backend="cudasim")
out["cert"] = {k: getattr(cert, k).tolist() for k in ("violation", "value", "dual", "scale", "valid")}

# float32 costs (values of float32 entries, duals in float64)
rng = np.random.default_rng(7)
mats32 = [rng.random((5, 6)).astype(np.float32), rng.random((6, 4)).astype(np.float32),
          (rng.random((5, 5)) * 1000).astype(np.float32)]
p32 = pack(mats32, np.float32)
s32 = solve_packed_cudasim(p32)
out["f32"] = {"dtype": str(p32.costs.dtype), "status": s32.status.tolist(),
              "values": [item_value(p32, s32, b) for b in range(3)],
              "scipy": [scipy_value(M.astype(np.float64)) for M in mats32],
              "violation": certify_solution(p32, s32, backend="cudasim").violation.tolist()}

# wider than the shared-memory limit: the global-scratch path
wide = [rng.random((3, K.SMEM_COLS + 9)), rng.integers(0, 4, (2, K.SMEM_COLS + 1)).astype(float)]
pw = pack(wide)
sw = solve_packed_cudasim(pw)
cw = certify_solution(pw, sw, backend="cudasim")
out["wide"] = {"status": sw.status.tolist(), "values": [item_value(pw, sw, b) for b in range(2)],
               "scipy": [scipy_value(M) for M in wide], "violation": cw.violation.tolist(),
               "valid": cw.valid.tolist()}

# larger square items: the reductions, then searches
sq = [rng.random((24, 24)), rng.integers(0, 4, (24, 24)).astype(float), rng.integers(0, 2, (20, 20)).astype(float),
      rng.random((17, 17)) * 200 - 100, np.ones((9, 9)), rng.integers(0, 50, (30, 30)).astype(float)]
hole = rng.random((16, 16))
hole[rng.random((16, 16)) < 0.5] = np.inf
hole[np.arange(16), rng.permutation(16)] = rng.random(16)
sq.append(hole)
psq = pack(sq)
ssq = solve_packed_cudasim(psq)
bsq = solve_packed_cudasim(psq, warp_cols=0)
csq = certify_solution(psq, ssq, backend="cudasim")
out["squares"] = {"status": ssq.status.tolist(), "values": [item_value(psq, ssq, b) for b in range(len(sq))],
                  "scipy": [scipy_value(M) for M in sq], "integer": [1, 2, 4, 5],
                  "valid": csq.valid.tolist(), "violation": csq.violation.tolist(),
                  "iterations": ssq.iterations.tolist(),
                  "same_as_block": all(np.array_equal(getattr(ssq, f), getattr(bsq, f))
                                       for f in ("row_to_col", "u", "v", "iterations", "status"))}

# tampering: each change must be seen by the certificate, on its item only
def tampered(change):
    sol = type(first)(**{f: getattr(first, f).copy() for f in ("row_to_col", "u", "v", "iterations", "status")})
    change(sol)
    c = certify_solution(packed, sol, backend="cudasim")
    return {"violation": c.violation.tolist(), "valid": c.valid.tolist()}

ro, co = packed.row_offsets, packed.col_offsets
def raise_u(s): s.u[ro[0]] += 0.25                            # item 0: u_0 + v_j > c_0j somewhere
def swap(s): s.row_to_col[ro[1]], s.row_to_col[ro[1] + 1] = s.row_to_col[ro[1] + 1], s.row_to_col[ro[1]]
def twice(s): s.row_to_col[ro[2] + 1] = s.row_to_col[ro[2]]   # item 2: one column twice
def free_v(s):                                              # item 3 (3 x 8): an unassigned column's v
    taken = set(s.row_to_col[ro[3]:ro[4]].tolist())
    j = min(set(range(8)) - taken)
    s.v[co[3] + j] = -0.5
def positive_v(s):                                          # item 4 (4 x 7): the same u + v, max v = 0.125
    shift = 0.125 - s.v[co[4]:co[5]].max()
    s.v[co[4]:co[5]] += shift
    s.u[ro[4]:ro[5]] -= shift
def out_of_range(s): s.row_to_col[ro[7]] = 8                  # item 7 (5 x 8)
def forbidden_pair(s):                                      # item 12: a row onto a +inf pair
    M = packed.costs[packed.offsets[12]:packed.offsets[13]].reshape(6, 6)
    s.row_to_col[ro[12]] = int(np.flatnonzero(np.isinf(M[0]))[0])
out["tamper"] = {f.__name__: tampered(f) for f in (raise_u, swap, twice, free_v, positive_v, out_of_range,
                                                    forbidden_pair)}

# the device's exact certificate: certify_batch.certify_packed's dict, bit for bit
from numba import cuda
from solvers.batch import device as D
from solvers.batch.certify_batch import certify_packed as host_certify


def on_device(p):
    q = SimpleNamespace(**vars(p))
    q.costs = cuda.to_device(p.costs)
    q.size = len(p.rows)
    p.size = len(p.rows)
    return q


def same_certificate(p, sol):
    mine = D.certify_packed(on_device(p), sol)
    ref = host_certify(p, sol)
    return {k: bool(np.array_equal(mine[k], ref[k], equal_nan=True)) for k in ref}, ref["reason"].tolist()


def u_nan(s): s.u[ro[5]] = np.inf                              # item 5: a non-finite dual (code 7)
def u_nudge(s): s.u[ro[0] + 2] += 1e-3                         # item 0: u_i + v_j > c_ij (code 4)
def loose(s):                                               # item 6 (integer): a worse assignment,
    r = s.row_to_col[ro[6]:ro[7]].copy()                    # duals kept: not tight (code 5)
    s.row_to_col[ro[6]:ro[7]] = np.roll(r, 1)
checks = {}
codes = {}
for f in (None, raise_u, swap, twice, free_v, positive_v, out_of_range, forbidden_pair, u_nan, u_nudge, loose):
    sol = type(first)(**{k: getattr(first, k).copy() for k in ("row_to_col", "u", "v", "iterations", "status")})
    if f is not None:
        f(sol)
    name = "solved" if f is None else f.__name__
    checks[name], codes[name] = same_certificate(packed, sol)
checks["squares"], codes["squares"] = same_certificate(psq, ssq)
checks["f32"], codes["f32"] = same_certificate(p32, s32)
checks["wide"], codes["wide"] = same_certificate(pw, sw)
psub = pack([np.array([[5e-324, 1e-310], [1e-310, 5e-324]]), rng.integers(0, 5, (4, 4)) * 1e-320,
             rng.integers(0, 9, (3, 5)) * 1e-315])               # subnormal costs: the tolerance's TINY term
ssub = solve_packed_cudasim(psub)
checks["subnormal"], codes["subnormal"] = same_certificate(psub, ssub)
huge = rng.integers(0, 100, (6, 6)).astype(np.float64)
huge[0] += 1e18                                              # one row near 1e18: the allowance is ~1e5
phuge = pack([huge])
shuge = solve_packed_cudasim(phuge)
worse = type(first)(**{k: getattr(shuge, k).copy() for k in ("row_to_col", "u", "v", "iterations", "status")})
worse.row_to_col[[1, 2]] = worse.row_to_col[[2, 1]]          # rows 1 and 2 trade columns: the duals stay
checks["huge row"], codes["huge row"] = same_certificate(phuge, worse)
out["huge_row_doubt"] = int(host_certify(phuge, worse)["doubt"][0])
claimed = type(first)(**{k: getattr(first, k).copy() for k in ("row_to_col", "u", "v", "iterations", "status")})
claimed.status[0] = 1                                        # item 0 claimed infeasible: refuted (code 9)
checks["claimed"], codes["claimed"] = same_certificate(packed, claimed)
out["device_certificate"] = {"same": checks, "codes": codes}

# device inputs: packed on the device as the host packs them, bad values named alike
from solvers.batch.inputs import prepare_batch
from solvers.errors import InputError
dev_in = {}
for label, host in (("float64", rng.random((3, 4, 5))), ("tall float32", rng.random((2, 6, 4)).astype(np.float32)),
                    ("int64", rng.integers(-9, 9, (2, 3, 3))), ("int32 tall", rng.integers(-9, 9, (2, 5, 3)).astype(np.int32))):
    got = D.prepare_device(cuda.to_device(host))
    ref = prepare_batch(host)
    dev_in[label] = {
        "costs": bool(np.array_equal(np.asarray(got.packed.costs.copy_to_host()), ref.packed.costs)),
        "dtype": str(np.asarray(got.packed.costs.copy_to_host()).dtype) == str(ref.packed.costs.dtype),
        "index": all(np.array_equal(getattr(got.packed, k), getattr(ref.packed, k))
                     for k in ("offsets", "rows", "cols", "transposed", "row_offsets", "col_offsets")),
        "shape": got.regular and got.item_shape == ref.item_shape and np.array_equal(got.shapes, ref.shapes)}
errors = {}
for label, host in (("nan", rng.random((3, 4, 4))), ("neg_inf", rng.random((2, 5, 3))), ("huge", rng.random((2, 3, 3)))):
    if label == "nan":
        host[1, 2, 3] = np.nan
    elif label == "neg_inf":
        host[1, 4, 0] = -np.inf
    else:
        host[1, 0, 0] = 1e307
    messages = []
    for prepare, data in ((D.prepare_device, cuda.to_device(host)), (prepare_batch, host)):
        try:
            prepare(data)
            messages.append(None)
        except InputError as e:
            messages.append(str(e))
    errors[label] = messages
out["device_inputs"] = {"packed": dev_in, "errors": errors}

# checksums: the device's (float64_bits) equal the host scan's (a bit cast) on awkward values
import solvers.batch.certify_batch as CB
from solvers.batch.device import item_checksums
odd = np.array([0.0, -0.0, np.inf, 5e-324, -2.5e-310, 1e300, -1e-300, 3.0, np.pi, -7.25, 2.0 ** -1022, 1 - 2 ** -53])
sums = {}
for label, dtype in (("float64", np.float64), ("float32", np.float32)):
    mats_odd = [rng.permutation(odd).reshape(3, 4).astype(dtype) for _ in range(3)] + [rng.random((5, 2)).astype(dtype)]
    p_odd = prepare_batch(mats_odd).packed
    sums[label] = bool(np.array_equal(item_checksums(cuda.to_device(p_odd.costs), p_odd.offsets), p_odd.checksums))

# host costs: certified on the solver's GPU copy once its checksums match, else on the host
host_calls = []
real_host = CB.certify_packed
CB.certify_packed = lambda *a: host_calls.append(1) or real_host(*a)
checked = prepare_batch(mats[:6]).packed  # square, wide and tall (transposed) items
sol = solve_packed_cudasim(checked)
mine = D.certify_packed(checked, sol)
ref = real_host(checked, sol)
copy_used = {"same": all(np.array_equal(mine[k], ref[k], equal_nan=True) for k in ref), "host_calls": len(host_calls)}
sol.device_costs[int(checked.offsets[3]) + 1] = 0.123                 # the GPU copy no longer holds the costs
mine = D.certify_packed(checked, sol)
copy_changed = {"same": all(np.array_equal(mine[k], ref[k], equal_nan=True) for k in ref), "host_calls": len(host_calls)}
CB.certify_packed = real_host

# a GPU batch whose costs change during the solve: that item is not certified, the others are
square = rng.random((4, 5, 5))
given = D.prepare_device(cuda.to_device(square))
sol = solve_packed_cudasim(given.packed)
given.packed.costs[int(given.packed.offsets[2]) + 3] = 0.5
after = D.certify_packed(given.packed, sol)
out["checksums"] = {"equal": sums, "copy_used": copy_used, "copy_changed": copy_changed,
                    "device_changed": after["reason"].tolist(), "explained": CB.explain(int(after["reason"][2]), 0, 0, 0, 0)}
print("RESULT " + json.dumps(out))
'''
EARLY_CUDASIM = SIM_CODE  # started when the tests are collected (conftest): the longest simulator run here
EARLY_CUDASIM_FIXTURE = "sim"


@pytest.fixture(scope="module")
def sim():
    return result_line(run_early_cudasim(__name__, SIM_CODE, timeout=600))


def test_values_equal_scipy_on_every_item(sim):
    for b, (mine, ref) in enumerate(zip(sim["values"], sim["scipy"])):
        if ref is None:
            assert sim["status"][b] == 1, b
            continue
        assert sim["status"][b] == 0, b
        assert mine == pytest.approx(ref, rel=1e-12, abs=1e-12), (b, mine, ref)
    assert sim["status"].count(1) == 1 and sim["status"][-2] == 1  # exactly the infeasible item
    assert sim["status"][-1] == 0  # the item after it is solved as usual


def test_integer_ties_are_exact(sim):
    for b in (6, 7, 8, 9, 10, 13):
        assert sim["values"][b] == sim["scipy"][b], b


def test_duals_are_certified(sim):
    cert = sim["cert"]
    for b, state in enumerate(sim["status"]):
        if state != 0:
            assert cert["valid"][b] == 0  # an infeasible item leaves rows unassigned
            continue
        assert cert["valid"][b] == 1, b
        assert cert["violation"][b] <= 1e-12 * max(1.0, cert["scale"][b]), (b, cert["violation"][b])
        assert cert["value"][b] == pytest.approx(sim["values"][b], rel=1e-12, abs=1e-12)
        assert cert["dual"][b] == pytest.approx(cert["value"][b], rel=1e-9, abs=1e-9)  # no gap
        if sim["shapes"][b][0] != sim["shapes"][b][1]:
            assert sim["v_max"][b] <= 0.0  # the rectangular LP's sign (a square item's v is free)


def test_float32_costs(sim):
    f32 = sim["f32"]
    assert f32["dtype"] == "float32" and f32["status"] == [0, 0, 0]
    for mine, ref in zip(f32["values"], f32["scipy"]):
        assert mine == pytest.approx(ref, rel=1e-12)
    assert max(f32["violation"]) <= 1e-9


def test_items_wider_than_shared_memory(sim):
    wide = sim["wide"]
    assert wide["status"] == [0, 0] and wide["valid"] == [1, 1]
    assert wide["values"][0] == pytest.approx(wide["scipy"][0], rel=1e-12)
    assert wide["values"][1] == wide["scipy"][1]
    assert max(wide["violation"]) <= 1e-12


def test_repeated_runs_identical(sim):
    assert sim["identical"]
    assert sim["block_kernel_same"]  # the warp and block kernels take the same steps
    for it, shape, value in zip(sim["iterations"], sim["shapes"], sim["values"]):
        if value is not None:  # a square item may be solved by its reductions alone (no search step)
            assert it > 0 if shape[0] < shape[1] else it >= 0


def test_square_items_start_from_reductions(sim):
    """Larger square items (ties, forbidden pairs, a negative range): column reduction and augmenting
    row reduction, then searches; every value scipy's, every answer certified, fewer search steps
    than rows x columns."""
    sq = sim["squares"]
    assert sq["status"] == [0] * len(sq["scipy"])
    for b, (mine, ref) in enumerate(zip(sq["values"], sq["scipy"])):
        assert mine == pytest.approx(ref, rel=1e-12, abs=1e-12), b
    for b in sq["integer"]:
        assert sq["values"][b] == sq["scipy"][b], b
    assert sq["valid"] == [1] * len(sq["scipy"])
    assert max(sq["violation"]) <= 1e-9
    assert sq["same_as_block"]


def test_certificate_refuses_tampering(sim):
    base = sim["cert"]
    t = sim["tamper"]
    assert t["raise_u"]["violation"][0] >= 0.25 - 1e-12
    assert t["swap"]["violation"][1] > 1e-6 and t["swap"]["valid"][1] == 1
    assert t["twice"]["valid"][2] == 0
    assert t["free_v"]["violation"][3] >= 0.5
    assert t["positive_v"]["violation"][4] >= 0.125 - 1e-12
    assert t["out_of_range"]["valid"][7] == 0
    assert t["forbidden_pair"]["valid"][12] == 0
    for name, item in (("raise_u", 0), ("swap", 1), ("twice", 2), ("free_v", 3), ("positive_v", 4)):
        others = [b for b in range(len(base["valid"])) if b != item]
        assert [t[name]["valid"][b] for b in others] == [base["valid"][b] for b in others], name
        assert [t[name]["violation"][b] for b in others] == [base["violation"][b] for b in others], name


def test_device_certificate_equals_host_certificate(sim):
    """device.certify_packed (checks and sums on the device, the gap's bound and infeasibility on the
    host) returns certify_batch.certify_packed's dict exactly: solved, tampered (every reason code
    the tampering reaches), square items with positive duals, float32, wide items, a refuted claim."""
    cert = sim["device_certificate"]
    for name, same in cert["same"].items():
        assert all(same.values()), (name, same)
    assert cert["codes"]["subnormal"] == [0, 0, 0]  # proven, as on the host
    assert sim["huge_row_doubt"] == 1  # proven by the allowance alone, so rechecked (the device agrees)
    seen = {code for codes in cert["codes"].values() for code in codes}
    assert {0, 1, 2, 3, 4, 5, 6, 7, 9, 10} <= seen, seen


def test_the_certificate_uses_the_device_copy_only_while_it_holds_the_costs(sim):
    """Host costs are certified on the copy the solver read on the GPU (the host's certificate is not
    called, the answer is the same bit for bit) while every item's checksum there equals the one the
    host scan took (the device and host checksums agree on signed zeros, infinities, subnormals,
    float32); a changed copy sends the check back to the host; a GPU batch changed during the solve
    is not certified where it changed."""
    got = sim["checksums"]
    assert got["equal"] == {"float64": True, "float32": True}
    assert got["copy_used"] == {"same": True, "host_calls": 0}
    assert got["copy_changed"] == {"same": True, "host_calls": 1}
    assert got["device_changed"] == [0, 0, 11, 0] and "changed during the solve" in got["explained"]


def test_device_inputs_pack_like_the_host(sim):
    for label, checks in sim["device_inputs"]["packed"].items():
        assert all(checks.values()), (label, checks)
    for label, (device_message, host_message) in sim["device_inputs"]["errors"].items():
        assert device_message is not None and device_message == host_message, label


# ---------------------------------------------------------------------------------------------
# a real GPU

gpu = pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")


def _helpers():
    space: dict = {}
    exec(HELPERS, space)
    return space


@gpu
def test_gpu_1000_items_64x64_match_scipy():
    from solvers.batch.device import certify_solution, solve_packed_cuda
    h = _helpers()
    rng = np.random.default_rng(64)
    mats = [rng.random((64, 64)) for _ in range(600)] + \
           [rng.integers(0, 10, (64, 64)).astype(float) for _ in range(200)] + \
           [rng.random((48, 64)) for _ in range(100)] + [rng.random((64, 40)) for _ in range(100)]
    packed = h["pack"](mats)
    sol = solve_packed_cuda(packed)
    assert (sol.status == 0).all()
    for b, M in enumerate(mats):
        assert h["item_value"](packed, sol, b) == pytest.approx(h["scipy_value"](M), rel=1e-12, abs=1e-12), b
    cert = certify_solution(packed, sol)
    assert (cert.valid == 1).all()
    assert (cert.violation <= 1e-12 * np.maximum(1.0, cert.scale)).all()
    again = solve_packed_cuda(packed)
    assert np.array_equal(again.row_to_col, sol.row_to_col) and np.array_equal(again.u, sol.u)


@gpu
def test_gpu_cases_and_device_resident_costs():
    from numba import cuda

    from solvers.batch.device import certify_packed_device, solve_packed_cuda, solve_packed_device
    h = _helpers()
    mats = h["cases"]()
    packed = h["pack"](mats)
    sol = solve_packed_cuda(packed)
    for b, M in enumerate(mats):
        ref = h["scipy_value"](M)
        assert sol.status[b] == (1 if ref is None else 0), b
        if ref is not None:
            assert h["item_value"](packed, sol, b) == pytest.approx(ref, rel=1e-12, abs=1e-12), b
    rng = np.random.default_rng(5)
    mats32 = [rng.random((100, 300)).astype(np.float32) for _ in range(50)]
    p32 = h["pack"](mats32, np.float32)
    costs = cuda.to_device(p32.costs)
    out = solve_packed_device(costs, p32.offsets, p32.rows, p32.cols, p32.row_offsets, p32.col_offsets)
    cert = certify_packed_device(costs, p32.offsets, p32.rows, p32.cols, p32.row_offsets, p32.col_offsets,
                                 out.row_to_col, out.u, out.v)
    r2c = out.row_to_col.copy_to_host()
    assert (out.status.copy_to_host() == 0).all() and (cert.valid.copy_to_host() == 1).all()
    assert (cert.violation.copy_to_host() <= 1e-9).all()
    for b, M in enumerate(mats32):
        cols = r2c[p32.row_offsets[b]:p32.row_offsets[b + 1]]
        value = float(M.astype(np.float64)[np.arange(100), cols].sum())
        r, c = linear_sum_assignment(M.astype(np.float64))
        assert value == pytest.approx(float(M.astype(np.float64)[r, c].sum()), rel=1e-12), b


@gpu
def test_gpu_host_costs_are_certified_on_the_solvers_copy(monkeypatch):
    """On a GPU, host costs go up once: the certificate runs on that copy (its checksums equal the
    host scan's) and gives the host certificate's answer bit for bit; the host's is not called."""
    import solvers.batch.certify_batch as CB
    from solvers.batch import device as D
    from solvers.batch.inputs import prepare_batch
    rng = np.random.default_rng(21)
    for mats in ([rng.random((30, 30)) for _ in range(40)] + [rng.integers(0, 4, (20, 50)).astype(float)] * 5,
                 [rng.random((n, n + 7)).astype(np.float32) for n in range(1, 200, 9)]):
        packed = prepare_batch(mats).packed
        sol = D.solve_packed_cuda(packed)
        assert sol.device_costs is not None
        reference = CB.certify_packed(packed, sol)
        calls = []
        real = CB.certify_packed
        monkeypatch.setattr(CB, "certify_packed", lambda *a: calls.append(1) or real(*a))
        mine = D.certify_packed(packed, sol)
        monkeypatch.setattr(CB, "certify_packed", real)
        assert not calls
        assert all(np.array_equal(mine[k], reference[k], equal_nan=True) for k in reference)
        assert (mine["reason"] == 0).all()


def _assert_batch_matches_scipy(result, host):
    for b in range(host.shape[0]):
        r, c = linear_sum_assignment(host[b].astype(np.float64))
        assert result.values[b] == pytest.approx(float(host[b].astype(np.float64)[r, c].sum()), rel=1e-12), b


@gpu
def test_gpu_solve_batch_numba_device_array_end_to_end():
    """solve_batch on a numba device array (square, wide, tall): packed on the device, certified
    there with certify_batch's answer exactly (compared with the host's certificate of the same
    solution), assignments back as device arrays."""
    from numba import cuda

    import solvers
    from solvers.batch import certify_batch, device
    rng = np.random.default_rng(11)
    for shape in ((200, 64, 64), (50, 40, 90), (30, 70, 20), (20, 256, 256)):
        host = rng.random(shape, dtype=np.float32)
        result = solvers.solve_batch(cuda.to_device(host), backend="cuda")
        assert result.all_certified and result.certified.all(), shape
        assert hasattr(result.assignments, "copy_to_host"), type(result.assignments)
        _assert_batch_matches_scipy(result, host)
        batch = device.prepare_device(cuda.to_device(host))
        sol = device.solve_packed_cuda(batch.packed)
        mine = device.certify_packed(batch.packed, sol)
        import dataclasses
        ref = certify_batch.certify_packed(dataclasses.replace(batch.packed, costs=batch.packed.costs.copy_to_host()),
                                           sol)
        for key in ref:
            assert np.array_equal(mine[key], ref[key], equal_nan=True), (shape, key)


@gpu
def test_gpu_solve_batch_torch_tensor_end_to_end():
    torch = pytest.importorskip("torch", reason="torch is not importable here")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device here")
    import solvers
    rng = np.random.default_rng(12)
    host = rng.random((300, 50, 80), dtype=np.float32)
    tensor = torch.from_numpy(host).cuda()
    result = solvers.solve_batch(tensor, backend="cuda")
    assert result.certified.all()
    assert isinstance(result.assignments, torch.Tensor) and result.assignments.device == tensor.device
    _assert_batch_matches_scipy(result, host)
    tall = torch.from_numpy(host).cuda().transpose(1, 2)  # a strided (300, 80, 50) view: packed by the kernel
    again = solvers.solve_batch(tall, backend="cuda")
    assert again.certified.all() and np.allclose(again.values, result.values, rtol=1e-12)
    ints = torch.from_numpy(rng.integers(0, 5, (40, 12, 12))).cuda()
    exact = solvers.solve_batch(ints, backend="cuda")
    assert exact.certified.all()
    _assert_batch_matches_scipy(exact, ints.cpu().numpy())
