"""dpmech: exact differential-privacy accounting and the mechanisms of one-shot federated learning.

The core is pure numpy and scipy (with dp-accounting and prv-accountant behind
two accountants). It never imports torch, ``trainers`` or ``audits``.

The top level holds the core (``__all__``, at most 30 names): the ledger and its guarantee, the
neighbouring relations, the events, Gaussian accounting and calibration, group privacy, the most used
mechanisms and the privacy warnings. The rest lives in subpackages:

* :mod:`dpmech.mechanisms`: every mechanism (randomized response and its variants, Gaussian output
  perturbation, clipping, blind averaging, NFDP, exact discrete noise, random sources);
* :mod:`dpmech.accountants`: the accountants behind :meth:`PrivacyLedger.epsilon` and a registry for
  new ones; :mod:`dpmech.events`: the event types; :mod:`dpmech.pld`: the numeric PLD engine;
* :mod:`dpmech.verify`: testers of DP claims for users' own test suites;
* :mod:`dpmech.integrations`: drop-in accountants for opacus and dp_accounting (not imported here).

Names that left the top level (``_MOVED`` below) still load from it for one release, with a
DeprecationWarning naming their new home.

Every public name loads on first use (PEP 562 module ``__getattr__``), so ``import dpmech``
and each command of the ``dpmech`` CLI pay only for the submodules they touch. To add a public
name: one import line under ``if TYPE_CHECKING:`` below and its entry in ``__all__``; the
imports there are the type checker's view and, read from this file, the map that
``__getattr__`` follows (the pattern of ``lazy_loader.attach_stub``).
"""

# typing.TYPE_CHECKING without importing typing (about 10 ms); type checkers know the name.
TYPE_CHECKING = False

if TYPE_CHECKING:
    __version__: str
    from .calibration import calibrate_gaussian, split_gaussian_budget
    from .clipping import clip_features
    from .discrete_gaussian import discrete_gaussian
    from .discrete_laplace import discrete_laplace
    from .events import (
        ADD_REMOVE_ONE,
        REPLACE_ONE,
        ApproximateDpEvent,
        GaussianEvent,
        LaplaceEvent,
        NoGuaranteeEvent,
        NoPrivacyLossEvent,
        PoissonSampledEvent,
        PureEpsilonEvent,
        RandomAllocationEvent,
        SampledWithoutReplacementEvent,
        SelfComposedEvent,
    )
    from .gaussian import gaussian_delta, gaussian_epsilon, gaussian_log_delta
    from .group_privacy import group_privacy
    from .ledger import PrivacyGuarantee, PrivacyLedger
    from .output_perturbation import GaussianOutputMechanism
    from .privacy_warnings import NoGuaranteeWarning, PrivacyWarning, UnprotectedReleaseWarning, VacuousGuaranteeWarning
    from .randomized_response import randomized_response, randomized_response_event


__all__ = [
    # the ledger and what it answers
    "PrivacyGuarantee",
    "PrivacyLedger",
    # neighbouring relations
    "ADD_REMOVE_ONE",
    "REPLACE_ONE",
    # events (dpmech.events)
    "ApproximateDpEvent",
    "GaussianEvent",
    "LaplaceEvent",
    "NoGuaranteeEvent",
    "NoPrivacyLossEvent",
    "PoissonSampledEvent",
    "PureEpsilonEvent",
    "RandomAllocationEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    # the Gaussian mechanism's accounting and calibration; group privacy
    "calibrate_gaussian",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_log_delta",
    "group_privacy",
    "split_gaussian_budget",
    # the most used mechanisms (all of them: dpmech.mechanisms)
    "GaussianOutputMechanism",
    "clip_features",
    "discrete_gaussian",
    "discrete_laplace",
    "randomized_response",
    "randomized_response_event",
    # warnings
    "NoGuaranteeWarning",
    "PrivacyWarning",
    "UnprotectedReleaseWarning",
    "VacuousGuaranteeWarning",
]

# Names that left the top level: name -> (defining submodule, documented new home). They still load
# from ``dpmech`` for one release, with a DeprecationWarning; then they go.
_MOVED = {
    name: (module, "dpmech.mechanisms")
    for module, names in (
        ("blind_averaging", ("average_sensitivity", "blind_average", "blind_averaging_event", "calibrate_user_noise")),
        ("discrete_gaussian_privacy", ("calibrate_discrete_gaussian", "discrete_gaussian_delta")),
        ("nfdp", ("NfdpGuarantee", "nfdp_guarantee", "nfdp_subsample")),
        ("random_bits", ("OS_RANDOMNESS", "exact_bernoulli", "random_source")),
        ("randomized_response", ("randomized_response_distribution", "rr_top_k", "rr_top_k_distribution",
                                 "rr_top_k_event", "rr_with_prior", "rr_with_prior_distribution",
                                 "rr_with_prior_event", "rr_with_prior_optimal_k")),
    )
    for name in names
}
# Names that left a subpackage for a floor above it, which the subpackage cannot import: subpackage ->
# {name: defining submodule of dpmech}. Each is registered with the subpackage when it is bound here
# (see _Package), and loads from it for one release, with the subpackage's DeprecationWarning.
_MOVED_UP = {"pld": {"calibrate_ledger": "ledger_calibration"}}


import sys as _sys
import types as _types

if TYPE_CHECKING:
    from collections.abc import Callable as _Callable

_export_sources: dict[str, tuple[str, str]] | None = None


def _exports() -> dict[str, tuple[str, str]]:
    """Public name -> (submodule, attribute): every relative ``from .module import name`` of this file."""
    global _export_sources
    if _export_sources is None:
        import ast

        with open(__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        _export_sources = {(alias.asname or alias.name): (node.module, alias.name) for node in ast.walk(tree)
                           if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
                           for alias in node.names}
    return _export_sources


# Hidden from type checkers, which see the imports above: a module __getattr__ would make every
# misspelt name type-check.
if not TYPE_CHECKING:

    def __getattr__(name: str):
        import importlib
        import importlib.util

        if name == "__version__":
            import importlib.metadata

            value = importlib.metadata.version("dpmech")
        elif name in _exports():
            module, attribute = _exports()[name]
            value = getattr(importlib.import_module(f".{module}", __name__), attribute)
        elif name in _MOVED:
            module, home = _MOVED[name]
            # Not cached in globals(), so that every module that still imports it from here is told (once per
            # read: see dpmech._moved_names). Loaded by importlib: a relative import here is read as an export.
            importlib.import_module("._moved_names", __name__).warn_moved(f"dpmech.{name} has moved to {home}: import it from there (from {home} import {name}); "
                       f"the top-level name goes in the next release")
            return getattr(importlib.import_module(f".{module}", __name__), name)
        elif importlib.util.find_spec(f"{__name__}.{name}") is not None:
            # A submodule, as when ``import dpmech`` loaded them all: ``dpmech.validation.positive`` still works.
            return importlib.import_module(f".{name}", __name__)
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__) | {"__version__"})


def _loader(module: str, attribute: str) -> "_Callable[[], object]":
    """A callable importing ``attribute`` from the submodule ``module`` of dpmech when called."""

    def load() -> object:
        import importlib

        return getattr(importlib.import_module(f".{module}", __name__), attribute)

    return load


class _Package(_types.ModuleType):
    """dpmech's module type. The import system binds each loaded submodule on its package; a submodule
    named as the public function it defines (``group_privacy``, ``randomized_response``, ...) must not
    hide that function, so the function is bound in its place, as the eager imports once did. A
    subpackage whose names moved up (``_MOVED_UP``) is handed their loaders as it is bound: the floor
    above registers them, and the subpackage never imports upward."""

    def __setattr__(self, name: str, value: object) -> None:
        if isinstance(value, _types.ModuleType) and value.__name__ == f"{__name__}.{name}":
            for moved, module in _MOVED_UP.get(name, {}).items():
                value.register_moved(moved, _loader(module, moved))
            if name in __all__ and hasattr(value, name):
                value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
