"""Start-up cost of the ``dpmech`` command and of ``import dpmech`` (issue 32), checked by what is imported.

Each case runs in a fresh interpreter and lists the modules it loaded; a heavy module that the
command does not need fails the test (a timing test would pass or fail with the machine's load).
On main, ``import dpmech`` loaded numpy and scipy.special (0.45 s of a 0.5 s ``dpmech --help``),
and every command loaded rich and importlib.metadata.
"""

import ast
import json
import pathlib
import subprocess
import sys

import pytest

import dpmech

# Top-level packages no core command of the list below needs.
ACCOUNTING_LIBRARIES = {"dp_accounting", "prv_accountant", "mpmath", "flint", "torch", "trainers", "audits",
                        "matplotlib", "sklearn", "hypothesis"}


def _loaded(code):
    """The modules a fresh interpreter holds after running ``code`` (stdout of the command discarded)."""
    probe = (
        "import contextlib, io, json, sys\n"
        "before = set(sys.modules)\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"{''.join('    ' + line + chr(10) for line in code.splitlines())}"
        "sys.__stdout__.write(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(result.stdout))


def _tops(modules):
    return {name.split(".")[0] for name in modules}


def _cli(*argv):
    return ("from dpmech.cli.main import main\n"
            f"try:\n    main({list(argv)!r})\nexcept SystemExit:\n    pass")


def test_import_dpmech_loads_no_numerical_library():
    loaded = _loaded("import dpmech")
    assert not _tops(loaded) & ({"numpy", "scipy", "rich", "typing"} | ACCOUNTING_LIBRARIES), sorted(loaded)
    assert "importlib.metadata" not in loaded


@pytest.mark.parametrize("argv", [["--help"], ["calibrate", "--help"], ["calibrate", "--epsilon", "-1", "--delta", "1e-5"],
                                  ["dpsgd", "epsilon", "--help"]])
def test_help_and_bad_options_load_no_numerical_library(argv):
    loaded = _loaded(_cli(*argv))
    assert not _tops(loaded) & ({"numpy", "scipy", "rich"} | ACCOUNTING_LIBRARIES), sorted(loaded)


@pytest.mark.parametrize("argv", [["calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "1"],
                                  ["epsilon", "--sigma", "1", "--delta", "1e-5"],
                                  ["delta", "--sigma", "1", "--epsilon", "1"]])
def test_gaussian_commands_load_only_what_they_need(argv):
    as_json = _loaded(_cli(*argv, "--json"))
    # One number takes dpmech._gaussian_scalar (math alone): no scipy, no numpy.
    assert not _tops(as_json) & ({"rich", "numpy", "scipy"} | ACCOUNTING_LIBRARIES), sorted(as_json)
    assert not {"scipy.stats", "scipy.optimize", "scipy.integrate", "dpmech.ledger", "dpmech.pld"} & as_json
    table = _loaded(_cli(*argv))
    assert "rich" in _tops(table) and not _tops(table) & ACCOUNTING_LIBRARIES


@pytest.mark.parametrize("argv", [["calibrate", "--epsilon", "1", "--delta", "1e-5"],
                                  ["calibrate", "--epsilon", "0.5", "--delta", "1e-300", "--compositions", "1000"],
                                  ["calibrate", "--epsilon", "1e-3", "--delta", "0.4", "--sensitivity", "0.02"],
                                  ["calibrate", "--epsilon", "0.3", "--delta", "1e-5", "--method", "classic"]])
def test_calibrate_never_loads_scipy(argv):
    # On main `dpmech calibrate` loaded scipy.special for erfcx and ndtri: 0.45 s of CPU of its 0.55 s.
    # The classic σ (numpy's log, as before) still loads numpy; the analytic one neither.
    for loaded in (_loaded(_cli(*argv)), _loaded(_cli(*argv, "--json"))):
        assert "scipy" not in _tops(loaded), sorted(loaded)
        assert ("numpy" in _tops(loaded)) == ("classic" in argv), sorted(loaded)


def test_version_still_reads_the_installed_metadata():
    result = subprocess.run([sys.executable, "-m", "dpmech", "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == f"dpmech {dpmech.__version__}\n"


def _type_checking_imports():
    """Name -> module of every relative import in dpmech/__init__.py (the type checker's view)."""
    tree = ast.parse(pathlib.Path(dpmech.__file__).read_text(encoding="utf-8"))
    return {(alias.asname or alias.name): node.module for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1 for alias in node.names}


def test_every_public_name_is_imported_for_the_type_checker_and_resolves():
    imported = _type_checking_imports()
    assert set(imported) == set(dpmech.__all__), set(imported) ^ set(dpmech.__all__)
    assert set(dpmech.__all__) <= set(dir(dpmech)) and "__version__" in dir(dpmech)
    for name in dpmech.__all__:
        assert getattr(dpmech, name) is getattr(__import__(f"dpmech.{imported[name]}", fromlist=[name]), name)


def test_a_submodule_named_as_its_function_does_not_hide_it():
    # The import system binds dpmech.group_privacy (the module) on the package when dpmech.ledger loads it;
    # the eager imports of main then rebound the function, and so must the lazy package.
    code = ("import dpmech.ledger, dpmech.randomized_response, dpmech, types\n"
            "print(all(not isinstance(getattr(dpmech, name), types.ModuleType) for name in dpmech.__all__))\n"
            "print(dpmech.validation.positive.__module__)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "dpmech.validation"]


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        dpmech.no_such_name  # noqa: B018
