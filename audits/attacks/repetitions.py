"""Independent repetitions of an audit, in parallel through joblib, reproducible whatever the backend.

Repetition i draws all its randomness from
``numpy.random.default_rng(numpy.random.SeedSequence(seed).spawn(repetitions)[i])``,
i.e. from ``SeedSequence(seed, spawn_key=(i,))``: its result depends on
(seed, i) only, not on the number of repetitions, the joblib backend or
``n_jobs``, and results come back in repetition order.

Each repetition is a separate audit: its ``eps_lb`` is a lower bound at
confidence 1 − α on its own. A summary over repetitions (a median, a count of
detections) describes the audit's behaviour; it is not itself a bound at α.
"""

from __future__ import annotations

from typing import Callable

from dpmech import validation as check
from trainers.federation import run_clients

SEED_DERIVATION = "repetition i uses numpy.random.default_rng(numpy.random.SeedSequence(seed).spawn(repetitions)[i])"


def _run_one(audit: Callable, arguments: dict, rng):
    return audit(**arguments, rng=rng)


def run_repetitions(
    audit: Callable, *, repetitions: int, seed: int, n_jobs: int = 1, progress: bool = False, **arguments
) -> list:
    """Run ``audit(**arguments, rng=...)`` ``repetitions`` times with spawned seeds, through joblib.

    The executor is :func:`trainers.federation.run_clients` (one Generator per task, spawned
    from ``seed``), so the derivation above holds whatever the backend.

    Args:
        audit: a module-level audit function taking ``rng`` (picklable, for process backends),
            e.g. :func:`audits.attacks.audit_gaussian_output`.
        repetitions: number of independent repetitions, >= 1.
        seed: root seed, an integer >= 0.
        n_jobs: joblib workers (>= 1, or -1 for all cores); the results do not depend on it.
        progress: show a rich progress bar on stderr.
        **arguments: passed to ``audit``.

    Returns:
        The list of the audit's results, in repetition order.
    """
    repetitions = check.integer_scalar("repetitions", repetitions, 1)
    seed = check.integer_scalar("seed", seed, 0)
    if not (n_jobs == -1 or (isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and n_jobs >= 1)):
        raise ValueError(f"n_jobs must be an integer >= 1 or -1 for all cores (got {n_jobs!r})")
    progress = check.boolean("progress", progress)
    return run_clients(_run_one, [(audit, arguments)] * repetitions, seed, n_jobs=n_jobs,
                       progress="audit repetitions" if progress else None)
