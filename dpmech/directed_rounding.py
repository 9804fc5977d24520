"""Decimal text for privacy numbers, rounded in the safe direction.

A table that prints σ = 4.224678889 when the exact σ is 4.224678889330939
tells its reader to add less noise than the theorem needs. Every number dpmech
prints therefore goes through one of these:

* :func:`format_up` for quantities whose understatement is unsafe: σ, an upper
  bound on ε or δ, a sensitivity;
* :func:`format_down` for quantities whose overstatement is unsafe: a certified
  lower bound (an audit's ε_lb, the lower end of an interval), a noise scale
  that must not be overstated as "at least";
* :func:`format_log_up` for a δ carried as its logarithm, which may lie far
  below the smallest double and must never print as 0.

The reports' texts (the audits, ``dpmech run``) apply these at :data:`REPORT_DIGITS`
significant digits: :func:`epsilon_text` for an upper ε, :func:`lower_bound_text` for a
lower bound, :func:`delta_text` for δ.

A double whose shortest round-trip text (``repr``) has at most the requested
digits prints as that text: it parses back to the same double, so nothing is
understated. Otherwise the decimal digits are those of the exact binary value
(``decimal.Decimal`` of a float is exact), rounded with ``ROUND_CEILING`` or
``ROUND_FLOOR``, so the printed number is on the stated side of the double it
stands for. Non-finite
values print as ``inf``, ``-inf`` or ``nan``.
"""

from __future__ import annotations

import decimal
import math

DEFAULT_DIGITS = 10
# Significant digits of the numbers in a report (audits, dpmech run): enough to compare, few enough to read.
REPORT_DIGITS = 4


# dpmech.validation (numpy) loads only for an argument that is not a plain float or int, so that the
# CLI's numpy-free commands print without numpy.
def _digits(significant_digits: int) -> int:
    if type(significant_digits) is int and significant_digits >= 1:
        return significant_digits
    from . import validation as check

    return check.integer_scalar("significant_digits", significant_digits, 1)


def _real(name: str, value: float) -> float:
    if type(value) is float:
        return value
    from . import validation as check

    return float(check.real_array(name, value, "a real number"))


def _format(value: float, significant_digits: int, rounding: str) -> str:
    value = _real("value", value)
    if not math.isfinite(value):
        return str(value)
    shortest = repr(value)
    if len(decimal.Decimal(shortest).as_tuple().digits) <= significant_digits:
        # The shortest text that parses back to this very double: nothing is lost or understated.
        return shortest
    exact = decimal.Decimal(value)
    exponent = exact.adjusted() - significant_digits + 1
    rounded = exact.quantize(decimal.Decimal(1).scaleb(exponent), rounding=rounding).normalize()
    if -4 <= rounded.adjusted() < significant_digits:
        text = f"{rounded:f}"
        # Same style as the shortest-repr branch, so 0.99999 rounded up prints "1.0" beside a plain 1.0.
        return text if "." in text else text + ".0"
    mantissa = rounded.scaleb(-rounded.adjusted())
    return f"{mantissa:f}e{rounded.adjusted():+03d}"


def format_up(value: float, significant_digits: int = DEFAULT_DIGITS) -> str:
    """``value`` with ``significant_digits`` digits, rounded toward +∞: never below ``value``."""
    return _format(value, _digits(significant_digits), decimal.ROUND_CEILING)


def format_down(value: float, significant_digits: int = DEFAULT_DIGITS) -> str:
    """``value`` with ``significant_digits`` digits, rounded toward −∞: never above ``value``."""
    return _format(value, _digits(significant_digits), decimal.ROUND_FLOOR)


def round_up(value: float, significant_digits: int = DEFAULT_DIGITS) -> float:
    """The smallest double >= the decimal ``format_up(value)``; a number to store where text would do."""
    text = format_up(value, significant_digits)
    result = float(text)
    return result if decimal.Decimal(result) >= decimal.Decimal(text) else math.nextafter(result, math.inf)


def round_down(value: float, significant_digits: int = DEFAULT_DIGITS) -> float:
    """The largest double <= the decimal ``format_down(value)``."""
    text = format_down(value, significant_digits)
    result = float(text)
    return result if decimal.Decimal(result) <= decimal.Decimal(text) else math.nextafter(result, -math.inf)


def format_log_up(log_value: float, significant_digits: int = DEFAULT_DIGITS) -> str:
    """exp(``log_value``) as decimal text rounded up, for values far below the smallest double.

    The mantissa comes from log10 split into integer and fractional parts; it is
    raised by a relative 1e-12 (a thousand times the rounding of that split for
    |log_value| up to 1e6) before rounding up, so the text is never below the value.
    """
    log_value = _real("log_value", log_value)
    digits = _digits(significant_digits)
    if log_value == -math.inf:
        return "0"
    if not math.isfinite(log_value) or log_value > 700.0:
        return format_up(math.exp(min(log_value, 709.0)) if math.isfinite(log_value) else log_value, digits)
    if log_value > -700.0:
        return format_up(math.exp(log_value) * (1.0 + 1e-15), digits)
    log10_value = log_value / math.log(10.0)
    exponent = math.floor(log10_value)
    mantissa = 10.0 ** (log10_value - exponent) * (1.0 + 1e-12)
    text = format_up(mantissa, digits)
    if text.startswith("10"):  # the mantissa rounded up to 10
        text, exponent = "1", exponent + 1
    return f"{text}e{exponent:+d}"


def epsilon_text(value: float | None) -> str:
    """An upper ε (a claim, a guarantee) for a report: :data:`REPORT_DIGITS` significant digits rounded up
    (:func:`format_up`), "∞" for no guarantee (None or +∞)."""
    return "∞" if value is None or value == math.inf else format_up(value, REPORT_DIGITS)


def lower_bound_text(value: float) -> str:
    """A lower bound (ε_lb, μ_lb) for a report: :data:`REPORT_DIGITS` significant digits rounded down
    (:func:`format_down`)."""
    return format_down(value, REPORT_DIGITS)


def delta_text(delta: float, log_delta: float | None = None) -> str:
    """δ for a report, :data:`REPORT_DIGITS` significant digits rounded up; from ``log_delta`` where that lies
    below every double (:func:`format_log_up`), so a positive δ never prints as "0"."""
    if log_delta is not None and math.isfinite(log_delta) and log_delta < -700.0:
        return format_log_up(log_delta, REPORT_DIGITS)
    return format_up(delta, REPORT_DIGITS)
