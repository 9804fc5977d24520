r"""Privacy amplification by subsampling, as dominating pairs of mixtures.

Let (P, Q) dominate a mechanism M, P being M's output law on the dataset that
contains the differing record and Q on the one without it. Then:

* **Poisson sampling with rate q, add/remove neighbours** (each record enters the
  batch independently with probability q): the pair
  (qP + (1−q)Q, Q) dominates the *remove* direction and (Q, qP + (1−q)Q) the *add*
  direction; the subsampled mechanism's δ(ε) is the larger of the two
  (Zhu, Dong & Wang 2022, Thm. 11 and Sec. 5; Balle, Barthe & Gaboardi 2018,
  Thm. 8 for the (ε, δ) specialisation; dp_accounting's
  ``from_gaussian_mechanism(sampling_prob=...)`` computes the same two pairs).
* **Sampling m of n records without replacement, replace-one neighbours**: with
  γ = m/n the pairs (γP + (1−γ)Q, Q) and its reverse, where (P, Q) dominates M
  under replace-one (Balle et al. 2018, Thm. 10: δ' = γδ at
  ε' = log(1 + γ(e^ε − 1)) is the (ε, δ) form of the same mixture; Zhu et al. 2022, Sec. 5).

The mixture's loss is a monotone function of the base loss L₀,
L = log(γe^{L₀} + 1 − γ), so its law is the base law under the mixture measure
γP + (1−γ)Q pushed through that function; under Q it is the base law under Q.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .. import validation as check
from .pairs import Atoms, FloatArray, Pair, reverse

# A log-distribution function of a pair's continuous part: (t, measure) → log P_c or log Q_c (:meth:`Pair.log_cdf`).
LogDistribution = Callable[[ArrayLike, str], FloatArray]


class MixturePair(Pair):
    """(γP + (1−γ)Q, Q) for a base pair (P, Q) and a mixing weight γ ∈ (0, 1]."""

    def __init__(self, pair: Pair, rate: float) -> None:
        if not isinstance(pair, Pair):
            raise ValueError(f"pair must be a dpmech.pld Pair (got {type(pair).__name__})")  # noqa: TRY004 - dpmech refuses bad input with ValueError
        self.pair = pair
        self.rate = float(check.in_interval("rate", rate, 0.0, 1.0, low_open=True, high_open=False))
        self._log_rate = math.log(self.rate)
        self._log_rest = math.log1p(-self.rate) if self.rate < 1.0 else -math.inf

    def __repr__(self) -> str:
        return f"MixturePair({self.pair!r}, rate={self.rate!r})"

    def has_continuous_part(self) -> bool:
        return self.pair.has_continuous_part()

    def _loss(self, base_loss: ArrayLike) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.logaddexp(self._log_rate + np.asarray(base_loss, dtype=float), self._log_rest)

    def _base_loss(self, t: ArrayLike) -> FloatArray:
        """The base loss u with γe^u + 1 − γ = e^t; −∞ at or below the floor log(1 − γ)."""
        t = np.asarray(t, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.log(np.expm1(t) + self.rate) - self._log_rate
        base_loss: FloatArray = np.where(t > self._log_rest, u, -np.inf)
        return base_loss

    def atoms(self) -> Atoms:
        loss, p, q = self.pair.atoms()
        return self._loss(loss), self.rate * p + (1.0 - self.rate) * q, q.copy()

    def log_atoms(self) -> Atoms:
        loss, log_p, log_q = self.pair.log_atoms()
        with np.errstate(divide="ignore"):
            return self._loss(loss), np.logaddexp(self._log_rate + log_p, self._log_rest + log_q), log_q.copy()

    def support(self) -> tuple[float, float]:
        low, high = self.pair.support()
        return (float(self._loss(low)), float(self._loss(high)))

    def _mixed(self, function: LogDistribution, u: FloatArray, measure: str) -> FloatArray:
        if measure == "Q":
            return function(u, "Q")
        with np.errstate(divide="ignore"):
            return np.logaddexp(self._log_rate + function(u, "P"), self._log_rest + function(u, "Q"))

    def log_cdf(self, t: ArrayLike, measure: str) -> FloatArray:
        u = self._base_loss(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self._mixed(self.pair.log_cdf, np.where(np.isfinite(u), u, 0.0), measure)
        log_cdf: FloatArray = np.where(np.isfinite(u), out, -np.inf)
        return log_cdf

    def log_sf(self, t: ArrayLike, measure: str) -> FloatArray:
        u = self._base_loss(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self._mixed(self.pair.log_sf, np.where(np.isfinite(u), u, 0.0), measure)
        # Below the floor every continuous mass lies above t.
        below = self._mixed(self.pair.log_sf, np.array(-np.inf), measure)
        log_sf: FloatArray = np.where(np.isfinite(u), out, below)
        return log_sf


def poisson_subsampled(pair: Pair, sampling_probability: float) -> tuple[Pair, Pair]:
    """(remove pair, add pair) of Poisson sampling with the given rate under add/remove neighbours."""
    mixture = MixturePair(pair, sampling_probability)
    return (mixture, reverse(mixture))


def sampled_without_replacement(pair: Pair, sample_size: int, source_size: int) -> tuple[Pair, Pair]:
    """(pair, reverse pair) of sampling m of n records without replacement, replace-one neighbours.

    ``pair`` must dominate the base mechanism under replace-one.
    """
    sample_size = check.integer_scalar("sample_size", sample_size, 1)
    source_size = check.integer_scalar("source_size", source_size, 1)
    if sample_size > source_size:
        raise ValueError(f"sample_size must be <= source_size (got {sample_size} > {source_size})")
    mixture = MixturePair(pair, sample_size / source_size)
    return (mixture, reverse(mixture))
