r"""Dominating pairs (P, Q) described by the law of their privacy loss L = log(dP/dQ).

A pair (P, Q) dominates a mechanism M under a neighbouring relation when the
hockey-stick divergence :math:`H_{e^\varepsilon}(P\|Q) \ge H_{e^\varepsilon}(M(D)\|M(D'))`
for every ε ∈ ℝ and every ordered pair of neighbours (Zhu, Dong & Wang 2022,
"Optimal accounting of differential privacy via characteristic function",
Def. 7). Then δ(ε) = E_P[(1 − e^{ε−L})_+] (with L = +∞ contributing 1) bounds
the δ of M at ε, and the product of dominating pairs dominates the composition.

Every pair here exposes the law of L under P and under Q as

* atoms: ``(loss, p_mass, q_mass)`` arrays, ``loss`` possibly +∞ (mass of P
  where Q vanishes) or −∞ (mass of Q where P vanishes);
* a continuous part: :meth:`Pair.log_cdf` and :meth:`Pair.log_sf` give
  log P_c(L ≤ t) and log P_c(L > t) (``measure='P'``) or the same under Q,
  and :meth:`Pair.support` the interval outside which they vanish.

Accuracy premise (used by :mod:`dpmech.pld.discretization`): every computed
log-probability of the continuous part is within
``LOG_ERROR * max(1, |log F|)`` of the exact one. scipy's ``log_ndtr`` is
accurate to a few ulps; the premise leaves four orders of magnitude for the
rounding of arguments and is checked against 50-digit mpmath in
``tests/dpmech/pld/test_pairs.py``.

Symmetric pairs (Gaussian, Laplace, randomized response) are their own
reverse; :func:`reverse` gives the (Q, P) pair of any other.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .. import validation as check

FloatArray = NDArray[np.float64]
# (loss, p-side, q-side) arrays of a pair's atoms: masses (:meth:`Pair.atoms`) or their logs (:meth:`Pair.log_atoms`).
Atoms = tuple[FloatArray, FloatArray, FloatArray]
# (left, right, log P-mass) of the cells sketching the law of L, and the log P-mass at +∞
# (:func:`~dpmech.pld.discretization.coarse_law`).
CoarseLaw = tuple[FloatArray, FloatArray, FloatArray, float]

LOG_ERROR = 1e-12
_EMPTY: FloatArray = np.empty(0)


class Pair:
    """A dominating pair (P, Q); subclasses describe the law of L = log(dP/dQ)."""

    symmetric: bool = False

    def atoms(self) -> Atoms:
        """(loss, p_mass, q_mass) of the atoms of L; losses may be ±∞."""
        return _EMPTY, _EMPTY, _EMPTY

    def log_atoms(self) -> Atoms:
        """(loss, log p_mass, log q_mass) of the atoms: a mass below the smallest double keeps its log
        (a Q-mass e^{−l}·p at a large loss l must not become 0, which would make the loss infinite)."""
        loss, p, q = self.atoms()
        with np.errstate(divide="ignore"):
            return loss, np.log(p), np.log(q)

    def support(self) -> tuple[float, float]:
        """(low, high): the continuous part of L lives in this interval."""
        return (0.0, 0.0)

    def has_continuous_part(self) -> bool:
        return False

    def log_cdf(self, t: ArrayLike, measure: str) -> FloatArray:
        """log P_c(L ≤ t) or log Q_c(L ≤ t) of the continuous part (sub-probability)."""
        raise NotImplementedError

    def log_sf(self, t: ArrayLike, measure: str) -> FloatArray:
        """log P_c(L > t) or log Q_c(L > t) of the continuous part."""
        raise NotImplementedError

    def bounding_pairs(self, step: float, tilt: float, tail: float, window: tuple[float, float]) -> tuple[Pair, Pair]:
        """(upper, lower) pairs that :func:`~dpmech.pld.discretization.discretize` takes the upper measure
        and the lower buckets from at the loss step ``step``, tilt ``tilt`` and loss window ``window`` = (low, high)
        (outside which it moves the upper measure's mass up to ``low`` or to +∞ and drops the buckets'): the upper
        one dominating this pair, the lower one dominated by it, the upper one leaving about ``tail`` of P-mass
        beyond what it bounds. A pair
        whose law of L is known is its own; a pair whose law is only bounded (random allocation, whose
        loss is the log of a sum of lognormals: :mod:`dpmech.pld.allocation`) supplies two."""
        return self, self

    def sketch(self) -> CoarseLaw | None:
        """A coarse sketch of the law of L in the form of :func:`~dpmech.pld.discretization.coarse_law`, or None
        to let that function build it from the atoms and the continuous part (used only to tilt and to
        place windows, never as a bound)."""
        return None


def _log_expm1(x: ArrayLike) -> FloatArray:
    """log(e^x − 1) for x >= 0 without overflow (−∞ at 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        result: FloatArray = np.where(x > 30.0, x + np.log1p(-np.exp(-np.minimum(x, 1e300))),
                                      np.log(np.expm1(np.minimum(x, 30.0))))
    return result


def _measure(measure: str) -> str:
    return check.choice("measure", measure, ("P", "Q"))


class GaussianPair(Pair):
    r"""P = N(μ, 1), Q = N(0, 1): L = μx − μ²/2 is N(μ²/2, μ²) under P and N(−μ²/2, μ²) under Q.

    Dominates the Gaussian mechanism with sensitivity Δ and noise σ, μ = Δ/σ,
    under the relation Δ was computed for (Balle & Wang 2018, Thm. 8). Symmetric.
    """

    symmetric = True

    def __init__(self, mu: float) -> None:
        self.mu = check.positive("mu", mu)

    def __repr__(self) -> str:
        return f"GaussianPair(mu={self.mu!r})"

    def has_continuous_part(self) -> bool:
        return True

    def support(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def _standardised(self, t: ArrayLike, measure: str) -> FloatArray:
        mean = 0.5 * self.mu * self.mu * (1.0 if _measure(measure) == "P" else -1.0)
        return (np.asarray(t, dtype=float) - mean) / self.mu

    def log_cdf(self, t: ArrayLike, measure: str) -> FloatArray:
        # scipy ships no types: the annotation states what log_ndtr returns for a float array.
        result: FloatArray = special.log_ndtr(self._standardised(t, measure))
        return result

    def log_sf(self, t: ArrayLike, measure: str) -> FloatArray:
        result: FloatArray = special.log_ndtr(-self._standardised(t, measure))
        return result


class LaplacePair(Pair):
    r"""P = Lap(1, b), Q = Lap(0, b) with b = scale/sensitivity: the Laplace mechanism's pair.

    L = (|x| − |x − 1|)/b ∈ [−1/b, 1/b] has atoms P(L = 1/b) = ½, Q(L = 1/b) = ½e^{−1/b},
    P(L = −1/b) = ½e^{−1/b}, Q(L = −1/b) = ½, and on (−1/b, 1/b) the continuous
    parts P_c(L ≤ t) = ½e^{t/2 − 1/(2b)} − ½e^{−1/b}, Q_c(L ≤ t) = ½ − ½e^{−t/2 − 1/(2b)}
    (x = (bt + 1)/2 on (0, 1)). Dominates the Laplace mechanism under the relation the
    sensitivity was computed for (Koskela et al. 2021; dp_accounting's LaplacePrivacyLoss). Symmetric.
    """

    symmetric = True

    def __init__(self, scale: float) -> None:
        self.scale = check.positive("scale", scale)
        self._edge = 1.0 / self.scale

    def __repr__(self) -> str:
        return f"LaplacePair(scale={self.scale!r})"

    def has_continuous_part(self) -> bool:
        return True

    def atoms(self) -> Atoms:
        half_tail = 0.5 * math.exp(-self._edge)
        # 1/b is known to half an ulp: the atoms sit on the double just outside it, the larger loss.
        edge = math.nextafter(self._edge, math.inf)
        return np.array([-self._edge, edge]), np.array([half_tail, 0.5]), np.array([0.5, half_tail])

    def log_atoms(self) -> Atoms:
        loss, _, _ = self.atoms()
        log_tail = math.log(0.5) - self._edge
        return loss, np.array([log_tail, math.log(0.5)]), np.array([math.log(0.5), log_tail])

    def support(self) -> tuple[float, float]:
        return (-self._edge, self._edge)

    def _clipped(self, t: ArrayLike) -> FloatArray:
        clipped: FloatArray = np.clip(np.asarray(t, dtype=float), -self._edge, self._edge)
        return clipped

    def log_cdf(self, t: ArrayLike, measure: str) -> FloatArray:
        t = self._clipped(t)
        with np.errstate(divide="ignore"):
            if _measure(measure) == "P":
                # ½e^{−1/b}(e^{(t + 1/b)/2} − 1)
                return math.log(0.5) - self._edge + _log_expm1(0.5 * (t + self._edge))
            # ½(1 − e^{−(t + 1/b)/2})
            return math.log(0.5) + np.log(-np.expm1(-0.5 * (t + self._edge)))

    def log_sf(self, t: ArrayLike, measure: str) -> FloatArray:
        t = self._clipped(t)
        with np.errstate(divide="ignore"):
            if _measure(measure) == "P":
                # ½(1 − e^{(t − 1/b)/2})
                return math.log(0.5) + np.log(-np.expm1(0.5 * (t - self._edge)))
            # ½e^{−1/b}(e^{(1/b − t)/2} − 1)
            return math.log(0.5) - self._edge + _log_expm1(0.5 * (self._edge - t))


class FinitePair(Pair):
    """P and Q on finitely many outcomes, given as probability vectors of the same length.

    Outcomes where Q is 0 and P is not give L = +∞ (a δ that no ε removes);
    outcomes where P is 0 give L = −∞. Each vector must sum to 1 within 1e-12.
    ``log_p`` and ``log_q`` (both or neither), the logarithms of p and q, keep masses below
    the smallest double (randomized response at ε > 745): the losses are then log_p − log_q,
    and p and q, when not given too, e^log_p and e^log_q. ``loss`` (with the logs) gives the losses
    log(p_i/q_i) where the caller knows them better than that difference: an ε of 1e-206 is lost in
    log_p − log_q ≈ −0.69 − (−0.69 − ε), and a loss rounded to 0 makes δ(0) = 0 for a mechanism whose
    δ(0) is ε/2.
    """

    def __init__(self, p: ArrayLike | None = None, q: ArrayLike | None = None, *, log_p: ArrayLike | None = None,
                 log_q: ArrayLike | None = None, loss: ArrayLike | None = None) -> None:
        if (log_p is None) != (log_q is None):
            raise ValueError("log_p and log_q must be given together")
        logs: tuple[FloatArray, FloatArray] | None = None
        if log_p is not None:
            logs = np.atleast_1d(check.real_array("log_p", log_p)), np.atleast_1d(check.real_array("log_q", log_q))
            if not (np.all(logs[0] <= 0) and np.all(logs[1] <= 0)):
                raise ValueError("log_p and log_q must be <= 0, logarithms of probabilities (got a positive or NaN entry)")
            if logs[0].shape != logs[1].shape:
                raise ValueError(f"log_p and log_q must have the same length (got {logs[0].shape} and {logs[1].shape})")
            if p is None:
                p, q = np.exp(logs[0]), np.exp(logs[1])
        p_mass = np.atleast_1d(check.real_at_least("p", p, 0.0)).astype(float)
        q_mass = np.atleast_1d(check.real_at_least("q", q, 0.0)).astype(float)
        if p_mass.ndim != 1 or p_mass.shape != q_mass.shape:
            raise ValueError(f"p and q must be vectors of the same length (got shapes {p_mass.shape} and {q_mass.shape})")
        for name, vector in (("p", p_mass), ("q", q_mass)):
            if abs(math.fsum(vector) - 1.0) > 1e-12:
                raise ValueError(f"{name} must sum to 1 within 1e-12 (got {math.fsum(vector)!r})")
        if loss is not None and (logs is None or p_mass.shape != np.shape(loss)):
            raise ValueError("loss must be given with log_p and log_q, one entry per outcome")
        if logs is None:
            with np.errstate(divide="ignore"):
                logs = np.log(p_mass), np.log(q_mass)
        log_p_mass, log_q_mass = logs
        with np.errstate(invalid="ignore"):
            difference = log_p_mass - log_q_mass
        if loss is not None:
            given_loss = np.asarray(loss, dtype=float)
            both = np.isfinite(difference)
            # Each log is rounded to about an ulp of its magnitude: the given loss must agree within that.
            slack = 1e-12 * (1.0 + np.abs(np.where(both, log_p_mass, 0.0)) + np.abs(np.where(both, log_q_mass, 0.0)))
            agrees = np.where(both, np.abs(given_loss - np.where(both, difference, 0.0)) <= slack, given_loss == difference)
            if not np.all(agrees | ~((log_p_mass > -np.inf) | (log_q_mass > -np.inf))):
                raise ValueError("loss must equal log_p − log_q within its rounding (got a loss off by more)")
            difference = given_loss
        keep = (log_p_mass > -np.inf) | (log_q_mass > -np.inf)
        self.p, self.q = p_mass[keep], q_mass[keep]
        self.log_p, self.log_q = log_p_mass[keep], log_q_mass[keep]
        self.loss = difference[keep]
        self.symmetric = bool(np.array_equal(np.sort(self.loss), np.sort(-self.loss))) and bool(
            np.array_equal(np.sort(self.p), np.sort(self.q))
        )

    def __repr__(self) -> str:
        return f"FinitePair(p={self.p.tolist()!r}, q={self.q.tolist()!r})"

    def atoms(self) -> Atoms:
        return self.loss, self.p, self.q

    def log_atoms(self) -> Atoms:
        return self.loss, self.log_p, self.log_q


def randomized_response_pair(epsilon: float, categories: int = 2) -> FinitePair:
    r"""K-ary randomized response with parameter ε: the worst pair of its outputs.

    Reports the true category with probability e^ε/(e^ε + K − 1) and each other one
    with 1/(e^ε + K − 1) (Kairouz, Oh & Viswanath 2016). Its two inputs x ≠ x' give
    P = (e^ε, 1, 1, …)/Z and Q = (1, e^ε, 1, …)/Z, which dominate every pair of
    neighbours (each changes one user's input). K = 2 is also the worst pair of any
    ε-DP mechanism (Kairouz et al. 2015, Thm. 2.1).
    """
    epsilon = check.non_negative("epsilon", epsilon)
    categories = check.integer_scalar("categories", categories, 2)
    # In logs, from e^{−ε}, so that a large ε neither overflows nor underflows the other outcomes' mass.
    log_normaliser = math.log1p((categories - 1) * math.exp(-epsilon))
    log_p = np.full(categories, -epsilon - log_normaliser)
    log_q = log_p.copy()
    log_p[0] = log_q[1] = -log_normaliser
    loss = np.zeros(categories)
    loss[0], loss[1] = epsilon, -epsilon
    return FinitePair(log_p=log_p, log_q=log_q, loss=loss)


def approximate_dp_pair(epsilon: float, delta: float) -> FinitePair:
    r"""The dominating pair of every (ε, δ)-DP mechanism (Kairouz et al. 2015, Thm. 2.1; Zhu et al. 2022, Prop. 8).

    P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0), Q = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ).
    """
    epsilon = check.non_negative("epsilon", epsilon)
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    log_delta = math.log(delta) if delta > 0 else -math.inf
    log_high = math.log1p(-delta) - math.log1p(math.exp(-epsilon))
    log_low = log_high - epsilon
    high = (1.0 - delta) / (1.0 + math.exp(-epsilon))
    low = (1.0 - delta) - high
    # The masses as before (δ exact), their logs for the losses and for masses below the smallest double.
    return FinitePair(np.array([delta, high, low, 0.0]), np.array([0.0, low, high, delta]),
                      log_p=np.array([log_delta, log_high, log_low, -math.inf]),
                      log_q=np.array([-math.inf, log_low, log_high, log_delta]),
                      loss=np.array([math.inf, epsilon, -epsilon, -math.inf]))


class ReversedPair(Pair):
    """The pair (Q, P) of a pair (P, Q): its loss is −L, distributed under Q."""

    def __init__(self, pair: Pair) -> None:
        if not isinstance(pair, Pair):
            raise ValueError(f"pair must be a dpmech.pld Pair (got {type(pair).__name__})")  # noqa: TRY004 - dpmech refuses bad input with ValueError
        self.pair = pair

    def __repr__(self) -> str:
        return f"ReversedPair({self.pair!r})"

    def has_continuous_part(self) -> bool:
        return self.pair.has_continuous_part()

    def atoms(self) -> Atoms:
        loss, p, q = self.pair.atoms()
        return -loss, q, p

    def log_atoms(self) -> Atoms:
        loss, log_p, log_q = self.pair.log_atoms()
        return -loss, log_q, log_p

    def support(self) -> tuple[float, float]:
        low, high = self.pair.support()
        return (-high, -low)

    @staticmethod
    def _other(measure: str) -> str:
        return "Q" if _measure(measure) == "P" else "P"

    def log_cdf(self, t: ArrayLike, measure: str) -> FloatArray:
        # The continuous part has no atoms, so P(−L ≤ t) = P(L ≥ −t) = P(L > −t).
        return self.pair.log_sf(-np.asarray(t, dtype=float), self._other(measure))

    def log_sf(self, t: ArrayLike, measure: str) -> FloatArray:
        return self.pair.log_cdf(-np.asarray(t, dtype=float), self._other(measure))


def reverse(pair: Pair) -> Pair:
    """The (Q, P) pair: itself for a symmetric pair."""
    if not isinstance(pair, Pair):
        raise ValueError(f"pair must be a dpmech.pld Pair (got {type(pair).__name__})")  # noqa: TRY004 - dpmech refuses bad input with ValueError
    if pair.symmetric:
        return pair
    if isinstance(pair, ReversedPair):
        return pair.pair
    return ReversedPair(pair)
