"""A second held-out table for dpmech's black-box tester: ten more buggy mechanisms from published bug catalogues, four correct tight ones.

Usage::

    python -m benchmarks.heldout_mechanisms_more [--seeds 3] [--budget 20] [--only NAME] [--jobs 1]

None of these is in :mod:`dpmech.verify.examples` or :mod:`benchmarks.heldout_mechanisms`. Each is a sampler
``(dataset, size, rng) -> outputs``, its claim, its true guarantee (derived beside it; computed exactly by the
functions below where the derivation leaves a number to compute), and the candidate neighbours a user would pass.
The table runs :func:`dpmech.verify.find_violation` per mechanism and seed exactly as
:mod:`benchmarks.heldout_mechanisms` does (its ``run_seed``: a CPU-seconds budget, wall cap 10x).

Sources: report-noisy-max with exponential noise is permute-and-flip (McKenna & Sheldon 2020; Ding, Kifer, Wang,
Wang & Zhang 2021), ε-DP at scale 2Δ/ε; the exponential mechanism (McSherry & Talwar 2007); sparse vector, Alg. 1
of Lyu, Su & Li (2017); floating-point noise (Mironov 2012; Jin, McMurtry, Rubinstein & Ohrimenko 2022, "Are we
there yet? Timing and floating-point attacks on differential privacy systems"); the truncated Laplace mechanism
(Geng, Ding, Guo & Kumar 2020); one-time RAPPOR (Erlingsson, Pihur & Korolova 2014); local sensitivity
(Nissim, Raskhodnikova & Smith 2007).
"""

from __future__ import annotations

import itertools
import math
import sys
from functools import partial

import flint
import numpy as np
from numpy.typing import NDArray

from benchmarks.heldout_mechanisms import _exponential_mechanism, exponential_mechanism_pair_epsilon, run_table
from dpmech.verify.examples import NOT_ANSWERED, Example, _noisy_max, _sparse_vector
from dpmech.verify.records import RecordBox, record_neighbours
from dpmech.verify.tester import statdp_pairs

CATEGORIES = 4
RECORDS = 6
MEDIAN_RECORDS = 5
# One-time RAPPOR: a Bloom filter of 2·CATEGORIES bits, category c sets bits 2c and 2c + 1 (h = 2 hashes, no collisions).
RAPPOR_HASHES, RAPPOR_F = 2, 0.8
TRUNCATED_EPSILON, TRUNCATED_DELTA = 1.0, 1e-3
SVT_QUERIES, SVT_CUTOFF, SVT_THRESHOLD = 10, 2, 1.0


def _rnm_exponential_index_probabilities(queries: NDArray[np.float64], scale: float) -> list[flint.arb]:
    """P[argmax_j q_j + scale·E_j = i] for i.i.d. E_j ~ Exp(1), in arb balls.

    P[i] = ∫_L^∞ (1/b) e^(−(x−q_i)/b) ∏_{j≠i} (1 − e^(−(x−q_j)/b)) dx with L = max_j q_j (below it some factor is 0);
    expanding the product over subsets S of the other queries gives
    P[i] = Σ_S (−1)^|S| / (1 + |S|) · exp((q_i − L + Σ_{j∈S} (q_j − L)) / b); the alternating sum is evaluated in arb.
    """
    values = np.asarray(queries, dtype=np.float64)
    queries = [flint.arb(float(q)) for q in values]
    b, low = flint.arb(float(scale)), flint.arb(float(np.max(values)))
    probabilities = []
    for i, q_i in enumerate(queries):
        others = [q for j, q in enumerate(queries) if j != i]
        total = flint.arb(0)
        for size in range(len(others) + 1):
            for subset in itertools.combinations(others, size):
                total += (-1) ** size / flint.arb(1 + size) * ((q_i - low + sum((q - low for q in subset), flint.arb(0))) / b).exp()
        probabilities.append(total)
    return probabilities


def rnm_exponential_pair_epsilon(pairs: list[tuple[str, NDArray[np.float64], NDArray[np.float64]]], scale: float) -> flint.arb:
    """The exact largest |ln P[i | q] − ln P[i | q']| of report-noisy-max (exponential noise, index) over ``pairs``, an arb ball."""
    worst = flint.arb(0)
    for _, first, second in pairs:
        for p, q in zip(_rnm_exponential_index_probabilities(first, scale), _rnm_exponential_index_probabilities(second, scale)):
            worst = max(worst, abs(p.log() - q.log()), key=lambda ball: float(ball.mid()))
    return worst


def _margin_utilities(records: NDArray[np.int64]) -> NDArray[np.float64]:
    """u(r) = #{x = r} − #{x ≠ r} = 2·count_r − n: replace-one moves two counts by 1 each, so u moves by up to 2 in two places."""
    counts = np.bincount(np.asarray(records, dtype=np.int64), minlength=CATEGORIES).astype(np.float64)
    return 2.0 * counts - counts.sum()


def _margin_exponential_mechanism(records: NDArray[np.int64], size: int, rng: np.random.Generator, *, factor: float) -> NDArray[np.int64]:
    return _exponential_mechanism(_margin_utilities(records), size, rng, factor=factor)


def margin_mechanism_pair_epsilon(pairs: list[tuple[str, NDArray[np.int64], NDArray[np.int64]]], factor: float) -> float:
    """The exact largest loss of the margin exponential mechanism over record ``pairs`` (via the utilities' pairs)."""
    return exponential_mechanism_pair_epsilon(2.0 * factor, factor, [(name, _margin_utilities(d), _margin_utilities(e)) for name, d, e in pairs])


def _sparse_vector_broadcast_noise(queries: NDArray[np.float64], size: int, rng: np.random.Generator, *, threshold_scale: float,
                                   query_scale: float, threshold: float) -> NDArray[np.int8]:
    """Lyu et al. Alg. 1 with c = 1, but ``queries + rng.laplace(0, b, (size, 1))``: one query-noise draw broadcast to every query.

    Codes as :func:`dpmech.verify.examples._sparse_vector`: 1 (⊤), 0 (⊥), −1 after the halt.
    """
    queries = np.asarray(queries, dtype=np.float64)
    noisy = queries[None, :] + rng.laplace(0.0, query_scale, (size, 1))
    above = noisy >= threshold + rng.laplace(0.0, threshold_scale, (size, 1))
    answered = (np.cumsum(above, axis=1) - above) < 1
    return np.where(answered, above.view(np.int8), np.int8(NOT_ANSWERED))


def _sparse_vector_outputs(num_queries: int, cutoff: int) -> list[tuple[int, ...]]:
    """Every output of Lyu et al. Alg. 1 with halting: ⊤ (1) at ``k`` <= c positions, ⊥ (0) elsewhere, −1 after the c-th ⊤."""
    outputs = []
    for count in range(cutoff + 1):
        for positions in itertools.combinations(range(num_queries), count):
            codes = [0] * num_queries
            for position in positions:
                codes[position] = 1
            if count == cutoff:
                codes[positions[-1] + 1:] = [NOT_ANSWERED] * (num_queries - positions[-1] - 1)
            outputs.append(tuple(codes))
    return outputs


def svt_output_probabilities(queries: NDArray[np.float64], *, threshold_scale: float, query_scale: float, cutoff: int,
                             threshold: float) -> dict[tuple[int, ...], flint.arb]:
    """Exact law of Lyu et al. Alg. 1 (halting after ``cutoff`` ⊤, Boolean answers) on ``queries``, in arb balls.

    P[o] = ∫ f_ρ(r) ∏_{answered i} P[o_i | r] dr with ρ ~ Lap(b_t), P[⊤_i | r] = P[ν_i >= T + r − q_i], ν_i ~ Lap(b_q).
    Between consecutive kinks (r = 0 and r = q_i − T) every factor is α + β·e^(±r/b_q) and the density e^(∓r/b_t)/(2b_t),
    so the integrand is a finite sum of c·e^(λr) (λ = k/b_q ± 1/b_t) and each piece integrates in closed form.
    """
    values = np.asarray(queries, dtype=np.float64)
    bt, bq = flint.arb(float(threshold_scale)), flint.arb(float(query_scale))
    kinks = sorted({0.0, *(float(q) - threshold for q in values)})
    edges = [None, *kinks, None]  # None: −∞ first, +∞ last
    probabilities = {}
    for output in _sparse_vector_outputs(values.size, cutoff):
        total = flint.arb(0)
        for low, high in zip(edges[:-1], edges[1:]):
            # A point inside the piece decides each factor's branch; the factors are then exponentials of r.
            inside = high - 1.0 if low is None else low + 1.0 if high is None else (low + high) / 2.0
            # terms: {(k, s): coefficient} for coefficient·e^(r·(k/b_q + s/b_t)).
            side = -1 if inside >= 0 else 1  # ρ's density e^(−|r|/b_t)/(2 b_t): s = −1 above 0, +1 below
            terms = {(0, side): 1 / (2 * bt)}
            for q, code in zip(values, output):
                if code == NOT_ANSWERED:
                    continue
                shift = flint.arb(threshold - float(q))  # x = T + r − q_i
                if threshold + inside - q >= 0:
                    # P[ν >= x] = e^(−x/b_q)/2 = (e^(−shift/b_q)/2)·e^(−r/b_q)
                    tail = {(-1, 0): (-shift / bq).exp() / 2}
                else:
                    # P[ν >= x] = 1 − e^(x/b_q)/2
                    tail = {(0, 0): flint.arb(1), (1, 0): -(shift / bq).exp() / 2}
                factor = tail if code == 1 else {key: -value for key, value in tail.items()}
                if code == 0:
                    factor[(0, 0)] = factor.get((0, 0), flint.arb(0)) + 1
                product: dict[tuple[int, int], flint.arb] = {}
                for (k1, s1), c1 in terms.items():
                    for (k2, s2), c2 in factor.items():
                        product[(k1 + k2, s1 + s2)] = product.get((k1 + k2, s1 + s2), flint.arb(0)) + c1 * c2
                terms = product
            for (k, s), coefficient in terms.items():
                if k * threshold_scale + s * query_scale == 0:  # λ = 0: the term is constant on the piece (bounded here)
                    total += coefficient * (flint.arb(high) - flint.arb(low))
                    continue
                rate = k / bq + s / bt
                upper = (rate * high).exp() if high is not None else flint.arb(0)
                lower = (rate * low).exp() if low is not None else flint.arb(0)
                total += coefficient * (upper - lower) / rate
        probabilities[output] = total
    return probabilities


def svt_exact_pair_epsilon(pairs: list[tuple[str, NDArray[np.float64], NDArray[np.float64]]], **options: float) -> tuple[flint.arb, str]:
    """The exact largest |ln P[o | q] − ln P[o | q']| of :func:`svt_output_probabilities` over ``pairs`` and outputs o: (ball, pair)."""
    worst, where = flint.arb(0), ""
    for name, first, second in pairs:
        p, q = svt_output_probabilities(first, **options), svt_output_probabilities(second, **options)
        for output in p:
            loss = abs(p[output].log() - q[output].log())
            if float(loss.mid()) > float(worst.mid()):
                worst, where = loss, f"{name}: {''.join('T' if c == 1 else 'F' if c == 0 else '-' for c in output)}"
    return worst, where


def _histogram_argmax_with_count(records: NDArray[np.int64], size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.float64]:
    """Laplace(scale) on each category's count; released: the noisy argmax and its noisy count."""
    counts = np.bincount(np.asarray(records, dtype=np.int64), minlength=CATEGORIES).astype(np.float64)
    released: NDArray[np.float64] = _noisy_max(counts, size, rng, noise="laplace", with_value=True, scale=scale)
    return released


def _float32_laplace_noise(uniforms: NDArray[np.float32], scale: float) -> NDArray[np.float32]:
    """Textbook inverse-CDF Laplace, −b·sign(u)·log(1 − 2|u|), u = U − 1/2, every step in float32 (as torch's default dtype does)."""
    centred = uniforms - np.float32(0.5)
    noise: NDArray[np.float32] = -np.float32(scale) * np.sign(centred) * np.log1p(np.float32(-2.0) * np.abs(centred))
    return noise


def _float32_laplace_count(count: int, size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.float64]:
    """count + float32 Laplace noise, summed in float32; U uniform on the 2^24 − 1 positive multiples of 2^−24 (0, whose log is −∞, redrawn as numpy's own sampler does)."""
    uniforms = rng.integers(1, 2**24, size).astype(np.float32) * np.float32(2.0**-24)
    return (np.float32(count) + _float32_laplace_noise(uniforms, scale)).astype(np.float64)


def float32_laplace_exact(counts: tuple[int, int], scale: float, epsilon: float) -> tuple[float, float, float]:
    """Exact output law of :func:`_float32_laplace_count` on two counts by enumerating all 2^24 − 1 uniforms.

    Returns (mass of D's outputs unreachable from D', the largest |ln p/q| over the common support, δ(ε) =
    max over both orders of Σ_x max(0, p(x) − e^ε q(x))): every output's probability is a multiple of 1/(2^24 − 1).
    """
    uniforms = np.arange(1, 2**24).astype(np.float32) * np.float32(2.0**-24)
    first = np.float32(counts[0]) + _float32_laplace_noise(uniforms, scale)
    second = np.float32(counts[1]) + _float32_laplace_noise(uniforms, scale)
    values, inverse = np.unique(np.concatenate([first, second]), return_inverse=True)
    p = np.bincount(inverse[: first.size], minlength=values.size).astype(np.float64)
    q = np.bincount(inverse[first.size:], minlength=values.size).astype(np.float64)
    common = (p > 0) & (q > 0)
    largest = float(np.max(np.abs(np.log(p[common] / q[common]))))
    deltas = [float(np.sum(np.maximum(0.0, a - math.exp(epsilon) * c))) / uniforms.size for a, c in ((p, q), (q, p))]
    return float(p[q == 0].sum()) / uniforms.size, largest, max(deltas)


def geng_truncation(epsilon: float, delta: float) -> float:
    """A = (Δ/ε)·ln(1 + (e^ε − 1)/(2δ)) with Δ = 1: the truncated Laplace mechanism's bound (Geng, Ding, Guo & Kumar 2020)."""
    return math.log1p(math.expm1(epsilon) / (2.0 * delta)) / epsilon


def _truncated_laplace(centre: float, size: int, rng: np.random.Generator, *, scale: float, bound: float) -> NDArray[np.float64]:
    """centre + Y, Y with density ∝ e^(−|y|/scale) on [−bound, bound]: |Y| by the inverse CDF of the truncated exponential."""
    magnitude = -scale * np.log1p(-rng.random(size) * -math.expm1(-bound / scale))
    return centre + np.where(rng.random(size) < 0.5, -magnitude, magnitude)


def _clamped_laplace(centre: float, size: int, rng: np.random.Generator, *, scale: float, bound: float) -> NDArray[np.float64]:
    """The bug: Laplace(scale) noise clamped to [−bound, bound] (atoms at ±bound) instead of resampled."""
    return centre + np.clip(rng.laplace(0.0, scale, size), -bound, bound)


def truncated_laplace_delta(epsilon: float, scale: float, bound: float, *, clamped: bool) -> float:
    """δ(ε) of centre + Y against centre + 1 + Y, ``scale`` = 1/ε (so the densities' ratio is at most e^ε on the overlap).

    Resampled (Geng et al.): δ(ε) = P[Y < 1 − A] = e^(−A/b)(e^(1/b) − 1) / (2(1 − e^(−A/b))).
    Clamped: D's outputs below 1 − A and its atom at A have no D' mass (D' has the atoms 1 ± A and a density
    between): δ(ε) = P[Laplace < 1 − A] + P[Laplace >= A] = e^(−A/b)(e^(1/b) + 1)/2.
    """
    if abs(scale * epsilon - 1.0) > 1e-12:
        raise ValueError(f"scale must be 1/epsilon (got {scale} and {epsilon})")
    tail = math.exp(-bound / scale)
    if clamped:
        return tail * (math.exp(1.0 / scale) + 1.0) / 2.0
    return tail * math.expm1(1.0 / scale) / (2.0 * -math.expm1(-bound / scale))


def _median_with_mean_scale(records: NDArray[np.float64], size: int, rng: np.random.Generator, *, epsilon: float) -> NDArray[np.float64]:
    """Median of records in [0, 1] plus Laplace(1/(nε)): the mean's sensitivity 1/n, where the median's is 1 (n odd)."""
    records = np.asarray(records, dtype=np.float64)
    return float(np.median(records)) + rng.laplace(0.0, 1.0 / (records.size * epsilon), size)


def _rappor_bits(category: int, size: int, rng: np.random.Generator, *, f: float) -> NDArray[np.int8]:
    """One-time RAPPOR: Bloom bits of ``category`` (2c, 2c + 1), each bit set to 1 w.p. f/2, 0 w.p. f/2, kept w.p. 1 − f."""
    bloom = np.zeros(RAPPOR_HASHES * CATEGORIES, dtype=np.int8)
    bloom[RAPPOR_HASHES * category: RAPPOR_HASHES * (category + 1)] = 1
    randomised = rng.random((size, bloom.size)) < f
    coin = (rng.random((size, bloom.size)) < 0.5).astype(np.int8)
    return np.where(randomised, coin, bloom[None, :])


def rappor_epsilon(hashes: int, f: float) -> float:
    """ε = 2h·ln((1 − f/2)/(f/2)) (Erlingsson, Pihur & Korolova 2014, §4), attained where the two Bloom sets are disjoint."""
    return 2.0 * hashes * math.log((1.0 - f / 2.0) / (f / 2.0))


def _mean_local_sensitivity(records: NDArray[np.float64], size: int, rng: np.random.Generator, *, epsilon: float) -> NDArray[np.float64]:
    """Mean plus Laplace((max − min)/(nε)): the data's own spread as the sensitivity (local, not global)."""
    records = np.asarray(records, dtype=np.float64)
    return records.mean() + rng.laplace(0.0, float(np.ptp(records)) / (records.size * epsilon), size)


def heldout_more_examples() -> list[Example]:
    """Ten buggy mechanisms, then four correct ones whose true ε (or δ(ε)) is exactly the claim."""
    queries5, queries10 = statdp_pairs(5), statdp_pairs(SVT_QUERIES)
    category_replace = record_neighbours(np.arange(CATEGORIES), RECORDS, "replace_one", rng=0)
    category_add_remove = record_neighbours(np.arange(CATEGORIES), RECORDS, "add_remove", rng=0)
    unit_replace = record_neighbours(RecordBox(0.0, 1.0), MEDIAN_RECORDS, "replace_one", rng=0)
    unit_replace10 = record_neighbours(RecordBox(0.0, 1.0), 10, "replace_one", rng=0)
    count_pair = [("add one record", 10, 11)]
    shift_pair = [("shift by the sensitivity", 0.0, 1.0)]
    label_pairs = [(f"category {a} vs {b}", a, b) for a, b in ((0, 1), (2, 3))]
    geng_bound = geng_truncation(TRUNCATED_EPSILON, TRUNCATED_DELTA)
    half = 0.25  # ε/2 for the SVT claim ε = 0.5
    return [
        # Exponential noise at scale 1/ε (half of permute-and-flip's 2/ε): permute-and-flip at 2ε, so ε_true <= 2ε, attained on
        # one below rest above (P[0] = 1/5 against e^(−1)/5; rnm_exponential_pair_epsilon, exact).
        Example("report noisy max (exponential noise at scale 1/eps, index)", partial(_noisy_max, noise="exponential", with_value=False, scale=1 / 0.5),
                0.5, 0.0, False, "eps = 2 x 0.5 = 1 (attained on one below rest above)", queries5),
        # Margin utility (Δu = 2 under replace-one) with the factor ε/(2·1): ε_true < 2ε (sup), exact on the pairs below.
        Example("exponential mechanism (margin utility, sensitivity 2 declared 1)", partial(_margin_exponential_mechanism, factor=1.0 / 2),
                1.0, 0.0, False, "eps = 1.976 on the pairs (margin_mechanism_pair_epsilon), sup 2", category_replace),
        # On x shape (1^5 0^5 vs 0^5 1^5) the output ⊥^5 ⊤ has probability P[−1 < ρ − ν <= 0] > 0 on D' and 0 on D.
        Example("sparse vector (one query-noise draw broadcast to all queries)",
                partial(_sparse_vector_broadcast_noise, threshold_scale=1 / half, query_scale=2 / half, threshold=SVT_THRESHOLD),
                0.5, 0.0, False, "not DP for any eps", queries10),
        # Replace-one moves a record from bin a to bin b; (b, v) with c_b + 1 < v < c_a − 1 has ratio e^(1/b) twice: 2ε, attained.
        Example("histogram argmax with its noisy count (add/remove scale, replace-one claim)", partial(_histogram_argmax_with_count, scale=1 / 0.5),
                0.5, 0.0, False, "eps = 2 x 0.5 = 1 (attained)", category_replace, "vector"),
        # Mironov (2012) in float32: exact law by enumerating the 2^24 uniforms (float32_laplace_exact).
        Example("laplace count (float32 textbook sampler)", partial(_float32_laplace_count, scale=1 / 0.5), 0.5, 0.0, False,
                "not DP for any eps (float32_laplace_exact)", count_pair, "real", {"float_bits": True}),
        # Noise clamped at Geng et al.'s A instead of resampled: δ(ε) = e^(−A/b)(e^(1/b) + 1)/2 (truncated_laplace_delta).
        Example("truncated laplace (noise clamped, not resampled)", partial(_clamped_laplace, scale=1 / TRUNCATED_EPSILON, bound=geng_bound),
                TRUNCATED_EPSILON, TRUNCATED_DELTA, False,
                f"delta(1) = {truncated_laplace_delta(TRUNCATED_EPSILON, 1 / TRUNCATED_EPSILON, geng_bound, clamped=True):.4g}", shift_pair, "real"),
        # The median of 5 records in [0, 1] moves by 1 (0,0,0,1,1 -> 1,0,0,1,1): Laplace(1/(nε)) gives ε_true = nε = 2.5, attained.
        Example("median (laplace scaled for the mean, 1/(n eps))", partial(_median_with_mean_scale, epsilon=0.5), 0.5, 0.0, False,
                f"eps = n x 0.5 = {MEDIAN_RECORDS * 0.5:g} (attained)", unit_replace, "real"),
        # One-time RAPPOR with h = 2 hashes claimed at the h = 1 formula: ε_true = 2·2·ln((1 − f/2)/(f/2)).
        Example("one-time rappor (claim for one hash, bloom filter with two)", partial(_rappor_bits, f=RAPPOR_F), rappor_epsilon(1, RAPPOR_F), 0.0,
                False, f"eps = {rappor_epsilon(RAPPOR_HASHES, RAPPOR_F):.4f} (attained)", label_pairs),
        # Scale from the data's spread: D = all 0 gives the exact mean, D' a continuous law: not DP for any ε.
        Example("mean (laplace scaled by the data's own range)", partial(_mean_local_sensitivity, epsilon=0.5), 0.5, 0.0, False, "not DP for any eps",
                unit_replace10, "real"),
        # Lyu Alg. 1 at c = 2 with the query noise for c = 1 (Lap(2/ε₂), not Lap(2c/ε₂)): Alg. 1 at ε₂ = cε/2, so ε_true <= 1.5ε;
        # the lower bound on StatDP's patterns is svt_exact_pair_epsilon's.
        Example("sparse vector (Lyu Alg. 1, query noise for c = 1 at c = 2)",
                partial(_sparse_vector, threshold_scale=1 / half, query_scale=2 / half, halt=True, noisy_values=False, cutoff=SVT_CUTOFF,
                        threshold=SVT_THRESHOLD), 0.5, 0.0, False, "0.6458 <= eps <= 0.75 (svt_exact_pair_epsilon on half half)", queries10),
        # Correct, tight.
        Example("histogram argmax with its noisy count (add/remove)", partial(_histogram_argmax_with_count, scale=1 / 0.5), 0.5, 0.0, True,
                "eps = 0.5 (attained)", category_add_remove, "vector"),
        Example("truncated laplace (Geng et al., resampled)", partial(_truncated_laplace, scale=1 / TRUNCATED_EPSILON, bound=geng_bound),
                TRUNCATED_EPSILON, TRUNCATED_DELTA, True, "delta(1) = 1e-3 (tight)", shift_pair, "real"),
        Example("one-time rappor (two hashes, claim 2h ln((1-f/2)/(f/2)))", partial(_rappor_bits, f=RAPPOR_F), rappor_epsilon(RAPPOR_HASHES, RAPPOR_F),
                0.0, True, f"eps = {rappor_epsilon(RAPPOR_HASHES, RAPPOR_F):.4f} (attained)", label_pairs),
        # round(c + Lap(b)) = c + round(Lap(b)) for an integer count: post-processing; P[k]/P[k − 1] = e^(−1/b) for k >= 1, tight.
        Example("laplace count rounded to an integer", lambda c, n, g: np.rint(c + g.laplace(0.0, 1 / 0.5, n)), 0.5, 0.0, True,
                "eps = 0.5 (attained)", count_pair),
    ]


def main(argv: list[str] | None = None) -> int:
    return run_table(heldout_more_examples(), __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
