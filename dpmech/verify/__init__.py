"""dpmech.verify: checks of DP inequalities that users can put in their own test suites.

* :mod:`.exact`: exact hockey-stick divergence, privacy profile and
  :func:`assert_dp` for mechanisms with finitely many outputs;
* :mod:`.numeric`: hockey-stick divergence of densities by quadrature, and
  the Gaussian mechanism's δ(ε) computed that way;
* :mod:`.statistical`: black-box Clopper–Pearson test for samplers;
* :mod:`.sensitivity`: measured ‖θ(D) − θ(D')‖ of trainers against a bound;
* :mod:`.strategies` and :mod:`.search` (import them explicitly; they
  import Hypothesis): Hypothesis strategies for (ε, δ), datasets and
  neighbouring pairs, and an adversarial search for the worst pair;
* :mod:`.suite`: the built-in checks of every dpmech mechanism behind
  ``dpmech verify``.

``import dpmech`` does not import this package; this package imports only
numpy and scipy.
"""

from .exact import DpViolation, HockeyStick, assert_dp, hockey_stick_divergence, privacy_profile, smallest_epsilon
from .numeric import density_hockey_stick, gaussian_hockey_stick
from .sensitivity import (
    SensitivityReport,
    SensitivityViolation,
    assert_sensitivity,
    empirical_sensitivity,
    parameter_distance,
)
from .statistical import (
    StatisticalTestResult,
    assert_dp_statistically,
    clopper_pearson_lower,
    clopper_pearson_upper,
    statistical_dp_test,
)

__all__ = [
    "DpViolation",
    "HockeyStick",
    "SensitivityReport",
    "SensitivityViolation",
    "StatisticalTestResult",
    "assert_dp",
    "assert_dp_statistically",
    "assert_sensitivity",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "density_hockey_stick",
    "empirical_sensitivity",
    "gaussian_hockey_stick",
    "hockey_stick_divergence",
    "parameter_distance",
    "privacy_profile",
    "smallest_epsilon",
    "statistical_dp_test",
]
