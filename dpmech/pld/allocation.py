r"""Random allocation of a Gaussian step: certified upper and lower pairs for one epoch.

In an epoch of t steps every record is used in exactly one step chosen uniformly at random, each
step releasing its batch's sum plus N(0, σ²). With μ = Δ/σ, Feldman & Shenfeld (2025, "Privacy
amplification by random allocation") show that Q = N(0, I_t) and P = (1/t) Σ_i N(μe_i, I_t)
dominate the epoch under add/remove neighbours, (P, Q) for the removal and (Q, P) for the addition.
With X_i = exp(μY_i − μ²/2), Y ∼ Q, the X_i are independent lognormals (log X ∼ N(−μ²/2, μ²) under
Q), E_Q[X_i] = 1, and dP/dQ = S := (1/t) Σ_i X_i: the remove loss is log S under P and the add loss
−log S under Q. Both δ(ε) = E_Q[(Π_j S_j − e^ε)_+] and E_Q[(1 − e^ε Π_j S_j)_+] of a composition of
epochs are convex in each S_j.

The law of a sum of lognormals has no closed form; this module gives two pairs whose laws are
sums on a lattice of step h (in X), computed by the engine's cyclic FFT power with its proven
round-off bound (:func:`~dpmech.pld.composition.cyclic_power`), and hands the engine an upper
pair and a lower pair for every step it asks for (:meth:`AllocationPair.bounding_pairs`).

**Upper (dominating, for every ε and any number of epochs).**

* Spread. Round each X_i to the lattice by mean-preserving randomised rounding: X̃ = (c+1)h with
  probability (X − ch)/h and ch otherwise, for X in [ch, (c+1)h]. Then E[X̃ | X] = X, so drawing X
  given X̃ maps (P̃, Q̃) (Q̃ the law of X̃, dP̃/dQ̃ = S̃ = (1/t) Σ X̃_i) to (P, Q): (P, Q) is a
  post-processing of (P̃, Q̃), whose likelihood ratio depends on X̃ only through S̃, so the law of S̃
  under Q̃ is a dominating pair in both directions. The Q-mass moved to (c+1)h from cell c is
  w_c = (M_c − ch·m_c)/h with m_c = Q(X ∈ cell), M_c = E_Q[X; cell] = P₁(X ∈ cell) (P₁ tilts X:
  log X ∼ N(+μ²/2, μ²)), both differences of normal CDFs.
* Remove: truncation. With A = {X_i <= T for all i}, T = Kh, the pair that keeps (P̃, Q̃) on A and
  replaces Aᶜ by an atom ⊤ (P-mass P(Aᶜ), Q-mass 0, loss +∞) and an atom ⊥ (Q-mass Q(Aᶜ), P-mass 0)
  dominates it: it is its post-processing (identity on A, ⊤ ↦ a draw from P̃ conditioned on Aᶜ, ⊥ ↦
  one from Q̃ conditioned on Aᶜ); ⊥ adds nothing to the remove direction's δ, and
  P(Aᶜ) <= P₁(X > T) + (t − 1)Q(X > T) (P = (1/t) Σ_i P_i, P_i tilting X_i only).
* Add: cap. The add direction's δ decreases in every S_j, so the Q-law of min(S̃, s_top) bounds it
  above; capping each X̃ at T = t·s_top (all of X > T at T) leaves that law unchanged (a capped sum is
  exact below T and at least T above). No truncation atom is needed.
* The engine's upper measure is a P-law of the loss, and more mass anywhere, or mass moved to a
  larger loss, only raises the composed δ. So every entry is taken on that side: cell masses
  from the pair's proven log-CDF bounds (:func:`~dpmech.pld.discretization._cell_log_masses`) on
  cells widened by the rounding of their log edges; the weights w_c enclosed with the rounding of
  their difference, and the end of the enclosure on the larger loss's side moved (remove: the upper
  end, to (c + 1)h; add: the lower end), which only adds mass and moves mass towards the larger loss
  (an entrywise upper bound of both ends would add the enclosure's width, about c times a cell's
  error, twice: a spurious mass ∝ 1/h² that made a finer lattice looser, :meth:`_Allocation.cells`);
  the FFT's round-off bound added; the mass beyond the lattice window bounded by
  Chernoff bounds on the lattice arrays themselves (:class:`~dpmech.pld.composition.Cumulant`, on
  arrays summed in blocks at their top or bottom label) and sent to +∞ (remove: large S; add: small S)
  or moved to the window's end on the larger-loss side; the losses ±log s rounded up. Remove: P-mass
  s·Q̃(tS̃ = ts) at loss log s; add: Q̃-mass at −log s.
* Remove: the P-law is summed as such. For any non-negative array q on the lattice, (nh/t)·q^{*t}(n) =
  ((x·q) * q^{*(t−1)})(n) (each term's factor Σ_i x_i/t shared among the t draws by symmetry), so the FFT of
  one x·q̄ and t − 1 copies of q̄, q̄ the upper spread array, encloses s·q̄^{*t}(s) with a round-off relative to
  the P-law. Multiplying the Q-sum's upper entries by s instead multiplied the FFT's round-off, the same on
  every entry, by s up to T/t: at σ = 0.5, t = 2 (T/t = 3·10^6 on 10^6 labels) that put 2e-3 of spurious
  P-mass at the largest losses, and the upper end grew from 13.1 to 13.7 as the lattice was refined (the truth
  is 9.30).

**Lower (dominated, both directions).** Map Y to J = Σ_i c_i, c_i the lattice cell of X_i, and to a
symbol ⊥ when an X_i is above the top cell. A post-processing of the epoch's output, so its pair
(P_J, Q_J) is dominated by (P, Q) in both directions and for every composition, and it is
computable: Q_J = m^{*t}, and P_J(n) = E_Q[S; J = n] = E_Q[X_1; J = n] (symmetry) = (M * m^{*(t−1)})(n).
Each is enclosed entrywise: the t-fold sums of the cells' lower and of their upper masses (the sum
is increasing in every entry), less and plus the FFT's round-off, the lower ends less the aliased
mass. The engine's :class:`~dpmech.pld.distribution.BucketedPair` takes lower P- and upper Q-masses of
these atoms, grouped by their estimated loss (any grouping is a post-processing), dropping atoms
outside its window and those whose lower P-mass is 0 (mapped to symbols whose terms are left out).
Remove: Q_J has a second upper bound from the upper P_J. On J = n every X_i lies above its cell's cut
e^{e_c} >= c_i·h·e^{−2η} (η the edges' rounding, below 1e-12), so S >= (nh/t)e^{−2η} there and
Q_J(n) <= P_J(n)·t·e^{2η}/(nh); each entry takes the smaller bound. The Q_J sum's round-off, the same
absolute amount on every entry, exceeds Q_J(n) itself at large n (it made the loss estimates too small there:
at σ = 0.5, t = 2 the lower end fell from 9.19 to 8.91 as the lattice was refined, against the truth 9.30),
while the P_J sum's round-off is relative to P.

**The FFTs.** Each t-fold sum is the cyclic power of :func:`~dpmech.pld.composition.cyclic_power` on
a power-of-two grid at least twice the lattice window, so that only labels beyond the padding alias
onto the window (their tilted mass bounded by Chernoff, kept by upper ends, subtracted from every entry
of lower ends; a lower sum whose bound, weighed over the window, exceeds 1e3 truncation allowances gets
a grid twice as long). The arrays are tilted by e^{θx} first (a sum of tilted arrays is the tilted sum), θ = ±λ/t for
the engine's tilt λ (S^λ ≈ e^{λ(S − 1)} near S = 1; minus for the add direction, whose loss is −log S),
capped so that the tilt spans at most 1e-4 of the truncation allowance over the window: the
round-off, a fraction of the tilted total, then weighs little where δ is decided, and each entry
is untilted with the rounding of its exponent.

Accuracy. The spread adds variance at most h²/(4t) to S and the post-processing removes about
h²/(12t), against Var S = (e^{μ²} − 1)/t: a change of S by h/(2√t) moves the remove loss log S by about
h/(2√t·s) at S = s. The lattice follows the engine's loss step Δ as h = √t·Δ·max(1, e^{L*}), L* the remove
loss where the engine's tilt puts the weight (the tilted sketch's mean; 1 for the add direction, decided
at small S), so that the spread moves the loss by at most about Δ/2 there, like the engine's own
rounding (the remove direction's step is :data:`_LATTICE_FACTOR` times that: about 1.5Δ); coarsened to keep the window within half of :data:`LATTICE_POINTS`. (At small t, where ε is
large, √t·Δ resolved S far more finely than the loss needs: 3·10^5 cells for t = 20, and 10^6 for t = 2.) The truncation T leaves P(Aᶜ) at most about
the engine's per-event allowance (:attr:`~dpmech.pld.accountant._Plan.truncation`, 1e-4 of δ over
all events; at least 1e-30), or T = t·e^{high} where the engine's window ends lower (it sends the
mass above its window to +∞ itself); the add direction's cap is t·e^{−low}, low the bottom of the
engine's window (it moves the mass below its window up to it itself), raised where that would coarsen the
lattice (:meth:`AllocationPair.capped_window`; any cap bounds the add direction's δ above). The add direction's loss −log S
is +∞ where S̃ = 0, which happens only when every X̃_i is 0, so only from X_i < h: its Q-mass is at most
Q(X < h)^t. Its lattice step is therefore also at most the h with Q(X < h)^t equal to the truncation
allowance (:meth:`_Allocation.zero_step`; a choice of h, which no bound above depends on): at √t·Δ alone
a short epoch at large ε put up to 8.5e-6 there (t = 2, σ = 0.8, the pilot's Δ), and two such epochs
composed sent more than δ = 1e-5 to +∞, an upper end of +∞ for 2 of 4 steps. At t = 1, where the
lattice would still be loose (it made the interval [5.66, +∞) at σ = 0.8, δ = 1e-5), the epoch is the
Gaussian mechanism itself and :func:`random_allocation` returns its pair.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy import special

from .. import validation as check
from . import discretization as grid
from .composition import Cumulant, cyclic_power
from .discretization import _cell_log_masses
from .distribution import _TINY, UNIT_ROUNDOFF, GridMeasure
from .pairs import Atoms, CoarseLaw, FloatArray, GaussianPair, Pair

# A law of a sum of independent lattice draws: the arrays (real masses on labels 0, 1, ...) and how many draws of each.
Law = tuple[list[FloatArray], list[int]]
# The four mass bounds of _Allocation._cells for one measure: (core low, spread high, post-processing low, high).
CellMasses = tuple[FloatArray, FloatArray, FloatArray, FloatArray]

#: Most lattice points of one epoch's sum (a power of two: the cyclic FFT's length).
LATTICE_POINTS = 1 << 21
# Lattice points of the sketch that places the engine's tilt and window (never a bound), and the P-mass its
# truncation leaves out.
_SKETCH_POINTS = 1 << 17
_SKETCH_TAIL = 1e-16
# The remove sketch's lattice ends at X = _SKETCH_TOP·t; above it S is sketched as one large X₁ plus t − 1.
_SKETCH_TOP = 50.0
# The sketch's FFT leaves round-off of up to about 1e-16 on every label (1.2e-16 at t = 10^4 on 2^18 points, peaks of
# 1e-3 to 1e-2): masses below this fraction of the peak are dropped as noise, which the engine's tilt would
# otherwise weigh as mass at extreme losses (an add window reaching 7.7 for t = 1000, whose loss stays within ±1).
_SKETCH_NOISE = 1e-13
# The remove direction's lattice step over √t·Δ·e^{L*}: the spread then moves the loss by about 1.5Δ where δ is decided.
# Its error is second order like the engine's (the spread adds variance h²/(4t) to S), and the engine refines Δ until
# the interval is as narrow as asked; at 1 the lattice's FFTs took about half of a query's time for t >= 20.
_LATTICE_FACTOR = 3.0
# Width in loss of the sketch's merged cells: e^{λw} <= e for every tilt λ <= 10^3 the engine tries.
_SKETCH_CELL = 1e-3
# The add sketch's nested lattices below its coarse one: each this many times finer than the one before.
_SMALL_SUM_RATIO = 16
# The add direction's sketch caps S at e^4: its loss −log S then starts at −4.
_ADD_SKETCH_CAP = 4.0
# Tilted weight of the add sketch below the loss its lattice is capped at where the engine's window would coarsen it.
_ADD_CAP_TAIL = 1e-4
# The largest s of the remove window above which the lower pair's Q_J also takes the bound from P_J (a third FFT sum).
_Q_FROM_P_ABOVE = 100.0
# The smallest truncation allowance: below it the lattice would outgrow every budget.
_SMALLEST_TAIL = 1e-30
# Cells of the block-summed arrays the Chernoff bounds are evaluated on.
_BLOCKS = 1 << 12
#: Most points of the cyclic grid of one epoch's t-fold sum. The window's Chernoff bounds on block-summed arrays
#: widen by up to a block per step, so the grid grows about linearly in t: 2^21 at t = 10^4, 2^23 at 3·10^4
#: (where the interval had already widened to [0.03, 1.49]), 2^35 at 10^20 (a MemoryError before this limit).
MAX_SUM_POINTS = 1 << 22
_U = UNIT_ROUNDOFF


class _AtomPair(Pair):
    """Atoms given by (loss, log P-mass, log Q-mass), not normalised: an upper or lower pair built here."""

    def __init__(self, loss: FloatArray, log_p: FloatArray, log_q: FloatArray) -> None:
        self.loss, self.log_p, self.log_q = loss, log_p, log_q

    def atoms(self) -> Atoms:
        with np.errstate(under="ignore"):
            return self.loss, np.exp(self.log_p), np.exp(self.log_q)

    def log_atoms(self) -> Atoms:
        return self.loss, self.log_p, self.log_q


def _log(values: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(np.maximum(values, 0.0))


def _blocked(array: FloatArray, step: float, up: bool) -> GridMeasure:
    """The array summed in blocks of cells, each block's mass at its top label (``up``) or its bottom one:
    moving mass up (down) can only raise E[e^{θS}] for θ > 0 (θ < 0), so Chernoff bounds stay valid."""
    size = max(1, -(-array.size // _BLOCKS))
    padded = np.zeros(-(-array.size // size) * size)
    padded[: array.size] = array
    sums = padded.reshape(-1, size).sum(axis=1) * (1 + (size + 2) * _U)
    return GridMeasure(step * size, 0.0, 1 if up else 0, np.maximum(sums, _TINY), 0.0, -math.inf, True)


def _chernoff_objective(theta: np.ndarray, cumulant: np.ndarray, sign: float, point: float) -> np.ndarray:
    """K(sign·θ) − sign·θ·point: the log Chernoff bound of the sum's tail beyond ``point`` at θ."""
    return cumulant - sign * theta * point


def _log_tails(arrays: Sequence[FloatArray], counts: Sequence[int], step: float, below: int, above: int) -> tuple[float, float]:
    """Chernoff bounds (log Q(sum <= below·step), log Q(sum >= above·step)) of the sum of ``counts[i]``
    independent draws from each lattice array (real masses on labels 0, 1, ...; −∞ for an empty side)."""
    results = []
    for up, label, sign in ((False, below, -1), (True, above, +1)):
        cumulant = Cumulant([_blocked(a, step, up) for a in arrays], counts)
        total = float(cumulant.values(np.zeros(1))[0])
        bound, _ = cumulant._minimum(functools.partial(_chernoff_objective, sign=sign, point=label * step), sign)
        results.append(min(bound, total))
    return results[0], results[1]


def _aliased(arrays: Sequence[FloatArray], counts: Sequence[int], step: float, first: int, last: int, size: int) -> float:
    """An upper bound of the sum's mass that a cyclic grid of ``size`` points folds onto the window first..last: the
    labels congruent to the window's modulo the size and outside it, at most last − size or at least first + size."""
    below, above = _log_tails(arrays, counts, step, last - size, first + size)
    return (math.exp(min(below, 0.0)) + math.exp(min(above, 0.0))) * (1 + 1e-12)


def _window(low_law: Law, high_law: Law, step: float, log_tail: float, top: int) -> tuple[int, int]:
    """(first label, last label) of the lattice window: below it the sum of ``low_law`` (arrays, counts) has
    at most e^log_tail, above it that of ``high_law``; never past label ``top``."""
    low = Cumulant([_blocked(a, step, False) for a in low_law[0]], low_law[1]).bottom(log_tail)
    high = Cumulant([_blocked(a, step, True) for a in high_law[0]], high_law[1]).top(log_tail)
    first = max(0, math.floor(low / step) - 1)
    return first, max(min(top, math.ceil(high / step) + 1), first)


def _cyclic_size(first: int, last: int, steps: int) -> int:
    """A power of two at least twice the window: the sum's labels just outside the window then fall in the
    padding, and only those farther than the padding alias onto the window. Over :data:`MAX_SUM_POINTS` a
    ValueError names num_steps (``steps``) before any array is built."""
    size = 1 << max(5, (2 * (last - first + 1)).bit_length())
    if size > MAX_SUM_POINTS:
        raise ValueError(
            f"num_steps: an epoch of {steps} steps needs a cyclic grid of {size} points for its sum (limit "
            f"{MAX_SUM_POINTS}); random allocation is accounted for up to about 2·10^4 steps per epoch"
        )
    return size


def _laws(tilted: FloatArray, plain: FloatArray, steps: int) -> tuple[Law, Law]:
    """(arrays, counts) of the sum's law under Q (``steps`` draws from ``plain``) and under P (one from
    ``tilted``, x·Q(x) or P₁'s cells, and the others from ``plain``: P = (1/t) Σ_i P_i, all alike)."""
    q_law: Law = ([plain], [steps])
    p_law: Law = ([tilted, plain], [1, steps - 1]) if steps > 1 else ([tilted], [1])
    return q_law, p_law


class _Allocation:
    """What both directions of one (μ, t) share: the lattice laws for each step h and truncation."""

    def __init__(self, mu: float, steps: int) -> None:
        self.mu = check.positive("mu", mu)
        self.steps = check.integer_scalar("steps", steps, 1)
        self.gaussian = GaussianPair(self.mu)
        self.variance = math.expm1(self.mu * self.mu)  # Var_Q X
        self._sketch: list[CoarseLaw] | None = None

    def truncation(self, tail: float) -> float:
        """T with P₁(X > T) <= tail/2 and T >= t (then (t − 1)Q(X > T) <= P₁(X > T)(t − 1)/T too)."""
        z = -float(special.ndtri(max(tail, _SMALLEST_TAIL) / 2))
        return max(math.exp(self.mu * self.mu / 2 + self.mu * z), float(self.steps))

    def zero_step(self, tail: float) -> float:
        """The lattice step h with Q(X < h)^t = ``tail``: the spread sends X̃ to 0 only from X < h, so the add
        direction's S̃ = 0 (loss +∞, all t draws there) then has at most about the truncation allowance of Q-mass."""
        z = float(special.ndtri(max(tail, _SMALLEST_TAIL) ** (1.0 / self.steps)))
        return math.exp(-self.mu * self.mu / 2 + self.mu * z)

    def _cells(self, step: float, cells: int, measures: Sequence[str] = ("Q", "P")) -> dict[str, CellMasses]:
        """Linear (low, high) bounds of, for c = 0..K−1 with K = ``cells``, the Q- and P₁-masses (``measures``) of the
        spread cells [ch, (c+1)h] and of the post-processing cells (e_c, e_{c+1}] (cell K: its lower sliver).

        The log edges ℓ_c = log(ch) are rounded: each is replaced by [ℓ_c − η_c, ℓ_c + η_c],
        η_c = 4u(|ℓ_c| + 1) (a product and a log, each within an ulp), so that a spread cell lies
        between its core (ℓ_c + η_c, ℓ_{c+1} − η_c+1) and its core with both slivers, while the
        post-processing cells are cut at e_c = ℓ_c − η_c, exact doubles: that map is exact.
        """
        ell = np.log(np.arange(1, cells + 1) * step)
        eta = 4 * _U * (np.abs(ell) + 1.0)
        edges = np.empty(2 * cells + 1)
        edges[0] = -np.inf
        edges[1::2] = ell - eta
        edges[2::2] = ell + eta
        out: dict[str, CellMasses] = {}
        for measure in measures:
            low, high = _cell_log_masses(self.gaussian, edges, measure)
            with np.errstate(under="ignore"):
                low = np.exp(low) * (1 - 4 * _U)
                high = np.exp(high) * (1 + 4 * _U)
            core_low, core_high = low[0::2], high[0::2]  # cells 0..K−1
            sliver_high = np.append(high[1::2], 0.0)  # sliver c+1 .. (K+1 entries: slivers 1..K and none)
            sliver_low = np.append(low[1::2], 0.0)
            spread_high = core_high + sliver_high[:-1]
            spread_high[1:] += sliver_high[:-2]
            # Post-processing cell c: its lower sliver and its core (cell 0 has no sliver); cell K: the sliver at ℓ_K
            # only (an X above it sends the epoch to the symbol ⊥, whose term the lower bound leaves out).
            post_low = np.append(core_low, 0.0)
            post_high = np.append(core_high, 0.0)
            post_low[1:] += sliver_low[:-1]
            post_high[1:] += sliver_high[:-1]
            out[measure] = (core_low, spread_high * (1 + 4 * _U), post_low * (1 - 4 * _U), post_high * (1 + 4 * _U))
        return out

    def cells(self, step: float, cells: int, direction: int) -> tuple[FloatArray, FloatArray, FloatArray, CellMasses,
                                                                      tuple[float, ...]]:
        """(the lattice x_j = jh, j = 0..K, the spread's Q-array on A for ``direction`` (0 remove, 1 add) and x·Q̃(x),
        the post-processing's Q- and P₁-arrays (low, high), and upper bounds of Q(X > Kh) and P₁(X > Kh)), K = ``cells``.

        Each cell's moved mass w_c is known only within an enclosure whose width, (c + 1) times the cell masses'
        own error, grows with c; an entrywise upper bound of the spread would add that width twice, a
        spurious Q̃-mass of about Σ_c c·(error of m_c) ∝ 1/h², weighed by s in the remove direction's P-law.
        Instead each cell keeps its upper mass m̄_c and moves the end of the enclosure on the side of the
        larger loss, w̄_c (remove, loss log S) or w̲_c (add, loss −log S), to (c + 1)h: against the exact spread
        ((m_c − w_c) at ch, w_c at (c + 1)h) this only adds mass (m̄_c − m_c) and moves mass |w̄_c − w_c| by
        one cell towards the larger loss, so the array bounds a law that dominates the spread's, and so do
        its t-fold sum (a sum of stochastically larger draws is stochastically larger) and the P-law
        s·Q̃(s) built from it (Q̃-mass moved from s to s' > s is P-mass s moved up plus s' − s added)."""
        masses = self._cells(step, cells)
        q_low, q_spread, q_post_low, q_post_high = masses["Q"]
        p_low, p_spread, p_post_low, p_post_high = masses["P"]
        # Float indices: j is exact (far below 2^53), and the product is then a float64 array.
        lattice = np.arange(cells + 1, dtype=np.float64) * step
        base = lattice[:-1]
        # Q-mass each cell moves to its top end, w = (M − ch·m)/h, enclosed with its rounding (module docstring).
        moved_high = np.minimum((p_spread - base * q_low + 4 * _U * (p_spread + base * q_low)) / step * (1 + 2 * _U),
                                q_spread)
        moved_low = np.maximum((p_low - base * q_spread - 4 * _U * (p_low + base * q_spread)) / step * (1 - 2 * _U), 0.0)
        moved = moved_high if direction == 0 else moved_low
        spread = np.zeros(cells + 1)
        spread[:-1] = q_spread - moved
        spread[1:] += moved
        spread = np.maximum(spread * (1 + 4 * _U), _TINY)
        tilted_spread: FloatArray = np.maximum(spread * lattice * (1 + 4 * _U), _TINY)  # x·Q̃(x): the tilted step's law
        # Q(X > Kh) and P₁(X > Kh), above, at the cut ℓ_K − η_K <= log(Kh) (from survival functions: 1 − F near 0
        # would carry the premise's absolute error).
        log_top = math.log(cells * step)
        cut = np.array([log_top - 4 * _U * (abs(log_top) + 1)])
        above = tuple(math.exp(min(0.0, float(v) + 1e-12 * max(1.0, abs(float(v))))) * (1 + 1e-12)
                      for v in (self.gaussian.log_sf(cut, "Q")[0], self.gaussian.log_sf(cut, "P")[0]))
        return lattice, spread, tilted_spread, (q_post_low, q_post_high, p_post_low, p_post_high), above

    def laws(self, step: float, tail: float, direction: int, tilt: float, window: Window) -> tuple[Pair, Pair]:
        """(upper pair, lower pair) of ``direction`` (0 remove, 1 add) on the lattice of step h = ``step``, the
        FFTs tilted by e^{θx} with θ = ±``tilt``/t (the engine's tilt e^{λL} = S^{±λ} near S = 1, where
        the loss is decided), so that their round-off weighs little where the loss is near ε.

        ``window`` is the engine's loss window (low, high): it moves a loss below ``low`` up to it and sends one
        above ``high`` to +∞ itself, so the lattice need not resolve S beyond it. Remove: the truncation T is
        at most t·e^high (P(Aᶜ) then about the engine's own tail there). Add: no truncation; each X̃ is capped
        at T = t·e^{−low} instead, which leaves the sum exact below T and at least T above it, where S >= e^{−low}
        and the loss −log S is moved up to −log of the window's last label: the add direction's δ decreases
        in every S, so the Q-law of min(S̃, that label's s) bounds it above.
        """
        t, h = self.steps, step
        if direction == 0:
            truncation = min(self.truncation(tail), t * math.exp(min(window[1], 700.0)))
        else:
            truncation = t * math.exp(min(-window[0], 700.0))
        cells = max(1, math.ceil(max(truncation, t) / h))
        lattice, spread, tilted_spread, (q_post_low, q_post_high, p_post_low, p_post_high), above = self.cells(h, cells, direction)
        if direction == 1:
            spread = spread.copy()
            spread[-1] += above[0]  # the cap: all of X > Kh at Kh
        log_tail = math.log(max(tail, _SMALLEST_TAIL))
        q_law, p_law = _laws(tilted_spread, spread, t)
        first, last = _window(q_law, p_law, h, log_tail, t * cells)
        if direction == 1:
            last = max(min(last, cells), first)
        size = _cyclic_size(first, last, t)
        # Within the window the tilt spans at most 1e-4/tail: the window's far end, where the real mass is about the
        # tail, then weighs at most 1e-4 of the tilted mass.
        theta = (1.0 if direction == 0 else -1.0) * min(tilt / t, max(0.0, -log_tail - 9.2) / ((last - first + 1) * h))
        labels = np.arange(first, last + 1)
        values = labels * h / t  # s at each label (relative error one ulp)

        def tilted_sum(arrays: Sequence[FloatArray], counts: Sequence[int], upper: bool) -> FloatArray:
            """Entrywise upper (``upper``) or lower bounds, in real mass, of the t-fold sum of arrays that bound the
            cells' masses from the same side, on the window: from the FFT of the tilted arrays x_j e^{θx_j}/Z, each
            entry rounded to its side by a few ulps of its exponent's magnitude (as GridMeasure.from_log_masses),
            round-off and aliasing bounded in tilted mass, then untilted with the same margin on the exponent."""
            side = 1.0 if upper else -1.0
            log_scale = 0.0
            tilted: list[FloatArray] = []
            for array, count in zip(arrays, counts):
                with np.errstate(divide="ignore"):
                    exponents = np.log(array) + theta * lattice[: array.size]
                largest = float(exponents.max())
                normaliser = largest + math.log(float(np.exp(exponents - largest).sum()))
                magnitude = np.abs(np.where(np.isfinite(exponents), exponents, 0.0)) + abs(normaliser) + 4.0
                with np.errstate(under="ignore"):
                    tilted.append(np.exp(exponents - normaliser + side * 8 * _U * magnitude))
                log_scale += count * normaliser
            margin = 8 * _U * (abs(log_scale) + np.abs(theta * labels * h) + 64.0)
            untilt = log_scale - theta * labels * h
            cyclic = size
            if not upper:
                # The aliased mass is subtracted from every entry: where its bound, untilted and weighed by s (the
                # P-law's factor) over the window, exceeds 1e3 tails (1e-3 of the δ asked about), a grid twice
                # as long pushes the folded labels twice as far out (a padding just over the window left e^-25).
                weight = float(np.sum(np.maximum(values, 1.0) * np.exp(np.minimum(untilt, 700.0))))
                aliased = _aliased(tilted, counts, h, first, last, cyclic)
                while aliased * weight > 1e3 * tail and 2 * cyclic <= MAX_SUM_POINTS:
                    cyclic *= 2
                    aliased = _aliased(tilted, counts, h, first, last, cyclic)
            result, error = cyclic_power(tilted, counts, cyclic)
            result = np.roll(result, -first % cyclic)[: labels.size]
            with np.errstate(over="ignore", under="ignore"):
                if upper:  # aliased mass is extra mass: kept
                    upper_sum: FloatArray = (result + error) * np.exp(untilt + margin)
                    return upper_sum
                lower_sum: FloatArray = np.maximum(result - error - aliased, 0.0) * np.exp(untilt - margin)
                return lower_sum

        # Truncation (remove): P(Aᶜ) <= P₁(X > T) + (t − 1)Q(X > T), a union bound.
        p_outside = min(1.0, (above[1] + (t - 1) * above[0]) * (1 + 1e-12))

        # Upper: the spread law of tS̃ on the window, every entry at an upper bound; remove: its P-law s·Q̃(s), summed
        # as such ((x·Q̃) * Q̃^{*(t−1)}, module docstring), not s times the Q-law's bounds: the FFT's round-off is the
        # same on every entry, and s times it (s up to T/t, 3·10^6 for μ = 2, t = 2) put 2e-3 of spurious P-mass at the
        # largest losses on 10^6 labels.
        log_values = np.log(np.maximum(values, 5e-324))
        positive = labels > 0
        rounded = 4 * _U * (np.abs(log_values) + 1)  # the loss ±log s rounded up
        log_slack = 8 * _U
        if direction == 0:
            log_y = _log(tilted_sum(*p_law, upper=True))
            p_below, p_above = _log_tails(*p_law, h, first - 1, last + 1)
            losses = [log_values[positive] + rounded[positive]]
            log_masses = [log_y[positive] + log_slack]
            if first > 0:  # P-mass below the window: moved up to the window's first label
                losses.append(losses[0][:1] if positive[0] else np.array([-math.inf]))
                log_masses.append(np.array([p_below + log_slack]))
            losses.append(np.array([math.inf]))
            log_masses.append(np.array([math.log(p_outside + math.exp(min(p_above, 0.0)) * (1 + 1e-12))]))
        else:
            log_y = _log(tilted_sum(*q_law, upper=True))
            q_below, q_above = _log_tails(*q_law, h, first - 1, last + 1)
            # Q-mass above the window (large S) moved to its last label, the smallest loss −log s it has; below
            # it (small S) at +∞.
            losses = [np.where(positive, -log_values + rounded, math.inf), -log_values[-1:] + rounded[-1:],
                      np.array([math.inf])]
            log_masses = [log_y, np.array([q_above]), np.array([q_below])]
        upper = _upper_atoms(losses, log_masses)

        # Lower: the post-processing J = Σ cell indices, its two laws enclosed entrywise: the t-fold sums of the
        # cells' lower and upper masses, less and plus the FFT's round-off, the lower ends less the aliased mass. The
        # pair needs a lower bound of its first measure's law and an upper bound of its second's: remove (P_J, Q_J),
        # add (Q_J, P_J); only those sums are computed.
        q_low_law, p_low_law = _laws(p_post_low, q_post_low, t)
        q_high_law, p_high_law = _laws(p_post_high, q_post_high, t)
        first_law, second_law = (p_low_law, q_high_law) if direction == 0 else (q_low_law, p_high_law)
        first_sum, second_sum = tilted_sum(*first_law, upper=False), tilted_sum(*second_law, upper=True)
        if direction == 0 and values[-1] > _Q_FROM_P_ABOVE:
            # On J = n every X_i lies above e^{e_c} >= c_i·h·e^{−2η} (its cell's cut), so S >= (nh/t)e^{−2η} and
            # Q_J(n) <= P_J(n)·t/(nh)·e^{2η}, P_J(n) = E_Q[S; J = n]: an upper Q_J from the upper P_J, whose FFT
            # round-off is relative to P, where the Q_J sum's (the same on every entry) exceeded Q_J(n) itself at
            # large n (σ = 0.5, t = 2: the lower end fell from 9.19 to 8.91 as the lattice was refined). Only where the
            # window reaches large S: elsewhere the third sum only costs time (9 % of a query at t = 10^4).
            p_high = tilted_sum(*p_high_law, upper=True)
            with np.errstate(divide="ignore", invalid="ignore"):
                from_p = np.where(labels > 0, p_high * t / (labels * h) * (1 + 1e-11), np.inf)
            second_sum = np.minimum(second_sum, from_p)
        log_p, log_q = _log(first_sum), _log(second_sum)
        return upper, _AtomPair(log_p - log_q, log_p, log_q)

    def _sketch_cells(self, step: float, cells: int) -> tuple[FloatArray, FloatArray]:
        """Estimates of X's Q-law and P₁-law on the lattice 0, h, ..., Kh (K = ``cells``), for a sketch, which is never
        a bound: the spread of the upper pair with the cell masses at the midpoints of their bounds on the plain edges
        log(ch) (no slivers: half the edges of :meth:`_cells`), and x·Q̃(x). Keeping each cell's mean keeps E[S̃] = 1
        however coarse the lattice: its lower ends alone put S at 0.23 for t = 10^4, h = 4.3 (S ≈ 1 ± 0.02), and
        the add direction's window, placed from that, missed its loss."""
        with np.errstate(divide="ignore"):
            edges = np.log(np.arange(cells + 1) * step)
        q_mass, p_mass = (0.5 * (np.exp(low) + np.exp(high))
                          for low, high in (_cell_log_masses(self.gaussian, edges, measure) for measure in ("Q", "P")))
        lattice = np.arange(cells + 1, dtype=np.float64) * step
        moved = np.clip((p_mass - lattice[:-1] * q_mass) / step, 0.0, q_mass)
        spread = np.zeros(cells + 1)
        spread[:-1] = q_mass - moved
        spread[1:] += moved
        return spread, spread * lattice

    def _sketch_law(self, truncation: float, measure: str, top: float | None = None) -> tuple[FloatArray, FloatArray]:
        """(s at each label, its law under ``measure``) of S on a coarse lattice of :data:`_SKETCH_POINTS` up to the
        truncation, from :meth:`_sketch_cells`. The Q-law (the add direction's) is
        capped: X above the truncation is put at it. Only the law asked for is summed (each is a cyclic power).
        With ``top`` below the truncation the lattice stops there, on a step at most that of the whole range and
        fitting :data:`_SKETCH_POINTS` // 4 points (the caller sketches X above ``top`` otherwise)."""
        t = self.steps
        spread = t + 40.0 * math.sqrt(t * self.variance)
        h = (truncation + spread) / _SKETCH_POINTS
        if top is not None and top < truncation:
            h, truncation = min(h, 4 * (top + spread) / _SKETCH_POINTS), top
        cells = max(1, math.ceil(truncation / h))
        capped = measure == "Q"
        q_spread, p_spread = self._sketch_cells(h, cells)
        if capped:
            q_spread[-1] += float(np.exp(self.gaussian.log_sf(np.array([math.log(cells * h)]), "Q"))[0])
            law: Law = ([q_spread], [t])
        else:
            law = _laws(p_spread, q_spread, t)[1]
        first, last = _window(law, law, h, math.log(1e-40), t * cells)
        if capped:
            last = max(min(last, cells), first)
        size = _cyclic_size(first, last, t)
        masses_of_s = np.roll(_plain_power(law, size), -first % size)[: last - first + 1]
        labels = np.arange(first, last + 1)
        keep = (masses_of_s > _SKETCH_NOISE * masses_of_s.max()) & (labels > 0)
        return labels[keep] * h / t, masses_of_s[keep]

    def _small_sums(self, values: FloatArray, masses: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The add sketch's (s, Q-mass) with small S resolved: below 10^3 of the coarse lattice's smallest s (its
        relative resolution 1e-3 there), the law of S on nested lattices, each :data:`_SMALL_SUM_RATIO` times
        finer than the one before, down to where the mass left below is under 1e-45. A sum of t non-negative draws
        is at most a only if every draw is, so the law of tS on [0, a) is exactly that of the draws' laws cut at a,
        summed without aliasing on a grid of over t times their points; each level keeps [a/ratio, a).

        The coarse lattice alone put S < 2·10^-3 at 0 for t = 2, σ = 0.5 (μ = 2), where Q(S < e^-9) ≈ 10^-8 decides
        the add direction's ε; its window then ended at the loss 6.2 and the engine sent 6e-4 of mass above it to
        +∞. Only for t <= 16 (each level's cells at least 8192): a longer epoch's S concentrates at 1, and at t = 100,
        σ = 2 the levels moved the add tilt from 44.7 to 7.1, whose wider window coarsened the engine's pilot grid
        (the interval [0.17317, 0.17323] became [0.17300, 0.17363], within the default width, so not refined)."""
        t = self.steps
        cells = (_SKETCH_POINTS - 1) // t
        if cells < 8192 or values.size == 0:
            return values, masses
        top = 1e3 * float(values[0]) * t  # t·s below which the coarse lattice is cut off
        keep = values * t >= top
        parts_s, parts_mass = [values[keep]], [masses[keep]]
        for _ in range(64):
            step = top / cells
            spread, _ = self._sketch_cells(step, cells)
            sums = _plain_power(([spread[:cells]], [t]), _SKETCH_POINTS)[:cells]
            labels = np.arange(cells)
            kept = (labels >= cells // _SMALL_SUM_RATIO) & (sums > _SKETCH_NOISE * sums.max()) & (labels > 0)
            parts_s.append(labels[kept] * step / t)
            parts_mass.append(sums[kept])
            if float(sums[: cells // _SMALL_SUM_RATIO].sum()) < 1e-45:
                break
            top /= _SMALL_SUM_RATIO
        s = np.concatenate(parts_s)
        order = np.argsort(s)
        return s[order], np.concatenate(parts_mass)[order]

    def sketch(self, direction: int) -> CoarseLaw:
        """The coarse law of the loss in ``direction`` (0 remove, 1 add) for the engine's tilt and window. Remove:
        the spread's law on a coarse lattice up to a truncation, plus the tail beyond it as cells of one
        large X₁ (the dominant way S gets large under P). Add: the same on a lattice capped at S = e^4 (losses
        −log S below −4 then sit at −4), with small S resolved on nested finer lattices (:meth:`_small_sums`).
        Never a bound."""
        if self._sketch is None:
            t = self.steps
            truncation = self.truncation(_SKETCH_TAIL)
            # The lattice up to X = 50t, where one large X₁ already carries S (the tail below), on a finer step.
            values, p_law = self._sketch_law(truncation, "P", _SKETCH_TOP * t)
            remove = [np.log(values), np.log(p_law)]
            # The remove tail: t·S ≈ X₁ + (t − 1) with X₁ under P₁, from the last kept loss to the truncation.
            start = float(values[-1] * t)
            if truncation + t - 1 > start:
                edges = np.geomspace(max(start - (t - 1), 1e-300), truncation, 257)
                _, high = _cell_log_masses(self.gaussian, np.log(edges), "P")
                remove[0] = np.concatenate([remove[0], np.log((edges[1:] + t - 1) / t)])
                remove[1] = np.concatenate([remove[1], high])
            values, q_law = self._sketch_law(t * math.exp(_ADD_SKETCH_CAP), "Q")
            values, q_law = self._small_sums(values, q_law)
            add = [-np.log(values), np.log(q_law)]
            self._sketch = [_merged(*law) for law in (remove, add)]
        return self._sketch[direction]


def _plain_power(law: Law, size: int) -> FloatArray:
    """The cyclic sum of ``law`` (arrays and counts) on ``size`` points by FFT, without the round-off bound of
    :func:`~dpmech.pld.composition.cyclic_power` (about half its cost): for a sketch, which is never a bound."""
    product = np.ones(size // 2 + 1, dtype=complex)
    for array, count in zip(*law):
        product *= np.fft.rfft(array, size) ** count
    result: FloatArray = np.fft.irfft(product, size)
    return result


def _merged(loss: FloatArray, log_masses: FloatArray) -> CoarseLaw:
    """The finite masses of a sketch whose losses are monotone, as cells: runs of losses in the same interval of
    width :data:`_SKETCH_CELL` merged into one cell from the smallest to the largest (a lattice of S is far finer in
    the loss log S where S is large: the engine's tilt search and windows then cost a tenth as much)."""
    finite = np.isfinite(log_masses)
    loss, log_masses = loss[finite], log_masses[finite]
    groups = np.floor(loss / _SKETCH_CELL)
    starts = np.flatnonzero(np.concatenate([[True], groups[1:] != groups[:-1]]))
    return (np.minimum.reduceat(loss, starts), np.maximum.reduceat(loss, starts),
            np.logaddexp.reduceat(log_masses, starts), -math.inf)


def _upper_atoms(losses: Sequence[FloatArray], log_masses: Sequence[FloatArray]) -> _AtomPair:
    loss = np.concatenate(losses)
    log_p = np.concatenate(log_masses)
    with np.errstate(invalid="ignore"):
        log_q = np.where(np.isfinite(loss), log_p - loss, -np.inf)
    return _AtomPair(loss, log_p, log_q)


Window = tuple[float, float]


class AllocationPair(Pair):
    """One direction (``"remove"`` or ``"add"``) of an epoch of random allocation of a Gaussian step
    with μ = Δ/σ over ``steps`` steps; it has no law of its own to discretise, only the upper and lower
    pairs of :meth:`bounding_pairs` (module docstring)."""

    def __init__(self, allocation: _Allocation, direction: str) -> None:
        self.allocation = allocation
        self.direction = check.choice("direction", direction, ("remove", "add"))
        self._index = 0 if self.direction == "remove" else 1

    def __repr__(self) -> str:
        return f"AllocationPair(mu={self.allocation.mu!r}, steps={self.allocation.steps!r}, direction={self.direction!r})"

    def sketch(self) -> CoarseLaw:
        return self.allocation.sketch(self._index)

    def decided_scale(self, tilt: float) -> float:
        """Remove: e^{L*}, at least 1, L* the mean loss of the sketch tilted by e^{λL} (λ = ``tilt``), where the
        engine's tilt puts the composed δ's weight; add: 1 (its loss −log S is decided at small S)."""
        if self._index == 1:
            return 1.0
        left, right, log_masses, _ = self.sketch()
        middle = 0.5 * (left + right)
        log_tilted = log_masses + tilt * middle
        weights = np.exp(log_tilted - log_tilted.max())
        return math.exp(min(max(0.0, float((weights * middle).sum() / weights.sum())), 700.0))

    def _finest(self, step: float, tail: float, scale: float) -> float:
        """√t·Δ·``scale`` (remove: times :data:`_LATTICE_FACTOR`; add: at most :meth:`_Allocation.zero_step`)."""
        t = self.allocation.steps
        if self._index == 0:
            return _LATTICE_FACTOR * math.sqrt(t) * step * scale
        return min(math.sqrt(t) * step * scale, self.allocation.zero_step(tail))

    def lattice_step(self, step: float, tail: float, window: Window, scale: float = 1.0) -> float:
        """The lattice step h in X for the engine's loss step Δ: √t·Δ·``scale`` (:meth:`decided_scale`; remove: times
        :data:`_LATTICE_FACTOR`; add: at most :meth:`_Allocation.zero_step`), coarsened
        to keep the sum's window (remove: about T + t + 40 standard deviations; add: up to the cap t·e^{−low})
        within half of :data:`LATTICE_POINTS` (the FFT pads it twofold)."""
        allocation = self.allocation
        t = allocation.steps
        if self._index == 0:
            width = (min(allocation.truncation(tail), t * math.exp(min(window[1], 700.0))) + t
                     + 40.0 * math.sqrt(t * allocation.variance))
        else:
            width = t * math.exp(min(-window[0], 700.0))
        return max(self._finest(step, tail, scale), 2 * width / (LATTICE_POINTS - 2))

    def capped_window(self, step: float, tail: float, window: Window, tilt: float, scale: float = 1.0) -> Window:
        """Add: ``window`` with its low end raised to the loss below which the tilted sketch leaves
        :data:`_ADD_CAP_TAIL` of its weight (the mass moved up counted, as :func:`~dpmech.pld.discretization.window`
        does). Any cap bounds the add direction's δ above (module docstring), so this choice only trades accuracy
        for time: at t = 2, σ = 0.5 the cap at S = e^4 held the add lattice at h = 1e-4 on 2^21 points, 5 s of CPU
        per query, and at σ = 0.6 at h = zero_step on 3.5·10^5 points, 1.45 s a grid of a 6.5 s query, for an add
        direction far below the remove one (1.2 s now, the same interval). Remove: ``window`` unchanged."""
        if self._index == 0:
            return window
        return (max(window[0], grid.window(self.sketch(), tilt, _ADD_CAP_TAIL)[0]), window[1])

    def bounding_pairs(self, step: float, tilt: float, tail: float, window: Window) -> tuple[Pair, Pair]:
        """(upper, lower) atom pairs of this direction for the engine's loss step, tilt, tail allowance and window."""
        scale = self.decided_scale(tilt)
        window = self.capped_window(step, tail, window, tilt, scale)
        h = self.lattice_step(step, tail, window, scale)
        return self.allocation.laws(h, tail, self._index, tilt, window)


def random_allocation(mu: float, steps: int) -> tuple[Pair, Pair]:
    """(remove pair, add pair) of one epoch of random allocation of a Gaussian step with μ over ``steps`` steps.

    One step (t = 1) is the Gaussian mechanism itself: S = X_1 and (P, Q) = (N(μ, 1), N(0, 1)), whose loss
    law is the symmetric :class:`~dpmech.pld.pairs.GaussianPair` (μ) in both directions, discretised by the
    engine directly; the lattice would only approximate it (and loosely: its add direction puts Q(X < h) at +∞).
    """
    allocation = _Allocation(mu, steps)
    if allocation.steps == 1:
        return (allocation.gaussian, allocation.gaussian)
    return (AllocationPair(allocation, "remove"), AllocationPair(allocation, "add"))
