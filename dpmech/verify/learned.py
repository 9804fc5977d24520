r"""A learned distinguishing event, as in DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021), tested soundly.

The cheap event families of :mod:`.statistical` (singletons, one estimated
witness set, half-lines) miss events that depend on several coordinates
of a vector output, or on one coordinate jointly with another. Here a
classifier learns them:

1. draw ``num_samples`` outputs on D and on D' (the training sample) and
   turn each output into a feature vector (:class:`OutputFeatures`, fitted
   on the training sample);
2. fit, on (at most 10,000 outputs per side of) the training sample only, a logistic regression and a small
   gradient-boosted tree ensemble (scikit-learn) to tell D's outputs from
   D''s; each gives a score s(o), an estimate of P[o came from D];
3. fix the events {s > t} and {s <= t} for each model at ``num_thresholds``
   quantiles t of the training scores and at its tail quantiles
   (:func:`.statistical.quantile_levels`);
4. draw a fresh test sample of ``num_samples`` outputs per side and decide
   with :func:`.statistical.decide` (Clopper–Pearson, Bonferroni over every
   (event, order)).

The events depend on the training sample only, so step 4 is a valid test
at level α whatever the classifier learned (sample splitting); a poor
classifier costs power, never soundness. DP-Sniper's own threshold is
chosen for a target probability c; the quantile grid contains such
thresholds for every c it spans.

scikit-learn is imported when a test runs, not when this module is.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from .. import validation as check
from .floating import lattice_exponents
from .candidates import NOMINAL_SAMPLES, Candidate, refit_candidate
from .greybox import Score
from .statistical import (
    Event,
    Sampler,
    StatisticalTestResult,
    _canonical,
    numeric_rows_or_nan,
    _draw,
    decide,
    quantile_levels,
    split_sample_arguments,
)

# At most this many distinct values make an integer-valued coordinate categorical (one-hot).
CATEGORICAL_LIMIT = 32
# A value of a real coordinate that recurs in at least this share of the training rows is an atom (a
# point mass, such as SVT's ⊥ coded as 0 beside its continuous noisy answers), given its own indicator;
# at most ATOM_LIMIT atoms per coordinate, the most frequent.
ATOM_SHARE = 0.01
ATOM_LIMIT = 8
ATOM_ROWS = 20_000
# Outputs that are not numbers are one-hot coded by outcome, the most frequent this many.
OUTCOME_LIMIT = 64
MANTISSA_BITS = 12
TRAINING_LIMIT = 10_000
# A refit as a Candidate carries it: (outputs on D, outputs on D', nominal samples) -> the refit's choice.
Refit: TypeAlias = Callable[[NDArray[Any], NDArray[Any], int], Candidate | None]


class OutputFeatures:
    """A map from outputs of any type to feature vectors, fixed by the training sample alone.

    Numeric outputs (one row per output, any trailing shape) become their
    coordinates (NaN as 0, ±inf as ±(largest finite training |value| + 1)),
    indicator columns for NaN, +inf and −inf in every coordinate, and a
    one-hot coding of every coordinate that is integer-valued in training
    with at most 32 distinct values there. A coordinate that is not
    integer-valued but whose training values repeat exactly, in at least
    ``ATOM_SHARE`` of ``ATOM_ROWS`` rows (an equal share from each training
    sample) each, has point masses beside a continuous part (the sparse vector
    technique with noisy answers outputs ⊥, coded 0, or the answer): each
    such atom (up to ``ATOM_LIMIT``) gets an indicator column, and the
    coordinate gets a second column with its atoms set to 0, so that a
    linear score can weigh the point masses and the continuous values
    separately (on one training draw of Lyu et al.'s SVT Alg. 3, pair half
    half, the logistic regression's best event had ln(p/q) = 0.35 without
    these columns and 0.89 with them, on 10⁶ fresh outputs). Other outputs (tuples of mixed
    types, strings) are one-hot coded by outcome, the 64 most frequent in
    training. With ``float_bits``, every float coordinate also gives its
    lattice exponent (:func:`.floating.lattice_exponents`: x is an odd
    multiple of 2^k) and its lowest 12 significand bits, for float
    samplers whose set of reachable outputs depends on the input
    (Mironov 2012); trees can then learn events such as "|x| < 1/2 and
    x finer than 2^−53", which the textbook float Laplace sampler hits on
    f(D) = 0 and never on f(D') = 1.

    Everything the map depends on comes from the training samples, so that
    events built on it are independent of a later test sample.
    """

    # Non-numeric outputs: the column of each frequent outcome's key.
    outcomes: dict[Hashable, int]
    # Numeric outputs: the stand-in for ±inf, and the categories and atoms of each coordinate that has them.
    largest: NDArray[np.float64]
    bits: bool
    categories: dict[int, NDArray[np.float64]]
    atoms: dict[int, NDArray[np.float64]]

    def __init__(self, training_samples: Sequence[NDArray[Any]], *, float_bits: bool = False) -> None:
        self.numeric = all(isinstance(sample, np.ndarray) and sample.dtype.kind in "biuf" for sample in training_samples)
        if not self.numeric:
            keys = [_canonical(item) for sample in training_samples for item in sample]
            table: dict[Hashable, int] = {}
            for key in keys:
                table[key] = table.get(key, 0) + 1
            frequent_keys = sorted(table, key=table.__getitem__, reverse=True)[:OUTCOME_LIMIT]
            self.outcomes = {key: index for index, key in enumerate(frequent_keys)}
            return
        values = np.concatenate([sample.reshape(len(sample), -1) for sample in training_samples]).astype(float)
        # Decided by the training samples, not by each batch: a batch that holds a None is featurised as floats, and
        # its numeric outputs must get the columns they would get in a batch of numbers.
        self.bits = float_bits and all(sample.dtype.kind == "f" for sample in training_samples)
        finite = np.where(np.isfinite(values), values, 0.0)
        self.largest = np.max(np.abs(finite), axis=0) + 1.0
        self.categories, self.atoms = {}, {}
        # Atoms of >= 1 % show on ATOM_ROWS rows shared by the samples (an atom of D' alone too): a sort of those
        # per coordinate, not of every row.
        offsets = np.cumsum([0] + [len(sample) for sample in training_samples])
        head_rows = np.concatenate([np.arange(start, min(stop, start + ATOM_ROWS // len(training_samples)))
                                    for start, stop in zip(offsets[:-1], offsets[1:])])
        for column in range(values.shape[1]):
            entries = finite[:, column]
            if np.all(entries == np.round(entries)):
                distinct = np.unique(entries)
                if 2 < distinct.size <= CATEGORICAL_LIMIT:
                    self.categories[column] = distinct
                continue
            head = entries[head_rows]
            distinct, counts = np.unique(head, return_counts=True)
            frequent = np.argsort(-counts, kind="stable")[:ATOM_LIMIT]
            frequent = frequent[(counts[frequent] >= max(2.0, ATOM_SHARE * head.size)) & (counts[frequent] < head.size)]
            if frequent.size:
                self.atoms[column] = np.sort(distinct[frequent])

    def __call__(self, sample: NDArray[Any]) -> NDArray[np.float64]:
        if not self.numeric:
            indices = np.fromiter((self.outcomes.get(_canonical(item), -1) for item in sample), dtype=np.int64, count=len(sample))
            one_hot: NDArray[np.float64] = (indices[:, None] == np.arange(len(self.outcomes))[None, :]).astype(float)
            return one_hot
        raw = np.asarray(sample)
        # A batch that is not all numbers (a None among the outputs) is featurised output by output; its
        # non-numeric outputs as NaN rows, which the non-finite columns below mark: a function of the output alone.
        raw = numeric_rows_or_nan(raw, self.largest.size) if raw.dtype.kind not in "biuf" else raw.reshape(len(raw), -1)
        values = np.asarray(raw, dtype=float)
        rows, width = values.shape
        bits = self.bits
        total = (4 * width + sum(distinct.size for distinct in self.categories.values()) + sum(atoms.size + 1 for atoms in self.atoms.values())
                 + (width * (MANTISSA_BITS + 1) if bits else 0))
        # Filled column block by column block, in column-major order: one pass per block over contiguous memory, where
        # stacking ~70 temporary columns made featurising cost 13 times the SVT sampler's draws (2.6 µs per output).
        features = np.empty((rows, total), order="F")
        finite = np.isfinite(values)
        if finite.all():
            features[:, :width] = values
            features[:, width:4 * width] = 0.0
        else:
            nan, positive = np.isnan(values), np.isposinf(values)
            features[:, :width] = np.where(finite, values, np.where(nan, 0.0, np.where(positive, self.largest, -self.largest)))
            features[:, width:2 * width], features[:, 2 * width:3 * width] = nan, positive
            features[:, 3 * width:4 * width] = ~(finite | nan | positive)
        position = 4 * width
        for column, distinct in self.categories.items():
            features[:, position:position + distinct.size] = values[:, column, None] == distinct[None, :]
            position += distinct.size
        for column, atoms in self.atoms.items():
            hits = values[:, column, None] == atoms[None, :]
            features[:, position:position + atoms.size] = hits
            features[:, position + atoms.size] = np.where(hits.any(axis=1), 0.0, features[:, column])
            position += atoms.size + 1
        if bits:
            patterns = np.ascontiguousarray(raw.astype(np.float64)).view(np.uint64)
            low = patterns & np.uint64((1 << MANTISSA_BITS) - 1)
            shifts = np.arange(MANTISSA_BITS, dtype=np.uint64)
            features[:, position:position + width * MANTISSA_BITS] = ((low[:, :, None] >> shifts) & np.uint64(1)).reshape(rows, -1)
            features[:, position + width * MANTISSA_BITS:] = lattice_exponents(raw)
        return features


class _Standardised:
    """Feature scaling fitted on the training sample (no test data seen)."""

    def __init__(self, features: NDArray[np.float64]) -> None:
        self.mean: NDArray[np.float64] = features.mean(axis=0)
        spread = features.std(axis=0)
        self.scale: NDArray[np.float64] = np.where(spread > 0, spread, 1.0)

    def __call__(self, features: NDArray[np.float64]) -> NDArray[np.float64]:
        return (features - self.mean) / self.scale


def _fitted_scorers(first: NDArray[np.float64], second: NDArray[np.float64], seed: int) -> list[tuple[str, Score]]:
    """Score functions (name, features -> score) fitted to tell first (label 1) from second (label 0)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits

    features = np.vstack([first, second])
    labels = np.concatenate([np.ones(len(first)), np.zeros(len(second))])
    standardise = _Standardised(features)
    linear = LogisticRegression(max_iter=500).fit(standardise(features), labels)
    trees = HistGradientBoostingClassifier(max_iter=30, max_leaf_nodes=15, early_stopping=False, random_state=seed)
    # One thread: OpenMP's default team on a loaded machine makes this fit 40 times slower.
    with threadpool_limits(1):
        trees.fit(features, labels)

    def tree_score(x: NDArray[np.float64]) -> NDArray[np.float64]:
        with threadpool_limits(1):
            probabilities: NDArray[np.float64] = trees.predict_proba(x)
        return probabilities[:, 1]

    # The standardisation folded into the weights: w·(x − m)/s + b = x·(w/s) + (b − m·w/s), one product per output
    # instead of a centred, scaled copy of every feature matrix counted in the final stage.
    weights = linear.coef_[0] / standardise.scale
    intercept = float(linear.intercept_[0] - standardise.mean @ weights)
    return [("logistic regression", lambda x: x @ weights + intercept), ("gradient-boosted trees", tree_score)]


def learned_dp_test(
    sampler: Sampler,
    pair: tuple[Any, Any],
    epsilon: float,
    delta: float,
    *,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    num_thresholds: int = 32,
    float_bits: bool = False,
) -> StatisticalTestResult:
    """Test "``sampler`` is (ε, δ)-DP on ``pair``" with events learned by classifiers; see the module docstring.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs of any type
            (scalars, vectors, tuples; NaN and ±inf allowed).
        pair: (D, D'), neighbours under the caller's relation.
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs per dataset for training and again for the test, >= 10.
        rng: ``numpy.random.Generator`` or integer seed (it also seeds the trees).
        alpha: level in (0, 1): a true claim is rejected with probability <= alpha.
        num_thresholds: score quantiles per model, >= 1.
        float_bits: add the lattice exponents and low significand bits of float outputs to the features.
    """
    dataset, neighbour, epsilon, delta, num_samples, rng, alpha, num_thresholds = split_sample_arguments(
        sampler, pair, epsilon, delta, num_samples, rng, alpha, num_thresholds, minimum_samples=10)
    float_bits = check.boolean("float_bits", float_bits)

    training = [_draw(sampler, data, num_samples, rng, "discrete") for data in (dataset, neighbour)]
    test = [_draw(sampler, data, num_samples, rng, "discrete") for data in (dataset, neighbour)]
    seed = int(rng.integers(2**31))
    names, counts_first, counts_second, event_of = _learned_events(training, test, num_thresholds, float_bits, seed)
    result = decide(counts_first, counts_second, names, num_samples, epsilon, delta, alpha, event_of=event_of)
    if result.candidate is None:
        return result
    refit = lambda first, second, nominal: _refit(first, second, delta, num_thresholds, float_bits, seed, nominal_samples=nominal)  # noqa: E731
    return replace(result, candidate=replace(result.candidate, refit=refit, refit_samples=REFIT_TRAINING + REFIT_RANKING,
                                                         refit_kind="learned"))


def _learned_events(
    training: list[NDArray[Any]],
    test: list[NDArray[Any]],
    num_thresholds: int,
    float_bits: bool,
    seed: int,
    training_limit: int = TRAINING_LIMIT,
) -> tuple[list[str], NDArray[np.intp], NDArray[np.intp], Callable[[int], Event]]:
    """Events {s > t}, {s <= t} of classifiers fitted on ``training`` (two samples), and their counts on ``test``.

    Returns (names, counts on test[0], counts on test[1], event_of: index -> membership function).
    """
    featurise = OutputFeatures(training, float_bits=float_bits)
    features = [featurise(sample) for sample in training + test]
    names: list[str] = []
    counts_first: list[NDArray[np.intp]] = []
    counts_second: list[NDArray[np.intp]] = []
    events: list[tuple[Callable[[NDArray[Any]], NDArray[np.float64]], float, bool]] = []
    # The classifiers are fitted on at most training_limit outputs per side: their fit time grows with n,
    # and the events still depend on the training sample alone.
    fitted = [side[:training_limit] for side in features[:2]]
    for model, score in _fitted_scorers(fitted[0], fitted[1], seed):
        # ``score`` bound as a default: the events call this after the loop has moved on to the next model.
        def score_outputs(outputs: NDArray[Any], score: Score = score) -> NDArray[np.float64]:
            return score(featurise(outputs))

        scored = _last_call_cached(score_outputs)
        training_scores = np.concatenate([score(features[0]), score(features[1])])
        thresholds = np.unique(np.quantile(training_scores, quantile_levels(num_thresholds, training_scores.size)))
        for sample_features, counts in zip(features[2:], (counts_first, counts_second)):
            scores = np.sort(score(sample_features))
            at_most = np.searchsorted(scores, thresholds, side="right")
            counts.append(np.concatenate([scores.size - at_most, at_most]))
        names += [f"{model} score > {t:.6g}" for t in thresholds] + [f"{model} score <= {t:.6g}" for t in thresholds]
        events += [(scored, t, True) for t in thresholds.tolist()] + [(scored, t, False) for t in thresholds.tolist()]
    return names, np.concatenate(counts_first), np.concatenate(counts_second), lambda index: _score_event(*events[index])


# A refit trains on at most this many outputs per side, and ranks its thresholds on at most this many more.
REFIT_TRAINING = 30_000
REFIT_RANKING = 200_000


def _refit(
    first: NDArray[Any],
    second: NDArray[Any],
    delta: float,
    num_thresholds: int,
    float_bits: bool,
    seed: int,
    keep: Candidate | None = None,
    nominal_samples: int = NOMINAL_SAMPLES,
) -> Candidate | None:
    """DP-Sniper's attack on a larger sample: classifiers trained on part of (first, second), thresholds ranked on the rest.

    For :func:`.confirm.confirm_candidate`; returns a :class:`.candidates.Candidate` (or None).
    The scorers' training is capped at ``REFIT_TRAINING`` outputs per side, or half of the sample.
    ``keep``, a candidate chosen before, competes with the learned events on the same ranking sample.
    """
    size = min(len(first), len(second), REFIT_TRAINING + REFIT_RANKING)
    cut = min(REFIT_TRAINING, size // 2)
    rest = [first[cut:size], second[cut:size]]
    names, counts_first, counts_second, event_of = _learned_events(
        [first[:cut], second[:cut]], rest, num_thresholds, float_bits, seed, training_limit=cut)
    if keep is not None:
        names = names + [keep.description]
        counts_first, counts_second = (np.append(counts, np.count_nonzero(keep.event(sample))) for counts, sample in
                                       zip((counts_first, counts_second), rest))
        learned_event_of = event_of
        event_of = lambda index: keep.event if index == len(names) - 1 else learned_event_of(index)  # noqa: E731
    return refit_candidate(counts_first, counts_second, size - cut, delta, event_of, names, nominal_samples)


def learned_refit(candidate: Candidate, delta: float, *, seed: int, float_bits: bool = False, num_thresholds: int = 32) -> Refit:
    """A ``refit`` for a candidate of any family: the learned events on the larger sample, the candidate's own event among them.

    Returns the refit function; :func:`.confirm.confirm_candidates` draws at most
    ``REFIT_TRAINING + REFIT_RANKING`` outputs per side for it.
    """
    return lambda first, second, nominal: _refit(first, second, delta, num_thresholds, float_bits, seed, keep=candidate,
                                                 nominal_samples=nominal)


def _last_call_cached(function: Callable[[NDArray[Any]], NDArray[np.float64]]) -> Callable[[NDArray[Any]], NDArray[np.float64]]:
    """``function``, its value kept for the outputs object it was last called with: the final stage counts several
    thresholds of one score on the same outputs, and featurising and scoring them is most of its time."""
    last: tuple[NDArray[Any], NDArray[np.float64]] | None = None

    def cached(outputs: NDArray[Any]) -> NDArray[np.float64]:
        nonlocal last
        if last is None or outputs is not last[0]:
            last = (outputs, function(outputs))
        return last[1]

    return cached


def _score_event(scored: Callable[[NDArray[Any]], NDArray[np.float64]], threshold: float, above: bool) -> Event:
    """Membership function of {s(o) > threshold} (``above``) or {s(o) <= threshold}; ``scored`` maps outputs to s(o), fixed by training."""
    return lambda outputs: scored(outputs) > threshold if above else scored(outputs) <= threshold
