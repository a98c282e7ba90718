"""Exact sums for proofs and totals: int64 sums that cannot wrap, float sums with a proven direction.

numpy's int64 ``sum`` wraps silently past 2^63 and its float ``sum`` rounds every partial sum, so
neither may decide a certificate. ``int_sum`` splits each int64 into 32-bit halves whose sums cannot
overflow and joins them in a Python int. ``float_sum_up`` returns the exact sum of floats rounded
up to the next float (a proven upper bound, so ``float_sum_up(...) <= t`` proves the exact sum is
at most t): math.fsum is exactly rounded, and a second fsum of the residual says which way it went.
Floats are binary fractions, so when fsum's partial sums overflow the exact Fraction sum is used.
Past BINNED_TERMS terms both float sums take the exact integer of one compiled pass instead
(solvers.exact_bins), and round it the same way.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

INT64_MAX = int(np.iinfo(np.int64).max)
_LOW_MASK = np.int64(0xFFFFFFFF)


def int_sum(values) -> int:
    """Exact sum of an integer array (int64 or narrower) as a Python int, past 2^63 included."""
    a = np.asarray(values)
    if a.size == 0:
        return 0
    a = a.astype(np.int64, copy=False)
    high = int((a >> 32).sum())  # each |high| <= 2^31: no wrap below 2^32 entries
    low = int((a & _LOW_MASK).sum())  # each low < 2^32: no wrap below 2^31 entries
    return (high << 32) + low


BINNED_TERMS = 2048  # from here a compiled pass beats building a list for fsum (and its import pays)


def _binned(arrays) -> int | None:
    """The exact sum as an integer times 2^-1074 from the compiled pass, for many finite terms;
    None otherwise (few terms, a NaN or an infinity: fsum's path decides those)."""
    if sum(np.size(a) for a in arrays) < BINNED_TERMS:
        return None
    from .exact_bins import exact_numerator
    return exact_numerator(arrays)


def _scale_bits() -> int:
    from .exact_bins import SCALE_BITS
    return SCALE_BITS


def _rounded(numerator: int) -> float:
    """numerator * 2^-1074 rounded to the nearest float (ties to even, as fsum); OverflowError past
    the float range. Python's int division rounds correctly."""
    return numerator / (1 << _scale_bits())


def _terms(arrays) -> list[float]:
    out: list[float] = []
    for a in arrays:
        out.extend(np.asarray(a, dtype=np.float64).ravel().tolist())
    return out


def float_sum_up(*arrays) -> float:
    """The exact sum of every entry of ``arrays`` (finite floats), rounded up to a float (+inf when
    it exceeds the float range)."""
    numerator = _binned(arrays)
    if numerator is not None:
        try:
            total = _rounded(numerator)
        except OverflowError:
            return math.inf if numerator > 0 else -float(np.finfo(np.float64).max)
        top, bottom = total.as_integer_ratio()  # bottom: a power of two, at most 2^1074
        return math.nextafter(total, math.inf) if numerator * bottom > top << _scale_bits() else total
    terms = _terms(arrays)
    try:
        total = math.fsum(terms)
        terms.append(-total)
        above = math.fsum(terms) > 0  # exact sum - total, itself exactly rounded: its sign is exact
    except OverflowError:  # a partial sum left the float range: add the binary fractions exactly
        exact = sum(map(Fraction, terms), Fraction(0))
        try:
            total = float(exact)
        except OverflowError:
            return math.inf if exact > 0 else -float(np.finfo(np.float64).max)
        above = exact > Fraction(total)
    return math.nextafter(total, math.inf) if above else total


def float_sum(*arrays) -> float:
    """The exact sum of every entry, rounded to the nearest float (math.fsum; inf past the range)."""
    numerator = _binned(arrays)
    if numerator is not None:
        try:
            return _rounded(numerator)
        except OverflowError:
            return math.inf if numerator > 0 else -math.inf
    terms = _terms(arrays)
    try:
        return math.fsum(terms)
    except OverflowError:
        exact = sum(map(Fraction, terms), Fraction(0))
        try:
            return float(exact)
        except OverflowError:
            return math.inf if exact > 0 else -math.inf
