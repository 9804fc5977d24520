r"""Grey-box check of additive noise: the noise scale estimated from samples, against the scale the claim needs.

A black-box test needs about 1/δ samples to see a violation of δ: a
Gaussian with σ 10 % too small (true δ(1) = 5e-5 against a claimed 1e-5)
passes every event test at 6.4·10⁶ samples. When the user declares the
noise family, far fewer samples settle it: M(D) = f(D) + Z with Z i.i.d.
per coordinate,

* ``"gaussian"``, Z ~ N(0, σ²): with the centre f(D) known,
  Σ(X − f(D))²/σ² ~ χ²(n·d); unknown, Σ(X − X̄)²/σ² ~ χ²((n − 1)·d)
  (Cochran). The claim needs σ >= the analytic calibration
  (Balle & Wang 2018, Thm. 8; :func:`dpmech.calibrate_gaussian`) for the
  declared L2 sensitivity.
* ``"laplace"``, Z ~ Laplace(0, b), centre known: Σ|X − f(D)|/b ~
  Gamma(n·d, 1), so 2Σ|X − f(D)|/b ~ χ²(2n·d). The claim needs
  b >= Δ/(ε − 2 log(1 − δ)) (the Laplace pair's profile
  δ(ε) = 1 − e^{(ε − Δ/b)/2}, Δ the L1 sensitivity attained on one coordinate).

The (1 − α) upper confidence bound on the scale below the needed scale
refutes the claim at level α, provided the declared family and
sensitivity are right: :func:`noise_scale_test` trusts the declared
sensitivity to be attained by some pair of neighbours. A mechanism
calibrated for sensitivity 3 and declared with 9 is "refuted" by it though
it is DP, so :func:`.tester.find_violation` uses :func:`pair_noise_test`
instead, which trusts only the declared noise family:

* the attained shift v = f(D) − f(D′) of a candidate pair is bounded from
  samples of both neighbours: for Gaussian noise the difference of sample
  means m̂ − m̂′ ~ N(v, 2σ²/n·I_d), so ‖m̂ − m̂′ − v‖² <= (σ⁺)²·(2/n)·χ²_d(1 − α/2)
  whenever σ <= σ⁺ (a confidence ball, Cochran's pooled variance giving
  σ⁺); for Laplace noise the order-statistic interval
  [X_(k), X_(n+1−k)] covers each coordinate's median f_j(D) with
  probability >= 1 − 2·P[Bin(n, 1/2) <= k − 1] (distribution-free;
  Bonferroni over the coordinates and both neighbours), and the gap between
  the two neighbours' intervals bounds |v_j| from below;
* the scale σ (or b) is bounded from above from the same samples: Cochran
  as above; for Laplace, centred at the medians of the first half of each
  sample, Σ|X − c| over the second half dominates b·Gamma(m) (Anderson's
  inequality: |Z + a| is stochastically larger than |Z| for symmetric
  unimodal Z), so 2Σ|X − c|/χ²_{2m}(α/2) is a (1 − α/2) upper bound on b;
* the ε lower bound is the declared family's own ε(δ) at the lower bound on
  the shift and the upper bound on the scale: for the Gaussian
  ε(δ; ‖v‖₂/σ) (Balle & Wang 2018), for Laplace the larger of the
  one-coordinate profile ε = |v_j|/b + 2 log(1 − δ) and the orthant event
  on the coordinates J whose shift is bounded away from 0,
  ε = Σ_J |v_j|/b + log(1 − 2^|J| δ) (P = 2^−|J| against 2^−|J|·e^−Σ|v_j|/b).

By the union bound (α/2 for the shift, α/2 for the scale) the bound exceeds
the pair's true ε with probability at most α whatever the declared
sensitivity; the declared sensitivity is only compared with the upper
confidence bound on the shift (``attained``), and a declaration that no
pair attains is a finding about the declaration, never a violation. Both
checks say nothing about a mechanism whose noise is not of the declared
family.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .. import validation as check
from ..calibration import calibrate_gaussian
from ..gaussian import gaussian_delta, gaussian_epsilon
from .statistical import sampler_and_pair

FAMILIES = ("gaussian", "laplace")
# calibrate_gaussian exceeds the exact smallest σ by up to 1e-11 relative; the needed
# scale is lowered by this so that a mechanism with exactly the smallest σ is never refuted.
CALIBRATION_SLACK = 1e-10
# dpmech.gaussian_epsilon and gaussian_delta err upward by far less than a ratio Δ/σ lowered by this moves them;
# scipy's χ² quantiles are accurate to far better than this too, so the Laplace ratio is lowered by it as well.
RATIO_SLACK = 1e-6


@dataclass(frozen=True)
class NoiseScaleResult:
    """Outcome of :func:`noise_scale_test`: ``rejected`` when ``scale_upper_bound`` < ``scale_needed``."""

    rejected: bool
    family: str
    scale_estimate: float
    scale_upper_bound: float
    scale_needed: float
    num_values: int
    alpha: float
    epsilon: float
    delta: float
    sensitivity: float


def gaussian_scale_bounds(sum_of_squares: float, freedom: int, alpha: float) -> tuple:
    """One-sided (1 − α) confidence bounds (lower, upper) on σ when Σ r² ~ σ² χ²(freedom).

    P[upper < σ] = α and P[lower > σ] = α; each is moved one ulp outward, to the safe side of a
    refutation. Noise that is not Gaussian but has a larger second moment only raises Σ r².
    """
    upper = float(np.nextafter(math.sqrt(sum_of_squares / stats.chi2.ppf(alpha, freedom)), np.inf))
    lower = float(np.nextafter(math.sqrt(sum_of_squares / stats.chi2.isf(alpha, freedom)), 0.0))
    return lower, upper


def needed_scale(family, epsilon, delta, sensitivity) -> float:
    """The smallest noise scale (σ or b) for which the declared family is (ε, δ)-DP at the given sensitivity."""
    if family == "gaussian":
        if delta == 0.0:
            return math.inf
        return float(calibrate_gaussian(epsilon, delta, sensitivity)) / (1.0 + CALIBRATION_SLACK)
    denominator = epsilon - 2.0 * math.log1p(-delta)
    return sensitivity / denominator if denominator > 0 else math.inf


def noise_scale_test(
    sampler, dataset, family, epsilon, delta, sensitivity, *, num_samples, rng, alpha=0.05, centre=None
) -> NoiseScaleResult:
    """Refute an (ε, δ) claim from the noise scale of ``num_samples`` outputs on one dataset; see the module docstring.

    The verdict holds only if ``sensitivity`` is attained by some neighbours: a DP mechanism declared with a
    sensitivity larger than its own is "refuted". :func:`pair_noise_test` needs a pair and assumes only the family.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs (scalars or equal-length vectors).
        dataset: the input to draw on.
        family: ``"gaussian"`` or ``"laplace"``, the declared noise.
        epsilon: claimed ε >= 0 (> 0 when delta = 0).
        delta: claimed δ in [0, 1).
        sensitivity: > 0, L2 (Gaussian) or L1 (Laplace) sensitivity of f, attained by some neighbours.
        num_samples: >= 2.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1).
        centre: f(dataset), the noiseless answer (scalar or vector); required for Laplace.
    """
    if not callable(sampler):
        raise ValueError(f"sampler must be a callable (dataset, size, rng) -> outputs (got {sampler!r})")
    family = check.choice("family", family, FAMILIES)
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    if epsilon == 0.0 and delta == 0.0:
        raise ValueError("epsilon must be > 0 when delta = 0 (no additive noise is (0, 0)-DP)")
    sensitivity = float(check.positive("sensitivity", sensitivity))
    num_samples = check.integer_scalar("num_samples", num_samples, 2)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    if family == "laplace" and centre is None:
        raise ValueError("centre must be given (the noiseless answer f(dataset)) when family='laplace'")

    outputs = check.real_array("sampler output", sampler(dataset, num_samples, rng))
    if outputs.ndim == 0 or outputs.shape[0] != num_samples or not np.all(np.isfinite(outputs)):
        raise ValueError(f"sampler must return num_samples finite real outputs (got shape {outputs.shape})")
    outputs = outputs.reshape(num_samples, -1)
    if centre is not None:
        centre = check.real_array("centre", centre, "a real number or a vector of the outputs' length")
        if centre.size not in (1, outputs.shape[1]) or not np.all(np.isfinite(centre)):
            raise ValueError(f"centre must be finite with 1 or {outputs.shape[1]} entries (got shape {centre.shape})")
        deviations = outputs - centre.reshape(1, -1)
        freedom = outputs.size
    else:
        deviations = outputs - outputs.mean(axis=0, keepdims=True)
        freedom = (num_samples - 1) * outputs.shape[1]
    if family == "gaussian":
        total = float(np.sum(deviations**2))
        estimate = math.sqrt(total / freedom)
        upper = gaussian_scale_bounds(total, freedom, alpha)[1]
    else:
        total = float(np.sum(np.abs(deviations)))
        estimate = total / freedom
        upper = 2.0 * total / stats.chi2.ppf(alpha, 2 * freedom)
    needed = needed_scale(family, epsilon, delta, sensitivity)
    return NoiseScaleResult(
        rejected=bool(upper < needed),
        family=family,
        scale_estimate=estimate,
        scale_upper_bound=upper,
        scale_needed=needed,
        num_values=int(outputs.size),
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
    )


@dataclass(frozen=True)
class PairNoiseResult:
    """Outcome of :func:`pair_noise_test`: ``rejected`` when ``epsilon_lower_bound`` exceeds the claimed ε.

    ``shift_*`` bound the attained ‖f(D) − f(D′)‖ (L2 for Gaussian, L1 for Laplace noise) and ``scale_*`` the
    noise scale σ or b; ``attained`` says whether the declared sensitivity is within the shift's upper bound
    (None when none was declared). All bounds hold together with probability >= 1 − ``alpha``, given the family.
    """

    rejected: bool
    family: str
    epsilon_lower_bound: float
    delta_lower_bound: float
    shift_estimate: float
    shift_lower_bound: float
    shift_upper_bound: float
    scale_estimate: float
    scale_upper_bound: float
    declared_sensitivity: float | None
    attained: bool | None
    num_samples: int
    alpha: float
    epsilon: float
    delta: float

    def statement(self) -> str:
        """The bounds in words, with the assumption they rest on."""
        norm = "L2" if self.family == "gaussian" else "L1"
        scale = "sigma" if self.family == "gaussian" else "b"
        words = (
            f"assuming {self.family} noise: attained {norm} shift >= {self.shift_lower_bound:.6g}, {scale} <= "
            f"{self.scale_upper_bound:.6g}, so eps({self.delta:g}) >= {self.epsilon_lower_bound:.6g}"
        )
        if self.attained is False:
            words += (
                f"; declared sensitivity {self.declared_sensitivity:g} is not attained by this pair "
                f"(shift <= {self.shift_upper_bound:.6g})"
            )
        return words


def _median_intervals(outputs, level):
    """Per column, the order-statistic interval [X_(k), X_(n+1−k)] that misses the median with probability <= level.

    X_(k) > median exactly when at most k − 1 of the n outputs lie at or below it, an event of probability
    P[Bin(n, 1/2) <= k − 1] <= level/2 for continuous outputs, and likewise above (distribution-free).
    Returns (lower, upper); (−inf, inf) when n is too small for any k >= 1.
    """
    size = outputs.shape[0]
    k = int(stats.binom.ppf(level / 2.0, size, 0.5))  # the smallest k with P[Bin <= k] >= level/2: P[Bin <= k − 1] < level/2
    if k < 1:
        infinite = np.full(outputs.shape[1], np.inf)
        return -infinite, infinite
    ordered = np.partition(outputs, (k - 1, size - k), axis=0)
    return ordered[k - 1], ordered[size - k]


def _gaussian_bounds(first, second, alpha):
    """(shift estimate, lower, upper, σ estimate, σ⁺) for Gaussian noise; see the module docstring."""
    size, dimension = first.shape
    means = first.mean(axis=0), second.mean(axis=0)
    sum_of_squares = float(np.sum((first - means[0]) ** 2) + np.sum((second - means[1]) ** 2))
    freedom = 2 * (size - 1) * dimension
    upper_scale = gaussian_scale_bounds(sum_of_squares, freedom, alpha / 2.0)[1]
    estimate = float(np.linalg.norm(means[0] - means[1]))
    radius = upper_scale * math.sqrt(2.0 / size * stats.chi2.isf(alpha / 2.0, dimension))
    return estimate, max(estimate - radius, 0.0), estimate + radius, math.sqrt(sum_of_squares / freedom), upper_scale


def _laplace_bounds(first, second, alpha):
    """(shift estimates, lower bounds, upper bounds per coordinate, b estimate, b⁺) for Laplace noise; see the module docstring."""
    half, dimension = first.shape[0] // 2, first.shape[1]
    deviations = np.concatenate([np.abs(sample[half:] - np.median(sample[:half], axis=0)) for sample in (first, second)])
    total = float(np.sum(deviations))
    upper_scale = 2.0 * total / stats.chi2.ppf(alpha / 2.0, 2 * deviations.size)
    (low_first, high_first), (low_second, high_second) = (_median_intervals(sample, alpha / 2.0 / (2 * dimension)) for sample in (first, second))
    lower = np.maximum.reduce([low_first - high_second, low_second - high_first, np.zeros(dimension)])
    upper = np.maximum(high_first - low_second, high_second - low_first)
    estimate = np.abs(np.median(first, axis=0) - np.median(second, axis=0))
    return estimate, lower, upper, total / deviations.size, upper_scale


def _laplace_epsilon_delta(ratios, epsilon, delta):
    """The Laplace family's (ε lower bound at δ, δ lower bound at ε) from lower bounds |v_j|/b per coordinate.

    The one-coordinate profile δ(ε) = 1 − e^{(ε − s)/2} (s = the largest ratio) and the orthant event on the
    coordinates J with a positive ratio (P = 2^−|J|, P′ = 2^−|J|·e^{−Σ_J s_j}), each a post-processing of
    the mechanism, so each bounds its privacy profile from below.
    """
    largest, total, count = float(np.max(ratios)), float(np.sum(ratios)), int(np.count_nonzero(ratios))
    if count == 0:
        return 0.0, 0.0
    epsilons = [largest + 2.0 * math.log1p(-delta)]
    if delta == 0.0 or count * math.log(2.0) < -math.log(delta):  # 2^|J| δ < 1: the orthant event can exceed δ
        epsilons.append(total + math.log1p(-math.ldexp(delta, count)))
    deltas = [-math.expm1(min((epsilon - largest) / 2.0, 0.0)), -math.expm1(min(epsilon - total, 0.0)) * 2.0 ** -count]
    return max(max(epsilons), 0.0), max(deltas)


def pair_noise_test(
    sampler: Callable[[Any, int, np.random.Generator], Any],
    pair: tuple[Any, Any],
    family: str,
    epsilon: float,
    delta: float,
    *,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    sensitivity: float | None = None,
) -> PairNoiseResult:
    """Refute an (ε, δ) claim on one pair of neighbours from the attained shift and the noise scale; see the module docstring.

    Sound whatever ``sensitivity`` says: only the declared noise ``family`` is assumed
    (M(D) = f(D) + Z, Z i.i.d. per coordinate, Gaussian or Laplace, the same law on both neighbours).

    Args:
        sampler: callable (dataset, size, rng) -> size outputs (scalars or equal-length vectors).
        pair: (D, D′), neighbours.
        family: ``"gaussian"`` (L2 shift) or ``"laplace"`` (L1 shift).
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs per neighbour, >= 4.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1), split evenly between the shift's and the scale's bounds.
        sensitivity: None or the declared sensitivity (> 0), compared with the shift's upper bound only.
    """
    dataset, neighbour = sampler_and_pair(sampler, pair)
    family = check.choice("family", family, FAMILIES)
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    num_samples = check.integer_scalar("num_samples", num_samples, 4)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    if sensitivity is not None:
        sensitivity = float(check.positive("sensitivity", sensitivity))

    samples = []
    for data in (dataset, neighbour):
        outputs = check.real_array("sampler output", sampler(data, num_samples, rng))
        if outputs.ndim == 0 or outputs.shape[0] != num_samples or not np.all(np.isfinite(outputs)):
            raise ValueError(f"sampler must return num_samples finite real outputs (got shape {outputs.shape})")
        samples.append(outputs.reshape(num_samples, -1).astype(float))
    if samples[0].shape != samples[1].shape:
        raise ValueError(f"sampler must return outputs of one shape on both neighbours (got {samples[0].shape} and {samples[1].shape})")
    if family == "gaussian":
        shift, shift_lower, shift_upper, scale, scale_upper = _gaussian_bounds(samples[0], samples[1], alpha)
        ratio = shift_lower / (scale_upper * (1.0 + RATIO_SLACK))
        if ratio > 0.0:
            epsilon_lower_bound = float(gaussian_epsilon(delta, 1.0, ratio)) if delta > 0 else math.inf
            delta_lower_bound = float(gaussian_delta(epsilon, 1.0, ratio))
        else:
            epsilon_lower_bound = delta_lower_bound = 0.0
    else:
        shifts, lowers, uppers, scale, scale_upper = _laplace_bounds(samples[0], samples[1], alpha)
        shift, shift_lower, shift_upper = float(np.sum(shifts)), float(np.sum(lowers)), float(np.sum(uppers))
        epsilon_lower_bound, delta_lower_bound = _laplace_epsilon_delta(lowers / (scale_upper * (1.0 + RATIO_SLACK)), epsilon, delta)
    return PairNoiseResult(
        rejected=bool(epsilon_lower_bound > epsilon),
        family=family,
        epsilon_lower_bound=epsilon_lower_bound,
        delta_lower_bound=delta_lower_bound,
        shift_estimate=shift,
        shift_lower_bound=shift_lower,
        shift_upper_bound=shift_upper,
        scale_estimate=scale,
        scale_upper_bound=scale_upper,
        declared_sensitivity=sensitivity,
        attained=None if sensitivity is None else bool(sensitivity <= shift_upper),
        num_samples=num_samples,
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
    )
