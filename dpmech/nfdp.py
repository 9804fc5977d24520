r"""NFDP: "noise-free differential privacy" by subsampling (FedMD-NFDP, Sun & Lyu, IJCAI 2021).

A party trains only on k of its n records, drawn uniformly without or with
replacement, and adds no noise. The seed states:

* Theorem 1 (without replacement): (ln((n+1)/(n+1−k)), k/n)-DP;
* Theorem 2 (with replacement): (k·ln((n+1)/n), 1 − ((n−1)/n)^k)-DP;
* Lemma 1: sampling with replacement is "consistently more private" for
  every n > 0 and 0 < k <= n.

What holds (checked by exact enumeration in tests/dpmech/test_nfdp.py, for
the worst downstream learner, one that publishes the sample):

* Relation. The ε of both theorems comes from the likelihood ratio between a
  dataset of n records and one of n+1, i.e. add/remove-one with n the size
  of the smaller dataset. With that reading the stated (ε, δ) hold in both
  directions. They also hold when n is the larger dataset's size, and under
  replace-one, because in every case the total-variation distance between
  the two samples is at most the stated δ (coupling: the outputs differ only
  when the differing record is drawn), and (0, TV)-DP implies (ε, TV)-DP
  for every ε >= 0.
* The guarantee is vacuous. Under add/remove the mechanism is already
  (0, k/(n+1))-DP without replacement and (0, 1 − (n/(n+1))^k)-DP with it;
  under replace-one (0, k/n) and (0, 1 − ((n−1)/n)^k). The whole guarantee
  sits in δ, and δ >= 1/n for every k >= 1 (k/n >= 1/n, and
  1 − (1 − 1/n)^k >= 1/n). The mechanism "publish the k sampled records in
  the clear" meets the same (ε, δ), so it permits total disclosure of the
  sampled records (for example by memorisation). A meaningful δ is much
  smaller than 1/n. Every :class:`NfdpGuarantee` therefore carries a warning,
  and :func:`nfdp_guarantee` also raises it as a
  :class:`~dpmech.VacuousGuaranteeWarning`.
* Lemma 1 holds in the weak sense: ε_with <= ε_without and
  δ_with <= δ_without for all 1 <= k <= n, with equality of both at k = 1
  (so "more private" is not strict there). Proof for ε: the ratio
  ((n+1)/(n+1−k)) / ((n+1)/n)^k equals 1 at k = 1 and is multiplied by
  n(n+1−k)/((n−k)(n+1)) > 1 at each step k -> k+1; for δ it is Bernoulli's
  inequality (1 − 1/n)^k >= 1 − k/n.
* The seed's Table 2 reports ε in base-10 logarithms: its rows with k = n
  (FEDMNIST n = 2880: ε = 0.4342; CIFAR-10 n = 300: 0.4336) and its other
  CIFAR-10 rows (n = 300, k = 60, 120) equal k·log10((n+1)/n), while
  Theorem 2 gives k·ln((n+1)/n) = 0.9998 and 0.9983 for the first two. The
  table understates ε by a factor ln 10 ≈ 2.30; δ matches Theorem 2.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from . import validation as check
from .events import ADD_REMOVE_ONE, ApproximateDpEvent, NoGuaranteeEvent
from .privacy_warnings import VacuousGuaranteeWarning

# ε and δ are moved up by this many units in the last place: the float
# evaluation errs by at most about 3 ulps, and the guarantee must never be
# understated.
_ROUND_UP_ULPS = 8


_VACUOUS = (
    "FedMD-NFDP's (epsilon, delta) is vacuous: delta >= 1/n, and publishing the k sampled records in the "
    "clear satisfies the same guarantee (NfdpGuarantee.warning gives this party's numbers)"
)


def _round_up(value: float) -> float:
    return value + _ROUND_UP_ULPS * math.ulp(value)


@dataclass(frozen=True)
class NfdpGuarantee:
    """The (ε, δ) that FedMD-NFDP's Theorem 1 or 2 states for one party, with a warning.

    ``warning`` is never empty: δ >= 1/n always holds for NFDP (see the module
    docstring), and publishing the k sampled records in the clear meets the
    same (ε, δ).
    """

    epsilon: float
    delta: float
    n: int
    k: int
    replacement: bool
    warning: str

    def __post_init__(self) -> None:
        check.stated_epsilon_delta(self.epsilon, self.delta)
        if not math.isfinite(self.epsilon):
            # Theorems 1 and 2 always state a finite ε; an infinite one is no record of them.
            raise ValueError(f"epsilon must be finite, as FedMD-NFDP's Theorems 1 and 2 state it (got {self.epsilon!r})")
        check.integer_scalar("n", self.n, 1)
        check.integer_scalar("k", self.k, 1)
        check.boolean("replacement", self.replacement)
        if not isinstance(self.warning, str):
            raise ValueError(f"warning must be a string (got {type(self.warning).__name__})")

    @property
    def event(self) -> NoGuaranteeEvent | ApproximateDpEvent:
        """Ledger event: the stated (ε, δ) under add/remove-one, or no guarantee when δ = 1."""
        if self.delta >= 1.0:
            return NoGuaranteeEvent(
                reason=f"NFDP with n = {self.n}, k = {self.k} (replacement={self.replacement}) has delta = 1"
            )
        return ApproximateDpEvent(
            self.epsilon,
            self.delta,
            neighbouring=ADD_REMOVE_ONE,
            description=(
                f"FedMD-NFDP subsample of k = {self.k} of n = {self.n} "
                f"({'with' if self.replacement else 'without'} replacement); {self.warning}"
            ),
        )


# n and k beyond 2**53 are not held exactly by a double, and an index array of k entries must exist.
MAX_SIZE = 2**53


def _validated_sample_size(n: int, k: int, replacement: bool) -> tuple[int, int, bool]:
    n = check.integer_scalar("n", n, 1)
    k = check.integer_scalar("k", k, 1)
    replacement = check.boolean("replacement", replacement)
    for name, value in (("n", n), ("k", k)):
        if value > MAX_SIZE:
            raise ValueError(f"{name} must be an integer in [1, 2**53] (got {value!r})")
    if not replacement and k > n:
        raise ValueError(f"k must be an integer in [1, n] = [1, {n}] when sampling without replacement (got {k!r})")
    return n, k, replacement


def nfdp_guarantee(n: int, k: int, replacement: bool) -> NfdpGuarantee:
    """(ε, δ) of FedMD-NFDP Theorem 1 (without replacement) or Theorem 2 (with replacement).

    * without replacement: ε = ln((n+1)/(n+1−k)), δ = k/n, for 1 <= k <= n;
    * with replacement: ε = k·ln((n+1)/n), δ = 1 − ((n−1)/n)^k, for k >= 1.

    The values are valid upper bounds under add/remove-one (and under
    replace-one), for any learner trained on the sample, but vacuous: see
    the module docstring, which also gives the tight (0, δ) values. ε and δ
    are rounded up by a few ulps, never down. Every call warns with a
    :class:`~dpmech.VacuousGuaranteeWarning` (the text of ``warning``), so
    that ``-W error::dpmech.PrivacyWarning`` stops a pipeline that relies on it.

    Args:
        n: number of records of the party, n >= 1.
        k: subsample size, k >= 1, and k <= n without replacement.
        replacement: True for i.i.d. draws, False for a uniform k-subset.
    """
    n, k, replacement = _validated_sample_size(n, k, replacement)
    if replacement:
        epsilon = k * math.log1p(1.0 / n)
        delta = 1.0 if n == 1 else -math.expm1(k * math.log1p(-1.0 / n))
    else:
        epsilon = math.log1p(k / (n + 1 - k))
        delta = k / n
    epsilon = _round_up(epsilon)
    delta = min(1.0, _round_up(delta))
    warning = (
        f"delta = {delta:.4g} >= 1/n = {1.0 / n:.4g}: publishing the k = {k} sampled records in the clear "
        f"satisfies the same (epsilon, delta), so this guarantee protects almost nothing; a meaningful "
        f"delta is much smaller than 1/n"
    )
    # One text for every (n, k), so that Python's default filter shows it once per call site
    # rather than once per party; the numbers are in ``warning``.
    warnings.warn(_VACUOUS, VacuousGuaranteeWarning, stacklevel=2)
    return NfdpGuarantee(epsilon, delta, n, k, replacement, warning)


def nfdp_subsample(n: int, k: int, replacement: bool, rng: np.random.Generator | int) -> NDArray[np.int64]:
    """Indices of the NFDP subsample: k of range(n), uniform without replacement or i.i.d. with it.

    Args:
        n, k, replacement: as in :func:`nfdp_guarantee`.
        rng: ``numpy.random.Generator`` or an integer seed.

    Returns:
        int64 array of k indices in [0, n); distinct when ``replacement`` is False.
    """
    n, k, replacement = _validated_sample_size(n, k, replacement)
    generator = check.generator("rng", rng)
    if replacement:
        return generator.integers(0, n, size=k)
    return generator.choice(n, size=k, replace=False).astype(np.int64)
