"""Auditing FedGM: a one-run audit of its label release, and membership inference on its synthetic images.

Claim. Each synthetic label is released once by ``dpmech.mechanisms.rr_with_prior`` at ε = ``label_epsilon``
with a label-independent prior (uniform in stage 1, the stage-1 model's softmax in stage 2):
ε-label-DP, replace-one (``dpmech.mechanisms.rr_with_prior_event``). The synthetic images carry no guarantee.

(a) Label audit, black-box, one run (Steinke, Nasr & Jagielski 2023). m canary labels, each with
a prior row taken at random from the priors the pipeline itself used in the audited run (the
uniform rows of stage 1 and the stage-2 rows carried in its messages), and labels y ≠ y' drawn
uniformly: IN holds y, OUT holds y'. All m held labels go through ONE call of the pipeline's own
label release step :func:`trainers.pipelines.fedgm.release_labels` with those rows
(:func:`~audits.attacks.label_randomized_response.label_canary_scores`); the claimed ε is read
from the ledger of the run's messages,
and the auditor guesses IN on y, OUT on y', abstains otherwise, at cuts fixed in advance.
RRWithPrior restricts its output to the prior's top-k* classes, so a canary whose y and y' both
fall outside them is released without information and the auditor abstains; that costs power,
not validity (the priors do not depend on the canaries' labels, as the claim requires). The bound
is certified at confidence 1 − α and cannot exceed ε for a correct mechanism beyond the test's
α; it is tight for the uniform rows, where RRWithPrior is K-ary randomized response.

(b) Images, an estimate. Members are the clients' private records (each client condenses its
own), non-members the test records; the score of a record is minus its Euclidean distance to
the nearest released synthetic image (stage 1 and 2, every client). Synthetic images start at
real records near k-means centres and stay close to them, so members sit at small distances.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from trainers.data import split_federated
from trainers.pipelines import fedgm as pipeline
from trainers.pipelines.fedgm import FedGmConfig

from ...epsilon_bounds import epsilon_lower_bound
from ...metrics import mia_metrics
from ...one_run import epsilon_one_run
from ...report import tpr_text
from ...scores import AuditScores
from ..label_randomized_response import GUESS_CUTS, label_canary_scores
from ..threat_model import BLACK_BOX, ThreatModel
from .record import PipelineAudit, audit_generator, audit_inputs, mia_summary, reused_result


def nearest_image_scores(members, nonmembers, images) -> AuditScores:
    """Minus the Euclidean distance of each record to its nearest image (higher means IN)."""
    images = np.asarray(images, dtype=float)
    squared = np.sum(images**2, axis=1)

    def score(records):
        records = np.asarray(records, dtype=float)
        distances = np.sum(records**2, axis=1)[:, None] - 2.0 * records @ images.T + squared[None, :]
        return -np.sqrt(np.maximum(distances.min(axis=1), 0.0))

    return AuditScores(score(members), score(nonmembers))


def audit_fedgm(data, config: FedGmConfig | None = None, seed: int = 0, *, trials: int = 10_000,
                alpha: float = 0.05, result=None) -> PipelineAudit:
    """Audit ``run_fedgm(split_federated(data, seed), config, seed)`` (module docstring).

    ``result``: that run's :class:`~trainers.federation.PipelineResult` when the caller already
    has it (the main job); otherwise the run is made here, without the accuracy baselines (they
    release nothing). ``trials`` is the number m of canary labels of the one-run label audit.
    """
    config, seed, trials = audit_inputs(config, FedGmConfig, seed, trials, 2)
    rng = audit_generator(seed, 3)
    split = split_federated(data, seed)
    if result is None:
        run = pipeline.run_fedgm(split, dataclasses.replace(config, baselines=False), seed, progress=False)
    else:
        run = reused_result(result, "fedgm", config, seed, unreleased_fields=("baselines",))

    uniform_rows = sum(m.payload["images"].shape[0] for m in run.messages if "prior" not in m.payload)
    stage_two_rows = [m.payload["prior"] for m in run.messages if "prior" in m.payload]
    pipeline_priors = np.vstack([np.full((uniform_rows, config.num_classes), 1.0 / config.num_classes)] + stage_two_rows)
    canary_priors = pipeline_priors[rng.integers(pipeline_priors.shape[0], size=trials)]
    label_scores = label_canary_scores(
        trials, config.num_classes, rng,
        lambda held, rng: pipeline.release_labels(held, canary_priors, config, rng)[0],
    )
    one_run = epsilon_one_run(label_scores, alpha=alpha, threshold_strategy="explicit", guess_thresholds=[GUESS_CUTS])
    eps_claimed = run.guarantees["synthetic_labels"].epsilon

    images = np.vstack([m.payload["images"] for m in run.messages])
    image_scores = nearest_image_scores(split.private.features, split.test.features, images)
    image_estimate = epsilon_lower_bound(image_scores, alpha=alpha, threshold_strategy="split", rng=rng)
    mia = mia_summary("synthetic images: minus the distance to the nearest released image", image_scores)
    measurements = {
        "canary_labels": trials,
        "guesses": one_run.counts["guesses"],
        "correct": one_run.counts["correct"],
        "pipeline_prior_rows_uniform": uniform_rows,
        "pipeline_prior_rows_stage_two": int(pipeline_priors.shape[0] - uniform_rows),
        "synthetic_images": int(images.shape[0]),
        "image_members": len(split.private),
        "image_nonmembers": len(split.test),
        "image_eps_estimate": image_estimate.eps_lb,
        "label_mia": dataclasses.asdict(mia_metrics(label_scores)),
    }
    notes = (
        f"Labels: one-run audit with m = {trials} canary labels through one call of the pipeline's label release at ε = "
        f"{config.label_epsilon:g}, prior rows drawn from the {pipeline_priors.shape[0]} the run used; "
        f"ε_lb = {one_run.eps_lb:.4g} against the claimed ε = {eps_claimed:.4g}"
        + (" (consistent with the claim)." if one_run.eps_lb <= eps_claimed else " (ABOVE the claim: a bug or a false alarm at α)."),
        "Canaries whose two labels fall outside a stage-2 prior's top-k* classes are released without information; "
        "the audit abstains on them, which lowers ε_lb and does not affect its validity.",
        "Images: label DP does NOT protect the synthetic images; "
        f"nearest-image membership inference reaches AUC {mia['auc']:.3f}, TPR at 1% FPR "
        f"{tpr_text(mia['tpr_at_1_percent_fpr'], 1e-2, image_scores.num_out)}, at 0.1% FPR "
        f"{tpr_text(mia['tpr_at_0_1_percent_fpr'], 1e-3, image_scores.num_out)} "
        f"(members: the clients' records; non-members: test records). There is no ε claim for the "
        f"images (ε = ∞); the split-threshold ε estimate from these natural records is {image_estimate.eps_lb:.3g}, "
        "an estimate, not a bound.",
    )
    return PipelineAudit(
        pipeline="fedgm",
        claim=f"ε-label-DP of the released synthetic labels, replace-one of one label, ε = {eps_claimed:g} "
              "(RRWithPrior); the synthetic images: no guarantee",
        eps_claimed=eps_claimed,
        delta=one_run.delta,
        alpha=alpha,
        mu_claimed=None,
        mia=mia,
        threat_model=ThreatModel(BLACK_BOX, "label canaries through RRWithPrior with the pipeline's priors; "
                                 "natural records against the released images", 1, canaries=trials),
        measurements=measurements,
        notes=notes,
        result=one_run,
        scores=label_scores,
        mia_scores=image_scores,
    )
