"""NFDP (seed 001, Thms 1 and 2) against the exact law of the released sample, every subset / draw sequence enumerated.

Independent of tests/dpmech/test_nfdp.py: the profile here comes from dpmech.verify's exact checker.
Findings confirmed: the stated (ε, δ) hold under add/remove-one and replace-one, in both directions; the
mechanism is already (0, P[differing record drawn])-DP, so the stated ε buys nothing; under replace-one the
stated δ is exactly the δ at every ε (tight), under add/remove it is loose; δ >= 1/n always.
"""

import math

import pytest

import dpmech
from dpmech.verify import assert_dp, hockey_stick_divergence, privacy_profile, smallest_epsilon
from dpmech.verify.suite import nfdp_neighbours, nfdp_tight_delta, subsample_distribution

# Every guarantee computed here is vacuous by design; test_every_guarantee_warns_that_it_is_vacuous checks the warning.
pytestmark = pytest.mark.filterwarnings("ignore::dpmech.VacuousGuaranteeWarning")


def cases(largest):
    for replacement in (False, True):
        for n in range(1, largest + 1):
            for k in range(1, n + 2 if replacement else n + 1):
                for relation, dataset, neighbour in nfdp_neighbours(n):
                    if replacement or len(neighbour) >= k:
                        yield replacement, n, k, relation, dataset, neighbour


@pytest.mark.parametrize("replacement", [False, True])
def test_stated_guarantee_holds_and_is_carried_by_delta_alone(replacement):
    for flag, n, k, relation, dataset, neighbour in cases(5):
        if flag != replacement:
            continue
        claim = dpmech.mechanisms.nfdp_guarantee(n, k, replacement)
        mechanism = lambda records, k=k: subsample_distribution(records, k, replacement)  # noqa: E731
        pair = (dataset, neighbour)
        assert_dp(mechanism, pair, claim.epsilon, claim.delta, rtol=0.0)
        tight = privacy_profile(mechanism, pair, 0.0, rtol=0.0)
        assert tight == pytest.approx(nfdp_tight_delta(n, k, replacement, relation), rel=1e-12), (n, k, relation)
        assert smallest_epsilon(mechanism, pair, tight) <= 1e-12  # (0, TV)-DP: the stated ε is not needed
        assert claim.delta >= 1.0 / n
        at_claim = privacy_profile(mechanism, pair, claim.epsilon, rtol=0.0)
        if relation == "replace":
            # Outputs holding the replaced record have probability 0 on the other side: no ε lowers δ below TV.
            assert at_claim == pytest.approx(claim.delta, rel=1e-12), (n, k)


def test_add_direction_matches_the_closed_form_that_gives_theorem_1s_epsilon():
    # D -> D ∪ {z} without replacement: δ(ε) = max(0, 1 − e^ε (n+1−k)/(n+1)), zero exactly at ln((n+1)/(n+1−k)).
    for n in range(2, 7):
        for k in range(1, n + 1):
            dataset = tuple(range(n))
            first, second = subsample_distribution(dataset, k, False), subsample_distribution(dataset + (n,), k, False)
            for epsilon in (0.0, 0.1, 0.5):
                expected = max(0.0, 1.0 - math.exp(epsilon) * (n + 1 - k) / (n + 1))
                assert hockey_stick_divergence(first, second, epsilon, rtol=0.0).divergence == pytest.approx(expected, abs=1e-14)
            theorem_epsilon = dpmech.mechanisms.nfdp_guarantee(n, k, False).epsilon
            assert hockey_stick_divergence(first, second, theorem_epsilon, rtol=0.0).divergence <= 1e-15
