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

import joblib
import numpy as np
from rich.console import Console
from rich.progress import Progress

from dpmech import validation as check

SEED_DERIVATION = "repetition i uses numpy.random.default_rng(numpy.random.SeedSequence(seed).spawn(repetitions)[i])"


def _run_one(audit: Callable, seed_sequence: np.random.SeedSequence, arguments: dict):
    return audit(**arguments, rng=np.random.default_rng(seed_sequence))


def run_repetitions(
    audit: Callable, *, repetitions: int, seed: int, n_jobs: int = 1, progress: bool = False, **arguments
) -> list:
    """Run ``audit(**arguments, rng=...)`` ``repetitions`` times with spawned seeds, through joblib.

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
    children = np.random.SeedSequence(seed).spawn(repetitions)
    # One call in the caller's process first: bad arguments raise here, before any worker starts.
    first = _run_one(audit, children[0], arguments)
    tasks = (joblib.delayed(_run_one)(audit, child, arguments) for child in children[1:])
    results = [first]
    with Progress(console=Console(stderr=True), transient=True, disable=not progress) as bar:
        task = bar.add_task("audit repetitions", total=repetitions, completed=1)
        for result in joblib.Parallel(n_jobs=n_jobs, return_as="generator")(tasks):
            results.append(result)
            bar.advance(task)
    return results
