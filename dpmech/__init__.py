"""dpmech: exact differential-privacy accounting and the mechanisms of one-shot federated learning.

The core is pure numpy and scipy (with dp-accounting and prv-accountant behind
two accountants). It never imports torch, ``trainers`` or ``audits``.

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
    from .blind_averaging import average_sensitivity, blind_average, blind_averaging_event, calibrate_user_noise
    from .calibration import calibrate_gaussian, split_gaussian_budget
    from .clipping import clip_features
    from .discrete_gaussian import discrete_gaussian
    from .discrete_gaussian_privacy import calibrate_discrete_gaussian, discrete_gaussian_delta
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
    from .nfdp import NfdpGuarantee, nfdp_guarantee, nfdp_subsample
    from .output_perturbation import GaussianOutputMechanism
    from .privacy_warnings import NoGuaranteeWarning, PrivacyWarning, UnprotectedReleaseWarning, VacuousGuaranteeWarning
    from .random_bits import OS_RANDOMNESS, exact_bernoulli, random_source
    from .randomized_response import (
        randomized_response,
        randomized_response_distribution,
        randomized_response_event,
        rr_top_k,
        rr_top_k_distribution,
        rr_top_k_event,
        rr_with_prior,
        rr_with_prior_distribution,
        rr_with_prior_event,
        rr_with_prior_optimal_k,
    )


__all__ = [
    "NoGuaranteeWarning",
    "PrivacyWarning",
    "UnprotectedReleaseWarning",
    "VacuousGuaranteeWarning",
    "ADD_REMOVE_ONE",
    "REPLACE_ONE",
    "ApproximateDpEvent",
    "GaussianEvent",
    "GaussianOutputMechanism",
    "LaplaceEvent",
    "NfdpGuarantee",
    "NoGuaranteeEvent",
    "NoPrivacyLossEvent",
    "PoissonSampledEvent",
    "PrivacyGuarantee",
    "PrivacyLedger",
    "PureEpsilonEvent",
    "RandomAllocationEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "average_sensitivity",
    "blind_average",
    "blind_averaging_event",
    "calibrate_gaussian",
    "calibrate_user_noise",
    "clip_features",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_log_delta",
    "group_privacy",
    "nfdp_guarantee",
    "nfdp_subsample",
    "randomized_response",
    "randomized_response_distribution",
    "randomized_response_event",
    "rr_top_k",
    "rr_top_k_distribution",
    "rr_top_k_event",
    "rr_with_prior",
    "rr_with_prior_distribution",
    "rr_with_prior_event",
    "rr_with_prior_optimal_k",
    "split_gaussian_budget",
    # exact discrete noise and randomness sources (mech)
    "OS_RANDOMNESS",
    "calibrate_discrete_gaussian",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_laplace",
    "exact_bernoulli",
    "random_source",
]


import sys as _sys
import types as _types

_export_sources: dict | None = None


def _exports() -> dict:
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
        elif importlib.util.find_spec(f"{__name__}.{name}") is not None:
            # A submodule, as when ``import dpmech`` loaded them all: ``dpmech.validation.positive`` still works.
            return importlib.import_module(f".{name}", __name__)
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__) | {"__version__"})


class _Package(_types.ModuleType):
    """dpmech's module type. The import system binds each loaded submodule on its package; a submodule
    named as the public function it defines (``group_privacy``, ``randomized_response``, ...) must not
    hide that function, so the function is bound in its place, as the eager imports once did."""

    def __setattr__(self, name: str, value: object) -> None:
        if (isinstance(value, _types.ModuleType) and value.__name__ == f"{__name__}.{name}" and name in __all__
                and hasattr(value, name)):
            value = getattr(value, name)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
