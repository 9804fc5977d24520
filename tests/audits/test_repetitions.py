"""Seeded repetitions through joblib: results independent of n_jobs and of the number of repetitions."""

import numpy as np
import pytest

from audits.attacks import audit_gaussian_output, audit_label_randomized_response, run_repetitions

GAUSSIAN = dict(epsilon=2.0, delta=1e-5, trials=500)  # N = 500 per side, α = 0.05 (default)
LABELS = dict(epsilon=1.0, num_classes=3, num_canaries=2000)


def _fingerprint(audits):
    return [(a.eps_lb, a.scores.in_scores.tobytes(), a.scores.out_scores.tobytes()) for a in audits]


@pytest.mark.parametrize("audit, arguments", [(audit_gaussian_output, GAUSSIAN),
                                               (audit_label_randomized_response, LABELS)])
def test_one_and_two_jobs_give_identical_results(audit, arguments):
    serial = run_repetitions(audit, repetitions=4, seed=3, n_jobs=1, **arguments)
    parallel = run_repetitions(audit, repetitions=4, seed=3, n_jobs=2, **arguments)
    assert _fingerprint(serial) == _fingerprint(parallel)
    assert len({a.scores.in_scores.tobytes() for a in serial}) == 4  # repetitions are distinct


def test_a_repetition_depends_on_the_seed_and_its_index_only():
    two = run_repetitions(audit_gaussian_output, repetitions=2, seed=9, **GAUSSIAN)
    five = run_repetitions(audit_gaussian_output, repetitions=5, seed=9, **GAUSSIAN)
    assert _fingerprint(two) == _fingerprint(five[:2])
    child = np.random.SeedSequence(9).spawn(5)[3]
    assert _fingerprint(five[3:4]) == _fingerprint([audit_gaussian_output(**GAUSSIAN, rng=np.random.default_rng(child))])


@pytest.mark.parametrize(
    "kwargs, name",
    [({"repetitions": 0}, "repetitions"), ({"seed": -1}, "seed"), ({"n_jobs": 0}, "n_jobs"),
     ({"progress": 1}, "progress")],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    arguments = {"repetitions": 2, "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=name):
        run_repetitions(audit_gaussian_output, **arguments, **GAUSSIAN)


@pytest.mark.slow  # 4.6 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
def test_bad_audit_arguments_raise_value_error():
    with pytest.raises(ValueError, match="trials"):
        run_repetitions(audit_gaussian_output, repetitions=3, seed=0, n_jobs=2, epsilon=1.0, delta=1e-5, trials=0)
