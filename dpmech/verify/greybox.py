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
instead, whose verdict trusts neither the declared sensitivity nor the
declared family. A family-based ε lower bound is unsound when the family
is wrong: a correct Laplace mechanism (ε = 1) declared Gaussian has
standard deviation √2·b, and the Gaussian ε(10⁻⁵) at shift/σ = 1/√2 is
about 3.3. So the declared family only *chooses* the events:

* on ``fit_samples`` outputs per side (a quarter of them, at most
  ``FIT_SAMPLES``) the family's log-likelihood-ratio score is fitted: for
  Gaussian noise ⟨x − (m + m′)/2, m − m′⟩/(σ̂‖m − m′‖) at the sample means,
  for Laplace noise Σ_j (|x_j − m′_j| − |x_j − m_j|)/b̂ at the sample medians;
* under the fitted model (closed form for the Gaussian score, N(±μ̂/2, 1);
  ``MODEL_DRAWS`` draws of the fitted Laplace model) the half-lines
  {score > t} with the largest predicted ε lower bound at the test's size,
  and at 16 times fewer and more outputs, are chosen, with their mirror
  images {score < −t} for the other order;
* the remaining outputs, fresh, count these events on both neighbours, and
  :func:`.statistical.decide` turns the counts into Clopper–Pearson bounds
  (every event in both orders, α/(2m) per bound): an event fixed before its
  outputs are drawn is a post-processing of the mechanism, so
  ln((p⁻ − δ)/q⁺) bounds the pair's ε(δ) from below with probability
  >= 1 − α whatever the noise's law.

The events sit where the privacy loss does (probabilities ~10⁻⁴ for
δ = 10⁻⁵), which a black-box search only finds with far more outputs; the
counts still need about 6·10⁷ outputs per side to refute a Gaussian with
σ 10 % too small at (1, 10⁻⁵) (true ε(10⁻⁵) = 1.12), and 4·10⁶ at 70 %.

Beside the verdict, and labelled with the family it assumes, the result
reports the family's own bounds from the fitted outputs:

* the attained shift v = f(D) − f(D′): for Gaussian noise the difference of
  sample means m̂ − m̂′ ~ N(v, 2σ²/n·I_d), so ‖m̂ − m̂′ − v‖² <= (σ⁺)²·(2/n)·χ²_d(1 − α/2)
  whenever σ <= σ⁺ (a confidence ball, Cochran's pooled variance giving
  σ⁺); for Laplace noise the order-statistic interval
  [X_(k), X_(n+1−k)] covers each coordinate's median f_j(D) with
  probability >= 1 − 2·P[Bin(n, 1/2) <= k − 1] (distribution-free;
  Bonferroni over the coordinates and both neighbours), and the gap between
  the two neighbours' intervals bounds |v_j| from below;
* the scale σ (or b) from above: Cochran as above; for Laplace, centred at
  the medians of the first half of each sample, Σ|X − c| over the second
  half dominates b·Gamma(m) (Anderson's inequality: |Z + a| is
  stochastically larger than |Z| for symmetric unimodal Z), so
  2Σ|X − c|/χ²_{2m}(α/2) is a (1 − α/2) upper bound on b;
* the family's ε(δ) at the lower bound on the shift and the upper bound on
  the scale (``family_epsilon_lower_bound``): for the Gaussian
  ε(δ; ‖v‖₂/σ) (Balle & Wang 2018), for Laplace the larger of the
  one-coordinate profile ε = |v_j|/b + 2 log(1 − δ) and the orthant event
  on the coordinates J whose shift is bounded away from 0,
  ε = Σ_J |v_j|/b + log(1 − 2^|J| δ) (P = 2^−|J| against 2^−|J|·e^−Σ|v_j|/b).

If the noise is of the declared family these hold together with
probability >= 1 − α (α/2 for the shift, α/2 for the scale); the declared
sensitivity is only compared with the upper confidence bound on the shift
(``attained``), and a declaration that no pair attains is a finding about
the declaration, never a violation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from .. import validation as check
from ..directed_rounding import format_down, format_up
from ..calibration import calibrate_gaussian
from ..gaussian import gaussian_delta, gaussian_epsilon
from .statistical import decide, sampler_and_pair

FAMILIES = ("gaussian", "laplace")
# A likelihood-ratio statistic fitted by _family_scores: one value per row of an (n, d) array of outputs.
Score: TypeAlias = Callable[[NDArray[np.float64]], NDArray[np.float64]]
# calibrate_gaussian exceeds the exact smallest σ by up to 1e-11 relative; the needed
# scale is lowered by this so that a mechanism with exactly the smallest σ is never refuted.
CALIBRATION_SLACK = 1e-10
# dpmech.gaussian_epsilon and gaussian_delta err upward by far less than a ratio Δ/σ lowered by this moves them;
# scipy's χ² quantiles are accurate to far better than this too, so the Laplace ratio is lowered by it as well.
RATIO_SLACK = 1e-6
# pair_noise_test fits the family on at most this many outputs per side: the events it chooses need the bulk, the
# verdict's counts the tails, and so most outputs.
FIT_SAMPLES = 2**18
# Values (outputs × coordinates) per sampler call while counting: a bounded memory for 10⁷–10⁸ outputs per side.
COUNT_CHUNK = 2**22
# Events per direction: thresholds chosen for the test's sample size and for 16 times fewer and more outputs.
THRESHOLDS_PER_DIRECTION = 3
# Draws of the fitted Laplace model that predict its score's tails (the Gaussian score's are in closed form).
MODEL_DRAWS = 2**16


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


def gaussian_scale_bounds(sum_of_squares: float, freedom: int, alpha: float) -> tuple[float, float]:
    """One-sided (1 − α) confidence bounds (lower, upper) on σ when Σ r² ~ σ² χ²(freedom).

    P[upper < σ] = α and P[lower > σ] = α; each is moved one ulp outward, to the safe side of a
    refutation. Noise that is not Gaussian but has a larger second moment only raises Σ r².
    """
    upper = float(np.nextafter(math.sqrt(sum_of_squares / stats.chi2.ppf(alpha, freedom)), np.inf))
    lower = float(np.nextafter(math.sqrt(sum_of_squares / stats.chi2.isf(alpha, freedom)), 0.0))
    return lower, upper


def needed_scale(family: str, epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest noise scale (σ or b) for which the declared family is (ε, δ)-DP at the given sensitivity."""
    if family == "gaussian":
        if delta == 0.0:
            return math.inf
        return float(calibrate_gaussian(epsilon, delta, sensitivity)) / (1.0 + CALIBRATION_SLACK)
    denominator = epsilon - 2.0 * math.log1p(-delta)
    return sensitivity / denominator if denominator > 0 else math.inf


def noise_scale_test(
    sampler: Callable[[Any, int, np.random.Generator], Any],
    dataset: Any,
    family: str,
    epsilon: float,
    delta: float,
    sensitivity: float,
    *,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    centre: ArrayLike | None = None,
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

    ``epsilon_lower_bound`` and ``delta_lower_bound`` come from Clopper–Pearson counts of the chosen events on
    fresh outputs (``counts`` of the best event on its heavy and light side, ``num_samples`` per side,
    ``num_hypotheses`` (event, order) pairs): they hold with probability >= 1 − ``alpha`` whatever the noise's
    law. The rest assumes the declared ``family``: ``family_epsilon_lower_bound`` is the family's ε(δ) at the
    bounds on the shift and the scale, from ``fit_samples`` outputs per side; ``shift_*`` bound the attained
    ‖f(D) − f(D′)‖ (L2 for Gaussian, L1 for Laplace noise) and ``scale_*`` the noise scale σ or b;
    ``attained`` says whether the declared sensitivity is within the shift's upper bound (None when none was
    declared). Those bounds hold together with probability >= 1 − ``alpha`` if the noise is of the family.
    """

    rejected: bool
    family: str
    epsilon_lower_bound: float
    delta_lower_bound: float
    event: str
    direction: str
    counts: tuple[int, int]
    num_hypotheses: int
    family_epsilon_lower_bound: float
    family_delta_lower_bound: float
    shift_estimate: float
    shift_lower_bound: float
    shift_upper_bound: float
    scale_estimate: float
    scale_upper_bound: float
    declared_sensitivity: float | None
    attained: bool | None
    num_samples: int
    fit_samples: int
    alpha: float
    epsilon: float
    delta: float

    def family_statement(self) -> str:
        """The bounds that rest on the declared family, from the ``fit_samples`` outputs (lower bounds printed rounded down, upper ones up)."""
        norm = "L2" if self.family == "gaussian" else "L1"
        scale = "sigma" if self.family == "gaussian" else "b"
        return (f"attained {norm} shift >= {format_down(self.shift_lower_bound, 6)}, {scale} <= "
                f"{format_up(self.scale_upper_bound, 6)}, so eps({self.delta:g}) >= {format_down(self.family_epsilon_lower_bound, 6)}")

    def statement(self) -> str:
        """The counted evidence, then the bounds that rest on the declared family, each with what it assumes."""
        words = (
            f"event {self.event} ({self.direction}) hit {self.counts[0]} vs {self.counts[1]} times in {self.num_samples} fresh outputs "
            f"per side: eps({self.delta:g}) >= {format_down(self.epsilon_lower_bound, 6)} whatever the noise's law; assuming {self.family} "
            f"noise (from {self.fit_samples} outputs per side): {self.family_statement()}"
        )
        if self.attained is False:
            words += (
                f"; declared sensitivity {self.declared_sensitivity:g} is not attained by this pair "
                f"(shift <= {format_up(self.shift_upper_bound, 6)}, assuming {self.family} noise)"
            )
        return words


def _median_intervals(outputs: NDArray[np.float64], level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
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


def _gaussian_bounds(first: NDArray[np.float64], second: NDArray[np.float64], alpha: float) -> tuple[float, float, float, float, float]:
    """(shift estimate, lower, upper, σ estimate, σ⁺) for Gaussian noise; see the module docstring."""
    size, dimension = first.shape
    means = first.mean(axis=0), second.mean(axis=0)
    sum_of_squares = float(np.sum((first - means[0]) ** 2) + np.sum((second - means[1]) ** 2))
    freedom = 2 * (size - 1) * dimension
    upper_scale = gaussian_scale_bounds(sum_of_squares, freedom, alpha / 2.0)[1]
    estimate = float(np.linalg.norm(means[0] - means[1]))
    radius = upper_scale * math.sqrt(2.0 / size * stats.chi2.isf(alpha / 2.0, dimension))
    return estimate, max(estimate - radius, 0.0), estimate + radius, math.sqrt(sum_of_squares / freedom), upper_scale


def _laplace_bounds(first: NDArray[np.float64], second: NDArray[np.float64], alpha: float) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], float, float]:
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


def _laplace_epsilon_delta(ratios: NDArray[np.float64], epsilon: float, delta: float) -> tuple[float, float]:
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


def _family_scores(family: str, first: NDArray[np.float64], second: NDArray[np.float64]) -> tuple[Score, float]:
    """The declared family's log-likelihood-ratio statistic of D against D′, fitted on (first, second): (score, scale).

    Gaussian: ⟨x − (m + m′)/2, m − m′⟩/(σ̂‖m − m′‖) at the sample means m, m′, which is N(±μ̂/2, 1) under the
    model (μ̂ = ‖m − m′‖/σ̂); Laplace: Σ_j (|x_j − m′_j| − |x_j − m_j|)/b̂ at the sample medians. Either is a
    fixed function of an output once fitted, so events on it are post-processings whatever the noise's law.
    """
    if family == "gaussian":
        centres = first.mean(axis=0), second.mean(axis=0)
        residuals = np.concatenate([first - centres[0], second - centres[1]])
        scale = max(math.sqrt(float(np.mean(residuals**2))), np.finfo(float).tiny)
        shift = centres[0] - centres[1]
        norm = float(np.linalg.norm(shift))
        direction = shift / norm if norm > 0 else np.eye(shift.size)[0]
        weights = direction / scale
        offset = float((centres[0] + centres[1]) / 2.0 @ weights)
        return (lambda outputs: outputs @ weights - offset), scale
    centres = np.median(first, axis=0), np.median(second, axis=0)
    residuals = np.concatenate([np.abs(first - centres[0]), np.abs(second - centres[1])])
    scale = max(float(np.mean(residuals)), np.finfo(float).tiny)
    # |x − m′| − |x − m| is sign(m − m′)·clip(2x − m − m′, ±|m − m′|), written so: as a difference its saturated values
    # vary in the last bits with x, and a threshold among them picks outputs by their float lattice (Mironov 2012),
    # which tells c + Z from c′ + Z for float noise Z: a real attack, but not the one this family means to make.
    middle, half_width, signs = centres[0] + centres[1], np.abs(centres[0] - centres[1]), np.sign(centres[0] - centres[1]) / scale
    return (lambda outputs: np.clip(2.0 * outputs - middle, -half_width, half_width) @ signs), scale


def _model_tails(
    family: str, score: Score, first: NDArray[np.float64], second: NDArray[np.float64], scale: float, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Under the fitted family: candidate thresholds t and P[score > t] on D and on D′ (the model's, not the truth's).

    Gaussian: the closed form N(±μ̂/2, 1) on a grid; Laplace: ``MODEL_DRAWS`` draws of the fitted model per side.
    """
    if family == "gaussian":
        half = float(np.linalg.norm(first.mean(axis=0) - second.mean(axis=0))) / scale / 2.0
        thresholds = np.linspace(-half - 10.0, half + 10.0, 4001)
        return thresholds, stats.norm.sf(thresholds - half), stats.norm.sf(thresholds + half)
    noise = rng.laplace(0.0, scale, size=(MODEL_DRAWS, first.shape[1]))
    heavy = np.sort(score(np.median(first, axis=0) + noise))
    light = np.sort(score(np.median(second, axis=0) + noise))
    thresholds = np.unique(np.concatenate([heavy, light]))[:-1]
    above_heavy, above_light = (1.0 - np.searchsorted(values, thresholds, side="right") / MODEL_DRAWS for values in (heavy, light))
    return thresholds, above_heavy, above_light


def _chosen_thresholds(
    thresholds: NDArray[np.float64], heavy: NDArray[np.float64], light: NDArray[np.float64], num_samples: int, delta: float, level: float
) -> NDArray[np.float64]:
    """The thresholds whose events {score > t} the model predicts to give the largest ε lower bound at
    ``num_samples``/16, ``num_samples`` and 16·``num_samples`` outputs per side (normal approximation to the
    Clopper–Pearson bounds at ``level``): the middle one for the test's size, the others for a model that is off."""
    z = float(stats.norm.isf(level))
    chosen: list[float] = []
    for size in (num_samples / 16.0, float(num_samples), 16.0 * num_samples):
        lower = heavy - z * np.sqrt(heavy * (1.0 - heavy) / size)
        upper = light + z * np.sqrt(light * (1.0 - light) / size) + z * z / size
        with np.errstate(divide="ignore", invalid="ignore"):
            predicted = np.where(lower > delta, np.log(np.maximum(lower - delta, 0.0)) - np.log(upper), -np.inf)
        chosen.append(float(thresholds[int(np.argmax(predicted))]))
    return np.unique(chosen)


def _counted(
    sampler: Callable[[Any, int, np.random.Generator], Any],
    dataset: Any,
    num_samples: int,
    shape: tuple[int, ...],
    score: Score,
    upper_thresholds: NDArray[np.float64],
    lower_thresholds: NDArray[np.float64],
    rng: np.random.Generator,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Counts of {score > t} and {score < t′} on ``num_samples`` fresh outputs, drawn ``COUNT_CHUNK`` values at a time."""
    rows = max(COUNT_CHUNK // int(np.prod(shape[1:], dtype=np.int64) or 1), 1)
    above, below, drawn = np.zeros(upper_thresholds.size, np.int64), np.zeros(lower_thresholds.size, np.int64), 0
    while drawn < num_samples:
        size = min(rows, num_samples - drawn)
        outputs = check.real_array("sampler output", sampler(dataset, size, rng))
        if outputs.shape != (size,) + shape[1:] or not np.all(np.isfinite(outputs)):
            raise ValueError(f"sampler must return size finite real outputs of one shape (got shape {outputs.shape}, expected {(size,) + shape[1:]})")
        values = score(outputs.reshape(size, -1).astype(float, copy=False))
        # A few thresholds: one comparison pass each costs less than sorting the chunk.
        above += [np.count_nonzero(values > threshold) for threshold in upper_thresholds]
        below += [np.count_nonzero(values < threshold) for threshold in lower_thresholds]
        drawn += size
    return above, below


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
    """Refute an (ε, δ) claim on one pair of neighbours with events the declared noise family chooses; see the module docstring.

    Sound whatever the noise's law and whatever ``sensitivity`` says: the verdict counts events fixed on
    separate outputs. The declared ``family`` (M(D) = f(D) + Z, Z i.i.d. per coordinate, Gaussian or Laplace)
    only chooses the events, and props up the ``family_*``, ``shift_*`` and ``scale_*`` bounds reported beside.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs (scalars or equal-length vectors).
        pair: (D, D′), neighbours.
        family: ``"gaussian"`` (L2 shift) or ``"laplace"`` (L1 shift).
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs per side, >= 16: min(max(num_samples/4, 4), ``FIT_SAMPLES``) fit the family and
            choose the events, the rest are counted.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1) of the counted verdict, and of the family's bounds.
        sensitivity: None or the declared sensitivity (> 0), compared with the shift's upper bound only.
    """
    dataset, neighbour = sampler_and_pair(sampler, pair)
    family = check.choice("family", family, FAMILIES)
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    num_samples = check.integer_scalar("num_samples", num_samples, 16)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    if sensitivity is not None:
        sensitivity = float(check.positive("sensitivity", sensitivity))

    fit_samples = min(max(num_samples // 4, 4), FIT_SAMPLES)
    count_samples = num_samples - fit_samples
    samples, shapes = [], []
    for data in (dataset, neighbour):
        outputs = check.real_array("sampler output", sampler(data, fit_samples, rng))
        if outputs.ndim == 0 or outputs.shape[0] != fit_samples or not np.all(np.isfinite(outputs)):
            raise ValueError(f"sampler must return num_samples finite real outputs (got shape {outputs.shape})")
        shapes.append(outputs.shape)
        samples.append(outputs.reshape(fit_samples, -1).astype(float))
    if samples[0].shape != samples[1].shape:
        raise ValueError(f"sampler must return outputs of one shape on both neighbours (got {samples[0].shape} and {samples[1].shape})")
    if family == "gaussian":
        shift, shift_lower, shift_upper, scale, scale_upper = _gaussian_bounds(samples[0], samples[1], alpha)
        ratio = shift_lower / (scale_upper * (1.0 + RATIO_SLACK))
        if ratio > 0.0:
            family_epsilon = float(gaussian_epsilon(delta, 1.0, ratio)) if delta > 0 else math.inf
            family_delta = float(gaussian_delta(epsilon, 1.0, ratio))
        else:
            family_epsilon = family_delta = 0.0
    else:
        shifts, lowers, uppers, scale, scale_upper = _laplace_bounds(samples[0], samples[1], alpha)
        shift, shift_lower, shift_upper = float(np.sum(shifts)), float(np.sum(lowers)), float(np.sum(uppers))
        family_epsilon, family_delta = _laplace_epsilon_delta(lowers / (scale_upper * (1.0 + RATIO_SLACK)), epsilon, delta)

    # The events: half-lines of the family's likelihood-ratio score, D-heavy {score > t} and D′-heavy {score < −t}
    # (the model is symmetric), fitted on the samples above; the verdict counts them on fresh outputs.
    score, fitted_scale = _family_scores(family, samples[0], samples[1])
    thresholds, heavy, light = _model_tails(family, score, samples[0], samples[1], fitted_scale, rng)
    upper_thresholds = _chosen_thresholds(thresholds, heavy, light, count_samples, delta, alpha / (8.0 * THRESHOLDS_PER_DIRECTION))
    lower_thresholds = -upper_thresholds
    first_counts = _counted(sampler, dataset, count_samples, shapes[0], score, upper_thresholds, lower_thresholds, rng)
    second_counts = _counted(sampler, neighbour, count_samples, shapes[1], score, upper_thresholds, lower_thresholds, rng)
    label = f"{family} likelihood-ratio score"
    names = [f"{{{label} > {t:.6g}}}" for t in upper_thresholds] + [f"{{{label} < {t:.6g}}}" for t in lower_thresholds]
    # decide() tests every event in both orders, each bound at alpha/(2m), m the number of (event, order) pairs.
    counted = decide(np.concatenate(first_counts), np.concatenate(second_counts), names, count_samples, epsilon, delta, alpha)
    return PairNoiseResult(
        rejected=counted.rejected,
        family=family,
        epsilon_lower_bound=counted.epsilon_lower_bound,
        delta_lower_bound=counted.lower_bound_delta,
        event=counted.witness,
        direction=counted.direction,
        counts=counted.counts,
        num_hypotheses=counted.num_hypotheses,
        family_epsilon_lower_bound=family_epsilon,
        family_delta_lower_bound=family_delta,
        shift_estimate=shift,
        shift_lower_bound=shift_lower,
        shift_upper_bound=shift_upper,
        scale_estimate=scale,
        scale_upper_bound=scale_upper,
        declared_sensitivity=sensitivity,
        attained=None if sensitivity is None else bool(sensitivity <= shift_upper),
        num_samples=count_samples,
        fit_samples=fit_samples,
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
    )
