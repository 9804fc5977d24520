r"""``dpmech dpsgd epsilon`` and ``dpmech dpsgd calibrate``: DP-SGD's noisy steps from the shell.

A step of DP-SGD adds N(0, σ²C²) to the sum of the batch's gradients clipped to norm C, so one
record moves the released sum by at most C and σ, the *noise multiplier*, is the Gaussian
mechanism's noise relative to that sensitivity. Neighbouring datasets differ by adding or
removing one record (``add-remove-one``), the relation under which subsampling amplifies.

Batch sampling (``--sampling``):

* ``poisson`` (default): every record joins each step's batch independently with probability q;
  ``steps`` Poisson-subsampled Gaussians (Abadi et al. 2016; dominating pairs of Zhu, Dong & Wang
  2022), accounted by :class:`dpmech.PrivacyLedger` with a certified interval (``epsilon``) or
  calibrated by :func:`dpmech.pld.calibration.poisson_subsampled_gaussian_sigma`, whose certified
  upper δ(ε) is at most the target (never under-noised).
* ``random-allocation``: each epoch of t steps puts every record in exactly one step, drawn
  uniformly (Feldman & Shenfeld 2025; ``dpmech.RandomAllocationEvent`` recorded once per epoch);
  where t = N/B is no integer but T = E·N/B is, over the whole run instead: every record in E of the T
  steps, its E steps drawn uniformly without replacement and independently of the other records (the
  training loop must sample so; the expected batch is N·E/T = B), ``RandomAllocationEvent(step, T, E)``,
  accounted as r epochs of 1-of-(m + 1) and E − r of 1-of-m, T = E·m + r (proof in
  :mod:`dpmech.events.random_allocation`; per-epoch allocation cannot be run with a fractional t).
  Calibrated on the ε query itself (:func:`_allocation_sigma`): the σ returned is one whose certified upper ε
  at δ is at most the target, within 0.1 % of a σ whose certified upper ε exceeds it.
* ``shuffle``: fixed-size batches of a shuffled dataset, reshuffled every epoch. No certified
  number is known, so three labelled numbers are printed: the Poisson one (not valid for shuffled
  batches), the random-allocation one (certified, if batches are sampled that way instead), and the
  lower bound of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang (2024, "How Private are
  DP-SGD Implementations?"), an estimate (see :func:`shuffle_lower_bound_epsilon`).

Steps. ``--steps`` is taken as given. ``--epochs`` E with ``--batch-size`` B and ``--dataset-size`` N
is E·N/B steps; with ``--sampling-rate`` q it is E/q, q read as its shortest decimal (``repr``).
Poisson steps that are not an integer are rounded up (more steps, more privacy loss) and the output
says so; random allocation and shuffling need N/B (or 1/q) to be an integer number of steps per
epoch (random allocation, with ``--epochs`` E, only E·N/B: over the whole run, as above), and a ``--steps``
that is not a whole number of epochs is accounted as the next whole epoch (its certified number) and as the
previous one (the shuffle lower bound), each said in the output.
The sampling rate B/N is rounded up to a double, never down.
"""

from __future__ import annotations

import math

from . import arguments

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; type checkers know the name
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from fractions import Fraction
    from typing import Any, TypeVar

    from ..ledger import PrivacyGuarantee, PrivacyLedger

    _Result = TypeVar("_Result")
    # The output fields of a command: JSON values, printed by :func:`dpmech.cli.output.emit`.
    Record = dict[str, Any]
    # A command's work on its checked options (:func:`_accounted`).
    Handler = Callable[[argparse.Namespace, "_Schedule"], None]

SAMPLINGS = ("poisson", "random-allocation", "shuffle")
# The most steps accounted: 10^7 Poisson steps take seconds; far beyond, the composed grid outgrows memory.
MAX_STEPS = 10**7
NEIGHBOURING = "add-remove-one"
# Chua et al.'s pair, per epoch of T steps (see shuffle_lower_bound_epsilon): the batch holding the
# differing record sums to 2 (record x = 1, the others −1, shifted) or 1 (the record zeroed out).
_SHUFFLE_MEANS = (2.0, 1.0)
# Slices of max_t x_t per σ² (the privacy loss of the max statistic moves by about 1/σ² per unit).
_SLICES_PER_UNIT_LOSS = 1000.0
# The slices span the max's law between these tail masses under either measure; the rest are two edge slices.
_LOG_TAIL_MASS = -40.0


def register(subparsers: argparse._SubParsersAction[Any]) -> None:  # any ArgumentParser subclass's subparsers
    dpsgd = subparsers.add_parser("dpsgd", help="DP-SGD: certified epsilon of its noisy steps, or the noise multiplier")
    commands = dpsgd.add_subparsers(dest="dpsgd_command", required=True, parser_class=type(dpsgd),
                                    metavar="{epsilon,calibrate}")
    epsilon = commands.add_parser("epsilon", help="certified epsilon interval of DP-SGD's steps at a noise multiplier")
    epsilon.add_argument("--noise-multiplier", type=arguments.positive_real, required=True,
                         help="Gaussian noise std / clipping norm, > 0")
    _common(epsilon)
    epsilon.set_defaults(handler=_accounted(_epsilon))
    calibrate = commands.add_parser("calibrate", help="smallest certified noise multiplier for a target (epsilon, delta)")
    calibrate.add_argument("--epsilon", type=arguments.positive_real, required=True, help="target epsilon > 0")
    _common(calibrate)
    calibrate.set_defaults(handler=_accounted(_calibrate))


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sampling-rate", type=arguments.real_in(0.0, 1.0, low_open=True, high_open=False),
                        help="probability q in (0, 1] that a record is in a step's batch (or --batch-size with "
                             "--dataset-size)")
    parser.add_argument("--batch-size", type=arguments.integer_in(1), help="(expected) batch size B >= 1")
    parser.add_argument("--dataset-size", type=arguments.integer_in(1), help="number of records N >= B")
    parser.add_argument("--steps", type=arguments.integer_in(1, MAX_STEPS),
                        help=f"number of noisy steps in [1, {MAX_STEPS:g}] (or --epochs)")
    parser.add_argument("--epochs", type=arguments.integer_in(1, MAX_STEPS),
                        help="number of epochs >= 1 (or --steps)")
    parser.add_argument("--delta", type=arguments.unit_open, required=True, help="delta in (0, 1)")
    parser.add_argument("--sampling", type=arguments.choice(SAMPLINGS), default="poisson",
                        help="poisson (default), random-allocation, or shuffle (no certified number; see docs)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


class _Schedule:
    """Sampling rate, steps and epochs of a command line, checked; ``notes`` says what was rounded."""

    def __init__(self, args: argparse.Namespace) -> None:
        from fractions import Fraction  # with decimal, 10 ms that the other commands need not pay

        rate, batch, size = args.sampling_rate, args.batch_size, args.dataset_size
        if rate is not None and (batch is not None or size is not None):
            raise ValueError("--sampling-rate: give it or --batch-size with --dataset-size, not both")
        if rate is None and batch is None and size is None:
            raise ValueError("--sampling-rate (or --batch-size with --dataset-size) is required")
        if rate is None and (batch is None or size is None):
            missing = "--dataset-size" if size is None else "--batch-size"
            raise ValueError(f"{missing} is required with {'--batch-size' if size is None else '--dataset-size'}")
        if (args.steps is None) == (args.epochs is None):
            raise ValueError("--steps: give exactly one of --steps and --epochs")
        self.notes: list[str] = []
        # Random allocation over the whole run (each record in E of its steps) rather than one step per epoch.
        self.whole_run = False
        if rate is None:
            if batch > size:
                raise ValueError(f"--batch-size must be at most --dataset-size (got {batch} > {size})")
            exact = Fraction(batch, size)
            self.rate = _double_at_least(exact)
            per_epoch = 1 / exact
            origin = ("--batch-size", f"{size}/{batch} (dataset-size / batch-size)")
        else:
            self.rate = rate
            per_epoch = 1 / Fraction(repr(rate))
            origin = ("--sampling-rate", f"1/{rate!r} (1 / sampling-rate)")
        self.sampling = args.sampling
        if self.sampling == "poisson":
            self.epochs = args.epochs
            if args.steps is not None:
                self.steps = args.steps
            else:
                steps = args.epochs * per_epoch
                self.steps = math.ceil(steps)
                _check_steps(self.steps)
                if self.steps != steps:
                    self.notes.append(f"steps: {args.epochs} epochs x {origin[1]} = {float(steps):.10g}, rounded up "
                                      f"to {self.steps} "
                                      "(more steps, more privacy loss)")
            return
        run_steps = None if args.epochs is None else args.epochs * per_epoch
        if per_epoch.denominator != 1 and self.sampling == "random-allocation" and run_steps is not None \
                and run_steps.denominator == 1:
            # E·N/B whole though N/B is not: E of the T = E·N/B steps of the run, drawn for each record (module doc).
            self.whole_run, self.epochs, self.steps = True, args.epochs, int(run_steps)
            _check_steps(self.steps)
            self.notes.append(f"steps: {origin[1]} = {float(per_epoch):.10g} is no whole number of steps per epoch; "
                              f"accounted as random allocation over the whole run: each record in {self.epochs} "
                              f"of the {self.steps} steps, drawn uniformly without replacement for each record "
                              "(the training must sample its batches so)")
            return
        if per_epoch.denominator != 1:
            whole_run = ("; over the whole run, --epochs E times it must be whole"
                         if self.sampling == "random-allocation" else "")
            raise ValueError(f"{origin[0]}: {self.sampling} needs a whole number of steps per epoch "
                             f"({origin[1]} = {float(per_epoch):.10g}){whole_run}")
        self.per_epoch = int(per_epoch)
        if args.epochs is not None:
            self.epochs, self.steps, self.lower_epochs = args.epochs, args.epochs * self.per_epoch, args.epochs
            _check_steps(self.steps)
            return
        self.steps = args.steps
        self.epochs = -(-args.steps // self.per_epoch)
        self.lower_epochs = args.steps // self.per_epoch
        if self.epochs * self.per_epoch != args.steps:
            self.notes.append(f"epochs: {args.steps} steps are {args.steps / self.per_epoch:.6g} epochs of "
                              f"{self.per_epoch} steps; certified numbers account {self.epochs} whole epochs "
                              f"(more privacy loss), lower bounds {self.lower_epochs}")


def _check_steps(steps: int) -> None:
    if steps > MAX_STEPS:
        raise ValueError(f"--epochs: they make {steps} steps, more than the {MAX_STEPS:g} accounted")


def _delta_up(delta: float) -> float:
    """A δ from exp of a log, stepped up one ulp where exp may have rounded a subnormal down (or to 0)."""
    return math.nextafter(delta, 1.0) if delta < 2.2250738585072014e-308 else delta


def _double_at_least(value: Fraction) -> float:
    """The smallest double >= ``value`` (float() rounds to nearest, possibly below)."""
    from fractions import Fraction

    nearest = float(value)
    return nearest if Fraction(nearest) >= value else math.nextafter(nearest, math.inf)


def _ledger(sampling: str, sigma: float, schedule: _Schedule) -> PrivacyLedger:
    import dpmech

    ledger = dpmech.PrivacyLedger(neighbouring=NEIGHBOURING)
    step = dpmech.GaussianEvent(sigma)
    if sampling == "poisson":
        return ledger.record(dpmech.PoissonSampledEvent(step, schedule.rate), count=schedule.steps)
    if schedule.whole_run:  # each record in E of the run's steps (see _Schedule)
        return ledger.record(dpmech.RandomAllocationEvent(step, num_steps=schedule.steps, num_selected=schedule.epochs))
    return ledger.record(dpmech.RandomAllocationEvent(step, num_steps=schedule.per_epoch), count=schedule.epochs)


def _certified_epsilon(sampling: str, sigma: float, schedule: _Schedule, delta: float) -> tuple[float, float, PrivacyGuarantee]:
    guarantee = _ledger(sampling, sigma, schedule).epsilon(delta)
    return guarantee.interval[0], guarantee.interval[2], guarantee


def _record(args: argparse.Namespace, schedule: _Schedule, sampling: str) -> Record:
    record = {"sampling": sampling, "neighbouring": NEIGHBOURING, "delta": args.delta, "steps": schedule.steps,
              "sampling_rate": schedule.rate}
    if schedule.whole_run:
        record.update(steps_per_record=schedule.epochs, epochs=schedule.epochs)
    elif schedule.sampling != "poisson":
        record.update(steps_per_epoch=schedule.per_epoch, epochs=schedule.epochs)
    return record


def _accounted(handler: Handler) -> Callable[[argparse.Namespace], None]:
    """``handler(args)`` with the accounting's failures stated with the options that fed it (the engine
    cannot say which one: σ too small for its grid, say), on one line; numpy's overflow warnings from
    the engine's tails, which it handles, are not printed."""

    def run(args: argparse.Namespace) -> None:
        import numpy as np

        schedule = _Schedule(args)
        try:
            with np.errstate(all="ignore"):
                handler(args, schedule)
        except (ValueError, ArithmeticError, MemoryError) as error:
            given = [f"--{name.replace('_', '-')} {value!r}" for name, value in vars(args).items()
                     if name in _ACCOUNTED_OPTIONS and value is not None]
            raise ValueError(f"cannot account {', '.join(given)}: {error}") from None

    return run


_ACCOUNTED_OPTIONS = ("noise_multiplier", "epsilon", "sampling_rate", "batch_size", "dataset_size", "steps", "epochs",
                      "delta")


def _epsilon(args: argparse.Namespace, schedule: _Schedule) -> None:
    sigma = args.noise_multiplier
    if schedule.sampling == "shuffle":
        return _shuffle_epsilon(args, schedule, sigma)
    lower, upper, guarantee = _certified_epsilon(schedule.sampling, sigma, schedule, args.delta)
    record = {"epsilon": upper, "interval": [lower, upper], "noise_multiplier": sigma, **_record(args, schedule, schedule.sampling),
              "method": guarantee.method, "certified": guarantee.certified}
    _emit(record, args.json, f"DP-SGD epsilon ({schedule.sampling} sampling)", schedule.notes + [guarantee.note],
          inputs=("noise_multiplier",))


def _calibrated_sigma(sampling: str, schedule: _Schedule, epsilon: float, delta: float) -> tuple[float, Record]:
    """(σ, the evidence that certifies it, as output fields)."""
    from ..pld.calibration import poisson_subsampled_gaussian_sigma

    per_step = sampling == "poisson" or schedule.whole_run  # the rate and steps as given, not per whole epoch
    poisson = poisson_subsampled_gaussian_sigma(schedule.rate if per_step else 1.0 / schedule.per_epoch,
                                                schedule.steps if per_step else schedule.epochs * schedule.per_epoch,
                                                epsilon, delta)
    if sampling == "poisson":
        return float(poisson), {"achieved_delta": _delta_up(poisson.certified_delta),
                                "discretization": poisson.discretization}
    # Random allocation and Poisson sampling at q = 1/t are close for the Gaussian (Feldman & Shenfeld 2025): the
    # Poisson σ is the first guess.
    sigma, certified = _allocation_sigma(schedule, epsilon, delta, float(poisson))
    # δ(ε) decreases in ε: a certified ε(δ) at most the target means δ(target) <= δ.
    return sigma, {"achieved_delta": delta, "certified_epsilon": certified}


# The calibrated σ is within this factor of one the ε query refuses (0.2 % asked: half of it, and the σ returned
# is the certified end of the last bracket).
_ALLOCATION_SIGMA_RATIO = 1.001
_ALLOCATION_EVALUATIONS = 40


def _allocation_sigma(schedule: _Schedule, epsilon: float, delta: float, guess: float) -> tuple[float, float]:
    """(σ, its certified upper ε(δ)): the random-allocation σ found on the ε query itself, the one ``dpmech dpsgd
    epsilon`` runs (same grids, same refinement), so that it is certified there, and a σ below it by a factor of at
    most 1.001 is not (the 0.2 % asked for, with room). f(σ) = log ε_upper(σ) − log ε is close to linear in log σ:
    secant steps from the guess bracket the root, then Illinois regula falsi in log σ, safeguarded by bisection,
    shrinks the bracket; each end is an evaluated σ on its side."""
    evaluations = 0

    def excess(log_sigma: float) -> tuple[float, float]:
        nonlocal evaluations
        evaluations += 1
        if evaluations > _ALLOCATION_EVALUATIONS:
            raise ValueError(f"--epsilon: no noise multiplier found within {_ALLOCATION_EVALUATIONS} epsilon queries")
        upper = _certified_epsilon("random-allocation", math.exp(log_sigma), schedule, delta)[1]
        return (math.log(upper) - math.log(epsilon) if upper > 0 else -math.inf), upper

    width = math.log(_ALLOCATION_SIGMA_RATIO)
    log_guess = math.log(guess)
    value, upper = excess(log_guess)
    # (log σ, f, certified ε) of the tightest evaluated point on each side.
    certified = (log_guess, value, upper) if value <= 0 else None
    refused = None if value <= 0 else (log_guess, value, upper)
    direction, step, last = (1.0 if value > 0 else -1.0), 0.02, (log_guess, value)
    while certified is None or refused is None:  # bracketing, toward the root: secant steps, else doubling ones
        log_sigma = last[0] + direction * step
        value, upper = excess(log_sigma)
        if value <= 0:
            certified = (log_sigma, value, upper)
        else:
            refused = (log_sigma, value, upper)
        if math.isfinite(value) and math.isfinite(last[1]) and value != last[1]:
            ahead = direction * value * (log_sigma - last[0]) / (last[1] - value)  # to the secant's root
            step = min(max(1.2 * ahead, 2 * width), 4.0) if ahead > 0 else 2 * step
        else:
            step *= 2
        last = (log_sigma, value)
    kept = 0  # the end kept by the last step: −1 the refused one, +1 the certified one
    while certified[0] - refused[0] > width:
        (x0, f0, _), (x1, f1, _) = refused, certified
        if math.isfinite(f0) and math.isfinite(f1):
            middle = x0 - f0 * (x1 - x0) / (f1 - f0)
            middle = min(max(middle, x0 + 0.05 * (x1 - x0)), x1 - 0.05 * (x1 - x0))  # the bracket shrinks 5 % at least
        else:
            middle = 0.5 * (x0 + x1)
        value, upper = excess(middle)
        if value <= 0:
            certified = (middle, value, upper)
            if kept == -1:  # Illinois: an end kept twice in a row loses half its weight
                refused = (x0, f0 / 2, refused[2])
            kept = -1
        else:
            refused = (middle, value, upper)
            if kept == 1:
                certified = (x1, f1 / 2, certified[2])
            kept = 1
    return math.exp(certified[0]), certified[2]


def _calibrate(args: argparse.Namespace, schedule: _Schedule) -> None:
    if schedule.sampling == "shuffle":
        return _shuffle_calibrate(args, schedule)
    sigma, evidence = _calibrated_sigma(schedule.sampling, schedule, args.epsilon, args.delta)
    record = {"noise_multiplier": sigma, "epsilon": args.epsilon, **_record(args, schedule, schedule.sampling),
              **evidence}
    _emit(record, args.json, f"DP-SGD noise multiplier ({schedule.sampling} sampling)", schedule.notes,
          inputs=("epsilon",))


def _random_allocation_or_reason(function: Callable[[], _Result]) -> tuple[_Result, None] | tuple[None, str]:
    """``function()``, or the one-line reason random allocation cannot be accounted here."""
    try:
        return function(), None
    except ValueError as error:
        return None, str(error)


def _shuffle_epsilon(args: argparse.Namespace, schedule: _Schedule, sigma: float) -> None:
    poisson_lower, poisson_upper, _ = _certified_epsilon("poisson", sigma, schedule, args.delta)
    allocation, reason = _random_allocation_or_reason(
        lambda: _certified_epsilon("random-allocation", sigma, schedule, args.delta))
    record = {"epsilon": None, "noise_multiplier": sigma, **_record(args, schedule, "shuffle"),
              "poisson_epsilon": poisson_upper, "poisson_interval": [poisson_lower, poisson_upper],
              "poisson_label": "not valid for shuffled batches: the certified epsilon if batches were Poisson-sampled"}
    record.update(_allocation_fields(allocation, reason, "epsilon"))
    record.update(_lower_bound_fields(sigma, schedule, args.delta))
    _emit(record, args.json, "DP-SGD epsilon (shuffled batches: no certified number)", schedule.notes,
          inputs=("noise_multiplier",))


def _shuffle_calibrate(args: argparse.Namespace, schedule: _Schedule) -> None:
    poisson = _calibrated_sigma("poisson", schedule, args.epsilon, args.delta)[0]
    allocation, reason = _random_allocation_or_reason(
        lambda: _calibrated_sigma("random-allocation", schedule, args.epsilon, args.delta)[0])
    record = {"noise_multiplier": None, "epsilon": args.epsilon, **_record(args, schedule, "shuffle"),
              "poisson_noise_multiplier": float(poisson),
              "poisson_label": "not valid for shuffled batches: the certified noise multiplier if batches were "
                               "Poisson-sampled"}
    record.update(_allocation_fields(None if allocation is None else float(allocation), reason, "noise_multiplier"))
    bound = _lower_bound_fields(float(poisson), schedule, args.delta)
    bound["shuffle_lower_bound_label"] = "at poisson_noise_multiplier: " + bound["shuffle_lower_bound_label"]
    record.update(bound)
    _emit(record, args.json, "DP-SGD noise multiplier (shuffled batches: no certified number)", schedule.notes,
          inputs=("epsilon",))


def _allocation_fields(value: tuple[float, float, PrivacyGuarantee] | float | None, reason: str | None,
                       quantity: str) -> Record:
    if value is None:
        return {f"random_allocation_{quantity}": None, "random_allocation_label": f"not available: {reason}"}
    fields: Record = {"random_allocation_label": "certified, if you sample batches by random allocation (each record in "
                                               "one uniformly drawn step of every epoch) instead of shuffling"}
    if isinstance(value, tuple):  # an epsilon query's (lower, upper, guarantee)
        lower, upper, _ = value
        fields.update(random_allocation_epsilon=upper, random_allocation_interval=[lower, upper])
    else:
        fields["random_allocation_noise_multiplier"] = value
    return fields


def _lower_bound_fields(sigma: float, schedule: _Schedule, delta: float) -> Record:
    label = ("estimate of a lower bound: shuffled batches at this noise multiplier are (epsilon, delta)-DP for no "
             "smaller epsilon (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang 2024; neighbours by zeroing "
             "one record out, batches reshuffled each epoch; their pair's masses in floating point, not proven)")
    if schedule.lower_epochs == 0:
        return {"shuffle_lower_bound_epsilon": None,
                "shuffle_lower_bound_label": "not available: fewer steps than one epoch"}
    try:
        value = shuffle_lower_bound_epsilon(sigma, schedule.per_epoch, schedule.lower_epochs, delta)
    except ValueError as error:
        return {"shuffle_lower_bound_epsilon": None, "shuffle_lower_bound_label": f"not available: {error}"}
    return {"shuffle_lower_bound_epsilon": value, "shuffle_lower_bound_label": label}


def shuffle_lower_bound_epsilon(sigma: float, steps_per_epoch: int, epochs: int, delta: float) -> float:
    r"""A lower bound on ε(δ) of DP-SGD with shuffled fixed-size batches (Chua, Ghazi, Kamath, Kumar,
    Manurangsi, Sinha & Zhang 2024, "How Private are DP-SGD Implementations?", ICML; their
    ``ShuffleAccountant``).

    Their pair: n = bT records with 1-dimensional gradients, all −1 but one record x = 1, against the
    same dataset with x zeroed out (gradient 0). One epoch of T shuffled batches releases the T batch
    sums plus N(0, σ²I_T); shifted by b, that is P = (1/T) Σ_t N(2e_t, σ²I_T) against
    Q = (1/T) Σ_t N(e_t, σ²I_T), and ``epochs`` reshuffled epochs release P^E against Q^E. Any
    post-processing lower-bounds the hockey-stick divergence; like theirs, this one keeps the slice
    of max_t x_t each epoch falls in, whose laws are closed-form,
    P(max_t x_t <= c) = Φ((c − 2)/σ) Φ(c/σ)^{T−1} (and c − 1 under Q). The finite pair of slice
    masses is composed E times by :mod:`dpmech.pld` and the *lower* end of its certified ε(δ)
    interval is returned (the larger of both orders of the pair).

    The composition is certified for the slice masses as computed; the masses come from scipy's
    ``log_ndtr`` in floating point, so the result is an estimate of a lower bound, not a proven one.
    Coarser slices only lower it.
    """
    import numpy as np
    from scipy import special

    from ..pld import accountant
    from ..pld.pairs import FinitePair

    high_mean, low_mean = _SHUFFLE_MEANS
    count = steps_per_epoch - 1

    def log_cdf(caps: np.ndarray, mean: float) -> np.ndarray:
        # scipy ships no types: the annotation states what log_ndtr returns for a float array.
        log_f: np.ndarray = special.log_ndtr((caps - mean) / sigma) + count * special.log_ndtr(caps / sigma)
        return log_f

    # Caps where the max's CDF is e^-40 under Q (low end) and its tail e^-40 under P (high end).
    low_cap = sigma * float(special.ndtri(math.exp(_LOG_TAIL_MASS / steps_per_epoch)))
    high_cap = high_mean + sigma * float(-special.ndtri(-math.expm1(math.log1p(-math.exp(_LOG_TAIL_MASS))
                                                                   / steps_per_epoch)))
    slices = max(int(math.ceil((high_cap - low_cap) * _SLICES_PER_UNIT_LOSS / sigma**2)), 1)
    caps = np.linspace(low_cap, high_cap, min(slices, 20000) + 1)
    masses = []
    for mean in (high_mean, low_mean):
        log_f = log_cdf(caps, mean)
        # log of F(c_{i+1}) − F(c_i), and the two edges F(c_0) and 1 − F(c_m).
        inner = log_f[1:] + np.log(-np.expm1(log_f[:-1] - log_f[1:]))
        masses.append(np.concatenate([[log_f[0]], inner, [math.log(-math.expm1(log_f[-1]))]]))
    log_p, log_q = masses
    # The telescoping masses sum to 1 up to rounding; FinitePair wants 1 within 1e-12.
    log_p -= np.log(math.fsum(np.exp(log_p)))
    log_q -= np.log(math.fsum(np.exp(log_q)))
    interval = accountant.epsilon([(FinitePair(log_p=np.minimum(log_p, 0.0), log_q=np.minimum(log_q, 0.0)), epochs)],
                                  delta)
    return float(np.asarray(interval.lower).reshape(-1)[0])


def _emit(record: Record, as_json: bool, title: str, notes: Sequence[str], inputs: tuple[str, ...] = ()) -> None:
    """Print ``record``: computed ε, σ and δ rounded up, lower bounds down, ``inputs`` echoed exactly."""
    from ..directed_rounding import format_down, format_up
    from .output import emit

    notes = [note for note in notes if note]
    if notes:
        record["note"] = "; ".join(notes)
    shown = {}
    for key, value in record.items():
        if key.endswith("interval") and value is not None:
            shown[key] = f"[{format_down(value[0])}, {format_up(value[1])}]"
        elif value is None:
            shown[key] = "none (see labels)"
    directions = {key: "up" for key in record
                  if key.endswith(("epsilon", "noise_multiplier", "achieved_delta")) and key not in inputs}
    # A lower bound is safe rounded down.
    directions.update({key: "down" for key in record if "lower_bound" in key})
    emit(record, as_json, title, directions=directions, shown=shown)
