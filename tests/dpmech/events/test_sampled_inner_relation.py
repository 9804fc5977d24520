"""A sampled event takes its inner event under the sampling's own relation, for every method (the basic one too).

An amplification theorem reads the inner pair under the relation it is proven for: Poisson sampling under
add/remove-one (Zhu, Dong & Wang 2022, Thm. 11), sampling without replacement under replace-one (Balle, Barthe
& Gaboardi 2018, Thm. 10). A cost stated under the other relation does not give it: a sum of values in [−1, 1]
with Laplace(1) noise is 1-DP under add/remove-one and 2-DP under replace-one, so 10 of 100 without replacement
is log(1 + 0.1(e² − 1)) = 0.4949-DP, and the basic method gave 0.1586 from the add/remove-one ε before the check.
"""

import dataclasses
import math

import pytest

from dpmech import (GaussianEvent, LaplaceEvent, PoissonSampledEvent, PrivacyLedger, PureEpsilonEvent,
                    SampledWithoutReplacementEvent, SelfComposedEvent, group_privacy)
from dpmech.events.relations import ADD_REMOVE_ONE, REPLACE_ONE

INNER = [
    lambda relation: GaussianEvent(1.0, 1.0, relation),
    lambda relation: LaplaceEvent(1.0, neighbouring=relation),
    lambda relation: PureEpsilonEvent(1.0, neighbouring=relation),
    lambda relation: SelfComposedEvent(GaussianEvent(2.0, neighbouring=relation), 3),
]


@pytest.mark.parametrize("inner", INNER)
def test_poisson_sampling_refuses_an_inner_event_stated_under_replace_one(inner):
    with pytest.raises(ValueError, match="^event: its relation must be add-remove-one, that of Poisson sampling"):
        PoissonSampledEvent(inner(REPLACE_ONE), 0.1)
    PoissonSampledEvent(inner(ADD_REMOVE_ONE), 0.1)


@pytest.mark.parametrize("inner", INNER)
def test_sampling_without_replacement_refuses_an_inner_event_stated_under_add_remove_one(inner):
    with pytest.raises(ValueError, match=r"that of sampling without replacement .*group_privacy\(event, 2\)"):
        SampledWithoutReplacementEvent(inner(ADD_REMOVE_ONE), 10, 100)
    SampledWithoutReplacementEvent(inner(REPLACE_ONE), 10, 100)


def test_an_add_remove_cost_restated_as_a_group_of_two_is_amplified_from_its_replace_one_cost():
    restated = dataclasses.replace(group_privacy(PureEpsilonEvent(1.0, neighbouring=ADD_REMOVE_ONE), 2),
                                   neighbouring=REPLACE_ONE)
    ledger = PrivacyLedger(REPLACE_ONE).record(SampledWithoutReplacementEvent(restated, 10, 100))
    amplified = math.log1p(0.1 * math.expm1(2.0))
    assert ledger.epsilon(1e-9, method="basic").epsilon == pytest.approx(amplified, rel=1e-6)
    assert ledger.epsilon(1e-9, method="basic").epsilon >= amplified
