"""The certificate's per-entry arithmetic, written once for every loop that runs it: the host's row
loops (solvers.certify), the validating pass (solvers.cost_summary) and the check on a GPU's copy of
the costs (solvers.certify_device), compiled for the cpu and the GPU and run as Python under the
CUDA simulator.

Exactness (see solvers.certify): u_i = min_j (c_ij - v_j) is rounded down per entry with TwoSum, so
u_i + v_j <= c_ij holds exactly; nothing here multiplies floats, so no fused multiply-add can change
a result, and every target computes the same bits.

The checksum of a cost matrix (row-major position k = i * cols + j): the wrapping uint64 sum of
mixed_term(bits(c_k), k), each float64 bit pattern mixed with its position by splitmix64's
finaliser (a bijection of 64-bit words). It tells whether a copy of the costs elsewhere (a GPU's,
which a solver could have overwritten) still holds the problem's costs. A linear term such as
bits * (2k + 1) is not enough: swapping 1.0 and 2.0 (bit patterns 2^52 apart) between positions
2048 apart changes that sum by 2^52 * 2 * 2048 = 2^64, i.e. not at all.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, register_jitable

SIGN_BIT = np.uint64(1) << np.uint64(63)
INF_BITS = np.uint64(0x7FF0000000000000)
FRACTION_SCALE = 4503599627370496.0  # 2^52: the fraction field of a normal float64
SUBNORMAL_SCALE = 1074  # a subnormal is its fraction field times 2^-1074


@register_jitable
def difference_down(c, v):
    """The largest float <= c - v exactly (TwoSum: the rounded difference plus its exact error)."""
    d = c - v
    back = d - c
    error = (c - (d - back)) + (-v - back)
    if error < 0.0:
        return math.nextafter(d, -math.inf)
    return d


@register_jitable
def sum_exceeds(a, b, c):
    """Whether a + b > c exactly. Rounding to nearest is monotone, so a rounded sum other than c
    decides; an equal one is decided by the sign of the sum's exact error (TwoSum)."""
    s = a + b
    if s != c:
        return s > c
    back = s - a
    return (a - (s - back)) + (b - back) > 0.0


@register_jitable
def floor_step(c, v, best):
    """The running u_i = min_j (c_ij - v_j) rounded down, after one more allowed entry. A difference
    whose nearest rounding is above the minimum cannot round down below it (the next float down is
    still >= the minimum), so it is skipped: the result does not depend on the order of entries."""
    if c - v <= best:
        d = difference_down(c, v)
        if d < best:
            return d
    return best


@register_jitable
def violation_step(slack, j, worst, at):
    """The running max over a row of u_i + v_j - c_ij and the first j attaining it (entries in
    increasing j)."""
    if slack > worst:
        return slack, j
    return worst, at


@register_jitable
def merge_violations(worst, at, other, other_at):
    """Two partial (max, first j) of one row: the larger, the lower j among equals."""
    if other > worst or (other == worst and other_at >= 0 and (at < 0 or other_at < at)):
        return other, other_at
    return worst, at


GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX_1, MIX_2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


@register_jitable
def mixed_term(value, k):
    """Word ``value`` at position k, mixed by splitmix64's finaliser: the share of a checksum (the
    costs' bit patterns here, a graph's indices in solvers.konig_device) in which changes cancel
    only by a 64-bit coincidence, where a linear term lets structured changes cancel."""
    z = np.uint64(value) + np.uint64(k) * GOLDEN
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


@register_jitable
def checksum_term(bits, k):
    """Entry k's share of the costs' checksum (its bit pattern ``bits``)."""
    return mixed_term(bits, k)


@register_jitable
def float64_bits(c):
    """The IEEE-754 bit pattern of a float64 that is not NaN, by arithmetic: the same code runs
    compiled for the GPU and as Python under the simulator (there is no bit cast in both)."""
    sign = np.uint64(0)
    if c < 0.0 or (c == 0.0 and math.copysign(1.0, c) < 0.0):
        sign = SIGN_BIT
    a = abs(c)
    if a == 0.0:
        return sign
    if a == math.inf:
        return sign | INF_BITS
    m, e = math.frexp(a)  # a = m * 2^e, 1/2 <= m < 1
    if e >= -1021:  # normal: a = 2m * 2^(e - 1), biased exponent e - 1 + 1023; 2m - 1 is exact
        return sign | (np.uint64(e + 1022) << np.uint64(52)) | np.uint64((m * 2.0 - 1.0) * FRACTION_SCALE)
    return sign | np.uint64(math.ldexp(a, SUBNORMAL_SCALE))


@intrinsic
def bits_of(typingctx, x):
    """float64 -> its bit pattern as uint64, a plain bit cast (cpu loops; the GPU uses float64_bits)."""
    if not (isinstance(x, types.Float) and x.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.uint64(types.float64), codegen


@intrinsic
def float_of_bits(typingctx, x):
    """uint64 bit pattern -> the float64 it encodes, a plain bit cast (bits_of's inverse)."""
    if not (isinstance(x, types.Integer) and x.bitwidth == 64):
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(x), codegen


MAGNITUDE_BITS = np.uint64(0x7FFFFFFFFFFFFFFF)  # a float64's bits without the sign (above INF_BITS: NaN)
NEG_INF_BITS = np.uint64(0xFFF0000000000000)
INF_KEY = np.int64(0x7FF0000000000000)  # order_key of +inf: a row minimum of floor keys with no allowed entry


@register_jitable
def order_key(bits):
    """An int64 that orders float64s (not NaN) as their values: the bits, with every bit but the
    sign flipped for negative numbers (-0.0 just below +0.0). Its own inverse (order_key(order_key(b))
    == b). Integer minima and maxima vectorize where float ones, with their NaN rules, do not."""
    signed = np.int64(bits)
    return signed ^ ((signed >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))


@register_jitable
def floor_key(c, v):
    """order_key of difference_down(c, v), with no branch (cpu loops, whose row minima over it then
    vectorize): the rounded difference's key, one lower when the exact difference is below it. The
    difference of two floats rounds to 0 only when it is exactly 0, so a key of +0 is never lowered
    to -0's. +inf costs give +inf's key (their TwoSum error is NaN, never < 0)."""
    d = c - v
    back = d - c
    error = (c - (d - back)) + (-v - back)
    return order_key(bits_of(d)) - np.int64(error < 0.0)


FRACTION_BITS = np.uint64(0x000FFFFFFFFFFFFF)
IMPLICIT_BIT = np.uint64(1) << np.uint64(52)
NO_LOW_BIT = 100_000  # low_bit_exponent of 0 and of +-inf: above every finite float's


@register_jitable
def low_bit_exponent(c):
    """e such that 2^e is the lowest set bit of |c| (c is an integer multiple of 2^e, and of no
    larger power of two), NO_LOW_BIT for 0 and +-inf. By arithmetic (float64_bits, frexp), so the
    same code runs on the cpu, the GPU and the simulator."""
    magnitude = float64_bits(np.float64(c)) & MAGNITUDE_BITS
    field = np.int64(magnitude >> np.uint64(52))
    full = (magnitude & FRACTION_BITS) | (IMPLICIT_BIT if field > 0 else np.uint64(0))
    if field >= 2047 or full == 0:
        return NO_LOW_BIT
    low = full & (~full + np.uint64(1))  # the lowest set bit alone: an exact power of two below 2^53
    return (math.frexp(np.float64(low))[1] - 1) + max(field, 1) - 1075


@register_jitable
def dual_size(u, v, row0, col0, n, m):
    """max |u_i| + max |v_j| of one batch item (rows at ``row0``, columns at ``col0``): the size of the
    sums u_i + v_j whose rounding the batch certificates' allowance covers (cpu and GPU alike)."""
    top_v = 0.0
    for j in range(m):
        top_v = max(top_v, abs(v[col0 + j]))
    top_u = 0.0
    for i in range(n):
        top_u = max(top_u, abs(u[row0 + i]))
    return top_u + top_v

