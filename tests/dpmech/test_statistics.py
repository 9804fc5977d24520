"""dpmech.statistics: the Clopper–Pearson bounds (Clopper & Pearson 1934), their one home, checked against scipy's
exact interval, 50-digit mpmath down to level 1e-300, and bad input."""

import ast
import pathlib

import mpmath
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

import dpmech.statistics
from dpmech.statistics import clopper_pearson_lower, clopper_pearson_upper, log_beta_lower_tail
from tests.profiles import examples

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_clopper_pearson_matches_scipy_exact_interval():
    for successes, trials in ((0, 10), (3, 10), (10, 10), (517, 2000)):
        interval = stats.binomtest(successes, trials).proportion_ci(confidence_level=0.9, method="exact")
        # Ours are computed for the tail α·(1 − 1e-4): a little wider, toward the safe side.
        lower, upper = clopper_pearson_lower(successes, trials, 0.05), clopper_pearson_upper(successes, trials, 0.05)
        assert lower <= interval.low and lower == pytest.approx(interval.low, rel=1e-4, abs=1e-300)
        assert upper >= interval.high and upper == pytest.approx(interval.high, rel=1e-4)


@st.composite
def binomial_bounds_cases(draw):
    trials = draw(st.integers(1, 1000))
    return draw(st.integers(0, trials)), trials, 10.0 ** draw(st.floats(-300.0, -0.5))


@given(binomial_bounds_cases())
@examples(0.3)
# Where scipy 1.17's beta CDF is off by 0.2 % and 16 % (the first bound was invalid, the second loose by > 0.1 %).
@example((180, 212, 1e-281))
@example((179, 214, 1e-281))
def test_clopper_pearson_is_valid_and_tight_at_50_digits_down_to_level_1e_300(case):
    # The lower bound L has P[Beta(k, n − k + 1) <= L] <= level (so P[bound > p] <= level) and is within 1e-3 of the
    # quantile (it is computed for the tail level·(1 − 1e-4), a margin for scipy's error); the upper bound U has P[Beta(k + 1, n − k) >= U] = P[Beta(n − k, k + 1) <= 1 − U] <= level. The
    # upper tail is written through 1 − U, exact in mpmath, since 1 − I_U cancels all 50 digits near U = 1.
    successes, trials, level = case
    lower, upper = clopper_pearson_lower(successes, trials, level), clopper_pearson_upper(successes, trials, level)
    assert 0.0 <= lower <= upper <= 1.0

    def upper_tail(bound):
        return mpmath.betainc(trials - successes, successes + 1, 0, 1 - mpmath.mpf(bound), regularized=True)

    with mpmath.workdps(50):
        if successes > 0:
            assert mpmath.betainc(successes, trials - successes + 1, 0, lower, regularized=True) <= level
            if lower > 1e-300:
                assert mpmath.betainc(successes, trials - successes + 1, 0, lower * (1 + 1e-3), regularized=True) > level
        if successes < trials:
            assert upper_tail(upper) <= level
            gap = 1 - mpmath.mpf(upper)
            if gap > 1e-12:  # below that the double nearest the bound is 1 − a few ulps
                assert upper_tail(upper - min(1e-3 * upper, 1e-3 * gap)) > level


@pytest.mark.parametrize(
    "call",
    [
        lambda: clopper_pearson_lower(11, 10, 0.05),
        lambda: clopper_pearson_upper(-1, 10, 0.05),
        lambda: clopper_pearson_lower(1.5, 10, 0.05),
        lambda: clopper_pearson_upper(1, 0, 0.05),
        lambda: clopper_pearson_lower(1, 10, 0.0),
        lambda: clopper_pearson_upper(1, 10, 1.0),
    ],
)
def test_clopper_pearson_refuses_bad_input(call):
    with pytest.raises(ValueError, match="successes|trials|level"):
        call()


@pytest.mark.parametrize("x, a, b", [(0.016957320307070072, 180, 33), (0.016087894466637380, 179, 36), (0.01, 1, 10), (0.3, 5, 3), (0.2, 50, 60), (1e-5, 3, 400)])
def test_log_beta_lower_tail_matches_50_digit_mpmath(x, a, b):
    with mpmath.workdps(50):
        exact = float(mpmath.log(mpmath.betainc(a, b, 0, x, regularized=True)))
    assert log_beta_lower_tail(x, a, b) == pytest.approx(exact, rel=1e-13, abs=1e-13)


def test_clopper_pearson_has_one_home():
    # The tester and the audits re-export the statistics module's functions, and no other module defines them.
    import audits
    import dpmech.verify

    for name in ("clopper_pearson_lower", "clopper_pearson_upper"):
        home = getattr(dpmech.statistics, name)
        assert getattr(dpmech.verify, name) is home and getattr(audits, name) is home
    definitions = [
        str(path.relative_to(ROOT))
        for package in ("dpmech", "audits", "trainers", "benchmarks")
        for path in (ROOT / package).rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef) and node.name.startswith(("clopper_pearson", "_beta_lower_quantile",
                                                                       "_beta_upper_quantile", "log_beta_lower_tail"))
    ]
    assert sorted(definitions) == ["dpmech/statistics.py"] * 5
