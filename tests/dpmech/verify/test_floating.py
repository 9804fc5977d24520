"""Floating-point attacks (Mironov 2012): float64 samplers caught by lattice-exponent events, dpmech's discrete ones not."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech.verify import statistical_dp_test
from dpmech.verify.examples import floating_point_examples
from dpmech.verify.floating import INFINITY_CODE, NAN_CODE, ZERO_CODE, float_dp_test, lattice_exponents
from dpmech.verify.learned import learned_dp_test
from dpmech.verify.tester import find_violation

ALPHA = 0.05
EXAMPLES = {example.name: example for example in floating_point_examples()}
finite_doubles = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@given(finite_doubles.filter(lambda x: x != 0.0))
def test_a_double_is_an_odd_multiple_of_two_to_its_lattice_exponent(x):
    exponent = int(lattice_exponents(np.array([x]))[0])
    assert -1074 <= exponent <= 1023
    # x / 2^k computed exactly in integers (Fraction-free: x = m·2^e with integer m from as_integer_ratio).
    numerator, denominator = x.as_integer_ratio()
    if exponent >= 0:
        quotient, remainder = divmod(numerator, denominator * 2**exponent)
    else:
        quotient, remainder = divmod(numerator * 2**-exponent, denominator)
    assert remainder == 0 and quotient % 2 != 0


@given(finite_doubles)
def test_one_plus_any_double_is_a_multiple_of_two_to_minus_53(y):
    # The theorem the attack rests on: on f(D') = 1 the released lattice exponent is never below −53.
    total = 1.0 + y
    if math.isfinite(total) and total != 0.0:
        assert lattice_exponents(np.array([total]))[0] >= -53


def test_special_values_have_their_own_codes():
    codes = lattice_exponents(np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.75, 5e-324, 3.0 * 2.0**100]))
    assert codes.tolist() == [ZERO_CODE, ZERO_CODE, INFINITY_CODE, INFINITY_CODE, NAN_CODE, 0, -2, -1074, 100]


def textbook_laplace(centre, size, rng, scale=2.0):
    centred = rng.random(size) - 0.5
    return centre - scale * np.sign(centred) * np.log(1.0 - 2.0 * np.abs(centred))


def test_textbook_float_laplace_is_caught_at_its_claimed_epsilon_and_the_cheap_events_miss_it():
    # Scale 2 on f(D) = 0 vs f(D') = 1: the real-valued mechanism is 0.5-DP; the float64 program is not DP at all.
    assert not statistical_dp_test(textbook_laplace, (0.0, 1.0), 0.5, 0.0, num_samples=2000, rng=0, alpha=ALPHA, outputs="real").rejected
    result = float_dp_test(textbook_laplace, (0.0, 1.0), 0.5, 0.0, num_samples=2000, rng=0, alpha=ALPHA)
    assert result.rejected and result.epsilon_lower_bound > 0.5
    assert "lattice exponent" in result.witness and result.counts[1] == 0  # never on the other input
    assert learned_dp_test(textbook_laplace, (0.0, 1.0), 0.5, 0.0, num_samples=2000, rng=0, alpha=ALPHA, float_bits=True).rejected


@pytest.mark.parametrize("name", ["noisy histogram (textbook float laplace)", "gaussian (float64 rng.normal)"])
def test_find_violation_with_float_bits_catches_float64_samplers(name):
    example = EXAMPLES[name]
    report = find_violation(example.sampler, example.pairs, example.epsilon, example.delta, rng=0, alpha=ALPHA, budget_seconds=2.0, outputs=example.outputs, **example.options)
    assert report.rejected and report.epsilon_lower_bound > example.epsilon, report


@pytest.mark.parametrize("name", ["noisy histogram (dpmech discrete laplace, grid 1e-3)", "gaussian (dpmech discrete sampler, grid 2^-10)"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_false_alarm_on_dpmechs_exact_discrete_samplers(name, seed):
    example = EXAMPLES[name]
    report = find_violation(
        example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, alpha=ALPHA, budget_seconds=1.0, max_samples=4000,
        families=("float",), outputs=example.outputs, **example.options
    )
    assert not report.rejected, report


def test_the_discrete_samplers_pass_the_float_events_where_the_float_ones_fail():
    # Same pair, same n, same α: the lattice events separate the float64 release from the exact one.
    for name, caught in (("gaussian (float64 rng.normal)", True), ("gaussian (dpmech discrete sampler, grid 2^-10)", False)):
        example = EXAMPLES[name]
        result = float_dp_test(example.sampler, (0.0, 1.0), example.epsilon, example.delta, num_samples=4000, rng=3, alpha=ALPHA)
        assert result.rejected == caught, (name, result)


def test_float_bits_refuses_outputs_that_are_not_numbers():
    sampler = lambda d, size, rng: [("a", 1.0)] * size  # noqa: E731
    with pytest.raises(ValueError, match="float_bits"):
        find_violation(sampler, [(0, 1)], 1.0, 0.0, rng=0, families=("cheap",), float_bits=True, budget_seconds=1.0)


@pytest.mark.parametrize("parameter, options", [("num_samples", {"num_samples": 0}), ("alpha", {"alpha": 1.0}), ("num_thresholds", {"num_thresholds": 0})])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, options):
    arguments = {"num_samples": 100, "rng": 0} | options
    with pytest.raises(ValueError, match=parameter):
        float_dp_test(textbook_laplace, (0.0, 1.0), 0.5, 0.0, **arguments)
