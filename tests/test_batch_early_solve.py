"""A host batch solved on the GPU while it goes up (solvers.batch.early_solve): items start as the
chunks holding them are sent, in order, each once; a refused batch starts nothing from its first bad
item on; a ragged batch starts once it is up; the answers are those of a solve after the upload
(scipy's values, certified).

The simulator runs it with the upload's chunks made tiny (its launches run to the end when called);
on a GPU (skipped without one) the same at the real chunk size, where the launches run on streams
beside the host's pass."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from conftest import result_line, run_early_cudasim
from solvers.targets import cuda_available

SIM_CODE = r'''
import json
import numpy as np
from solvers.targets import staged_upload as S
S.release_staging()
S.STAGED_MIN_BYTES = 1 << 10
S.CHUNK_BYTES = 30 * 8         # 30 float64 entries a chunk
import solvers
from solvers.batch import device as D, early_solve as E
from solvers.errors import InputError

launches, sent = [], []
real_launch, real_sent = D.SolvePlan.launch, E.SolveAsItArrives.sent
def launch(self, costs, first, last, stream=None):
    launches.append([first, last, sent[-1] if sent else None])
    real_launch(self, costs, first, last, stream)
def on_sent(self, first, last, device, stream):
    sent.append(last)
    real_sent(self, first, last, device, stream)
D.SolvePlan.launch, E.SolveAsItArrives.sent = launch, on_sent

rng = np.random.default_rng(4)
regular = rng.random((8, 5, 7))                     # 35 entries an item: items straddle chunks
regular[0, 2, :3] = np.inf                          # forbidden pairs
regular[2] = rng.integers(0, 3, (5, 7))             # ties
wide = rng.random((3, 2, 130))                      # wider than a warp's items: the block kernel
ragged = [rng.random((4, 5)), rng.random((6, 3)), rng.random((9, 15)), rng.random((2, 130))]
out = {"most_launches": E.LAUNCHES}
for name, batch in (("regular", regular), ("wide", wide), ("ragged", ragged)):
    launches.clear(); sent.clear()
    result = solvers.solve_batch(batch, backend="cudasim")
    out[name] = {"values": [float(v) for v in result.values], "certified": bool(np.all(result.certified)),
                 "launches": launches[:], "sent": sent[:], "seconds": result.seconds,
                 "offsets": np.cumsum([0] + [np.asarray(m).size for m in batch]).tolist()}

def refused(bad):
    launches.clear(); sent.clear()
    try:
        solvers.solve_batch(bad, backend="cudasim")
        return None, launches[:]
    except InputError as e:
        return str(e), launches[:]
nan = regular.copy()
nan[4, 1, 2] = np.nan
out["nan"] = refused(nan)
huge = regular[:4].copy()
huge[2, 0, 0] = 1e307
out["huge"] = refused(huge)

# prepared once, solved twice: the second solve solves again (the early solve is taken once)
prepared = D.prepare_host(regular[:2])
first = D.solve_packed_cudasim(prepared.packed)
launches.clear()
second = D.solve_packed_cudasim(prepared.packed)
out["again"] = {"launches": launches[:], "same": bool(np.array_equal(first.row_to_col, second.row_to_col))}
print("RESULT " + json.dumps(out))
'''


def _scipy_value(matrix) -> float:
    finite = np.where(np.isfinite(matrix), matrix, 1e12)
    r, c = linear_sum_assignment(finite)
    return float(matrix[r, c].sum())


EARLY_CUDASIM = SIM_CODE  # started when the tests are collected (conftest)
EARLY_CUDASIM_FIXTURE = "sim"


@pytest.fixture(scope="module")
def sim():
    return result_line(run_early_cudasim(__name__, SIM_CODE, timeout=600))


def _batches():
    rng = np.random.default_rng(4)
    regular = rng.random((8, 5, 7))
    regular[0, 2, :3] = np.inf
    regular[2] = rng.integers(0, 3, (5, 7))
    wide = rng.random((3, 2, 130))
    ragged = [rng.random((4, 5)), rng.random((6, 3)), rng.random((9, 15)), rng.random((2, 130))]
    return {"regular": regular, "wide": wide, "ragged": ragged}


@pytest.mark.parametrize("name", ["regular", "wide"])
def test_a_regular_batch_starts_chunk_by_chunk_in_order_each_item_once(sim, name):
    run = sim[name]
    launches, offsets = run["launches"], run["offsets"]
    assert len(run["sent"]) > 8  # many chunks
    assert 2 <= len(launches) <= sim["most_launches"]  # a few launches (each costs the pass time)
    assert launches[0][2] < offsets[-1]  # the first before the last chunk was sent: not all at the end
    covered = 0
    for first, last, sent_through in launches:
        assert first == covered and last > first  # in order, no item twice, none skipped
        assert offsets[last] <= sent_through  # started only once its entries were sent
        covered = last
    assert covered == len(offsets) - 1


def test_a_ragged_batch_starts_once_it_is_up(sim):
    run = sim["ragged"]
    assert run["launches"] == [[0, len(run["offsets"]) - 1, run["offsets"][-1]]]
    assert "overlap" not in run["seconds"]


def test_the_solve_time_runs_from_the_first_launch_inside_the_packing(sim):
    seconds = sim["regular"]["seconds"]
    assert 0 < seconds["overlap"] < seconds["pack"]
    assert seconds["solve"] > seconds["overlap"]
    assert seconds["pack"] + seconds["solve"] - seconds["overlap"] + seconds["certify"] <= seconds["total"]


@pytest.mark.parametrize("name", ["regular", "wide", "ragged"])
def test_the_answers_are_scipys_and_certified(sim, name):
    assert sim[name]["certified"]
    assert sim[name]["values"] == pytest.approx([_scipy_value(np.asarray(m)) for m in _batches()[name]], rel=1e-12)


def test_a_refused_batch_starts_nothing_from_its_bad_item_on(sim):
    message, launches = sim["nan"]
    assert message == "item 4: the cost at row 1, column 2 (0-based) is NaN (use +inf to forbid a pair)"
    assert launches and max(last for _, last, _ in launches) <= 4
    message, launches = sim["huge"]
    assert message.startswith("item 2: costs up to 1e+307 can overflow float64 sums")
    assert max((last for _, last, _ in launches), default=0) <= 2


def test_a_second_solve_of_the_same_batch_solves_again(sim):
    assert sim["again"]["launches"] and sim["again"]["same"]


gpu = pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (the simulator runs the same above)")


@gpu
def test_gpu_batch_solved_while_it_goes_up_equals_scipy():
    """At the real chunk size: 160 items of 256 x 256 float32 (40 MB, two chunks and more), started
    early, and a ragged batch whose large items straddle chunks, started once it is up; every value
    scipy's, every item certified."""
    import solvers
    from solvers.batch import early_solve as E
    rng = np.random.default_rng(8)
    regular = rng.random((160, 256, 256)).astype(np.float32)
    ragged = [rng.random((int(n), int(n) + 40)) for n in rng.integers(300, 1200, 24)]
    starts = []
    real = E.SolveAsItArrives.sent
    E.SolveAsItArrives.sent = lambda self, *a: (real(self, *a), starts.append(self.launched))[0]
    try:
        for batch in (regular, ragged):
            starts.clear()
            result = solvers.solve_batch(batch, backend="cuda")
            assert np.all(result.certified)
            if batch is regular:
                assert len(set(starts)) > 1  # items started before the last chunk went up
            else:
                assert set(starts) == {0}  # a ragged batch starts once it is up
            for b in range(0, len(batch), 7):
                m = np.asarray(batch[b], dtype=np.float64)
                assert result.values[b] == pytest.approx(_scipy_value(m), rel=1e-9), b
    finally:
        E.SolveAsItArrives.sent = real


@gpu
def test_gpu_refused_batch_names_its_item_and_leaves_the_gpu_usable():
    import solvers
    from solvers.errors import InputError
    rng = np.random.default_rng(9)
    batch = rng.random((300, 128, 160))
    batch[250, 3, 7] = -np.inf
    with pytest.raises(InputError, match=r"^item 250: the cost at row 3, column 7 \(0-based\) is -inf"):
        solvers.solve_batch(batch, backend="cuda")
    batch[250, 3, 7] = 0.5
    result = solvers.solve_batch(batch, backend="cuda")
    assert np.all(result.certified)
    assert result.values[250] == pytest.approx(_scipy_value(batch[250]), rel=1e-9)
