r"""dpmech's certified accounting inside opacus: an ``IAccountant`` and a noise calibration.

opacus's ``PrivacyEngine`` keeps an accountant in ``engine.accountant``; its optimizer hook calls
``accountant.step(noise_multiplier=σ, sample_rate=q)`` after every step (q times the accumulated
iterations), and ``engine.get_epsilon(δ)`` asks ``accountant.get_epsilon(δ)``. Every step is a
Poisson-subsampled Gaussian under add/remove neighbours: the sum of clipped per-example gradients
(sensitivity C) gets N(0, σ²C²) noise on a Poisson sample of rate q (Abadi et al. 2016). Its dominating
pair is the mixture ((1 − q)·N(0, 1) + q·N(1, 1), N(0, 1)) and its reverse, with μ = 1/σ (Zhu, Dong &
Wang 2022), which dpmech's numeric privacy-loss-distribution engine composes with a certified interval.

:class:`OpacusAccountant` keeps opacus's ``history`` (a list of (σ, q, steps), consecutive equal steps
merged, as opacus's own accountants keep it, so ``state_dict`` checkpoints have the same shape) and
reports the upper end of dpmech's certified interval for ε: never below the true ε of the
Poisson-subsampled Gaussian composition. Swap it in with three lines::

    from opacus import PrivacyEngine
    from dpmech.integrations.opacus import OpacusAccountant
    engine = PrivacyEngine(accountant="dpmech")      # or: engine.accountant = OpacusAccountant()

Importing this module registers the class with opacus's accountant registry under ``"dpmech"``
(``opacus.accountants.register_accountant``), so ``PrivacyEngine(accountant="dpmech")`` and
``make_private_with_epsilon`` (whose search creates an accountant by name) both use it.
:func:`get_noise_multiplier` replaces ``opacus.accountants.utils.get_noise_multiplier``: dpmech's
certified calibration (:func:`dpmech.pld.poisson_subsampled_gaussian_sigma`) instead of a bisection on ε.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional

from opacus.accountants import IAccountant, create_accountant, register_accountant

from .. import validation as check
from ..events import ADD_REMOVE_ONE, GaussianEvent, NoGuaranteeEvent, PoissonSampledEvent
from ..ledger import PrivacyGuarantee, PrivacyLedger
from ..pld.calibration import poisson_subsampled_gaussian_sigma

MECHANISM = "dpmech"
# The options of PrivacyLedger.epsilon's "numeric" method (dpmech.accountants.numeric), the one that
# accounts Poisson sampling; get_epsilon passes these on and refuses any other keyword.
_LEDGER_OPTIONS = ("discretization", "width", "max_points")
# epochs / sample_rate within this relative distance of a whole number is that number: the quotient of
# two doubles, with q = 1/len(loader) itself rounded, is off by a few units in the last place.
_WHOLE_STEPS_RELATIVE = 1e-12


def _validated_history(history: Sequence[Any]) -> list[tuple[float, float, int]]:
    """``history`` as a list of (σ >= 0, q ∈ (0, 1], steps >= 1) tuples, or a ValueError naming the entry."""
    if isinstance(history, (str, bytes)) or not isinstance(history, Sequence):
        raise ValueError(f"history must be a list of (noise_multiplier, sample_rate, steps) (got {history!r})")
    entries = []
    for index, entry in enumerate(history):
        if not isinstance(entry, Sequence) or len(entry) != 3:
            raise ValueError(f"history[{index}] must be (noise_multiplier, sample_rate, steps) (got {entry!r})")
        sigma = float(check.single(f"history[{index}] noise_multiplier",
                                   check.non_negative(f"history[{index}] noise_multiplier", entry[0])))
        rate = float(check.single(f"history[{index}] sample_rate", check.in_interval(
            f"history[{index}] sample_rate", entry[1], 0.0, 1.0, low_open=True, high_open=False)))
        steps = check.integer_scalar(f"history[{index}] steps", entry[2], 1)
        entries.append((sigma, rate, steps))
    return entries


def history_ledger(history: Sequence[Any]) -> PrivacyLedger:
    """The add/remove :class:`dpmech.PrivacyLedger` of an opacus history [(σ, q, steps), ...].

    Each entry is ``steps`` repetitions of ``PoissonSampledEvent(GaussianEvent(σ), q)`` (noise
    N(0, σ²C²) on a sum of sensitivity C, so the Gaussian has Δ/σ = 1/σ); σ = 0 adds no noise and is a
    :class:`dpmech.NoGuaranteeEvent`, so that ε is infinite.
    """
    ledger = PrivacyLedger(ADD_REMOVE_ONE)
    for sigma, rate, steps in _validated_history(history):
        event: object
        if sigma == 0.0:
            event = NoGuaranteeEvent(f"opacus step with noise multiplier 0 at sample rate {rate!r}")
        else:
            event = PoissonSampledEvent(GaussianEvent(sigma), rate)
        ledger.record(event, count=steps, label="DP-SGD")
    return ledger


# opacus ships no type information, so its IAccountant is Any to mypy.
class OpacusAccountant(IAccountant):  # type: ignore[misc]
    """opacus's ``IAccountant`` with dpmech's certified ε for the Poisson-subsampled Gaussian.

    ``history`` is opacus's: (noise multiplier, sample rate, steps) with consecutive equal steps merged.
    ``len(accountant)`` is the number of optimisation steps (the sum of the counts), as
    ``IAccountant.__len__`` documents; opacus's own accountants return the number of history entries,
    which agrees on the one question opacus asks (whether any step was taken).
    """

    history: list[tuple[float, float, int]]

    def __init__(self) -> None:
        super().__init__()

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimisation step with noise multiplier σ >= 0 and sample rate q ∈ (0, 1]."""
        sigma, rate, _ = _validated_history([(noise_multiplier, sample_rate, 1)])[0]
        if self.history and self.history[-1][:2] == (sigma, rate):
            self.history[-1] = (sigma, rate, self.history[-1][2] + 1)
        else:
            self.history.append((sigma, rate, 1))

    def ledger(self) -> PrivacyLedger:
        """The steps so far as a :class:`dpmech.PrivacyLedger` under add/remove neighbours (:func:`history_ledger`)."""
        return history_ledger(self.history)

    def get_guarantee(self, delta: float, **options: Any) -> PrivacyGuarantee:
        """The (ε, ``delta``) guarantee so far, naming its relation and its certified interval for ε.

        ``options`` are those of the ledger's numeric method (``discretization``, ``width``,
        ``max_points``); any other keyword raises a ValueError. opacus's ``make_private_with_epsilon``
        passes its own extra keywords (those of adaptive clipping) on to ``get_epsilon``: with them,
        call :func:`get_noise_multiplier` and ``make_private`` instead.
        """
        unknown = sorted(set(options) - set(_LEDGER_OPTIONS))
        if unknown:
            raise ValueError(f"options must be among {', '.join(_LEDGER_OPTIONS)} (got {', '.join(unknown)})")
        # The options are the numeric method's; without them "auto" takes it too (or "exact", for no steps).
        return self.ledger().epsilon(delta, method="numeric" if options else "auto", **options)

    def get_epsilon(self, delta: float, **options: Any) -> float:
        """ε spent so far at ``delta`` ∈ (0, 1): the upper end of dpmech's certified interval, never below the truth.

        Options as in :meth:`get_guarantee`; 0 before the first step, inf after a step without noise.
        """
        return float(self.get_guarantee(delta, **options).epsilon)

    def __len__(self) -> int:
        return sum(steps for _, _, steps in self.history)

    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Each history entry checked as :meth:`step` checks it, then opacus's checks (non-empty, "dpmech")."""
        if state_dict is not None and "history" in state_dict:
            _validated_history(state_dict["history"])
        super().load_state_dict(state_dict)
        self.history = [(sigma, rate, steps) for sigma, rate, steps in self.history]


def number_of_steps(sample_rate: float, epochs: Optional[float], steps: Optional[int]) -> int:
    """The number of steps, given either ``steps`` or ``epochs`` at ``sample_rate``, never a guess.

    ``epochs`` epochs at rate q are epochs/q steps when that is a whole number (to a relative
    1e-12, the rounding of q = 1/len(loader)); otherwise a ValueError asks for ``steps``, where
    opacus truncates int(epochs/q) and may count one step too few.
    """
    if (steps is None) == (epochs is None):
        raise ValueError("epochs or steps must be given, and not both")
    if steps is not None:
        return check.integer_scalar("steps", steps, 1)
    epochs = float(check.single("epochs", check.positive("epochs", epochs)))
    quotient = epochs / sample_rate
    whole = round(quotient)
    if whole < 1 or abs(quotient - whole) > _WHOLE_STEPS_RELATIVE * quotient:
        raise ValueError(f"epochs / sample_rate = {quotient!r} is not a whole number of steps; pass steps instead")
    return whole


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: float,
                         epochs: Optional[float] = None, steps: Optional[int] = None,
                         relative_tolerance: float = 1e-3) -> float:
    """The noise multiplier σ for (``target_epsilon``, ``target_delta``) after the given steps, never under-noised.

    opacus's signature (``epochs`` or ``steps``); ``opacus.accountants.utils.get_noise_multiplier``
    bisects on an accountant's ε, this calibrates the certified upper δ(ε) of the Poisson-subsampled
    Gaussian with :func:`dpmech.pld.poisson_subsampled_gaussian_sigma` (add/remove neighbours; Zhu,
    Dong & Wang 2022), which is within ``relative_tolerance`` of the smallest σ its grid certifies. If
    :meth:`OpacusAccountant.get_epsilon` (which queries on its own grid) would report more than
    ``target_epsilon`` for that σ, σ is raised by factors 1 + ``relative_tolerance`` until it does not:
    an accountant that then takes exactly these steps at this σ and q reports ε <= ``target_epsilon``.
    """
    target_epsilon = float(check.single("target_epsilon", check.positive("target_epsilon", target_epsilon)))
    target_delta = float(check.single("target_delta", check.open_unit_interval("target_delta", target_delta)))
    rate = float(check.single("sample_rate", check.in_interval("sample_rate", sample_rate, 0.0, 1.0,
                                                                low_open=True, high_open=False)))
    count = number_of_steps(rate, epochs, steps)
    sigma = float(poisson_subsampled_gaussian_sigma(rate, count, target_epsilon, target_delta,
                                                    relative_tolerance=relative_tolerance))
    while history_ledger([(sigma, rate, count)]).epsilon(target_delta).epsilon > target_epsilon:
        sigma *= 1.0 + relative_tolerance
    return sigma


def register() -> None:
    """Register :class:`OpacusAccountant` with opacus under ``"dpmech"`` (done on import; idempotent).

    A different class already registered under that name is left in place and raises a ValueError.
    """
    try:
        register_accountant(MECHANISM, OpacusAccountant)
    except ValueError:
        registered = type(create_accountant(MECHANISM))
        if registered.__qualname__ != OpacusAccountant.__qualname__ or registered.__module__ != __name__:
            raise ValueError(f"opacus already has a different accountant registered as {MECHANISM!r}: "
                             f"{registered.__module__}.{registered.__qualname__}") from None


register()
