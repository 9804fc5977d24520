"""``dpmech calibrate``, ``dpmech epsilon`` and ``dpmech delta``: the Gaussian mechanism from the shell."""

from __future__ import annotations

from .. import validation as check
from ..calibration import METHODS, calibrate_gaussian
from ..gaussian import gaussian_delta, gaussian_epsilon
from ..ledger import PrivacyLedger
from ..events import GaussianEvent
from .output import emit


def _common(parser):
    parser.add_argument("--sensitivity", type=float, default=1.0, help="L2 sensitivity of one release (default 1)")
    parser.add_argument("--compositions", type=int, default=1, help="number of releases with this sigma (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register(subparsers) -> None:
    calibrate = subparsers.add_parser("calibrate", help="smallest sigma for a target (epsilon, delta)")
    calibrate.add_argument("--epsilon", type=float, required=True)
    calibrate.add_argument("--delta", type=float, required=True)
    calibrate.add_argument("--method", choices=METHODS, default="analytic")
    _common(calibrate)
    calibrate.set_defaults(handler=_calibrate)

    epsilon = subparsers.add_parser("epsilon", help="smallest epsilon of a Gaussian at a given delta")
    epsilon.add_argument("--sigma", type=float, required=True)
    epsilon.add_argument("--delta", type=float, required=True)
    _common(epsilon)
    epsilon.set_defaults(handler=_epsilon)

    delta = subparsers.add_parser("delta", help="tight delta of a Gaussian at a given epsilon")
    delta.add_argument("--sigma", type=float, required=True)
    delta.add_argument("--epsilon", type=float, required=True)
    _common(delta)
    delta.set_defaults(handler=_delta)


def _calibrate(args) -> None:
    sigma = calibrate_gaussian(args.epsilon, args.delta, args.sensitivity, args.compositions, args.method)
    record = {
        "sigma": sigma,
        "epsilon": args.epsilon,
        "delta": args.delta,
        "sensitivity": args.sensitivity,
        "compositions": args.compositions,
        "method": args.method,
        "achieved_delta": gaussian_delta(args.epsilon, sigma, args.sensitivity, args.compositions),
    }
    emit(record, args.json, "Gaussian calibration")


def _epsilon(args) -> None:
    value = gaussian_epsilon(args.delta, args.sigma, args.sensitivity, args.compositions)
    record = {
        "sigma": args.sigma,
        "epsilon": value,
        "delta": args.delta,
        "sensitivity": args.sensitivity,
        "compositions": args.compositions,
        "method": "exact",
    }
    emit(record, args.json, "Gaussian epsilon")


def _delta(args) -> None:
    # Through the ledger, so the printed δ carries the evaluation's error margin upward.
    check.integer_scalar("compositions", args.compositions, 1)
    ledger = PrivacyLedger().record(GaussianEvent(args.sigma, args.sensitivity), count=args.compositions)
    guarantee = ledger.delta(args.epsilon, method="exact")
    record = {
        "sigma": args.sigma,
        "epsilon": args.epsilon,
        "delta": guarantee.delta,
        "sensitivity": args.sensitivity,
        "compositions": args.compositions,
        "method": "exact",
    }
    emit(record, args.json, "Gaussian delta")
