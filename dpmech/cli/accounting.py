"""``dpmech calibrate``, ``dpmech epsilon`` and ``dpmech delta``: the Gaussian mechanism from the shell.

Every option is checked as it is parsed (:mod:`dpmech.cli.arguments`). The
printed σ, ε and δ are the library's conservative doubles (σ and ε never below
the exact ones, δ never below the exact δ, and never 0), rounded up once more
for the table; inputs are echoed exactly. A δ below the smallest double is
printed from its logarithm, and JSON carries ``log_delta`` alongside.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import arguments

# The numerical modules load in the handlers, so that registering these commands costs nothing to the
# other commands, to --help, or to a bad option. One σ, ε or δ takes dpmech._gaussian_scalar (math alone,
# the same numbers as the library's functions for one float); numpy and scipy load only where it defers.

_SMALLEST_NORMAL = 2.2250738585072014e-308
# format_log_up's guard (a relative 1e-12 on the mantissa) covers the rounding of log δ/ln 10 only
# while |log δ| stays below about 9000 (ulp(log10 δ)·ln 10 < 1e-12 there).
_DECIMAL_LOG_FROM = -5000.0


def _calibration_method(text: str) -> str:
    from .._gaussian_scalar import CALIBRATION_METHODS

    return arguments.choice(CALIBRATION_METHODS)(text)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sensitivity", type=arguments.positive_real, default=1.0,
                        help="L2 sensitivity of one release, > 0 (default 1)")
    parser.add_argument("--compositions", type=arguments.integer_in(1), default=1,
                        help="number of releases with this sigma, an integer >= 1 (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers: argparse._SubParsersAction[Any]) -> None:  # any ArgumentParser subclass's subparsers
    calibrate = subparsers.add_parser("calibrate", help="smallest sigma for a target (epsilon, delta)")
    calibrate.add_argument("--epsilon", type=arguments.positive_real, required=True, help="target epsilon > 0")
    calibrate.add_argument("--delta", type=arguments.unit_open, required=True, help="target delta in (0, 1)")
    calibrate.add_argument("--method", type=_calibration_method, default="analytic",
                           help="analytic (tight, default) or classic (Dwork-Roth, epsilon < 1)")
    _common(calibrate)
    calibrate.set_defaults(handler=_calibrate)

    epsilon = subparsers.add_parser("epsilon", help="smallest epsilon of a Gaussian at a given delta")
    epsilon.add_argument("--sigma", type=arguments.positive_real, required=True, help="noise sigma > 0")
    epsilon.add_argument("--delta", type=arguments.unit_open, required=True, help="delta in (0, 1)")
    _common(epsilon)
    epsilon.set_defaults(handler=_epsilon)

    delta = subparsers.add_parser("delta", help="tight delta of a Gaussian at a given epsilon")
    delta.add_argument("--sigma", type=arguments.positive_real, required=True, help="noise sigma > 0")
    delta.add_argument("--epsilon", type=arguments.non_negative_real, required=True, help="epsilon >= 0")
    _common(delta)
    delta.set_defaults(handler=_delta)


def _delta_fields(epsilon: float, sigma: float, sensitivity: float, compositions: int) -> tuple[float, float, str | None]:
    """(δ as the conservative double, log δ, table text): a δ below every double is shown from its log.

    δ and log δ are those of :func:`dpmech.gaussian_delta` and :func:`dpmech.gaussian_log_delta` (the same
    scalar evaluation, which they take for one float); the inputs are the parser's checked values.
    """
    from .._gaussian_scalar import delta_from_log_upper, ratio_up, upper_log_delta
    from ..directed_rounding import format_log_up, format_up

    pair = upper_log_delta(epsilon, ratio_up(sensitivity, compositions, sigma))
    if pair is None:
        from ..gaussian import gaussian_log_delta

        log_delta = gaussian_log_delta(epsilon, sigma, sensitivity, compositions)
    else:
        log_delta = pair[1]
    delta = delta_from_log_upper(log_delta)
    if delta >= _SMALLEST_NORMAL:
        return delta, log_delta, None
    if log_delta >= _DECIMAL_LOG_FROM:
        return delta, log_delta, format_log_up(log_delta)
    # Splitting a log this large into a decimal exponent and mantissa loses the mantissa entirely;
    # exp of the log rounded up is still an upper bound.
    return delta, log_delta, f"exp({format_up(log_delta)})"


def _calibrate(args: argparse.Namespace) -> None:
    from .._gaussian_scalar import calibrate_analytic
    from .output import emit

    # calibrate_gaussian takes calibrate_analytic first for one float pair; the classic σ, and whatever
    # calibrate_analytic leaves to the array path, come from calibrate_gaussian itself.
    sigma = (calibrate_analytic(args.epsilon, args.delta, args.sensitivity, args.compositions)
             if args.method == "analytic" else None)
    if sigma is None:
        from ..calibration import calibrate_gaussian

        sigma = calibrate_gaussian(args.epsilon, args.delta, args.sensitivity, args.compositions, args.method)
    achieved, log_achieved, shown = _delta_fields(args.epsilon, sigma, args.sensitivity, args.compositions)
    record = {
        "sigma": sigma,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "sensitivity": args.sensitivity,
        "compositions": args.compositions,
        "method": args.method,
        "achieved_delta": achieved,
        "log_achieved_delta": log_achieved,
    }
    emit(record, args.json, "Gaussian calibration",
         directions={"sigma": "up", "achieved_delta": "up", "log_achieved_delta": "up"},
         shown={"achieved_delta": shown})


def _epsilon(args: argparse.Namespace) -> None:
    from .._gaussian_scalar import epsilon_for_mu, ratio_up
    from .output import emit

    # gaussian_epsilon takes epsilon_for_mu first for one float; what it leaves to the array path, and the
    # refusal of a μ too large, come from gaussian_epsilon itself.
    value = epsilon_for_mu(args.delta, ratio_up(args.sensitivity, args.compositions, args.sigma))
    if value is None:
        from ..gaussian import gaussian_epsilon

        value = gaussian_epsilon(args.delta, args.sigma, args.sensitivity, args.compositions)
    record = {
        "sigma": args.sigma,
        "epsilon": value,
        "delta": args.delta,
        "sensitivity": args.sensitivity,
        "compositions": args.compositions,
        "method": "exact",
    }
    emit(record, args.json, "Gaussian epsilon", directions={"epsilon": "up"})


def _delta(args: argparse.Namespace) -> None:
    from .output import emit

    # k releases with one σ and Δ compose exactly (dpmech.gaussian); the δ is an upper bound, never 0.
    delta, log_delta, shown = _delta_fields(args.epsilon, args.sigma, args.sensitivity, args.compositions)
    record = {
        "sigma": args.sigma,
        "epsilon": args.epsilon,
        "delta": delta,
        "log_delta": log_delta,
        "sensitivity": args.sensitivity,
        "compositions": args.compositions,
        "method": "exact",
    }
    emit(record, args.json, "Gaussian delta", directions={"delta": "up", "log_delta": "up"}, shown={"delta": shown})
