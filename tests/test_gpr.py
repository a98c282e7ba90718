"""G-PR (solvers.matching.gpr) on cpu and under the CUDA simulator, against scipy's Hopcroft-Karp.

Every answer is checked three ways: its size equals scipy.sparse.csgraph.maximum_bipartite_matching,
it is a matching of the graph (each pair an edge, both directions agree), and, through
solvers.solve, solvers.certify's König certificate. The lock-free races are exercised by repeated
runs and by runs without the final maximality check (which would otherwise repair a lost column).
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import maximum_bipartite_matching

import solvers
from solvers.errors import BackendUnavailable, Cancelled, InputError
from solvers.matching import gpr, gpr_device
from solvers.problems import BipartiteGraph
from solvers.telemetry import NULL, Observer, Recorder, RunInfo, Telemetry

VARIANTS = ("first", "noshrink", "shrink")
COMBOS = list(itertools.product(VARIANTS, ("adaptive", "fixed"), ("cheap", "none")))


# ---------------------------------------------------------------- graphs and oracles

def _relabel(rng, rows, cols, m, n):
    pr, pc = rng.permutation(max(m, 1)), rng.permutation(max(n, 1))
    rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
    return BipartiteGraph.from_edges(pr[rows] if rows.size else rows, pc[cols] if cols.size else cols, m, n)


def path_graph(k, rng):
    """c0 - r0 - c1 - r1 - ... - r_{k-1}: one perfect matching; a greedy start can leave an
    augmenting path through the whole graph."""
    rows = list(range(k)) + list(range(k - 1))
    cols = list(range(k)) + list(range(1, k))
    return _relabel(rng, rows, cols, k, k)


def small_graphs(count: int, seed: int, max_side: int = 30) -> list[BipartiteGraph]:
    """``count`` small graphs of every shape this algorithm must survive, deterministic in seed."""
    rng = np.random.default_rng(seed)
    fixed = [BipartiteGraph.from_edges([], [], 0, 0), BipartiteGraph.from_edges([], [], 0, 5),
             BipartiteGraph.from_edges([], [], 4, 0), BipartiteGraph.from_edges([], [], 4, 4),
             BipartiteGraph.from_edges([0], [0], 1, 1)]
    graphs = list(fixed)
    kinds = ("random-wide", "random-tall", "isolated", "path", "blocks", "stars", "deficient", "dense")
    while len(graphs) < count:
        kind = kinds[len(graphs) % len(kinds)]
        side = int(rng.integers(2, max_side + 1))
        if kind in ("random-wide", "random-tall"):
            small, big = int(rng.integers(1, side + 1)), side
            m, n = (small, big) if kind == "random-wide" else (big, small)
            e = int(rng.integers(0, 3 * max(m, n) + 1))
            graphs.append(BipartiteGraph.from_edges(rng.integers(0, m, e), rng.integers(0, n, e), m, n))
        elif kind == "isolated":  # edges only among a subset: isolated rows and columns
            m, n = side, int(rng.integers(1, side + 1))
            e = int(rng.integers(1, 2 * side + 1))
            graphs.append(BipartiteGraph.from_edges(rng.integers(0, max(1, m // 2), e),
                                                    rng.integers(0, max(1, n // 2), e), m, n))
        elif kind == "path":
            graphs.append(path_graph(side, rng))
        elif kind == "blocks":  # complete bipartite blocks, a few edges between them
            rows, cols, r0, c0 = [], [], 0, 0
            for _ in range(int(rng.integers(1, 4))):
                a, b = int(rng.integers(1, 6)), int(rng.integers(1, 6))
                rr, cc = np.meshgrid(np.arange(r0, r0 + a), np.arange(c0, c0 + b))
                rows += rr.ravel().tolist()
                cols += cc.ravel().tolist()
                r0, c0 = r0 + a, c0 + b
            extra = int(rng.integers(0, 4))
            rows += rng.integers(0, r0, extra).tolist()
            cols += rng.integers(0, c0, extra).tolist()
            graphs.append(_relabel(rng, rows, cols, r0, c0))
        elif kind == "stars":  # a row hub and a column hub plus sparse noise
            m, n = side, int(rng.integers(2, side + 1))
            rows = [0] * n + list(range(m)) + rng.integers(0, m, 3).tolist()
            cols = list(range(n)) + [0] * m + rng.integers(0, n, 3).tolist()
            graphs.append(_relabel(rng, rows, cols, m, n))
        elif kind == "deficient":  # many columns share a few rows (Hall's condition fails)
            m, n = int(rng.integers(1, 4)), side
            e = 2 * n
            graphs.append(BipartiteGraph.from_edges(rng.integers(0, m, e), rng.integers(0, n, e), m, n))
        else:
            m, n = int(rng.integers(1, 12)), int(rng.integers(1, 12))
            mask = rng.random((m, n)) < 0.6
            rows, cols = np.nonzero(mask)
            graphs.append(BipartiteGraph.from_edges(rows, cols, m, n))
    return graphs[:count]


def scipy_size(g: BipartiteGraph) -> int:
    if g.n_edges == 0:
        return 0
    match = maximum_bipartite_matching(g.to_sparse().tocsr(), perm_type="column")
    return int(np.count_nonzero(match >= 0))


def check_matching(g: BipartiteGraph, row_match, col_match, value, expected: int) -> None:
    row_match, col_match = np.asarray(row_match), np.asarray(col_match)
    assert row_match.shape == (g.n_rows,) and col_match.shape == (g.n_cols,)
    rows = np.flatnonzero(row_match >= 0)
    cols = np.flatnonzero(col_match >= 0)
    assert value == rows.size == cols.size == expected
    assert np.array_equal(col_match[row_match[rows]], rows)
    assert np.array_equal(row_match[col_match[cols]], cols)
    if rows.size:
        assert np.all(np.asarray(g.to_sparse()[rows, row_match[rows]]).ravel() == 1)


# ---------------------------------------------------------------- registry and options

def test_registry_entry_declares_the_documented_options():
    algo = solvers.algorithms()["gpr"]
    assert algo.backends == ("cpu", "cuda", "cudasim")
    assert algo.label == "psi" and algo.reference == "Deveci et al. 2013"
    opts = {o.name: o for o in algo.options}
    assert opts["variant"].default == "shrink" and set(opts["variant"].choices) == set(VARIANTS)
    assert opts["gr"].default == "adaptive" and set(opts["gr"].choices) == {"adaptive", "fixed"}
    assert opts["init"].default == "cheap" and set(opts["init"].choices) == {"cheap", "none"}
    assert isinstance(opts["k"].default, float)
    assert opts["sync_every"].default == 0 and opts["shrink_min"].default == 512
    assert opts["device_loop"].default == "auto" and set(opts["device_loop"].choices) == {"auto", "on", "off"}
    default = solvers.solve(path_graph(5, np.random.default_rng(0)), "gpr", backend="cpu")
    assert default.stats["sync_every"] == 1 and not default.stats["device_loop"]  # auto: off on cpu
    assert solvers.solve(path_graph(5, np.random.default_rng(0)), "gpr", backend="cpu",
                         device_loop="on").stats["device_loop"]
    with pytest.raises(InputError, match="device_loop"):
        solvers.solve(path_graph(5, np.random.default_rng(0)), "gpr", backend="cpu", device_loop="sometimes")


def test_effective_k_defaults_follow_the_strategy():
    g = path_graph(6, np.random.default_rng(0))
    assert solvers.solve(g, "gpr", backend="cpu").stats["k"] == gpr.ADAPTIVE_K == 0.7
    assert solvers.solve(g, "gpr", backend="cpu", gr="fixed").stats["k"] == gpr.FIXED_K
    assert solvers.solve(g, "gpr", backend="cpu", gr="fixed", k="3").stats["k"] == 3.0


@pytest.mark.parametrize("options", [{"variant": "fast"}, {"gr": "never"}, {"init": "greedy"},
                                     {"k": -1.0}, {"k": "nan"}, {"sync_every": -1}, {"nosuch": 1}])
def test_bad_options_are_input_errors(options):
    g = path_graph(4, np.random.default_rng(0))
    with pytest.raises(InputError):
        solvers.solve(g, "gpr", backend="cpu", **options)


def test_cuda_backend_without_gpu_is_refused():
    if solvers.targets.cuda_available():
        pytest.skip("a GPU is present; tests/test_gpr_cuda.py covers it")
    g = path_graph(4, np.random.default_rng(0))
    with pytest.raises(BackendUnavailable):
        solvers.solve(g, "gpr", backend="cuda")
    with pytest.raises(BackendUnavailable):  # the runner itself refuses too, not only solve()
        gpr.run(g, "cudasim", NULL)


# ---------------------------------------------------------------- correctness on cpu

GRAPHS = small_graphs(240, seed=20130901)


@pytest.fixture
def threaded_cpu(monkeypatch):
    """Run even tiny graphs on the threaded (prange) loops, where the lock-free races happen."""
    monkeypatch.setattr(gpr, "PARALLEL_MIN", 0)


@pytest.mark.parametrize("variant,gr_mode,init", COMBOS)
def test_every_combination_is_maximum_on_many_graphs(variant, gr_mode, init, monkeypatch):
    rng = np.random.default_rng(zlib.crc32(f"{variant}/{gr_mode}/{init}".encode()))
    serial_below = gpr.PARALLEL_MIN
    for i, g in enumerate(GRAPHS):
        # every fourth graph on all the threads, the rest on one
        monkeypatch.setattr(gpr, "PARALLEL_MIN", 0 if i % 4 == 0 else serial_below)
        sol = gpr.run(g, "cpu", NULL, variant=variant, gr=gr_mode, init=init,
                      sync_every=int(rng.integers(1, 10)), shrink_min=int(rng.choice([1, 4, 512])),
                      device_loop=bool(rng.integers(0, 2)))
        check_matching(g, sol.row_match, sol.col_match, sol.value, scipy_size(g))
        assert sol.iterations == sol.stats["loops"] >= 0
        assert sol.stats["variant"] == variant and sol.stats["gr"] == gr_mode


def test_solve_certifies_gpr_on_every_shape():
    for g in GRAPHS[::3]:
        r = solvers.solve(g, "gpr", backend="cpu")
        assert r.certified, r.certificate.summary()
        assert r.value == scipy_size(g)


def test_races_never_lose_a_column_without_the_final_check(threaded_cpu):
    """With final_check off, nothing repairs a column dropped from the active lists: the
    lock-free list maintenance alone must give a maximum matching, run after run."""
    graphs = [g for g in GRAPHS if g.n_edges > 20][:60]
    for variant in VARIANTS:
        for g in graphs:
            sol = gpr.run(g, "cpu", NULL, variant=variant, final_check=False, shrink_min=1, sync_every=3)
            check_matching(g, sol.row_match, sol.col_match, sol.value, scipy_size(g))


def test_repeated_runs_on_one_graph_all_maximum():
    rng = np.random.default_rng(7)
    m = n = 5000  # above gpr.PARALLEL_MIN: all the threads
    e = 3 * n
    g = BipartiteGraph.from_edges(rng.integers(0, m, e), rng.integers(0, n, e), m, n)
    expected = scipy_size(g)
    for i in range(30):
        variant = VARIANTS[i % 3]
        sol = gpr.run(g, "cpu", NULL, variant=variant, shrink_min=64, sync_every=1 + i % 4,
                      final_check=i % 2 == 0)
        check_matching(g, sol.row_match, sol.col_match, sol.value, expected)


def test_batching_cuts_readbacks():
    """sync_every batches push loops between readbacks; a resident loop needs one per batch."""
    g = path_graph(400, np.random.default_rng(8))
    runs = {key: gpr.run(g, "cpu", NULL, init="none", **opts) for key, opts in
            {"every": {"sync_every": 1}, "batched": {"sync_every": 8}, "resident": {"device_loop": True}}.items()}
    assert all(r.value == 400 for r in runs.values())
    assert runs["every"].stats["syncs"] > 3 * runs["batched"].stats["syncs"]
    assert runs["resident"].stats["syncs"] <= runs["batched"].stats["syncs"]
    assert runs["resident"].stats["device_loop"] and not runs["batched"].stats["device_loop"]


def test_shrink_compacts_the_lists_after_global_relabels():
    rng = np.random.default_rng(3)
    g = BipartiteGraph.from_edges(rng.integers(0, 2000, 5000), rng.integers(0, 2000, 5000), 2000, 2000)
    shrunk = gpr.run(g, "cpu", NULL, variant="shrink", init="none", shrink_min=1)
    kept = gpr.run(g, "cpu", NULL, variant="noshrink", init="none", shrink_min=1)
    assert shrunk.stats["shrinks"] >= 1 and kept.stats["shrinks"] == 0
    assert shrunk.value == kept.value == scipy_size(g)
    assert shrunk.stats["global_relabels"] >= 1 and shrunk.stats["max_level"] >= 2


def test_cheap_initial_matching_is_a_large_start():
    rng = np.random.default_rng(5)
    g = BipartiteGraph.from_edges(rng.integers(0, 500, 1500), rng.integers(0, 500, 1500), 500, 500)
    cheap = gpr.run(g, "cpu", NULL, init="cheap")
    empty = gpr.run(g, "cpu", NULL, init="none")
    assert empty.stats["initial_matching"] == 0
    # a maximal matching holds at least half of a maximum one; three parallel rounds get close
    assert cheap.stats["initial_matching"] >= 0.5 * cheap.value
    assert cheap.value == empty.value == scipy_size(g)


@settings(max_examples=60)
@given(st.integers(0, 14), st.integers(0, 14), st.lists(st.tuples(st.integers(0, 13), st.integers(0, 13)),
                                                        max_size=60),
       st.sampled_from(COMBOS), st.integers(1, 6))
def test_hypothesis_graphs(m, n, pairs, combo, sync_every):
    pairs = [(r, c) for r, c in pairs if r < m and c < n]
    g = BipartiteGraph.from_edges([p[0] for p in pairs], [p[1] for p in pairs], m, n)
    variant, gr_mode, init = combo
    sol = gpr.run(g, "cpu", NULL, variant=variant, gr=gr_mode, init=init, sync_every=sync_every, shrink_min=1)
    check_matching(g, sol.row_match, sol.col_match, sol.value, scipy_size(g))


# ---------------------------------------------------------------- the final check is not vacuous

class _DroppingDevice(gpr_device.GprDevice):
    """The cpu device, but it drops the first active column from the list once: a simulated
    lost column, the failure the final check exists for (one launch per step: no resident loop)."""

    dropped = False

    def init_list(self, loop, length):
        super().init_list(loop, length)
        if not self.dropped and length:
            a_c = self.a_c
            live = np.flatnonzero(a_c[:length] >= 0)
            if live.size:
                a_c[live[0]] = -1
                self.dropped = True


@pytest.mark.parametrize("variant", ["noshrink", "shrink"])
def test_final_check_resumes_after_a_lost_column(monkeypatch, variant):
    g = path_graph(40, np.random.default_rng(11))  # perfect matching: every column is needed
    monkeypatch.setattr(gpr_device, "GprDevice", _DroppingDevice)
    broken = gpr.run(g, "cpu", NULL, variant=variant, init="none", final_check=False)
    assert broken.value == 39  # the dropped column stays unmatched: the sabotage took effect
    fixed = gpr.run(g, "cpu", NULL, variant=variant, init="none", final_check=True)
    check_matching(g, fixed.row_match, fixed.col_match, fixed.value, 40)
    assert fixed.stats["restarts"] == 1


# ---------------------------------------------------------------- telemetry and cancellation

def test_telemetry_records_pushes_relabels_labels_and_workload(manual_clock):
    """On a clock that does not move, every count costs nothing, so the telemetry budget grants
    each one (under load a wall clock could skip some: their samples then carry no count)."""
    rng = np.random.default_rng(9)
    g = BipartiteGraph.from_edges(rng.integers(0, 400, 900), rng.integers(0, 400, 900), 400, 400)
    for variant in VARIANTS:
        rec = Recorder(snapshot_interval=0.0)
        r = solvers.solve(g, "gpr", backend="cpu", observer=rec, variant=variant, init="none", sync_every=2)
        assert r.certified and rec.info.label == "psi"
        phases = [s.phase for s in rec.iterations]
        assert "push" in phases and "global-relabel" in phases
        relabels = [s for s in rec.iterations if s.phase == "global-relabel"]
        assert len(relabels) == r.stats["global_relabels"]
        for s in relabels:
            assert s.extra["max_level"] >= 2 and 0 <= s.extra["unreachable"] <= g.n_cols
            assert 0 <= s.value <= r.value
        pushes = [s for s in rec.iterations if s.phase == "push"]
        values = [s.value for s in pushes]
        assert values == sorted(values) and values[-1] == r.value  # |M| never shrinks
        assert all(0 <= s.active <= g.n_cols for s in pushes)
        kinds = {s.kind for s in rec.snapshots}
        assert {"labels", "workload"} <= kinds
        for s in rec.snapshots:
            if s.kind == "labels":
                assert s.meta["label"] == "psi"
                for side in ("rows", "cols"):
                    for key in ("hist_edges", "hist_counts", "sample_index", "sample"):
                        assert f"{side}.{key}" in s.data
                    assert f"{side}.unreachable" in s.meta
            elif s.kind == "workload":
                assert s.meta["kernel"] == "push" and s.meta["mode"] == "column" and "launch" in s.meta
                work = s.data["modelled"]
                assert work.ndim == 1 and np.all(work >= 0) and np.all(work == np.round(work))
                assert work.sum() <= g.n_edges and work.max() <= 32 * g.col_degrees().max()
                if variant == "first":
                    assert work.size == -(-g.n_cols // 32)


def test_workload_is_the_sum_of_active_column_degrees_per_warp():
    degrees = np.arange(70)
    work = gpr.warp_work(degrees)
    assert work.tolist() == [sum(range(32)), sum(range(32, 64)), sum(range(64, 70))]
    assert gpr.warp_work(np.zeros(0)).size == 0


def test_no_observer_means_no_extra_counts():
    """Without an observer the host only reads the flags; with one it also asks for counts."""
    rng = np.random.default_rng(2)
    g = BipartiteGraph.from_edges(rng.integers(0, 300, 700), rng.integers(0, 300, 700), 300, 300)
    counted = []

    class Spy(gpr_device.GprDevice):
        def count(self, what, slot):
            counted.append(what)
            return super().count(what, slot)

    import unittest.mock as mock
    with mock.patch.object(gpr_device, "GprDevice", Spy):
        gpr.run(g, "cpu", NULL, init="none")
        assert counted == ["free-rows"]  # only the initial-matching size, once
        counted.clear()
        tel = Telemetry.attach(Recorder(), RunInfo("gpr", "cpu", "matching"))
        gpr.run(g, "cpu", tel, init="none")
        assert {"unmatched", "free-rows", "unreachable"} <= set(counted)


class _StopAfter(Observer):
    def __init__(self, n):
        self.n, self.seen = n, 0

    def on_iteration(self, stats):
        self.seen += 1

    def should_stop(self):
        return self.seen >= self.n


def test_cancellation_propagates():
    g = path_graph(200, np.random.default_rng(4))
    obs = _StopAfter(2)
    with pytest.raises(Cancelled):
        solvers.solve(g, "gpr", backend="cpu", observer=obs, init="none", sync_every=1)
    assert obs.seen == 2


# ---------------------------------------------------------------- the cuda kernels

def test_listing_loads_no_numba_and_a_cpu_run_never_touches_the_cuda_driver():
    """The registry module imports neither numba nor scipy.sparse; the kernels module (numba and
    numba.cuda at its top) loads when a run starts, and a cpu run never initialises a CUDA driver."""
    code = """
        import sys
        from solvers.matching import gpr
        assert "numba" not in sys.modules and "solvers.matching.gpr_kernels" not in sys.modules
        from solvers.problems import BipartiteGraph
        from solvers.telemetry import NULL
        g = BipartiteGraph.from_edges([0, 1, 1], [1, 0, 1], 2, 2)
        assert gpr.run(g, "cpu", NULL).value == 2
        from numba.cuda.cudadrv import driver
        assert driver.driver.pid is None  # set by a successful cuInit only
    """
    # the project first, then whatever the caller's path holds (the GPU machine's numpy, say)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(_root()), os.environ.get("PYTHONPATH")))))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, env=env, cwd=_root(), timeout=300)


def _root():
    from pathlib import Path
    return Path(__file__).resolve().parent.parent


PTX_CODE = """
    import json, re
    from unittest import mock
    import numba.cuda.dispatcher as dispatcher
    from solvers.matching import gpr_kernels as K, transpose_device as T
    from solvers.targets.cuda_jit import LazyCudaKernel, compile_ptx

    class SM90:  # device functions ask the current device for its compute capability
        compute_capability = (9, 0)

    def kernels_of(module):
        return {name for name, obj in vars(module).items()
                if isinstance(obj, LazyCudaKernel) and not obj.options.get("device")}

    kernels = kernels_of(K)
    listed = {record.cuda.py_func.__name__ for record, _ in K.PTX_SIGNATURES}
    records = K.PARALLEL.kernels() + K.SERIAL.kernels()
    transpose_listed = {record.cuda.py_func.__name__ for record, _ in T.PTX_SIGNATURES}
    report = {"unlisted": sorted(kernels - listed),
              "unlisted_records": sorted(r.name for r in records if r.cuda.py_func.__name__ not in listed),
              "transpose_unlisted": sorted(kernels_of(T) - transpose_listed),
              "transpose_records": sorted(r.name for r in T.KERNELS if r.cuda.py_func.__name__ not in transpose_listed),
              "records": len(records),
              "uncached": sorted(n for module in (K, T) for n in kernels_of(module)
                                 if type(getattr(module, n)._cache).__name__ == "NullCache"),
              "ptx": {}}
    with mock.patch.object(dispatcher, "get_current_device", SM90):
        for record, signature in K.PTX_SIGNATURES + T.PTX_SIGNATURES:
            name = record.name
            ptx, _ = compile_ptx(record.cuda, signature, cc=(9, 0))
            report["ptx"][name] = {"entry": ".entry" in ptx, "target": ".target sm_90" in ptx,
                                   "atomics": bool(re.search(r"^\\s*(@\\S+\\s+)?(atom|red)\\.", ptx, re.M))}
    print(json.dumps(report))
"""


def _nvrtc_missing() -> str | None:
    try:
        from numba.cuda.cudadrv import nvrtc, nvvm
        nvvm.NVVM()
        nvrtc._get_nvrtc_version()
    except Exception as exc:  # the reason is shown in the skip message
        return f"CUDA compiler libraries unavailable: {type(exc).__name__}: {exc}"
    return None


def test_every_kernel_compiles_to_ptx_for_sm90_without_atomics():
    missing = _nvrtc_missing()
    if missing:
        pytest.skip(missing)
    # the project first, then whatever the caller's path holds (the GPU machine's numpy, say)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, (str(_root()), os.environ.get("PYTHONPATH")))))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(PTX_CODE)], env=env, cwd=_root(),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["unlisted"] == [] and report["unlisted_records"] == [] and report["uncached"] == []
    assert report["transpose_unlisted"] == [] and report["transpose_records"] == []
    assert len(report["ptx"]) >= 17 + 7 and report["records"] == 2 * 17
    for name, info in report["ptx"].items():
        assert info["entry"] and info["target"], name
        # G-PR is atomic-free, and the device transpose is too: the same column lists on every run
        assert not info["atomics"], f"{name} uses atomics"


# ---------------------------------------------------------------- the same under the CUDA simulator

CUDASIM_CODE = """
    import sys, json
    sys.setswitchinterval(1e-5)  # the simulator's block manager polls its threads under the GIL
    sys.path.insert(0, "tests")
    import numpy as np

    import solvers
    from solvers.matching import gpr, gpr_device
    from solvers.telemetry import NULL, Recorder
    from test_gpr import small_graphs, scipy_size, check_matching, path_graph

    graphs = small_graphs(240, seed=424242, max_side=12)[:SIM_GRAPHS]
    runs = 0
    for i, g in enumerate(graphs):  # every shape under every variant: variant, gr, init, loop cycle with i
        variant = ("first", "noshrink", "shrink")[i % 3]
        gr_mode = ("adaptive", "fixed")[(i // 3) % 2]
        init = ("cheap", "none")[(i // 6) % 2]
        resident = (i // 12) % 2 == 1
        sol = gpr.run(g, "cudasim", NULL, variant=variant, gr=gr_mode, init=init, sync_every=1 + i % 4,
                      shrink_min=1, final_check=i % 5 != 4, device_loop=("off", "on")[resident])
        check_matching(g, sol.row_match, sol.col_match, sol.value, scipy_size(g))
        assert sol.stats["device_loop"] == (resident and g.n_edges > 0), sol.stats
        runs += 1
    g = path_graph(12, np.random.default_rng(1))
    for i in range(6):  # repeated runs: the simulator interleaves threads differently each time
        r = solvers.solve(g, "gpr", backend="cudasim", variant=("noshrink", "shrink")[i % 2], init="none",
                          shrink_min=1, sync_every=1)
        assert r.certified and r.value == 12, r.certificate.summary()
        runs += 1
    rec = Recorder(snapshot_interval=0.0)
    r = solvers.solve(path_graph(10, np.random.default_rng(2)), "gpr", backend="cudasim", observer=rec, init="none",
                      shrink_min=1, sync_every=1)
    phases = {s.phase for s in rec.iterations}
    kinds = {s.kind for s in rec.snapshots}
    assert r.certified and {"push", "global-relabel"} <= phases and {"labels", "workload"} <= kinds, (phases, kinds)
    print(json.dumps({"runs": runs + 1}))
"""


def test_cudasim_same_checks_on_tiny_graphs(run_cudasim, sweep):
    """240 graphs under `make test-all`, the first 48 of the same stream (every combination of
    variant, relabel mode, start and loop 4 times) under `make test`."""
    graphs = sweep(240, 48)
    out = run_cudasim(CUDASIM_CODE.replace("SIM_GRAPHS", str(graphs)))
    assert json.loads(out.strip().splitlines()[-1])["runs"] == graphs + 7
