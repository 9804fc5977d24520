"""Shadow heads trained in one batch, LiRA on them, and the LOSS attack."""

import numpy as np
import pytest

import dpmech
from audits import auc
from audits.attacks.shadow_heads import shadow_head_confidences
from audits.lira import leave_one_out_scores
from audits.loss import loss_attack, negative_loss
from trainers.data import load_digits_dataset


@pytest.fixture(scope="module")
def pool():
    data = load_digits_dataset()
    rng = np.random.default_rng(0)
    index = rng.choice(len(data.labels), 200, replace=False)
    features = data.features[index][:, ::4] / 16.0
    return dpmech.clip_features(features, 1.0), data.labels[index]


def test_lira_on_unregularised_heads_finds_members_and_noise_hides_them(pool):
    features, labels = pool
    confidences, membership = shadow_head_confidences(features, labels, 64, 10, 1e-3, rng=1)
    assert confidences.shape == membership.shape == (64, 200)
    _, audit = leave_one_out_scores(confidences, membership)
    assert auc(audit) > 0.6
    mechanism = dpmech.GaussianOutputMechanism(dpmech.sensitivity.multinomial_logistic_regression_sensitivity(
        1e-3, 100, np.sqrt(2.0)), epsilon=0.1, delta=1e-5)
    noisy, membership = shadow_head_confidences(features, labels, 64, 10, 1e-3, rng=1, mechanism=mechanism)
    _, audit = leave_one_out_scores(noisy, membership)
    assert abs(auc(audit) - 0.5) < 0.05


def test_shadow_heads_are_reproducible_and_binary_heads_work(pool):
    features, labels = pool
    binary = (labels >= 5).astype(int)
    first = shadow_head_confidences(features, binary, 8, 2, 0.01, rng=3)
    second = shadow_head_confidences(features, binary, 8, 2, 0.01, rng=3)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_negative_loss_and_the_loss_attack():
    logits = np.log(np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]]))
    np.testing.assert_allclose(negative_loss(logits, np.array([0, 1])), np.log([0.7, 0.1]))
    scores = loss_attack(logits[:1], np.array([0]), logits[1:], np.array([1]))
    assert scores.in_scores[0] > scores.out_scores[0]
    with pytest.raises(ValueError, match="labels"):
        negative_loss(logits, np.array([0, 3]))
