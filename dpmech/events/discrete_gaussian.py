r"""The discrete Gaussian release q(D) + N_Z(0, σ²) with q(D) an integer and |q(D) − q(D')| <= Δ.

N_Z(μ, σ²) puts mass ∝ exp(−(x − μ)²/(2σ²)) on each integer x (Canonne, Kamath & Steinke 2020,
"The discrete Gaussian for differential privacy"); :func:`dpmech.discrete_gaussian.discrete_gaussian`
samples it, exactly. One coordinate; Δ is an integer in grid units, under the relation it was
computed for.

Dominating pair: (N_Z(0, σ²), N_Z(Δ, σ²)), the worst pair of neighbours (a shift by less than Δ is a
post-processing of one by Δ; Canonne, Kamath & Steinke 2020, Thm. 7, whose tight δ(ε) is this pair's).
Its privacy loss at x is (Δ² − 2Δx)/(2σ²), on finitely many values only through the tails, so the pair
handed to the numeric engine keeps the integers of [−N, Δ + N], N = ⌈40σ⌉ + 1, and moves the P-mass
outside them to an atom of loss +∞ (and the Q-mass, by reflection, to −∞). That pair dominates the
mechanism in both directions (the moved mass only adds to every hockey-stick divergence) and exceeds its
δ(ε) by at most the moved mass, 2Σ_{x>N} e^{−x²/(2σ²)}/Z < e^{−790} (the bound used for it is the
geometric one, Σ_{x>=k} e^{−x²/(2σ²)} <= e^{−k²/(2σ²)}/(1 − e^{−(2k+1)/(2σ²)})). The reflection x ↦ Δ − x
maps the window to itself and P to Q, so Q's masses are P's reversed and the pair is exactly symmetric.
The log-masses are −x²/(2σ²) − log Z with Z a correctly rounded sum: within a relative 1e-12, the
engine's accuracy premise (:mod:`dpmech.pld.pairs`).

Basic cost: the curve of Canonne, Kamath & Steinke's Thm. 7, as
:func:`dpmech.discrete_gaussian_privacy.discrete_gaussian_delta` bounds it from above; ε(δ) is the
smallest point of a bisection at which that bound is at most δ. Group privacy is exact: k steps apart,
|q(D) − q(D')| <= kΔ.

The other accountants:

* ``pld``: dp_accounting's ``from_discrete_gaussian_mechanism``, the pair of N_Z(0, σ²) truncated to
  [−T, T] and renormalised against its shift by Δ, here with T = ⌈11.6σ⌉ + Δ. That pair is not the
  mechanism's, but it dominates it: for ε >= 0, each x < −T adds (P(x) − e^ε P(x − Δ))₊ <= P(x) − P(x − Δ)
  to the mechanism's δ(ε), which telescopes to P[−T − Δ, −T), while each x in [−T, Δ − T) adds
  min(P(x), e^ε P(x − Δ)) >= P(x − Δ) more to the truncated pair's (where its loss is +∞), in all
  P[−T − Δ, −T); x > T adds nothing (P(x) <= P(x − Δ) there), and the renormalisation by 1/(1 − m) only
  raises the rest. Both pairs are symmetric, so the same holds for ε < 0 (H_α(P‖Q) = 1 − α + α·H_{1/α}(Q‖P),
  Zhu, Dong & Wang 2022), and the truncated pair dominates the release in every composition (ibid.). It
  exceeds the release's δ(ε) by at most (P[−T, Δ − T) + m·δ)/(1 − m), with m the mass beyond ±T; N_Z(0, σ²)
  is σ-subgaussian (Canonne, Kamath & Steinke 2020), P[X >= t] <= e^{−t²/(2σ²)}, so P[−T, Δ − T) and m/2
  are below e^{−11.6²/2} = 6.1·10⁻³⁰ and the excess below 2·10⁻²⁹. dp_accounting rounds the pair on its
  grid in the safe direction (connect-the-dots) in double precision; the accountant's margin covers that.
  Poisson sampling with rate q (add/remove-one): dp_accounting's ``sampling_prob`` on the same truncated pair
  (A, B) = (N_Z^T(0, σ²), N_Z^T(Δ, σ²)), the two mixture pairs (qA + (1 − q)B, B) for the removal and
  (B, qA + (1 − q)B) for the addition. Since (A, B) dominates the release at every ε of both signs (above), each
  mixture pair dominates the sampled release in its direction (Zhu, Dong & Wang 2022, Thm. 11, which asks the
  inner pair to dominate for every α = e^ε > 0, as proven above), in every composition. The truncation's mass
  goes where the unsampled proof puts it: A is renormalised on [−T, T], and on [−T, Δ − T), where B has none,
  the removal's mixture carries q·A[−T, Δ − T) at loss +∞; the addition's loss is finite on the whole of B's
  support (its mixture keeps (1 − q)B there). What they add to δ(ε) over the same mixtures of the release's
  own pair is at most (1 + e^ε)·m, as sup_S U(S) − e^ε L(S) moves by at most TV(U, U') + e^ε·TV(L, L') and
  each of A, B is within total variation m of its untruncated law: below (1 + e^ε)·1.3·10⁻²⁹.
* ``exact`` takes three-point lattice steps; this loss takes unboundedly many values: refused.
* ``prv``: prv_accountant 0.2 has no discrete Gaussian among its random variables. One written here as a
  ``PrivacyRandomVariable`` (the law of the loss above, a CDF with a jump at every integer) runs, but its
  error bound (Gopi, Lee & Wutschitz 2021) would then rest on a step it does not control on such a CDF:
  ``PRVAccountant`` re-centres each discretised variable on the mean of its truncated law, which it takes
  by adaptive quadrature of the CDF (``PrivacyRandomVariableTruncated.mean``, scipy ``quad``); at σ² = 100
  that mean came out 3·10⁻⁸ off. The cross-check would also be dpmech's own pair again, not an independent
  one. Refused, naming ``numeric`` (certified) instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

from .. import validation as check
from .base import EnginePair, PldBuilder, PrivacyEvent, UnsupportedEvent, additive_noise_pld
from .relations import ADD_REMOVE_ONE, check_relation

_TAIL_WIDTH = 40.0
# dp_accounting's own truncation width for its discrete Gaussian (mass beyond ±11.6σ below 1e-30), plus Δ
# (see dp_accounting_pld).
_TRUNCATION_WIDTH = 11.6
# ε(δ) is searched up to this; past it δ(ε) is below the smallest double for every σ² dpmech accepts.
_LARGEST_EPSILON = 2.0**60
_BISECTIONS = 80


@dataclass(frozen=True)
class DiscreteGaussianCostCurve:
    """Canonne, Kamath & Steinke's tight δ(ε) of one discrete Gaussian release (an upper bound of it) and ε(δ)."""

    sigma_squared: Fraction
    sensitivity: int

    def _delta(self, epsilon: float) -> float:
        from ..discrete_gaussian_privacy import discrete_gaussian_delta

        return float(discrete_gaussian_delta(epsilon, self.sigma_squared, self.sensitivity))

    def log_delta(self, epsilon: float) -> float:
        """log of the proven upper bound on δ(ε), rounded up."""
        return min(math.nextafter(math.log(float(self._delta(epsilon))), math.inf), 0.0)

    def epsilon(self, delta: float) -> float:
        """The smallest ε found by bisection whose proven δ(ε) bound is at most ``delta`` (so the release is
        (ε, delta)-DP); inf if none up to 2^60."""
        if self._delta(0.0) <= delta:
            return 0.0
        low, high = 0.0, 1.0
        while self._delta(high) > delta:
            low, high = high, 2.0 * high
            if high > _LARGEST_EPSILON:
                return math.inf
        for _ in range(_BISECTIONS):
            middle = 0.5 * (low + high)
            if not low < middle < high:
                break
            if self._delta(middle) <= delta:
                high = middle
            else:
                low = middle
        return high


@dataclass(frozen=True)
class DiscreteGaussianEvent(PrivacyEvent):
    """One release q(D) + N_Z(0, σ²) with an integer query of sensitivity Δ (in grid units)."""

    sigma_squared: Fraction
    sensitivity: int = 1
    neighbouring: Optional[str] = None

    def __post_init__(self) -> None:
        from ..discrete_gaussian_privacy import MAX_SIGMA_SQUARED
        from ..discrete_laplace import rational

        sigma_squared = rational("sigma_squared", self.sigma_squared)
        if sigma_squared > MAX_SIGMA_SQUARED:
            raise ValueError(f"sigma_squared must be <= 2**32 grid units² (got {float(sigma_squared):g})")
        object.__setattr__(self, "sigma_squared", sigma_squared)
        object.__setattr__(self, "sensitivity", check.integer_scalar("sensitivity", self.sensitivity, 1))
        check_relation(self.neighbouring)

    def privacy_loss_pair(self) -> EnginePair:
        """The truncated pair of the module docstring (a :class:`~dpmech.pld.pairs.FinitePair`), symmetric."""
        from ..pld.pairs import FinitePair

        variance = float(self.sigma_squared)
        reach = math.ceil(_TAIL_WIDTH * math.sqrt(variance)) + 1
        # Z over |x| <= reach + Δ + 1, which holds the window and its reflection; beyond, below e^-800 of Z.
        span = np.arange(-(reach + self.sensitivity + 1), reach + self.sensitivity + 2, dtype=float)
        log_normaliser = math.log(math.fsum(np.exp(-(span * span) / (2.0 * variance)).tolist()))
        window = np.arange(-reach, self.sensitivity + reach + 1, dtype=float)
        log_p = -(window * window) / (2.0 * variance) - log_normaliser
        # Σ_{x>reach} e^{−x²/(2σ²)}, bounded geometrically, on each side: the P-mass outside the window
        # (the right tail, beyond Δ + reach, is smaller than the left one).
        first = reach + 1.0
        log_tail = (-(first * first) / (2.0 * variance) - math.log(-math.expm1(-(2.0 * first + 1.0) / (2.0 * variance)))
                    - log_normaliser + math.log(2.0))
        log_p = np.concatenate([log_p, [log_tail, -math.inf]])
        log_q = np.concatenate([log_p[-3::-1], [-math.inf, log_tail]])
        return FinitePair(log_p=log_p, log_q=log_q)

    def basic_cost(self) -> DiscreteGaussianCostCurve:
        return DiscreteGaussianCostCurve(self.sigma_squared, self.sensitivity)

    def group_form(self, group_size: int) -> "DiscreteGaussianEvent":
        return DiscreteGaussianEvent(self.sigma_squared, group_size * self.sensitivity, self.neighbouring)

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """dp_accounting's ``from_discrete_gaussian_mechanism`` with σ = √σ², sensitivity Δ, truncation bound
        T = ⌈11.6σ⌉ + Δ and ``sampling_prob`` q: a pair that dominates the release, and for q < 1 the removal and
        addition mixtures of that pair, which dominate the Poisson-sampled release (see the module docstring)."""
        if sampling_probability != 1.0 and self.neighbouring not in (None, ADD_REMOVE_ONE):
            # Amplification by Poisson sampling takes Δ under add/remove-one, as numeric's sampled pair does.
            raise UnsupportedEvent(f"PoissonSampledEvent({self.describe()})")
        sigma = math.sqrt(float(self.sigma_squared))
        return additive_noise_pld("from_discrete_gaussian_mechanism", sampling_probability, sigma=sigma,
                                  sensitivity=self.sensitivity,
                                  truncation_bound=math.ceil(_TRUNCATION_WIDTH * sigma) + self.sensitivity)
