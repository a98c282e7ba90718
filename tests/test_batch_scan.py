"""The validating pass over a batch's costs (solvers.batch.scan): checked against numpy on ragged
batches cut into many segments and scanned in arbitrary ranges (as the GPU upload's chunks scan
them), with the copy it makes on the way; and, under the CUDA simulator, solve_batch on the GPU
path whose upload is that pass."""
from __future__ import annotations

import re

import numpy as np
import pytest

from checksum_reference import cost_terms
from conftest import result_line
from solvers.batch import scan as S
from solvers.batch.inputs import prepare_batch
from solvers.errors import InputError

AWKWARD = np.array([0.0, -0.0, np.inf, 5e-324, -2.5e-310, 1e300, -1e-300, 3.0, np.pi, -7.25, 1 - 2 ** -53])


def _oracle(costs: np.ndarray, offsets: np.ndarray) -> tuple:
    """What the pass must find, by numpy alone: first NaN / -inf, largest finite |c|, the checksum
    of each item's entries mixed with their positions k in the flat array (checksum_reference)."""
    wide = costs.astype(np.float64)
    terms = cost_terms(wide)
    bad, where, biggest, sums = [], [], [], []
    for b in range(offsets.size - 1):
        item = wide[offsets[b]:offsets[b + 1]]
        hits = np.flatnonzero(np.isnan(item) | (item == -np.inf))
        bad.append(0 if hits.size == 0 else (1 if np.isnan(item[hits[0]]) else 2))
        where.append(-1 if hits.size == 0 else int(hits[0]))
        finite = np.abs(item[np.isfinite(item)])
        biggest.append(float(finite.max()) if finite.size else 0.0)
        sums.append(int(terms[offsets[b]:offsets[b + 1]].sum(dtype=np.uint64)))
    return bad, where, biggest, sums


def _ragged(rng, dtype) -> tuple[np.ndarray, np.ndarray]:
    sizes = rng.integers(0, 40, 12)
    sizes[3] = 0  # an empty item among the others
    with np.errstate(over="ignore"):  # 1e300 is +-inf in float32
        costs = (rng.choice(AWKWARD, int(sizes.sum())) * rng.choice([1.0, -1.0], int(sizes.sum()))).astype(dtype)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    for b in rng.choice(12, 3, replace=False):  # plant NaN or -inf in some items, sometimes both
        if sizes[b]:
            costs[offsets[b] + rng.integers(sizes[b], size=2)] = rng.choice([np.nan, -np.inf], 2)
    return costs, offsets


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_pass_finds_what_numpy_finds_however_the_costs_are_cut(seed, dtype, monkeypatch):
    rng = np.random.default_rng(seed)
    costs, offsets = _ragged(rng, dtype)
    monkeypatch.setattr(S, "SEGMENT", int(rng.integers(1, 9)))  # items cut into several segments
    want = _oracle(costs, offsets)
    got = S.scan_items(costs, offsets)
    assert [a.tolist() for a in got] == list(want)
    # the same found over arbitrary consecutive ranges (the upload's chunks), copied into each chunk
    cuts = np.unique(np.concatenate([[0, costs.size], rng.integers(0, costs.size + 1, 4)]))
    found = S.ItemScan(offsets)
    copy = np.full(costs.size, 99.0, dtype=dtype)
    for first, last in zip(cuts[:-1], cuts[1:]):
        found.add(costs, int(first), int(last), copy[first:last])
    assert [a.tolist() for a in found.verdicts(costs)] == list(want)
    assert np.array_equal(copy, costs, equal_nan=True) and np.array_equal(np.signbit(copy), np.signbit(costs))


def test_a_read_only_float64_copy_into_float32_converts_as_numpy_does():
    costs = np.random.default_rng(1).random(50) * 1e3
    costs.flags.writeable = False  # a memory-mapped batch file
    target = np.empty(50, np.float32)
    found = S.ItemScan(np.array([0, 20, 50]))
    found.add(costs, 0, 50, target)
    assert np.array_equal(target, costs.astype(np.float32))
    assert found.verdicts(costs)[2].tolist() == [costs[:20].max(), costs[20:].max()]


def test_the_batch_refusals_name_the_first_bad_entry_in_the_items_own_orientation():
    tall = np.zeros((2, 5, 3))
    tall[1, 4, 0] = -np.inf
    tall[1, 3, 2] = np.nan  # later in the stored (transposed) order: column 2 comes after column 0
    with pytest.raises(InputError, match=re.escape("item 1: the cost at row 4, column 0 (0-based) is -inf")):
        prepare_batch(tall)


SIM = r"""
import json
import numpy as np
import solvers.batch.certify_batch as CB
from solvers.batch.api import solve_batch
from solvers.errors import InputError
from solvers.targets import staged_upload as su
from scipy.optimize import linear_sum_assignment

su.STAGED_MIN_BYTES = 0  # every batch through the pinned stages
su.CHUNK_BYTES = 8 * 7 + 4  # a few entries per chunk: items cross chunk boundaries
host_calls = []
real_host = CB.certify_packed
CB.certify_packed = lambda *a: host_calls.append(1) or real_host(*a)
rng = np.random.default_rng(3)
out = {}
for label, costs in (("square", rng.random((3, 4, 4))), ("tall float32", rng.random((2, 5, 3)).astype(np.float32)),
                     ("ragged", [rng.integers(0, 4, (3, 5)).astype(float), rng.random((4, 2)), np.zeros((0, 3))])):
    r = solve_batch(costs, backend="cudasim")
    items = costs if isinstance(costs, list) else list(costs)
    ref = [float(m[linear_sum_assignment(m)].sum()) if m.size else 0.0 for m in items]
    out[label] = {"values": [float(v) for v in r.values], "scipy": ref, "certified": bool(np.all(r.certified))}
bad = rng.random((3, 4, 6))
bad[2, 3, 1] = np.nan
try:
    solve_batch(bad, backend="cudasim")
    out["refused"] = None
except InputError as e:
    out["refused"] = str(e)
out["host_calls"] = len(host_calls)

# the certificate reads the solver's device arrays while the host copies are untouched (read-only)
from solvers.batch import device as D
from solvers.batch.inputs import prepare_batch
packed = prepare_batch(rng.random((3, 4, 4))).packed
fresh = D.solve_packed_cudasim(packed)
try:
    fresh.u[0] += 1.0
    out["read_only"] = False
except ValueError:
    out["read_only"] = True
out["fresh"] = D.certify_packed(packed, fresh)["reason"].tolist()
out["writeable_after"] = all(getattr(fresh, k).flags.writeable for k in ("row_to_col", "u", "v", "status"))
tampered = D.solve_packed_cudasim(packed)
tampered.u.flags.writeable = True
tampered.u[0] += 1.0  # changed after the solve: the device arrays no longer hold the caller's answer
out["tampered"] = D.certify_packed(packed, tampered)["reason"].tolist()

# a batch's index arrays go up once, while they hold what they held
uploads = []
real_upload = type(D._device_launcher()).upload
type(D._device_launcher()).upload = lambda self, a, dtype=None: uploads.append(len(a)) or real_upload(self, a, dtype)
offsets = np.array([0, 4, 10], dtype=np.int64)
first = D._index_array(D._device_launcher(), offsets)
again = D._index_array(D._device_launcher(), offsets)
offsets[1] = 5  # changed in place: uploaded again, with the new values
changed = D._index_array(D._device_launcher(), offsets)
type(D._device_launcher()).upload = real_upload
out["index_uploads"] = {"count": len(uploads), "same": again is first,
                        "changed": np.asarray(changed.copy_to_host()).tolist()}
print("RESULT " + json.dumps(out))
"""


def test_on_the_gpu_path_the_pass_that_uploads_is_the_one_that_checks(run_cudasim):
    """solve_batch on the simulated GPU, every batch staged in chunks of a few entries: the values
    equal scipy's, every item is certified on the uploaded copy (the host certificate is never
    called: the copy's checksums equal the pass's), and a NaN is refused in the host path's words.
    The certificate reads the solver's own device arrays only while the host copies are read-only:
    a copy made writeable and changed is checked as it is now."""
    text = run_cudasim(SIM)
    got = result_line(text)
    for label in ("square", "tall float32", "ragged"):
        assert got[label]["certified"], label
        assert got[label]["values"] == pytest.approx(got[label]["scipy"], rel=1e-6), label
    assert got["refused"] == "item 2: the cost at row 3, column 1 (0-based) is NaN (use +inf to forbid a pair)"
    assert got["host_calls"] == 0
    # the solver's arrays are certified on the device only while the caller's copies cannot differ
    assert got["read_only"] and got["writeable_after"] and got["fresh"] == [0, 0, 0]
    assert got["tampered"][0] == 4 and got["tampered"][1:] == [0, 0]  # u_0 + v_j > c_0j, seen on the host copy
    assert got["index_uploads"] == {"count": 2, "same": True, "changed": [0, 5, 10]}


def _batches(seed: int):
    rng = np.random.default_rng(seed)
    yield rng.random((6, 7, 7))
    yield rng.integers(0, 3, (5, 4, 9)).astype(float)  # ties, wide
    yield (rng.random((4, 8, 3)) * 1e-300).astype(np.float32)  # tall, float32 underflowing to subnormals and 0
    infeasible = rng.random((3, 4, 4))
    infeasible[1, :2, :] = np.inf
    infeasible[1, :2, 0] = 1.0  # two rows, one column
    yield infeasible
    yield [rng.random((int(n), int(n) + 2)) * 10.0 ** int(rng.integers(-20, 20)) for n in rng.integers(0, 9, 7)]


@pytest.mark.parametrize("seed", range(3))
def test_the_cpu_backend_certifies_each_item_as_the_separate_certificate_does(seed):
    """The cpu backend checks, solves and certifies each item in one thread (its costs read from
    memory once): its certificate equals certify_batch.certify_packed run afterwards, bit for bit,
    on square, wide, tall, tied, infeasible, ragged, float32 and extreme-scale batches."""
    from solvers.batch import certify_batch, cpu
    for costs in _batches(seed):
        packed = cpu.prepare_host(costs).packed
        assert packed.unchecked
        solution = cpu.solve_packed(packed)
        separate = certify_batch.certify_packed(packed, solution)
        for key, want in separate.items():
            assert np.array_equal(solution.certificate[key], want, equal_nan=True), key
        assert 1 not in solution.status or 10 in separate["reason"]  # an infeasible item is proven so


@pytest.mark.parametrize("where, value, words", [
    ((2, 3, 1), np.nan, "item 2: the cost at row 3, column 1 (0-based) is NaN"),
    ((1, 0, 5), -np.inf, "item 1: the cost at row 0, column 5 (0-based) is -inf"),
    ((0, 2, 2), 1e307, "item 0: costs up to 1e+307 can overflow float64 sums"),
])
def test_the_cpu_backend_refuses_a_bad_batch_as_the_checking_pass_does(where, value, words):
    from solvers.batch import cpu
    costs = np.random.default_rng(4).random((3, 4, 6))
    costs[where] = value
    with pytest.raises(InputError) as checked_first:
        prepare_batch(costs)
    with pytest.raises(InputError) as checked_in_the_solve:
        cpu.solve_packed(cpu.prepare_host(costs).packed)
    assert str(checked_in_the_solve.value) == str(checked_first.value) and words in str(checked_first.value)
