"""dpmech.verify: checks of DP inequalities that users can put in their own test suites.

* :mod:`.exact`: exact hockey-stick divergence, privacy profile and
  :func:`assert_dp` for mechanisms with finitely many outputs;
* :mod:`.numeric`: hockey-stick divergence of densities by quadrature, and
  the Gaussian mechanism's δ(ε) computed that way;
* :mod:`.statistical`: black-box Clopper–Pearson test for samplers of any
  output type (NaN, ±inf, vectors, tuples are outcomes); the Clopper–Pearson
  bounds it uses, valid down to level 1e-300, live in :mod:`dpmech.statistics`
  and are re-exported here;
* :mod:`.learned`: events learned by classifiers (DP-Sniper), tested on a
  fresh sample;
* :mod:`.floating`: events on the lattice exponents of float outputs,
  the floating-point attack of Mironov (CCS 2012);
* :mod:`.projections`: events on summary statistics of vector outputs
  (StatDP's post-processings);
* :mod:`.tester`: :func:`find_violation`, the search over candidate pairs
  (StatDP's patterns), event families and sample sizes under one α and a
  time budget;
* :mod:`.greybox`: events chosen by a declared Gaussian or Laplace noise
  family and counted on fresh outputs (small-δ bugs; the verdict holds
  whatever the noise's law), and the family's own noise-scale check;
* :mod:`.renyi`: Rényi, zCDP and μ-GDP claims, exactly for finite
  mechanisms, by certified partition lower bounds for scipy.stats laws and
  by quadrature for log-density callables (estimates, labelled so);
* :mod:`.claims`: zCDP, μ-GDP and RDP claims refuted from samples through
  the (ε, δ) points they imply (:func:`find_claim_violation`);
* :mod:`.records`: candidate neighbouring datasets of records
  (:func:`record_neighbours`), for :func:`find_violation`'s ``pairs``;
* :mod:`.examples` (import it explicitly): correct and buggy mechanisms
  from the DP-testing literature;
* :mod:`.pytest_plugin`: the ``dp_verify`` fixture and ``--dp-budget``;
* :mod:`.sensitivity`: measured ‖θ(D) − θ(D')‖ of trainers against a bound;
* :mod:`.strategies` and :mod:`.search` (import them explicitly; they
  import Hypothesis): Hypothesis strategies for (ε, δ), datasets and
  neighbouring pairs, and an adversarial search for the worst pair;
* :mod:`.suite`: the built-in checks of every dpmech mechanism behind
  ``dpmech verify``.

``import dpmech`` does not import this package; this package imports only
numpy and scipy.
"""

from ..statistics import clopper_pearson_lower, clopper_pearson_upper
from .exact import DpViolation, HockeyStick, assert_dp, hockey_stick_divergence, privacy_profile, smallest_epsilon
from .floating import float_dp_test, lattice_exponents
from .greybox import NoiseScaleResult, noise_scale_test
from .learned import learned_dp_test
from .numeric import boundary_points, density_hockey_stick, gaussian_hockey_stick
from .projections import projection_dp_test
from .sensitivity import (
    SensitivityReport,
    SensitivityViolation,
    assert_sensitivity,
    empirical_sensitivity,
    parameter_distance,
)
from .renyi import RENYI_ORDERS, ClaimCheck, assert_gdp, assert_zcdp, density_renyi_divergence, renyi_divergence, renyi_profile
from .claims import ClaimReport, GdpClaim, RenyiClaim, ZcdpClaim, assert_claim_black_box, find_claim_violation
from .records import RecordBox, record_neighbours
from .statistical import StatisticalTestResult, assert_dp_statistically, outcome_codes, statistical_dp_test
from .tester import VerificationReport, assert_dp_black_box, find_violation, statdp_pairs

__all__ = [
    "ClaimCheck",
    "ClaimReport",
    "DpViolation",
    "GdpClaim",
    "RENYI_ORDERS",
    "RecordBox",
    "RenyiClaim",
    "ZcdpClaim",
    "assert_claim_black_box",
    "find_claim_violation",
    "record_neighbours",
    "HockeyStick",
    "NoiseScaleResult",
    "SensitivityReport",
    "SensitivityViolation",
    "StatisticalTestResult",
    "VerificationReport",
    "assert_dp",
    "assert_dp_black_box",
    "assert_gdp",
    "assert_zcdp",
    "assert_dp_statistically",
    "assert_sensitivity",
    "boundary_points",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "density_hockey_stick",
    "density_renyi_divergence",
    "empirical_sensitivity",
    "find_violation",
    "float_dp_test",
    "gaussian_hockey_stick",
    "hockey_stick_divergence",
    "lattice_exponents",
    "learned_dp_test",
    "noise_scale_test",
    "outcome_codes",
    "parameter_distance",
    "privacy_profile",
    "projection_dp_test",
    "renyi_divergence",
    "renyi_profile",
    "smallest_epsilon",
    "statdp_pairs",
    "statistical_dp_test",
]
