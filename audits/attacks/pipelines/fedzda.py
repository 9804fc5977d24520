"""Auditing Fed-ZDA: the LOSS attack on the final global model.

Claim. None: Fed-ZDA adds no noise and its ledger holds ``dpmech.NoGuaranteeEvent`` (ε = ∞). The
seed's (0, δ)-DP statement assumes that the total variation between neighbouring augmented
datasets is at most δ; nothing enforces that.

Attack (an estimate). LOSS (Yeom et al. 2018, :func:`audits.loss.loss_attack`) on the final
global model of ``run_fedzda``: members are the clients' local training records, non-members the
test records. What it says about the (0, δ) claim: a (0, δ)-DP mechanism has
TPR − FPR <= δ for every test between neighbours, and a membership test on one record is such a
test, so the measured advantage max_t (TPR − FPR) estimates a lower bound on any δ for which the
trained model could be (0, δ)-DP (natural records, not independent canary runs: an estimate, not a
certificate). ``eps_lb`` is the Clopper–Pearson bound with a split threshold, also an estimate.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from trainers import networks
from trainers.data import split_federated
from trainers.pipelines.fedzda import FedZdaConfig, client_training_sets, run_fedzda

from ...epsilon_bounds import epsilon_lower_bound
from ...loss import loss_attack
from ..threat_model import WHITE_BOX, ThreatModel
from .record import PipelineAudit, audit_generator, audit_inputs, mia_summary, reused_result


def audit_fedzda(data, config: FedZdaConfig | None = None, seed: int = 0, *, trials: int = 10_000,
                 alpha: float = 0.05, result=None) -> PipelineAudit:
    """LOSS attack on the global model of ``run_fedzda(split_federated(data, seed), config, seed)``.

    ``result``: that run's result when the caller already has it (the main job); otherwise the
    run is made here, without the FedAvg baseline (it releases nothing). ``trials`` caps the
    number of records scored per side (members and non-members), drawn without replacement.
    """
    config, seed, trials = audit_inputs(config, FedZdaConfig, seed, trials, 2)
    rng = audit_generator(seed, 4)
    split = split_federated(data, seed)
    if result is None:
        run = run_fedzda(split, dataclasses.replace(config, baseline=False), seed, progress=False)
    else:
        run = reused_result(result, "fedzda_" + config.variant, config, seed, unreleased_fields=("baseline",))
    train_sets, _ = client_training_sets(split, config, seed)
    member_features = np.vstack([train.features for train in train_sets])
    member_labels = np.concatenate([train.labels for train in train_sets])
    members = rng.permutation(member_labels.size)[:trials]
    nonmembers = rng.permutation(len(split.test))[:trials]

    def logits(features):
        inputs = networks.as_inputs(features, config.input_shape, "cpu")
        return networks.predict_logits(run.model, inputs).double().cpu().numpy()

    scores = loss_attack(logits(member_features[members]), member_labels[members],
                         logits(split.test.features[nonmembers]), split.test.labels[nonmembers])
    result = epsilon_lower_bound(scores, alpha=alpha, threshold_strategy="split", rng=rng)
    mia = mia_summary("LOSS on the final global model", scores)
    measurements = {
        "members": int(members.size),
        "nonmembers": int(nonmembers.size),
        "global_accuracy": run.accuracy,
        "advantage_lower_bound_on_delta_estimate": mia["advantage"],
        "variant": config.variant,
    }
    notes = (
        "Fed-ZDA is NOT differentially private: no formal guarantee (ε = ∞); every FedAvg update is released "
        "without noise.",
        f"The seed's (0, δ) claim: a (0, δ)-DP mechanism has TPR − FPR <= δ at every threshold. The LOSS attack's "
        f"advantage is {mia['advantage']:.3f}, so the trained model could be (0, δ)-DP only for δ of about "
        f"{mia['advantage']:.3f} or more (an estimate from natural records, not a certificate); a meaningful δ "
        "(say 1e-5) is far below it.",
        f"ε_lb = {result.eps_lb:.3g} (Clopper–Pearson, threshold chosen on a random half, δ = 0) from natural "
        "members and non-members: an estimate of the leakage, not a certified bound.",
    )
    return PipelineAudit(
        pipeline="fedzda",
        claim="none: no formal guarantee (the seed's (0, δ)-DP assumes TV <= δ, which nothing enforces)",
        eps_claimed=float("inf"),
        delta=0.0,
        alpha=alpha,
        mu_claimed=None,
        mia=mia,
        threat_model=ThreatModel(WHITE_BOX, "natural records: clients' training records vs test records "
                                 "(losses under the released global model)", 1, trials_per_side=int(members.size)),
        measurements=measurements,
        notes=notes,
        result=result,
        scores=scores,
    )
