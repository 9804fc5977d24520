r"""Rényi, zCDP and μ-GDP claims checked exactly for finite mechanisms and by quadrature for densities.

An (ε, δ) check of a converted claim can hide a bug: a ρ-zCDP claim turned
into (ε, δ) is loose, so σ 10 % too small still meets the converted pair.
Checking the claim itself does not lose that slack:

* (α, ε)-RDP: D_α(M(D) ‖ M(D')) <= ε for both orders of every pair, with
  D_α(P ‖ Q) = log(Σ p^α q^{1−α})/(α − 1) (Mironov 2017, Def. 4);
* ρ-zCDP: D_α <= ρα for every α > 1 (Bun & Steinke 2016, Def. 1.1);
  checked at the orders given, so a pass is a pass at those orders only and
  a failure at any order refutes the claim;
* μ-GDP: δ(ε) <= δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) for every ε
  (Dong, Roth & Su 2022, Cor. 2.13); checked at the ε given.

Finite mechanisms are given as in :mod:`.exact` (dataset -> distribution);
continuous laws on the line as scipy.stats frozen distributions (certified
lower bounds from a finite partition, :func:`partition_renyi_lower_bound`);
densities as log-density callables x -> log p(x), as in :mod:`.numeric`,
which only quadrature reaches: scipy's adaptive quadrature has no proven error
bound, so their values are estimates, and :class:`ClaimCheck` and every
message say so (``basis``, ``certified``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate, special

from .. import validation as check
from ..directed_rounding import format_down
from ..gaussian import gaussian_delta
from .exact import Distribution, DpViolation, FiniteMechanism, _aligned, _both_directions, dataset_pair, privacy_profile
from .numeric import _SCAN, LogDensity, density_hockey_stick

_PIECES = np.array([-60.0, -20.0, -8.0, -3.0, -1.0, 0.0, 1.0, 3.0, 8.0, 20.0, 60.0])
# The orders at which zCDP claims are checked: a pass holds at these orders only.
RENYI_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0)
# Relative slack on a comparison of a computed divergence with a claim: rounding of the
# caller's probabilities, not a privacy margin.
RELATIVE_SLACK = 1e-9


def _order(order: float) -> float:
    order = check.real_at_least("order", order, 1.0, inclusive=False)
    if np.ndim(order):
        raise ValueError("order must be a single number > 1 (got an array)")
    return float(order)


def _renyi_vectors(p: NDArray[np.float64], q: NDArray[np.float64], order: float) -> float:
    support = p > 0
    if np.any(support & (q == 0)):
        return math.inf
    with np.errstate(divide="ignore"):
        terms = order * np.log(p[support]) + (1.0 - order) * np.log(q[support])
    return float(special.logsumexp(terms)) / (order - 1.0)


def renyi_divergence(first: Distribution, second: Distribution, order: float) -> float:
    """D_α(P ‖ Q) of two finite distributions (mappings outcome -> probability, or probability vectors); inf when P ≪ Q fails."""
    order = _order(order)
    _, p, q = _aligned(first, second)
    return _renyi_vectors(p, q, order)


def renyi_profile(mechanism: FiniteMechanism, pair: tuple[Any, Any], order: float) -> float:
    """max(D_α(M(D) ‖ M(D')), D_α(M(D') ‖ M(D))) for a finite mechanism on one pair."""
    order = _order(order)
    _, p, q = _both_directions(mechanism, pair)
    return max(_renyi_vectors(p, q, order), _renyi_vectors(q, p, order))


def _orders(orders: Sequence[float]) -> NDArray[np.float64]:
    values = check.real_at_least("orders", orders, 1.0, inclusive=False)
    values = np.atleast_1d(values).astype(np.float64)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("orders must be a non-empty list of numbers > 1")
    return values


# What a checked value is: how it was computed, and the relation it has to the truth.
EXACT, CERTIFIED, ESTIMATE = "exact", "certified lower bound", "quadrature estimate (not certified)"
_RELATIONS = {EXACT: "=", CERTIFIED: ">=", ESTIMATE: "~"}
# Pairs of several kinds: the result is only as strong as its weakest value.
_STRENGTH = (EXACT, CERTIFIED, ESTIMATE)


def _shown(value: float, basis: str) -> str:
    """A value with its relation to the truth: a certified lower bound rounded down, so it never claims more."""
    return f"{_RELATIONS[basis]} {format_down(value, 6) if basis == CERTIFIED else f'{value:.6g}'}"


@dataclass(frozen=True)
class ClaimCheck:
    """What :func:`assert_zcdp` or :func:`assert_gdp` measured on a claim they did not refute.

    ``largest`` is max D_α/α over the pairs, both orders and the orders checked (zCDP), or
    max δ(ε) − δ_μ(ε) over the pairs and the ε checked (GDP). ``basis`` says what the values are:
    ``"exact"`` (finite laws), ``"certified lower bound"`` (scipy.stats laws: a finite partition, so a
    pass is a pass of a lower bound, not a proof of the claim) or ``"quadrature estimate (not certified)"``
    (log-density callables: scipy's adaptive quadrature has no proven error bound).
    """

    claim: str
    largest: float
    basis: str

    @property
    def certified(self) -> bool:
        """Whether the values are exact or proven lower bounds (False for quadrature estimates)."""
        return self.basis != ESTIMATE

    def statement(self) -> str:
        name = "max D_alpha/alpha" if "zCDP" in self.claim else "max delta(eps) - delta_mu(eps)"
        return f"{self.claim} not refuted at the points checked: {name} {_shown(self.largest, self.basis)} ({self.basis})"


def assert_zcdp(mechanism: Callable[[Any], Any], pairs: Iterable[tuple[Any, Any]], rho: float,
                orders: Sequence[float] = RENYI_ORDERS) -> ClaimCheck:
    """Raise :class:`DpViolation` when some pair has D_α > ρα at one of ``orders``; returns the largest D_α/α seen.

    ``mechanism`` maps a dataset to a finite distribution (as in :mod:`.exact`); to a continuous law on
    the line given as a scipy.stats frozen distribution, whose D_α is then the certified lower bound of
    :func:`partition_renyi_lower_bound` (a failure refutes the claim; a pass is a pass of that lower bound
    only, not a proof, since discretising lowers the divergence); or to a log-density callable
    x -> log p(x) on the line, whose D_α is :func:`density_renyi_divergence`'s quadrature (centre 0, scale 1),
    an estimate: its violation and its :class:`ClaimCheck` say "quadrature estimate (not certified)".
    """
    rho = float(check.non_negative("rho", rho))
    worst, basis = 0.0, EXACT
    for pair in pairs:
        for order in _orders(orders):
            divergence, kind = _pair_renyi(mechanism, pair, order)
            worst, basis = max(worst, divergence / order), max(basis, kind, key=_STRENGTH.index)
            if divergence > rho * order * (1.0 + RELATIVE_SLACK):
                raise DpViolation(
                    f"not {rho:g}-zCDP: on pair {pair!r}, D_{order:g} {_shown(divergence, kind)} > rho * alpha = "
                    f"{rho * order:.6g} ({kind})",
                    epsilon=float(order), delta=rho * order, measured_delta=divergence, witness=(pair,), direction="both",
                )
    return ClaimCheck(f"{rho:g}-zCDP", worst, basis)


def gdp_delta(epsilon: float, mu: float) -> float:
    """δ_μ(ε) of μ-GDP, the Gaussian pair at distance μ with unit noise (Dong, Roth & Su 2022, Cor. 2.13)."""
    return float(gaussian_delta(epsilon, 1.0, mu))


def assert_gdp(mechanism: Callable[[Any], Any], pairs: Iterable[tuple[Any, Any]], mu: float,
               epsilons: Sequence[float] = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0)) -> ClaimCheck:
    """Raise :class:`DpViolation` when some pair has δ(ε) > δ_μ(ε) at one of ``epsilons``; returns the largest δ(ε) − δ_μ(ε).

    ``mechanism`` as for :func:`assert_zcdp`: for scipy.stats frozen distributions δ(ε) is the certified
    lower bound of :func:`partition_hockey_stick_lower_bound`; for log-density callables it is
    :func:`.numeric.density_hockey_stick`'s quadrature, an estimate, labelled so.
    """
    mu = float(check.positive("mu", mu))
    worst, basis = -math.inf, EXACT
    for pair in pairs:
        for epsilon in np.atleast_1d(check.non_negative("epsilons", epsilons)).astype(float):
            (measured, kind), allowed = _pair_profile(mechanism, pair, float(epsilon)), gdp_delta(float(epsilon), mu)
            worst, basis = max(worst, measured - allowed), max(basis, kind, key=_STRENGTH.index)
            if measured > allowed * (1.0 + RELATIVE_SLACK) + 1e-15:
                raise DpViolation(
                    f"not {mu:g}-GDP: on pair {pair!r}, delta({epsilon:g}) {_shown(measured, kind)} > delta_mu = "
                    f"{allowed:.6g} ({kind})",
                    epsilon=float(epsilon), delta=allowed, measured_delta=measured, witness=(pair,), direction="both",
                )
    return ClaimCheck(f"{mu:g}-GDP", worst, basis)


def density_renyi_divergence(
    first_log_density: LogDensity, second_log_density: LogDensity, order: float, *, centre: float = 0.0, scale: float = 1.0
) -> float:
    """D_α(p ‖ q) of two densities on the line by quadrature of exp(α log p + (1 − α) log q).

    The integrand's peak is found on the scan grid of :mod:`.numeric`
    around ``centre`` (uniform over ±60 ``scale``, geometric to ±1e12); the
    integrand is shifted by its value there and integrated on pieces cut at
    0, ±1, ±3, ±8, ±20, ±60 ``scale`` from the peak and the two tails. The
    densities must be positive where the integrand matters.
    """
    order = _order(order)
    scale = float(check.positive("scale", scale))
    centre = float(check.real_array("centre", centre, "a single finite real number"))

    def log_integrand(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return order * np.asarray(first_log_density(x), dtype=float) + (1.0 - order) * np.asarray(second_log_density(x), dtype=float)

    # Locate the integrand's peak on the scan grid of :mod:`.numeric` (±60 scales fine, geometric to
    # ±1e12 scales): the tilted mass sits near α·(first centre) + (1 − α)·(second), far out for large α.
    grid = centre + scale * _SCAN
    values = log_integrand(grid)
    if not np.any(np.isfinite(values)) and not np.any(values == np.inf):
        return -math.inf
    peak_index = int(np.nanargmax(values))
    shift, peak = float(values[peak_index]), float(grid[peak_index])
    if not math.isfinite(shift):
        return math.inf

    def integrand(x: float) -> float:
        return float(np.exp(log_integrand(np.array([x]))[0] - shift))

    edges = peak + scale * _PIECES
    pieces = [integrate.quad(integrand, a, b, epsabs=0.0, epsrel=1e-11, limit=200)[0] for a, b in zip(edges[:-1], edges[1:])]
    pieces.append(integrate.quad(integrand, -np.inf, edges[0], epsabs=0.0, epsrel=1e-11, limit=200)[0])
    pieces.append(integrate.quad(integrand, edges[-1], np.inf, epsabs=0.0, epsrel=1e-11, limit=200)[0])
    return (shift + math.log(math.fsum(pieces))) / (order - 1.0)


# scipy.stats' cdf and sf are taken to be within this relative error (not proven: scipy documents no bound;
# its normal, Laplace and Student-t cdfs are within a few ulps). Cell masses are widened by it, outwards.
CDF_RELATIVE_ERROR = 1e-12
# Partition of the line for a continuous pair: cells cut at both laws' quantiles at these log-odds.
_UNDERFLOW = 1e-300
# Dense where the mass is (|log-odds| <= 12), sparse out to the far tails.
_LOG_ODDS = np.union1d(np.linspace(-600.0, 600.0, 6001), np.linspace(-12.0, 12.0, 4001))


class FrozenLaw(Protocol):
    """A law on the line with vectorised cdf, sf and ppf, as scipy.stats frozen distributions have them."""

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]: ...

    def sf(self, x: ArrayLike) -> NDArray[np.float64]: ...

    def ppf(self, q: ArrayLike) -> NDArray[np.float64]: ...


def _is_frozen(law: object) -> TypeGuard[FrozenLaw]:
    return all(hasattr(law, name) for name in ("cdf", "sf", "ppf"))


def partition_masses(
    first: FrozenLaw, second: FrozenLaw, edges: ArrayLike | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds on the two laws' masses of the cells of a partition of the line.

    Cells (−∞, e_1], (e_1, e_2], ..., (e_m, ∞) at the sorted ``edges`` (default: both laws' quantiles at
    log-odds −600..600, 6001 each, and 4001 more on −12..12); a cell's mass is a difference of cdf values on the left half-line and
    of sf values on the right (no cancellation in the tails), widened by ``CDF_RELATIVE_ERROR`` of each
    term plus 4 ulps, plus an absolute 1e-300 (underflow in the far tails). Returns (p_lower, p_upper, q_lower, q_upper), each clipped to [0, 1].
    """
    if not (_is_frozen(first) and _is_frozen(second)):
        raise ValueError("first and second must be scipy.stats frozen distributions (with cdf, sf and ppf)")
    if edges is None:
        levels = special.expit(_LOG_ODDS)
        edges = np.concatenate([first.ppf(levels), second.ppf(levels)])
    cut_points = np.unique(np.asarray(edges, dtype=float))
    cut_points = cut_points[np.isfinite(cut_points)]
    if cut_points.size == 0:
        raise ValueError("edges must hold at least one finite cut point")

    cuts = np.concatenate([[-np.inf], cut_points, [np.inf]])

    def bounds(law: FrozenLaw) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        cdf, sf = law.cdf(cuts), law.sf(cuts)
        left, right = cdf[1:] <= 0.5, sf[:-1] <= 0.5
        # Each cell from the smaller tail function: cdf differences left of the median, sf differences right of it.
        masses = np.where(left, cdf[1:] - cdf[:-1], np.where(right, sf[:-1] - sf[1:], 1.0 - cdf[:-1] - sf[1:]))
        sizes = np.where(left, cdf[1:] + cdf[:-1], np.where(right, sf[:-1] + sf[1:], 2.0))
        # Plus an absolute 1e-300: a tail value that underflowed (or lost its subnormal digits) is off by that much at most.
        errors = sizes * (CDF_RELATIVE_ERROR + 4.0 * np.finfo(float).eps) + _UNDERFLOW
        return np.clip(masses - errors, 0.0, 1.0), np.clip(masses + errors, 0.0, 1.0)

    p_lower, p_upper = bounds(first)
    q_lower, q_upper = bounds(second)
    return p_lower, p_upper, q_lower, q_upper


def partition_renyi_lower_bound(first: FrozenLaw, second: FrozenLaw, order: float, edges: ArrayLike | None = None) -> float:
    """A certified lower bound on D_α(P ‖ Q) of two laws on the line (scipy.stats frozen distributions).

    Post-processing to a finite partition lowers every Rényi divergence (van Erven & Harremoës 2014,
    Thm. 9, data processing), so D_α of the cells' laws bounds D_α(P ‖ Q) below. It is evaluated with
    every p_i lowered and q_i raised (both terms of p^α q^{1−α} then fall, as 1 − α < 0) by the cell
    bounds of :func:`partition_masses`, and the sum lowered by a relative 1e-12 for its rounding. Certified
    up to the assumption ``CDF_RELATIVE_ERROR`` on scipy's cdf and sf.
    """
    order = _order(order)
    p_lower, _, _, q_upper = partition_masses(first, second, edges)
    support = p_lower > 0
    if np.any(support & (q_upper == 0)):
        return math.inf
    with np.errstate(divide="ignore"):
        terms = order * np.log(p_lower[support]) + (1.0 - order) * np.log(q_upper[support])
    total = float(special.logsumexp(terms))
    # logsumexp's rounding: a few ulps of the largest |term|; lowered by 1e-12 of it (and of 1), then divided by α − 1 > 0.
    total -= 1e-12 * (1.0 + float(np.max(np.abs(terms))) if terms.size else 1.0)
    return total / (order - 1.0)


def partition_hockey_stick_lower_bound(first: FrozenLaw, second: FrozenLaw, epsilon: float, edges: ArrayLike | None = None) -> float:
    """A certified lower bound on the hockey-stick divergence sup_S P(S) − e^ε Q(S) of two laws on the line.

    The best union of the cells of :func:`partition_masses` (the cells where p_i > e^ε q_i), with p_i
    lowered and q_i raised, summed with math.fsum and lowered by 4 ulps of the p_i summed; an event is a
    post-processing, so its value is a lower bound (certified up to ``CDF_RELATIVE_ERROR``).
    """
    epsilon = float(check.non_negative("epsilon", epsilon))
    p_lower, _, _, q_upper = partition_masses(first, second, edges)
    gains = p_lower - math.exp(epsilon) * q_upper
    positive = gains > 0
    # Each gain is within a few ulps of p_i (exp, the product and the difference): 4 ulps of Σ p_i are taken off.
    return max(math.fsum(gains[positive]) - 4.0 * np.finfo(float).eps * math.fsum(p_lower[positive]), 0.0)


def _continuous_laws(mechanism: Callable[[Any], Any], pair: Any) -> tuple[str, tuple[Any, Any]] | tuple[None, None]:
    """The two laws of a pair and their kind: ("frozen", laws) for scipy.stats frozen distributions,
    ("density", laws) for log-density callables, (None, None) for anything else (finite laws)."""
    if not callable(mechanism):
        raise ValueError(f"mechanism must be a callable dataset -> distribution (got {mechanism!r})")
    dataset, neighbour = dataset_pair(pair)
    first, second = mechanism(dataset), mechanism(neighbour)
    if _is_frozen(first) and _is_frozen(second):
        return "frozen", (first, second)
    if callable(first) and callable(second):
        return "density", (first, second)
    return None, None


def _pair_value(
    mechanism: Callable[[Any], Any],
    pair: Any,
    parameter: float,
    certified: Callable[[FrozenLaw, FrozenLaw, float], float],
    estimated: Callable[[LogDensity, LogDensity, float], float],
    finite: Callable[[FiniteMechanism, Any, float], float],
) -> tuple[float, str]:
    """The larger of the pair's two orders' values and their basis: ``certified`` on scipy.stats laws (a
    certified lower bound), ``estimated`` on log-density callables (a quadrature estimate), else ``finite``
    on the finite laws (exact)."""
    kind, laws = _continuous_laws(mechanism, pair)
    if laws is None:
        return finite(mechanism, pair, parameter), EXACT
    compute = certified if kind == "frozen" else estimated
    first, second = laws
    return max(compute(first, second, parameter), compute(second, first, parameter)), CERTIFIED if kind == "frozen" else ESTIMATE


def _pair_renyi(mechanism: Callable[[Any], Any], pair: Any, order: float) -> tuple[float, str]:
    """max D_α over the pair's two orders, and its basis (exact, certified lower bound or quadrature estimate)."""
    return _pair_value(mechanism, pair, order, partition_renyi_lower_bound, density_renyi_divergence, renyi_profile)


def _pair_profile(mechanism: Callable[[Any], Any], pair: Any, epsilon: float) -> tuple[float, str]:
    """δ(ε) of the pair, and its basis (exact, certified lower bound or quadrature estimate)."""
    return _pair_value(mechanism, pair, epsilon, partition_hockey_stick_lower_bound, density_hockey_stick, privacy_profile)
