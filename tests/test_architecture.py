"""The layering the design fixes: four floors, each importing only the floors below it.

* ``dpmech`` (the core) never imports torch, ``trainers``, ``audits`` or ``app``,
  nor opacus but in ``dpmech.integrations``, which ``import dpmech`` does not load
  (its opacus module needs opacus, hence torch).
* ``trainers`` never imports ``audits`` or ``app``.
* ``audits`` never imports ``app``. The audit statistics (every module of ``audits``
  but the attacks) are pure functions of scores: never torch or ``trainers``.
  Attacks train shadow models, so those may use ``trainers``.
* ``app`` (the main job, the ``run`` and ``audit`` commands) is the only package
  that imports both ``trainers`` and ``audits``.
* No circle of modules: no module imports, directly or through others, a module
  that imports it (imports inside functions count, as they close the circle when
  they run).
"""

import ast
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("dpmech", "trainers", "audits", "app")


def _everywhere(_path: pathlib.Path) -> bool:
    return True


LAYERS = [
    ("dpmech", ("torch", "trainers", "audits", "app", "opacus", "dpmech.integrations"),
     lambda path: "integrations" not in path.relative_to(ROOT / "dpmech").parts),
    ("audits", ("torch", "trainers"), lambda path: "attacks" not in path.relative_to(ROOT / "audits").parts),
    ("audits", ("app",), _everywhere),
    ("trainers", ("audits", "app"), _everywhere),
]


def _loaded_after(statements: str, modules: tuple) -> list:
    """Which of ``modules`` a fresh interpreter has loaded once it has run ``statements`` (listed on stderr, after
    whatever the statements print)."""
    code = f"import sys; {statements}; print(sorted(m for m in {modules!r} if m in sys.modules), file=sys.stderr)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ast.literal_eval(result.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("package,forbidden,_", LAYERS)
def test_importing_the_package_loads_none_of_the_forbidden(package, forbidden, _):
    assert _loaded_after(f"import {package}", forbidden) == []


def _importing(forbidden) -> re.Pattern:
    return re.compile(rf"^\s*(import|from)\s+({'|'.join(re.escape(name) for name in forbidden)})\b", re.MULTILINE)


@pytest.mark.parametrize("package,forbidden,covered", LAYERS)
def test_source_never_imports_the_forbidden(package, forbidden, covered):
    pattern = _importing(forbidden)
    files = [path for path in (ROOT / package).rglob("*.py") if covered(path)]
    assert files
    assert [str(path) for path in files if pattern.search(path.read_text())] == []


def test_only_the_application_imports_both_trainers_and_audits():
    trainers, audits = _importing(("trainers",)), _importing(("audits",))
    both = sorted(str(path.relative_to(ROOT)) for package in PACKAGES for path in (ROOT / package).rglob("*.py")
                  if trainers.search(path.read_text()) and audits.search(path.read_text()))
    assert both and all(path.startswith("app/") for path in both), both


def test_only_the_registry_and_its_own_module_name_a_pipeline():
    # Each pipeline declares its configuration, default dataset and Flower app itself: what runs, calibrates,
    # deploys or audits pipelines dispatches on the registry entry, never on a name. The one name outside is
    # the application's choice of the default pipeline (app.options.DEFAULT_PIPELINE).
    from trainers.pipelines.registry import PIPELINE_NAMES

    quoted = re.compile(rf"""["']({'|'.join(re.escape(name) for name in PIPELINE_NAMES)})["']""")
    readers = [ROOT / "trainers" / "pipelines" / "targets.py", ROOT / "trainers" / "flower" / "simulation.py",
               *sorted((ROOT / "app").glob("*.py"))]
    named = {str(path.relative_to(ROOT)): [line.strip() for line in path.read_text().splitlines() if quoted.search(line)]
             for path in readers}
    assert {path: lines for path, lines in named.items() if lines} == {
        "app/options.py": ['DEFAULT_PIPELINE = "fedauxfdp"']}


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict:
    """Module -> the modules of the four packages it imports (anywhere in its source). An import of a
    package's own ``__init__`` from inside the package, or of a subpackage from its ``__init__``, is the
    package's structure rather than a dependency, and is left out."""
    modules = {_module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}

    def resolve(name: str):
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
                prefix = ".".join(base + ([node.module] if node.module else []))
                targets |= {prefix} | {f"{prefix}.{alias.name}" for alias in node.names}
        resolved = {resolve(target) for target in targets} - {None, name}
        graph[name] = {module for module in resolved
                       if not module.startswith(name + ".") and not name.startswith(module + ".")}
    return graph


def _circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan 1972), each sorted."""
    index, low, stack, on_stack, components = {}, {}, [], set(), []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in graph[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                components.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return sorted(components)


def test_no_circle_of_modules():
    assert _circles(_import_graph()) == []


def test_the_circle_check_finds_a_circle():
    graph = _import_graph()
    # The main job and the run command were a circle while both lived in trainers (the command imported the job,
    # the job the command's option names); the shared options module cut it, and re-adding the edge restores it.
    assert "app.run_command" in graph["app.main_job"] or "app.main_job" in graph["app.run_command"]
    graph["app.main_job"] = graph["app.main_job"] | {"app.run_command"}
    graph["app.run_command"] = graph["app.run_command"] | {"app.main_job"}
    assert ["app.main_job", "app.run_command"] in _circles(graph)


def test_the_cli_core_loads_without_trainers_or_audits():
    assert _loaded_after("import dpmech.cli.main", ("torch", "trainers", "audits", "app")) == []


def test_building_the_cli_with_every_plugin_stays_light():
    # Plugins register subcommands at every start; heavy imports belong in their handlers. The help of
    # dpmech's own commands is read from their modules, which must load neither the trainers nor the audits.
    heavy = ("torch", "trainers", "audits", "numpy", "scipy.stats", "scipy.integrate", "sklearn", "hypothesis",
             "dp_accounting")
    assert _loaded_after("from dpmech.cli.main import build_parser; build_parser()", heavy) == []


def test_a_command_loads_only_its_own_plugin():
    calibrate = ("from dpmech.cli.main import main; "
                 "assert main(['calibrate', '--epsilon', '1', '--delta', '1e-5', '--json']) == 0")
    assert _loaded_after(calibrate, ("trainers", "audits", "app")) == []
    for command, loaded in (("run", ["app.run_command"]), ("audit", ["app.audit_command"])):
        assert _loaded_after(f"from dpmech.cli.main import build_parser; build_parser({command!r})",
                             ("app.run_command", "app.audit_command", "app.main_job")) == loaded
