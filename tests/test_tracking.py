"""3-D point tracking by frame-to-frame assignment: entering and leaving points stay unmatched
(the automatic gate, checked against an independent scipy implementation of the documented rule),
the plain rectangular assignment with max_distance="off", fixed gating with max_distance, accuracy
equal to that of scipy's exact linear_sum_assignment under the same gating, and tracks chaining
the links."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import solvers
import solvers.certify
import solvers.solving
from solvers import tracking
from solvers.errors import Cancelled, InputError
from solvers.problems import PointSeries
from solvers.tracking import chain_tracks, gated_problem, outlier_fence, track


def particle_series(n=50, frames=5, persistence=0.5, seed=3, enter=0.1, leave=0.1, speed=0.04) -> PointSeries:
    return solvers.generate("particles", n=n, frames=frames, persistence=persistence, speed=speed,
                            enter_rate=enter, leave_rate=leave, seed=seed)


# ---------------------------------------------------------------------------------------------
# scipy oracles, written from the module docstring's rules (not by calling track)


def plain_links(a, b) -> np.ndarray:
    rows, cols = linear_sum_assignment(cdist(a, b)) if len(a) and len(b) else (np.zeros(0, int), np.zeros(0, int))
    return np.column_stack([rows, cols]).astype(np.int64).reshape(-1, 2)


def gated_links(a, b, gate) -> np.ndarray:
    problem = gated_problem(cdist(a, b), gate)
    rows, cols = linear_sum_assignment(problem.costs)
    keep = (rows < len(a)) & (cols < len(b))
    return np.column_stack([rows[keep], cols[keep]]).astype(np.int64).reshape(-1, 2)


def link_lengths(series, t, links) -> np.ndarray:
    return np.linalg.norm(series.frames[t][links[:, 0]] - series.frames[t + 1][links[:, 1]], axis=1)


def oracle_auto(series):
    """(gate, links per pair) by scipy: plain assignments, then the median/MAD fence re-estimated
    from the links made, each pair with a longer plain link re-solved gated."""
    pairs = range(series.n_frames - 1)
    plain = [plain_links(series.frames[t], series.frames[t + 1]) for t in pairs]
    current, gate = list(plain), None
    for _ in range(tracking.AUTO_ROUNDS):
        lengths = np.concatenate([link_lengths(series, t, current[t]) for t in pairs])
        if lengths.size < tracking.AUTO_MIN_LINKS:
            break
        median = np.median(lengths)
        mad = np.median(np.abs(lengths - median))
        fence = max(median + tracking.AUTO_K * 1.4826 * mad, tracking.AUTO_FLOOR * median)
        if fence <= 0 or (gate is not None and fence > 0.99 * gate):
            break
        gate = fence
        current = [gated_links(series.frames[t], series.frames[t + 1], gate)
                   if plain[t].size and link_lengths(series, t, plain[t]).max() > gate else plain[t] for t in pairs]
    return gate, current


def accuracy_of(series, links) -> tuple[float, float]:
    """(correct / links made, correct / true links) over the series."""
    correct = made = true = 0
    for t, pairs in enumerate(links):
        correct += int(np.count_nonzero(series.ids[t][pairs[:, 0]] == series.ids[t + 1][pairs[:, 1]]))
        made += pairs.shape[0]
        true += np.intersect1d(series.ids[t], series.ids[t + 1]).size
    return (correct / made if made else 1.0), (correct / true if true else 1.0)


def same_links(a, b) -> bool:
    key = lambda x: sorted(map(tuple, np.asarray(x).tolist()))  # noqa: E731
    return key(a) == key(b)


# ---------------------------------------------------------------------------------------------
# the default: entering and leaving points stay unmatched


@pytest.mark.parametrize("algorithm,options", [("auction", {}), ("hungarian", {}),
                                               ("hungarian", {"variant": "classical"}), ("lsa", {}),
                                               ("knn", {}), ("knn", {"k": 1}), ("lapjvsp", {})])
@pytest.mark.parametrize("persistence", [0.5, 0.9])
def test_accuracy_matches_exact_assignment_under_the_same_gating(algorithm, options, persistence):
    series = particle_series(persistence=persistence, seed=int(persistence * 10))
    gate, expected = oracle_auto(series)
    result = track(series, algorithm, backend="cpu", **options)
    assert result.gating == "auto" and gate is not None
    assert result.max_distance == pytest.approx(gate, rel=1e-12)
    assert result.accuracy == pytest.approx(accuracy_of(series, expected)[0])
    assert result.summary["recall"] == pytest.approx(accuracy_of(series, expected)[1])
    assert all(same_links(mine, theirs) for mine, theirs in zip(result.links, expected))
    assert all(s["certified"] for s in result.frame_stats)
    assert len(set(series.sizes)) > 1  # particles entered and left
    assert result.summary["gated_pairs"] > 0


def test_entering_and_leaving_points_stay_unmatched():
    series = particle_series(n=40, frames=4, enter=0.3, leave=0.2, seed=9)
    auto = track(series, "auction", backend="cpu")
    off = track(series, "auction", backend="cpu", max_distance="off")
    assert auto.accuracy > off.accuracy  # the forced enter/leave links are gone
    assert auto.summary["recall"] >= off.summary["recall"]
    assert any(s["matched"] < min(s["points"], s["next_points"]) for s in auto.frame_stats)
    for t, (pairs, stats) in enumerate(zip(auto.links, auto.frame_stats)):
        na, nb = series.sizes[t], series.sizes[t + 1]
        assert np.unique(pairs[:, 0]).size == pairs.shape[0] and np.unique(pairs[:, 1]).size == pairs.shape[0]
        assert stats["points"] == na and stats["next_points"] == nb
        assert stats["unmatched"] == na + nb - 2 * pairs.shape[0]
        lengths = link_lengths(series, t, pairs)
        assert stats["cost"] == pytest.approx(lengths.sum())
        if stats["gated"]:
            assert stats["max_distance"] == auto.max_distance and np.all(lengths <= auto.max_distance)
            assert stats["objective"] == pytest.approx(lengths.sum() + auto.max_distance * stats["unmatched"])
        else:
            assert pairs.shape[0] == min(na, nb) and stats["max_distance"] is None
        assert 0.0 <= stats["accuracy"] <= 1.0 and stats["true_links"] <= min(na, nb)


def test_auto_is_never_worse_than_the_plain_assignment_on_generated_series():
    """Over generated series of several densities, speeds and persistences: the automatic gate's
    accuracy is at least the plain assignment's, and better wherever particles enter and leave."""
    improved = 0
    for n, speed, persistence, rate, seed in itertools.product([30, 100, 300], [0.01, 0.04], [0.5, 0.9],
                                                               [0.0, 0.05, 0.2], [1, 2]):
        series = particle_series(n=n, frames=5, persistence=persistence, speed=speed, enter=rate, leave=rate,
                                 seed=seed * 1000 + n + int(100 * speed) + int(10 * persistence) + int(100 * rate))
        auto = track(series, "lsa", backend="cpu")
        off = track(series, "lsa", backend="cpu", max_distance=None)
        case = (n, speed, persistence, rate, auto.accuracy, off.accuracy)
        assert auto.accuracy >= off.accuracy - 1e-12, case
        if rate > 0 and off.accuracy < 1.0:
            assert auto.accuracy > off.accuracy, case
            improved += 1
        if rate == 0:
            assert auto.summary["recall"] >= off.summary["recall"] - 1e-12, case
    assert improved >= 30


def test_without_entering_or_leaving_auto_changes_nothing():
    series = particle_series(n=60, frames=6, enter=0.0, leave=0.0, speed=0.01, seed=12)
    auto = track(series, "lsa", backend="cpu")
    off = track(series, "lsa", backend="cpu", max_distance="off")
    assert auto.summary["gated_pairs"] == 0 and auto.max_distance is not None
    assert all(same_links(a, b) for a, b in zip(auto.links, off.links))
    assert auto.accuracy == off.accuracy == 1.0


def test_off_is_the_plain_rectangular_assignment():
    series = particle_series(n=40, frames=4, enter=0.3, leave=0.2, seed=9)
    expected = [plain_links(series.frames[t], series.frames[t + 1]) for t in range(series.n_frames - 1)]
    for off in ("off", None, "none"):
        result = track(series, "hungarian", backend="cpu", max_distance=off)
        assert result.gating == "off" and result.max_distance is None
        assert [p.shape[0] for p in result.links] == [min(a, b) for a, b in zip(series.sizes, series.sizes[1:])]
        assert result.accuracy == pytest.approx(accuracy_of(series, expected)[0])
        assert not any(s["gated"] for s in result.frame_stats)


def test_outlier_fence():
    assert outlier_fence(np.full(50, 0.02)) == pytest.approx(0.04)  # no spread: twice the median
    rng = np.random.default_rng(0)
    moves = np.linalg.norm(rng.normal(0.0, 0.01, (400, 3)), axis=1)  # 3-D Gaussian steps
    clean = outlier_fence(moves)
    assert clean > np.quantile(moves, 0.995)
    # up to almost half the links being far-apart wrong ones barely moves the fence
    contaminated = np.concatenate([moves, rng.uniform(0.2, 1.0, 300)])
    assert outlier_fence(contaminated) < 0.2 and outlier_fence(contaminated) < 4 * clean


def test_auto_with_too_few_links_applies_no_gate():
    rng = np.random.default_rng(0)
    series = PointSeries.from_frames([rng.random((3, 3)), rng.random((4, 3)), rng.random((2, 3))])
    result = track(series, "lsa", backend="cpu")
    assert result.max_distance is None and result.gating == "auto"
    assert [p.shape[0] for p in result.links] == [3, 2]


def test_static_points_are_linked():
    frame = np.random.default_rng(1).random((10, 3))
    series = PointSeries.from_frames([frame, frame, frame], [np.arange(10)] * 3)
    result = track(series, "auction", backend="cpu")
    assert result.accuracy == 1.0 and [p.shape[0] for p in result.links] == [10, 10]


def test_tracks_cover_every_point_once_in_frame_order():
    series = particle_series(n=30, frames=6, seed=5)
    result = track(series, "hungarian", backend="cpu")
    seen = [(f, i) for tr in result.tracks for (f, i) in tr]
    assert sorted(seen) == [(f, i) for f, size in enumerate(series.sizes) for i in range(size)]
    for tr in result.tracks:
        frames = [f for f, _ in tr]
        assert frames == list(range(frames[0], frames[0] + len(frames)))  # consecutive frames
    # every link continues a track
    for t, pairs in enumerate(result.links):
        owner = {p: k for k, tr in enumerate(result.tracks) for p in tr}
        assert all(owner[(t, int(a))] == owner[(t + 1, int(b))] for a, b in pairs)


def test_chain_tracks_small_example():
    links = [np.array([[0, 1], [1, 0]]), np.array([[0, 0]])]
    tracks = chain_tracks([2, 3, 1], links)
    assert tracks == [[(0, 0), (1, 1)], [(0, 1), (1, 0), (2, 0)], [(1, 2)]]


def oracle_gated_cost(a, b, max_distance):
    """Optimal (link distances + max_distance per unmatched point) by scipy on the same construction."""
    problem = gated_problem(cdist(a, b), max_distance)
    rows, cols = linear_sum_assignment(problem.costs)
    return float(problem.costs[rows, cols].sum())


@pytest.mark.parametrize("algorithm", ["auction", "hungarian", "knn"])
def test_gating_forbids_far_pairs_and_allows_unmatched_points(algorithm):
    series = particle_series(n=40, frames=4, seed=11, speed=0.05)
    gate = 0.06
    result = track(series, algorithm, backend="cpu", max_distance=gate)
    for t, pairs in enumerate(result.links):
        a, b = series.frames[t], series.frames[t + 1]
        dist = np.linalg.norm(a[pairs[:, 0]] - b[pairs[:, 1]], axis=1)
        assert np.all(dist <= gate)
        unmatched = a.shape[0] + b.shape[0] - 2 * pairs.shape[0]
        assert dist.sum() + gate * unmatched == pytest.approx(oracle_gated_cost(a, b, gate), abs=1e-9)
    assert any(s["matched"] < min(s["points"], s["next_points"]) for s in result.frame_stats)


@pytest.mark.parametrize("limit", [2, 7, 40, 4096])
def test_gated_blocks_solve_the_whole_gated_problem(limit, monkeypatch):
    """Blocks of connected components (packed up to `limit` points) give the same optimum as the
    one big augmented problem, and every block is a certified solve."""
    monkeypatch.setattr(tracking, "GATED_BLOCK", limit)
    series = particle_series(n=40, frames=4, seed=11, speed=0.05)
    gate = 0.08
    result = track(series, "hungarian", backend="cpu", max_distance=gate)
    for t, (pairs, stats) in enumerate(zip(result.links, result.frame_stats)):
        a, b = series.frames[t], series.frames[t + 1]
        dist = np.linalg.norm(a[pairs[:, 0]] - b[pairs[:, 1]], axis=1)
        optimum = oracle_gated_cost(a, b, gate)
        assert stats["objective"] == pytest.approx(optimum, abs=1e-9)
        assert dist.sum() + gate * stats["unmatched"] == pytest.approx(optimum, abs=1e-9)
        assert stats["certified"] and stats["status"] == "optimal" and stats["solves"] == stats["blocks"]
        if limit == 2:
            assert stats["blocks"] > 1
    blocks, isolated = tracking.gated_blocks(cdist(series.frames[0], series.frames[1]), gate, limit)
    rows = np.concatenate([r for r, _ in blocks])
    cols = np.concatenate([c for _, c in blocks])
    assert np.unique(rows).size == rows.size and np.unique(cols).size == cols.size  # disjoint blocks
    assert rows.size + cols.size + isolated == series.sizes[0] + series.sizes[1]


def test_knn_tracks_without_any_distance_matrix(monkeypatch):
    """knn holds the frames as points: the plain solve takes nearest neighbours and the gated
    blocks the pairs within the gate, so nothing builds an n_t x n_t+1 matrix. (Unrelated points,
    such as those entering and leaving, make knn fall back to the dense solve once its candidates
    cover 1/32 of all pairs; these frames keep every particle.)"""
    from solvers.problems import EuclideanCosts

    series = particle_series(n=1500, frames=3, enter=0.0, leave=0.0, speed=0.01, seed=21)
    gate = 0.0101  # particles move 0.01 a frame
    plain = [plain_links(series.frames[t], series.frames[t + 1]) for t in range(2)]
    gated = [gated_links(series.frames[t], series.frames[t + 1], gate) for t in range(2)]

    def refuse(*args, **kwargs):
        raise AssertionError("a distance matrix was built")

    monkeypatch.setattr(EuclideanCosts, "to_dense", refuse)
    monkeypatch.setattr(tracking, "gated_problem", refuse)
    monkeypatch.setattr(tracking, "gated_blocks", refuse)
    for max_distance, expected in (("off", plain), (gate, gated)):
        result = solvers.track(series, backend="cpu", max_distance=max_distance)
        assert all(same_links(mine, theirs) for mine, theirs in zip(result.links, expected))
        assert result.certified and {s["algorithm"] for s in result.frame_stats} <= {"knn", "lapjvsp"}
    assert all(s["gated"] and s["blocks"] >= 1 for s in result.frame_stats)  # the last run was gated


def test_pairs_within_the_gate_are_those_of_the_distance_matrix():
    rng = np.random.default_rng(8)
    for scale in (1e-30, 1.0, 1e120):
        a, b = rng.random((70, 3)) * scale, rng.random((50, 3)) * scale
        d = cdist(a, b)
        gate = float(np.sort(d.ravel())[400])  # a gate exactly at one pair's distance
        rows, cols, dist = tracking.pairs_within(a, b, gate)
        expected_rows, expected_cols = np.nonzero(d <= gate)
        assert np.array_equal(rows, expected_rows) and np.array_equal(cols, expected_cols)
        assert np.array_equal(dist, d[expected_rows, expected_cols])
        sparse = tracking.gated_sparse(rows, cols, dist, 70, 50, gate).to_dense().costs
        assert np.array_equal(sparse, tracking.gated_problem(d, gate).costs)


def test_a_gate_nothing_passes_leaves_everything_unmatched():
    series = particle_series(n=10, frames=3, seed=2)
    result = track(series, "auction", backend="cpu", max_distance=1e-9)
    assert all(p.shape == (0, 2) for p in result.links)
    assert all(s["solves"] == 0 and s["certified"] and s["objective"] == pytest.approx(1e-9 * s["unmatched"])
               for s in result.frame_stats)  # nothing within reach: no solve needed
    assert len(result.tracks) == sum(series.sizes)
    assert result.accuracy == 1.0  # no link made, none wrong


def test_without_ground_truth():
    rng = np.random.default_rng(0)
    frames = [rng.random((8, 3)), rng.random((6, 3)), rng.random((0, 3)), rng.random((4, 3))]
    for gating in ("auto", "off"):
        result = track(PointSeries.from_frames(frames), "hungarian", backend="cpu", max_distance=gating)
        assert result.accuracy is None and "accuracy" not in result.frame_stats[0]
        assert result.summary["recall"] is None
        assert [p.shape[0] for p in result.links] == [6, 0, 0]  # 6 links: too few to estimate a gate


@pytest.mark.parametrize("bad", [-1.0, 0.0, float("inf"), float("nan"), "far", "-2", [1.0]])
def test_bad_max_distance(bad):
    with pytest.raises(InputError, match="max_distance"):
        track(particle_series(n=5, frames=2), "auction", max_distance=bad)


def test_max_distance_as_text():
    series = particle_series(n=20, frames=3, seed=4)
    assert track(series, "lsa", backend="cpu", max_distance="0.05").max_distance == 0.05
    assert track(series, "lsa", backend="cpu", max_distance="AUTO").gating == "auto"


def test_bad_input():
    with pytest.raises(InputError):
        track(np.zeros((3, 3)), "auction")


def test_cancellation_between_frames():
    class StopNow(solvers.Observer):
        def should_stop(self):
            return True
    with pytest.raises(Cancelled):
        track(particle_series(n=5, frames=3), "auction", backend="cpu", observer=StopNow())


def test_api_entry_point():
    series = particle_series(n=12, frames=3, seed=4)
    result = solvers.track(series, algorithm="auction", backend="cpu")
    assert result.summary["certified"] and result.summary["links"] == sum(s["matched"] for s in result.frame_stats)
    assert result.certified and result.series is series
    summary = result.summary
    assert summary["tracks"] == len(result.tracks) and summary["gating"] == "auto"
    assert summary["gap"] == sum(s["gap"] for s in result.frame_stats) and summary["gap"] >= 0
    assert summary["solves"] == sum(s["solves"] for s in result.frame_stats) >= series.n_frames - 1
    assert all(s["status"] == "optimal" and "certified" in s["certificate"] for s in result.frame_stats)


# ---------------------------------------------------------------------------------------------
# a series to track needs two frames; progress "frame pair k of N" for every front end


def test_a_one_frame_series_is_refused_with_its_path():
    one = PointSeries.from_frames([np.zeros((4, 3))], source="one.ply")
    with pytest.raises(InputError) as caught:
        track(one, "lsa", backend="cpu")
    assert str(caught.value) == ("one.ply: a point series needs at least two frames to track; it holds one "
                                 "(a frame column in .csv or .ply, or frame_ptr in .npz, puts points in frames)")
    with pytest.raises(InputError, match="at least two frames"):
        solvers.track(PointSeries.from_frames([np.zeros((4, 3))]), "lsa")


class ProgressLog(solvers.Observer):
    def __init__(self):
        self.events = []  # ("progress", done, total, unit) and ("start",) in the order heard

    def on_progress(self, done, total, unit):
        self.events.append(("progress", done, total, unit))

    def on_start(self, info):
        self.events.append(("start",))


def _runs(events, unit):
    """The (done, total) reports of ``unit``, split into runs that each end with done == total."""
    runs, current = [], []
    for event in events:
        if event[0] == "progress" and event[3] == unit:
            current.append(event[1:3])
            if event[1] == event[2]:
                runs.append(current)
                current = []
    assert not current, "a run of reports did not end with done == total"
    return runs


@pytest.mark.parametrize("gating", ["off", 0.05])
def test_progress_reports_each_frame_pair_before_its_solve(gating):
    series = particle_series(n=12, frames=5, seed=2)
    log = ProgressLog()
    result = track(series, "lsa", backend="cpu", observer=log, max_distance=gating)
    pairs = series.n_frames - 1
    assert _runs(log.events, "frame pair") == [[(k, pairs) for k in range(pairs + 1)]]
    for k in range(pairs):  # each report comes before the solves of its pair
        at = log.events.index(("progress", k, pairs, "frame pair"))
        assert log.events[at + 1] == ("start",)
    assert sum(e == ("start",) for e in log.events) == result.summary["solves"]


def test_progress_of_the_automatic_gate_reports_its_re_solves():
    series = particle_series(n=40, frames=4, seed=3, enter=0.2, leave=0.2)
    log = ProgressLog()
    result = track(series, "lsa", backend="cpu", observer=log)
    assert result.summary["gated_pairs"] > 0  # the gate re-solved some pairs
    assert _runs(log.events, "frame pair") == [[(k, 3) for k in range(4)]]
    gated = _runs(log.events, "gated frame pair")
    assert len(gated) == result.summary["gate_rounds"] >= 1
    assert all(run == [(k, run[0][1]) for k in range(run[0][1] + 1)] for run in gated)
    assert {e[0] for e in log.events} == {"progress", "start"}


def test_no_observer_no_progress(monkeypatch):
    """Nobody listening: the base class's hook is never even called."""
    monkeypatch.setattr(solvers.Observer, "on_progress", lambda *a: pytest.fail("on_progress without an observer"))
    assert track(particle_series(n=6, frames=3), "lsa", backend="cpu").summary["solves"] >= 2


def test_the_series_may_be_frames_or_a_path(tmp_path):
    rng = np.random.default_rng(5)
    series = PointSeries.from_frames([rng.random((10, 3)) for _ in range(3)])
    reference = track(series, "lsa", backend="cpu", max_distance="off")
    from_frames = solvers.track([np.array(f) for f in series.frames], "lsa", backend="cpu", max_distance="off")
    stacked = solvers.track(np.stack(series.frames), "lsa", backend="cpu", max_distance="off")
    solvers.save(series, tmp_path / "s.npz")
    from_path = solvers.track(str(tmp_path / "s.npz"), "lsa", backend="cpu", max_distance="off")
    for other in (from_frames, stacked, from_path):
        assert [np.array_equal(a, b) for a, b in zip(other.links, reference.links)] == [True] * 2
    with pytest.raises(TypeError, match="sequence of \\(n, 3\\) arrays"):
        solvers.track(5, "lsa")
    with pytest.raises(TypeError, match="solvers.Observer"):
        solvers.track(series, "lsa", observer="x")
    with pytest.raises(InputError, match="at least two frames"):
        solvers.track(series.frames[0], "lsa")  # one (n, 3) array: one frame


def test_seconds_are_the_algorithms_own_not_certifying(monkeypatch):
    """As for one solve (Result.seconds), a frame pair's seconds leave out certification: here
    certifying takes 100 s on an injected clock, solving 1 ms per clock reading."""
    import solvers.api
    import solvers.certify

    class Clock:
        now = 0.0

        def perf_counter(self):
            self.now += 1e-3
            return self.now

    clock = Clock()
    certify = solvers.certify.certify

    def slow_certify(problem, solution):
        clock.now += 100.0
        return certify(problem, solution)

    monkeypatch.setattr(solvers.solving, "time", clock)
    monkeypatch.setattr(tracking, "time", clock, raising=False)  # any clock tracking might read
    monkeypatch.setattr(solvers.certify, "certify", slow_certify)
    result = track(particle_series(n=8, frames=4, seed=1), "lsa", backend="cpu", max_distance="off")
    assert result.summary["solves"] == 3 and clock.now > 300  # certified, on the slow clock
    assert 0 < result.summary["seconds"] < 1 and result.seconds == pytest.approx(result.summary["seconds"])
    assert all(0 < s["seconds"] < 1 and s["seconds"] == s["solve_seconds"] for s in result.frame_stats)


def test_coordinates_whose_distances_overflow_are_refused_in_one_line():
    """A series may store any finite coordinates, but tracking computes distances: past 1e150 they
    overflow, and the user gets one line naming the frame, not an "infeasible" assignment."""
    rng = np.random.default_rng(0)
    series = PointSeries.from_frames([rng.random((30, 3)), rng.random((30, 3)) * 1e200], source="far.npz")
    for algorithm in ("knn", "lsa"):
        with pytest.raises(InputError) as info:
            solvers.track(series, algorithm, backend="cpu")
        text = str(info.value)
        assert "frame 1" in text and "rescale the points" in text and "far.npz" in text and "\n" not in text


def test_point_tracks_number_every_point_as_chain_tracks_does():
    series = solvers.generate("particles", n=60, frames=6, seed=4, enter_rate=0.1, leave_rate=0.1)
    tracked = solvers.track(series)
    ids = tracked.point_tracks()
    assert [a.size for a in ids] == series.sizes
    for k, track in enumerate(tracked.tracks):
        assert all(ids[frame][index] == k for frame, index in track)
    # a result without its series (as read back from a file) numbers the same from its tracks
    import dataclasses
    assert all(np.array_equal(x, y) for x, y in zip(dataclasses.replace(tracked, series=None).point_tracks(), ids))
