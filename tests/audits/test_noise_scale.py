import numpy as np
import pytest
from scipy import stats

from audits.noise_scale import check_noise_scale


def honest_releases(rng, centre, sigma, repetitions):
    return centre + rng.normal(0.0, sigma, size=(repetitions,) + centre.shape)


def test_an_honest_release_is_flagged_at_most_at_rate_alpha():
    rng = np.random.default_rng(0)
    centre = rng.normal(size=(2, 3))
    alpha, repetitions = 0.05, 2000
    flagged = sum(
        check_noise_scale(honest_releases(rng, centre, 0.7, 4), centre, 0.7, alpha=alpha).under_noised
        for _ in range(repetitions)
    )
    # The flag has probability exactly α for an honest release; allow the binomial's 1e-6 upper quantile.
    assert flagged <= stats.binom.isf(1e-6, repetitions, alpha)
    assert flagged > 0  # the bound is not vacuous either: it is exact, so it fires about α·R times


@pytest.mark.parametrize("factor, repetitions", [(0.5, 20), (0.9, 2000)])
def test_an_under_noised_release_is_caught(factor, repetitions):
    rng = np.random.default_rng(1)
    centre = rng.normal(size=50)
    result = check_noise_scale(honest_releases(rng, centre, factor * 2.0, repetitions), centre, 2.0, alpha=1e-6)
    assert result.under_noised
    assert result.lower <= factor * 2.0 <= result.upper


def test_more_noise_than_claimed_passes_and_the_interval_orders():
    rng = np.random.default_rng(2)
    centre = np.zeros(10)
    result = check_noise_scale(honest_releases(rng, centre, 3.0, 100), centre, 2.0)
    assert not result.under_noised
    assert result.lower < result.estimate < result.upper


@pytest.mark.parametrize(
    "releases, centre, sigma, alpha, name",
    [
        (np.zeros((3, 2)), np.zeros(3), 1.0, 0.05, "releases"),
        (np.full((3, 2), np.nan), np.zeros(2), 1.0, 0.05, "releases"),
        (np.zeros((3, 2)), np.zeros(2), 0.0, 0.05, "claimed_sigma"),
        (np.zeros((3, 2)), np.zeros(2), 1.0, 1.0, "alpha"),
        ("x", np.zeros(2), 1.0, 0.05, "releases"),
    ],
)
def test_bad_input_names_the_parameter(releases, centre, sigma, alpha, name):
    with pytest.raises(ValueError, match=name):
        check_noise_scale(releases, centre, sigma, alpha=alpha)
