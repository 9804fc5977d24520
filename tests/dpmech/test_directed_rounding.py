"""Printed numbers lie on the safe side of the double they stand for."""

import decimal
import math

import mpmath
import pytest
from hypothesis import given, strategies as st

from dpmech.directed_rounding import format_down, format_log_up, format_up, round_down, round_up

finite = st.floats(allow_nan=False, allow_infinity=False)
digits = st.integers(1, 17)


@given(finite, digits)
def test_format_up_is_never_below_the_value(value, significant_digits):
    text = format_up(value, significant_digits)
    assert decimal.Decimal(text) >= decimal.Decimal(value) or float(text) == value


@given(finite, digits)
def test_format_down_is_never_above_the_value(value, significant_digits):
    text = format_down(value, significant_digits)
    assert decimal.Decimal(text) <= decimal.Decimal(value) or float(text) == value


@given(finite, digits)
def test_round_up_and_down_bracket_the_value(value, significant_digits):
    assert round_down(value, significant_digits) <= value <= round_up(value, significant_digits)


def test_the_issue_example_prints_above_the_exact_sigma():
    assert format_up(4.224678889330939) == "4.22467889"
    assert format_down(4.224678889330939) == "4.224678889"


@given(st.floats(-1e5, 0.0), st.integers(2, 12))
def test_format_log_up_is_never_below_the_exact_value(log_value, significant_digits):
    text = format_log_up(log_value, significant_digits)
    with mpmath.workdps(60):
        assert mpmath.mpf(text) >= mpmath.exp(mpmath.mpf(log_value))


def test_a_delta_below_the_smallest_double_never_prints_as_zero():
    text = format_log_up(-789.0, 4)
    assert text.endswith("e-343") and float(text.split("e")[0]) > 0


@pytest.mark.parametrize("bad", ["1", True, None, 1j])
def test_bad_values_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="value"):
        format_up(bad)


def test_non_finite_values_print_as_such():
    assert format_up(math.inf) == "inf" and format_down(-math.inf) == "-inf"


@given(st.integers(1, 9999), st.integers(4, 17))
def test_a_value_rounded_onto_a_whole_number_prints_like_that_number(whole, significant_digits):
    # A delivered ε of 0.99999999 next to a target of 1.0 must not print as "1" beside "1.0".
    below = math.nextafter(float(whole), 0.0)
    assert format_up(below, min(significant_digits, len(str(whole)))) == format_up(float(whole), significant_digits)
    assert format_down(math.nextafter(float(whole), math.inf), len(str(whole))) == repr(float(whole))
