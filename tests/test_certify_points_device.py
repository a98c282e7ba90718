"""The point certificate's every-pair check (solvers.certify_points_device), used when a solve ran on
a GPU: on the host loop, under the simulator and (on a GPU) for real, it gives the grid walk's answer
(certify_points._row_violations) on every row, extreme scales and ties included."""
from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import solvers
from solvers import certify_points
from solvers.certify_points_device import DISTANCE_ROUNDING, rows_cpu
from solvers.targets import cuda_available


def cases(rng, count):
    for trial in range(count):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        scale = 10.0 ** [-25, 0, 6, 140][trial % 4]
        a, b = rng.random((n, 3)) * scale, rng.random((m, 3)) * scale
        if trial % 3 == 1:
            b[:, 2] = 0.0
        u, v = rng.normal(0, 0.3, n) * scale, rng.normal(-0.2, 0.3, m) * scale
        yield a, b, u, v


def every_pair(a, b, u, v):
    delta, scale = np.zeros(a.shape[0]), np.abs(u) + (abs(float(v.max())) if v.size else 0.0)
    rows_cpu(a, b, u, v, delta, scale)
    return delta, scale


def test_every_pair_on_the_host_agrees_with_the_grid_walk():
    rng = np.random.default_rng(12)
    for trial, (a, b, u, v) in enumerate(cases(rng, 40)):
        delta, scale = every_pair(a, b, u, v)
        grid_delta, grid_scale, _ = certify_points._row_violations(a, b, u, v)
        d = cdist(a, b)
        brute = np.maximum((u[:, None] + v[None, :] - d).max(axis=1), 0.0)
        allowance = 2 * DISTANCE_ROUNDING * (np.abs(u) + np.abs(v).max() + d.max())
        assert np.all(delta >= brute), trial  # never misses a violation
        assert np.all(delta <= brute + allowance), trial  # and adds no more than the rounding allowance
        assert np.all(grid_delta <= delta + 1e-300), trial  # the grid looks at fewer pairs, the same way
        assert np.all(scale >= grid_scale), trial  # every magnitude the grid met, and more


SIM_CODE = """
import json
import numpy as np
from solvers.certify_points_device import row_violations
rng = np.random.default_rng(3)
a, b = rng.random((6, 3)) * 1e5, rng.random((9, 3)) * 1e5
u, v = rng.normal(0, 3e4, 6), rng.normal(-2e4, 3e4, 9)
delta, scale, pairs = row_violations(a, b, u, v, "cudasim")
print(json.dumps([a.tolist(), b.tolist(), u.tolist(), v.tolist(), delta.tolist(), scale.tolist(), pairs]))
"""


def test_the_kernel_under_the_simulator_gives_the_host_loop_answer(run_cudasim):
    a, b, u, v, delta, scale, pairs = json.loads(run_cudasim(SIM_CODE).strip().splitlines()[-1])
    a, b, u, v = (np.array(x) for x in (a, b, u, v))
    host_delta, host_scale = every_pair(a, b, u, v)
    assert pairs == 54 and np.array_equal(delta, host_delta) and np.array_equal(scale, host_scale)


@pytest.mark.skipif(not cuda_available(), reason="needs an NVIDIA GPU (solvers.targets.cuda_available)")
def test_on_the_gpu_the_certificate_checks_every_pair_there():
    rng = np.random.default_rng(6)
    a = rng.random((3000, 3))
    b = a + rng.normal(0, 0.01, a.shape)
    result = solvers.solve(solvers.EuclideanCosts.from_points(a, b), "hungarian", backend="cuda")
    assert result.certified and "every pair, on the GPU" in result.certificate.details
    for trial, (a, b, u, v) in enumerate(cases(rng, 8)):
        from solvers.certify_points_device import row_violations
        delta, scale, _ = row_violations(a, b, u, v, "cuda")
        host_delta, _ = every_pair(a, b, u, v)
        # a fused multiply-add may round a distance differently: within the allowance's own size
        assert np.allclose(delta, host_delta, rtol=1e-13, atol=1e-13 * (np.abs(u).max() + np.abs(v).max())), trial
