"""NFDP (FedMD-NFDP, seed 001): closed forms in 50-digit arithmetic, Lemma 1, and the guarantees by enumeration."""

import itertools
import math
from collections import Counter

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpmech

mpmath.mp.dps = 50

# Every guarantee computed here is vacuous by design; test_every_guarantee_warns_that_it_is_vacuous checks the warning.
pytestmark = pytest.mark.filterwarnings("ignore::dpmech.VacuousGuaranteeWarning")


def exact(n, k, replacement):
    n, k = mpmath.mpf(n), mpmath.mpf(k)
    if replacement:
        return k * mpmath.log((n + 1) / n), 1 - ((n - 1) / n) ** k
    return mpmath.log((n + 1) / (n + 1 - k)), k / n


@st.composite
def sizes(draw, replacement=None):
    n = draw(st.integers(1, 10**7))
    if replacement is None:
        replacement = draw(st.booleans())
    k = draw(st.integers(1, 3 * n if replacement else n))
    return n, k, replacement


@given(sizes())
def test_closed_forms_in_50_digits_are_never_understated(setting):
    n, k, replacement = setting
    guarantee = dpmech.mechanisms.nfdp_guarantee(n, k, replacement)
    epsilon, delta = exact(n, k, replacement)
    assert epsilon <= guarantee.epsilon <= epsilon * (1 + 1e-14)
    assert delta <= guarantee.delta <= min(1, delta * (1 + 1e-14))
    assert (guarantee.n, guarantee.k, guarantee.replacement) == (n, k, replacement)


@given(sizes())
def test_delta_is_never_below_one_over_n_and_the_warning_is_always_there(setting):
    n, k, replacement = setting
    guarantee = dpmech.mechanisms.nfdp_guarantee(n, k, replacement)
    assert exact(n, k, replacement)[1] >= (1 - mpmath.mpf(10) ** -40) / n  # equality at k = 1
    assert guarantee.delta >= 1.0 / n
    assert "in the clear" in guarantee.warning and "1/n" in guarantee.warning


@given(sizes(replacement=False))
def test_lemma_1_with_replacement_is_at_least_as_private_for_k_at_most_n(setting):
    n, k, _ = setting
    epsilon_with, delta_with = exact(n, k, True)
    epsilon_without, delta_without = exact(n, k, False)
    assert epsilon_with <= epsilon_without * (1 + mpmath.mpf(10) ** -40)
    assert delta_with <= delta_without * (1 + mpmath.mpf(10) ** -40)
    if k == 1:  # equal at k = 1: "consistently more private" holds only weakly there
        assert mpmath.almosteq(epsilon_with, epsilon_without, 1e-40)
        assert mpmath.almosteq(delta_with, delta_without, 1e-40)
    else:
        assert epsilon_with < epsilon_without and delta_with < delta_without


def test_seed_table_epsilon_is_a_base_10_logarithm():
    # Seed 001, Table 2: FEDMNIST k = n = 2880 lists (0.4342, 0.6321); CIFAR-10 k = n = 300 lists (0.4336, 0.6327).
    # δ matches Theorem 2 (truncated to 4 digits); ε matches only log10: it is understated by a factor ln 10.
    for n, table_epsilon, table_delta in ((2880, 0.4342, 0.6321), (300, 0.4336, 0.6327)):
        guarantee = dpmech.mechanisms.nfdp_guarantee(n, n, replacement=True)
        assert guarantee.delta == pytest.approx(table_delta, abs=1e-4)
        assert guarantee.epsilon / math.log(10) == pytest.approx(table_epsilon, abs=1e-4)
        assert guarantee.epsilon > 2.3 * table_epsilon


def output_distribution(records, k, replacement):
    """Law of the released sample (the worst downstream learner publishes it), as a Counter over outputs."""
    if replacement:
        outcomes = list(itertools.product(records, repeat=k))
    else:
        outcomes = [frozenset(c) for c in itertools.combinations(records, k)]
    return {outcome: 1.0 / len(outcomes) for outcome in outcomes}


def hockey_stick(first, second, epsilon):
    return sum(max(0.0, p - math.exp(epsilon) * second.get(o, 0.0)) for o, p in first.items())


def neighbour_pairs(n):
    dataset = list(range(n))
    yield "add", dataset, dataset + [n]
    if n >= 2:
        yield "remove", dataset, dataset[1:]
    yield "replace", dataset, [n] + dataset[1:]


@pytest.mark.parametrize("replacement", [False, True])
def test_stated_guarantee_holds_by_enumeration_under_every_relation(replacement):
    for n in range(1, 6):
        for k in range(1, n + 1):
            guarantee = dpmech.mechanisms.nfdp_guarantee(n, k, replacement)
            for relation, dataset, neighbour in neighbour_pairs(n):
                if not replacement and len(neighbour) < k:
                    continue
                first = output_distribution(dataset, k, replacement)
                second = output_distribution(neighbour, k, replacement)
                worst = max(hockey_stick(first, second, guarantee.epsilon), hockey_stick(second, first, guarantee.epsilon))
                assert worst <= guarantee.delta + 1e-12, (relation, n, k)
                # The documented tight values: (0, total variation), with TV = P[differing record drawn].
                total_variation = hockey_stick(first, second, 0.0)
                size = max(len(dataset), len(neighbour))
                drawn = (k / size) if not replacement else 1 - ((size - 1) / size) ** k
                assert total_variation == pytest.approx(drawn, rel=1e-12, abs=1e-15), (relation, n, k)


def test_event_is_add_remove_approximate_dp_or_no_guarantee_at_delta_one():
    event = dpmech.mechanisms.nfdp_guarantee(1000, 500, False).event
    assert isinstance(event, dpmech.ApproximateDpEvent)
    assert event.neighbouring == dpmech.ADD_REMOVE_ONE
    assert event.epsilon == pytest.approx(math.log(1001 / 501), rel=1e-14) and event.delta == pytest.approx(0.5)
    assert "in the clear" in event.description
    assert isinstance(dpmech.mechanisms.nfdp_guarantee(10, 10, False).event, dpmech.NoGuaranteeEvent)
    assert isinstance(dpmech.mechanisms.nfdp_guarantee(1, 3, True).event, dpmech.NoGuaranteeEvent)


@pytest.mark.parametrize("replacement", [False, True])
def test_subsample_is_uniform(replacement):
    # N = 20,000 subsamples of k = 3 of n = 7; index counts against uniform, chi-square at α = 1e-4.
    rng = np.random.default_rng(5)
    draws = np.stack([dpmech.mechanisms.nfdp_subsample(7, 3, replacement, rng) for _ in range(20_000)])
    assert draws.dtype == np.int64 and draws.min() >= 0 and draws.max() < 7
    if not replacement:
        assert all(len(set(row)) == 3 for row in draws)
        subsets = Counter(tuple(sorted(row)) for row in draws)
        assert len(subsets) == math.comb(7, 3)
        assert stats.chisquare(list(subsets.values())).pvalue > 1e-4
    assert stats.chisquare(np.bincount(draws.ravel(), minlength=7)).pvalue > 1e-4
    np.testing.assert_array_equal(
        dpmech.mechanisms.nfdp_subsample(50, 10, replacement, 3), dpmech.mechanisms.nfdp_subsample(50, 10, replacement, np.random.default_rng(3))
    )


BAD_INPUTS = [
    ("n", lambda: dpmech.mechanisms.nfdp_guarantee(0, 1, False)),
    ("n", lambda: dpmech.mechanisms.nfdp_guarantee(2.5, 1, True)),
    ("k", lambda: dpmech.mechanisms.nfdp_guarantee(10, 0, True)),
    ("k", lambda: dpmech.mechanisms.nfdp_guarantee(10, 11, False)),
    ("k", lambda: dpmech.mechanisms.nfdp_subsample(10, 11, False, 0)),
    ("replacement", lambda: dpmech.mechanisms.nfdp_guarantee(10, 2, "yes")),
    ("replacement", lambda: dpmech.mechanisms.nfdp_guarantee(10, 2, 1)),
    ("rng", lambda: dpmech.mechanisms.nfdp_subsample(10, 2, True, None)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


@pytest.mark.filterwarnings("default")
@given(sizes())
def test_every_guarantee_warns_that_it_is_vacuous(setting):
    # The caveat must reach users who never read the ``warning`` field: a PrivacyWarning filter
    # (``-W error::dpmech.PrivacyWarning``) has to stop every NFDP guarantee, δ = 1 included.
    n, k, replacement = setting
    with pytest.warns(dpmech.VacuousGuaranteeWarning, match="delta >= 1/n") as caught:
        guarantee = dpmech.mechanisms.nfdp_guarantee(n, k, replacement)
    assert guarantee.delta >= 1.0 / n
    assert all(record.filename == __file__ for record in caught if issubclass(record.category, dpmech.PrivacyWarning))
