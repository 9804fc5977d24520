r"""Known-correct and known-buggy mechanisms from the DP-testing literature, as samplers, to measure testers against.

Each :class:`Example` holds a sampler ``(input, size, rng) -> outputs``
(pure numpy, vectorised over the ``size`` draws), the (ε, δ) it claims,
the truth, and the candidate neighbours a tester should search. Inputs
are query-answer vectors (sensitivity 1 per coordinate; StatDP's
patterns, :func:`.tester.statdp_pairs`) or small datasets. Re-implemented
from the papers' descriptions:

* the six sparse-vector variants of Lyu, Su & Li (VLDB 2017, Alg. 1–6)
  with threshold T = 1 and, by default, c = 2 ⊤ answers on 10 queries
  (DP-Sniper's setting): Alg. 1 and 2 are ε-DP, Alg. 4 is
  ((1 + 6c)/4)ε-DP, Alg. 3, 5 and 6 are not ε-DP (over unboundedly many
  queries not ε'-DP for any ε'; on the 10 queries here their ε' is finite);
* report-noisy-max with Laplace and exponential noise, returning the
  index (ε-DP), the noisy maximum value, or both (neither is ε-DP)
  (Ding et al. CCS 2018, Alg. 5–8; Bichsel et al. S&P 2021);
* noisy histograms with scale 1/ε (ε-DP) and ε (1/ε-DP);
* Laplace with the wrong sensitivity, Poisson-subsampled Laplace with a
  linear amplification claim, clipping bypasses (clip the mean; clip per
  coordinate under an L2 claim; NaN records through ``np.clip``), label
  randomized response and RRTop-k with their known bugs, Gaussians with σ
  10–30 % too small; and the correct version of each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..gaussian import gaussian_delta
from ..output_perturbation import GaussianOutputMechanism
from ..randomized_response import randomized_response, rr_top_k
from .statistical import Sampler
from .tester import statdp_pairs

NOT_ANSWERED = -1


@dataclass(frozen=True)
class Example:
    """A mechanism with its claim and the truth.

    Attributes:
        name: short identifier.
        sampler: (input, size, rng) -> size outputs.
        epsilon, delta: the claim.
        correct: the claim holds.
        truth: the true guarantee in words (e.g. "eps-DP", "1.75 eps", "not DP for any eps").
        pairs: candidate neighbours [(name, D, D')] a tester should search.
        outputs: ``"discrete"`` or ``"real"`` for the cheap event family.
        options: what the mechanism's author declares to the tester, passed to
            :func:`.tester.find_violation` (e.g. ``float_bits=True`` for a release in float64).
    """

    name: str
    sampler: Sampler
    epsilon: float
    delta: float
    correct: bool
    truth: str
    pairs: list[tuple[str, Any, Any]] = field(default_factory=lambda: statdp_pairs(5))
    outputs: str = "discrete"
    options: dict[str, Any] = field(default_factory=dict)


def _laplace(rng: np.random.Generator, scale: float, shape: int | tuple[int, ...]) -> NDArray[np.float64]:
    """Laplace(0, scale) draws as ±scale·Exp(1) with a fair sign from random bits: 2–3 times faster than ``rng.laplace``."""
    size = math.prod(shape) if isinstance(shape, tuple) else int(shape)
    signs = np.unpackbits(rng.integers(0, 256, (size + 7) // 8, dtype=np.uint8), count=size).view(bool)
    magnitudes = rng.standard_exponential(size)
    return (scale * np.where(signs, magnitudes, -magnitudes)).reshape(shape)


def _sparse_vector(
    queries: ArrayLike,
    size: int,
    rng: np.random.Generator,
    *,
    threshold_scale: float,
    query_scale: float,
    halt: bool,
    noisy_values: bool,
    cutoff: int = 1,
    refresh: bool = False,
    threshold: float = 1.0,
) -> NDArray[np.float64] | NDArray[np.int8]:
    """Vectorised SVT: per draw, the answers ⊤ (1) / ⊥ (0), −1 after the halt (c = ``cutoff`` ⊤ answers), or the noisy value for ⊤.

    ``refresh`` redraws the threshold noise after each ⊤ (Lyu et al. Alg. 2, Dwork & Roth); then the
    queries are visited in order (a loop over the few queries, vectorised over the draws).
    """
    queries = np.asarray(queries, dtype=float)
    noisy_queries = queries[None, :] + (_laplace(rng, query_scale, (size, queries.size)) if query_scale else 0.0)
    # With c = 1 the algorithm halts at its first ⊤, before any refreshed threshold is used: the one threshold
    # below gives the same outputs from the same draws, without a loop over the queries.
    if refresh and cutoff > 1:
        thresholds = threshold + _laplace(rng, threshold_scale, (size, cutoff))
        above = np.empty(noisy_queries.shape, dtype=bool)
        count = np.zeros(size, dtype=np.int64)
        for column in range(queries.size):
            above[:, column] = noisy_queries[:, column] >= thresholds[np.arange(size), np.minimum(count, cutoff - 1)]
            count += above[:, column]
    else:
        above = noisy_queries >= threshold + _laplace(rng, threshold_scale, (size, 1))
    if halt:
        # Answered while fewer than c earlier queries were above: after the c-th ⊤ the algorithm stops.
        earlier = np.cumsum(above, axis=1, dtype=np.int16) - above
        answered = earlier < cutoff
    else:
        answered = np.ones_like(above)
    if noisy_values:
        return np.where(answered, np.where(above, noisy_queries, 0.0), float(NOT_ANSWERED))
    # int8 codes: a tenth of int64's bytes for the samplers' callers to compare and count.
    return np.where(answered, above.view(np.int8), np.int8(NOT_ANSWERED))


def sparse_vector_examples(epsilon: float = 0.5, cutoff: int = 2, num_queries: int = 10, threshold: float = 1.0) -> list[Example]:
    """Lyu, Su & Li (2017) Fig. 1, Alg. 1–6, with Δ = 1, T = ``threshold``, c = ``cutoff`` ⊤ answers, on StatDP's patterns of ``num_queries`` queries."""
    half, c, t = epsilon / 2.0, cutoff, threshold
    pairs = statdp_pairs(num_queries)
    quarter = epsilon / 4.0
    return [
        Example("svt1 (Lyu Alg. 1)", lambda q, n, g: _sparse_vector(q, n, g, threshold_scale=1 / half, query_scale=2 * c / half, halt=True, noisy_values=False, cutoff=c, threshold=t), epsilon, 0.0, True, "eps-DP", pairs),
        Example("svt2 (Dwork-Roth)", lambda q, n, g: _sparse_vector(q, n, g, threshold_scale=c / half, query_scale=2 * c / half, halt=True, noisy_values=False, cutoff=c, refresh=True, threshold=t), epsilon, 0.0, True, "eps-DP", pairs),
        Example("svt3 (Roth, noisy values)", lambda q, n, g: _sparse_vector(q, n, g, threshold_scale=1 / half, query_scale=c / half, halt=True, noisy_values=True, cutoff=c, threshold=t), epsilon, 0.0, False, "not eps-DP (no finite eps over all query counts)", pairs),
        Example("svt4 (Lee-Clifton)", lambda q, n, g: _sparse_vector(q, n, g, threshold_scale=1 / quarter, query_scale=1 / (epsilon - quarter), halt=True, noisy_values=False, cutoff=c, threshold=t), epsilon, 0.0, False, f"(1+6c)/4 eps = {(1 + 6 * c) / 4 * epsilon:g}", pairs),
        Example("svt5 (Stoddard, no query noise)", lambda q, n, g: _sparse_vector(q, n, g, threshold_scale=1 / half, query_scale=0.0, halt=False, noisy_values=False, cutoff=c, threshold=t), epsilon, 0.0, False, "not eps-DP (no finite eps over all query counts)", pairs),
        Example("svt6 (Chen, no halt)", lambda q, n, g: _sparse_vector(q, n, g, threshold_scale=1 / half, query_scale=1 / half, halt=False, noisy_values=False, cutoff=c, threshold=t), epsilon, 0.0, False, "not eps-DP (no finite eps over all query counts)", pairs),
    ]


def _noisy_max(
    queries: ArrayLike, size: int, rng: np.random.Generator, *, noise: str, with_value: bool, scale: float
) -> NDArray[np.float64] | NDArray[np.intp]:
    queries = np.asarray(queries, dtype=np.float64)
    draws = _laplace(rng, scale, (size, queries.size)) if noise == "laplace" else scale * rng.standard_exponential((size, queries.size))
    noisy = queries[None, :] + draws
    index: NDArray[np.intp] = np.argmax(noisy, axis=1)
    if with_value:
        return np.stack([index.astype(float), noisy[np.arange(size), index]], axis=1)
    return index


def _noisy_max_releases(noise: str, epsilon: float) -> list[Example]:
    """Report-noisy-max with one noise, scale 2/ε: the index, the index and the value, the value alone."""
    return [
        Example(f"noisy max ({noise}, index)", lambda q, n, g: _noisy_max(q, n, g, noise=noise, with_value=False, scale=2 / epsilon), epsilon, 0.0, True, "eps-DP"),
        Example(f"noisy max ({noise}, index and value)", lambda q, n, g: _noisy_max(q, n, g, noise=noise, with_value=True, scale=2 / epsilon), epsilon, 0.0, False, "not eps-DP"),
        Example(f"noisy max ({noise}, value)", lambda q, n, g: _noisy_max(q, n, g, noise=noise, with_value=True, scale=2 / epsilon)[:, 1], epsilon, 0.0, False, "not eps-DP", outputs="real"),
    ]


def noisy_max_examples(epsilon: float = 0.5) -> list[Example]:
    """Report-noisy-max, scale 2/ε (Ding et al. 2018, Alg. 5–8): the index is ε-DP with Laplace or exponential noise; the value, alone or with the index, is not."""
    return [example for noise in ("laplace", "exponential") for example in _noisy_max_releases(noise, epsilon)]


def _histogram_pairs(bins: int = 5) -> list[tuple[str, NDArray[np.float64], NDArray[np.float64]]]:
    ones = np.ones(bins)
    return [("one above", ones, np.r_[2.0, np.ones(bins - 1)]), ("one below", ones, np.r_[0.0, np.ones(bins - 1)])]


def _laplace_sum(records: NDArray[np.float64], size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.float64]:
    return np.sum(records) + rng.laplace(0.0, scale, size)


def _gaussian_shift(centre: float, size: int, rng: np.random.Generator, *, sigma: float) -> NDArray[np.float64]:
    return centre + rng.normal(0.0, sigma, size)


def _subsampled_count(records: int, size: int, rng: np.random.Generator, *, rate: float, scale: float) -> NDArray[np.float64]:
    count = rng.binomial(int(records), rate, size=size)
    return count + rng.laplace(0.0, scale, size=size)


def _clipped_sum(records: ArrayLike, size: int, rng: np.random.Generator, *, order: str, scale: float, bound: float = 1.0) -> NDArray[np.float64]:
    records = np.asarray(records, dtype=np.float64)
    if order == "clip the mean":
        value: np.float64 = np.clip(records.mean(), -bound, bound) * records.size
    elif order == "clip each, NaN through":
        value = np.clip(records, -bound, bound).sum()
    else:  # clip each record after refusing NaN as the most distant value
        value = np.clip(np.nan_to_num(records, nan=bound, posinf=bound, neginf=-bound), -bound, bound).sum()
    return value + rng.laplace(0.0, scale, size=size)


def _per_coordinate_sum(records: ArrayLike, size: int, rng: np.random.Generator, *, bound: float, sigma: float, l2: bool) -> NDArray[np.float64]:
    records = np.asarray(records, dtype=np.float64)
    if l2:
        norms = np.linalg.norm(records, axis=1, keepdims=True)
        clipped = records * np.minimum(1.0, bound / np.maximum(norms, 1e-300))
    else:
        clipped = np.clip(records, -bound, bound)
    totals: NDArray[np.float64] = clipped.sum(axis=0)
    return totals[None, :] + rng.normal(0.0, sigma, size=(size, records.shape[1]))


def _broken_rr_top_k(label: int, size: int, rng: np.random.Generator, prior: NDArray[np.float64], k: int, epsilon: float) -> NDArray[np.int64]:
    top = np.argsort(-prior, kind="stable")[:k]
    labels = np.full(size, label)
    correct = rr_top_k(labels, np.tile(prior, (size, 1)), k, epsilon, rng)
    return np.where(np.isin(labels, top), correct, rng.integers(0, prior.size, size=size))


def _broken_randomized_response(label: int, size: int, rng: np.random.Generator, epsilon: float, num_classes: int) -> NDArray[np.int64]:
    kept = rng.random(size) < epsilon / (epsilon + num_classes - 1)
    others = (label + 1 + rng.integers(0, num_classes - 1, size=size)) % num_classes
    return np.where(kept, label, others)


def other_examples(epsilon: float = 0.5) -> list[Example]:
    """Histograms, sensitivity, subsampling, clipping, randomized response and Gaussian examples."""
    examples = [
        Example("noisy histogram (scale 1/eps)", lambda q, n, g: np.asarray(q)[None, :] + g.laplace(0.0, 1 / epsilon, (n, len(q))), epsilon, 0.0, True, "eps-DP", _histogram_pairs()),
        Example("noisy histogram (scale eps)", lambda q, n, g: np.asarray(q)[None, :] + g.laplace(0.0, epsilon, (n, len(q))), epsilon, 0.0, False, f"1/eps = {1 / epsilon:g}", _histogram_pairs()),
    ]
    # Sum of records in [−1, 1]: replace-one sensitivity 2; noise for 1 is the bug.
    sum_pairs = [("replace 1 by -1", np.array([1.0, 0.0, 0.0]), np.array([-1.0, 0.0, 0.0]))]
    for label, sensitivity, correct in (("right", 2.0, True), ("wrong", 1.0, False)):
        examples.append(Example(f"laplace sum ({label} sensitivity)", partial(_laplace_sum, scale=sensitivity / epsilon), epsilon, 0.0, correct, "eps-DP" if correct else f"2 eps = {2 * epsilon:g}", sum_pairs, "real"))
    rate, base = 0.1, 2.0
    amplified = math.log1p(rate * math.expm1(base))
    count_pairs = [("add one record", 10, 11), ("remove one record", 11, 10)]
    for claim, correct in ((amplified * (1 + 1e-9), True), (rate * base, False)):
        examples.append(Example(f"subsampled laplace (claim {'log(1+q(e^eps-1))' if correct else 'q eps'})", lambda d, n, g: _subsampled_count(d, n, g, rate=rate, scale=1 / base), claim, 0.0, correct, f"eps = {amplified:.4f}", count_pairs, "real"))
    clip_pairs = [("one record far out", np.zeros(10), np.r_[100.0, np.zeros(9)]), ("one NaN record", np.zeros(10), np.r_[np.nan, np.zeros(9)])]
    for order, correct in (("clip the mean", False), ("clip each, NaN through", False), ("clip each, NaN refused", True)):
        truth = "eps-DP" if correct else "not DP for any eps" if "NaN" in order else "about 10 eps"
        examples.append(Example(f"clipped sum ({order})", partial(_clipped_sum, order=order, scale=2 / epsilon), epsilon, 0.0, correct, truth, clip_pairs, "real"))
    dimension, bound = 16, 1.0
    sigma = GaussianOutputMechanism(bound, 1.0, 1e-5).sigma
    vector_pairs = [("one record at the corner", np.zeros((4, dimension)), np.r_[np.ones((1, dimension)), np.zeros((3, dimension))])]
    for l2, correct in ((True, True), (False, False)):
        examples.append(Example(f"gaussian sum ({'L2' if l2 else 'per-coordinate'} clipping, L2 claim)", partial(_per_coordinate_sum, bound=bound, sigma=sigma, l2=l2), 1.0, 1e-5, correct, "(1, 1e-5)" if correct else f"delta(1) = {gaussian_delta(1.0, sigma, 4.0):.3g}", vector_pairs, options={"noise_family": "gaussian", "sensitivity": bound}))
    prior = np.array([0.4, 0.3, 0.2, 0.06, 0.04])
    label_pairs = [("label 4 vs 0", 4, 0), ("label 0 vs 4", 0, 4), ("label 0 vs 1", 0, 1)]
    examples += [
        Example("rr-top-k (dpmech)", lambda y, n, g: rr_top_k(np.full(n, y), np.tile(prior, (n, 1)), 2, 2.0, g), 2.0, 0.0, True, "eps-DP", label_pairs),
        Example("rr-top-k (uniform over all labels outside Y_k)", lambda y, n, g: _broken_rr_top_k(y, n, g, prior, 2, 2.0), 2.0, 0.0, False, "not eps-DP", label_pairs),
        Example("randomized response (dpmech)", lambda y, n, g: randomized_response(np.full(n, y), 0.3, 3, g), 0.3, 0.0, True, "eps-DP", label_pairs[2:]),
        Example("randomized response (eps for e^eps)", lambda y, n, g: _broken_randomized_response(y, n, g, 0.3, 3), 0.3, 0.0, False, f"eps = {math.log(1 / 0.3 * 2):.3f}", label_pairs[2:]),
    ]
    gaussian_pairs = [("shift by the sensitivity", 0.0, 1.0)]
    # The author declares Gaussian noise and the L2 sensitivity 1: the tester adds the grey-box noise-scale check.
    declared = {"noise_family": "gaussian", "sensitivity": 1.0}
    calibrated = GaussianOutputMechanism(1.0, 1.0, 1e-5).sigma
    for fraction in (1.0, 0.9, 0.7):
        scale = calibrated * fraction
        truth = "(1, 1e-5)" if fraction == 1.0 else f"delta(1) = {gaussian_delta(1.0, scale, 1.0):.2g}"
        examples.append(Example(f"gaussian (sigma x {fraction:g})", partial(_gaussian_shift, sigma=scale), 1.0, 1e-5, fraction == 1.0, truth, gaussian_pairs, "real", declared))
    return examples


def _textbook_float_laplace(rng: np.random.Generator, scale: float, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """−b·sign(u)·log(1 − 2|u|) with u = U − 1/2 in float64, U uniform on the multiples of 2^−53 (Mironov 2012, §3)."""
    centred = rng.random(shape) - 0.5
    return -scale * np.sign(centred) * np.log1p(-2.0 * np.abs(centred))


def _grid_release(answers: ArrayLike, noise: NDArray[np.int64], granularity: float) -> NDArray[np.floating[Any]]:
    """(round(f/γ) + Z)·γ, as dpmech releases discrete noise: a function of the integer round(f/γ) + Z alone."""
    return (np.rint(np.asarray(answers, dtype=np.float64) / granularity) + noise) * granularity


def floating_point_examples(epsilon: float = 0.5) -> list[Example]:
    """Float64 samplers against dpmech's exact discrete ones, with float bit features declared (Mironov, CCS 2012).

    A noisy histogram with textbook float Laplace noise of scale 1/ε, and
    ``f(D) + rng.normal`` at the σ of a (1, 1e-5) claim, are not DP for any
    ε: some outputs are reachable on one neighbour only. The histogram with
    dpmech's discrete Laplace of scale 1/ε on the grid 10^−3 (1000 grid
    steps per unit, scale 1000/ε steps) and the discrete Gaussian of
    :class:`GaussianOutputMechanism` ``(sampler="discrete")`` on the grid
    2^−10 release exact post-processings of integer mechanisms and are DP.
    """
    from fractions import Fraction

    from ..discrete_gaussian import discrete_gaussian
    from ..discrete_laplace import discrete_laplace

    grid = Fraction(1, 1000)
    grid_scale = Fraction(1) / (Fraction(epsilon) * grid)
    mechanism = GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", granularity=2.0**-10, dimension=1)
    sigma_squared_grid, granularity = mechanism.sigma_squared_grid, mechanism.granularity
    assert sigma_squared_grid is not None and granularity is not None  # set by sampler="discrete"
    continuous_sigma = GaussianOutputMechanism(1.0, 1.0, 1e-5).sigma
    bits = {"float_bits": True}
    gaussian_pairs = [("shift by the sensitivity", 0.0, 1.0)]
    return [
        Example("noisy histogram (textbook float laplace)", lambda q, n, g: np.asarray(q)[None, :] + _textbook_float_laplace(g, 1 / epsilon, (n, len(q))), epsilon, 0.0, False, "not DP for any eps (Mironov 2012)", _histogram_pairs(), options=bits),
        Example("noisy histogram (dpmech discrete laplace, grid 1e-3)", lambda q, n, g: _grid_release(np.asarray(q)[None, :], discrete_laplace(grid_scale, (n * len(q)), g)[0].reshape(n, len(q)), float(grid)), epsilon, 0.0, True, "eps-DP", _histogram_pairs(), options=bits),
        Example("gaussian (float64 rng.normal)", lambda c, n, g: c + g.normal(0.0, continuous_sigma, n), 1.0, 1e-5, False, "not DP for any eps (Mironov 2012)", gaussian_pairs, "real", bits),
        Example("gaussian (dpmech discrete sampler, grid 2^-10)", lambda c, n, g: _grid_release(c, discrete_gaussian(sigma_squared_grid, n, g)[0], granularity), 1.0, 1e-5, True, "(1, 1e-5)", gaussian_pairs, "real", bits),
    ]


def all_examples(epsilon: float = 0.5) -> list[Example]:
    """Every example: sparse vector, noisy max, the others, then the floating-point ones (claims fixed where the paper fixes them)."""
    return sparse_vector_examples(epsilon) + noisy_max_examples(epsilon) + other_examples(epsilon) + floating_point_examples(epsilon)
