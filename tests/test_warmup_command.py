"""`matchscope warmup`: every kernel ahead of time, with the cache's location (issue 12)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import solvers
from conftest import FULL_SWEEPS
from solvers import warmup
from solvers.cli import main
from solvers.problems import CostMatrix


def run_on_empty_cache(code: str, tmp_path, timeout: int):
    """``code`` in a fresh interpreter whose numba kernel cache is an empty folder under tmp_path."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "kernels"), PYTHONPATH=str(root))
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def tiny_plan(monkeypatch, tmp_path):
    graph = solvers.generate("random-bipartite", rows=8, cols=8, degree=2, seed=1)
    plan = [warmup.WarmupItem("pr-seq", graph, {}, observed=True),
            warmup.WarmupItem("pr-seq", graph, {"init": "none"}, observed=False)]
    monkeypatch.setattr(warmup, "warmup_plan", lambda backend: plan)
    monkeypatch.setattr(warmup, "marker_path", lambda backend: tmp_path / f"warmed-{backend}.json")
    return plan


def test_warmup_runs_the_plan_marks_the_backend_warm_and_says_where_the_cache_is(tiny_plan, capsys, tmp_path,
                                                                                  monkeypatch):
    # the host passes, the series trackers and the batch solver are warmed too (their own tests below, the
    # whole command under make test-all); here they would compile for two minutes on an empty cache
    monkeypatch.setattr(warmup, "series_algorithms", lambda backend: ["knn"])
    monkeypatch.setattr(warmup, "warm_up", lambda *args, **kwargs: 0.0)
    monkeypatch.setattr(warmup, "warm_batches", lambda backend: None)
    monkeypatch.setattr(warmup, "warm_host_passes", lambda: None)
    assert not warmup.is_warm("cpu")
    assert main(["warmup", "--backend", "cpu"]) == 0
    out, err = capsys.readouterr()
    lines = out.strip().splitlines()
    runs = len(tiny_plan) + 1 + 1  # the plan, one series tracker, the batch solver
    assert lines[0].startswith(f"cpu: ready after {runs} untimed runs in ")
    assert lines[-1].startswith("kernel cache: ")
    assert err == ""
    assert warmup.is_warm("cpu")
    assert json.loads((tmp_path / "warmed-cpu.json").read_text())["algorithms"] == ["pr-seq"]


def test_the_real_plan_covers_every_compiled_algorithm_and_option_value():
    plan = warmup.warmup_plan("cpu")
    compiled = {name for name, a in solvers.algorithms().items() if a.compiled and "cpu" in a.backends}
    assert {item.algorithm for item in plan} == compiled
    for name in ("gpr", "hungarian", "wbpr", "auction"):
        algo = solvers.algorithms()[name]
        for option in algo.options:
            if option.choices:
                seen = {item.options.get(option.name, option.default) for item in plan if item.algorithm == name}
                assert seen == set(option.choices), (name, option.name)
    kinds = {(item.algorithm, type(item.problem).__name__) for item in plan}
    assert ("hungarian", "CostMatrix") in kinds and ("lapjvsp", "SparseCosts") in kinds


def test_a_backend_that_is_not_here_is_one_line(capsys):
    from solvers.targets import cuda_available
    if cuda_available():
        pytest.skip("a GPU is here")
    assert main(["warmup", "--backend", "cuda"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and err.startswith("error: ")


FRESH_CACHE_CODE = """
import sys, solvers
from solvers import warmup
series = solvers.load("sample_graphs/particles_100x10.npz")
for algorithm in ("auction", "hungarian"):
    warmup.warm_up(series, algorithm, "cpu", {}, track=True)
    with warmup.watch_compiles() as watch:
        solvers.track(series, algorithm=algorithm, backend="cpu")
    print(algorithm, watch.compiled)
"""


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles the trackers from an empty cache (16 s)")
def test_a_series_warm_up_leaves_nothing_to_compile_for_the_timed_run(tmp_path):
    """On an empty kernel cache, the untimed warm-up of a point series (frames of different sizes,
    an outlier link for the automatic gate, more points than the auction's Gauss-Seidel tail) takes
    every compiled path the tracking run then takes: its solve time holds no compiling."""
    done = run_on_empty_cache(FRESH_CACHE_CODE, tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["auction", "0", "hungarian", "0"], done.stdout


BATCH_CODE = """
import numpy as np
from solvers import warmup
from solvers.batch.api import solve_batch
warmup.warm_batches("cpu")
rng = np.random.default_rng(5)
with warmup.watch_compiles(backend="cpu") as watch:
    for dtype in (np.float64, np.float32):
        solve_batch(rng.integers(0, 50, (20, 30, 30)).astype(dtype), backend="cpu")
        solve_batch(rng.random((7, 9, 40)).astype(dtype), backend="cpu")
        mapped = rng.random((5, 6, 6)).astype(dtype)
        mapped.flags.writeable = False
        solve_batch(mapped, backend="cpu")
        solve_batch([rng.random((n, n + 2)).astype(dtype) for n in range(1, 30)] + [rng.random((9, 4)).astype(dtype)],
                    backend="cpu")
print(watch.compiled)
"""


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles the batch solver from an empty cache (25 s)")
def test_the_batch_warm_up_leaves_nothing_to_compile(tmp_path):
    """`matchscope warmup` includes the batch solver: after warm_batches on an empty kernel cache,
    batches of other sizes, both float types, rectangles and ragged lists compile nothing."""
    done = run_on_empty_cache(BATCH_CODE, tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0"], done.stdout


def test_warm_all_warms_the_tracking_of_every_compiled_series_algorithm(tiny_plan, monkeypatch):
    """`matchscope warmup` runs solvers.track once per compiled algorithm that tracks point series (a
    single solve does not take the tracking's paths: after warmup, knn, hungarian and auction
    compiled on their first series)."""
    seen = []
    monkeypatch.setattr(warmup, "warm_up", lambda problem, name, backend, options, track=False, **_: seen.append(
        (name, backend, track, problem.kind)))
    monkeypatch.setattr(warmup, "warm_batches", lambda backend: None)
    monkeypatch.setattr(warmup, "warm_host_passes", lambda: None)  # every pass's variants: test-all's whole warm-up
    steps = []
    report = warmup.warm_all("cpu", progress=lambda done, total, label: steps.append((done, total, label)))
    compiled = sorted(n for n, a in solvers.algorithms().items() if a.tracks_points and a.compiled and "cpu" in a.backends)
    assert {"knn", "hungarian", "auction"} <= set(compiled)
    assert sorted(name for name, *_ in seen) == compiled
    assert all(backend == "cpu" and track and kind == "points" for _, backend, track, kind in seen)
    assert report.runs == len(tiny_plan) + len(compiled) + 1
    # one step each for the host passes, the plan's runs, the series and the batch solver, counted
    # from the start (the total grew from 127 to 128 near the end, a newcomer pass saw)
    total = 1 + len(tiny_plan) + len(compiled) + 1
    assert [done for done, _, _ in steps] == list(range(total + 1))
    assert {t for _, t, _ in steps} == {total} and steps[-1][2] == "done"


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles every cpu kernel from an empty cache (minutes)")
def test_the_whole_warm_up_then_a_second_one_compiles_nothing(tmp_path):
    """`matchscope warmup --backend cpu` end to end on an empty kernel cache (host passes, every plan
    item, the series trackers, the batch solver), then again in a new process: nothing compiles."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "kernels"), PYTHONPATH=str(root))
    command = [sys.executable, "-m", "solvers", "warmup", "--backend", "cpu"]
    first = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "compiling" not in first.stderr, first.stderr  # its own runs say nothing: it reports once, itself
    again = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and "nothing compiled" in again.stdout, again.stdout


def test_the_batch_solvers_warm_up_runs_no_warm_up_of_its_own(monkeypatch):
    """warm_all's batch step calls solve_batch on every kind: none of those calls warms up first
    (each would print its own compiling line inside `matchscope warmup`)."""
    monkeypatch.setattr(warmup, "_WARMED", set())
    nested = []
    monkeypatch.setattr(warmup, "warm_batch", lambda *args, **kwargs: nested.append(args))
    warmup.warm_batches("cpu")
    assert nested == []


def test_the_batch_warm_up_takes_the_kind_the_run_will_compile():
    """One helper for the command line, the scale-out task and the explorer: the float type and
    whether the costs are read-only (a memory-mapped file), which numba compiles apart."""
    import numpy as np
    mapped = np.zeros((2, 3, 3), np.float32)
    mapped.flags.writeable = False
    assert warmup.batch_kind(mapped) == (np.float32, False)
    assert warmup.batch_kind(np.zeros((2, 3, 3))) == (np.float64, True)
    assert warmup.batch_kind([np.zeros((2, 2), np.float32), np.zeros((3, 1))]) == (np.float64, True)  # packed as float64
    assert warmup.batch_kind([np.zeros((2, 2), np.float32)] * 2) == (np.float32, True)
    assert warmup.batch_kind([]) == (np.float64, True)
    batch = solvers.load("sample_graphs/dense-lap-batch_100x16x24.npy")
    assert warmup.batch_kind(batch) == (np.float64, bool(batch.batch.packed.costs.flags.writeable))
    with warmup.watch_compiles(backend="cpu"):
        warmup.warm_batch((np.float64, False), "cpu")  # runs (compiles or loads) without error


API_CODE = """
import sys
import numpy as np
import solvers
from solvers import api, warmup
timed_run = api.run_algorithm


def counted(*args, **kwargs):  # what the timed run (and its certificate) compiled
    with warmup.watch_compiles() as watch:
        result = timed_run(*args, **kwargs)
    print(watch.compiled, result.certificate.optimal, flush=True)
    return result


api.run_algorithm = counted
costs = np.random.default_rng(1).random((40, 40))
for _ in range(2):
    solvers.solve(costs, "lsa", backend="cpu")
    print("-- a call ended", file=sys.stderr, flush=True)
"""


def test_the_api_prepares_a_first_run_untimed_and_says_so_when_it_compiles(tmp_path):
    """solvers.solve's first call of a kind in a process runs its warm-up first, untimed: on an
    empty kernel cache one line on stderr says that it compiles and the timed run compiles nothing;
    the second call, and a new process on the filled cache, say nothing."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "kernels"), PYTHONPATH=str(root))
    runs = [subprocess.run([sys.executable, "-c", API_CODE], cwd=root, env=env, capture_output=True, text=True,
                           timeout=600) for _ in range(2)]
    for done in runs:
        assert done.returncode == 0, done.stderr[-2000:]
    first, again = runs
    assert first.stderr.splitlines() == [
        "compiling lsa (cost matrices) for cpu (not in this machine's kernel cache yet; cached for later runs)",
        "-- a call ended", "-- a call ended"], first.stderr
    assert again.stderr.splitlines() == ["-- a call ended", "-- a call ended"], again.stderr
    # the warm-up's own run (on a tiny corner) compiled; the two timed runs compiled nothing
    warm, *timed = [line.split() for line in first.stdout.splitlines()]
    assert int(warm[0]) > 0 and timed == [["0", "True"], ["0", "True"]], first.stdout


def test_a_point_set_warms_up_on_its_first_points_in_its_own_orientation():
    import numpy as np
    rng = np.random.default_rng(3)
    wide = solvers.EuclideanCosts.from_points(rng.random((300, 2)), rng.random((900, 2)))
    tiny = warmup.warmup_problem(wide)
    assert isinstance(tiny, solvers.EuclideanCosts) and tiny.shape == (warmup.COST_CORNER, 2 * warmup.COST_CORNER)
    assert np.array_equal(tiny.a, wide.a[:warmup.COST_CORNER]) and tiny.a.shape[1] == 2
    tall = solvers.EuclideanCosts.from_points(rng.random((90, 3)), rng.random((20, 3)))
    assert warmup.warmup_problem(tall).shape == (90, 20)


def test_solve_batch_warms_up_each_kind_once_before_its_clock_starts(monkeypatch):
    """The first batch of a kind (float type, writeable) in a process runs warm_batch before the
    timed part; a second batch of that kind does not; a read-only batch is another kind."""
    import numpy as np
    from solvers.batch import api as batch_api
    monkeypatch.setattr(warmup, "_WARMED", set())
    events = []
    real_warm, real_clock = warmup.warm_batch, batch_api.time.perf_counter

    def warm(kind, backend, algorithm="hungarian"):
        events.append(("warm", kind, backend))
        real_warm(kind, backend, algorithm)

    def clock():
        if not getattr(warmup._WARMING, "active", False):
            events.append(("clock",))
        return real_clock()

    monkeypatch.setattr(warmup, "warm_batch", warm)
    monkeypatch.setattr(batch_api.time, "perf_counter", clock)
    costs = np.random.default_rng(2).random((4, 5, 6))
    first = solvers.solve_batch(costs, backend="cpu")
    assert events[0] == ("warm", (np.float64, True), "cpu") and ("clock",) in events
    assert not any(e[0] == "warm" for e in events[1:]), events  # its own warm-up is not warmed up again
    events.clear()
    solvers.solve_batch(costs, backend="cpu")
    assert events and all(e == ("clock",) for e in events)
    mapped = costs.copy()
    mapped.flags.writeable = False
    events.clear()
    again = solvers.solve_batch(mapped, backend="cpu")
    assert events[0] == ("warm", (np.float64, False), "cpu")
    assert np.array_equal(first.assignments[0], again.assignments[0])
    with pytest.raises(solvers.InputError):  # a batch of the wrong shape: refused before any warm-up
        events.clear()
        solvers.solve_batch(np.zeros((3, 3), np.float16), backend="cpu")
    assert events == []


FRESH_KINDS_CODE = """
import sys
import numpy as np
import solvers
from solvers import api, warmup
from solvers.batch import api as batch_api


def counting(run):  # prints what the timed part compiled
    def counted(*args, **kwargs):
        with warmup.watch_compiles() as watch:
            out = run(*args, **kwargs)
        print(watch.compiled, flush=True)
        return out
    return counted


api.run_algorithm = counting(api.run_algorithm)
load = batch_api._load
batch_api._load = lambda *args: (counting(load(*args)[0]), load(*args)[1])
rng = np.random.default_rng(1)
a = rng.random((200, 3))
for _ in range(2):
    assert solvers.match_points(a, a + rng.normal(0, 0.01, a.shape)).certificate.optimal
    print("-- points", file=sys.stderr, flush=True)
for _ in range(2):
    assert solvers.solve_batch(rng.random((20, 30, 40)), backend="cpu").summary()["certified"] == 20
    print("-- batch", file=sys.stderr, flush=True)
"""


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles the batch solver and knn from an empty cache")
def test_point_sets_and_batches_are_prepared_untimed_on_an_empty_cache(tmp_path):
    """match_points (solve on EuclideanCosts) and solve_batch compile on their first call, before
    the timed part, and say so in one line each, naming what they compile for."""
    done = run_on_empty_cache(FRESH_KINDS_CODE, tmp_path, timeout=1200)
    assert done.returncode == 0, done.stderr[-2000:]
    why = "(not in this machine's kernel cache yet; cached for later runs)"
    assert done.stderr.splitlines() == [f"compiling knn (point sets) for cpu {why}", "-- points", "-- points",
                                        f"compiling hungarian (batches) for cpu {why}", "-- batch", "-- batch"]
    timed = [line for line in done.stdout.splitlines() if line.strip()]
    # each kind's warm-up run compiled; the two timed runs after it compiled nothing
    assert len(timed) == 6 and int(timed[0]) > 0 and int(timed[3]) > 0, done.stdout
    assert timed[1:3] == timed[4:] == ["0", "0"], done.stdout


def test_square_wide_and_tall_costs_warm_up_apart_in_their_own_shape():
    """A square assignment takes compiled paths a rectangle does not (the column reduction), and a
    rectangle its own (the reverse auction): one warm-up served both, and a square solve after a
    rectangular one compiled for a second inside its timed call (a newcomer saw it)."""
    import numpy as np
    from solvers.problems import CostMatrix
    rng = np.random.default_rng(4)
    made = {"square": CostMatrix.from_array(rng.random((60, 60))), "wide": CostMatrix.from_array(rng.random((9, 70))),
            "tall": CostMatrix.from_array(rng.random((70, 9)))}
    keys = {name: warmup.warmup_key(problem, "hungarian", "cpu", {}) for name, problem in made.items()}
    assert len(set(keys.values())) == 3
    for name, problem in made.items():
        assert warmup.shape_kind(warmup.warmup_problem(problem)) == name
    sparse = {name: solvers.generate("sparse-lap", rows=r, cols=c, degree=4, seed=1)
              for name, (r, c) in {"square": (30, 30), "wide": (20, 50), "tall": (50, 20)}.items()}
    for name, problem in sparse.items():
        assert warmup.shape_kind(problem) == name == warmup.shape_kind(warmup.warmup_problem(problem))
    points = solvers.EuclideanCosts(rng.random((20, 3)), rng.random((20, 3)))
    assert warmup.shape_kind(points) == "square" == warmup.shape_kind(warmup.warmup_problem(points))


SHAPES_CODE = """
import numpy as np, solvers
from solvers import warmup
rng = np.random.default_rng(6)
cases = [("hungarian", rng.random((16, 24)), rng.random((2, 2))),
         ("auction", rng.random((16, 16)), rng.random((5, 9))),
         ("knn", solvers.EuclideanCosts(rng.random((12, 3)), rng.random((30, 3))),
          solvers.EuclideanCosts(rng.random((20, 3)), rng.random((20, 3))))]
for algorithm, first, second in cases:
    solvers.solve(first, algorithm, backend="cpu")
    warmup.prepare(solvers.api_inputs.as_problem(second), algorithm, "cpu", {})
    with warmup.watch_compiles() as watch:
        solvers.solve(second, algorithm, backend="cpu")
    print(algorithm, watch.compiled)
"""


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles three solvers from an empty cache (about 30 s)")
def test_a_solve_of_another_shape_compiles_nothing_inside_its_timed_call(tmp_path):
    """On an empty kernel cache: a square solve after a rectangular one (and the reverse, and point
    sets made with the constructor) finds its own warm-up run before its clock starts."""
    done = run_on_empty_cache(SHAPES_CODE, tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["hungarian", "0", "auction", "0", "knn", "0"], done.stdout


def test_the_auction_warms_up_past_the_size_where_its_tail_starts():
    """The auction's steps change where its tails start (64 unassigned on the cpu, 1024 on a GPU,
    Algorithm.warmup_rows): a larger problem also warms up one row past that size, so the bulk's
    bidding rounds compile in the warm-up (the tiny corner takes the tail and its price updates),
    and is keyed apart from smaller problems."""
    from solvers.assignment.auction import PARALLEL_TAIL_BELOW, TAIL_BELOW
    rng = np.random.default_rng(8)
    small, mid = CostMatrix.from_array(rng.random((50, 50))), CostMatrix.from_array(rng.random((300, 400)))
    big = CostMatrix.from_array(rng.random((PARALLEL_TAIL_BELOW + 5, PARALLEL_TAIL_BELOW + 5)))
    corner = warmup.COST_CORNER

    def shapes(problem, algorithm):
        return [tiny.shape for tiny in warmup.warmup_problems(problem, algorithm)]
    assert shapes(small, "auction") == [(corner, corner)]
    assert shapes(mid, "auction") == [(corner, 2 * corner), (TAIL_BELOW + 1, 2 * TAIL_BELOW + 2)]
    assert shapes(big, "auction") == [(corner, corner), (PARALLEL_TAIL_BELOW + 1,) * 2]
    assert shapes(mid, "hungarian") == [(corner, 2 * corner)]
    keys = {warmup.warmup_key(p, "auction", "cpu", {}) for p in (small, mid, big)}
    assert len(keys) == 3
    series = solvers.PointSeries.from_frames([rng.random((PARALLEL_TAIL_BELOW + 40, 3)) for _ in range(2)])
    tiny, past = warmup.warmup_problems(series, "auction")
    assert len(tiny.frames[0]) == warmup.POINTS and len(past.frames[0]) == PARALLEL_TAIL_BELOW + 1
    assert len(past.frames) == 3
    assert [len(s.frames[0]) for s in warmup.warmup_problems(series, "lsa")] == [warmup.POINTS]
    assert dict(warmup.past_options("auction")) == {"tail": "off"} and warmup.past_options("hungarian") == ()


PAST_TAIL_CODE = """
import numpy as np, solvers
from solvers import warmup
rng = np.random.default_rng(9)
solvers.solve(rng.integers(0, 99, (20, 20)), "auction", backend="cpu")  # the tail alone
for shape in ((300, 300), (200, 320)):  # the rectangle: more than 64 objects overpriced after a phase
    problem = solvers.api_inputs.as_problem(rng.integers(0, 201, shape))
    warmup.prepare(problem, "auction", "cpu", {})
    with warmup.watch_compiles() as watch:
        result = solvers.solve(problem, "auction", backend="cpu")
    print(watch.compiled, result.stats["jacobi_rounds"] > 0, result.stats["reverse_jacobi_rounds"] > 0)
"""


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles the auction from an empty cache (about 15 s)")
def test_an_auction_past_its_tail_compiles_nothing_inside_its_timed_call(tmp_path):
    """On an empty kernel cache: after a solve small enough for the tail alone, a larger one (its
    Jacobi rounds) and a rectangle (its reverse Jacobi rounds, which its warm-up's corner alone does
    not reach: 2.8 s of compiling inside the timed call before) find their own warm-up first."""
    done = run_on_empty_cache(PAST_TAIL_CODE, tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "True", "False", "0", "True", "True"], done.stdout


LARGE_CODE = r"""
import numpy as np
import solvers
from solvers import warmup
from solvers.problems import CostMatrix
rng = np.random.default_rng(0)
for problem, algorithm in ((CostMatrix.from_array(rng.integers(0, 1000, (1100, 1100))), "hungarian"),
                           (solvers.generate("sparse-lap", rows=300_000, cols=300_000, degree=4, seed=1), "auction")):
    warmup.prepare(problem, algorithm, "cpu", {})
    with warmup.watch_compiles() as watch:
        result = solvers.solve(problem, algorithm, backend="cpu")  # the whole call, certificate included
    print(watch.compiled, result.certified)
"""


@pytest.mark.skipif(not FULL_SWEEPS, reason="make test-all: compiles two solvers from an empty cache (about 30 s)")
def test_a_large_problem_compiles_nothing_inside_the_callers_solve(tmp_path):
    """On an empty kernel cache, past 2^20 costs (dense) or stored pairs (sparse): the certificate's
    multi-core loops compile in the warm-up, not in the caller's solve (a first 1500 x 1500 solve
    spent 2.2 s there, for a 0.07 s run)."""
    done = run_on_empty_cache(LARGE_CODE, tmp_path, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "True", "0", "True"], done.stdout


def test_the_large_problem_warm_up_takes_the_certificates_argument_types():
    """The dual check's multi-core loop, warmed for a large problem, serves its certificate: the
    solve adds no signature to it (dense costs, and sparse costs with their read-only indices)."""
    from solvers import certify
    from solvers.problems import SparseCosts
    rng = np.random.default_rng(1)
    n = 270_000  # four pairs a row, the diagonal's the cheapest: solved at once, past 2^20 pairs
    offsets = np.tile(np.arange(4), n)
    banded = SparseCosts.from_edges(np.repeat(np.arange(n), 4), (np.repeat(np.arange(n), 4) + offsets) % n,
                                    np.where(offsets == 0, 0.0, 1.0 + rng.random(4 * n)), n, n)
    for problem, algorithm in ((CostMatrix.from_array(rng.random((1030, 1030))), "lsa"), (banded, "sparse-sap")):
        warmup.warm_large_passes(problem)
        before = len(certify._dual_rows_parallel.signatures)
        assert solvers.solve(problem, algorithm, backend="cpu").certified
        assert len(certify._dual_rows_parallel.signatures) == before
