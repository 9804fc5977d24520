r"""The scaled complementary error function :math:`\operatorname{erfcx}(x) = e^{x^2}\operatorname{erfc}(x)` for one
Python float, on :mod:`math` alone (no numpy, no scipy), with a stated relative error bound.

:func:`erfcx` returns :math:`\widehat{e}` with :math:`|\widehat{e}/\operatorname{erfcx}(x) - 1| \le`
:data:`ERFCX_RELATIVE_ERROR` :math:`= 2^{-48} = 32u` (u = 2⁻⁵³) for every x in [−26, 1e300]:

* x < 10: :math:`\operatorname{erfc}(x)\,e^{s}(1 + t)` with :math:`x^2 = s + t` split exactly (Dekker's
  product, so the rounding of x², which e^{x²} would magnify by x² ≤ 676, is not lost). Assuming the
  platform's ``erfc`` within 8 ulp (a relative 16u) and ``exp`` within 1 ulp (2u): glibc lists its known
  maximum errors in its manual ("Known Maximum Errors in Math Functions"), and the test measures both
  against arb. The two products and the sum round by u each, and :math:`e^{t} - (1 + t) \le t^2 \le
  (676u)^2`: at most 16u + 2u + 3u + 1e-25 < 22u.
* x >= 10: the asymptotic series (DLMF 7.12.1)
  :math:`\operatorname{erfcx}(x) = \frac{1}{x\sqrt\pi}\sum_{n=0}^{13} (-1)^n (2n-1)!!\,v^n + R`,
  :math:`v = 1/(2x^2)`. For real x the remainder has the sign of, and is at most, the first omitted term
  (DLMF 7.12(i)), :math:`27!!\,v^{14} \le 1.4\cdot10^{-18} < 0.02u` relative at x = 10 (the sum is >= 1 − v).
  Horner's scheme :math:`p_n = 1 - (2n+1)v\,p_{n+1}` has :math:`(2n+1)v \le 0.135` and
  :math:`p_n \in [0.86, 1]`, so each step adds at most 1.27u and damps what came before by 0.135: at most
  1.47u absolute, 1.71u relative; v itself is off by 2u, which moves the sum by at most
  :math:`2u \cdot v|S'(v)|/S(v) \le 0.011u`; the last multiply and divide and the rounded 1/√π add 3u.
  At most 5u. Past x = 1.3e154, x² overflows to inf, v to 0 and the sum to its first term, still within
  the bound (the rest is below 1e-308 relative); past 1e300 the result would leave the normal doubles.

The bound, 32u, is the larger case's 22u with room to spare, and holds for the platform's ``erfc`` and
``exp`` as assumed; tests/dpmech/test_erfcx.py checks it against python-flint's arb enclosures on a dense grid and
on Hypothesis draws, so a platform whose libm misses the assumption fails there.
"""

from __future__ import annotations

import math

ERFCX_RELATIVE_ERROR = 2.0**-48
LOWEST = -26.0
HIGHEST = 1e300
_SERIES_FROM = 10.0
_SERIES_TERMS = 14
_INVERSE_SQRT_PI = 1.0 / math.sqrt(math.pi)
# Veltkamp's splitter 2^27 + 1: x·splitter − (x·splitter − x) keeps the upper 26 bits of x.
_SPLITTER = 134217729.0


def _square_split(x: float) -> tuple[float, float]:
    """(s, t) with s = fl(x²) and s + t = x² exactly (Dekker 1971), for |x| < 1e150."""
    square = x * x
    scaled = _SPLITTER * x
    high = scaled - (scaled - x)
    low = x - high
    return square, ((high * high - square) + 2.0 * high * low) + low * low


def erfcx(x: float) -> float:
    """e^{x²}·erfc(x) within a relative 2⁻⁴⁸ (module docstring) for x in [−26, 1e300].

    Raises:
        ValueError: naming x where it lies outside [−26, 1e300] or is NaN (e^{x²} overflows below −26.6;
        above 1e300 the value leaves the normal doubles, where no relative bound holds).
    """
    if not LOWEST <= x <= HIGHEST:
        raise ValueError(f"x must be in [{LOWEST:g}, {HIGHEST:g}] for erfcx (got {x!r})")
    if x < _SERIES_FROM:
        square, rest = _square_split(x)
        return math.erfc(x) * math.exp(square) * (1.0 + rest)
    v = 1.0 / (2.0 * (x * x))
    series = 1.0
    for n in range(_SERIES_TERMS - 2, -1, -1):
        series = 1.0 - ((2 * n + 1) * v) * series
    return _INVERSE_SQRT_PI * series / x
