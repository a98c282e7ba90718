"""The telemetry contract the explorer draws: cost-free without an observer, recordable, replayable."""
import math
import time

import numpy as np
import pytest

from solvers import Cancelled, InputError, Observer, Recorder, RunInfo, RunRecord, Telemetry
from solvers.telemetry import NULL, Tee, Throttle, label_histogram, sample_indices

INFO = RunInfo("pr-seq", "cpu", "matching", {"rows": 4}, {"k": 0.5}, "psi")


def test_no_observer_gives_the_disabled_null_telemetry():
    tel = Telemetry.attach(None, INFO)
    assert tel is NULL and not tel.enabled
    assert tel.snapshot_due("labels") is False
    tel.iteration(1, "push", 3, 2.0)  # no-ops, no errors
    tel.labels(1, rows=np.arange(3))


def test_recorder_round_trips_through_a_file(tmp_path):
    rec = Recorder(snapshot_interval=0.0)
    tel = Telemetry.attach(rec, INFO)
    tel.iteration(0, "push", active=5, value=1)
    tel.iteration(1, "global-relabel", active=4, value=2, max_level=7)
    assert tel.snapshot_due("labels")
    tel.labels(1, cap=10, rows=np.array([0, 1, 1, 10]), cols=np.array([2, 3]))
    tel.workload(1, modelled=np.array([3.0, 5.0]), cycles=np.array([100, 120]), launch=0, mode="tc")
    record = rec.record()
    path = tmp_path / "run.npz"
    record.save(path)
    loaded = RunRecord.load(path)
    assert loaded.info["algorithm"] == "pr-seq" and loaded.info["label"] == "psi"
    assert [s.phase for s in loaded.iterations] == ["push", "global-relabel"]
    assert loaded.iterations[1].extra == {"max_level": 7.0}
    assert math.isnan(loaded.iteration_table()["extra.max_level"][0])
    labels, work = loaded.snapshots
    assert labels.kind == "labels" and labels.meta["rows.unreachable"] == 1
    assert labels.data["rows.hist_counts"].sum() == 3
    np.testing.assert_array_equal(labels.data["rows.sample"], [0, 1, 1, 10])
    assert work.meta == {"launch": 0, "mode": "tc"}
    np.testing.assert_array_equal(work.data["cycles"], [100, 120])


def test_loading_a_foreign_file_is_an_input_error(tmp_path):
    bad = tmp_path / "x.npz"
    np.savez(bad, a=np.arange(3))
    with pytest.raises(InputError, match="cannot read run record|not a matchscope"):
        RunRecord.load(bad)
    with pytest.raises(InputError):
        RunRecord.load(tmp_path / "missing.npz")


def test_snapshots_are_throttled_per_kind():
    class Slow(Observer):
        snapshot_interval = 60.0
    tel = Telemetry.attach(Slow(), INFO)
    assert tel.snapshot_due("labels") and tel.snapshot_due("workload")
    assert not tel.snapshot_due("labels")
    t = Throttle(0.01)
    assert t.ready() and not t.ready()
    time.sleep(0.02)
    assert t.ready()


def test_observer_stop_request_cancels_at_the_next_iteration():
    class Stopper(Observer):
        def should_stop(self):
            return True
    tel = Telemetry.attach(Tee(Recorder(), Stopper()), INFO)
    with pytest.raises(Cancelled):
        tel.iteration(0, "push")


def test_label_histogram_uses_unit_bins_for_small_integer_ranges():
    counts, edges = label_histogram(np.array([0, 0, 2, 3]))
    np.testing.assert_array_equal(counts, [2, 0, 1, 1])
    assert edges[0] == -0.5 and edges[-1] == 3.5
    counts, edges = label_histogram(np.linspace(0, 1000, 5000))
    assert counts.sum() == 5000 and counts.size == 64
    idx = sample_indices(10_000)
    assert idx.size == 256 and idx[0] == 0 and idx[-1] == 9999


def test_atomic_write_gives_normal_permissions_and_leaves_no_temp_files(tmp_path):
    import os
    import stat
    from solvers.io_util import atomic_write_text
    target = tmp_path / "out.csv"
    atomic_write_text(target, "a,b\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]
