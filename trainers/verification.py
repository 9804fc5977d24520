"""Sensitivity checks that train models, registered with ``dpmech verify`` (entry-point group ``dpmech.verify``).

Each check trains a trainer of this package on neighbouring datasets that
Hypothesis searches for (:func:`dpmech.verify.search.search_worst_neighbours`:
records at the norm bound, flipped labels) and compares the largest
parameter distance with the replace-one bound the trainer declares from
:mod:`dpmech.sensitivity`.

* ``logistic-regression``: the scikit-learn L-BFGS adapter, binary and
  multinomial, against 2·c'/(λn) and 2√2·c'/(λn) (c' = √(c²+1) for the
  regularised intercept), and the seed's looser 2√C·c'/(λn).
* ``psgd``: DP-Helmet's Softmax-SLP and one-vs-rest Huber-SVM PSGD against
  the bolt-on bounds 2L/(nΛ), with batch sizes that do not divide n (the
  search puts the replaced record in the ragged last batch of some epoch
  half the time, :func:`dpmech.verify.search.with_replaced_record_at`), a
  batch larger than n, and several epochs. The shuffle depends only on n
  and the seed, so both neighbours see the same batches.
"""

from __future__ import annotations

from hypothesis import strategies as st

import dpmech.sensitivity
from dpmech.verify.search import search_worst_neighbours, with_replaced_record_at
from dpmech.verify.strategies import neighbouring_pairs
from dpmech.verify.suite import SENSITIVITY_RATIO_SLACK, CheckResult

from .psgd import HuberSVMTrainer, SoftmaxSLPTrainer, shuffled_batches
from .sklearn_adapter import LogisticRegressionTrainer


def _row(name, trainer, description, claimed, num_classes, n, dimension, examples, pairs=None):
    bound = trainer.sensitivity(n)
    pairs = neighbouring_pairs(n, dimension, num_classes, 1.0) if pairs is None else pairs
    report, _ = search_worst_neighbours(trainer.train, pairs, bound, max_examples=examples)
    return CheckResult(
        name,
        f"{description}, n = {n}, d = {dimension}, ||x|| <= 1, {examples} Hypothesis pairs",
        claimed.format(bound=bound),
        f"max measured/bound = {report.ratio:.4f}",
        report.ratio <= 1.0 + SENSITIVITY_RATIO_SLACK,
    )


def check_logistic_regression(thorough=False) -> list:
    examples = 150 if thorough else 25
    rows = []
    for num_classes, regularization, n, dimension in ((2, 0.5, 8, 2), (2, 0.05, 4, 3), (3, 0.5, 8, 2), (4, 0.1, 6, 3)):
        trainer = LogisticRegressionTrainer(regularization=regularization, num_classes=num_classes, feature_bound=1.0)
        if num_classes == 2:
            claimed = "2c'/(lambda n) = {bound:.4g}"
        else:
            seed = dpmech.sensitivity.multinomial_logistic_regression_sensitivity(
                regularization, n, 1.0, num_classes=num_classes, regularized_intercept=True, bound="seed"
            )
            claimed = "2*sqrt(2)c'/(lambda n) = {bound:.4g} (seed's 2*sqrt(C)c'/(lambda n) = " + f"{seed:.4g})"
        description = f"sklearn L-BFGS, {'multinomial' if num_classes > 2 else 'binary'}, C = {num_classes}, lambda = {regularization}"
        rows.append(_row("logistic-regression", trainer, description, claimed, num_classes, n, dimension, examples))
    return rows


def _ragged_batch_pairs(trainer, n, dimension):
    """Replace-one pairs whose replaced record is, half the time, in the last batch of some epoch."""
    last_batches = [int(index) for epoch in shuffled_batches(n, trainer.batch_size, trainer.epochs, trainer.seed)
                    for index in epoch[-1]]
    positions = st.one_of(st.sampled_from(sorted(set(last_batches))), st.integers(0, n - 1))
    return with_replaced_record_at(neighbouring_pairs(n, dimension, trainer.num_classes, 1.0), positions)


def check_psgd(thorough=False) -> list:
    examples = 60 if thorough else 12
    rows = []
    # (Λ, R, n, batch, epochs): the issue-11 case (a 1-record ragged batch), a 2-record ragged batch
    # over three epochs, and a batch larger than n.
    for regularization, radius, n, batch_size, epochs in ((5.0, 0.2, 21, 20, 1), (0.5, 1.0, 8, 3, 3), (0.5, 1.0, 5, 8, 2)):
        schedule = f"Lambda = {regularization}, R = {radius}, {epochs} epochs, batch {batch_size}"
        softmax = SoftmaxSLPTrainer(num_classes=3, regularization=regularization, input_clip=1.0,
                                    projection_radius=radius, epochs=epochs, batch_size=batch_size, seed=0)
        svm = HuberSVMTrainer(num_classes=2, regularization=regularization, input_clip=1.0, projection_radius=radius,
                              huber_h=0.1, epochs=epochs, batch_size=batch_size, seed=0)
        rows.append(_row("psgd", softmax, f"Softmax-SLP PSGD, C = 3, {schedule}",
                         "D(R)/(n Lambda), D(R) the softmax gradient difference on the R-ball = {bound:.4g}", 3, n, 2, examples,
                         _ragged_batch_pairs(softmax, n, 2)))
        rows.append(_row("psgd", svm, f"Huber-SVM PSGD one-vs-rest, C = 2, h = 0.1, {schedule}",
                         "sqrt(C) 2(c' + R Lambda)/(n Lambda) = {bound:.4g}", 2, n, 2, examples,
                         _ragged_batch_pairs(svm, n, 2)))
    return rows
