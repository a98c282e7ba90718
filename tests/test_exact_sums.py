"""The certificate's exact float sums: the compiled pass over many terms (solvers.exact_bins) and
fsum's path over few must both give the exactly rounded sum (float_sum) and the least float not
below it (float_sum_up), checked against Python's exact Fraction arithmetic."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solvers import exact
from solvers.exact_bins import SCALE_BITS, exact_numerator

FLOAT_MAX = float(np.finfo(np.float64).max)


def exact_total(arrays) -> Fraction:
    return sum((Fraction(float(x)) for a in arrays for x in np.ravel(a)), Fraction(0))


def nearest(total: Fraction) -> float:
    try:
        return float(total)  # exactly rounded, ties to even
    except OverflowError:
        return math.inf if total > 0 else -math.inf


def least_not_below(total: Fraction) -> float:
    try:
        near = float(total)
    except OverflowError:
        return math.inf if total > 0 else -FLOAT_MAX
    return near if Fraction(near) >= total else math.nextafter(near, math.inf)


def assert_sums(arrays):
    total = exact_total(arrays)
    assert exact.float_sum(*arrays) == nearest(total)
    assert exact.float_sum_up(*arrays) == least_not_below(total)


finite = st.floats(allow_nan=False, allow_infinity=False)
decades = st.sampled_from([1e-320, 5e-324, 1e-300, 1e-20, 1.0, 3.0, 1e20, 1e300, FLOAT_MAX])


@st.composite
def term_arrays(draw, min_terms):
    """Arrays of at least ``min_terms`` entries: any floats, near ties and cancellations, extremes."""
    n = draw(st.integers(min_terms, min_terms + 300))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    scale = draw(decades)
    mode = draw(st.sampled_from(["spread", "cancel", "scaled", "integers", "subnormal"]))
    if mode == "spread":
        values = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
    elif mode == "cancel":  # pairs that cancel, plus a few small ones: the rounding decides everything
        half = rng.random(n // 2) * scale
        values = np.concatenate([half, -half, rng.random(n - 2 * (n // 2)) * 1e-16])
    elif mode == "scaled":
        values = (rng.random(n) - 0.5) * scale
    elif mode == "integers":
        values = rng.integers(-2**62, 2**62, n).astype(np.float64)
    else:
        values = rng.integers(-9, 9, n) * 5e-324
    extra = draw(st.lists(finite, max_size=8))
    rng.shuffle(values)
    cut = draw(st.integers(0, n))
    return [values[:cut], np.array(extra, dtype=np.float64), values[cut:]]


@settings(max_examples=60, deadline=None)
@given(term_arrays(exact.BINNED_TERMS))
def test_compiled_sums_are_exactly_rounded(arrays):
    assert sum(a.size for a in arrays) >= exact.BINNED_TERMS  # the compiled pass decides these
    assert exact_numerator(arrays) * Fraction(1, 1 << SCALE_BITS) == exact_total(arrays)
    assert_sums(arrays)


@settings(max_examples=40, deadline=None)
@given(term_arrays(1).filter(lambda a: sum(x.size for x in a) < exact.BINNED_TERMS))
def test_fsum_path_is_exactly_rounded(arrays):
    assert_sums(arrays)


@pytest.mark.parametrize("values, total", [
    ([FLOAT_MAX] * 3000, math.inf),                       # past the float range
    ([-FLOAT_MAX] * 3000, -math.inf),
    ([FLOAT_MAX] * 1500 + [-FLOAT_MAX] * 1500 + [1.0], 1.0),  # partial sums overflow, the total does not
    ([5e-324] * 4096, 4096 * 5e-324),                      # subnormals, exactly
    ([1.0, 2.0 ** -53] + [0.0] * 4096, 1.0),                # a tie rounds to even
    ([1.0, 2.0 ** -53, 2.0 ** -105] + [-0.0] * 4096, 1.0 + 2.0 ** -52),
])
def test_compiled_edge_cases(values, total):
    arrays = [np.array(values)]
    assert exact.float_sum(*arrays) == total
    assert_sums(arrays)


def test_float_sum_up_never_rounds_down():
    values = np.array([1.0, 2.0 ** -60] * 2048)  # 2048 * (1 + 2^-60): not a float
    up = exact.float_sum_up(values)
    assert Fraction(up) > exact_total([values]) > Fraction(exact.float_sum(values))


@pytest.mark.parametrize("bad, total", [(math.nan, None), (math.inf, math.inf), (-math.inf, -math.inf)])
def test_nan_and_infinity_take_fsums_path(bad, total):
    values = np.ones(4096)
    values[17] = bad
    assert exact_numerator([values]) is None
    got = exact.float_sum(values)
    assert math.isnan(got) if total is None else got == total


def test_integer_arrays_are_summed_as_their_floats():
    values = np.arange(-5000, 5000, dtype=np.int64) * (2 ** 40) + 3
    assert_sums([values])
    assert exact.float_sum(values) == float(int(values.sum()))
