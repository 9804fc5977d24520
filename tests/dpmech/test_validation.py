"""Every public entry point of the Gaussian core refuses bad input with a ValueError naming the parameter."""

import math

import numpy as np
import pytest

from dpmech import (
    ApproximateDpEvent,
    GaussianEvent,
    PureEpsilonEvent,
    calibrate_gaussian,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_log_delta,
    group_privacy,
    split_gaussian_budget,
    PrivacyLedger,
)

INVALID = [
    (lambda: calibrate_gaussian(0.0, 1e-5), "epsilon", "> 0"),
    (lambda: calibrate_gaussian(-1.0, 1e-5), "epsilon", "> 0"),
    (lambda: calibrate_gaussian(math.nan, 1e-5), "epsilon", "finite"),
    (lambda: calibrate_gaussian(math.inf, 1e-5), "epsilon", "finite"),
    (lambda: calibrate_gaussian(1.0, 0.0), "delta", r"\(0, 1\)"),
    (lambda: calibrate_gaussian(1.0, 1.0), "delta", r"\(0, 1\)"),
    (lambda: calibrate_gaussian(1.0, -1e-5), "delta", r"\(0, 1\)"),
    (lambda: calibrate_gaussian(1.0, math.nan), "delta", r"\(0, 1\)"),
    (lambda: calibrate_gaussian(1.0, 1e-5, sensitivity=0.0), "sensitivity", "> 0"),
    (lambda: calibrate_gaussian(1.0, 1e-5, sensitivity=-2.0), "sensitivity", "> 0"),
    (lambda: calibrate_gaussian(1.0, 1e-5, compositions=0), "compositions", ">= 1"),
    (lambda: calibrate_gaussian(1.0, 1e-5, compositions=2.5), "compositions", "integer"),
    (lambda: calibrate_gaussian(1.0, 1e-5, method="approximate"), "method", "analytic"),
    (lambda: calibrate_gaussian(np.array([1.0, -1.0]), 1e-5), "epsilon", "> 0"),
    (lambda: gaussian_delta(-0.1, 1.0), "epsilon", ">= 0"),
    (lambda: gaussian_delta(math.inf, 1.0), "epsilon", "finite"),
    (lambda: gaussian_delta(1.0, 0.0), "sigma", "> 0"),
    (lambda: gaussian_delta(1.0, -1.0), "sigma", "> 0"),
    (lambda: gaussian_delta(1.0, 1.0, compositions=True), "compositions", "integer"),
    (lambda: gaussian_log_delta(1.0, 1.0, sensitivity=math.nan), "sensitivity", "finite"),
    (lambda: gaussian_epsilon(0.0, 1.0), "delta", r"\(0, 1\)"),
    (lambda: gaussian_epsilon(1e-5, math.nan), "sigma", "finite"),
    (lambda: gaussian_epsilon(1e-5, 1.0, compositions=-3), "compositions", ">= 1"),
    (lambda: gaussian_epsilon("small", 1.0), "delta", "real"),
    (lambda: GaussianEvent(0.0), "sigma", "> 0"),
    (lambda: GaussianEvent(1.0, neighbouring="swap"), "neighbouring", "replace-one"),
    (lambda: PureEpsilonEvent(0.0), "epsilon", "> 0"),
    (lambda: PureEpsilonEvent(1.0, num_outcomes=1), "num_outcomes", ">= 2"),
    (lambda: ApproximateDpEvent(1.0, 1.0), "delta", r"\[0, 1\)"),
    # Strings, booleans and integers beyond a double are refused, never coerced.
    (lambda: calibrate_gaussian("1", 1e-5), "epsilon", "real number"),
    (lambda: calibrate_gaussian(True, 1e-5), "epsilon", "real number"),
    (lambda: gaussian_delta(1.0, 10**400), "sigma", "double"),
    (lambda: GaussianEvent(sigma="2"), "sigma", "real number"),
    (lambda: PrivacyLedger().record(GaussianEvent(1.0), count="3"), "count", "integer"),
    (lambda: group_privacy(GaussianEvent(1.0), "2"), "group_size", "integer"),
    # The Gaussian core, argument by argument: strings, booleans, None, complex, bytes.
    (lambda: gaussian_delta("1", 1.0), "epsilon", "real number"),
    (lambda: gaussian_delta(1.0, True), "sigma", "real number"),
    (lambda: gaussian_log_delta(1.0, 1.0, sensitivity="2"), "sensitivity", "real number"),
    (lambda: gaussian_log_delta(None, 1.0), "epsilon", "real number"),
    (lambda: gaussian_epsilon(1e-5, 1.0, compositions="3"), "compositions", "integer"),
    (lambda: gaussian_epsilon(True, 1.0), "delta", "real number"),
    (lambda: gaussian_epsilon(1e-5, 1 + 0j), "sigma", "real number"),
    (lambda: calibrate_gaussian(1.0, b"1e-5"), "delta", "real number"),
    (lambda: calibrate_gaussian(1.0, 1e-5, sensitivity=False), "sensitivity", "real number"),
    (lambda: calibrate_gaussian(1.0, 1e-5, compositions=False), "compositions", "integer"),
    (lambda: calibrate_gaussian(0.5, 1e-5, compositions=10**700, method="classic"), "epsilon", "too small"),
    (lambda: calibrate_gaussian(1e-300, 1e-5, sensitivity=1e305), "epsilon", "largest double"),
    (lambda: calibrate_gaussian(1.0, 1e-5, method=None), "method", "analytic"),
    (lambda: split_gaussian_budget("1", 1e-5, [1.0]), "epsilon", "real number"),
    (lambda: split_gaussian_budget(1.0, True, [1.0]), "delta", "real number"),
    (lambda: split_gaussian_budget(1.0, 1e-5, []), "shares", "non-empty"),
    (lambda: split_gaussian_budget(1.0, 1e-5, ["1"]), "shares", "real number"),
    (lambda: split_gaussian_budget(1.0, 1e-5, [[1.0], [2.0]]), "shares", "1-D"),
    (lambda: gaussian_epsilon(1e-5, 1e-160), "sigma", "largest double"),
]


@pytest.mark.parametrize("call,parameter,valid_range", INVALID)
def test_invalid_input_raises_naming_parameter_and_range(call, parameter, valid_range):
    with pytest.raises(ValueError, match=parameter) as raised:
        call()
    assert raised.match(valid_range)


def test_integral_float_compositions_are_accepted_not_rounded():
    assert gaussian_delta(1.0, 2.0, compositions=3.0) == gaussian_delta(1.0, 2.0, compositions=3)
