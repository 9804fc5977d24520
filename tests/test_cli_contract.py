"""The command-line contract, for every command and numeric option: exit 2 with one line naming the option, or sound output.

Each draw replaces one option of a valid command line by a bad or extreme
value (NaN, ±inf, 0, negatives, subnormals, 1e308, huge integers, strings,
empty strings, unwritable paths). The command either exits with status 2 and
exactly one line on stderr that names the option, or exits 0 with output that
passes the command's own soundness property (σ and ε never below the exact
ones, δ never below the exact δ, in 50-digit arithmetic). Commands run
in-process through ``dpmech.cli.main.main``; training is stubbed out for
``run`` and ``audit PIPELINE``, which must refuse bad input before it.
"""

import contextlib
import decimal
import io
import json
import math
import re

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import high_precision as reference
from dpmech.cli import main as cli_main
from tests.profiles import examples

NUMBERS = ["nan", "-nan", "NaN", "inf", "-inf", "Infinity", "0", "-0", "0.0", "-1", "-1e-5", "-0.5", "5e-324",
           "1e-320", "2.2250738585072014e-308", "1e-300", "1e308", "1.7976931348623157e308", "1e309", "1" + "0" * 400,
           "-" + "1" * 30, "", " ", "abc", "1e3", "2.5", "0x10", "True", "1,5", "1_000", "9" * 20, "1e-5", "0.999",
           "1", "2", "1e6", "1e20"]
bad_numbers = st.one_of(st.sampled_from(NUMBERS), st.floats().map(repr), st.integers(-10**30, 10**30).map(str))
PATHS = ["", " ", "/proc/x", "/proc", "/sys/a/b", "{file}", "{file}/sub"]


class TrainingReached(Exception):
    """Raised by the stubs where training would start: the options were accepted."""


def _run(argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            status = cli_main.main(argv)
        except SystemExit as exit_:
            status = exit_.code
        except TrainingReached:
            status = "trained"
    return status, stdout.getvalue(), stderr.getvalue()


def _names_the_option(line, option):
    bare = option.lstrip("-")
    return option in line or bare in line or bare.replace("-", "_") in line


def _assert_refused_or(status, out, err, option):
    if status == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert _names_the_option(lines[0], option), (option, lines[0])
        assert "Traceback" not in err and out == ""
        return False
    assert status in (0, "trained"), (status, err)
    assert "Traceback" not in err
    return True


# Command lines that succeed, and their numeric options.
CALIBRATE = {"--epsilon": "1", "--delta": "1e-5", "--sensitivity": "1", "--compositions": "1"}
EPSILON = {"--sigma": "1", "--delta": "1e-5", "--sensitivity": "1", "--compositions": "1"}
DELTA = {"--sigma": "1", "--epsilon": "1", "--sensitivity": "1", "--compositions": "1"}


def _argv(command, options, option, value):
    argv = list(command)
    for name, default in options.items():
        argv += [name, value if name == option else default]
    return argv


def _record_or_refused(command, options, option, value):
    """The ``--json`` record of ``command`` with ``option`` set to ``value`` and the other options valid, or None
    where the command refused it as the contract says (exit 2, one line on stderr naming the option)."""
    status, out, err = _run(_argv(command, options, option, value) + ["--json"])
    return json.loads(out) if _assert_refused_or(status, out, err, option) else None


def _exact_log_delta(record):
    """50-digit log δ of the record's Gaussian noise (σ, Δ, compositions) at its ε."""
    return reference.log_delta_of_noise(record["epsilon"], record["sigma"], record["sensitivity"], record["compositions"])


def _log(value):
    return mpmath.log(mpmath.mpf(value))


@examples(0.5)
@given(st.sampled_from(sorted(CALIBRATE)), bad_numbers)
def test_calibrate(option, value):
    record = _record_or_refused(["calibrate"], CALIBRATE, option, value)
    if record is not None:
        assert isinstance(record["sigma"], float) and 0.0 < record["sigma"] < math.inf
        assert _exact_log_delta(record) <= _log(record["delta"])
        assert 0.0 < record["achieved_delta"] <= record["delta"]


@examples(0.5)
@given(st.sampled_from(sorted(EPSILON)), bad_numbers)
def test_epsilon(option, value):
    record = _record_or_refused(["epsilon"], EPSILON, option, value)
    if record is not None:
        assert isinstance(record["epsilon"], float) and 0.0 <= record["epsilon"] < math.inf
        assert _exact_log_delta(record) <= _log(record["delta"])


@examples(0.5)
@given(st.sampled_from(sorted(DELTA)), bad_numbers)
def test_delta(option, value):
    record = _record_or_refused(["delta"], DELTA, option, value)
    if record is not None:
        assert 0.0 < record["delta"] <= 1.0 and math.isfinite(record["log_delta"])
        exact = _exact_log_delta(record)
        assert _log(record["delta"]) >= exact and record["log_delta"] >= exact


DPSGD_EPSILON = {"--sampling-rate": "0.01", "--noise-multiplier": "1", "--steps": "10", "--delta": "1e-5"}
DPSGD_CALIBRATE = {"--sampling-rate": "0.01", "--epsilon": "1", "--steps": "10", "--delta": "1e-5"}


@examples(0.3)
@given(st.sampled_from(sorted(DPSGD_EPSILON)), bad_numbers)
def test_dpsgd_epsilon(option, value):
    record = _record_or_refused(["dpsgd", "epsilon"], DPSGD_EPSILON, option, value)
    if record is not None:
        lower, upper = (math.inf if end == "inf" else end for end in record["interval"])
        assert 0.0 <= lower <= upper and record["epsilon"] == record["interval"][1]
        # Subsampling never costs more than the Gaussian step itself: the lower end is at most the exact
        # ε of ``steps`` unsampled Gaussians, δ_G(lower) >= δ in 50-digit arithmetic (ε_G >= 0 bounds lower = 0).
        if 0.0 < lower < math.inf:
            exact = reference.log_delta_of_noise(lower, record["noise_multiplier"], 1.0, record["steps"])
            assert exact >= _log(record["delta"]) - mpmath.mpf("1e-9")


@examples(0.3)
@given(st.sampled_from(sorted(DPSGD_CALIBRATE)), bad_numbers)
def test_dpsgd_calibrate(option, value):
    record = _record_or_refused(["dpsgd", "calibrate"], DPSGD_CALIBRATE, option, value)
    if record is not None:
        assert isinstance(record["noise_multiplier"], float) and 0.0 < record["noise_multiplier"] < math.inf
        assert 0.0 < record["achieved_delta"] <= record["delta"]


def _table_value(out, key):
    match = re.search(rf"│ {key}\s+│\s+(\S+) │", out)
    assert match, out
    return match.group(1)


def _text_bounds_from_above(text, exact_log):
    """A printed δ (decimal, or exp(L) for logs beyond every decimal exponent) is >= e^exact_log."""
    if text.startswith("exp("):
        return mpmath.mpf(text[4:-1]) >= exact_log
    return mpmath.log(mpmath.mpf(text)) >= exact_log


@pytest.mark.parametrize(
    "argv",
    [["calibrate", "--epsilon", "1", "--delta", "1e-6"], ["calibrate", "--epsilon", "0.5", "--delta", "1e-300"],
     ["calibrate", "--epsilon", "1e308", "--delta", "1e-5"], ["calibrate", "--epsilon", "1e-300", "--delta", "1e-5"],
     ["calibrate", "--epsilon", "0.3", "--delta", "1e-5", "--method", "classic", "--compositions", "7"]],
)
def test_printed_sigma_and_delta_are_on_the_safe_side(argv):
    # On main the table printed σ rounded to nearest: 4.224678889 for (1, 1e-6), below the exact σ.
    status, out, _ = _run(argv)
    assert status == 0
    sigma_text = _table_value(out, "sigma")
    epsilon, delta = float(argv[2]), float(argv[4])
    compositions = int(argv[argv.index("--compositions") + 1]) if "--compositions" in argv else 1
    assert reference.log_delta_of_noise(epsilon, sigma_text, 1.0, compositions) <= _log(delta)
    status, out_json, _ = _run(argv + ["--json"])
    assert decimal.Decimal(sigma_text) >= decimal.Decimal(json.loads(out_json)["sigma"])
    achieved = _table_value(out, "achieved_delta")
    assert _text_bounds_from_above(achieved, reference.log_delta_of_noise(epsilon, sigma_text, 1.0, compositions))


@pytest.mark.parametrize("sigma,epsilon", [("1", "1"), ("3", "0.5"), ("1", "100"), ("1", "1e20"), ("0.01", "0"),
                                           ("1e-300", "1"), ("1e300", "0")])
def test_printed_delta_is_never_below_the_truth_nor_zero(sigma, epsilon):
    status, out, _ = _run(["delta", "--sigma", sigma, "--epsilon", epsilon])
    assert status == 0
    text = _table_value(out, "delta")
    exact = reference.log_delta_of_noise(float(epsilon), float(sigma))
    assert text != "0" and _text_bounds_from_above(text, exact)
    status, out, _ = _run(["delta", "--sigma", sigma, "--epsilon", epsilon, "--json"])
    record = json.loads(out)
    assert 0.0 < record["delta"] <= 1.0  # main printed 1.00000000001 at σ = 0.01, ε = 0


@pytest.mark.parametrize("sigma,delta", [("1", "1e-5"), ("1e-20", "1e-5"), ("0.3", "1e-300"), ("50", "0.4")])
def test_printed_epsilon_is_never_below_the_exact_one(sigma, delta):
    status, out, _ = _run(["epsilon", "--sigma", sigma, "--delta", delta])
    assert status == 0
    text = _table_value(out, "epsilon")
    assert reference.log_delta_of_noise(text, float(sigma)) <= _log(delta)


# The audit and run commands: numeric options with valid values kept small so that an accepted draw runs fast.
GAUSSIAN_AUDIT = {"--epsilon": "1", "--delta": "1e-5", "--sensitivity": "1", "--trials": "200", "--sigma-scale": "1",
                  "--seed": "0", "--alpha": "0.05", "--repetitions": "1", "--jobs": "1"}
RR_AUDIT = {"--epsilon": "1", "--num-classes": "2", "--canaries": "200", "--delta": "0", "--seed": "0",
            "--alpha": "0.05", "--repetitions": "1", "--jobs": "1"}
PIPELINE = {"--epsilon": "1", "--delta": "1e-5", "--seed": "0", "--trials": "100", "--alpha": "0.05"}
RUN = {"--epsilon": "1", "--delta": "1e-5", "--seed": "0", "--trials": "100"}


@contextlib.contextmanager
def _no_training():
    """Stub the step where training starts: options that reach it were accepted."""
    import audits.attacks.pipelines as pipelines
    import trainers.data as data
    import app.main_job as main_job

    def refuse(*_, **__):
        raise TrainingReached

    with pytest.MonkeyPatch.context() as patch:
        # dpmech audit PIPELINE trains inside the audit function; dpmech run trains in fit_pipeline; both load
        # the data first, which for mnist1d-cnn (fedauxfdp's default) generates it and trains the public CNN.
        patch.setattr(pipelines, "audit_function", lambda name: refuse)
        patch.setattr(main_job, "fit_pipeline", refuse)
        patch.setattr(data, "load_dataset", refuse)
        yield


@pytest.fixture
def no_training():
    with _no_training():
        yield


@contextlib.contextmanager
def _large_audits_stubbed(repetitions, trials):
    """Audits of more than ``repetitions`` repetitions or ``trials`` trials stop where they would start: the values
    were accepted. A draw of ``--repetitions 1_000`` or of an integer near the top of ``--trials``'s range (10⁸) is
    valid and would run for minutes (21 s of CPU for 1,000 repetitions), and this file checks the command line."""
    import audits.attacks as attacks

    run_repetitions = attacks.run_repetitions

    def bounded(function, **options):
        if options["repetitions"] > repetitions or options["trials"] > trials:
            raise TrainingReached
        return run_repetitions(function, **options)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(attacks, "run_repetitions", bounded)
        yield


@examples(0.3)
@given(st.sampled_from(sorted(GAUSSIAN_AUDIT)), bad_numbers)
def test_audit_gaussian_output(option, value):
    with _large_audits_stubbed(repetitions=3, trials=20_000):
        status, out, err = _run(_argv(["audit", "gaussian-output"], GAUSSIAN_AUDIT, option, value) + ["--json"])
    record = json.loads(out) if _assert_refused_or(status, out, err, option) and status != "trained" else None
    if record is not None:
        assert 0.0 <= record["eps_lb"] and record["sigma_calibrated"] > 0.0
        exact = reference.log_delta_of_noise(record["eps_claimed"], record["sigma_calibrated"], record["sensitivity"])
        assert exact <= _log(record["delta"])


@pytest.mark.slow
@examples(0.3)
@given(st.sampled_from(sorted(RR_AUDIT)), bad_numbers)
def test_audit_randomized_response(option, value):
    record = _record_or_refused(["audit", "randomized-response"], RR_AUDIT, option, value)
    if record is not None:
        assert 0.0 <= record["eps_lb"] and math.isfinite(record["eps_lb"])


def _audit_pipeline_case(pipeline, option, value):
    return _run(_argv(["audit", pipeline], PIPELINE, option, value) + ["--json"])


@examples(0.3)
@given(st.sampled_from(["fedauxfdp", "dphelmet", "fedmd-nfdp", "fedgm", "fedzda"]),
       st.sampled_from(sorted(PIPELINE)), bad_numbers)
def test_audit_pipeline_refuses_before_training(pipeline, option, value):
    with _no_training():
        status, out, err = _audit_pipeline_case(pipeline, option, value)
    _assert_refused_or(status, out, err, option)


@examples(0.3)
@given(st.sampled_from(sorted(RUN)), bad_numbers)
def test_run_refuses_before_training(tmp_path_factory, option, value):
    out_folder = str(tmp_path_factory.mktemp("run"))
    with _no_training():
        status, out, err = _run(_argv(["run", "--out", out_folder], RUN, option, value))
    _assert_refused_or(status, out, err, option)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("command", [["run"], ["audit", "fedgm"], ["audit", "gaussian-output", "--epsilon", "1",
                                                                    "--delta", "1e-5", "--trials", "200"]])
def test_unwritable_or_empty_out_is_refused_before_any_work(no_training, tmp_path, path, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    status, out, err = _run(command + ["--out", path.format(file=afile)])
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--out" in err and out == ""


def test_run_refuses_bad_input_fast():
    # Measured in a fresh interpreter: no trainer, torch or matplotlib import before the error.
    import subprocess
    import sys
    import time

    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", "import sys; from dpmech.cli.main import main; "
                             "sys.exit(main(['run', '--epsilon', '-1']))"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert result.returncode == 2 and "--epsilon" in result.stderr
    probe = subprocess.run([sys.executable, "-c", "import sys; from dpmech.cli.main import main\n"
                            "try: main(['run', '--epsilon', '-1'])\nexcept SystemExit: pass\n"
                            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                            "('torch', 'trainers', 'matplotlib', 'sklearn') and m not in "
                            "('trainers', 'trainers.pipelines', 'trainers.pipelines.registry')))"], capture_output=True, text=True)
    assert probe.stdout.strip() == "[]", probe.stdout
    assert elapsed < 10.0  # generous on a loaded machine; the imports it avoids took 2.5 s alone
