"""The Hungarian on point sets (EuclideanCosts): its distances are made by a kernel on the target from
the two point sets, never on the host or sent over the bus, and the answer is proven by the point
certificate for every pair of points. Against scipy on cdist, on every target."""
from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.spatial.distance
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import solvers
from solvers.errors import InputError
from solvers.problems import EuclideanCosts
from solvers.targets import cuda_available


def scipy_optimum(a, b) -> float:
    d = cdist(a, b)
    rows, cols = linear_sum_assignment(d)
    return float(d[rows, cols].sum())


def point_sets(rng, n, m, kind, scale):
    if kind == "lattice":  # many equal distances: ties everywhere
        a = rng.integers(0, 4, (n, 3)).astype(float) * scale
        b = rng.integers(0, 4, (m, 3)).astype(float) * scale
    elif kind == "duplicates":
        a = np.repeat(rng.random((n // 3 + 1, 3)), 3, axis=0)[:n] * scale
        b = a[rng.integers(0, len(a), m)] + 0.0
    else:
        a, b = rng.random((n, 3)) * scale, rng.random((m, 3)) * scale
    return a, b


def test_cpu_answers_equal_scipy_and_are_proven_for_every_pair(monkeypatch):
    """No host distance matrix: cdist and the dense conversion raise if anything calls them."""
    def refuse(*args, **kwargs):
        raise AssertionError("a distance matrix was made on the host")
    monkeypatch.setattr(EuclideanCosts, "to_dense", refuse)
    rng = np.random.default_rng(11)
    for trial in range(36):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        kind = ("uniform", "lattice", "duplicates")[trial % 3]
        scale = 10.0 ** [-20, 0, 9, 140][trial % 4]
        a, b = point_sets(rng, n, m, kind, scale)
        expected = scipy_optimum(a, b)  # before the monkeypatch below: scipy's own cdist
        with monkeypatch.context() as patched:
            patched.setattr(scipy.spatial.distance, "cdist", refuse)
            result = solvers.solve(EuclideanCosts.from_points(a, b), "hungarian", backend="cpu")
        assert result.certified and result.certificate.optimal, (trial, result.certificate.details)
        assert "every pair of points" in result.certificate.details
        assert result.value == pytest.approx(expected, rel=1e-12, abs=1e-300), trial
        assert np.count_nonzero(result.row_match >= 0) == min(n, m)
        assert "distance_seconds" in result.stats


def test_the_distance_loop_equals_cdist_bit_for_bit():
    from solvers.assignment.point_costs import distances_cpu
    rng = np.random.default_rng(3)
    for dims in (1, 2, 3):
        a, b = rng.normal(size=(17, dims)) * 1e6, rng.normal(size=(23, dims))
        out = np.empty((17, 23))
        distances_cpu(a, b, out)
        assert np.array_equal(out, cdist(a, b))


def test_too_many_distances_are_refused_in_one_line():
    many = np.zeros((12_000, 3))
    with pytest.raises(InputError) as info:
        solvers.solve(EuclideanCosts.from_points(many, many, source="frames.npz"), "hungarian", backend="cpu")
    text = str(info.value)
    assert "use the knn algorithm" in text and "frames.npz" in text and "\n" not in text


SIM_CODE = """
import json
import numpy as np
import solvers
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist
from solvers.problems import EuclideanCosts
from solvers.assignment.point_costs import DISTANCES, PointView, point_view
from solvers.targets import launcher_for
rng = np.random.default_rng(8)
out = []
for n, m, scale in [(5, 5, 1.0), (4, 7, 1e-20), (7, 4, 1e120), (1, 3, 1.0), (6, 6, 0.0)]:
    a, b = rng.random((n, 3)) * scale, rng.random((m, 3)) * scale
    if n == 6:
        a, b = np.zeros((n, 3)), np.zeros((m, 3))  # every distance 0: all ties
    r = solvers.solve(EuclideanCosts.from_points(a, b), "hungarian", backend="cudasim")
    d = cdist(a, b)
    rows, cols = linear_sum_assignment(d)
    out.append([float(d[rows, cols].sum()), r.value, bool(r.certificate.optimal), r.certificate.details[:40],
                int((r.row_match >= 0).sum()), min(n, m)])
launcher = launcher_for("cudasim")
a, b = rng.normal(size=(3, 2)), rng.normal(size=(5, 2))
view = point_view(EuclideanCosts.from_points(a, b))
filled = launcher.empty_matrix(3, 5, np.float64)
launcher.launch(DISTANCES, (3, 5), launcher.upload(view.row_points), launcher.upload(view.col_points), filled)
print(json.dumps([out, bool(np.array_equal(launcher.read(filled), cdist(a, b)))]))
"""


def test_the_cuda_kernels_under_the_simulator(run_cudasim):
    rows, kernel_equals_cdist = json.loads(run_cudasim(SIM_CODE).strip().splitlines()[-1])
    assert kernel_equals_cdist
    for expected, value, optimal, details, assigned, wanted in rows:
        assert optimal and details.startswith("optimal for the full Euclidean"), details
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-300)
        assert assigned == wanted


@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")
def test_on_the_gpu_frames_and_unrelated_clouds_match_scipy():
    """Frames of one scene and unrelated clouds, square, wide and tall, repeated on one instance."""
    rng = np.random.default_rng(21)
    cases = []
    for n, m in [(2000, 2000), (1500, 2600), (2600, 1500)]:
        a = rng.random((n, 3))
        cases.append((a, np.concatenate([a, rng.random((max(0, m - n), 3))])[:m] + rng.normal(0, 0.005, (m, 3))))
        cases.append((a, rng.random((m, 3)) * 1e-9))
    for a, b in cases:
        expected = scipy_optimum(a, b)
        problem = EuclideanCosts.from_points(a, b)
        for _ in range(2):
            result = solvers.solve(problem, "hungarian", backend="cuda")
            assert result.certified and result.certificate.optimal, result.certificate.details
            # certified: within the certificate's rounding allowance of the optimum (and never below it)
            assert expected - 1e-12 * expected <= result.value <= expected + result.certificate.tolerance
