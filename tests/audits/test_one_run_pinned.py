"""epsilon_one_run gives the results recorded before issue 31's second round of fixed-cost work, or lower by 1e-6.

``test_one_run_pinned.json`` holds cases recorded with the code of commit 1d46e14 (before that round), each with
the result's ε_lb, thresholds (hex doubles), guesses and correct. 240 grid cases (seed, size, shift, δ, guessing,
threshold_strategy, num_guess_counts, higher_is_in): scores N(shift, 1) IN and N(0, 1) OUT of ``size`` each from
default_rng(seed), negated when higher_is_in is False; "split" uses rng=seed. 40 cases of the other rules
(kind, seed, size, parameter, δ, threshold_strategy): "explicit" audits binary label randomized response of
``size`` canaries at ε = parameter with the cuts ±0.5; "hull" audits N(parameter, 1) against N(0, 1) with
one-sided ROC-hull rules. The same rule (thresholds, guesses, correct) must be chosen; its ε_lb may only move
down, by at most 1e-6·max(1, ε_lb) (the Newton search at δ > 0 returns a bound up to 5e-8·max(1, ε) below the
supremum, where the brentq search it replaced returned one within ~3e-9 of it); at δ = 0 it is the same double.
"""

import json
import pathlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from audits import AuditScores, epsilon_one_run
from audits.attacks import label_randomized_response_scores
from audits import one_run

from tests.audits.test_one_run_speed import _target, _vectorised_lowered, _vectorised_proxies
from tests.profiles import examples

_PINNED = json.loads((pathlib.Path(__file__).parent / "test_one_run_pinned.json").read_text())


def _result(seed, size, shift, delta, guessing, strategy, num_guess_counts, higher_is_in):
    rng = np.random.default_rng(seed)
    in_scores, out_scores = rng.normal(shift, 1.0, size), rng.normal(0.0, 1.0, size)
    if not higher_is_in:
        in_scores, out_scores = -in_scores, -out_scores
    scores = AuditScores(in_scores, out_scores, higher_is_in=higher_is_in, trials="independent")
    extra = {"rng": seed} if strategy == "split" else {}
    return epsilon_one_run(scores, delta=delta, guessing=guessing, threshold_strategy=strategy,
                           num_guess_counts=num_guess_counts, **extra)


def _other_rules_result(kind, seed, size, parameter, delta, strategy):
    if kind == "explicit":
        scores = label_randomized_response_scores(size, parameter, 2, np.random.default_rng(seed))
        return epsilon_one_run(scores, delta=delta, threshold_strategy="explicit", guess_thresholds=[(-0.5, 0.5)])
    rng = np.random.default_rng(seed)
    scores = AuditScores(rng.normal(parameter, 1.0, size), rng.normal(0.0, 1.0, size), trials="independent")
    extra = {"rng": seed} if strategy == "split" else {}
    return epsilon_one_run(scores, delta=delta, guessing="one-sided", guess_rules="hull", threshold_strategy=strategy,
                           **extra)


def _assert_recorded(result, case, eps_lb, out_cut, in_cut, guesses, correct):
    recorded = float.fromhex(eps_lb)
    if result.delta == 0.0:
        assert result.eps_lb == recorded, case
    else:
        assert recorded - 1e-6 * max(1.0, recorded) <= result.eps_lb <= recorded, case
    assert result.thresholds == (float.fromhex(out_cut), float.fromhex(in_cut)), case
    assert (result.counts["guesses"], result.counts["correct"]) == (guesses, correct), case


def test_every_pinned_grid_case_gives_the_recorded_rule_and_bound():
    for *case, eps_lb, out_cut, in_cut, guesses, correct in _PINNED["grid_cases"]:
        _assert_recorded(_result(*case), case, eps_lb, out_cut, in_cut, guesses, correct)


def test_every_pinned_explicit_and_hull_case_gives_the_recorded_rule_and_bound():
    for *case, eps_lb, out_cut, in_cut, guesses, correct in _PINNED["explicit_and_hull_cases"]:
        _assert_recorded(_other_rules_result(*case), case, eps_lb, out_cut, in_cut, guesses, correct)


@examples(1)
@given(m=st.integers(2, 300_000), data=st.data(), significance=st.sampled_from([0.05, 0.005, 1e-6]))
def test_pure_bound_of_the_best_rule_is_the_largest_of_all_rules(m, data, significance):
    # At δ = 0 _best lowers only the rules whose root reaches the top root's bound; the reference lowers every
    # rule and takes the first largest.
    r = np.array(data.draw(st.lists(st.integers(1, m), min_size=1, max_size=12)), dtype=np.int64)
    v = np.array([data.draw(st.integers(0, guesses)) for guesses in r.tolist()], dtype=np.int64)
    every = _vectorised_lowered(significance, r, v, one_run._live_roots(significance, r, v))
    assert one_run._best(significance, 0.0, r, v, m) == (int(np.argmax(every)), float(every.max()))


def _reference_best(significance, delta, r, v, m):
    """_best at δ > 0 as commit 1d46e14 ran it: every rule's δ = 0 bound and proxy first, then the loop."""
    roots = one_run._live_roots(significance, r, v)
    pure = _vectorised_lowered(significance, r, v, roots)
    target = _target(significance)
    best, best_epsilon = int(np.argmax(pure)), -1.0
    proxies = _vectorised_proxies(significance, delta, r, v, m, roots)
    for index in np.argsort(-proxies, kind="stable"):
        if proxies[index] <= best_epsilon:
            break
        if pure[index] <= best_epsilon:
            continue
        counts = (int(r[index]), int(v[index]), m)
        rejected = None
        if best_epsilon >= 0.0:
            at_best = one_run._p_value(best_epsilon, delta, *counts)
            if at_best >= target:
                continue
            rejected = (best_epsilon, at_best)
        epsilon = one_run._epsilon_for_counts(significance, delta, *counts, float(roots[index]),
                                              float(proxies[index]), rejected=rejected)
        if epsilon > best_epsilon:
            best, best_epsilon = int(index), epsilon
    return best, best_epsilon


@examples(1)
@given(m=st.integers(2, 100_000), data=st.data(), significance=st.sampled_from([0.05, 0.005, 1e-6]),
       delta=st.sampled_from([1e-8, 1e-5, 1e-3]))
def test_best_rule_at_positive_delta_is_the_reference_loops(m, data, significance, delta):
    # _best bisects each rule's proxy only as far as the order needs it and lowers a δ = 0 root only when the loop
    # reaches that rule; the reference computes everything first. Rules with nearly equal counts make close
    # proxies, ties and skipped rules.
    r = np.array(data.draw(st.lists(st.integers(1, m), min_size=1, max_size=12)), dtype=np.int64)
    v = np.array([data.draw(st.integers(max(0, guesses // 2), guesses)) for guesses in r.tolist()], dtype=np.int64)
    assert one_run._best(significance, delta, r, v, m) == _reference_best(significance, delta, r, v, m)
