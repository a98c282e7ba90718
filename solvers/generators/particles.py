"""Moving 3-D particles with ground truth, for frame-to-frame tracking by assignment."""
from __future__ import annotations

import numpy as np

from ..problems import PointSeries
from ._common import guard_size, make_rng, source_name


def _random_directions(rng: np.random.Generator, n: int) -> np.ndarray:
    """n unit vectors uniform on the sphere (normalised Gaussians)."""
    v = rng.standard_normal((n, 3))
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.where(norm > 0.0, norm, 1.0)


def reflect_into_box(x: np.ndarray, direction: np.ndarray, box: float) -> tuple[np.ndarray, np.ndarray]:
    """Fold positions back into [0, box] by mirror reflection at the walls, flipping the direction
    component once per wall crossed (any number of crossings in one step)."""
    crossings = np.floor(x / box)
    odd = (crossings % 2) != 0
    inside = x - crossings * box
    # clipped: x / box underflows to -0 for x just below 0 (-5e-324), leaving inside a hair outside
    return np.clip(np.where(odd, box - inside, inside), 0.0, box), np.where(odd, -direction, direction)


def particles(n: int, frames: int = 10, persistence: float = 0.5, box: float = 1.0, speed: float = 0.01,
              enter_rate: float = 0.0, leave_rate: float = 0.0, seed: int = 0) -> PointSeries:
    """``frames`` snapshots of particles moving in the cube [0, box]^3, with ground-truth ids.

    Source family: the synthetic tracking data of Vasconcelos & Rosenhahn 2009 (GPU auction),
    Section 6: 3-D points in a bounding box with "random biased and correlated movement"; the
    persistence level in [0, 1] is the linear combination factor between the correlation vector
    (the previous direction) and the bias vector (a fresh random direction). Here each step the
    direction becomes normalise(persistence * previous + (1 - persistence) * random) and the
    particle moves ``speed`` along it, reflecting at the walls: persistence 1 gives straight lines
    between reflections, 0 a random walk of fixed step. Between frames each particle leaves with
    probability ``leave_rate`` and Poisson(enter_rate * n) new particles appear at uniform
    positions with fresh ids (ids are never reused). Points within each frame are shuffled, so a
    point's index says nothing about its id.
    """
    expected_points = frames * n * (1.0 + enter_rate * frames)  # the growth entering can cause
    guard_size(expected_points, 64, f"particles {n} x {frames} frames")
    rng = make_rng(seed)
    pos = rng.uniform(0.0, box, size=(n, 3))
    direction = _random_directions(rng, n)
    ids = np.arange(n, dtype=np.int64)
    next_id = n
    out_frames, out_ids = [], []
    for t in range(frames):
        if t > 0:
            if leave_rate > 0.0:
                stay = rng.random(ids.size) >= leave_rate
                pos, direction, ids = pos[stay], direction[stay], ids[stay]
            mixed = persistence * direction + (1.0 - persistence) * _random_directions(rng, ids.size)
            norm = np.linalg.norm(mixed, axis=1, keepdims=True)
            # opposite previous and random directions can cancel exactly; then keep the previous one
            direction = np.where(norm > 1e-12, mixed / np.where(norm > 1e-12, norm, 1.0), direction)
            pos, direction = reflect_into_box(pos + speed * direction, direction, box)
            if enter_rate > 0.0:
                entering = int(rng.poisson(enter_rate * n))
                pos = np.concatenate([pos, rng.uniform(0.0, box, size=(entering, 3))])
                direction = np.concatenate([direction, _random_directions(rng, entering)])
                ids = np.concatenate([ids, np.arange(next_id, next_id + entering, dtype=np.int64)])
                next_id += entering
        order = rng.permutation(ids.size)
        out_frames.append(pos[order])
        out_ids.append(ids[order])
    return PointSeries.from_frames(out_frames, out_ids, source=source_name("particles"))
