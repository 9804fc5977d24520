"""IN/OUT attack scores: the single input of every estimator in :mod:`audits`.

An audit reduces to two samples of a scalar attack score: the scores of canaries
(or models) whose target record was IN the training data and of those where it
was OUT. Every ε lower bound is a pure function of these two arrays plus α, δ
and a threshold-selection rule (the design of ``CanaryScoreAuditor`` in
google-deepmind/jax_privacy).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpmech import validation as check

TRIALS = ("independent", "natural")
NATURAL_TRIALS_NOTE = (
    "trials='natural': the IN and OUT scores are not declared independent randomised trials (e.g. natural "
    "members and non-members of one model), so no coverage guarantee holds and eps_lb is an estimate."
)


def _score_array(name: str, value) -> np.ndarray:
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D array of finite real numbers (got {value!r})") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of finite real numbers (got shape {array.shape})")
    if array.size == 0:
        raise ValueError(f"{name} must be non-empty (got 0 scores)")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite numbers (got {array[~np.isfinite(array)][0]!r})")
    array.flags.writeable = False
    return array


@dataclasses.dataclass(frozen=True, eq=False)
class AuditScores:
    """Attack scores of IN and OUT canaries, immutable and validated.

    Args:
        in_scores: scores of canaries included in the training data (1-D, finite, non-empty).
        out_scores: scores of canaries left out (1-D, finite, non-empty).
        higher_is_in: True when a higher score means "more likely IN" (the
            convention of jax_privacy); False for scores such as a loss, where a
            lower score means IN. Estimators never guess the polarity: the
            reverse decision rule is tested only where an estimator says so,
            under the same α.
        trials: "independent" when every score comes from its own randomised
            trial: each IN score from a run on D ∪ {canary} and each OUT score
            from a run on D, all runs independent (or, for the one-run audit,
            canaries included independently with probability ½ in one run).
            Only then can an estimator's bound be certified. "natural" (the
            default) for anything else, e.g. the training members and held-out
            non-members of one model: their scores share the model and were not
            randomised into IN and OUT, so every ε computed from them is labelled
            an estimate. Only the experimenter knows how the scores were made,
            so certification must be asked for explicitly.

    The arrays are stored as read-only float64 copies.
    """

    in_scores: np.ndarray
    out_scores: np.ndarray
    higher_is_in: bool = True
    trials: str = "natural"

    def __post_init__(self):
        object.__setattr__(self, "in_scores", _score_array("in_scores", self.in_scores))
        object.__setattr__(self, "out_scores", _score_array("out_scores", self.out_scores))
        if not isinstance(self.higher_is_in, (bool, np.bool_)):
            raise ValueError(f"higher_is_in must be True or False (got {self.higher_is_in!r})")
        object.__setattr__(self, "higher_is_in", bool(self.higher_is_in))
        object.__setattr__(self, "trials", check.choice("trials", self.trials, TRIALS))

    @property
    def independent_trials(self) -> bool:
        """True when the caller declared the scores independent randomised trials (a certified bound is possible)."""
        return self.trials == "independent"

    @property
    def num_in(self) -> int:
        return int(self.in_scores.size)

    @property
    def num_out(self) -> int:
        return int(self.out_scores.size)

    def oriented(self) -> tuple[np.ndarray, np.ndarray]:
        """(in, out) scores with the sign flipped if needed so that higher always means IN."""
        if self.higher_is_in:
            return self.in_scores, self.out_scores
        return -self.in_scores, -self.out_scores

    def to_original_units(self, oriented_value: float) -> float:
        """Map a threshold on the oriented scale back to the caller's score scale."""
        return float(oriented_value) if self.higher_is_in else float(-oriented_value)

    def split(self, rng) -> tuple["AuditScores", "AuditScores"]:
        """Random halves (selection, evaluation) of the IN and of the OUT scores.

        Each side is permuted by ``rng`` (a ``numpy.random.Generator`` or an int
        seed) and cut in two; the selection half gets ⌊n/2⌋ scores. Both sides
        need at least 2 scores.
        """
        if rng is None:
            raise ValueError("rng must be a numpy.random.Generator or an int seed for a random split (got None)")
        generator = np.random.default_rng(rng)
        if self.num_in < 2 or self.num_out < 2:
            raise ValueError(
                f"in_scores and out_scores need at least 2 scores each to split (got {self.num_in}, {self.num_out})"
            )
        halves = []
        for scores in (self.in_scores, self.out_scores):
            permuted = scores[generator.permutation(scores.size)]
            halves.append((permuted[: scores.size // 2], permuted[scores.size // 2 :]))
        (in_select, in_evaluate), (out_select, out_evaluate) = halves
        return (
            AuditScores(in_select, out_select, self.higher_is_in, self.trials),
            AuditScores(in_evaluate, out_evaluate, self.higher_is_in, self.trials),
        )
