"""The telemetry contract the explorer draws: cost-free without an observer, recordable, replayable."""
import math
import time
from pathlib import Path

import numpy as np
import pytest

from solvers import Cancelled, InputError, Observer, Recorder, RunInfo, RunRecord, Telemetry
from solvers.telemetry import NULL, Budget, Tee, Throttle, label_histogram, sample_indices

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


def test_snapshots_are_throttled_per_kind(manual_clock):
    class Slow(Observer):
        snapshot_interval = 60.0
    tel = Telemetry.attach(Slow(), INFO)
    assert tel.snapshot_due("labels") and tel.snapshot_due("workload")
    assert not tel.snapshot_due("labels")
    clock = manual_clock
    t = Throttle(0.01)
    assert t.ready() and not t.ready()
    clock.now += 0.02
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


def test_throttle_gaps_grow_geometrically_to_the_interval(manual_clock):
    clock = manual_clock
    t = Throttle(0.4, start=1 / 8, ratio=0.0)  # gaps 0.05, 0.1, 0.2, 0.4, 0.4, ...
    assert t.ready() and not t.ready()
    clock.now += 0.049
    assert not t.ready()
    clock.now += 0.002
    assert t.ready() and not t.ready()
    clock.now += 0.06
    assert not t.ready()  # the second gap is twice the first
    clock.now += 0.041
    assert t.ready()
    for _ in range(3):  # held at the interval from now on
        assert t._gap == 0.4
        t._next = 0.0  # as if the gap had passed
        assert t.ready()


def test_an_expensive_snapshot_pushes_the_next_one_back(manual_clock):
    clock = manual_clock
    t = Throttle(10.0, start=1e-6, ratio=2.0)
    assert t.ready()
    t.spent(0.05)  # it took 50 ms to take: the next waits 100 ms, not the 10 us gap
    clock.now += 0.099
    assert not t.ready()
    clock.now += 0.002
    assert t.ready()
    every = Throttle(0.0)  # an observer asking for every snapshot gets every one, however costly
    for _ in range(5):
        assert every.ready()
        every.spent(0.05)


def test_a_costly_count_waits_ratio_times_its_cost_and_a_cheap_one_never_waits(manual_clock):
    clock = manual_clock
    budget = Budget(ratio=4.0, free=2e-4)
    for _ in range(3):  # a count of 0.1 ms (under ``free``): due again at once
        assert budget.due()
        budget.start()
        clock.now += 1e-4
        budget.stop()
    budget.start()
    clock.now += 0.01  # a count of 10 ms: the next only after 40 ms more
    budget.stop()
    clock.now += 0.039
    assert not budget.due()
    clock.now += 0.002
    assert budget.due()


def test_final_snapshots_are_due_only_when_someone_listens():
    class Slow(Observer):
        snapshot_interval = 60.0
    tel = Telemetry.attach(Slow(), INFO)
    assert tel.snapshot_due("labels") and not tel.snapshot_due("labels")
    assert tel.snapshot_due("labels", final=True)
    assert NULL.snapshot_due("labels", final=True) is False


@pytest.mark.parametrize("path, algorithm", [("random-bipartite_200x200_d3.mtx", "gpr"),
                                             ("random-bipartite_200x200_d3.mtx", "pr-seq"),
                                             ("washington-rlg_8x8.max", "wbpr"), ("dense-lap_50.npy", "hungarian"),
                                             ("dense-lap_50.npy", "auction")])
def test_an_observer_of_scalars_only_gets_no_snapshot_at_all(path, algorithm):
    """The CLI's progress line (interval inf) wants iterations, not label arrays: no solver sends it
    one, the final state included."""
    import solvers

    class ScalarsOnly(Recorder):
        snapshot_interval = math.inf

        def __init__(self):
            super().__init__(snapshot_interval=math.inf)

    rec = ScalarsOnly()
    result = solvers.solve(solvers.load(str(SAMPLES / path)), algorithm, backend="cpu", observer=rec)
    assert result.certified and rec.iterations and rec.snapshots == []
    assert not Telemetry.attach(ScalarsOnly(), INFO).snapshot_due("labels", final=True)


def test_a_snapshot_answers_a_stop_request():
    class Stopper(Observer):
        def should_stop(self):
            return True
    tel = Telemetry.attach(Stopper(), INFO)
    with pytest.raises(Cancelled):
        tel.labels(0, rows=np.arange(5))
    with pytest.raises(Cancelled):
        tel.check_cancel()


# ---- the real solvers on the cpu backend: what a replay of a short run has to draw -----------------

SAMPLES = Path(__file__).resolve().parent.parent / "sample_graphs"


def recorded(path: str, algorithm: str, **options):
    """Solve a sample with a Recorder as the explorer keeps one (interval 0.05 s), telemetry on a
    StepClock; the second of two runs, as in the explorer after its warm-up."""
    import solvers
    from conftest import StepClock
    from solvers import telemetry
    problem = solvers.load(str(SAMPLES / path))
    real = telemetry.time
    try:
        for _ in range(2):
            telemetry.time = StepClock()
            rec = Recorder()
            result = solvers.solve(problem, algorithm, backend="cpu", observer=rec, **options)
    finally:
        telemetry.time = real
    assert result.certified
    return rec.record()


@pytest.mark.parametrize("path, algorithm, min_labels, min_work", [
    ("random-bipartite_200x200_d3.mtx", "gpr", 3, 3),
    ("rmat_s9.mtx", "gpr", 3, 3),
    ("random-bipartite_200x200_d3.mtx", "wbpr", 3, 2),
    ("rmat_s9.mtx", "wbpr", 3, 2),
    ("washington-rlg_8x8.max", "wbpr", 2, 2),  # 4 launches in all: the first and the end state at least
    ("dense-lap_50.npy", "hungarian", 3, 0),
    ("dense-lap_50.npy", "auction", 3, 0),
    ("random-bipartite_200x200_d3.mtx", "pr-seq", 2, 0),  # one chunk of pushes: the start and the end
])
def test_a_short_run_records_several_snapshots_and_its_end_state(path, algorithm, min_labels, min_work):
    record = recorded(path, algorithm)
    last = record.iterations[-1].iteration
    labels = [s for s in record.snapshots if s.kind == "labels"]
    its = [s.iteration for s in labels]
    assert len(labels) >= min_labels, its
    assert its[0] == record.iterations[0].iteration and its[-1] == last, its
    # in order; two at one iteration only when a step between them changed the labels (gpr's final check)
    assert its == sorted(its) and its.count(last) <= (2 if algorithm == "gpr" else 1), its
    work = [s for s in record.snapshots if s.kind == "workload"]
    launches = [s.meta["launch"] for s in work]
    assert len(work) >= min_work and launches == sorted(launches) and len(set(launches)) == len(launches), launches
    if algorithm == "wbpr":  # the last launch, whatever the throttle did
        assert launches[-1] == record.result["iterations"], launches
    if not min_work:
        assert not work


def test_gpr_final_check_reports_the_columns_it_still_reaches_as_active():
    record = recorded("random-bipartite_200x200_d3.mtx", "gpr")
    checks = [s for s in record.iterations if s.extra.get("final_check")]
    assert len(checks) == 1 and checks[0] is record.iterations[-1]
    assert checks[0].active == 0  # no augmenting path left (dead columns are not active)
    assert checks[0].value == record.result["value"]


class Polls(Observer):
    """Records when the solver asks whether to stop, in CPU time of the solving thread."""

    def __init__(self):
        self.times = []

    def on_start(self, info):
        self.times.append(time.thread_time())

    def should_stop(self):
        self.times.append(time.thread_time())
        return False


def test_stop_reaches_a_gpr_cpu_run_between_its_long_host_steps(monkeypatch):
    """The longest stretch of solver work between two should_stop polls, in CPU time of the solving
    thread (so a busy machine does not count), on a long road grid whose global relabels run
    thousands of BFS levels. The serial loops keep all work in that thread. Without the checks in
    the BFS, the pacing of resident batches and after snapshots, the gaps are several times longer."""
    import solvers
    from solvers.matching import gpr
    monkeypatch.setattr(gpr, "PARALLEL_MIN", 1 << 30)

    warm = solvers.generate("road-grid", width=60, height=60, seed=1)
    graph = solvers.generate("road-grid", width=2000, height=40, seed=1)
    for device_loop in ("off", "on"):
        solvers.solve(warm, "gpr", backend="cpu", observer=Polls(), device_loop=device_loop)
        polls = Polls()
        result = solvers.solve(graph, "gpr", backend="cpu", observer=polls, device_loop=device_loop)
        assert result.stats["max_level"] > 1000  # deep global relabels: the case the checks are for
        gaps = np.diff(polls.times)
        assert gaps.max() < 0.12, f"device_loop={device_loop}: {gaps.max() * 1e3:.0f} ms without a Stop check"


def test_stop_reaches_a_wbpr_cpu_run_inside_its_long_launches(monkeypatch):
    """wbpr on cpu runs a launch of hundreds of cycles in one compiled call; with someone listening it
    is cut into slices of about 25 ms with a Stop check between them (the longest stretch between
    polls, in CPU time of the solving thread, stays short), and the answer is the unsliced one."""
    import solvers
    from solvers.flow import wbpr_device
    monkeypatch.setattr(wbpr_device, "PARALLEL_MIN_ARCS", 1 << 62)  # all work in the solving thread

    solvers.solve(solvers.generate("road-grid", width=20, height=20, seed=2), "wbpr", backend="cpu", observer=Polls())
    graph = solvers.generate("road-grid", width=240, height=120, seed=2)
    polls = Polls()
    watched = solvers.solve(graph, "wbpr", backend="cpu", observer=polls)
    alone = solvers.solve(graph, "wbpr", backend="cpu")
    assert watched.certified and watched.value == alone.value
    np.testing.assert_array_equal(watched.pairs(), alone.pairs())
    assert alone.stats["launches"] == watched.stats["launches"] and alone.stats["pushes"] == watched.stats["pushes"]
    gaps = np.diff(polls.times)
    assert gaps.max() < 0.12, f"{gaps.max() * 1e3:.0f} ms without a Stop check"


def test_on_progress_is_a_documented_no_op_that_tee_forwards():
    assert Observer().on_progress(3, 9, "frame pair") is None and Observer.on_progress.__doc__
    heard = []

    class Listens(Observer):
        def on_progress(self, done, total, unit):
            heard.append((done, total, unit))

    Tee(Listens(), Observer(), Listens()).on_progress(2, 5, "frame pair")
    assert heard == [(2, 5, "frame pair")] * 2


def test_a_foreign_run_record_is_named_in_plain_words(tmp_path):
    import json as _json
    path = tmp_path / "other.npz"
    np.savez(path, header=np.frombuffer(_json.dumps({"format": "other/2"}).encode(), dtype=np.uint8))
    with pytest.raises(InputError) as caught:
        RunRecord.load(path)
    assert str(caught.value) == f"{path}: not a matchscope run record (its format is other/2)"


def test_the_recorder_keeps_where_each_solve_of_a_tracking_run_began(tmp_path):
    """solvers.track solves every frame pair, then re-solves within each round of its automatic gate
    (two rounds here): each solve's first report and its unit of work are recorded as it begins, and
    a run record keeps them (a record written before them reads as none)."""
    import json
    import solvers
    series = solvers.generate("particles", n=30, frames=5, enter_rate=0.5, leave_rate=0.5, speed=0.05, seed=2)
    rec = Recorder()
    track = solvers.track(series, "lsa", backend="cpu", observer=rec)
    assert track.summary["gate_rounds"] == 2
    assert len(rec.solves) == track.summary["solves"] and rec.solves[0].position == 0
    positions = [s.position for s in rec.solves]
    assert positions == sorted(positions) and positions[-1] < len(rec.iterations)
    assert [(s.unit, s.index, s.total, s.sweep) for s in rec.solves] == \
        [("frame pair", k, 4, 0) for k in range(4)] + \
        [("gated frame pair", k, 2, r) for r in (1, 2) for k in range(2)]
    assert all(s.item is None for s in rec.solves)  # which pair a gated one is: the tracking result tells
    rec.record().save(tmp_path / "run.npz")
    assert RunRecord.load(tmp_path / "run.npz").solves == rec.solves
    # a record without them (written before they were kept), and one whose entries are damaged
    with np.load(tmp_path / "run.npz") as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(bytes(arrays["header"]).decode())
    for name, solves, error in (("old.npz", None, None),
                                ("bad.npz", [{"unit": "frame pair"}], "where a solve began is damaged")):
        changed = {k: v for k, v in header.items() if k != "solves"}
        if solves is not None:
            changed["solves"] = solves
        np.savez(tmp_path / name, **dict(arrays, header=np.frombuffer(json.dumps(changed).encode(), dtype=np.uint8)))
        if error is None:
            assert RunRecord.load(tmp_path / name).solves == []
        else:
            with pytest.raises(InputError, match=error):
                RunRecord.load(tmp_path / name)


def test_solves_watched_by_one_observer_share_their_snapshot_pace(manual_clock):
    class Slow(Observer):
        snapshot_interval = 60.0
    watching = Slow()
    first, second = Telemetry.attach(watching, INFO), Telemetry.attach(watching, INFO)
    assert first.snapshot_due("labels")
    assert not second.snapshot_due("labels")  # the next solve of the same run waits its turn
    assert second.snapshot_due("labels", final=True)  # its end state is always due
    assert Telemetry.attach(Slow(), INFO).snapshot_due("labels")  # another run starts its own pace


def test_an_observer_without_weak_references_keeps_a_pace_per_solve(manual_clock):
    class Slotted:  # an observer by its methods alone, with no room for weak references
        __slots__ = ()
        snapshot_interval = 60.0

        def on_start(self, info):
            pass
    watching = Slotted()
    assert Telemetry.attach(watching, INFO).snapshot_due("labels")
    assert Telemetry.attach(watching, INFO).snapshot_due("labels")


def test_a_tracking_runs_solves_take_one_snapshot_pace_and_each_its_end_state(manual_clock):
    """The bundled particles: 17 short solves under one observer. With the clock standing still the
    shared throttle grants one snapshot; the others are each solve's end state (a throttle per solve
    took the first of each solve too, and more as its gaps started short)."""
    import solvers
    series = solvers.load(str(SAMPLES / "particles_100x10.npz"))
    rec = Recorder(snapshot_interval=0.05)
    solvers.track(series, "auction", backend="cpu", observer=rec)
    labels = [s for s in rec.snapshots if s.kind == "labels"]
    assert len(rec.solves) >= 10
    assert len(rec.solves) <= len(labels) <= len(rec.solves) + 1
    # a dual objective that costs nothing on this clock is reported at every completed phase
    completed = [s for s in rec.iterations if s.phase == "eps-scale" and s.extra.get("unassigned") == 0]
    assert completed and all("dual_objective" in s.extra for s in completed)


def test_a_budget_with_no_free_cost_defers_even_a_cheap_report(manual_clock):
    budget = Budget(ratio=4.0, free=0.0)
    budget.start()
    manual_clock.now += 1e-5
    budget.stop()
    assert not budget.due()
    manual_clock.now += 4e-5 + 1e-9
    assert budget.due()
