r"""Black-box statistical test of an (ε, δ) claim for a sampler, with Clopper–Pearson bounds.

The test can only refute a claim, never prove one. For every event S and
both orders of a neighbouring pair, (ε, δ)-DP requires
P[M(D) ∈ S] − e^ε P[M(D') ∈ S] <= δ (Dwork & Roth 2014, Def. 2.4). The test

1. draws a selection sample of ``num_samples`` outputs on D and on D' and
   picks the events from it: for discrete outputs every outcome {o} drawn
   at least 4 times plus the estimated witness sets {o : p̂(o) > e^t q̂(o)}
   at t = ε and a few levels above it (the likelihood-ratio level sets
   that the Neyman–Pearson lemma makes the best events); for real
   outputs the half-lines {x <= t} and {x > t} at ``num_thresholds``
   quantiles of the pooled selection sample and at its tail quantiles
   2^-k and 1 − 2^-k (:func:`quantile_levels`);
2. draws a fresh test sample of ``num_samples`` outputs on each side, so the
   events do not depend on the data they are tested on;
3. for each of the m (event, order) hypotheses forms the one-sided
   Clopper–Pearson lower bound on P[M(D) ∈ S] and upper bound on
   P[M(D') ∈ S], each at level α/(2m) (Bonferroni);
4. rejects when some hypothesis has lower − e^ε·upper > δ.

If the claim is true, a rejection needs one of the 2m bounds to fail, so
the probability of a false rejection is at most α (union bound). The same
bounds give ε_lb = max log((lower − δ)/upper), an ε below which the claim is
refuted at level α; the test rejects exactly when ε_lb > ε. This is the
Clopper–Pearson form of Jagielski, Ullman & Oprea (2020) with δ, as in
jax_privacy's CanaryScoreAuditor, applied to two fixed datasets.

Samplers are called as ``sampler(dataset, size, rng)`` and must return
``size`` independent outputs (an array with one row per output, or a
sequence), drawing only from ``rng``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check
from ..statistics import clopper_pearson_lower, clopper_pearson_upper
from .candidates import NOMINAL_SAMPLES, Candidate, best_candidate, merged, refit_candidate
from .exact import DpViolation, dataset_pair

OUTPUT_KINDS = ("discrete", "real")

# A sampler as the statistical tests take it: (dataset, size, rng) -> size outputs.
Sampler: TypeAlias = Callable[[Any, int, np.random.Generator], Any]
# An event as a membership function: outputs -> one bool per output.
Event: TypeAlias = Callable[[Any], NDArray[np.bool_]]
# A special value of real outputs and its test: ("x is NaN", np.isnan), ...
SpecialValue: TypeAlias = tuple[str, Callable[[NDArray[np.float64]], NDArray[np.bool_]]]


@dataclass(frozen=True)
class StatisticalTestResult:
    """Outcome of :func:`statistical_dp_test`.

    Attributes:
        rejected: the claim is refuted at level ``alpha``.
        lower_bound_delta: max over hypotheses of lower − e^ε·upper: at
            confidence 1 − α, the mechanism's δ(ε) on this pair is at least
            this (when positive).
        epsilon_lower_bound: the largest ε' with lower − e^ε'·upper > δ over
            the hypotheses (0 when none is positive): the claim's ε is
            refuted when this exceeds it.
        witness: description of the event attaining ``lower_bound_delta``.
        direction: ``"D -> D'"`` or ``"D' -> D"`` for that event.
        counts: (count on the first dataset, count on the second) of that event.
        num_hypotheses: m, the number of (event, order) pairs tested.
        num_samples, alpha, epsilon, delta: the settings.
        num_outcomes: discrete mode: the number of distinct outcomes in the selection and
            test samples together; else None.
        candidate: the (event, order) predicted to give the largest ε lower bound on a larger
            fresh sample (:mod:`.candidates`), for :func:`.tester.find_violation`'s final stage; None
            when the test has no event or every event is hopeless.
    """

    rejected: bool
    lower_bound_delta: float
    epsilon_lower_bound: float
    witness: str
    direction: str
    counts: tuple[int, int]
    num_hypotheses: int
    num_samples: int
    alpha: float
    epsilon: float
    delta: float
    num_outcomes: int | None = None
    candidate: Candidate | None = None


def sampler_and_pair(sampler: Sampler, pair: tuple[Any, Any]) -> tuple[Any, Any]:
    """``(dataset, neighbour)`` from ``pair``, after checking that ``sampler`` is callable; ValueError naming either."""
    if not callable(sampler):
        raise ValueError(f"sampler must be a callable (dataset, size, rng) -> outputs (got {sampler!r})")
    return dataset_pair(pair)


def split_sample_arguments(
    sampler: Sampler,
    pair: tuple[Any, Any],
    epsilon: float,
    delta: float,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float,
    num_thresholds: int,
    minimum_samples: int = 1,
) -> tuple[Any, Any, float, float, int, np.random.Generator, float, int]:
    """The validated arguments every split-sample test takes: ``(dataset, neighbour, ε, δ, num_samples,
    rng, α, num_thresholds)``; ValueError naming the first bad one."""
    dataset, neighbour = sampler_and_pair(sampler, pair)
    return (
        dataset,
        neighbour,
        float(check.non_negative("epsilon", epsilon)),
        float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True)),
        check.integer_scalar("num_samples", num_samples, minimum_samples),
        check.generator("rng", rng),
        float(check.open_unit_interval("alpha", alpha)),
        check.integer_scalar("num_thresholds", num_thresholds, 1),
    )


def _draw(sampler: Sampler, dataset: Any, size: int, rng: np.random.Generator, kind: str) -> NDArray[Any]:
    outputs = sampler(dataset, size, rng)
    # A copy: a sampler may return one buffer that it overwrites at its next call (``rng.random(out=...)``), and the
    # tests keep samples across calls (a selection sample beside its test sample: REVIEW s39 refuted an exactly
    # 1-DP randomized response at ε_lb 1.3-1.6 through such a buffer).
    array = np.array(outputs) if isinstance(outputs, np.ndarray) or kind == "real" else _as_outputs(outputs)
    if array.ndim == 0 or array.shape[0] != size or (kind == "real" and array.shape != (size,)):
        expected = "a 1-D array of size real outputs" if kind == "real" else "a sequence of size outputs"
        raise ValueError(f"sampler must return {expected} (asked for {size}, got shape {np.shape(array)})")
    if kind == "real":
        if array.dtype.kind not in "biuf":
            raise ValueError(f"sampler must return real numbers when outputs='real' (got dtype {array.dtype})")
        array = array.astype(float)
    return array


def _as_outputs(outputs: Any) -> NDArray[Any]:
    """A sampler's outputs as an array with one row per output: numeric when they are, else objects."""
    array: NDArray[Any] | None
    try:
        array = np.asarray(outputs)
    except ValueError:  # ragged: outputs of different lengths
        array = None
    if array is not None and array.dtype.kind in "biuf":
        return array
    items = list(outputs)
    objects = np.empty(len(items), dtype=object)
    for index, item in enumerate(items):
        objects[index] = item
    return objects


def _canonical(item: object) -> Hashable:
    """A hashable key equal for equal outputs: every NaN one outcome, −0.0 the same as 0.0, arrays as tuples."""
    if isinstance(item, (float, np.floating)):
        return ("nan",) if math.isnan(item) else float(item) + 0.0
    if isinstance(item, np.ndarray):
        # A row of a numeric sample is the same outcome as the tuple or list of its values in an object sample (one
        # None among tuples makes one): REVIEW s39 saw (1, 1) coded twice and an exactly 1-DP mechanism refuted.
        if item.ndim == 0:
            return _canonical(item.item())
        if item.ndim == 1:
            return tuple(_canonical(value) for value in item.tolist())
        return ("array", item.shape, tuple(_canonical(value) for value in item.ravel().tolist()))
    if isinstance(item, (list, tuple)):
        return tuple(_canonical(value) for value in item)
    if isinstance(item, np.generic):
        return _canonical(item.item())
    if isinstance(item, dict):
        # Entries in a fixed order (by the repr of their canonical keys: keys of mixed types do not compare).
        entries = ((_canonical(key), _canonical(value)) for key, value in item.items())
        return ("dict", tuple(sorted(entries, key=lambda entry: repr(entry[0]))))
    if isinstance(item, (set, frozenset)):
        return ("set", frozenset(_canonical(value) for value in item))
    try:
        hash(item)
    except TypeError:
        raise ValueError(f"sampler must return outputs that are numbers, strings, tuples, lists, arrays, dicts, sets "
                         f"or other hashable values (got an unhashable {type(item).__name__})") from None
    return item


def outcome_codes(samples: Sequence[NDArray[Any]]) -> tuple[list[NDArray[np.int64]], int]:
    """Integer codes of the outputs of several samples, equal exactly when the outputs are the same outcome.

    Outputs are compared by value: every NaN is one outcome (a mechanism
    that releases NaN releases an outcome like any other), −0.0 and 0.0 are
    one outcome, ±inf are outcomes, and a vector or tuple output is one
    outcome. Numeric arrays with one row per output are coded without a
    Python loop (rows compared as bytes after canonicalising NaN and −0.0);
    other outputs (mixed tuples, strings, objects) through hashable keys.

    Returns:
        one int64 array of codes per sample, and the number of distinct outcomes.
    """
    sizes = [len(sample) for sample in samples]
    if all(isinstance(sample, np.ndarray) and sample.ndim == 1 and sample.dtype.kind in "iu" for sample in samples):
        # Integers, one per output (noisy max's index): sorted as numbers, not as rows of bytes.
        _, codes = np.unique(np.concatenate(samples), return_inverse=True)
        count = int(codes.max()) + 1 if codes.size else 0
        return np.split(codes.astype(np.int64), np.cumsum(sizes)[:-1]), count
    if _numeric_rows(samples):
        rows = _row_keys(np.concatenate([sample.reshape(len(sample), -1) for sample in samples]))
        _, codes = np.unique(rows, return_inverse=True)
        codes = codes.ravel().astype(np.int64)
        count = int(codes.max()) + 1 if codes.size else 0
    else:
        table: dict[Hashable, int] = {}
        codes = np.fromiter(
            (table.setdefault(_canonical(item), len(table)) for sample in samples for item in sample),
            dtype=np.int64,
            count=sum(sizes),
        )
        count = len(table)
    return np.split(codes, np.cumsum(sizes)[:-1]), count


def _numeric_rows(samples: Sequence[NDArray[Any]]) -> bool:
    """All samples are numeric arrays whose outputs have one shape: outcomes can be compared as rows of bytes."""
    return all(isinstance(sample, np.ndarray) and sample.dtype.kind in "biuf" for sample in samples) and (
        len({sample.shape[1:] for sample in samples}) == 1)


def _row_keys(matrix: NDArray[Any]) -> NDArray[np.void]:
    """One byte string per row, equal exactly when the rows are the same outcome (NaNs made one, −0.0 made 0.0)."""
    if matrix.dtype.kind == "f":
        matrix = np.where(np.isnan(matrix), np.nan, matrix) + 0.0
    matrix = np.ascontiguousarray(matrix)
    return matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).ravel()


def row_event(width: int, test: Callable[[NDArray[Any]], NDArray[np.bool_]]) -> Event:
    """The event ``test`` on outputs flattened to one row each, as a membership function.

    An output whose row is not ``width`` numbers long, or that is not numeric, is in no such event: the event was
    defined on rows of that shape, and any fixed function of the output is an event (sound, at a cost in power).
    Membership is a function of each output alone: in a batch that mixes numeric outputs with others (an object
    array: a None among ints) the numeric ones are tested one by one, as in a numeric batch. Deciding it per
    batch let one None take a whole chunk of 10⁵ outputs out of the event, the final stage's counts stopped being
    binomial, and a 0.916-DP mechanism that aborts with probability 5·10⁻⁶ was refuted at ε = 1 (REVIEW s39).
    """

    def member(outputs: Any) -> NDArray[np.bool_]:
        array = np.asarray(outputs)
        if array.dtype.kind in "biuf":
            rows = array.reshape(len(array), -1)
            return test(rows) if rows.shape[1] == width else np.zeros(len(array), dtype=np.bool_)
        inside = np.zeros(len(array), dtype=np.bool_)
        numeric = [(index, row) for index, row in enumerate(_numeric_row(item) for item in array)
                   if row is not None and row.size == width]
        for dtype in {row.dtype for _, row in numeric}:
            # One call per dtype: a row's own dtype is what a numeric batch of that output alone would carry.
            chosen = [(index, row) for index, row in numeric if row.dtype == dtype]
            inside[[index for index, _ in chosen]] = test(np.stack([row for _, row in chosen]))
        return inside

    return member


def _numeric_row(item: object) -> NDArray[Any] | None:
    """One output as a flat numeric row, or None when it is not numbers (None, a string, a ragged tuple)."""
    try:
        row = np.asarray(item)
    except ValueError:
        return None
    return row.ravel() if row.dtype.kind in "biuf" else None


def numeric_rows_or_nan(outputs: NDArray[Any], width: int) -> NDArray[np.float64]:
    """A batch as float rows of ``width``: each numeric output of that width as its row, any other output (None, a
    string, another width) as a row of NaN, decided output by output (a function of each output alone)."""
    array = np.asarray(outputs)
    if array.dtype.kind in "biuf":
        rows = array.reshape(len(array), -1)
        if rows.shape[1] == width:
            return rows.astype(np.float64)
        return np.full((len(array), width), np.nan)
    filled = np.full((len(array), width), np.nan)
    for index, item in enumerate(array):
        row = _numeric_row(item)
        if row is not None and row.size == width:
            filled[index] = row
    return filled


def outcome_set_event(
    samples: Sequence[NDArray[Any]], codes: Sequence[NDArray[np.int64]], members: ArrayLike, first: NDArray[np.intp] | None = None
) -> Event:
    """The event "the output is one of the outcomes ``members``" (codes of :func:`outcome_codes` over ``samples``), as a membership function.

    Numeric outputs are compared as rows of bytes of the samples' dtype
    (fresh outputs are cast to it first); other outputs by their
    :func:`_canonical` keys. Any fixed function of the output is an event,
    so a cast that merges outcomes costs power, never soundness. ``first``:
    :func:`first_occurrences` of the pooled codes, when several events of the
    same samples are made.
    """
    if first is None:
        first = first_occurrences(np.concatenate(codes))
    indices = first[np.asarray(members, dtype=np.int64)]
    if _numeric_rows(samples):
        # The members' rows, gathered from the samples they occur in (not from a copy of all the samples).
        offsets = np.cumsum([0] + [len(sample) for sample in samples])
        owner = np.searchsorted(offsets, indices, side="right") - 1
        rows = [sample.reshape(len(sample), -1)[indices[owner == position] - offsets[position]] for position, sample in enumerate(samples)]
        dtype = np.result_type(*samples)
        keys, width = _row_keys(np.concatenate(rows).astype(dtype)), rows[0].shape[1]

        def among_members(rows: NDArray[Any]) -> NDArray[np.bool_]:
            with np.errstate(invalid="ignore"):
                return np.isin(_row_keys(rows.astype(dtype)), keys)

        return row_event(width, among_members)
    items = [item for sample in samples for item in sample]
    canonical_keys = {_canonical(items[index]) for index in indices.tolist()}
    return lambda outputs: np.fromiter((_canonical(item) in canonical_keys for item in outputs), dtype=np.bool_, count=len(outputs))


def first_occurrences(codes: NDArray[np.int64]) -> NDArray[np.intp]:
    """Per code 0, 1, ..., max: the index of its first occurrence in ``codes`` (one stable sort)."""
    _, first = np.unique(codes, return_index=True)
    return first


def _witness_levels(epsilon: float) -> list[float]:
    """Log-ratio thresholds of the estimated witness sets: ε and above it, where the best event for an ε lower bound lies."""
    step = max(epsilon, 0.1)
    return [epsilon + fraction * step for fraction in (0.0, 0.25, 0.5, 1.0)]


def _discrete_events(
    selection_first: NDArray[np.int64], selection_second: NDArray[np.int64], epsilon: float, outcome_names: _OutcomeNames
) -> tuple[NDArray[np.intp], list[NDArray[np.bool_]], list[str]]:
    """Events chosen on the selection sample, as outcome codes: singletons of the outcomes seen often, and witness sets.

    An outcome seen fewer than ``SINGLETON_COUNT`` times in the pooled selection
    sample gets no singleton: its test counts would be too small to refute
    anything, and with continuous outputs there are as many such outcomes as
    draws, each a hypothesis diluting the Bonferroni level. Rare outcomes
    still enter the witness sets.

    Returns (singleton codes, list of witness masks over all codes, event names). No
    outcome × outcome matrix is formed: an event's count is a sum of per-outcome counts.
    """
    count = len(outcome_names)
    first = np.bincount(selection_first, minlength=count)
    second = np.bincount(selection_second, minlength=count)
    seen = np.flatnonzero(first + second >= SINGLETON_COUNT)
    names = [f"{{{outcome_names[code]}}}" for code in seen.tolist()]
    witnesses: list[NDArray[np.bool_]] = []
    singleton = np.zeros(count, dtype=bool)
    singleton[seen] = True
    for heavy, light, label in ((first, second, "D"), (second, first, "D'")):
        previous: NDArray[np.bool_] | None = None
        for level in _witness_levels(epsilon):
            witness = heavy > math.exp(min(level, 700.0)) * light
            members = np.count_nonzero(witness)
            if (members > 1 or (members == 1 and not singleton[witness].any())) and (previous is None or np.any(witness != previous)):
                witnesses.append(witness)
                shown = [outcome_names[code] for code in np.flatnonzero(witness)[:8].tolist()]
                more = ", ..." if members > 8 else ""
                names.append(f"estimated witness for {label} at ratio e^{level:.3g}: {{{', '.join(shown)}{more}}}")
            previous = witness
    return seen, witnesses, names


def _discrete_counts(
    codes: NDArray[np.int64], count: int, seen: NDArray[np.intp], witnesses: Sequence[NDArray[np.bool_]]
) -> NDArray[np.int64]:
    per_outcome = np.bincount(codes, minlength=count)
    return np.concatenate([per_outcome[seen], [int(per_outcome[mask].sum()) for mask in witnesses]]).astype(np.int64)


class _OutcomeNames:
    """repr of one output per outcome code, for messages, made only for the codes asked for (a sample may hold ~10⁵ outcomes)."""

    def __init__(self, samples: Sequence[NDArray[Any]], codes: Sequence[NDArray[np.int64]], count: int) -> None:
        self.samples, self.count = samples, count
        self.offsets = np.cumsum([0] + [len(sample) for sample in samples])
        _, self.first = np.unique(np.concatenate(codes), return_index=True)

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, code: int) -> str:
        position = int(self.first[code])
        sample = int(np.searchsorted(self.offsets, position, side="right")) - 1
        item = self.samples[sample][position - self.offsets[sample]]
        return repr(item.tolist() if isinstance(item, (np.ndarray, np.generic)) else item)


# Fewest selection draws (both sides) of an outcome for its singleton event.
SINGLETON_COUNT = 4
_SPECIAL_VALUES: tuple[SpecialValue, ...] = (("x is NaN", np.isnan), ("x = inf", np.isposinf), ("x = -inf", np.isneginf))


# Tail quantiles 2^-k (and 1 − 2^-k) go down to where this many selection outputs lie beyond them.
TAIL_COUNT = 16


def quantile_levels(num_thresholds: int, size: int) -> NDArray[np.float64]:
    """``num_thresholds`` evenly spaced levels in (0, 1) and the tail levels 2^-k, 1 − 2^-k with 2^-k·size >= 16.

    Many privacy losses are largest in a tail (a subsampled or value-releasing
    mechanism's likelihood ratio grows toward its supremum only far out), which
    evenly spaced quantiles never reach.
    """
    deepest = max(int(math.floor(math.log2(max(size, 1) / TAIL_COUNT))), 0)
    tails = 2.0 ** -np.arange(1, deepest + 1)
    return np.unique(np.concatenate([np.linspace(0.0, 1.0, num_thresholds + 2)[1:-1], tails, 1.0 - tails]))


def _real_events(
    selection_first: NDArray[np.float64], selection_second: NDArray[np.float64], num_thresholds: int
) -> tuple[NDArray[np.float64], list[SpecialValue], list[str]]:
    """Half-lines at quantiles (evenly spaced and in both tails) of the pooled finite selection outputs, and {NaN}, {inf}, {−inf} when drawn."""
    pooled = np.concatenate([selection_first, selection_second])
    finite = pooled[np.isfinite(pooled)]
    thresholds: NDArray[np.float64]
    if finite.size:
        thresholds = np.unique(np.quantile(finite, quantile_levels(num_thresholds, finite.size)))
    else:
        thresholds = np.empty(0)
    special = [test for test in _SPECIAL_VALUES if test[1](pooled).any()]
    names = [f"x <= {t:.6g}" for t in thresholds] + [f"x > {t:.6g}" for t in thresholds] + [name for name, _ in special]
    return thresholds, special, names


def _real_counts(outputs: NDArray[np.float64], thresholds: NDArray[np.float64], special: Sequence[SpecialValue]) -> NDArray[np.int64]:
    """Counts of the half-lines (NaN in neither) and of the special values."""
    numbers = np.sort(outputs[~np.isnan(outputs)])
    at_most = np.searchsorted(numbers, thresholds, side="right")
    special_counts = [np.count_nonzero(test(outputs)) for _, test in special]
    return np.concatenate([at_most, numbers.size - at_most, special_counts]).astype(np.int64)


def statistical_dp_test(
    sampler: Sampler,
    pair: tuple[Any, Any],
    epsilon: float,
    delta: float,
    *,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    outputs: str = "discrete",
    num_thresholds: int = 64,
) -> StatisticalTestResult:
    """Test "``sampler`` is (ε, δ)-DP on ``pair``" from samples; see the module docstring for the procedure.

    Args:
        sampler: callable (dataset, size, rng) -> 1-D array of size outputs.
        pair: (D, D'), neighbours under the caller's relation.
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs drawn per dataset, for selection and again for
            the test, >= 1 (4·num_samples sampler outputs in all).
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level of the test in (0, 1): a true claim is rejected with
            probability at most alpha.
        outputs: ``"discrete"``: any outputs (numbers, vectors, tuples,
            strings), compared by value as in :func:`outcome_codes` (NaN and
            ±inf are outcomes like any other); or ``"real"``: scalar
            outputs, half-line events, plus the events {NaN}, {inf}, {−inf}
            when the selection sample holds them.
        num_thresholds: number of quantile thresholds for real outputs, >= 1.
    """
    dataset, neighbour, epsilon, delta, num_samples, rng, alpha, num_thresholds = split_sample_arguments(
        sampler, pair, epsilon, delta, num_samples, rng, alpha, num_thresholds)
    kind = check.choice("outputs", outputs, OUTPUT_KINDS)

    selection = [_draw(sampler, data, num_samples, rng, kind) for data in (dataset, neighbour)]
    test = [_draw(sampler, data, num_samples, rng, kind) for data in (dataset, neighbour)]
    if kind == "discrete":
        samples = selection + test
        codes, count = outcome_codes(samples)
        seen, witnesses, names = _discrete_events(codes[0], codes[1], epsilon, _OutcomeNames(samples, codes, count))
        counts = [_discrete_counts(sample_codes, count, seen, witnesses) for sample_codes in codes[2:]]

        def event_of(index: int) -> Event:
            members = seen[index:index + 1] if index < seen.size else np.flatnonzero(witnesses[index - seen.size])
            return outcome_set_event(samples, codes, members)

        result = decide(counts[0], counts[1], names, num_samples, epsilon, delta, alpha, event_of=event_of)
        candidates = [candidate for candidate in (result.candidate, _level_set_candidate(samples, codes, count, num_samples, delta))
                      if candidate is not None]
        best = max(candidates, key=lambda candidate: candidate.score) if candidates else None
        return replace(result, num_outcomes=count, candidate=best)
    thresholds, special, names = _real_events(selection[0], selection[1], num_thresholds)
    counts = [_real_counts(sample, thresholds, special) for sample in test]
    return decide(counts[0], counts[1], names, num_samples, epsilon, delta, alpha,
                  event_of=lambda index: _real_event(index, thresholds, special))


def _real_event(index: int, thresholds: NDArray[np.float64], special: Sequence[SpecialValue]) -> Event:
    """Membership function of event ``index`` of :func:`_real_events` (NaN in neither half-line)."""
    count = thresholds.size
    if index >= 2 * count:
        return lambda outputs: np.asarray(special[index - 2 * count][1](np.asarray(outputs, dtype=float)), dtype=bool)
    threshold, above = thresholds[index % count], index >= count
    return lambda outputs: (np.asarray(outputs, dtype=float) > threshold) if above else (np.asarray(outputs, dtype=float) <= threshold)


def _level_set_refit(
    first: Any, second: Any, delta: float, keep: Candidate | None = None, nominal_samples: int = NOMINAL_SAMPLES
) -> Candidate | None:
    """:func:`_level_set_candidate` on a larger sample: outcomes ordered on its first half, prefixes ranked on its second.

    With at most ``SHARED_ORDER_OUTCOMES`` distinct outcomes, the whole sample both orders and ranks: splitting it
    swaps near-tied outcomes (SVT's first ⊤ at the 6th or 7th query at ε = 0.1, ln(p/q) = 0.089 and 0.071,
    swapped on a quarter of 250,000-output halves), and then the best single outcome is no prefix at all; with
    few outcomes the prefixes are few, and the shrunk score keeps a handful of hits from ranking first.
    ``keep``, a candidate chosen before, competes on the same ranking sample.
    """
    size = min(len(first), len(second))
    codes, count = outcome_codes([first[:size], second[:size]])
    if count <= SHARED_ORDER_OUTCOMES:
        samples, codes, ranked_on = [first[:size], second[:size]] * 2, codes * 2, size
    else:
        half = size // 2
        samples = [first[:half], second[:half], first[half:2 * half], second[half:2 * half]]
        codes, count = outcome_codes(samples)
        ranked_on = half
    refitted = _level_set_candidate(samples, codes, count, ranked_on, delta, nominal_samples, choose=refit_candidate)
    if keep is None:
        return refitted
    hits = [int(np.count_nonzero(keep.event(sample))) for sample in samples[2:]]
    kept = refit_candidate([hits[0]], [hits[1]], ranked_on, delta, lambda index: keep.event, [keep.description], nominal_samples)
    return merged([refitted, kept])


def _half_line_refit(
    first: Any, second: Any, delta: float, keep: Candidate, nominal_samples: int = NOMINAL_SAMPLES, num_thresholds: int = 64
) -> Candidate | None:
    """The half-lines of :func:`_real_events` on a larger sample of scalar outputs: thresholds from its first half, ranked on its second.

    ``keep``, a candidate chosen before, competes on the same second half.
    """
    half = min(len(first), len(second)) // 2
    selection = [np.asarray(first[:half], dtype=float), np.asarray(second[:half], dtype=float)]
    test = [first[half:2 * half], second[half:2 * half]]
    thresholds, special, names = _real_events(selection[0], selection[1], num_thresholds)
    counts = [np.append(_real_counts(np.asarray(sample, dtype=float), thresholds, special), np.count_nonzero(keep.event(sample)))
              for sample in test]
    events = len(names)
    return refit_candidate(counts[0], counts[1], half, delta,
                           lambda index: keep.event if index == events else _real_event(index, thresholds, special),
                           names + [keep.description], nominal_samples)


def _rescored(first: Any, second: Any, delta: float, keep: Candidate, nominal_samples: int = NOMINAL_SAMPLES) -> Candidate | None:
    """``keep`` alone, its score and order recomputed on a larger sample (for outputs with too many outcomes for level sets)."""
    hits = [int(np.count_nonzero(keep.event(sample))) for sample in (first, second)]
    size = min(len(first), len(second))
    return refit_candidate([hits[0]], [hits[1]], size, delta, lambda index: keep.event, [keep.description], nominal_samples)


# Level sets for candidates: every prefix when there are at most this many outcomes, else this many prefix lengths.
LEVEL_SET_LIMIT = 4096
# A refit on outputs with at most this many distinct values orders and ranks its level sets on the same sample.
SHARED_ORDER_OUTCOMES = 64


def _level_set_candidate(
    samples: Sequence[NDArray[Any]],
    codes: Sequence[NDArray[np.int64]],
    count: int,
    num_samples: int,
    delta: float,
    nominal_samples: int = NOMINAL_SAMPLES,
    choose: Callable[[ArrayLike, ArrayLike, int, float, Callable[[int], Event], Sequence[str], int], Candidate | None] = best_candidate,
) -> Candidate | None:
    """The best estimated likelihood-ratio level set as a candidate for the final stage (not a hypothesis here).

    Outcomes are ordered by the selection sample's ratio (k_D + 1)/(k_D' + 1),
    each way; the prefixes of that order are the level sets that the
    Neyman–Pearson lemma makes the best events, and the test sample's
    counts rank them (``choose``: :func:`.candidates.best_candidate`, or a refit's
    :func:`.candidates.refit_candidate`).
    """
    selection = [np.bincount(codes[side], minlength=count).astype(float) for side in (0, 1)]
    test = [np.bincount(codes[side], minlength=count) for side in (2, 3)]
    lengths = np.arange(1, count + 1)
    if count > LEVEL_SET_LIMIT:
        lengths = np.unique(np.geomspace(1, count, LEVEL_SET_LIMIT).astype(np.int64))
    orders: list[NDArray[np.intp]] = []
    firsts: list[NDArray[np.int64]] = []
    seconds: list[NDArray[np.int64]] = []
    names: list[str] = []
    for label, ratio in (("D", (selection[0] + 1) / (selection[1] + 1)), ("D'", (selection[1] + 1) / (selection[0] + 1))):
        order = np.argsort(-ratio, kind="stable")
        firsts.append(np.cumsum(test[0][order])[lengths - 1])
        seconds.append(np.cumsum(test[1][order])[lengths - 1])
        orders += [order[:length] for length in lengths.tolist()]
        names += [f"the {length} outcomes most likelier under {label} in the selection sample" for length in lengths.tolist()]
    found: dict[str, NDArray[np.intp]] = {}  # the first occurrences of the codes, found once for all the events made here

    def event_of(index: int) -> Event:
        if "first" not in found:
            found["first"] = first_occurrences(np.concatenate(codes))
        return outcome_set_event(samples, codes, orders[index], found["first"])

    return choose(np.concatenate(firsts), np.concatenate(seconds), num_samples, delta, event_of, names, nominal_samples)


def decide(
    counts_first: ArrayLike,
    counts_second: ArrayLike,
    names: Sequence[str],
    num_samples: int,
    epsilon: float,
    delta: float,
    alpha: float,
    event_of: Callable[[int], Event] | None = None,
) -> StatisticalTestResult:
    """The Clopper–Pearson decision on events fixed before the test sample was drawn (steps 3 and 4 above).

    Args:
        counts_first, counts_second: per event, how many of the ``num_samples``
            test outputs on D (on D') fall in it.
        names: per event, its description.
        num_samples, epsilon, delta, alpha: as in :func:`statistical_dp_test`.

    Each (event, order) is a hypothesis tested at α/(2m) per bound, m the
    number of hypotheses, so a true claim is rejected with probability <= α.
    With ``event_of`` (index -> the event's membership function), the result
    also names the best candidate for a final stage (:mod:`.candidates`).
    """
    heavy = np.concatenate([counts_first, counts_second]).astype(np.int64)
    light = np.concatenate([counts_second, counts_first]).astype(np.int64)
    num_hypotheses = heavy.size
    level = alpha / (2.0 * num_hypotheses)
    lower = np.atleast_1d(clopper_pearson_lower(heavy, num_samples, level))
    upper = np.atleast_1d(clopper_pearson_upper(light, num_samples, level))
    with np.errstate(over="ignore"):
        margin = lower - math.exp(min(epsilon, 700.0)) * upper
    best = int(np.argmax(margin))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratios = np.where(lower > delta, np.log(np.maximum(lower - delta, 0.0)) - np.log(upper), -np.inf)
    epsilon_lower_bound = max(float(np.max(log_ratios)), 0.0)
    num_events = len(names)
    return StatisticalTestResult(
        rejected=bool(margin[best] > delta),
        lower_bound_delta=float(margin[best]),
        epsilon_lower_bound=epsilon_lower_bound,
        witness=names[best % num_events],
        direction="D -> D'" if best < num_events else "D' -> D",
        counts=(int(heavy[best]), int(light[best])),
        num_hypotheses=num_hypotheses,
        num_samples=num_samples,
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
        candidate=None if event_of is None else best_candidate(counts_first, counts_second, num_samples, delta, event_of, names),
    )


def assert_dp_statistically(sampler: Sampler, pair: tuple[Any, Any], epsilon: float, delta: float, **options: Any) -> StatisticalTestResult:
    """:func:`statistical_dp_test`, raising :class:`DpViolation` when it rejects; returns the result otherwise.

    The violation's ``measured_delta`` is the (1 − α)-confidence lower bound
    on P[M(D) ∈ S] − e^ε P[M(D') ∈ S] for the witnessing event S.
    """
    result = statistical_dp_test(sampler, pair, epsilon, delta, **options)
    if result.rejected:
        raise DpViolation(
            f"not ({result.epsilon:g}, {result.delta:g})-DP at level alpha = {result.alpha:g}: in direction "
            f"{result.direction} the event {result.witness} (counts {result.counts[0]} vs {result.counts[1]} of "
            f"{result.num_samples}) has P[M(D) in S] - e^eps P[M(D') in S] >= {result.lower_bound_delta:.6g}; "
            f"epsilon lower bound {result.epsilon_lower_bound:.4g}",
            epsilon=result.epsilon,
            delta=result.delta,
            measured_delta=result.lower_bound_delta,
            witness=(result.witness,),
            direction=result.direction,
        )
    return result
