"""L2 sensitivity bounds of regularised empirical risk minimisers, and the conventions they rest on.

All bounds are for J(θ) = (1/n) Σ ℓ(θ; x_i, y_i) + (λ/2)‖θ‖² with
‖x_i‖ <= feature_bound, a public constant (clip with
:func:`dpmech.clipping.clip_features`), under the replace-one neighbouring
relation: two datasets of the same size n that differ in one record.
"""

from __future__ import annotations

import functools
import math
import sys

import numpy as np

from . import validation as check


def sklearn_c(regularization: float, n: int) -> float:
    """scikit-learn's ``C`` for the mean-form objective with L2 strength λ on n records.

    scikit-learn minimises C·Σ ℓ_i + ½‖θ‖², which is n·C times
    (1/n)Σ ℓ_i + (1/(2nC))‖θ‖², so the objective J above is C = 1/(nλ).
    FedAUX's public code uses C = 1/λ, i.e. the regulariser λ/n, whose
    sensitivity bound is 2/λ rather than 2/(nλ): its noise is n times too small.
    """
    regularization = check.positive("regularization", regularization)
    n = check.integer_at_least("n", n, 1)
    return 1.0 / (n * regularization)


SEED_BOUND = "seed"
TIGHT_BOUND = "tight"
RADIUS_BOUND = "radius"
MULTINOMIAL_BOUNDS = (TIGHT_BOUND, SEED_BOUND, RADIUS_BOUND)
_RADIUS_REFINEMENTS = 60


def _input_norm_bound(feature_bound: float, regularized_intercept: bool) -> float:
    """Bound on ‖x̃‖ for the input the weights multiply: ‖x‖ <= feature_bound, plus a constant 1 if the intercept is a weight.

    A regularised intercept is the weight of a constant input coordinate 1,
    so x̃ = (x, 1) and ‖x̃‖ <= √(feature_bound² + 1). An intercept that is
    fitted but not regularised (scikit-learn's ``fit_intercept=True``) is not
    covered by any bound here: the objective is not strongly convex in it.
    Append a constant column and fit without intercept instead.
    """
    feature_bound = _scalar_positive("feature_bound", feature_bound)
    regularized_intercept = check.boolean("regularized_intercept", regularized_intercept)
    return math.hypot(feature_bound, 1.0) if regularized_intercept else feature_bound


def _scalar_positive(name: str, value: float) -> float:
    value = check.positive(name, value)
    if np.ndim(value):
        raise ValueError(f"{name} must be a single finite number > 0 (got an array of shape {np.shape(value)})")
    return float(value)


def regularized_erm_sensitivity(lipschitz: float, regularization: float, n: int) -> float:
    """L2 sensitivity 2L/(nλ) of the exact minimiser of a λ-strongly convex regularised ERM objective.

    Chaudhuri, Monteleoni & Sarwate (JMLR 2011), Corollary 8 and its proof:
    for J(θ) = (1/n)Σ ℓ(θ; z_i) + (λ/2)‖θ‖² with every ℓ(·; z) convex,
    differentiable and L-Lipschitz in θ, the minimisers on two datasets that
    differ in one record (replace-one) satisfy ‖θ* − θ'*‖ <= 2L/(nλ).
    The bound is for the exact argmin: an optimiser stopped early is not
    covered (use :func:`psgd_bolt_on_sensitivity` for projected SGD).
    Every released parameter must be regularised.

    Args:
        lipschitz: L > 0, the Lipschitz constant of each ℓ(·; z) in θ.
        regularization: λ > 0.
        n: number of records, n >= 1.
    """
    lipschitz = _scalar_positive("lipschitz", lipschitz)
    regularization = _scalar_positive("regularization", regularization)
    n = check.integer_scalar("n", n, 1)
    return 2.0 * lipschitz / (n * regularization)


def approximate_minimizer_sensitivity(exact_sensitivity: float, gradient_tolerance: float, strong_convexity: float) -> float:
    """Δ + 2τ/λ: the L2 sensitivity of approximate minimisers certified to ‖∇J(θ̂)‖₂ <= τ.

    For a λ-strongly convex differentiable J with minimiser θ*,
    λ‖θ̂ − θ*‖² <= ⟨∇J(θ̂) − ∇J(θ*), θ̂ − θ*⟩ <= ‖∇J(θ̂)‖‖θ̂ − θ*‖ (∇J(θ*) = 0,
    Cauchy–Schwarz), so ‖θ̂ − θ*‖ <= ‖∇J(θ̂)‖/λ <= τ/λ. If the exact minimisers
    on neighbouring datasets are at most Δ apart (for example
    :func:`logistic_regression_sensitivity`, replace-one), the released
    approximate ones are at most Δ + 2τ/λ apart, by the triangle inequality.
    τ must be a public constant checked for every release (a solver's
    stopping rule on another quantity, such as L-BFGS's relative decrease,
    certifies nothing). The sum is rounded up.

    Args:
        exact_sensitivity: Δ > 0 of the exact minimiser.
        gradient_tolerance: τ >= 0, the certified bound on ‖∇J(θ̂)‖₂.
        strong_convexity: λ > 0, J's strong-convexity modulus.
    """
    exact_sensitivity = _scalar_positive("exact_sensitivity", exact_sensitivity)
    gradient_tolerance = check.non_negative("gradient_tolerance", gradient_tolerance)
    if np.ndim(gradient_tolerance):
        raise ValueError("gradient_tolerance must be a single finite number >= 0 (got an array)")
    strong_convexity = _scalar_positive("strong_convexity", strong_convexity)
    if gradient_tolerance == 0:
        return exact_sensitivity
    optimisation_error = math.nextafter(2.0 * float(gradient_tolerance) / strong_convexity, math.inf)
    return math.nextafter(exact_sensitivity + optimisation_error, math.inf)


def logistic_regression_sensitivity(
    regularization: float, n: int, feature_bound: float = 1.0, *, regularized_intercept: bool = False
) -> float:
    """L2 sensitivity of regularised binary logistic regression: 2·‖x̃‖max/(nλ).

    The logistic loss log(1 + e^{−y θ·x̃}) has gradient −y σ(−y θ·x̃) x̃, of
    norm at most ‖x̃‖, so :func:`regularized_erm_sensitivity` applies with
    L = ‖x̃‖max (Chaudhuri et al. 2011, Cor. 8: 2/(nλ) for ‖x‖ <= 1; the
    scoring model of FedAUX, Sattler et al. 2021). Replace-one.

    With scikit-learn, fit ``LogisticRegression(C=sklearn_c(λ, n),
    fit_intercept=False)`` on features clipped to ``feature_bound`` (with a
    constant column appended when ``regularized_intercept``). FedAUX's
    public code uses C = 1/λ, which is the objective with λ/n, whose
    sensitivity is 2/λ, n times larger than the noise it adds for.

    Args:
        regularization: λ > 0 of the mean-form objective.
        n: number of records, n >= 1.
        feature_bound: public bound on ‖x‖, > 0.
        regularized_intercept: the intercept is a regularised weight of a
            constant input 1, so ‖x̃‖ <= √(feature_bound² + 1).
    """
    return regularized_erm_sensitivity(_input_norm_bound(feature_bound, regularized_intercept), regularization, n)


def fixed_label_logistic_regression_sensitivity(regularization: float, n: int, feature_bound: float = 1.0,
                                                num_public_negatives: int | None = None) -> float:
    r"""m·max(2b, L)/(nλ): binary logistic regression when the replaced and the new record carry the same label.

    Theorem. J(θ) = (1/n) Σ log(1 + exp(−y_i θ·x̃_i)) + (λ/2)‖θ‖², y_i = ±1,
    x̃ = (x, 1) with the intercept a regularised weight, ‖x‖ <= b,
    L = √(b² + 1), m = σ(L²/λ) (σ the logistic function). If neighbouring
    datasets differ in one record whose label is the same in both
    (FedAUXfdp's scoring head: every private record is labelled 1, the
    negatives are public and never replaced), their exact minimisers are at
    most m·max(2b, L)/(nλ) apart. Against the generic 2L/(nλ)
    (:func:`logistic_regression_sensitivity`) that is a factor
    m·max(2b, L)/(2L): 1/√2·m at b = 1, m = 0.661 at λ = 3 (FedAUXfdp's
    default), m → 1 as λ → 0.

    With ``num_public_negatives`` = n₀ (the replaced record labelled y = 1
    in both datasets, exactly n₀ of the n records labelled y = −1, n₀ a
    public constant, so the same in both datasets), m becomes the refined
    residual bound m̄ <= m' = σ((b² + n₀/n)/λ) < m below: 0.573 against
    m' = 0.626 and m = 0.661 at b = 1, λ = 3, n = 133, n₀ = 72 (FedAUXfdp
    on digits).

    Proof. Chaudhuri, Monteleoni & Sarwate (JMLR 2011), proof of Cor. 8
    (their Lemma 7 applied to G = J' − J): J is λ-strongly convex and
    ∇J(θ') = (1/n)(∇ℓ(θ'; z) − ∇ℓ(θ'; z')) at the neighbour's minimiser θ',
    so λ‖θ − θ'‖² <= ⟨∇J(θ') − ∇J(θ), θ' − θ⟩ <= ‖∇J(θ')‖‖θ' − θ‖ and
    ‖θ − θ'‖ <= ‖∇ℓ(θ'; z) − ∇ℓ(θ'; z')‖/(nλ): the difference of the two
    losses' gradients at ONE point, the exact minimiser θ' of the neighbour's
    objective (z is not in that dataset: a bound on θ' that holds for every
    x with ‖x‖ <= b covers both). At any minimiser λθ' = −(1/n)Σ∇ℓ_i
    and ‖∇ℓ_i‖ < L, so ‖θ'‖ < L/λ and |θ'·x̃| < L²/λ. For label y = 1
    (y = −1 is the mirror image) ∇ℓ(θ'; x, 1) = −a x̃ with
    a = σ(−θ'·x̃) ∈ (0, m): the two residuals share a sign. The difference
    a'x̃' − a x̃ = (a'x' − a x, a' − a) has squared norm
    ‖a'x' − a x‖² + (a' − a)² <= (a + a')²b² + (a' − a)², convex in
    (a, a'), so its maximum over [0, m]² is at a vertex: 4m²b² at
    a = a' = m, m²(b² + 1) at a = m, a' = 0. Cor. 8's 2L lets the two
    gradients be antiparallel at full norm, which a fixed label and the
    intercept coordinate forbid. The bound is approached as λ → 0 with the
    intercept held far negative by public label-0 records at x = 0 and the
    replaced records at ±x, ‖x‖ = b (tests/trainers/test_empirical_sensitivity.py).

    Proof of m̄. Write θ' = (w, c) (c the intercept), n₁ = n − n₀, and
    a_i = σ(−y_i θ'·x̃_i) ∈ (0, 1) the residuals of the neighbour's records.
    Suppose every label-1 residual is at most A₁ and every label-(−1) one at
    most A₀ (A₁ = A₀ = 1 to start). Stationarity of the neighbour's
    objective, λθ' = (1/n) Σ y_i a_i x̃_i, has the blocks
    λw = (1/n) Σ y_i a_i x_i, so ‖w‖ <= W = b(n₁A₁ + n₀A₀)/(nλ), and
    λc = (1/n) Σ y_i a_i, a sum of n₁ positive terms at most A₁ and n₀
    negative ones at least −A₀, so −C₀ <= c <= C₁ with C₀ = n₀A₀/(nλ),
    C₁ = n₁A₁/(nλ). For ANY record with ‖x‖ <= b (z, which is not in the
    neighbour's dataset, and z' alike) −θ'·x̃ = −w·x − c <= bW + C₀ and
    θ'·x̃ <= bW + C₁; σ is increasing, so min(A₁, σ(bW + C₀)) and
    min(A₀, σ(bW + C₁)) are again bounds on the label-1 and label-(−1)
    residuals. The first step gives A₁ = m' = σ((b² + n₀/n)/λ); the step is
    increasing in (A₁, A₀), so the iterates decrease, each a bound. They are
    iterated until they stop changing (at most 1,000 steps; any stop is a
    bound), every quantity rounded up (a relative 2⁻⁴⁶ per step, above the
    few ulps of its operations and libm's exp). The vertex argument above on
    [0, m̄]², m̄ = min(A₁, m), gives m̄·max(2b, L)/(nλ). n₀ <= n − 1 (the replaced
    record is labelled 1), so m' < m; n₀ = 0 gives m' = σ(b²/λ).

    The result is rounded up (m by libm's exp, a few roundings, covered by a
    relative 2⁻⁴⁶). Replace-one; an approximate minimiser with certified
    ‖∇J‖ <= τ is within τ/λ of the exact one (strong convexity), so the
    residual bound is needed at exact minimisers only and the release adds
    2τ/λ (:func:`approximate_minimizer_sensitivity`).

    Args:
        regularization: λ > 0 of the mean-form objective.
        n: number of records, n >= 1 (all of them, public ones included).
        feature_bound: b > 0, the public bound on ‖x‖ (of every record, the public ones included).
        num_public_negatives: None (m = σ(L²/λ), whatever the labels), or n₀ in [0, n − 1], the public number
            of records labelled y = −1 (FedAUXfdp's label-0 public negatives), the replaced record being labelled
            y = +1 in both datasets (m̄, the refined bound).
    """
    regularization = _scalar_positive("regularization", regularization)
    n = check.integer_scalar("n", n, 1)
    feature_bound = _scalar_positive("feature_bound", feature_bound)
    lipschitz = math.hypot(feature_bound, 1.0)
    largest_residual = 1.0 / (1.0 + math.exp(-(lipschitz**2) / regularization))
    if num_public_negatives is not None:
        num_public_negatives = check.integer_scalar("num_public_negatives", num_public_negatives, 0)
        if num_public_negatives > n - 1:
            raise ValueError(f"num_public_negatives must be an integer in [0, n - 1] = [0, {n - 1}] "
                             f"(got {num_public_negatives!r})")
        # Both are bounds; near saturation (m → 1) the iteration's per-step rounding up can leave A₁ an ulp above m.
        largest_residual = min(largest_residual,
                               _label_one_residual_bound(regularization, n, feature_bound, num_public_negatives))
    exact = largest_residual * max(2.0 * feature_bound, lipschitz) / (n * regularization)
    # m by libm's exp and three roundings, then six more (< 1 ulp each): 2⁻⁴⁶ relative covers them (A₁ is up already).
    return math.nextafter(exact * (1.0 + 2.0**-46), math.inf)


def _label_one_residual_bound(regularization: float, n: int, feature_bound: float, num_negatives: int) -> float:
    """m̄ of :func:`fixed_label_logistic_regression_sensitivity`: the iterated (A₁, A₀) of its proof, rounded up."""
    up = 1.0 + 2.0**-46  # per quantity: each is a few correctly rounded operations (and libm's exp) from exact
    num_positives = n - num_negatives
    scale = n * regularization
    positive_residual = negative_residual = 1.0
    for _ in range(1000):
        weight_norm = feature_bound * (num_positives * positive_residual + num_negatives * negative_residual) / scale * up
        reach = feature_bound * weight_norm * up
        intercept_below = num_negatives * negative_residual / scale * up
        intercept_above = num_positives * positive_residual / scale * up
        # σ(t) = 1/(1 + e^(−t)) with t rounded up is above σ of the exact t.
        positive = min(positive_residual, up / (1.0 + math.exp(-(reach + intercept_below) * up)))
        negative = min(negative_residual, up / (1.0 + math.exp(-(reach + intercept_above) * up)))
        if (positive, negative) == (positive_residual, negative_residual):
            break
        positive_residual, negative_residual = positive, negative
    return positive_residual


_LOGIT_SHIFT_INTERVALS = 1024
_FEATURE_DISTANCE_INTERVALS = 4096


def _exp_remainder_upper(x: np.ndarray) -> np.ndarray:
    """An upper bound on g(x) = (e^x − 1 − x)/x² = ∫₀¹(1 − t)e^{tx}dt for x >= 0.

    Below 1/2: g(x) <= 1/2 + x/6 + x²e^x/24 (g = Σ_n x^n/(n + 2)!, and 1/(n + 2)! <= 1/(24(n − 2)!) for n >= 2),
    which avoids the cancellation of e^x − 1 − x; above, the formula (relative error a few 2⁻⁵³); +∞ beyond 700.
    """
    small = x < 0.5
    safe = np.clip(x, 0.5, 700.0)
    remainder: np.ndarray = np.where(small, 0.5 + x / 6.0 + x * x * np.exp(np.minimum(x, 0.5)) / 24.0,
                                     np.where(x > 700.0, np.inf, (np.expm1(safe) - safe) / safe**2))
    return remainder


@functools.lru_cache(maxsize=1024)
def _softmax_ranges(logit_radius: float, num_classes: int) -> tuple[float, float, float]:
    """(p̄, p̲, U) of :func:`softmax_gradient_difference_bound` (its steps (ii), (iii), (vi)) for ‖z‖ <= ρ.

    Cached: the radius refinement of :func:`multinomial_logistic_regression_sensitivity` and calibrations call it
    with the same arguments many times.
    """
    # Exponents capped at 700: beyond it the probabilities are 0 or 1 to double precision either way.
    gap = min(logit_radius * math.sqrt(num_classes / (num_classes - 1)), 700.0)
    largest = 1.0 / (1.0 + (num_classes - 1) * math.exp(-gap))
    smallest = 1.0 / (1.0 + (num_classes - 1) * math.exp(min(math.sqrt(2.0) * logit_radius, 700.0)))
    if logit_radius > 700.0:
        return largest, smallest, (1.0 - smallest) * (1.0 - smallest + largest)
    # Step (vi): intervals [s_lo, s_hi] of s = −z̃_y covering |s| <= ρ√(m/(m + 1)), padded outward for rounding.
    others = num_classes - 1
    stretch = (others + 1) / others
    end = logit_radius / math.sqrt(stretch) * (1.0 + 1e-12)
    edges = np.linspace(-end, end, _LOGIT_SHIFT_INTERVALS + 1)
    low, high = edges[:-1], edges[1:]
    nearest = np.where((low <= 0.0) & (high >= 0.0), 0.0, np.minimum(np.abs(low), np.abs(high)))
    spread = np.sqrt(np.maximum(logit_radius**2 - stretch * nearest**2, 0.0)) * (1.0 + 1e-12)
    peak = spread * math.sqrt((others - 1) / others)
    exponential_sum = others + spread**2 * _exp_remainder_upper(peak)
    squared_sum = others + 4.0 * spread**2 * _exp_remainder_upper(2.0 * peak)
    # Raised to −700 (e^{−s(m+1)/m} capped at e^700 overstates 1 − p_y's bound, and p_y's needs no floor); an
    # e^{s(m+1)/m} that overflows is +∞, which errs the safe way too: p_y >= 0 and 1 − p_y <= 1.
    tilt = np.maximum(stretch * high, -700.0)
    with np.errstate(over="ignore"):
        smallest = max(smallest, float((1.0 / (1.0 + np.exp(tilt) * exponential_sum)).min()) * (1.0 - 1e-12))
        rest = np.minimum(1.0 / (1.0 + np.exp(-tilt) / exponential_sum) * (1.0 + 1e-12), 1.0)
    concentration = np.minimum(1.0, squared_sum / others**2)
    refined = float(np.minimum(rest**2 * (1.0 + concentration), rest**2 + largest * rest).max())
    residual_squared = min((1.0 - smallest) * (1.0 - smallest + largest), refined * (1.0 + 1e-12))
    return largest, smallest, residual_squared


def _logistic(x: np.ndarray) -> np.ndarray:
    # σ(x) = (1 + tanh(x/2))/2 overflows for no x; its absolute error is a few 2⁻⁵³.
    logistic: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))
    return logistic


def _two_class_relaxation_values(points: np.ndarray, logit_radius: float, feature_bound: float,
                                 offset: float) -> np.ndarray:
    """max(Ψ≠, Ψ=) of :func:`_two_class_squared_difference_bound` at points (δ, d, m), 0 where infeasible."""
    length, difference, total = points[:, 0], points[:, 1], points[:, 2]
    first, second = _logistic(0.5 * (total + difference)), _logistic(0.5 * (total - difference))
    opposed = _logistic(-0.5 * (total - difference))
    squared_norm = feature_bound**2 + offset
    different = squared_norm * (first + opposed) ** 2 - first * opposed * length**2
    high, low = np.maximum(first, second), np.minimum(first, second)
    same = ((high - low) * (high * feature_bound**2 - low * np.maximum(feature_bound - length, 0.0) ** 2)
            + high * low * length**2 + offset * (high - low) ** 2)
    feasible = ((np.abs(difference) <= logit_radius * length)
                & (np.abs(total) <= logit_radius * np.sqrt(np.maximum(4.0 * squared_norm - length**2, 0.0))))
    values: np.ndarray = np.where(feasible, np.maximum(different, same), 0.0)
    return values


def _two_class_relaxation_upper(lower: np.ndarray, upper: np.ndarray, feature_bound: float,
                                offset: float) -> np.ndarray:
    """An upper bound of max(Ψ≠, Ψ=) over each box [lower, upper] of (δ, d, m) (interval arithmetic)."""
    length_low, length_high = lower[:, 0], upper[:, 0]
    # s = (m + d)/2 and s' = (m − d)/2; σ is increasing.
    first_low, first_high = _logistic(0.5 * (lower[:, 2] + lower[:, 1])), _logistic(0.5 * (upper[:, 2] + upper[:, 1]))
    second_low, second_high = _logistic(0.5 * (lower[:, 2] - upper[:, 1])), _logistic(0.5 * (upper[:, 2] - lower[:, 1]))
    opposed_low = _logistic(-0.5 * (upper[:, 2] - lower[:, 1]))
    opposed_high = _logistic(-0.5 * (lower[:, 2] - upper[:, 1]))
    different = ((feature_bound**2 + offset) * (first_high + opposed_high) ** 2
                 - first_low * opposed_low * length_low**2)
    gap = np.maximum(np.abs(first_low - second_high), np.abs(first_high - second_low))
    high = np.maximum(first_high, second_high)
    same = (gap * (high * feature_bound**2
                   - np.minimum(first_low, second_low) * np.maximum(feature_bound - length_high, 0.0) ** 2)
            + high * np.minimum(first_high, second_high) * length_high**2 + offset * gap**2)
    bounds: np.ndarray = np.maximum(different, same)
    return bounds


@functools.lru_cache(maxsize=256)
def _two_class_squared_difference_bound(weight_radius: float, feature_bound: float, offset: float) -> float:
    """An upper bound on sup ‖D‖²/2 for C = 2 (steps (a)–(e) of :func:`softmax_gradient_difference_bound`).

    Branch and bound over boxes of (δ, d, m): a box is dropped only when it holds no feasible point or its
    upper bound is at most a value the relaxation attains; the result is the largest upper bound left, so it
    is a bound however early the refinement stops (at 1e-3 relative, or 400,000 boxes). Cached: calibrations
    call it with the same arguments many times.
    """
    logit_radius = math.sqrt(2.0) * weight_radius
    squared_norm = feature_bound**2 + offset
    pad = 1.0 + 1e-9  # outer edges a little beyond the domain, so that its rounded ends are inside
    counts = (8, 16, 16)
    ends = (2.0 * feature_bound * pad, 2.0 * logit_radius * feature_bound * pad,
            2.0 * logit_radius * math.sqrt(squared_norm) * pad)
    edges = [np.linspace(0.0 if axis == 0 else -ends[axis], ends[axis], count + 1)
             for axis, count in enumerate(counts)]
    index = np.indices(counts).reshape(3, -1)
    lower = np.stack([edges[axis][index[axis]] for axis in range(3)], axis=1)
    upper = np.stack([edges[axis][index[axis] + 1] for axis in range(3)], axis=1)

    def possibly_feasible(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        # |d| <= rδ and |m| <= r√(4c'² − δ²) somewhere in the box (with a relative margin for rounding).
        reach = logit_radius * upper[:, 0] * pad
        smallest_total = np.maximum(np.maximum(lower[:, 2], -upper[:, 2]), 0.0)
        widest_total = logit_radius * np.sqrt(np.maximum(4.0 * squared_norm - lower[:, 0] ** 2, 0.0)) * pad
        possible: np.ndarray = (lower[:, 1] <= reach) & (upper[:, 1] >= -reach) & (smallest_total <= widest_total)
        return possible

    keep = possibly_feasible(lower, upper)
    lower, upper = lower[keep], upper[keep]
    attained = squared_norm  # Ψ≠ at δ = d = m = 0
    settled = 0.0
    corners = np.array([[(bits >> axis) & 1 for axis in range(3)] for bits in range(8)], dtype=bool)
    for _ in range(60):
        bounds = _two_class_relaxation_upper(lower, upper, feature_bound, offset)
        attained = max(attained, float(_two_class_relaxation_values(0.5 * (lower + upper), logit_radius,
                                                                     feature_bound, offset).max()))
        alive = bounds > attained
        lower, upper, bounds = lower[alive], upper[alive], bounds[alive]
        refine = bounds > attained * (1.0 + 1e-3)
        settled = max(settled, float(bounds[~refine].max(initial=0.0)))
        if not refine.any() or 8 * int(refine.sum()) > 400_000:
            break
        lower, upper = lower[refine], upper[refine]
        middle = 0.5 * (lower + upper)
        # Eight children per box, sharing the float midpoints, so they cover it.
        lower = np.concatenate([np.where(corner, middle, lower) for corner in corners])
        upper = np.concatenate([np.where(corner, upper, middle) for corner in corners])
        keep = possibly_feasible(lower, upper)
        lower, upper = lower[keep], upper[keep]
    remaining = float(_two_class_relaxation_upper(lower, upper, feature_bound, offset).max(initial=0.0))
    return max(settled, remaining, attained)


def _distance_coupled_squared_difference_bound(weight_radius: float, feature_bound: float, offset: float,
                                               num_classes: int) -> float:
    """max over δ = ‖x − x'‖ in [0, 2c] of step (vii)'s bound on ‖D‖² of :func:`softmax_gradient_difference_bound`.

    Each case's two bounds are monotone pieces in δ, so on an interval [δ_lo, δ_hi] each is bounded by its
    increasing pieces at δ_hi and its decreasing ones at δ_lo; the intervals share their float ends and cover
    [0, 2c] (2c is exact in floating point).
    """
    squared_norm = feature_bound**2 + offset
    spread = feature_bound**2  # c'² − β
    largest, smallest, residual_squared = _softmax_ranges(weight_radius * math.sqrt(squared_norm), num_classes)
    opposition = 2.0 * largest - smallest
    alignment = largest - 2.0 * smallest  # H >= ⟨u, u'⟩ for y ≠ y'
    lipschitz = min(largest, 0.5)
    smallest_residual = (1.0 - largest) ** 2 * num_classes / (num_classes - 1)
    edges = np.linspace(0.0, 2.0 * feature_bound, _FEATURE_DISTANCE_INTERVALS + 1)
    low, high = edges[:-1], edges[1:]
    # −t <= min(δ²/2 − β, c² − β) and t <= c'² − δ²/2 (t = ⟨x̃, x̃'⟩ = (a + a' − δ²)/2, a, a' in [β, c'²]).
    negative_product = np.minimum(np.maximum(0.5 * high**2 - offset, 0.0), max(spread - offset, 0.0))
    positive_product = np.maximum(squared_norm - 0.5 * low**2, 0.0)
    moved = lipschitz * weight_radius * high  # >= ‖p − p'‖
    general_different = 2.0 * squared_norm * residual_squared + np.maximum(
        2.0 * positive_product * opposition, 2.0 * negative_product * residual_squared)
    # y ≠ y': with Δ = ‖u − u'‖² <= Δ̄ = (√2 + κRδ)² and ⟨u, u'⟩ <= m(Δ) = min(H, U − Δ/2), the bound
    # c'²Δ + δ²m + c²(m − floor)⁺ (δ² at δ_hi where m >= 0, at δ_lo where m < 0) is piecewise linear in Δ with
    # kinks where the min switches, where m = floor and where m = 0: its largest value on [0, Δ̄] is at one of
    # them (clipped into [0, Δ̄]) or at an end.
    ceiling = (math.sqrt(2.0) + moved) ** 2
    high_squared, low_squared = high**2, low**2
    inner = np.minimum(alignment, residual_squared - 0.5 * ceiling)
    coupled_different = (squared_norm * ceiling + np.where(inner >= 0.0, high_squared, low_squared) * inner
                         + spread * np.maximum(inner - smallest_residual, 0.0))
    for kink in {max(kink, 0.0) for kink in (0.0, 2.0 * (residual_squared - alignment),
                                             2.0 * (residual_squared - smallest_residual), 2.0 * residual_squared)}:
        # Only the intervals whose Δ̄ reaches the kink (a tail: Δ̄ grows with δ_hi) have it in range.
        reached = int(np.searchsorted(ceiling, kink))
        kink_inner = min(alignment, residual_squared - 0.5 * kink)
        value = (squared_norm * kink + spread * max(kink_inner - smallest_residual, 0.0)
                 + (high_squared[reached:] if kink_inner >= 0.0 else low_squared[reached:]) * kink_inner)
        np.maximum(coupled_different[reached:], value, out=coupled_different[reached:])
    general_same = 2.0 * squared_norm * residual_squared + 2.0 * negative_product * residual_squared
    # y = y': ⟨u, u'⟩ <= U − Δ/2 with √Δ = ‖p − p'‖ <= κRδ, so the bound is δ_hi²U + kΔ + c²√(UΔ) with
    # k = c'² − δ_lo²/2: in r = √Δ increasing where k >= 0, else concave with its peak at c²√U/(−2k).
    slope = squared_norm - 0.5 * low**2
    with np.errstate(divide="ignore"):
        peak = np.where(slope < 0.0, spread * math.sqrt(residual_squared) / (-2.0 * slope), math.inf)
    root = np.minimum(peak, moved)
    coupled_same = high_squared * residual_squared + slope * root**2 + spread * math.sqrt(residual_squared) * root
    bounds = np.maximum(np.minimum(general_different, coupled_different), np.minimum(general_same, coupled_same))
    return float(bounds.max())


# Feature bounds and logit radii whose squares, and the products of squares in (vii), stay normal doubles.
_SQUARES_SAFE = (1e-100, 1e100)


def softmax_gradient_difference_bound(weight_radius: float, feature_bound: float, num_classes: int, *,
                                      regularized_intercept: bool = True) -> float:
    r"""An upper bound on ‖∇ℓ(W; x, y) − ∇ℓ(W; x', y')‖_F over ‖W‖_F <= R, ‖x‖, ‖x'‖ <= c and all labels.

    ℓ is the softmax cross-entropy of C classes, ∇ℓ(W; x, y) = u x̃ᵀ with u = p − e_y, p = softmax(W x̃).
    Without a bound on W this is 2√2·c' (c' = ‖x̃‖max, the √2 of
    :func:`multinomial_logistic_regression_sensitivity`); a weight radius R keeps the probabilities
    away from 0 and 1, and the bound falls towards √2·c' as R → 0 (for c <= 1). The result is never above 2√2·c' (it is the minimum of the two).

    Theorem. With ρ = R·c', g = ρ√(C/(C − 1)), p̄ = 1/(1 + (C − 1)e^{−g}), p̲ and U from (ii), (iii) and (vi)
    (at least 1/(1 + (C − 1)e^{√2·ρ}) and at most (1 − p̲)(1 − p̲ + p̄)), N = 2p̄ − p̲, H = p̄ − 2p̲,
    κ = min(p̄, 1/2), the Gram ranges a, a' in [β, c'²] and t = ⟨x̃, x̃'⟩ in [β − c², β + c²] (β = 1 with the
    intercept as a regularised input, else 0), the difference D obeys ‖D‖² <= max over δ in [0, 2c] of
    max(min(G≠(δ), L≠(δ)), min(G=(δ), L=(δ))), where, with t⁺(δ) = (c'² − δ²/2)⁺ and t⁻(δ) = min(δ²/2 − β, c² − β)⁺,

    .. math::
        G_{\ne} = 2c'^2 U + 2\max(t^+ N,\; t^- U),\quad
        L_{\ne} = \max_{0 \le \Delta \le (\sqrt{2} + \kappa R\delta)^2} c'^2\Delta + \delta^2 h(\Delta)
                  + c^2\big(h(\Delta) - (1 - \bar p)^2 C/(C - 1)\big)^+,\quad h(\Delta) = \min(H,\; U - \Delta/2),

        G_{=} = 2c'^2 U + 2t^- U,\quad
        L_{=} = \max_{0 \le r \le \kappa R\delta} c'^2 r^2 + \delta^2 (U - r^2/2) + c^2\sqrt{U}\, r.

    As t⁺ <= β + c² and t⁻ <= (c² − β)⁺, no G exceeds the closed form 2c'²U + 2max((β + c²)N, (c² − β)⁺U).

    Proof. (i) ‖W x̃‖ <= ‖W‖_op‖x̃‖ <= R c' = ρ. (ii) p_k = 1/(1 + Σ_{j≠k} e^{z_j − z_k}); by Jensen the sum
    is at least (C − 1)exp(mean_{j≠k} z_j − z_k), and z_k − mean_{j≠k} z_j = ⟨z, e_k − Σ_{j≠k} e_j/(C − 1)⟩
    <= ρ√(C/(C − 1)) (Cauchy–Schwarz), so p_k <= p̄; and z_j − z_k <= √2‖z‖, so p_k >= 1/(1 + (C − 1)e^{√2·ρ}).
    (iii) ‖u‖² = (1 − p_y)² + Σ_{j≠y} p_j² <= (1 − p_y)² + p̄(1 − p_y), which increases in 1 − p_y.
    (iv) ⟨u, u'⟩ = ⟨p, p'⟩ − p_{y'} − p'_y + [y = y']: for y ≠ y', −⟨u, u'⟩ <= 2p̄ − ⟨p, p'⟩ <= N as
    ⟨p, p'⟩ >= p̲ Σ_j p'_j = p̲, and ⟨u, u'⟩ <= max_k p'_k − 2p̲ <= H; for y = y',
    ⟨u, u'⟩ = (1 − p_y)(1 − p'_y) + Σ_{j≠y} p_j p'_j >= 0; and ⟨u, u'⟩ <= ‖u‖‖u'‖ <= U (Cauchy–Schwarz).
    (v) ‖D‖² = a‖u‖² + a'‖u'‖² − 2t⟨u, u'⟩ <= 2c'²U − 2t⟨u, u'⟩, where t = (a + a' − δ²)/2 for
    δ = ‖x̃ − x̃'‖ = ‖x − x'‖ <= 2c, so t <= t⁺ and −t <= t⁻: −2t⟨u, u'⟩ <= 2max(t⁺N, t⁻U) for y ≠ y' and
    <= 2t⁻U for y = y' (⟨u, u'⟩ >= 0): ‖D‖² <= G≠, G=.
    (vi) Softmax ignores a common shift of the logits, so take z̃ = z − mean(z)·1 (‖z̃‖ <= ‖z‖ <= ρ). With
    m = C − 1, s = −z̃_y and ξ_j = z̃_j − s/m (j ≠ y): Σ_j ξ_j = 0, ‖ξ‖² = ‖z̃‖² − s²(m + 1)/m <= τ(s)² =
    ρ² − s²(m + 1)/m (so |s| <= ρ√(m/(m + 1))), p_y = 1/(1 + e^{s(m+1)/m}Σ_j e^{ξ_j}),
    1 − p_y = 1/(1 + e^{−s(m+1)/m}/Σ_j e^{ξ_j}) and Σ_{j≠y} p_j² = (1 − p_y)²Σ_j e^{2ξ_j}/(Σ_j e^{ξ_j})².
    By Taylor, e^x = 1 + x + x²g(x) with g(x) = ∫₀¹(1 − t)e^{tx}dt increasing, and max_j ξ_j <=
    ‖ξ‖√((m − 1)/m) (Σ ξ_j = 0), so Σ_j e^{kξ_j} <= E_k(τ) = m + k²τ²g(kτ√((m − 1)/m)), and Σ_j e^{ξ_j} >= m
    (Jensen). On each of 1,024 intervals [s_lo, s_hi] covering the range of s, with τ at the point nearest 0:
    p_y >= 1/(1 + e^{s_hi(m+1)/m}E_1), 1 − p_y <= A = 1/(1 + e^{−s_hi(m+1)/m}/E_1) and
    ‖u‖² <= min(A²(1 + min(1, E_2/m²)), A² + p̄A) (with (iii)). p̲ is the larger of (ii)'s and the least of the
    first over the intervals; U the smaller of (1 − p̲)(1 − p̲ + p̄) and the largest of the last.
    (vii) Write ‖D‖² = aA_u + a'B_u + δ²⟨u, u'⟩ with A_u = ‖u‖² − ⟨u, u'⟩ and B_u = ‖u'‖² − ⟨u, u'⟩ (as
    2t = a + a' − δ²); A_u + B_u = ‖u − u'‖² >= 0, so at most one is negative, and a, a' in [β, c'²] give
    ‖D‖² <= c'²‖u − u'‖² + δ²⟨u, u'⟩ + c²·max(0, ⟨u, u'⟩ − min(‖u‖², ‖u'‖²)). The softmax Jacobian
    diag(p) − ppᵀ is positive semi-definite with largest eigenvalue at most max_k p_k and at most 1/2
    (Gershgorin: 2p_k(1 − p_k)); on the segment from z to z', z_θ = W((1 − θ)x̃ + θx̃') with
    ‖(1 − θ)x̃ + θx̃'‖ <= c', so max_k p_k(z_θ) <= p̄ by (ii), and ‖p − p'‖ <= κ‖W(x̃ − x̃')‖ <= κRδ.
    In both cases ⟨u, u'⟩ = (‖u‖² + ‖u'‖² − ‖u − u'‖²)/2 <= U − ‖u − u'‖²/2 by (iii)/(vi), and the bound above
    is non-decreasing in ⟨u, u'⟩. For y ≠ y': Δ = ‖u − u'‖² with ‖u − u'‖ = ‖(p − p') − (e_y − e_{y'})‖ <=
    √2 + κRδ, ⟨u, u'⟩ <= H by (iv), hence <= h(Δ), and min(‖u‖², ‖u'‖²) >= (1 − p̄)²(1 + 1/m)
    (Cauchy–Schwarz over the m classes j ≠ y): ‖D‖² <= L≠. For y = y': r = ‖u − u'‖ = ‖p − p'‖ <= κRδ,
    ⟨u, u'⟩ <= U − r²/2 and ⟨u, u'⟩ − min(‖u‖², ‖u'‖²) <= min(‖u‖, ‖u'‖)·|‖u‖ − ‖u'‖| <= √U‖u − u'‖:
    ‖D‖² <= L=. (viii) On each of 4,096 intervals [δ_lo, δ_hi] covering [0, 2c], G's terms are monotone in δ,
    so each is bounded at the interval's worse end; in L≠, Δ's range at δ_hi contains every smaller one and
    δ²h <= δ_hi²h where h >= 0, δ_lo²h where h < 0, which leaves a piecewise linear function of Δ whose
    largest value is at 0, at its end or at a kink (h's min switches, h = 0, h = (1 − p̄)²C/(C − 1)); in L=,
    r <= κRδ_hi and δ²(U − r²/2) <= δ_hi²U − δ_lo²r²/2 leave a function of r that increases, or is concave
    with its peak at c²√U/(δ_lo² − 2c'²), clipped to the range. The largest of these bounds is returned. ∎

    The exact supremum is lower: the label pairs that oppose the residuals most need x and x' apart, which
    the weight radius charges for in the logits, and (v)–(vii) bound ‖u‖², ⟨u, u'⟩ and ‖p − p'‖ one at a
    time. A multi-start search over W, x, x' and both label cases (tests/dpmech/test_sensitivity.py; two
    independent searches agree to 3 digits) finds suprema of 0.73 to 0.9997 of this bound at C = 10 over
    c ∈ {0.5, 1, 2}, R ∈ {0.1, 0.5, 1, 2, 5}: 0.96, 0.87, 0.73 at c = 1 and R = 0.5, 1, 2 (‖D‖ of 2.04, 2.12, 2.40
    against 2.11, 2.41, 3.26 here, 2.20, 2.52, 3.34 before (vii) coupled ⟨u, u'⟩ to ‖u − u'‖, and 2.40, 2.79, 3.49
    for the closed form of (v) alone), and all of it as
    R → 0 or ∞; at C = 2 see below. The searches are not the loose side: at C = 10, c <= 1 (and c = 2, R = 5) the
    maximiser is swap-symmetric (y ≠ y', ‖x‖ = ‖x'‖ = c, z' = z with classes y, y' swapped, the other C − 2 logits
    equal), a two-variable family (δ and the split of ‖W‖_F between the logits' sum and difference) that a dense
    grid searches exhaustively, and that grid gives the same suprema to 1e-4. The slack is (vii)'s: at c = 1, R = 2
    the maximiser (δ = 1.22) has ‖z‖ = 1.80 of ρ = 2.83 and ‖z − z'‖ = 1.97 of Rδ = 2.43, as ‖W‖_F is shared by
    the logits' size and their movement, and so moves p by ‖p − p'‖ = 0.43 where κRδ = 1.22, with
    ⟨u, u'⟩ = −0.70 where H = 0.68: the bound takes each at its own worst case. Over c ∈ {0.5, 1, 2},
    R ∈ {0.5, 1, 2} the search reaches 0.82 to 0.95 of it at C = 3 and 0.80 to 0.996 at C = 50. Rounded up (p̄, p̲ by libm's
    exp and a few roundings, the interval ends padded by a relative 1e-12, the rest covered by a relative 2⁻⁴⁰).

    Two classes (C = 2): the minimum of the above and √(2Ψ*), where Ψ* bounds the supremum of a
    three-variable relaxation that keeps the coupling of the logits to ‖x̃ − x̃'‖; it reaches 0.977 of the
    searched supremum or more on the grid above (0.9995 at c <= 1), against 0.79 to 0.998 for the above.

    Extreme inputs: without the intercept, a feature bound outside [1e-100, 1e100] is taken through the exact
    scale covariance D(R, c) = c·D(Rc, 1) (x = c·x̂ and W = Ŵ/c keep every logit); where Rc' or c' passes 1e100
    the result is the R-free 2√2·c', which holds for every W (the squares of (vii) would overflow).

    Proof (C = 2; r = √2·R). (a) With rows w_0, w_1 of W, s = z_1 − z_0 = ⟨v, x̃⟩ for v = w_1 − w_0, and
    ‖v‖² <= 2‖w_0‖² + 2‖w_1‖² <= r². As p_0 + p_1 = 1, u = (σ(s) − [y = 1])·(−1, 1) (σ the logistic function),
    so D = (−1, 1)ᵀ ⊗ (η x̃ − η' x̃') and ‖D‖² = 2‖η x̃ − η' x̃'‖² = 2Φ, η = σ(s) − [y = 1], s' = ⟨v, x̃'⟩. The map
    v → −v swaps σ(s) and 1 − σ(s), so the label pairs (0, 1) and (0, 0) cover all four:
    Φ≠ = ‖σ(s)x̃ + σ(−s')x̃'‖² and Φ= = ‖σ(s)x̃ − σ(s')x̃'‖². (b) With δ = ‖x̃ − x̃'‖ = ‖x − x'‖ <= 2c,
    d = s − s' = ⟨v, x̃ − x̃'⟩ and m = s + s' = ⟨v, x̃ + x̃'⟩ obey |d| <= rδ and |m| <= r‖x̃ + x̃'‖ <= r√(4c'² − δ²)
    (Cauchy–Schwarz; ‖x̃ + x̃'‖² = 2a + 2a' − δ² by the parallelogram law). (c) With α = σ(s), ω = σ(−s') and
    t = (a + a' − δ²)/2, Φ≠ = α²a + ω²a' + 2αωt = α(α + ω)a + ω(α + ω)a' − αωδ² <= Ψ≠ = c'²(α + ω)² − αωδ², as
    a, a' <= c'² and the coefficients are >= 0. (d) With γ = σ(s'), h = max(α, γ), l = min(α, γ):
    Φ= = ‖αx − γx'‖² + β(α − γ)² (β = 1 with the intercept, else 0), and, by ⟨x, x'⟩ = (‖x‖² + ‖x'‖² − δ²)/2,
    ‖αx − γx'‖² = α(α − γ)‖x‖² − γ(α − γ)‖x'‖² + αγδ². For α >= γ, ‖x'‖ >= (‖x‖ − δ)⁺ and the result,
    (α − γ)[αρ² − γ((ρ − δ)⁺)²] + αγδ² at ρ = ‖x‖, increases in ρ <= c (derivative 2(α − γ)[αρ − γ(ρ − δ)⁺] >= 0);
    α < γ is the same with x, x' swapped. So Φ= <= Ψ= = (h − l)[hc² − l((c − δ)⁺)²] + hlδ² + β(h − l)².
    (e) So ‖D‖² <= 2 sup max(Ψ≠, Ψ=) over (δ, d, m) in (b)'s set, with s = (m + d)/2, s' = (m − d)/2. A
    branch and bound over boxes of (δ, d, m) covering [0, 2c] × [−2rc, 2rc] × [−2rc', 2rc'] bounds each box by
    interval arithmetic (σ increasing; each factor of Ψ≠, Ψ= bounded at the box's ends, the subtracted ones
    from below; hc² − l((c − δ)⁺)² >= 0), drops boxes with no feasible point or with a bound below a value
    Ψ attains at a feasible box centre, and returns the largest bound left. ∎ Its floating-point errors are
    absolute, a few hundred 2⁻⁵³·c'², against Ψ* >= c'² (δ = d = m = 0): the relative 2⁻⁴⁰ covers them.

    Args:
        weight_radius: R > 0, a bound on ‖W‖_F (bias column included when it is a regularised weight).
        feature_bound: c > 0, the bound on ‖x‖.
        num_classes: C >= 2.
        regularized_intercept: x̃ = (x, 1) (β = 1), else x̃ = x (β = 0).
    """
    weight_radius = _scalar_positive("weight_radius", weight_radius)
    feature_bound = _scalar_positive("feature_bound", feature_bound)
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    if not regularized_intercept and not _SQUARES_SAFE[0] <= feature_bound <= _SQUARES_SAFE[1]:
        # Without the intercept the problem is exactly scale-covariant: x = c·x̂ and W = Ŵ/c keep every logit
        # and multiply each gradient by c, so D(R, c) = c·D(Rc, 1). Computed at c = 1, where no square under- or
        # overflows (c² of 1e-164 is subnormal and its root lost the bound's digits); a larger radius only
        # raises D, so Rc is taken up to the smallest normal number. One product, rounded up.
        scaled_radius = min(max(weight_radius * feature_bound, sys.float_info.min), sys.float_info.max)
        unit = softmax_gradient_difference_bound(scaled_radius, 1.0, num_classes, regularized_intercept=False)
        return math.nextafter(unit * feature_bound, math.inf)
    input_norm = _input_norm_bound(feature_bound, regularized_intercept)
    unbounded = 2.0 * math.sqrt(2.0) * input_norm  # the R-free bound, as multinomial_logistic_regression_sensitivity has it
    if not weight_radius * input_norm <= _SQUARES_SAFE[1] or not input_norm <= _SQUARES_SAFE[1]:
        # ρ = Rc' or c' so large that (vii)'s squares overflow (inf − inf made the bound NaN at R = 1e155):
        # the R-free bound holds for every W.
        return unbounded
    offset = 1.0 if regularized_intercept else 0.0
    squared = _distance_coupled_squared_difference_bound(weight_radius, feature_bound, offset, num_classes)
    bound = min(math.nextafter(math.sqrt(squared) * (1.0 + 2.0**-40), math.inf), unbounded)
    if num_classes == 2 and math.isfinite(4.0 * math.sqrt(2.0) * weight_radius * input_norm):
        # (Beyond that the boxes' ends overflow; the bound above stands.)
        relaxed = _two_class_squared_difference_bound(weight_radius, feature_bound, offset)
        bound = min(bound, math.nextafter(math.sqrt(2.0 * relaxed) * (1.0 + 2.0**-40), math.inf))
    return bound


def multinomial_logistic_regression_sensitivity(
    regularization: float,
    n: int,
    feature_bound: float = 1.0,
    *,
    num_classes: int | None = None,
    regularized_intercept: bool = False,
    bound: str = TIGHT_BOUND,
) -> float:
    """L2 sensitivity of regularised multinomial (softmax) logistic regression with C weight vectors.

    The gradient of the cross-entropy in the (C, d) weight matrix W is
    (p − e_y) x̃ᵀ, whose Frobenius norm is ‖p − e_y‖·‖x̃‖, and
    ‖p − e_y‖² = (1 − p_y)² + Σ_{j≠y} p_j² <= 2(1 − p_y)² <= 2. So the loss
    is √2·‖x̃‖-Lipschitz and :func:`regularized_erm_sensitivity` gives

    * ``bound="tight"`` (default): 2√2·‖x̃‖max/(nλ), independent of C;
    * ``bound="seed"``: 2√C·‖x̃‖max/(nλ), FedAUXfdp's Theorem 1 (Hoech et al.
      2022, stated for ‖x‖ <= 1, scaled here by ‖x̃‖max). It is
      valid, since √C >= √2, but looser for C > 2; it stays available to
      reproduce the paper.
    * ``bound="radius"`` (needs ``num_classes``): D/(nλ) with D from
      :func:`softmax_gradient_difference_bound` at R = √2·‖x̃‖max/λ. The proof
      of Cor. 8 only compares the two records' gradients at the neighbour's
      minimiser W', and λW' = −(1/n)Σ (p_i − e_{y_i}) x̃_iᵀ with each term of
      norm at most √2·‖x̃‖max, so ‖W'‖_F <= R. Then each residual has
      ‖p_i − e_{y_i}‖² <= U(R) (steps (iii) and (vi) there), so R' = √U(R)·‖x̃‖max/λ is
      again a radius; up to 60 such steps lower R while they do. Never above
      ``"tight"``.

    Replace-one. The regulariser must cover every released weight (see
    :func:`logistic_regression_sensitivity` for intercepts and scikit-learn).

    Args:
        regularization: λ > 0.
        n: number of records, n >= 1.
        feature_bound: public bound on ‖x‖, > 0.
        num_classes: C >= 2; required for ``bound="seed"`` and ``"radius"``, checked if given.
        regularized_intercept: as in :func:`logistic_regression_sensitivity`.
        bound: ``"tight"``, ``"seed"`` or ``"radius"``.
    """
    bound = check.choice("bound", bound, MULTINOMIAL_BOUNDS)
    if num_classes is not None:
        num_classes = check.integer_scalar("num_classes", num_classes, 2)
    if bound == RADIUS_BOUND:
        if num_classes is None:
            raise ValueError("num_classes must be an integer >= 2 when bound='radius' (got None)")
        regularization = _scalar_positive("regularization", regularization)
        input_norm = _input_norm_bound(feature_bound, regularized_intercept)
        radius = math.nextafter(math.sqrt(2.0) * input_norm / regularization * (1.0 + 2.0**-50), math.inf)
        for _ in range(_RADIUS_REFINEMENTS):
            # ‖W'‖_F <= R bounds every residual by √U(R), hence ‖W'‖_F by √U(R)·‖x̃‖max/λ: each step is a radius.
            residual = math.sqrt(min(_softmax_ranges(radius * input_norm, num_classes)[2], 2.0))
            refined = math.nextafter(residual * input_norm / regularization * (1.0 + 2.0**-40), math.inf)
            if refined >= radius:
                break
            radius = refined
        difference = softmax_gradient_difference_bound(radius, feature_bound, num_classes,
                                                       regularized_intercept=regularized_intercept)
        return regularized_erm_sensitivity(0.5 * difference, regularization, n)
    if bound == SEED_BOUND:
        if num_classes is None:
            raise ValueError("num_classes must be an integer >= 2 when bound='seed' (got None)")
        gradient_factor = math.sqrt(num_classes)
    else:
        gradient_factor = math.sqrt(2.0)
    lipschitz = gradient_factor * _input_norm_bound(feature_bound, regularized_intercept)
    return regularized_erm_sensitivity(lipschitz, regularization, n)


def psgd_bolt_on_sensitivity(lipschitz: float, strong_convexity: float, n: int) -> float:
    """L2 sensitivity 2L/(nΛ) of projected mini-batch SGD on a strongly convex objective (bolt-on DP).

    Wu, Li, Kumar, Chaudhuri, Jha & Naughton (SIGMOD 2017), the strongly
    convex case of their PSGD analysis (one record per step); DP-Helmet
    (Kirschte, Meiser, Ardalan & Mohammadi 2022, Thm 3.12). Extended here to
    mini-batches of nominal size b' = min(b, n), including a ragged last
    batch, provided every batch's summed loss gradient is divided by b'
    (never by its own size).

    L is the Lipschitz constant of the per-record loss ℓ(·; z) ALONE, the
    regulariser excluded: ‖∇ℓ(θ; z) − ∇ℓ(θ; z')‖ <= 2L for every θ in the
    constraint set and every pair of records. Wu et al. and DP-Helmet state
    the theorem with L the Lipschitz constant of the whole per-record
    objective f = ℓ + (Λ/2)‖θ‖², which on the R-ball is L_ℓ + RΛ (DP-Helmet
    Thm 4.1: √2·c + RΛ); step (ii) of the proof below only ever compares
    ∇f(θ; z) with ∇f(θ; z') at the SAME θ, where the ΛΘ terms cancel, so
    the RΛ is not needed (1.42x less σ at the Huber-SVM defaults, 1.5x at
    the Softmax-SLP ones; for the Huber SVM 708x at Λ = 10, R = 100, c = 1).

    Assumptions: each per-record loss ℓ(·; z) is convex, (β − Λ)-smooth and
    L-Lipschitz on the constraint set; every epoch visits the n records in a
    data-independent order (a shuffle drawn from a seed, the same on both
    datasets), split into k = ⌈n/b'⌉ consecutive batches B_1..B_k; step
    t = 1, 2, … (global) is θ_t = Π(θ_{t−1} − η_t ∇F_t(θ_{t−1})) with
    F_t = (1/b') Σ_{i∈B_t} ℓ(·; z_i) + (Λ/2)‖θ‖² and η_t = min(1/β, 1/(Λt)),
    from the same start on both datasets; Π is the projection onto a closed
    convex set (the R-ball, or a product of balls). Replace-one.

    Proof. (i) F_t is Λ-strongly convex and (|B_t|/b')(β − Λ) + Λ <= β
    smooth. Write F_t = g + (Λ/2)‖θ‖², g convex and (β − Λ)-smooth, so
    co-coercive: ⟨∇g(u) − ∇g(v), u − v⟩ >= ‖∇g(u) − ∇g(v)‖²/(β − Λ). With
    a = 1 − ηΛ, ‖a(u − v) − η(∇g(u) − ∇g(v))‖² <= a²‖u − v‖² when
    η(β − Λ) <= 2a, i.e. η <= 2/(β + Λ), which η_t <= 1/β ensures; Π is
    non-expansive. So the step G_t(θ) = Π(θ − η_t∇F_t(θ)) on the same batch
    is (1 − η_tΛ)-Lipschitz.
    (ii) At a step whose batch holds the replaced record, the neighbour's
    step is G'_t(θ') = Π(θ' − η_t∇F_t(θ') − (η_t/b')(∇ℓ(θ'; z') − ∇ℓ(θ'; z))):
    F'_t and F_t share the regulariser and every other record, so they
    differ by one loss term, at the same point θ'. Hence
    ‖G_t(θ) − G'_t(θ')‖ <= ‖G_t(θ) − G_t(θ')‖ + (η_t/b')‖∇ℓ(θ'; z) − ∇ℓ(θ'; z')‖
    <= (1 − η_tΛ)‖θ − θ'‖ + 2Lη_t/b' (Π non-expansive, then (i)). So the
    distance obeys δ_0 = 0, δ_t <= (1 − a_t)δ_{t−1} + [record ∈ B_t]·a_t·K
    with a_t = Λη_t = min(Λ/β, 1/t) ∈ (0, 1] and K = 2L/(Λb'); unrolled,
    δ_T <= K Σ_{s ∈ S} w_s, w_s = a_s Π_{r=s+1..T} (1 − a_r), S the steps
    holding the record (one per epoch, |S| = E, T = E·k).
    (iii) Every w_s <= 1/T. Let t₀ = ⌈β/Λ⌉: a_t = Λ/β =: x < 1/t for
    t < t₀ (constant phase) and a_t = 1/t for t >= t₀. For s >= t₀ the
    product telescopes, w_s = (1/s)(s/T) = 1/T. For s < t₀ <= T,
    w_s = x(1 − x)^{t₀−1−s}(t₀ − 1)/T <= x(t₀ − 1)/T < 1/T since
    t₀ − 1 < β/Λ. If T < t₀, w_s <= x < 1/T.
    Hence δ_T <= K·E/T = 2L/(Λ·b'·⌈n/b'⌉) <= 2L/(nΛ), for every n, b >= 1
    (b > n runs full batches, b' = n) and every number of epochs. With
    b' = 1 this is Wu et al.'s bound. :func:`psgd_contraction_sensitivity`
    evaluates the recursion exactly; the tests check it never exceeds this.
    The bound is attained in the limit: a loss that is linear along the
    difference (a Huber SVM in its linear part near θ = 0, large Λ) makes
    (i) and (ii) equalities (tests/trainers/test_empirical_sensitivity.py).

    Dividing a ragged batch by its own size m < b' instead scales its
    injection by b'/m: one record of that batch can move θ by up to b'/m
    times this bound (measured 2.9x for n = 21, b = 20). tensorflow/
    privacy's BoltOn divides this bound by the batch size; that is not
    covered either and under-noises by the batch size.

    Args:
        lipschitz: L > 0, the Lipschitz constant of the loss ℓ alone on the constraint set.
        strong_convexity: Λ > 0.
        n: number of records, n >= 1.
    """
    lipschitz = _scalar_positive("lipschitz", lipschitz)
    strong_convexity = _scalar_positive("strong_convexity", strong_convexity)
    n = check.integer_scalar("n", n, 1)
    return 2.0 * lipschitz / (n * strong_convexity)


NOMINAL_BATCH_DIVISOR = "nominal"
OWN_SIZE_BATCH_DIVISOR = "own-size"
BATCH_DIVISORS = (NOMINAL_BATCH_DIVISOR, OWN_SIZE_BATCH_DIVISOR)


def psgd_contraction_sensitivity(
    n: int,
    batch_size: int,
    epochs: int,
    smoothness: float,
    strong_convexity: float,
    lipschitz: float,
    *,
    batch_divisor: str = NOMINAL_BATCH_DIVISOR,
) -> float:
    """The worst case of the PSGD contraction recursion over the replaced record's batch in every epoch.

    Evaluates δ_T for δ_0 = 0, δ_t = (1 − η_tΛ)δ_{t−1} + [record ∈ B_t]·2Lη_t/b_t
    with η_t = min(1/β, 1/(Λt)), T = epochs·⌈n/b'⌉ steps, b' = min(b, n), maximised
    over which batch of each epoch holds the replaced record (replace-one; the
    recursion and its assumptions are those of :func:`psgd_bolt_on_sensitivity`).
    The recursion is linear, so δ_T = Σ_epochs max over that epoch's steps s of
    (2Lη_s/b_s)·Π_{r>s}(1 − η_rΛ), computed in one vectorised pass.

    ``batch_divisor="nominal"`` divides every batch by b' (the schedule
    :mod:`trainers.psgd` runs; the result is <= 2L/(nΛ) up to rounding);
    ``"own-size"`` divides each batch by its own size, so a ragged last batch of
    m records injects 2Lη_t/m (the schedule that under-noises).

    Args:
        n: records, >= 1.  batch_size: b >= 1.  epochs: >= 1.
        smoothness: β >= strong_convexity.  strong_convexity: Λ > 0.
        lipschitz: L > 0 of the loss alone (as in :func:`psgd_bolt_on_sensitivity`).
    """
    n = check.integer_scalar("n", n, 1)
    batch_size = min(check.integer_scalar("batch_size", batch_size, 1), n)
    epochs = check.integer_scalar("epochs", epochs, 1)
    strong_convexity = _scalar_positive("strong_convexity", strong_convexity)
    smoothness = _scalar_positive("smoothness", smoothness)
    if smoothness < strong_convexity:
        raise ValueError(f"smoothness must be >= strong_convexity = {strong_convexity:g} (got {smoothness!r})")
    lipschitz = _scalar_positive("lipschitz", lipschitz)
    batch_divisor = check.choice("batch_divisor", batch_divisor, BATCH_DIVISORS)
    steps_per_epoch = -(-n // batch_size)
    steps = np.arange(1, epochs * steps_per_epoch + 1, dtype=np.float64)
    contraction_rates = np.minimum(strong_convexity / smoothness, 1.0 / steps)
    sizes = np.full(steps_per_epoch, float(batch_size))
    if batch_divisor == OWN_SIZE_BATCH_DIVISOR:
        sizes[-1] = n - (steps_per_epoch - 1) * batch_size
    # Π_{r>s}(1 − a_r): a reversed cumulative product, shifted by one step.
    later = np.append(np.cumprod((1.0 - contraction_rates)[:0:-1])[::-1], 1.0)
    weights = contraction_rates * later * (2.0 * lipschitz / strong_convexity) / np.tile(sizes, epochs)
    return float(weights.reshape(epochs, steps_per_epoch).max(axis=1).sum())


def softmax_slp_lipschitz(feature_bound: float, *, regularized_intercept: bool = True) -> float:
    """L = √2·c' of DP-Helmet's Softmax-SLP loss (Kirschte et al. 2022, Thm 4.1, without its RΛ).

    Per record, ℓ(W; x, y) = CE(softmax(W x̃), y). Its gradient is
    (p − e_y) x̃ᵀ, of Frobenius norm ‖p − e_y‖·‖x̃‖ <= √2·c', with
    c' = √(c² + 1) when the bias is a regularised weight of a constant input
    (DP-Helmet's model; its code uses c, which omits the bias input). The
    regulariser's ΛW is not part of L: :func:`psgd_bolt_on_sensitivity` only
    needs the loss (DP-Helmet's √2·c + RΛ adds it).
    """
    return math.sqrt(2.0) * _input_norm_bound(feature_bound, regularized_intercept)


def softmax_slp_smoothness(feature_bound: float, regularization: float, *, regularized_intercept: bool = True) -> float:
    """β = c'²/2 + Λ, a smoothness constant of the Softmax-SLP objective.

    The Hessian of the cross-entropy in W is (diag(p) − ppᵀ) ⊗ x̃x̃ᵀ; by
    Gershgorin each eigenvalue of diag(p) − ppᵀ is at most
    max_i 2 p_i (1 − p_i) <= 1/2, so β <= ‖x̃‖²/2 + Λ. DP-Helmet's code uses
    a larger β, which only shortens the steps.
    """
    regularization = _scalar_positive("regularization", regularization)
    return 0.5 * _input_norm_bound(feature_bound, regularized_intercept) ** 2 + regularization


def softmax_slp_sensitivity(regularization: float, n: int, feature_bound: float, *,
                            regularized_intercept: bool = True, projection_radius: float | None = None,
                            num_classes: int | None = None) -> float:
    """Δ = 2√2·c'/(nΛ) of DP-Helmet's Softmax-SLP-SGD (Kirschte et al. 2022, Thm 4.1, without its RΛ).

    :func:`psgd_bolt_on_sensitivity` with L = √2·c' from
    :func:`softmax_slp_lipschitz`; one bound for all C classes (no √C factor)
    and for every projection radius R. c' = √(c² + 1) when the bias is a
    regularised input coordinate. DP-Helmet's Thm 4.1 has
    2(√2·c + RΛ)/(nΛ): its RΛ is the regulariser's gradient on the R-ball,
    which cancels between neighbours (:func:`psgd_bolt_on_sensitivity`,
    step (ii)). PSGD must use η_t = min(1/β, 1/(Λt)) with β from
    :func:`softmax_slp_smoothness` and project (W, b) onto the Frobenius
    R-ball after every step. Replace-one.

    With ``projection_radius`` R and ``num_classes`` C both given, 2L is instead
    :func:`softmax_gradient_difference_bound` at R: step (ii) of
    :func:`psgd_bolt_on_sensitivity` compares the two records' gradients at one
    iterate, and every iterate lies in the R-ball (0.60 of the R-free bound at
    DP-Helmet's defaults c = 1, R = 1, C = 10, where DP-Helmet's σ_u at ε = 1, δ = 1e-5 on digits is 0.0803; 0.64 at
    C = 2). The iterates start in the ball;
    a projection computed in floating point may leave an iterate a few ulps
    outside it, so pass R raised by that rounding (float32: a relative 2⁻²⁰).
    """
    regularization = _scalar_positive("regularization", regularization)
    if (projection_radius is None) != (num_classes is None):
        raise ValueError("projection_radius and num_classes must be given together (got "
                         f"projection_radius={projection_radius!r}, num_classes={num_classes!r})")
    if projection_radius is not None and num_classes is not None:
        difference = softmax_gradient_difference_bound(projection_radius, feature_bound, num_classes,
                                                       regularized_intercept=regularized_intercept)
        return psgd_bolt_on_sensitivity(0.5 * difference, regularization, n)
    lipschitz = softmax_slp_lipschitz(feature_bound, regularized_intercept=regularized_intercept)
    return psgd_bolt_on_sensitivity(lipschitz, regularization, n)


def huber_svm_lipschitz(feature_bound: float, *, regularized_intercept: bool = True) -> float:
    """L = c' of one one-vs-rest Huber-SVM loss (Kirschte et al. 2022, Example 3.16, without its RΛ).

    The Huber loss has |ℓ'(z)| <= 1 and z = y θ·x̃, so its gradient has norm
    at most c' = ‖x̃‖max. The regulariser's ΛR on the R-ball is not part of L
    (:func:`psgd_bolt_on_sensitivity`).
    """
    return _input_norm_bound(feature_bound, regularized_intercept)


def huber_svm_smoothness(
    feature_bound: float, regularization: float, huber_width: float, *, regularized_intercept: bool = True
) -> float:
    """β = c'²/(2h) + Λ of one Huber-SVM objective (DP-Helmet Example 3.16; tensorflow/privacy StrongConvexHuber).

    The Huber loss with width h has ℓ'' <= 1/(2h), so the Hessian is at most
    ‖x̃‖²/(2h) + Λ. DP-Helmet's code inflates β further, which only shortens
    the steps.
    """
    regularization = _scalar_positive("regularization", regularization)
    huber_width = _scalar_positive("huber_width", huber_width)
    return _input_norm_bound(feature_bound, regularized_intercept) ** 2 / (2.0 * huber_width) + regularization


def huber_svm_sensitivity(regularization: float, n: int, feature_bound: float, *, num_classes: int = 1,
                          regularized_intercept: bool = True) -> float:
    """L2 sensitivity D_C/(nΛ) of C one-vs-rest Huber SVMs trained by PSGD (Kirschte et al. 2022, Ex. 3.16).

    With a = c², β = 1 for a regularised bias input (x̃ = (x, 1)) and 0 without:

    * C = 1 (one model): D_1 = 2√(a + β) = 2c', i.e. 2L/(nΛ) with L = c' from
      :func:`huber_svm_lipschitz` (:func:`psgd_bolt_on_sensitivity`);
    * C >= 2: D_C² = max((C + 6)(a + β), 8β + (C − 2)·max(4a, a + β), C·max(4a, a + β)),
      at most C·4(a + β) (the √C·2c' of C separate models) and equal to it at C = 2;
      at c = 1, C = 10 it is 40 against 80 (√2 less σ).

    For every projection radius R: Kirschte et al.'s per-class 2(c + RΛ)/(nΛ)
    adds the regulariser's gradient, which cancels between neighbours.

    Proof. Each class k runs its own PSGD, so by the proof of
    :func:`psgd_bolt_on_sensitivity` its model moves by at most D_k/(nΛ),
    D_k = sup_θ ‖∇ℓ_k(θ; z) − ∇ℓ_k(θ; z')‖, and the stacked models by
    √(Σ_k D_k²)/(nΛ). ∇ℓ_k(θ; x, y) = s x̃ with s = ℓ_hub'(y_k θ·x̃)·y_k, where
    ℓ_hub' ∈ [−1, 0] and y_k = ±1 (+1 for the record's class only), so
    s ∈ [0, 1] when y_k = −1 and [−1, 0] when y_k = +1. With t = x·x',
    ‖s x̃ − s'x̃'‖² = (s² + s'²)(‖x̃‖², ‖x̃'‖² <= a + β) − 2ss'(t + β) is convex
    in (s, s') and in (x, x'), so Σ_k max_{s,s'} is maximised at vertices
    s, s' ∈ {0, ±1} and on the spheres ‖x‖ = ‖x'‖ = c, where it is a
    maximum of linear functions of t ∈ [−a, a], hence maximised at t = ±a.
    Classes where the two records' y_k agree (s, s' of one sign) give at most
    a + β at t = a and max(4a, a + β) at t = −a; the (at most two) classes
    where they differ, y and y' when the labels differ, give 4(a + β) at t = a
    and 4β at t = −a. Summing over the C classes, for labels that differ and
    for equal labels (all C classes agree: C(a + β) <= (C + 6)(a + β), or
    C·max(4a, a + β)), gives D_C². Attained near θ = 0 (every margin in the
    loss's linear part, large Λ): x' = −x with one label gives
    C·max(4a, a + β), x' = x with another label 8(a + β)
    (tests/trainers/test_empirical_sensitivity.py). These pairs reach D_C
    for C = 2 and whenever C·max(4a, a + β) >= (C + 6)(a + β) (C >= 6 at
    c = 1); at c = 1, C = 3, 4, 5 they reach 0.94, 0.89, 0.95 of it (the
    t = a case counts the agreeing classes, which a pair at one θ with x = x'
    cannot move).

    Each class must run its own PSGD with step η_t (DP-Helmet's SVM code
    averages the C objectives, which takes steps η_t/C: still private, but
    not the analysed schedule). Replace-one.

    Args:
        regularization: Λ > 0.
        n: number of records, n >= 1.
        feature_bound: c > 0, the public bound on ‖x‖.
        num_classes: C >= 1 one-vs-rest models released together.
        regularized_intercept: the bias is a regularised input coordinate.
    """
    num_classes = check.integer_scalar("num_classes", num_classes, 1)
    regularization = _scalar_positive("regularization", regularization)
    feature_squared = _scalar_positive("feature_bound", feature_bound) ** 2
    bias = 1.0 if check.boolean("regularized_intercept", regularized_intercept) else 0.0
    input_norm_squared = feature_squared + bias
    if num_classes == 1:
        gradient_difference_squared = 4.0 * input_norm_squared
    else:
        agreeing_opposite = max(4.0 * feature_squared, input_norm_squared)
        gradient_difference_squared = max((num_classes + 6) * input_norm_squared,
                                          8.0 * bias + (num_classes - 2) * agreeing_opposite,
                                          num_classes * agreeing_opposite)
    # psgd_bolt_on_sensitivity's L is half the largest gradient difference.
    return psgd_bolt_on_sensitivity(0.5 * math.sqrt(gradient_difference_squared), regularization, n)


def user_level_sensitivity(radius: float) -> float:
    """2R: the sensitivity of one user's model when the whole local dataset may change (DP-Helmet Cor. 5.5).

    Any learner whose output lies in the R-ball moves by at most 2R,
    whatever the data. This is for the unscaled model; DP-Helmet's newest
    code multiplies each model by its local size N_u, which makes it
    2·N_max·R, so its "2R" comment is stale for that variant. Averaging |U|
    users divides it by |U| (:func:`dpmech.blind_averaging.average_sensitivity`);
    the seed's "2R/N" should read 2R/|U| on the average.
    """
    return 2.0 * _scalar_positive("radius", radius)
