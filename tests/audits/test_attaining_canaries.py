"""White-box canaries that attain the proven sensitivities audit their Gaussian releases close to the claim.

The bounds shipped for issue 31 (the bolt-on PSGD bound without the regulariser's RΛ, and the
scoring head's label-fixed bound) are attained by explicit neighbouring pairs
(tests/trainers/test_empirical_sensitivity.py). Released through :class:`dpmech.GaussianOutputMechanism`
calibrated to (ε, δ) = (1, 1e-5) for the tighter bound, such a pair is a canary whose μ is nearly the
claimed μ, so the GDP estimator (Nasr, Hayes, Steinke, Balle, Tramèr, Jagielski, Carlini & Terzis 2023)
on independent releases bounds ε from below by more than half the claim. The ε lower bound is certified
under the GDP-shape assumption (the Gaussian mechanism's privacy curve is exactly GDP for a fixed pair), and
it never passes the claim or the ε of the pair's own μ. These pairs are the trainers' worst cases, not the
pipelines' default configurations (whose data and λ keep the worst pair at about half the bound; see
audits/attacks/pipelines).
"""

import numpy as np
import pytest

import dpmech
from audits.attacks.pipelines.record import projected_scores
from audits.gdp import epsilon_from_gdp
from trainers.pipelines.fedauxfdp import ScoringHeadTrainer
from trainers.psgd import HuberSVMTrainer

EPSILON, DELTA, TRIALS = 1.0, 1e-5, 20_000


def scoring_head_pair():
    # Negatives at x = 0 hold the intercept far negative; the private pair at ±x, ‖x‖ = b = 1, both labelled 1.
    num_negative = 20_000
    n = num_negative + 1
    trainer = ScoringHeadTrainer(20.0 / n, 2, 1.0)
    features = np.zeros((n, 2))
    features[0, 0] = 1.0
    labels = np.r_[1, np.zeros(num_negative, dtype=np.int64)]
    return trainer.train(features, labels)[0], trainer.train(-features, labels)[0], trainer.sensitivity(n)


def huber_svm_pair():
    # Λ = 100 keeps θ in the Huber loss's linear part; one record's label flipped moves both classes by 2c'.
    trainer = HuberSVMTrainer(num_classes=2, regularization=100.0, input_clip=1.0, projection_radius=1.0,
                              huber_h=0.5, epochs=30, batch_size=1, seed=3)
    features = np.array([[0.6, 0.8], [0.0, -0.5], [-1.0, 0.0]])
    labels = np.array([0, 1, 0])
    flipped = np.array([1, 1, 0])
    return trainer.train(features, labels), trainer.train(features, flipped), trainer.sensitivity(3)


@pytest.mark.parametrize("pair", [scoring_head_pair, huber_svm_pair], ids=["fedauxfdp-scoring-head", "psgd-huber"])
def test_attaining_canary_audits_above_half_the_claim(pair):
    without, with_canary, sensitivity = pair()
    mechanism = dpmech.GaussianOutputMechanism(sensitivity, EPSILON, DELTA)
    rng = np.random.default_rng(31)

    def releases(parameters):
        # TRIALS independent releases of the same world: the mechanism's noise is i.i.d. per entry.
        return mechanism.release(np.broadcast_to(parameters.ravel(), (TRIALS, parameters.size)), rng) / mechanism.sigma

    scores = projected_scores(releases(without), releases(with_canary), without.ravel() / mechanism.sigma,
                              with_canary.ravel() / mechanism.sigma)
    canary_mu = float(np.linalg.norm(with_canary - without)) / mechanism.sigma
    claimed_mu = sensitivity / mechanism.sigma
    assert 0.95 * claimed_mu <= canary_mu <= claimed_mu * (1 + 1e-9)
    result = epsilon_from_gdp(scores, alpha=0.05, delta=DELTA)
    # Under the GDP-shape assumption: certified lower bound on the pair's ε, which is at most the claim.
    assert 0.5 * EPSILON <= result.eps_lb <= float(dpmech.gaussian_epsilon(DELTA, 1.0, canary_mu)) <= EPSILON * (1 + 1e-9)
