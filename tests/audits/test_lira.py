"""LiRA: confidences, the online and offline scores, and the vectorised leave-one-out evaluation."""

import numpy as np
import pytest
from scipy import special, stats

from audits import auc
from audits.lira import confidence_from_logits, leave_one_out_scores, lira_scores


def test_confidence_is_the_logit_of_the_true_class_probability():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 5, 4))
    labels = np.array([0, 3, 1, 2, 3])
    probabilities = special.softmax(logits, axis=-1)[..., np.arange(5), labels]
    np.testing.assert_allclose(confidence_from_logits(logits, labels), np.log(probabilities / (1 - probabilities)), rtol=1e-10)
    binary = np.stack([np.zeros(5), np.arange(5.0)], axis=-1)
    np.testing.assert_allclose(confidence_from_logits(binary, np.array([1, 0, 1, 0, 1])), [0, -1, 2, -3, 4])


def _gaussian_world(rng, models, examples, shift):
    membership = rng.random((models, examples)) < 0.5
    base = rng.normal(size=examples)
    confidences = base + shift * membership + rng.normal(scale=1.0, size=(models, examples))
    return confidences, membership


def test_leave_one_out_equals_scoring_each_target_against_the_others():
    rng = np.random.default_rng(1)
    confidences, membership = _gaussian_world(rng, 24, 30, 1.0)
    for mode in ("online", "offline"):
        for fixed in (True, False):
            scores, _ = leave_one_out_scores(confidences, membership, mode=mode, fixed_variance=fixed)
            for target in (0, 5, 23):
                others = np.arange(24) != target
                direct = lira_scores(confidences[target], confidences[others], membership[others], mode=mode, fixed_variance=fixed)
                np.testing.assert_allclose(scores[target], direct, rtol=1e-9, atol=1e-9)


def test_online_score_matches_scipy_densities():
    rng = np.random.default_rng(2)
    confidences, membership = _gaussian_world(rng, 40, 3, 2.0)
    target = np.array([0.3, -1.0, 2.5])
    scores = lira_scores(target, confidences, membership, fixed_variance=False)
    for i in range(3):
        inside, outside = confidences[membership[:, i], i], confidences[~membership[:, i], i]
        expected = stats.norm.logpdf(target[i], inside.mean(), inside.std(ddof=1)) - stats.norm.logpdf(
            target[i], outside.mean(), outside.std(ddof=1)
        )
        assert scores[i] == pytest.approx(expected, rel=1e-9)


def test_lira_separates_members_when_training_shifts_confidence_and_not_otherwise():
    rng = np.random.default_rng(3)
    shifted, membership = _gaussian_world(rng, 64, 200, 1.5)
    _, audit = leave_one_out_scores(shifted, membership, mode="online")
    assert auc(audit) > 0.8
    null, membership = _gaussian_world(rng, 64, 200, 0.0)
    _, audit = leave_one_out_scores(null, membership, mode="offline")
    assert abs(auc(audit) - 0.5) < 0.03


@pytest.mark.parametrize(
    "call,fragment",
    [
        (lambda: leave_one_out_scores(np.zeros((4, 3)), np.zeros((4, 3))), "boolean"),
        (lambda: leave_one_out_scores(np.zeros((4, 3)), np.zeros((4, 2), bool)), "shape"),
        (lambda: leave_one_out_scores(np.zeros((3, 3)), np.eye(3, dtype=bool)), "at least 2"),
        (lambda: leave_one_out_scores(np.zeros((4, 3)), np.ones((4, 3), bool), mode="hybrid"), "mode"),
        (lambda: confidence_from_logits(np.zeros((3, 2)), np.array([0, 2, 1])), "labels"),
    ],
)
def test_bad_input_names_the_problem(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()
