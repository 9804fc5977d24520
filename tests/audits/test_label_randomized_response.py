"""One-run audit of dpmech's K-ary randomized response with m canary labels."""

import math

import numpy as np
import pytest

import dpmech
from audits.attacks import audit_label_randomized_response, label_randomized_response_scores

ALPHA = 0.05


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0])
def test_known_answer_binary(epsilon):
    # m = 10^5 canaries, K = 2, α = 0.05, δ = 0, one seed per ε: every canary guessed, ε_lb >= 0.97 ε.
    audit = audit_label_randomized_response(epsilon, 2, 100_000, rng=int(10 * epsilon), alpha=ALPHA)
    assert audit.guesses == audit.canaries == 100_000
    assert audit.eps_lb >= 0.97 * epsilon
    assert (audit.method, audit.valid_as, audit.eps_claimed, audit.delta) == ("one-run", "certified", epsilon, 0.0)
    assert audit.threat_model.access == "black-box" and audit.threat_model.runs == 1


@pytest.mark.parametrize("epsilon, num_classes", [(1.0, 10), (3.0, 5)])
def test_a_guess_is_right_with_the_binary_rr_probability(epsilon, num_classes):
    # m = 10^5: guesses happen w.p. (e^ε + 1)/(e^ε + K − 1) and are right w.p. e^ε/(e^ε + 1) whatever K
    # (the one-run null); 5-standard-error checks.
    audit = audit_label_randomized_response(epsilon, num_classes, 100_000, rng=21)
    guess_rate = (math.exp(epsilon) + 1) / (math.exp(epsilon) + num_classes - 1)
    right = math.exp(epsilon) / (math.exp(epsilon) + 1)
    assert abs(audit.guesses / 100_000 - guess_rate) < 5 * math.sqrt(guess_rate * (1 - guess_rate) / 100_000)
    assert abs(audit.correct / audit.guesses - right) < 5 * math.sqrt(right * (1 - right) / audit.guesses)


def test_the_released_labels_come_from_dpmech(monkeypatch):
    # A broken mechanism (RR run at 2ε instead of ε) behind the same name: m = 10^5, α = 0.05, δ = 0, ε = 1.
    # The audit samples dpmech.randomized_response, so it sees the bug: ε_lb > the claimed ε.
    original = dpmech.randomized_response
    monkeypatch.setattr(dpmech, "randomized_response",
                        lambda labels, epsilon, num_classes, rng: original(labels, 2 * epsilon, num_classes, rng))
    audit = audit_label_randomized_response(1.0, 2, 100_000, rng=4)
    assert audit.eps_lb > 1.0 and audit.eps_claimed == 1.0


def test_scores_take_three_values_and_split_by_membership():
    scores = label_randomized_response_scores(5000, 1.0, 4, np.random.default_rng(8))
    assert scores.num_in + scores.num_out == 5000
    assert set(np.unique(np.r_[scores.in_scores, scores.out_scores])) <= {-1.0, 0.0, 1.0}
    assert scores.in_scores.mean() > 0 > scores.out_scores.mean()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: audit_label_randomized_response(0.0, 2, 100, rng=0), "epsilon"),
        (lambda: audit_label_randomized_response(1.0, 1, 100, rng=0), "num_outcomes|num_classes"),
        (lambda: label_randomized_response_scores(1, 1.0, 2, 0), "num_canaries"),
        (lambda: label_randomized_response_scores(10, 1.0, 2, -1), "rng"),
        (lambda: audit_label_randomized_response(1.0, 2, 100, rng=0, alpha=0.0), "alpha"),
        (lambda: audit_label_randomized_response(1.0, 2, 100, rng=0, delta=1.0), "delta"),
    ],
)
def test_bad_arguments_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_all_canaries_on_one_side_is_refused():
    # m = 2: seed 1 puts both canaries on the same side (checked below), which leaves no OUT (or IN) scores.
    rng = np.random.default_rng(1)
    assert len(set(rng.random(2) < 0.5)) == 1
    with pytest.raises(ValueError, match="num_canaries"):
        label_randomized_response_scores(2, 1.0, 2, 1)
