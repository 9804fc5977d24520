r"""The built-in verification suite behind ``dpmech verify``: every dpmech mechanism against its claim.

Each check returns :class:`CheckResult` rows (mechanism, parameters, the
claimed (ε, δ), the worst value measured, verdict):

* ``randomized-response``, ``rr-top-k``, ``rr-with-prior``: the exact
  privacy profile of the ``*_distribution`` functions over every pair of
  labels (label DP, replace-one) at drawn (K, ε, k, priors), and the
  black-box test (:mod:`.statistical`) on the samplers;
* ``nfdp``: the exact law of the released subsample, enumerated over every
  subset (or draw sequence), under add/remove-one and replace-one, against
  :func:`dpmech.mechanisms.nfdp_guarantee`;
* ``gaussian-output``: δ(ε) of :class:`dpmech.GaussianOutputMechanism`'s σ by
  quadrature against the target δ and against :func:`dpmech.gaussian_delta`,
  and the black-box test on its ``release``;
* checks registered by other packages (:func:`available_checks`): ``trainers``
  adds ``logistic-regression`` (scikit-learn L-BFGS through its adapter) and
  ``psgd`` (DP-Helmet's Softmax-SLP and Huber-SVM PSGD), the empirical
  sensitivity on neighbours found by :mod:`.search` against
  :mod:`dpmech.sensitivity`'s bounds.

Everything is seeded: the same call prints the same table. ``thorough``
raises the counts for release checks.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray

from .. import validation as check
from ..gaussian import gaussian_delta
from ..nfdp import nfdp_guarantee
from ..output_perturbation import GaussianOutputMechanism
from ..randomized_response import (
    randomized_response,
    randomized_response_distribution,
    rr_top_k,
    rr_top_k_distribution,
    rr_with_prior,
    rr_with_prior_distribution,
)
from .exact import Distribution, privacy_profile, smallest_epsilon
from .numeric import gaussian_hockey_stick
from .statistical import Sampler, statistical_dp_test

# Agreement required between quadrature and the closed form.
GAUSSIAN_RELATIVE_TOLERANCE = 1e-9
# Optimisation slack on a measured/bound ratio (scikit-learn stops at tol 1e-10).
SENSITIVITY_RATIO_SLACK = 1e-6
STATISTICAL_ALPHA = 0.05
# A drawn setting of a label-DP mechanism: (ε, K, ...), as each check draws it.
Setting = TypeVar("Setting", bound=tuple[object, ...])


@dataclass(frozen=True)
class CheckResult:
    """One row of the suite's table."""

    mechanism: str
    parameters: str
    claimed: str
    worst_measured: str
    passed: bool

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "FAIL"

    def as_dict(self) -> dict[str, str]:
        return {
            "mechanism": self.mechanism,
            "parameters": self.parameters,
            "claimed": self.claimed,
            "worst_measured": self.worst_measured,
            "verdict": self.verdict,
        }


# A check: thorough -> its rows of the table.
Check: TypeAlias = Callable[[bool], list[CheckResult]]


def _counts(thorough: bool) -> dict[str, int]:
    return {"settings": 300 if thorough else 40, "samples": 200_000 if thorough else 20_000, "samplers": 12 if thorough else 4}


def _label_pairs(num_classes: int) -> list[tuple[int, int]]:
    return [(y, other) for y, other in itertools.permutations(range(num_classes), 2)]


def _exact_label_dp(
    name: str,
    draw_setting: Callable[[Setting], tuple[float, int, str]],
    distribution: Callable[[int, Setting], Distribution],
    settings: Sequence[Setting],
) -> CheckResult:
    """Worst δ(ε) and worst measured ε/claimed ε over all label pairs of drawn settings."""
    worst_delta, worst_ratio, description = 0.0, 0.0, ""
    for setting in settings:
        epsilon, num_classes, text = draw_setting(setting)
        mechanism = lambda label, setting=setting: distribution(label, setting)  # noqa: E731
        for pair in _label_pairs(num_classes):
            worst_delta = max(worst_delta, privacy_profile(mechanism, pair, epsilon))
            ratio = smallest_epsilon(mechanism, pair, 0.0) / epsilon
            if ratio > worst_ratio:
                worst_ratio, description = ratio, text
    passed = worst_delta == 0.0 and worst_ratio <= 1.0 + 1e-9
    return CheckResult(
        name,
        f"exact, {len(settings)} settings, all label pairs; worst at {description}",
        "(eps, 0) label DP",
        f"delta(eps) = {worst_delta:.3g}; max log-ratio / eps = {worst_ratio:.12f}",
        passed,
    )


def _statistical_label_dp(name: str, samplers: Sequence[tuple[float, int, Sampler, str]], num_samples: int) -> CheckResult:
    worst, rejected = 0.0, False
    for epsilon, num_classes, sampler, text in samplers:
        for pair in ((0, num_classes - 1), (num_classes - 1, 0)):
            result = statistical_dp_test(
                sampler, pair, epsilon, 0.0, num_samples=num_samples, rng=17, alpha=STATISTICAL_ALPHA
            )
            worst = max(worst, result.epsilon_lower_bound / epsilon)
            rejected |= result.rejected
    return CheckResult(
        name,
        f"black-box, {len(samplers)} settings, N = {num_samples} per side, alpha = {STATISTICAL_ALPHA}",
        "(eps, 0) label DP",
        f"max eps lower bound / eps = {worst:.3f}",
        not rejected,
    )


def _dirichlet_priors(rng: np.random.Generator, num_classes: int) -> NDArray[np.float64]:
    return rng.dirichlet(np.full(num_classes, 0.5))


def _rr_settings(rng: np.random.Generator, count: int) -> list[tuple[float, int]]:
    return [(float(10 ** rng.uniform(-2, 1)), int(rng.integers(2, 11))) for _ in range(count)]


def check_randomized_response(thorough: bool = False) -> list[CheckResult]:
    counts = _counts(thorough)
    rng = np.random.default_rng(1)
    settings = _rr_settings(rng, counts["settings"])
    exact = _exact_label_dp(
        "randomized-response",
        lambda s: (s[0], s[1], f"eps = {s[0]:.3g}, K = {s[1]}"),
        lambda label, s: randomized_response_distribution([label], s[0], s[1])[0],
        settings,
    )
    samplers = [
        (epsilon, num_classes, lambda label, size, g, e=epsilon, k=num_classes: randomized_response(np.full(size, label), e, k, g), "")
        for epsilon, num_classes in settings[: counts["samplers"]]
    ]
    return [exact, _statistical_label_dp("randomized-response", samplers, counts["samples"])]


def _top_k_settings(rng: np.random.Generator, count: int) -> list[tuple[float, int, int, NDArray[np.float64]]]:
    settings = []
    for _ in range(count):
        epsilon, num_classes = float(10 ** rng.uniform(-2, 1)), int(rng.integers(2, 11))
        settings.append((epsilon, num_classes, int(rng.integers(1, num_classes + 1)), _dirichlet_priors(rng, num_classes)))
    return settings


def check_rr_top_k(thorough: bool = False) -> list[CheckResult]:
    counts = _counts(thorough)
    settings = _top_k_settings(np.random.default_rng(2), counts["settings"])
    exact = _exact_label_dp(
        "rr-top-k",
        lambda s: (s[0], s[1], f"eps = {s[0]:.3g}, K = {s[1]}, k = {s[2]}"),
        lambda label, s: rr_top_k_distribution([label], s[3][None, :], s[2], s[0])[0],
        settings,
    )
    samplers = [
        (
            epsilon,
            num_classes,
            lambda label, size, g, e=epsilon, k=k, p=prior: rr_top_k(np.full(size, label), np.tile(p, (size, 1)), k, e, g),
            "",
        )
        for epsilon, num_classes, k, prior in settings[: counts["samplers"]]
    ]
    return [exact, _statistical_label_dp("rr-top-k", samplers, counts["samples"])]


def check_rr_with_prior(thorough: bool = False) -> list[CheckResult]:
    counts = _counts(thorough)
    settings = [
        setting[:2] + (compat, setting[3])
        for setting, compat in zip(_top_k_settings(np.random.default_rng(3), counts["settings"]), itertools.cycle([False, True]))
    ]
    exact = _exact_label_dp(
        "rr-with-prior",
        lambda s: (s[0], s[1], f"eps = {s[0]:.3g}, K = {s[1]}, google_compat = {s[2]}"),
        lambda label, s: rr_with_prior_distribution([label], s[3][None, :], s[0], google_compat=s[2])[0],
        settings,
    )
    samplers = [
        (
            epsilon,
            num_classes,
            lambda label, size, g, e=epsilon, c=compat, p=prior: rr_with_prior(
                np.full(size, label), np.tile(p, (size, 1)), e, g, google_compat=c
            ),
            "",
        )
        for epsilon, num_classes, compat, prior in settings[: counts["samplers"]]
    ]
    return [exact, _statistical_label_dp("rr-with-prior", samplers, counts["samples"])]


def subsample_distribution(records: tuple[int, ...], k: int, replacement: bool) -> dict[Hashable, float]:
    """Law of the NFDP sample of k of ``records`` (a tuple of distinct record ids), the sample released as is.

    Without replacement the output is the set drawn (uniform over the
    C(n, k) subsets); with replacement it is the sequence of k i.i.d. draws
    (uniform over the n^k sequences). A learner trained on the sample can
    do no more than publish it, so this is the worst case for every learner.
    """
    outcomes: list[Hashable]
    if replacement:
        outcomes = list(itertools.product(records, repeat=k))
    else:
        outcomes = [frozenset(subset) for subset in itertools.combinations(records, k)]
    return dict.fromkeys(outcomes, 1.0 / len(outcomes))


def nfdp_neighbours(n: int) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    """(relation, D, D') for a dataset of records 0..n−1: one record added, one removed, one replaced."""
    dataset = tuple(range(n))
    pairs = [("add", dataset, dataset + (n,))]
    if n >= 2:
        pairs.append(("remove", dataset, dataset[1:]))
    pairs.append(("replace", dataset, (n,) + dataset[1:]))
    return pairs


def nfdp_tight_delta(n: int, k: int, replacement: bool, relation: str) -> float:
    """The δ at ε = 0 (total variation) of the NFDP sample: the probability that the differing record is drawn."""
    size = n + 1 if relation == "add" else n
    return 1.0 - (1.0 - 1.0 / size) ** k if replacement else k / size


def check_nfdp(thorough: bool = False) -> list[CheckResult]:
    largest = 7 if thorough else 5
    rows = []
    for replacement in (False, True):
        worst_ratio: dict[str, float] = {}
        worst_tight_error, slack_epsilon, configurations, passed = 0.0, 0.0, 0, True
        for n in range(1, largest + 1):
            for k in range(1, n + 1):
                claim = nfdp_guarantee(n, k, replacement)
                for relation, dataset, neighbour in nfdp_neighbours(n):
                    if not replacement and len(neighbour) < k:
                        continue
                    mechanism = lambda records, k=k: subsample_distribution(records, k, replacement)  # noqa: E731
                    pair = (dataset, neighbour)
                    measured = privacy_profile(mechanism, pair, claim.epsilon, rtol=0.0)
                    tight = privacy_profile(mechanism, pair, 0.0, rtol=0.0)
                    passed &= measured <= claim.delta
                    worst_ratio[relation] = max(worst_ratio.get(relation, 0.0), measured / claim.delta)
                    worst_tight_error = max(worst_tight_error, abs(tight - nfdp_tight_delta(n, k, replacement, relation)))
                    slack_epsilon = max(slack_epsilon, smallest_epsilon(mechanism, pair, claim.delta))
                    configurations += 1
        passed &= worst_tight_error <= 1e-12
        rows.append(
            CheckResult(
                "nfdp",
                f"{'with' if replacement else 'without'} replacement, exact, every (n, k) with n <= {largest}, "
                f"add/remove/replace ({configurations} pairs)",
                "Thm 2: (k ln((n+1)/n), 1-((n-1)/n)^k)" if replacement else "Thm 1: (ln((n+1)/(n+1-k)), k/n)",
                "max delta(eps_claimed)/delta_claimed: "
                + ", ".join(f"{relation} {ratio:.4f}" for relation, ratio in worst_ratio.items())
                + f"; smallest eps at delta_claimed = {slack_epsilon:.2g}; delta(0) = P[differing record drawn] "
                f"within {worst_tight_error:.1e}",
                passed,
            )
        )
    return rows


def check_gaussian_output(thorough: bool = False) -> list[CheckResult]:
    counts = _counts(thorough)
    rng = np.random.default_rng(4)
    worst_error, worst_over, passed = 0.0, 0.0, True
    for _ in range(counts["settings"]):
        epsilon, delta, sensitivity = 10 ** rng.uniform(-2, 1.3), 10 ** rng.uniform(-12, -1), 10 ** rng.uniform(-2, 2)
        mechanism = GaussianOutputMechanism(sensitivity, epsilon, delta)
        numeric = gaussian_hockey_stick(epsilon, mechanism.sigma, sensitivity)
        analytic = gaussian_delta(epsilon, mechanism.sigma, sensitivity)
        worst_error = max(worst_error, abs(numeric / analytic - 1.0))
        worst_over = max(worst_over, numeric / delta)
        passed &= numeric <= delta * (1.0 + GAUSSIAN_RELATIVE_TOLERANCE)
    passed &= worst_error <= GAUSSIAN_RELATIVE_TOLERANCE
    rows = [
        CheckResult(
            "gaussian-output",
            f"quadrature, {counts['settings']} drawn (eps, delta, sensitivity), analytic sigma",
            "(eps, delta) as calibrated",
            f"max numeric delta(eps)/delta = {worst_over:.9f}; max |numeric/analytic - 1| = {worst_error:.1e}",
            passed,
        )
    ]
    worst_ratio, rejected = 0.0, False
    for _ in range(counts["samplers"]):
        epsilon, delta, sensitivity = 10 ** rng.uniform(-1, 0.7), 10 ** rng.uniform(-6, -2), 10 ** rng.uniform(-1, 1)
        mechanism = GaussianOutputMechanism(sensitivity, epsilon, delta)
        sampler = lambda centre, size, g, m=mechanism: m.release(np.full(size, centre), g)  # noqa: E731
        result = statistical_dp_test(
            sampler, (0.0, sensitivity), epsilon, delta, num_samples=counts["samples"], rng=23, outputs="real"
        )
        worst_ratio = max(worst_ratio, result.epsilon_lower_bound / epsilon)
        rejected |= result.rejected
    rows.append(
        CheckResult(
            "gaussian-output",
            f"black-box on release, {counts['samplers']} settings, N = {counts['samples']} per side",
            "(eps, delta) as calibrated",
            f"max eps lower bound / eps = {worst_ratio:.3f}",
            not rejected,
        )
    )
    return rows


CHECKS: dict[str, Check] = {
    "randomized-response": check_randomized_response,
    "rr-top-k": check_rr_top_k,
    "rr-with-prior": check_rr_with_prior,
    "nfdp": check_nfdp,
    "gaussian-output": check_gaussian_output,
}
PLUGIN_GROUP = "dpmech.verify"


def available_checks() -> dict[str, Check | EntryPoint]:
    """Check name -> callable or entry point: the built-in checks, then those other packages register.

    A package adds checks through the ``dpmech.verify`` entry-point group, each
    naming a function ``check(thorough) -> list[CheckResult]``. ``trainers``
    registers ``logistic-regression`` and ``psgd`` this way, since they train
    models and the core imports no trainer. Entry points load only when run.
    """
    checks: dict[str, Check | EntryPoint] = dict(CHECKS)
    for entry_point in sorted(entry_points(group=PLUGIN_GROUP), key=lambda point: point.name):
        checks.setdefault(entry_point.name, entry_point)
    return checks


def run_suite(mechanism: str = "all", thorough: bool = False) -> list[CheckResult]:
    """Run the checks of one mechanism (a key of :func:`available_checks`) or ``"all"``; returns the rows."""
    checks = available_checks()
    mechanism = check.choice("mechanism", mechanism, tuple(checks) + ("all",))
    thorough = check.boolean("thorough", thorough)
    names = tuple(checks) if mechanism == "all" else (mechanism,)
    rows: list[CheckResult] = []
    for name in names:
        function = checks[name]
        if not callable(function):
            function = function.load()
        rows.extend(function(thorough))
    return rows
