r"""One-run audit of label randomized response (Steinke, Nasr & Jagielski 2023) with m canary labels.

Game. Each of m canaries has a label y and an alternative label y' ≠ y,
both uniform (y' uniform over the K − 1 others). Independently with
probability ½ the canary is IN (its held label is y) or OUT (held label y').
The held labels go through ONE call of :func:`dpmech.randomized_response`
(K-ary RR, keep with probability e^ε/(e^ε + K − 1)), the mechanism audited,
not a re-implementation. IN vs OUT is a replace-one change of one label, the
relation under which RR is ε-label-DP.

Score. +1 if the released label is y, −1 if it is y', 0 otherwise (K > 2:
neither candidate). The auditor guesses IN on +1, OUT on −1 and abstains on
0, through the explicit cuts (−½, ½) fixed before seeing the data (so no
multiple-testing correction is needed). Given a guess, it is correct with
probability e^ε/(e^ε + 1) exactly, whatever K: the null hypothesis of the
one-run test is exactly randomized response, so the audit is asymptotically
tight in m.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import dpmech
from dpmech import validation as check

from ..metrics import MiaMetrics, mia_metrics
from ..one_run import epsilon_one_run
from ..result import AuditResult
from ..scores import AuditScores
from .threat_model import BLACK_BOX, ThreatModel, record_as_dict, take_from_result

GUESS_CUTS = (-0.5, 0.5)


def label_randomized_response_scores(num_canaries, epsilon, num_classes, rng) -> AuditScores:
    """Scores of m label canaries after one call of ``dpmech.randomized_response`` (see the module docstring).

    Args:
        num_canaries: m >= 2 canaries, each IN with probability ½.
        epsilon: ε > 0 of the randomized response.
        num_classes: K >= 2.
        rng: ``numpy.random.Generator`` or int seed; it draws the memberships,
            labels, alternatives and the mechanism's randomness, in that order.

    Returns:
        :class:`~audits.scores.AuditScores` of the IN and OUT canaries (scores in {−1, 0, +1}).
    """
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    return label_canary_scores(num_canaries, num_classes, rng,
                               lambda held, rng: dpmech.randomized_response(held, epsilon, num_classes, rng))


def label_canary_scores(num_canaries, num_classes, rng, release) -> AuditScores:
    """Scores of m label canaries (module docstring) after ONE call ``release(held_labels, rng)``.

    ``release`` is the label mechanism audited (for example ``dpmech.randomized_response`` or
    ``dpmech.mechanisms.rr_with_prior`` with fixed priors); it receives the m held labels and the same
    generator, after the memberships, labels and alternatives have been drawn from it.
    """
    num_canaries = check.integer_scalar("num_canaries", num_canaries, 2)
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    rng = check.generator("rng", rng)
    is_in = rng.random(num_canaries) < 0.5
    if is_in.all() or not is_in.any():
        raise ValueError(f"num_canaries = {num_canaries} put every canary on one side; use more canaries")
    label = rng.integers(num_classes, size=num_canaries)
    alternative = (label + 1 + rng.integers(num_classes - 1, size=num_canaries)) % num_classes
    held = np.where(is_in, label, alternative)
    released = np.asarray(release(held, rng))
    score = (released == label).astype(float) - (released == alternative).astype(float)
    return AuditScores(score[is_in], score[~is_in], higher_is_in=True, trials="independent")


@dataclasses.dataclass(frozen=True)
class LabelRandomizedResponseAudit:
    """Outcome of :func:`audit_label_randomized_response`.

    Attributes:
        eps_claimed: ε of ``dpmech.randomized_response_event(ε, K)``.
        delta: δ of the tested claim (0 for pure ε).
        num_classes, canaries: K and m.
        guesses, correct: r and v of the one-run test.
        eps_lb, method, valid_as, alpha: of the one-run estimator, read from ``result``.
        result: the full :class:`~audits.result.AuditResult`.
        metrics: AUC, TPR at 0.1% and 1% FPR, advantage of the label attack.
        threat_model: what the auditor sees.
        scores: the raw IN/OUT scores (not part of :meth:`as_dict`).
    """

    eps_claimed: float
    delta: float
    num_classes: int
    canaries: int
    guesses: int
    correct: int
    eps_lb: float = dataclasses.field(init=False)
    method: str = dataclasses.field(init=False)
    valid_as: str = dataclasses.field(init=False)
    alpha: float = dataclasses.field(init=False)
    result: AuditResult
    metrics: MiaMetrics
    threat_model: ThreatModel
    scores: AuditScores = dataclasses.field(repr=False)

    def __post_init__(self) -> None:
        take_from_result(self, "eps_lb", "method", "valid_as", "alpha")

    as_dict = record_as_dict


def audit_label_randomized_response(
    epsilon, num_classes, num_canaries, *, rng, alpha: float = 0.05, delta: float = 0.0
) -> LabelRandomizedResponseAudit:
    """One-run audit of K-ary randomized response with m canary labels and the explicit cuts (−½, ½).

    The claim is ``dpmech.randomized_response_event(ε, K)``: pure ε-label-DP
    under replace-one. ``eps_lb`` is the one-run lower bound of
    :func:`audits.epsilon_one_run` (certified, confidence 1 − α). Measured
    with m = 10⁵, α = 0.05, δ = 0: ``eps_lb`` >= 0.97·ε for ε in {1, 2, 4}
    (tests/audits/test_label_randomized_response.py).

    Args:
        epsilon: ε > 0 of the randomized response.
        num_classes: K >= 2.
        num_canaries: m >= 2.
        rng: ``numpy.random.Generator`` or int seed.
        alpha: significance in (0, 1).
        delta: δ in [0, 1) of the tested claim; RR is pure, so 0 is the exact claim.

    Returns:
        :class:`LabelRandomizedResponseAudit`.
    """
    claim = dpmech.randomized_response_event(epsilon, num_classes)
    scores = label_randomized_response_scores(num_canaries, claim.epsilon, claim.num_outcomes, rng)
    result = epsilon_one_run(
        scores, alpha=alpha, delta=delta, threshold_strategy="explicit", guess_thresholds=[GUESS_CUTS]
    )
    return LabelRandomizedResponseAudit(
        eps_claimed=claim.epsilon,
        delta=result.delta,
        num_classes=claim.num_outcomes,
        canaries=result.counts["canaries"],
        guesses=result.counts["guesses"],
        correct=result.counts["correct"],
        result=result,
        metrics=mia_metrics(scores),
        threat_model=ThreatModel(
            access=BLACK_BOX,
            canary="label canaries: IN holds label y, OUT an alternative y' ≠ y; the auditor sees the released "
            "labels only (score +1 if y, −1 if y', else 0)",
            runs=1,
            canaries=result.counts["canaries"],
        ),
        scores=scores,
    )
