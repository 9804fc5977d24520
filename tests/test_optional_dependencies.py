"""The core works without the extras, and a missing extra fails with the command that installs it.

Each check runs in a fresh interpreter in which the extras' packages are made
unimportable (``sys.modules[name] = None``), as on a machine where
``pip install dpmech`` installed the core only.
"""

import subprocess
import sys
import textwrap

import pytest

from dpmech.optional_dependencies import EXTRAS, ensure_installed

# torch is left importable but must stay unimported: scipy's array-API helpers probe sys.modules["torch"],
# so a None entry there would break scipy itself, which a real machine without torch never does.
BLOCK_EXTRAS = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in EXTRAS if name != "torch")


def run_without_extras(code):
    return subprocess.run(
        [sys.executable, "-c", BLOCK_EXTRAS + textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_core_calibrates_and_accounts_without_any_extra():
    completed = run_without_extras(
        """
        import dpmech
        sigma = dpmech.calibrate_gaussian(1.0, 1e-5)
        assert 3.7 < sigma < 3.8, sigma
        ledger = dpmech.PrivacyLedger(dpmech.REPLACE_ONE).record(dpmech.GaussianEvent(sigma=4.0), count=10)
        guarantee = ledger.epsilon(1e-5)
        assert 3.34 < guarantee.epsilon < 3.35, guarantee
        loaded = sorted(name for name, module in sys.modules.items() if module is not None and name.partition(".")[0] in {"torch", "sklearn", "matplotlib", "hypothesis"})
        assert loaded == [], loaded
        """
    )
    assert completed.returncode == 0, completed.stderr


def test_core_command_line_works_without_any_extra():
    completed = run_without_extras(
        """
        import sys
        from dpmech.cli.main import main
        sys.exit(main(["calibrate", "--epsilon", "1", "--delta", "1e-5", "--json"]))
        """
    )
    assert completed.returncode == 0, completed.stderr
    assert "sigma" in completed.stdout


def test_trainers_name_the_extra_that_installs_them():
    completed = run_without_extras("import trainers\n")
    assert completed.returncode != 0
    assert "pip install 'dpmech[fl]'" in completed.stderr.strip().splitlines()[-1]


def test_a_command_whose_extra_is_missing_exits_2_naming_the_extra():
    completed = run_without_extras(
        """
        import sys
        from dpmech.cli.main import main
        sys.exit(main(["run", "--epsilon", "1"]))
        """
    )
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and "pip install 'dpmech[fl]'" in completed.stderr


def test_ensure_installed_refuses_a_module_that_is_not_an_optional_dependency():
    with pytest.raises(ValueError, match="module_names"):
        ensure_installed("numpy", purpose="a test")


def test_ensure_installed_names_the_requested_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match=r"pip install 'dpmech\[verify\]'"):
        ensure_installed("sklearn", purpose="the learned event", extra="verify")
