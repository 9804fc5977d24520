"""Verdicts of ``dpmech audit scores`` (issue 31): words a reader cannot misread, the test's power, GDP, orientation.

The new user's case: members N(1, 1) against non-members N(0, 1), 5,000 each, claim (ε, δ) = (2, 1e-5).
The true ε of that pair at δ = 1e-5 is 4.377 (the Gaussian mechanism with μ = 1), yet the Clopper–Pearson
bound stays below 2: a power limit of the test at n = 5,000, not a bug in the threshold choice
(:func:`test_the_new_users_case_is_a_power_limit`).
"""

import json
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpmech
from audits import AuditScores, epsilon_from_gdp, epsilon_lower_bound
from audits.power import detection_counts, detection_probability, largest_certifiable_epsilon, power_bound
from audits.report import audit_scores_report, gdp_roc, privacy_region_boundary
from audits.thresholds import _directed, level_candidates, sorted_sides
from dpmech.verify import clopper_pearson_lower, clopper_pearson_upper

from tests.profiles import examples


def _gaussian_scores(shift, size, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(shift, 1.0, size), rng.normal(0.0, 1.0, size)


@pytest.fixture(scope="module")
def issue_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("issue31")
    in_scores, out_scores = _gaussian_scores(1.0, 5000, 0)
    paths = {"in": folder / "in.npy", "out": folder / "out.npy"}
    np.save(paths["in"], in_scores)
    np.save(paths["out"], out_scores)
    return {name: str(path) for name, path in paths.items()}


# --- the power of the Clopper–Pearson test (audits.power) -----------------------------------------------------


@examples(0.6)
@given(
    num_in=st.integers(1, 300),
    num_out=st.integers(1, 300),
    shift=st.floats(-3.0, 5.0),
    epsilon=st.floats(0.05, 4.0),
    delta=st.sampled_from([0.0, 1e-5, 0.01]),
    directions=st.sampled_from([1, 2]),
    rounding=st.sampled_from([None, 1]),
    seed=st.integers(0, 2**32 - 1),
)
def test_detection_counts_are_the_estimators_decision(num_in, num_out, shift, epsilon, delta, directions, rounding,
                                                      seed):
    # ε_lb > ε exactly when some tested rule has FN <= h_k (ties included: rounding to 1 digit makes many).
    rng = np.random.default_rng(seed)
    in_scores, out_scores = rng.normal(shift, 1.0, num_in), rng.normal(0.0, 1.0, num_out)
    if rounding is not None:
        in_scores, out_scores = np.round(in_scores, rounding), np.round(out_scores, rounding)
    scores = AuditScores(in_scores, out_scores, trials="independent")
    detected = epsilon_lower_bound(scores, delta=delta, two_sided=directions == 2).eps_lb > epsilon
    levels, limits = detection_counts(num_in, num_out, epsilon=epsilon, delta=delta, directions=directions)
    sides = sorted_sides(scores)
    false_negatives = [level_candidates(*_directed(sides, sign), levels)[2] for sign in (1, -1)[:directions]]
    assert detected == any(bool(np.any(fn <= limits)) for fn in false_negatives)


@pytest.mark.parametrize("epsilon, directions", [(1.75, 2), (2.0, 1)])
def test_detection_probability_brackets_the_observed_frequency(epsilon, directions):
    # μ = 1.5 Gaussian scores, 400 per side, δ = 1e-5: 3,000 repetitions of the test's decision (the FN counts
    # against h_k, which is the estimator's decision by the test above); the frequency's 1 − 2e-6 Clopper–Pearson
    # interval must meet the bracket [max_k P_k, Σ_k P_k] (bracket at these settings: [0.078, 0.67], [0.031, 0.16]).
    low, high = detection_probability(lambda fpr: gdp_roc(fpr, 1.5), 400, 400, epsilon=epsilon, delta=1e-5,
                                      directions=directions)
    levels, limits = detection_counts(400, 400, epsilon=epsilon, delta=1e-5, directions=directions)
    rng = np.random.default_rng([31, directions])
    hits = 0
    for _ in range(3000):
        sides = sorted_sides(AuditScores(rng.normal(1.5, 1.0, 400), rng.normal(0.0, 1.0, 400)))
        hits += any(np.any(level_candidates(*_directed(sides, sign), levels)[2] <= limits)
                    for sign in (1, -1)[:directions])
    assert 0.0 < low < high < 1.0
    assert clopper_pearson_lower(hits, 3000, 1e-6) <= high and clopper_pearson_upper(hits, 3000, 1e-6) >= low


def test_the_new_users_case_is_a_power_limit():
    # N(1, 1) against N(0, 1) has ε = 4.377 at δ = 1e-5, but the Clopper–Pearson test at 5,000 per side detects
    # ε > 2 with probability at most 0.33 (one orientation) or 0.19 (both): a power limit. At 50,000 per side
    # it detects it with probability at least 0.99.
    assert dpmech.gaussian_epsilon(1e-5, sigma=1.0, sensitivity=1.0) == pytest.approx(4.3772, abs=1e-4)
    for directions, most in ((1, 0.33), (2, 0.19)):
        low, high = detection_probability(lambda fpr: gdp_roc(fpr, 1.0), 5000, 5000, epsilon=2.0, delta=1e-5,
                                          directions=directions)
        assert 0.0 < low < high <= most
    assert detection_probability(lambda fpr: gdp_roc(fpr, 1.0), 50_000, 50_000, epsilon=2.0, delta=1e-5)[0] > 0.99


def test_power_bound_is_above_the_most_detectable_mechanism_and_grows_with_epsilon():
    bounds = [power_bound(true, 300, 300, epsilon=1.0, delta=1e-5) for true in (1.2, 1.6, 2.0, 3.0)]
    assert np.all(np.diff(bounds) >= 0.0) and bounds[0] < 0.5 and bounds[-1] == 1.0
    boundary = detection_probability(lambda fpr: privacy_region_boundary(fpr, 1.6, 1e-5), 300, 300, epsilon=1.0,
                                     delta=1e-5)
    assert boundary[0] <= boundary[1] <= bounds[1]


@pytest.mark.parametrize("directions", [1, 2])
def test_largest_certifiable_epsilon_is_the_bound_of_separated_scores(directions):
    scores = AuditScores(np.arange(700.0) + 1000.0, np.arange(500.0), trials="independent")
    expected = epsilon_lower_bound(scores, delta=1e-5, two_sided=directions == 2).eps_lb
    assert largest_certifiable_epsilon(700, 500, delta=1e-5, directions=directions) == expected


def test_power_arguments_are_checked():
    with pytest.raises(ValueError, match="directions"):
        detection_counts(10, 10, epsilon=1.0, delta=0.0, directions=3)
    with pytest.raises(ValueError, match="true_epsilon"):
        power_bound(0.0, 10, 10, epsilon=1.0, delta=0.0)
    with pytest.raises(ValueError, match="power_margin"):
        audit_scores_report([1.0, 2.0], [0.0, 1.0], epsilon=1.0, delta=0.0, power_margin=0.0)


# --- verdict words in text, JSON and audit.md ------------------------------------------------------------------


def test_the_new_users_case_reads_not_detected_with_the_tests_power(dpmech_main, issue_files, tmp_path):
    arguments = ("audit", "scores", issue_files["in"], issue_files["out"], "--epsilon", "2", "--delta", "1e-5")
    status, text, _ = dpmech_main(*arguments, "--out", str(tmp_path / "r"))
    assert status == 0 and "False" not in text and "violation" not in text.split("verdict:")[0]
    verdict = next(line for line in text.splitlines() if line.startswith("verdict: "))
    assert verdict.startswith("verdict: not detected at this sample size: eps_lb = ")
    assert "does not show the claim holds" in verdict and "Power of this test (5000 IN and 5000 OUT" in verdict
    assert "(estimate: natural member/non-member scores give no coverage guarantee)" in text
    assert "note: The observed ROC lies above the claimed (ε, δ) boundary" in text
    status, out, _ = dpmech_main(*arguments, "--json")
    record = json.loads(out)
    assert record["verdict"] == "not_detected" and "violation" not in record and record["eps_lb"] <= 2.0
    power = record["power"]
    assert power["alternative_epsilon"] == 2.5 and power["margin"] == 0.5
    assert 0.0 <= power["gaussian_detection_probability"][0] <= power["gaussian_detection_probability"][1] < 0.01
    assert power["most_detectable_probability"][0] > 0.99 and power["largest_certifiable_epsilon"] > 6.0
    assert any("point" not in note or "estimates" in note for note in record["notes"])
    markdown = (tmp_path / "r" / "audit.md").read_text(encoding="utf-8")
    stored = json.loads((tmp_path / "r" / "audit.json").read_text(encoding="utf-8"))
    assert "## Verdict\n\nnot detected at this sample size" in markdown and "Power of this test" in markdown
    assert "The observed ROC lies above the claimed" in markdown and stored["verdict"] == "not_detected"


def test_a_detected_violation_states_confidence_and_trial_model(tmp_path):
    in_scores, out_scores = _gaussian_scores(4.0, 2000, 7)
    certified = audit_scores_report(in_scores, out_scores, epsilon=1.0, delta=1e-5, trials="independent",
                                    out=tmp_path / "c")
    assert certified.verdict == "detected" and certified.power is None
    assert certified.verdict_text.startswith("violation detected: eps_lb = ")
    assert "Certified" in certified.verdict_text and "probability at most 0.05 (independent trials" in \
        certified.verdict_text
    natural = audit_scores_report(in_scores, out_scores, epsilon=1.0, delta=1e-5)
    assert natural.verdict == "indicated by estimate (natural member/non-member scores)"
    assert natural.as_dict()["verdict"] == natural.verdict and natural.valid_as == "estimate"
    assert natural.verdict_text.startswith("violation detected, as an estimate")
    assert "not certified" in natural.verdict_text
    markdown = (tmp_path / "c" / "audit.md").read_text(encoding="utf-8")
    assert "## Verdict\n\nviolation detected: eps_lb" in markdown
    assert "| eps_lb | " in markdown and "(certified lower bound, 0.95 confidence, independent trials) |" in markdown
    no_claim = audit_scores_report(in_scores, out_scores)
    assert no_claim.verdict is None and no_claim.as_dict()["verdict"] is None


def test_the_power_sentence_bounds_every_mechanism_and_names_an_unreachable_claim():
    in_scores, out_scores = _gaussian_scores(0.5, 300, 3)
    weak = audit_scores_report(in_scores, out_scores, epsilon=3.5, delta=1e-5)
    bound = weak.power["detection_probability_at_most"]
    assert weak.verdict == "not_detected" and 0.0 < bound < 1.0
    assert "the most detectable one is detected with probability at least" in weak.verdict_text
    assert "and none with probability above" in weak.verdict_text
    ceiling = weak.power["largest_certifiable_epsilon"]
    unreachable = audit_scores_report(in_scores, out_scores, epsilon=ceiling, delta=1e-5)
    assert unreachable.power["detection_probability_at_most"] < 1e-8
    assert "no data of these sizes can refute it" in unreachable.verdict_text


# --- the GDP-shape estimate ------------------------------------------------------------------------------------


def test_gdp_estimate_is_labelled_and_never_certified(dpmech_main, issue_files, tmp_path):
    arguments = ("audit", "scores", issue_files["in"], issue_files["out"], "--epsilon", "2", "--delta", "1e-5",
                 "--estimator", "gdp", "--trials", "independent")
    status, out, _ = dpmech_main(*arguments, "--json")
    record = json.loads(out)
    scores = AuditScores(np.load(issue_files["in"]), np.load(issue_files["out"]), trials="independent")
    expected = epsilon_from_gdp(scores, delta=1e-5, two_sided=False)
    assert status == 0 and record["eps_lb"] == expected.eps_lb and record["mu_lb"] == expected.mu_lb
    assert record["eps_lb_label"] == "estimate, assumes the GDP shape" and record["valid_as"] == "estimate"
    # The estimate has its own verdict value, never the certified "detected" (issue 31).
    assert record["verdict"] == "indicated by estimate (assumes GDP shape)" and record["valid_as"] == "estimate"
    assert record["verdict_text"].startswith("violation indicated by an estimate")
    status, text, _ = dpmech_main(*arguments, "--out", str(tmp_path / "g"))
    row = next(line for line in text.splitlines() if "eps_lb" in line)
    assert "(estimate, assumes the GDP shape)" in row and re.search(r"(?<!not )certified", text) is None
    markdown = (tmp_path / "g" / "audit.md").read_text(encoding="utf-8")
    assert "(estimate, assumes the GDP shape) |" in markdown and "| valid_as | estimate |" in markdown
    assert "indicated by estimate (assumes GDP shape)" in text and "detected" not in text.replace("not detected", "")
    stored = json.loads((tmp_path / "g" / "audit.json").read_text(encoding="utf-8"))
    assert stored["verdict"] == "indicated by estimate (assumes GDP shape)"
    status, _, err = dpmech_main("audit", "scores", issue_files["in"], issue_files["out"], "--estimator", "gdp")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "delta > 0" in err
    above = audit_scores_report(scores.in_scores, scores.out_scores, epsilon=6.0, delta=1e-5, estimator="gdp")
    assert above.verdict == "not_detected" and above.power is None and "No power is stated" in above.verdict_text


@examples(0.3)
@given(
    shift=st.floats(-1.0, 6.0),
    size=st.integers(20, 400),
    epsilon=st.floats(0.05, 3.0),
    trials=st.sampled_from(["natural", "independent"]),
    estimator=st.sampled_from(["clopper-pearson", "gdp"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_detected_is_said_only_of_a_certified_bound(shift, size, epsilon, trials, estimator, seed):
    # Every claim with ε_lb above it gets a verdict naming what was shown: "detected" exactly when certified.
    in_scores, out_scores = _gaussian_scores(shift, size, seed)
    audit = audit_scores_report(in_scores, out_scores, epsilon=epsilon, delta=1e-5, trials=trials,
                                estimator=estimator)
    expected = {
        False: "not_detected",
        True: "indicated by estimate (assumes GDP shape)" if estimator == "gdp" else (
            "detected" if trials == "independent" else "indicated by estimate (natural member/non-member scores)"),
    }[audit.eps_lb > epsilon]
    assert audit.verdict == expected and audit.as_dict()["verdict"] == expected
    assert (audit.verdict == "detected") == (audit.eps_lb > epsilon and audit.valid_as == "certified")


# --- orientation and AUC below 0.5 -----------------------------------------------------------------------------


@pytest.mark.slow  # 5.77 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_a_flipped_orientation_is_explained_and_lower_is_in_changes_the_bound(dpmech_main, issue_files, tmp_path):
    in_scores, out_scores = np.load(issue_files["in"]), np.load(issue_files["out"])
    base = ("audit", "scores", issue_files["in"], issue_files["out"], "--epsilon", "2", "--delta", "1e-5")
    status, out, _ = dpmech_main(*base, "--lower-is-in", "--json")
    flipped = json.loads(out)
    assert status == 0 and flipped["auc"] < 0.5 and flipped["directions"] == "lower is IN"
    assert "AUC 0.24" in flipped["notes"][0] and "orientation is most likely flipped" in flipped["notes"][0]
    right = json.loads(dpmech_main(*base, "--json")[1])
    assert right["eps_lb"] > 1.0 and flipped["eps_lb"] < right["eps_lb"]
    lower = epsilon_lower_bound(AuditScores(in_scores, out_scores, higher_is_in=False), delta=1e-5).eps_lb
    assert flipped["eps_lb"] == lower
    both = [json.loads(dpmech_main(*base, *flag, "--both-directions", "--json")[1]) for flag in ((), ("--lower-is-in",))]
    assert both[0]["eps_lb"] == both[1]["eps_lb"] and both[0]["notes"] == [n for n in both[0]["notes"] if "AUC" not in n]
    status, text, _ = dpmech_main(*base, "--lower-is-in", "--out", str(tmp_path / "f"))
    assert "note: AUC 0.24" in text and "no --lower-is-in" in text
    assert "AUC 0.24" in (tmp_path / "f" / "audit.md").read_text(encoding="utf-8")


# --- file formats ----------------------------------------------------------------------------------------------


@pytest.fixture
def bad_files(tmp_path):
    files = {"text": tmp_path / "scores.txt", "npz": tmp_path / "scores.npz", "objects": tmp_path / "objects.npy",
             "matrix": tmp_path / "matrix.npy", "empty": tmp_path / "empty.npy", "nan": tmp_path / "nan.npy",
             "strings": tmp_path / "strings.npy", "truncated": tmp_path / "truncated.npy"}
    files["text"].write_text("0.1 0.2 0.3\n")
    np.savez(files["npz"], scores=np.zeros(3))
    np.save(files["objects"], np.array([1.0, "a"], dtype=object), allow_pickle=True)
    np.save(files["matrix"], np.zeros((3, 3)))
    np.save(files["empty"], np.zeros(0))
    np.save(files["nan"], np.array([0.0, np.nan]))
    np.save(files["strings"], np.array(["a", "b"]))
    np.save(files["truncated"], np.zeros(100))
    files["truncated"].write_bytes(files["truncated"].read_bytes()[:90])
    files["missing"] = tmp_path / "missing.npy"
    return {name: str(path) for name, path in files.items()}


@pytest.mark.parametrize("name, reason", [("text", "is not a .npy file"), ("npz", "is an .npz archive"),
                                          ("objects", "holds Python objects"), ("matrix", "shape (3, 3)"),
                                          ("empty", "shape (0,)"), ("nan", "non-finite"), ("strings", "dtype <U1"),
                                          ("truncated", "is damaged"), ("missing", "cannot be read")])
@pytest.mark.parametrize("side", ["IN.npy", "OUT.npy"])
def test_a_bad_scores_file_is_named_with_the_expected_format(dpmech_main, issue_files, bad_files, name, reason, side):
    paths = [bad_files[name], issue_files["out"]] if side == "IN.npy" else [issue_files["in"], bad_files[name]]
    status, out, err = dpmech_main("audit", "scores", *paths)
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert f"{side} ({bad_files[name]!r})" in lines[0] and reason in lines[0]
    assert "expected a .npy file (numpy.save) of one 1-D array of finite real numbers" in lines[0]
    assert "allow_pickle" not in err and "Traceback" not in err
