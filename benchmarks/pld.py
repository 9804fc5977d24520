"""dpmech's numeric PLD accountant against dp_accounting, prv_accountant and opacus: issue 28's length table.

The length section also has random-allocation rows (issue 29): ``RandomAllocationEvent`` with t = 100 steps per
epoch beside Poisson q = 0.01, and one epoch of t = 1000 and of t = 10⁴ at σ = 0.8 beside pld-accounting 2.0
(Feldman & Shenfeld 2026; run once, without numba, so minutes; not with ``--quick``) and dpmech's Poisson q = 1/t,
and short epochs (1 of t = 2 and 20, 2 of 20, 3 of 60; σ = 0.8) beside pld-accounting (not with ``--quick``).

Usage::

    python benchmarks/pld.py [--quick] [--repeats N] [--only SECTION]

``--quick`` runs only the 10³- and 10⁴-step rows of the length section (one repeat unless
``--repeats`` is given), so that a test can run the script in seconds. ``--only`` runs one
section: ``length``, ``heterogeneous``, ``small_eps``, ``tiny_delta``, ``heavy_tails`` or
``comparisons``.

The script goes through dpmech's public API only (``PrivacyLedger(...).epsilon(delta,
method=...)``, ``.delta(...)`` and ``dpmech.pld.poisson_subsampled_gaussian_sigma``), with
no discretisation given, so it measures whatever the engine's default call is when it runs.

Columns. Each dpmech row is its certified interval for the solved-for quantity: ``lower``,
``estimate``, ``upper`` (the reported value, never below the tight one), ``width`` =
upper − lower, ``rel width`` = width / upper where given, the guarantee's ``note`` if any,
and ``s``, its CPU seconds. Beside it, one line per anchor on the same input: the anchor's
value (a point value for dp_accounting's pessimistic PLD accountant and for RDP, which is an
upper bound; prv_accountant's (lower, estimate, upper)), its CPU seconds, and ``ratio`` =
anchor seconds / dpmech seconds (above 1: dpmech is faster). An anchor that raises prints
its exception; one still running after 120 s (wall) is stopped and printed as such, as is a
dpmech call after 600 s. Targets (issue 28) are printed beside the rows they concern.

Threads and timing. Every pool is set to one thread (OMP, MKL, OpenBLAS, vecLib, numexpr,
and torch through OMP) before numpy loads, and each call also runs under
``threadpoolctl.threadpool_limits(1)``. Each measurement runs in a forked child process
(so that a stalled anchor can be stopped, and no engine cache outlives a measurement) and
is timed there with ``time.process_time``: CPU seconds of that process, construction of
the ledger or accountant included, imports excluded. The time printed is the median over
``--repeats`` runs (default 3); a measurement whose first run takes more than 5 s runs once.
Numbers taken on a shared machine are provisional.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                  "NUMEXPR_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse
import math
import multiprocessing
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dp_accounting import dp_event
from dp_accounting.mechanism_calibration import ExplicitBracketInterval, calibrate_dp_mechanism
from dp_accounting.pld import privacy_loss_distribution as dp_pld
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import LaplaceMechanism, PoissonSubsampledGaussianMechanism
from scipy import optimize, special
from threadpoolctl import threadpool_limits

import dpmech
import dpmech.pld
from dpmech.directed_rounding import format_down, format_up
from dpmech import (
    ADD_REMOVE_ONE,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    RandomAllocationEvent,
    PrivacyLedger,
    PureEpsilonEvent,
)

try:  # opacus is no dependency of dpmech
    from opacus.accountants import PRVAccountant as OpacusPRVAccountant
    from opacus.accountants import RDPAccountant as OpacusRDPAccountant
    from opacus.accountants.utils import get_noise_multiplier
except ImportError:
    OpacusPRVAccountant = OpacusRDPAccountant = get_noise_multiplier = None

# opacus's RDP calibration warns at every step where its largest order is optimal; the tables say enough.
warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")

ANCHOR_LIMIT_S = 120.0
DPMECH_LIMIT_S = 600.0
LONG_ROW_S = 5.0
_FORK = multiprocessing.get_context("fork")


# --------------------------------------------------------------------------- measuring


@dataclass
class Measured:
    seconds: float  # median CPU seconds, nan when nothing finished
    value: Any = None
    failure: Optional[str] = None  # the exception, or that the call was stopped
    runs: int = 0


def _child(connection, function, repeats):
    try:
        for _ in range(repeats):
            with threadpool_limits(1):
                start = time.process_time()
                value = function()
                seconds = time.process_time() - start
            connection.send(("ok", seconds, value))
            if seconds > LONG_ROW_S:
                break
    except BaseException as error:  # reported in the table, never raised
        text = " ".join(f"{type(error).__name__}: {error}".split())
        connection.send(("error", text[:160], None))
    connection.send(("done", None, None))
    connection.close()


def measure(function: Callable[[], Any], repeats: int, limit: float = ANCHOR_LIMIT_S) -> Measured:
    """Run ``function`` ``repeats`` times in a forked child; median CPU seconds, last value."""
    receiver, sender = _FORK.Pipe(duplex=False)
    process = _FORK.Process(target=_child, args=(sender, function, repeats), daemon=True)
    process.start()
    sender.close()
    times, value, failure = [], None, None
    while True:
        if not receiver.poll(limit):
            failure = f"stopped: still running after {limit:.0f} s"
            process.kill()
            break
        try:
            kind, seconds, payload = receiver.recv()
        except EOFError:
            process.join()
            failure = f"died (exit code {process.exitcode})"
            break
        if kind == "ok":
            times.append(seconds)
            value = payload
        elif kind == "error":
            failure = seconds
        else:
            break
    process.join()
    receiver.close()
    return Measured(statistics.median(times) if times else math.nan, value, failure, len(times))


# --------------------------------------------------------------------------- formatting


def power(value):
    """1e-4 for 0.0001, 1e6 for 10⁶."""
    mantissa, exponent = f"{value:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def number(value, digits=7):
    if value is None:
        return "-"
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return f"{value:.{digits}g}"


def seconds(measured: Measured) -> str:
    if math.isnan(measured.seconds):
        return "-"
    text = f"{measured.seconds:.3f}" if measured.seconds < 10 else f"{measured.seconds:.1f}"
    return text + ("" if measured.runs > 1 else " (1 run)")


def ratio(anchor: Measured, ours: Measured) -> str:
    if math.isnan(anchor.seconds) or math.isnan(ours.seconds) or ours.seconds <= 0:
        return "-"
    return f"{anchor.seconds / ours.seconds:.2f}"


def anchor_value(measured: Measured, digits=7) -> str:
    if measured.failure and measured.value is None:
        return measured.failure
    value = measured.value
    if isinstance(value, str):
        return value
    if isinstance(value, tuple):
        return "(" + ", ".join(number(part, digits) for part in value) + ")"
    return number(value, digits)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "/") for cell in row) + " |" for row in rows]
    print("\n".join(lines))
    print()


def heading(text):
    print(f"### {text}\n")


class Interval:
    """A dpmech guarantee's interval, note and certification, as the child sends it back."""

    def __init__(self, measured: Measured):
        self.measured = measured
        if measured.value is None:
            self.lower = self.estimate = self.upper = math.nan
            self.note = measured.failure or ""
            self.certified = False
        else:
            (self.lower, self.estimate, self.upper), self.note, self.certified = measured.value
            if measured.failure:
                self.note = f"{self.note}; {measured.failure}".strip("; ")

    @property
    def width(self):
        return self.upper - self.lower

    @property
    def relative_width(self):
        return self.width / self.upper if self.upper > 0 else math.nan

    def cells(self, digits=7, relative=False):
        # The certified ends print on their safe sides: the lower rounded down, the estimate and upper up.
        cells = [format_down(self.lower, digits), format_up(self.estimate, digits), format_up(self.upper, digits),
                 format_up(self.width, 2)]
        if relative:
            cells.append(number(self.relative_width, 2))
        return cells + [self.note or ("" if self.certified else "not certified")]


def dpmech_epsilon(make_ledger, delta, method="numeric"):
    def call():
        guarantee = make_ledger().epsilon(delta, method=method)
        return tuple(guarantee.interval), guarantee.note, guarantee.certified

    return call


def dpmech_delta(make_ledger, epsilon, method="numeric"):
    def call():
        guarantee = make_ledger().delta(epsilon, method=method)
        return tuple(guarantee.interval), guarantee.note, guarantee.certified

    return call


def grouped_rows(label_cells, ours: Interval, our_cells, anchors, blank_label=False):
    """One line per anchor; dpmech's cells on the first line of its group only."""
    rows = []
    if not anchors:
        anchors = [("-", None)]
    for index, (name, measured) in enumerate(anchors):
        first = index == 0
        mine = our_cells + [seconds(ours.measured)] if first else [""] * (len(our_cells) + 1)
        label = label_cells if first or not blank_label else [""] * len(label_cells)
        if measured is None:
            rows.append(label + mine + [name, "-", "-", "-"])
        else:
            rows.append(label + mine + [name, anchor_value(measured), seconds(measured), ratio(measured, ours.measured)])
    return rows


ANCHOR_HEADER = ["anchor", "anchor value", "anchor s", "ratio"]
INTERVAL_HEADER = ["lower", "estimate", "upper", "width"]


# --------------------------------------------------------------------------- the inputs


def sgd_ledger(sigma=1.0, rate=0.01, steps=1000):
    return lambda: PrivacyLedger(ADD_REMOVE_ONE).record(PoissonSampledEvent(GaussianEvent(sigma), rate), count=steps)


def allocation_ledger(sigma=1.0, steps_per_epoch=100, epochs=10, selected=1):
    """Random allocation (each record in ``selected`` of ``steps_per_epoch`` steps per epoch), the counterpart of
    Poisson rate selected/steps_per_epoch over ``epochs`` · ``steps_per_epoch`` steps."""
    event = RandomAllocationEvent(GaussianEvent(sigma), num_steps=steps_per_epoch, num_selected=selected)
    return lambda: PrivacyLedger(ADD_REMOVE_ONE).record(event, count=epochs)


# pld-accounting 2.0's gaussian_allocation_epsilon_range runs without numba (its optional "performance" extra), much
# slower: it gets this long before it is stopped.
PLD_ACCOUNTING_LIMIT_S = 900.0


def pld_accounting_allocation(sigma, steps_per_epoch, delta, selected=1):
    """pld-accounting 2.0 (Feldman & Shenfeld 2026): (upper, lower) ε of one epoch of random allocation."""
    def call():
        from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range

        return tuple(gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=steps_per_epoch,
                                                       num_selected=selected))

    return call


def dp_accounting_pld(event_factory, delta, discretization):
    def call():
        accountant = PLDAccountant(value_discretization_interval=discretization)
        accountant.compose(event_factory())
        return accountant.get_epsilon(delta)

    return call


def dp_accounting_rdp(event_factory, delta):
    def call():
        accountant = RdpAccountant()
        accountant.compose(event_factory())
        return accountant.get_epsilon(delta)

    return call


def sgd_event(sigma=1.0, rate=0.01, steps=1000):
    return lambda: dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(sigma)),
                                                steps)


def prv_sgd(delta, sigma=1.0, rate=0.01, steps=1000, eps_error=0.01):
    def call():
        accountant = PRVAccountant(
            prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=rate)],
            max_self_compositions=[steps], eps_error=eps_error, delta_error=delta / 1000)
        return tuple(accountant.compute_epsilon(delta=delta, num_self_compositions=[steps]))

    return call


def opacus_epsilon(kind, delta, sigma=1.0, rate=0.01, steps=1000):
    def call():
        if OpacusPRVAccountant is None:
            raise ImportError("opacus not installed")
        accountant = OpacusPRVAccountant() if kind == "prv" else OpacusRDPAccountant()
        accountant.history = [(sigma, rate, steps)]
        return accountant.get_epsilon(delta)

    return call


def sgd_anchors(delta, sigma, rate, steps, repeats, pld_discretizations=(1e-4, 1e-3), prv=True, opacus=("prv", "rdp")):
    anchors = []
    for discretization in pld_discretizations:
        anchors.append((f"dp_accounting PLD {power(discretization)}",
                        measure(dp_accounting_pld(sgd_event(sigma, rate, steps), delta, discretization), repeats)))
    if prv:
        anchors.append(("prv_accountant eps_error 0.01", measure(prv_sgd(delta, sigma, rate, steps), repeats)))
    for kind in opacus:
        anchors.append((f"opacus {kind.upper()}Accountant", measure(opacus_epsilon(kind, delta, sigma, rate, steps), repeats)))
    return anchors


# --------------------------------------------------------------------------- sections


def section_length(repeats, quick):
    heading("1. Length (DP-SGD): Poisson q = 0.01, σ = 1, add/remove-one, ε at δ = 1e-5, dpmech's default numeric call")
    step_counts = (10 ** 3, 10 ** 4) if quick else (10 ** 3, 10 ** 4, 10 ** 5, 10 ** 6)
    rows, times, anchor_times = [], {}, {}
    for steps in step_counts:
        ours = Interval(measure(dpmech_epsilon(sgd_ledger(1.0, 0.01, steps), 1e-5), repeats, DPMECH_LIMIT_S))
        target = max(1e-3, 1e-4 * ours.upper) if math.isfinite(ours.upper) else math.nan
        meets = "yes" if ours.width <= target else "no"
        anchors = sgd_anchors(1e-5, 1.0, 0.01, steps, repeats)
        times[steps] = ours.measured.seconds
        anchor_times[steps] = anchors[0][1].seconds
        rows += grouped_rows([power(steps)],
                             ours, ours.cells() + [number(target, 2), meets], anchors, blank_label=True)
    # Random allocation beside Poisson: t = 100 steps per epoch (each record once per epoch: q = 0.01's
    # counterpart), steps/100 epochs; and one epoch of t = 1000 (pld-accounting's anchor) and of 10⁴ at σ = 0.8.
    for steps in step_counts[:2]:
        ours = Interval(measure(dpmech_epsilon(allocation_ledger(1.0, 100, steps // 100), 1e-5), repeats, DPMECH_LIMIT_S))
        target = max(1e-3, 1e-4 * ours.upper) if math.isfinite(ours.upper) else math.nan
        rows += grouped_rows([f"{power(steps)} RA t=100"], ours,
                             ours.cells() + [number(target, 2), "yes" if ours.width <= target else "no"], [])
    # Beside each: pld-accounting 2.0 (its (upper, lower), run once: minutes without numba) and dpmech's Poisson
    # sampling at q = 1/t over the epoch's t steps, the scheme random allocation replaces.
    for steps_per_epoch in (1000, 10 ** 4):
        ours = Interval(measure(dpmech_epsilon(allocation_ledger(0.8, steps_per_epoch, 1), 1e-5), repeats,
                                DPMECH_LIMIT_S))
        target = max(1e-3, 1e-4 * ours.upper) if math.isfinite(ours.upper) else math.nan
        poisson = Interval(measure(dpmech_epsilon(sgd_ledger(0.8, 1.0 / steps_per_epoch, steps_per_epoch), 1e-5),
                                   repeats, DPMECH_LIMIT_S))
        anchors = [] if quick else [  # (minutes: not in --quick)
            ("pld-accounting 2.0 (upper, lower)",
             measure(pld_accounting_allocation(0.8, steps_per_epoch, 1e-5), 1, PLD_ACCOUNTING_LIMIT_S))]
        poisson_cells = poisson.cells()
        anchors += [("dpmech Poisson q=1/t", Measured(poisson.measured.seconds,
                                                      f"[{poisson_cells[0]}, {poisson_cells[2]}] {poisson_cells[4]}".strip()))]
        rows += grouped_rows([f"1 epoch RA t={power(steps_per_epoch)} σ=0.8"], ours,
                             ours.cells() + [number(target, 2), "yes" if ours.width <= target else "no"], anchors)
    # Short epochs, where ε is large (issue 29: dpmech was slower than pld-accounting there): one epoch of 1 of t = 2
    # and 20 and of k of t = (4, 2), (7, 3) (blocks of 2 and 3 steps, whose upper end was +∞), (20, 2) and (60, 3) at
    # σ = 0.8, and blocks of 2 steps at σ = 0.5 and 0.6 (upper ends of +∞ or 0.3 wide before the remove direction's
    # P-law was summed as such), beside pld-accounting 2.0 (not in --quick).
    short_rows = [(0.8, 2, 1), (0.8, 4, 2), (0.8, 7, 3), (0.8, 20, 1), (0.8, 20, 2), (0.8, 60, 3)]
    short_rows += [(sigma, 2 * selected, selected) for sigma in (0.5, 0.6) for selected in (1, 2, 3)]
    for sigma, steps_per_epoch, selected in () if quick else short_rows:
        ours = Interval(measure(dpmech_epsilon(allocation_ledger(sigma, steps_per_epoch, 1, selected), 1e-5), repeats,
                                DPMECH_LIMIT_S))
        target = max(1e-3, 1e-4 * ours.upper) if math.isfinite(ours.upper) else math.nan
        anchors = [("pld-accounting 2.0 (upper, lower)",
                    measure(pld_accounting_allocation(sigma, steps_per_epoch, 1e-5, selected), 1, PLD_ACCOUNTING_LIMIT_S))]
        rows += grouped_rows([f"1 epoch RA {selected} of t={steps_per_epoch} σ={sigma}"], ours,
                             ours.cells() + [number(target, 2), "yes" if ours.width <= target else "no"], anchors)
    table(["steps", *INTERVAL_HEADER, "note", "target width", "meets", "dpmech s", *ANCHOR_HEADER], rows)
    first, last = step_counts[0], step_counts[-1]
    print(f"Time growth from {power(first)} to {power(last)} steps: dpmech ×{number(times[last] / times[first], 3)}, "
          f"dp_accounting PLD 1e-4 ×{number(anchor_times[last] / anchor_times[first], 3)}. "
          "Target width: max(1e-3, 1e-4·ε) with ε = dpmech's upper end.\n")


def section_heterogeneous(repeats):
    heading("2. Heterogeneous 10⁶-event sampled ledger: Poisson q = 3e-4, σ ∈ {0.8, 1.0, 1.2} in blocks "
            "of 333 334 / 333 333 / 333 333 events, add/remove-one, ε at δ = 1e-5")
    blocks = ((0.8, 333_334), (1.0, 333_333), (1.2, 333_333))
    rate = 3e-4

    def ledger():
        result = PrivacyLedger(ADD_REMOVE_ONE)
        for sigma, count in blocks:
            result.record(PoissonSampledEvent(GaussianEvent(sigma), rate), count=count)
        return result

    def event():
        return dp_event.ComposedDpEvent([
            dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(sigma)), count)
            for sigma, count in blocks])

    ours = Interval(measure(dpmech_epsilon(ledger, 1e-5), repeats, DPMECH_LIMIT_S))
    pld_anchor = measure(dp_accounting_pld(event, 1e-5, 1e-4), repeats)
    rdp_anchor = measure(dp_accounting_rdp(event, 1e-5), repeats)
    rows = grouped_rows(["3 × Poisson(3e-4) blocks"], ours, ours.cells(),
                        [("dp_accounting PLD 1e-4", pld_anchor), ("dp_accounting RDP", rdp_anchor)], blank_label=True)
    table(["ledger", *INTERVAL_HEADER, "note", "dpmech s", *ANCHOR_HEADER], rows)
    rdp = rdp_anchor.value if isinstance(rdp_anchor.value, float) else math.nan
    print(f"Targets: lower > 0: {'yes' if ours.lower > 0 else 'no'}; width ≤ 1e-2: "
          f"{'yes' if ours.width <= 1e-2 else 'no'}; upper ≤ RDP ({number(rdp)}): "
          f"{'yes' if ours.upper <= rdp else 'no'}.\n")


def section_small_epsilon(repeats):
    heading("3. Small ε: Poisson q = 0.01, σ = 100, 1000 steps, add/remove-one, ε at δ = 1e-5")
    ours = Interval(measure(dpmech_epsilon(sgd_ledger(100.0, 0.01, 1000), 1e-5), repeats, DPMECH_LIMIT_S))
    anchors = [
        ("dp_accounting PLD 1e-4", measure(dp_accounting_pld(sgd_event(100.0), 1e-5, 1e-4), repeats)),
        ("prv_accountant eps_error 0.01", measure(prv_sgd(1e-5, sigma=100.0), repeats)),
        ("prv_accountant eps_error 1e-4", measure(prv_sgd(1e-5, sigma=100.0, eps_error=1e-4), repeats)),
    ]
    rows = grouped_rows(["q=0.01 σ=100 k=1000"], ours, ours.cells(relative=True), anchors, blank_label=True)
    table(["ledger", *INTERVAL_HEADER, "rel width", "note", "dpmech s", *ANCHOR_HEADER], rows)
    print(f"Target rel width ≤ 1 %: {'yes' if ours.relative_width <= 0.01 else 'no'}.\n")

    print("Calibration: σ for ε = 0.01, δ = 1e-5 (q = 0.01, 1000 steps). At each σ: dpmech's default numeric "
          "ε interval at δ = 1e-5, and dpmech's certified δ at ε = 0.01, on the grid that certified dpmech's own σ "
          "(poisson_subsampled_gaussian_sigma returns it) or on the default grid for the anchors' σ.\n")
    calibration_rows(0.01, 1e-5, repeats, [
        ("dp_accounting calibrate (PLD 1e-4)", lambda: PLDAccountant(value_discretization_interval=1e-4)),
        ("dp_accounting calibrate (RDP)", RdpAccountant),
    ], opacus=False, bracket=(1.0, 1000.0), tol=1e-2)


def calibration_rows(epsilon, delta, repeats, dp_accountants, opacus=True, bracket=(0.3, 5.0), tol=1e-3):
    ours = measure(lambda: dpmech.pld.poisson_subsampled_gaussian_sigma(0.01, 1000, epsilon=epsilon, delta=delta),
                   repeats, DPMECH_LIMIT_S)
    entries = [("dpmech poisson_subsampled_gaussian_sigma", ours)]
    for name, fresh in dp_accountants:
        entries.append((name, measure(lambda fresh=fresh: calibrate_dp_mechanism(
            fresh, lambda sigma: sgd_event(sigma)(), epsilon, delta, ExplicitBracketInterval(*bracket), tol=tol),
            repeats)))
    if opacus:
        for kind in ("rdp", "prv"):
            entries.append((f"opacus get_noise_multiplier({kind})", measure(
                lambda kind=kind: _opacus_sigma(kind, epsilon, delta), repeats)))
    rows = []
    for name, measured in entries:
        sigma = measured.value if isinstance(measured.value, float) else None
        if sigma is not None:
            check = Interval(measure(dpmech_epsilon(sgd_ledger(float(sigma)), delta), 1, DPMECH_LIMIT_S))
            at_sigma = f"[{format_down(check.lower, 6)}, {format_up(check.upper, 6)}]"
            safe = "yes" if check.upper <= epsilon else "no"
            # δ at the target ε on the grid that certified dpmech's σ (its CalibratedParameter carries it);
            # on the default grid for the anchors' σ.
            grid = getattr(sigma, "discretization", None)
            options = {} if grid is None else {"discretization": grid}
            delta_check = Interval(measure(lambda sigma=sigma, options=options: _delta_at(sigma, epsilon, options), 1,
                                           DPMECH_LIMIT_S))
            at_epsilon = f"{format_up(delta_check.upper, 6)} ({'grid ' + number(grid, 3) if grid else 'default grid'})"
            delta_safe = "yes" if delta_check.upper <= delta else "no"
        else:
            at_sigma, safe, at_epsilon, delta_safe = "-", "-", "-", "-"
        rows.append([f"ε={epsilon:g} δ={power(delta)}", name, number(float(sigma), 7) if sigma else anchor_value(measured),
                     seconds(measured), ratio(measured, ours) if measured is not ours else "", at_sigma, safe,
                     at_epsilon, delta_safe])
    table(["target", "calibrator", "σ", "s", "ratio", "dpmech ε(δ) at σ, default call", "ε ≤ target",
           "dpmech δ(ε) upper at σ", "δ ≤ target"], rows)


def _delta_at(sigma, epsilon, options):
    guarantee = sgd_ledger(float(sigma))().delta(epsilon, method="numeric", **options)
    return tuple(guarantee.interval), guarantee.note, guarantee.certified


def _opacus_sigma(kind, epsilon, delta):
    if get_noise_multiplier is None:
        raise ImportError("opacus not installed")
    return float(get_noise_multiplier(target_epsilon=epsilon, target_delta=delta, sample_rate=0.01, steps=1000,
                                      accountant=kind, epsilon_tolerance=0.001))


def rr_probability(epsilon):
    """dp_accounting's randomized-response noise parameter for binary RR with this ε."""
    return 2.0 / (math.exp(epsilon) + 1.0)


def section_tiny_delta(repeats):
    heading("4. Tiny δ")
    rows = []

    ours = Interval(measure(dpmech_epsilon(sgd_ledger(1.0, 0.01, 1000), 1e-40), repeats, DPMECH_LIMIT_S))
    anchors = sgd_anchors(1e-40, 1.0, 0.01, 1000, repeats, pld_discretizations=(1e-4,), opacus=("rdp",))
    rows += grouped_rows(["1000 × Poisson(0.01, σ=1)", "1e-40", "numeric", "-"], ours, ours.cells(), anchors,
                         blank_label=True)

    ours = Interval(measure(dpmech_epsilon(sgd_ledger(0.5, 1e-4, 10 ** 5), 1e-5), repeats, DPMECH_LIMIT_S))
    anchors = sgd_anchors(1e-5, 0.5, 1e-4, 10 ** 5, repeats, pld_discretizations=(1e-4,), opacus=("rdp",))
    rows += grouped_rows(["1e5 × Poisson(1e-4, σ=0.5)", "1e-5", "numeric", "-"], ours, ours.cells(), anchors,
                         blank_label=True)

    def rr_ledger():
        return PrivacyLedger(dpmech.REPLACE_ONE).record(PureEpsilonEvent(0.5, num_outcomes=2), count=1000)

    # Binary RR with ε = 0.5: the largest loss, 500, has probability p = (e^0.5 / (1 + e^0.5))^1000 ≈ 1e-206,
    # so for δ < p the tight ε is 500 + log(1 − δ/p), which is 500 to double precision at δ = 1e-300.
    log_top = 1000 * (0.5 - math.log1p(math.exp(0.5)))
    truths = {1e-200: "496.98213176", 1e-300: number(500 + math.log1p(-math.exp(math.log(1e-300) - log_top)), 12)}
    for delta in (1e-200, 1e-300):
        ours = Interval(measure(dpmech_epsilon(rr_ledger, delta, method="exact"), repeats, DPMECH_LIMIT_S))
        anchor = measure(lambda delta=delta: dp_pld.from_randomized_response(
            rr_probability(0.5), 2, value_discretization_interval=1e-4).self_compose(1000).get_epsilon_for_delta(delta),
            repeats)
        rows += grouped_rows(["1000 × binary RR ε=0.5", f"{delta:g}", "exact", truths[delta]], ours,
                             ours.cells(digits=12), [("dp_accounting PLD 1e-4", anchor)], blank_label=True)
    table(["ledger", "δ", "method", "truth", *INTERVAL_HEADER, "note", "dpmech s", *ANCHOR_HEADER], rows)


def _heavy_truth(delta):
    """ε of Gaussian(σ = 0.02, sensitivity 1) composed with binary RR(ε = 1), from closed forms."""
    mu = 1.0 / 0.02

    def log_gaussian_delta(epsilon):
        a, b = special.log_ndtr(-epsilon / mu + mu / 2), special.log_ndtr(-epsilon / mu - mu / 2)
        return a + math.log1p(-math.exp(min(epsilon + b - a, 0.0))) if epsilon + b - a < 0 else -math.inf

    weights = ((math.e / (1 + math.e), 1.0), (1 / (1 + math.e), -1.0))  # RR's loss under the first distribution

    def log_total(epsilon):
        return special.logsumexp([math.log(weight) + log_gaussian_delta(epsilon - loss) for weight, loss in weights])

    return optimize.brentq(lambda epsilon: log_total(epsilon) - math.log(delta), 0.0, 10_000.0, xtol=1e-10, rtol=1e-14)


def section_heavy_tails(repeats):
    heading("5. Heavy tails through numeric: GaussianEvent(0.02) (sensitivity 1) + one binary RR (ε = 1), "
            "ε at δ = 1e-5, method=\"numeric\"")

    def ledger():
        return PrivacyLedger(dpmech.REPLACE_ONE).record(GaussianEvent(0.02)).record(PureEpsilonEvent(1.0, num_outcomes=2))

    def dp_accounting(discretization):
        def call():
            gaussian = dp_pld.from_gaussian_mechanism(0.02, value_discretization_interval=discretization)
            rr = dp_pld.from_randomized_response(rr_probability(1.0), 2, value_discretization_interval=discretization)
            return gaussian.compose(rr).get_epsilon_for_delta(1e-5)

        return call

    ours = Interval(measure(dpmech_epsilon(ledger, 1e-5), repeats, DPMECH_LIMIT_S))
    truth = _heavy_truth(1e-5)
    anchors = [("closed form (log_ndtr + brentq)", Measured(math.nan, f"{truth:.10g}")),
               ("dp_accounting PLD 1e-3", measure(dp_accounting(1e-3), repeats)),
               ("dp_accounting PLD 1e-4", measure(dp_accounting(1e-4), repeats))]
    rows = grouped_rows(["Gaussian σ=0.02 + RR ε=1"], ours, ours.cells(digits=9, relative=True), anchors,
                        blank_label=True)
    table(["ledger", *INTERVAL_HEADER, "rel width", "note", "dpmech s", *ANCHOR_HEADER], rows)
    print(f"Targets: rel width ≤ 1e-3: {'yes' if ours.relative_width <= 1e-3 else 'no'}; "
          f"time ≤ 1 s: {'yes' if ours.measured.seconds <= 1.0 else 'no'}.\n")


def section_comparisons(repeats):
    heading("6. Other comparisons (issue 12's rows through the public API, default numeric call)")
    rows = []
    ours = Interval(measure(dpmech_epsilon(sgd_ledger(1.0, 0.01, 1000), 1e-20), repeats, DPMECH_LIMIT_S))
    anchors = sgd_anchors(1e-20, 1.0, 0.01, 1000, repeats, pld_discretizations=(1e-4,), opacus=())
    rows += grouped_rows(["SGM q=0.01 σ=1 k=1000 ε(δ=1e-20)"], ours, ours.cells(), anchors, blank_label=True)

    def laplace_ledger():
        return PrivacyLedger(dpmech.REPLACE_ONE).record(LaplaceEvent(2.0), count=50)

    def dp_laplace():
        return dp_pld.from_laplace_mechanism(2.0, value_discretization_interval=1e-4).self_compose(50) \
            .get_epsilon_for_delta(1e-6)

    def prv_laplace():
        accountant = PRVAccountant(prvs=[LaplaceMechanism(mu=0.5)], max_self_compositions=[50], eps_error=0.01,
                                   delta_error=1e-9)
        return tuple(accountant.compute_epsilon(delta=1e-6, num_self_compositions=[50]))

    ours = Interval(measure(dpmech_epsilon(laplace_ledger, 1e-6), repeats, DPMECH_LIMIT_S))
    rows += grouped_rows(["Laplace b=2 k=50 ε(δ=1e-6)"], ours, ours.cells(),
                         [("dp_accounting PLD 1e-4", measure(dp_laplace, repeats)),
                          ("prv_accountant eps_error 0.01", measure(prv_laplace, repeats))], blank_label=True)

    def mixed_ledger():
        return PrivacyLedger(dpmech.REPLACE_ONE).record(PureEpsilonEvent(0.1, num_outcomes=2), count=100) \
            .record(GaussianEvent(2.0), count=10)

    def dp_mixed():
        rr = dp_pld.from_randomized_response(rr_probability(0.1), 2, value_discretization_interval=1e-4)
        gaussian = dp_pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4)
        return rr.self_compose(100).compose(gaussian.self_compose(10)).get_epsilon_for_delta(1e-6)

    ours = Interval(measure(dpmech_epsilon(mixed_ledger, 1e-6), repeats, DPMECH_LIMIT_S))
    rows += grouped_rows(["RR ε=0.1 ×100 + Gaussian σ=2 ×10 ε(δ=1e-6)"], ours, ours.cells(),
                         [("dp_accounting PLD 1e-4", measure(dp_mixed, repeats))], blank_label=True)
    table(["task", *INTERVAL_HEADER, "note", "dpmech s", *ANCHOR_HEADER], rows)

    print("Calibration of σ for Poisson q = 0.01, 1000 steps, δ = 1e-5.\n")
    for epsilon in (1.0, 8.0):
        calibration_rows(epsilon, 1e-5, repeats,
                         [("dp_accounting calibrate (PLD 1e-3)", lambda: PLDAccountant(value_discretization_interval=1e-3))])


SECTIONS = ("length", "heterogeneous", "small_eps", "tiny_delta", "heavy_tails", "comparisons")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="only the 10³- and 10⁴-step rows of the length section")
    parser.add_argument("--repeats", type=int, default=None, help="runs per measurement, median taken (default 3; "
                        "1 with --quick); a measurement whose first run takes over 5 s runs once")
    parser.add_argument("--only", choices=SECTIONS, help="run one section")
    arguments = parser.parse_args(argv)
    repeats = arguments.repeats if arguments.repeats is not None else (1 if arguments.quick else 3)
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    chosen = [arguments.only] if arguments.only else (["length"] if arguments.quick else list(SECTIONS))
    print(f"dpmech {getattr(dpmech, '__version__', '?')}, Python {sys.version.split()[0]}; CPU seconds "
          f"(time.process_time), median of {repeats} run(s), one thread per pool.\n")
    for name in chosen:
        if name == "length":
            section_length(repeats, arguments.quick)
        elif name == "heterogeneous":
            section_heterogeneous(repeats)
        elif name == "small_eps":
            section_small_epsilon(repeats)
        elif name == "tiny_delta":
            section_tiny_delta(repeats)
        elif name == "heavy_tails":
            section_heavy_tails(repeats)
        else:
            section_comparisons(repeats)
        sys.stdout.flush()
    print("Provisional: taken on a shared machine; anchors and dpmech single-threaded.")


if __name__ == "__main__":
    main()
