"""G-PR on a real GPU (skipped without one): repeated runs, every variant and strategy, the
device-resident loop, telemetry. Every answer is compared with scipy's Hopcroft-Karp and certified
by solvers.certify (König cover)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.sparse.csgraph import maximum_bipartite_matching

import solvers
from solvers.certify import certify
from solvers.matching import gpr
from solvers.problems import BipartiteGraph
from solvers.targets import cuda_available
from solvers.telemetry import NULL, Recorder

pytestmark = pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU usable by numba.cuda")


def random_graph(m, n, degree, seed):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(m), degree)
    return BipartiteGraph.from_edges(rows, rng.integers(0, n, rows.size), m, n)


def grid_graph(side, seed):
    """A 4-neighbour grid with 10% of the edges deleted: long augmenting paths, like road networks."""
    rng = np.random.default_rng(seed)
    idx = np.arange(side * side).reshape(side, side)
    a = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    b = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    keep = rng.random(a.size) > 0.1
    a, b = a[keep], b[keep]
    return BipartiteGraph.from_edges(np.concatenate([a, b]), np.concatenate([b, a]), side * side, side * side)


def path_graph(k, seed):
    rng = np.random.default_rng(seed)
    pr, pc = rng.permutation(k), rng.permutation(k)
    rows = np.concatenate([np.arange(k), np.arange(k - 1)])
    cols = np.concatenate([np.arange(k), np.arange(1, k)])
    return BipartiteGraph.from_edges(pr[rows], pc[cols], k, k)


def scipy_size(g):
    return int(np.count_nonzero(maximum_bipartite_matching(g.to_sparse().tocsr(), perm_type="column") >= 0))


GRAPHS = {
    "random-square": random_graph(20_000, 20_000, 3, 1),
    "random-wide": random_graph(5_000, 12_000, 4, 2),
    "random-tall": random_graph(12_000, 5_000, 2, 3),
    "grid": grid_graph(120, 4),
    "path": path_graph(3_000, 5),
    "dense-conflicts": random_graph(4_000, 4_000, 16, 6),
}


def test_hundred_runs_in_a_row_all_certified():
    """The same graph 100 times, the resident loop and the host loop alternating; half the runs without
    the final check (nothing repairs a race there), the others must never need its repair."""
    g = GRAPHS["random-square"]
    expected = scipy_size(g)
    for i in range(100):
        loop = ("on", "off")[i % 2]
        sol = gpr.run(g, "cuda", NULL, device_loop=loop, final_check=i % 4 < 2)
        assert sol.value == expected, f"run {i} ({loop}): {sol.value} != {expected}"
        assert sol.stats["restarts"] == 0, f"run {i} ({loop}): the final check had to repair a lost column"
        cert = certify(g, sol)
        assert cert.certified, f"run {i}: {cert.summary()}"


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_every_variant_and_strategy(name):
    g = GRAPHS[name]
    expected = scipy_size(g)
    for variant, gr_mode, init in itertools.product(("first", "noshrink", "shrink"), ("adaptive", "fixed"),
                                                    ("cheap", "none")):
        r = solvers.solve(g, "gpr", backend="cuda", variant=variant, gr=gr_mode, init=init, shrink_min=64)
        assert r.certified and r.value == expected, (variant, gr_mode, init, r.certificate.summary())


@pytest.mark.parametrize("sync_every", [1, 3, 8, 32])
def test_sync_every_settings(sync_every):
    for name in ("grid", "random-wide"):
        g = GRAPHS[name]
        sol = gpr.run(g, "cuda", NULL, sync_every=sync_every)
        assert sol.value == scipy_size(g) and certify(g, sol).certified
        assert sol.stats["sync_every"] == sync_every


def test_races_never_lose_a_column_without_the_final_check():
    """No final check: only the lock-free list maintenance stands between a race and a lost column."""
    for name in ("dense-conflicts", "grid", "random-square"):
        g = GRAPHS[name]
        expected = scipy_size(g)
        for i in range(10):
            variant = ("first", "noshrink", "shrink")[i % 3]
            sol = gpr.run(g, "cuda", NULL, variant=variant, init=("none", "cheap")[i % 2], final_check=False,
                          shrink_min=64)
            assert sol.value == expected, (name, variant, i)
            assert certify(g, sol).certified


def test_final_check_never_needed_to_restart():
    restarts = 0
    for name, g in GRAPHS.items():
        for variant in ("first", "noshrink", "shrink"):
            restarts += gpr.run(g, "cuda", NULL, variant=variant, init="none").stats["restarts"]
    assert restarts == 0, "a lock-free race left an augmenting path behind (the final check repaired it)"


def test_device_resident_loop():
    for name in ("grid", "random-square", "path", "dense-conflicts"):
        g = GRAPHS[name]
        expected = scipy_size(g)
        for variant in ("first", "noshrink", "shrink"):
            sol = gpr.run(g, "cuda", NULL, variant=variant, device_loop="on", shrink_min=64)
            assert sol.stats["device_loop"], sol.stats.get("device_loop_error")
            assert sol.value == expected and certify(g, sol).certified, (name, variant)
            # one readback per batch and per global relabel (plus list builds and shrinks)
            assert sol.stats["syncs"] <= 4 * sol.stats["global_relabels"] + sol.stats["shrinks"] + 8


def test_telemetry_on_cuda():
    g = GRAPHS["grid"]
    rec = Recorder(snapshot_interval=0.0)
    r = solvers.solve(g, "gpr", backend="cuda", observer=rec, init="none")
    assert r.certified
    assert {"push", "global-relabel"} <= {s.phase for s in rec.iterations}
    assert {"labels", "workload"} <= {s.kind for s in rec.snapshots}
    values = [s.value for s in rec.iterations if s.phase == "push"]
    assert values == sorted(values) and values[-1] == r.value
