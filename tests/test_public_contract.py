"""The bad-input contract over every public callable of dpmech (issue 11, "Make it impossible").

Every callable of the public surface, ``dpmech.__all__`` and ``dpmech.mechanisms.__all__``, needs an
entry in ``REGISTRY``: a valid
base call and which of its arguments are real numbers, integers, arrays or
flags. Hypothesis replaces one argument at a time by a bad or extreme draw
(NaN, ±inf, 0, negatives, subnormals, 1e308, huge integers, strings, bools,
None, empty or mismatched arrays) and the call must either raise a
ValueError whose message names that argument, or return a finite result (no
NaN or inf anywhere in it, no other exception type).

A new export joins the contract by being exported: ``test_every_export_has_an_entry``
fails until its entry is added here, one line of the form
``"name": Entry(lambda: dict(arg=valid, ...), numeric=("arg",), ...)``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpmech
import dpmech.mechanisms
from tests.profiles import examples


@dataclasses.dataclass(frozen=True)
class Entry:
    """A valid base call (a function returning fresh keyword arguments) and the kinds of its arguments."""

    base: Callable[[], dict]
    numeric: tuple = ()  # real numbers (scalars; arrays where the function broadcasts)
    integer: tuple = ()
    array: tuple = ()
    flag: tuple = ()
    # Integer arguments that set how much work a valid call does (a sampler's size): their random draws skip
    # [10⁵, 10⁹), where a valid call takes seconds to minutes (discrete_laplace: 0.6 µs a draw, up to 2²⁷ draws),
    # which says nothing about the contract; the fixed bad values (2⁶³, 10⁴⁰⁰, ...) are still tried.
    work: tuple = ()


def _rng():
    return np.random.default_rng(0)


_PRIORS = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
_LABELS = np.array([0, 2])

REGISTRY: dict[str, Entry] = {
    "LaplaceEvent": Entry(lambda: dict(scale=1.0, sensitivity=1.0), numeric=("scale", "sensitivity")),
    "NoPrivacyLossEvent": Entry(lambda: dict(description="constant output")),
    "PoissonSampledEvent": Entry(lambda: dict(event=dpmech.GaussianEvent(1.0), sampling_probability=0.01),
                                 numeric=("sampling_probability",)),
    "RandomAllocationEvent": Entry(lambda: dict(event=dpmech.GaussianEvent(1.0), num_steps=100, num_selected=1),
                                   integer=("num_steps", "num_selected")),
    "SampledWithoutReplacementEvent": Entry(lambda: dict(event=dpmech.PureEpsilonEvent(1.0), sample_size=10,
                                                         source_size=100), integer=("sample_size", "source_size")),
    "NoGuaranteeWarning": Entry(lambda: dict()),
    "PrivacyWarning": Entry(lambda: dict()),
    "UnprotectedReleaseWarning": Entry(lambda: dict()),
    "VacuousGuaranteeWarning": Entry(lambda: dict()),
    "calibrate_discrete_gaussian": Entry(lambda: dict(epsilon=1.0, delta=1e-5, sensitivity=1, dimension=1),
                                         numeric=("epsilon", "delta"), integer=("sensitivity", "dimension")),
    "discrete_gaussian": Entry(lambda: dict(sigma_squared=4, size=5, rng=_rng()), numeric=("sigma_squared",),
                               work=("size",)),
    "discrete_gaussian_delta": Entry(lambda: dict(epsilon=1.0, sigma_squared=16, sensitivity=1, dimension=1),
                                     numeric=("epsilon", "sigma_squared"), integer=("sensitivity", "dimension")),
    "discrete_laplace": Entry(lambda: dict(scale=2, size=5, rng=_rng()), numeric=("scale",), work=("size",)),
    "exact_bernoulli": Entry(lambda: dict(probabilities=np.array([0.25, 0.5]), source=dpmech.mechanisms.random_source(_rng())),
                             array=("probabilities",)),
    "random_source": Entry(lambda: dict(rng=_rng())),
    "ApproximateDpEvent": Entry(lambda: dict(epsilon=1.0, delta=1e-5), numeric=("epsilon", "delta")),
    "GaussianEvent": Entry(lambda: dict(sigma=1.0, sensitivity=1.0), numeric=("sigma", "sensitivity")),
    "GaussianOutputMechanism": Entry(lambda: dict(sensitivity=1.0, epsilon=1.0, delta=1e-5),
                                     numeric=("sensitivity", "epsilon", "delta")),
    "NfdpGuarantee": Entry(lambda: dict(epsilon=1.0, delta=1e-5, n=100, k=10, replacement=False, warning=""),
                           numeric=("epsilon", "delta"), integer=("n", "k"), flag=("replacement",)),
    "NoGuaranteeEvent": Entry(lambda: dict(reason="no noise")),
    "PrivacyGuarantee": Entry(lambda: dict(epsilon=1.0, delta=1e-5, method="exact", neighbouring="replace-one",
                                           solved_for="epsilon", interval=(1.0, 1.0, 1.0), certified=True),
                              numeric=("epsilon", "delta"), flag=("certified",)),
    "PrivacyLedger": Entry(lambda: dict()),
    "PureEpsilonEvent": Entry(lambda: dict(epsilon=1.0, num_outcomes=2), numeric=("epsilon",), integer=("num_outcomes",)),
    "SelfComposedEvent": Entry(lambda: dict(event=dpmech.GaussianEvent(1.0), count=3), integer=("count",)),
    "average_sensitivity": Entry(lambda: dict(local_sensitivity=1.0, num_users=10), numeric=("local_sensitivity",),
                                 integer=("num_users",)),
    "blind_average": Entry(lambda: dict(local_models=np.ones((4, 3)), user_noise_std=1.0, rng=_rng()),
                           numeric=("user_noise_std",), array=("local_models",)),
    "blind_averaging_event": Entry(lambda: dict(user_noise_std=1.0, local_sensitivity=1.0, num_users=10,
                                                honest_fraction=0.5),
                                   numeric=("user_noise_std", "local_sensitivity", "honest_fraction"),
                                   integer=("num_users",)),
    "calibrate_gaussian": Entry(lambda: dict(epsilon=1.0, delta=1e-5, sensitivity=1.0, compositions=1),
                                numeric=("epsilon", "delta", "sensitivity"), integer=("compositions",)),
    "calibrate_user_noise": Entry(lambda: dict(epsilon=1.0, delta=1e-5, local_sensitivity=1.0, num_users=10,
                                               honest_fraction=0.5),
                                  numeric=("epsilon", "delta", "local_sensitivity", "honest_fraction"),
                                  integer=("num_users",)),
    "clip_features": Entry(lambda: dict(features=np.ones((3, 4)), bound=1.0), numeric=("bound",), array=("features",)),
    "gaussian_delta": Entry(lambda: dict(epsilon=1.0, sigma=1.0, sensitivity=1.0, compositions=1),
                            numeric=("epsilon", "sigma", "sensitivity"), integer=("compositions",)),
    "gaussian_epsilon": Entry(lambda: dict(delta=1e-5, sigma=1.0, sensitivity=1.0, compositions=1),
                              numeric=("delta", "sigma", "sensitivity"), integer=("compositions",)),
    "gaussian_log_delta": Entry(lambda: dict(epsilon=1.0, sigma=1.0, sensitivity=1.0, compositions=1),
                                numeric=("epsilon", "sigma", "sensitivity"), integer=("compositions",)),
    "group_privacy": Entry(lambda: dict(event=dpmech.ApproximateDpEvent(1.0, 1e-5), group_size=2),
                           integer=("group_size",)),
    "nfdp_guarantee": Entry(lambda: dict(n=100, k=10, replacement=False), integer=("n", "k"), flag=("replacement",)),
    "nfdp_subsample": Entry(lambda: dict(n=100, k=10, replacement=False, rng=_rng()), integer=("n", "k"),
                            flag=("replacement",)),
    "randomized_response": Entry(lambda: dict(labels=_LABELS, epsilon=1.0, num_classes=3, rng=_rng()),
                                 numeric=("epsilon",), integer=("num_classes",), array=("labels",)),
    "randomized_response_distribution": Entry(lambda: dict(labels=_LABELS, epsilon=1.0, num_classes=3),
                                              numeric=("epsilon",), integer=("num_classes",), array=("labels",)),
    "randomized_response_event": Entry(lambda: dict(epsilon=1.0, num_classes=3), numeric=("epsilon",),
                                       integer=("num_classes",)),
    "rr_top_k": Entry(lambda: dict(labels=_LABELS, priors=_PRIORS, k=2, epsilon=1.0, rng=_rng()),
                      numeric=("epsilon",), integer=("k",), array=("labels", "priors")),
    "rr_top_k_distribution": Entry(lambda: dict(labels=_LABELS, priors=_PRIORS, k=2, epsilon=1.0),
                                   numeric=("epsilon",), integer=("k",), array=("labels", "priors")),
    "rr_top_k_event": Entry(lambda: dict(epsilon=1.0, k=2), numeric=("epsilon",), integer=("k",)),
    "rr_with_prior": Entry(lambda: dict(labels=_LABELS, priors=_PRIORS, epsilon=1.0, rng=_rng()),
                           numeric=("epsilon",), array=("labels", "priors"), flag=("google_compat",)),
    "rr_with_prior_distribution": Entry(lambda: dict(labels=_LABELS, priors=_PRIORS, epsilon=1.0),
                                        numeric=("epsilon",), array=("labels", "priors"), flag=("google_compat",)),
    "rr_with_prior_event": Entry(lambda: dict(epsilon=1.0), numeric=("epsilon",)),
    "rr_with_prior_optimal_k": Entry(lambda: dict(priors=_PRIORS, epsilon=1.0), numeric=("epsilon",),
                                     array=("priors",), flag=("google_compat",)),
    "split_gaussian_budget": Entry(lambda: dict(epsilon=1.0, delta=1e-5, shares=[1.0, 4.0]),
                                   numeric=("epsilon", "delta"), array=("shares",)),
}

_COMMON_BAD = [None, "1", "", "abc", b"1", True, False, 1 + 1j, object(), [], [[1.0], []]]
_BAD_NUMBERS = [math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0, -1e-300, 5e-324, 1e-320, 1e308, -1e308, 10**400,
                -(10**400), 2**63, np.float32(np.nan), np.float64(-np.inf), np.array([1.0, np.nan]),
                np.array([[1.0, 2.0, 3.0]]), np.zeros((2, 0))]
_BAD_INTEGERS = [0, -1, 2.5, 1e308, 10**400, 2**63, 2**53 + 1, math.nan, math.inf, np.float64(3.5), np.int64(-3),
                 np.array([1, 2]), np.array([])]
_BAD_ARRAYS = [np.array([]), np.zeros((0, 3)), np.array([np.nan, 1.0]), np.array([np.inf]), np.array(["a", "b"]),
               np.array([1.0, 1e308]), np.ones((2, 2, 2)), np.array([[1.0, 2.0], [3.0, 4.0]]), [1.0, "x"],
               np.array([-1.0, 5e-324]), 1.0, np.array([1 + 1j]), np.array([True, False]), np.array([10**20]),
               [[1.0, 2.0], [3.0]]]
_BAD_FLAGS = [0, 1, "yes", "", None, math.nan, np.array([True])]


def _bad_draws(entry: Entry):
    """(argument name, bad value) pairs for one entry."""
    choices = []
    for kind, values in (("numeric", _BAD_NUMBERS), ("integer", _BAD_INTEGERS), ("array", _BAD_ARRAYS),
                         ("flag", _BAD_FLAGS)):
        names = getattr(entry, kind)
        if names:
            extra = [st.floats().filter(lambda x: x != 1.0)] if kind == "numeric" else []
            extra += [st.integers(-10**30, 10**30)] if kind in ("numeric", "integer") else []
            choices += [st.tuples(st.sampled_from(group), st.one_of(st.sampled_from(values + _COMMON_BAD), *extra))
                        for group in (tuple(name for name in names if name not in entry.work),) if group]
    if entry.work:
        sizes = st.one_of(st.integers(-10**30, 10**5 - 1), st.integers(10**9, 10**30))
        choices.append(st.tuples(st.sampled_from(entry.work), st.one_of(st.sampled_from(_BAD_INTEGERS + _COMMON_BAD), sizes)))
    return st.one_of(*choices) if choices else st.nothing()


def _finite(value, seen=0) -> bool:
    """Whether every number in a result (scalars, arrays, tuples, dataclass fields) is finite."""
    if seen > 4:
        return True
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    if isinstance(value, numbers.Number):
        return isinstance(value, numbers.Integral) or math.isfinite(value)
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))
    if isinstance(value, (list, tuple)):
        return all(_finite(item, seen + 1) for item in value)
    if isinstance(value, Mapping):
        return all(_finite(item, seen + 1) for item in value.values())
    if dataclasses.is_dataclass(value):
        # log δ of δ = 0 (a pure-DP guarantee) is exactly -inf: the one non-finite value that is the answer.
        exact_log_zero = {"log_delta"} if getattr(value, "delta", None) == 0.0 else set()
        return all(_finite(getattr(value, field.name), seen + 1) for field in dataclasses.fields(value)
                   if field.name not in exact_log_zero)
    return True


def _public(name: str):
    """The public object ``name``, from the top level or, for the mechanisms that left it, dpmech.mechanisms."""
    return getattr(dpmech, name) if name in dpmech.__all__ else getattr(dpmech.mechanisms, name)


def _exports():
    return sorted(name for name in set(dpmech.__all__) | set(dpmech.mechanisms.__all__) if callable(_public(name)))


def test_every_export_has_an_entry():
    missing = [name for name in _exports() if name not in REGISTRY]
    assert not missing, (
        f"add an entry to REGISTRY in tests/test_public_contract.py for {missing}: a valid base call and the "
        "names of its numeric, integer, array and flag arguments"
    )
    stale = [name for name in REGISTRY if name not in _exports()]
    assert not stale, f"REGISTRY names callables that are no longer exported: {stale}"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_base_call_is_valid_and_finite(name):
    result = _public(name)(**REGISTRY[name].base())
    assert _finite(result), (name, result)


def _check(name, argument, value):
    kwargs = REGISTRY[name].base()
    kwargs[argument] = value
    try:
        result = _public(name)(**kwargs)
    except ValueError as error:
        assert argument in str(error), f"{name}({argument}={value!r}) raised ValueError not naming {argument!r}: {error}"
        return
    except Exception as error:  # noqa: BLE001 - the contract allows ValueError only
        raise AssertionError(f"{name}({argument}={value!r}) raised {type(error).__name__}: {error}") from error
    assert _finite(result), f"{name}({argument}={value!r}) returned a non-finite result {result!r}"


# Violations this suite has found and that are not fixed yet (delete a line once its function passes).
# Each is still run, as an expected failure.
KNOWN_VIOLATIONS: dict[str, str] = {
}

_WITH_ARGUMENTS = [
    pytest.param(name, marks=pytest.mark.xfail(reason=KNOWN_VIOLATIONS[name], strict=False))
    if name in KNOWN_VIOLATIONS else name
    for name in sorted(name for name, entry in REGISTRY.items() if entry.numeric or entry.integer or entry.array or entry.flag)
]


@pytest.mark.parametrize("name", _WITH_ARGUMENTS)
def test_bad_input_is_refused_by_name_or_answered_finitely(name):
    @examples(0.25)
    @given(_bad_draws(REGISTRY[name]))
    def contract(draw):
        _check(name, *draw)

    contract()


# The surface (issue 30): a top level of at most 30 core names, kept lazy; every name that left it still
# loads from it for one release, with a DeprecationWarning naming its new home, and is the same object there.
def test_the_top_level_holds_at_most_30_names_each_loadable():
    assert len(dpmech.__all__) <= 30 and len(set(dpmech.__all__)) == len(dpmech.__all__)
    for name in dpmech.__all__:
        getattr(dpmech, name)


def test_every_mechanism_is_in_dpmech_mechanisms_and_the_top_level_ones_are_the_same_objects():
    # Re-exported from the module that defines each, not copied.
    for name in dpmech.mechanisms.__all__:
        value = getattr(dpmech.mechanisms, name)
        if callable(value):
            assert value.__module__.startswith("dpmech.") and value.__module__ != "dpmech.mechanisms", (name, value.__module__)
    shared = set(dpmech.__all__) & set(dpmech.mechanisms.__all__)
    assert shared and all(getattr(dpmech, name) is getattr(dpmech.mechanisms, name) for name in shared)


@pytest.mark.parametrize("name", sorted(dpmech._MOVED))
def test_a_name_that_left_the_top_level_still_loads_with_a_deprecation_warning_naming_its_home(name):
    home = dpmech._MOVED[name][1]
    assert name not in dpmech.__all__ and name in dpmech.mechanisms.__all__ and home == "dpmech.mechanisms"
    with pytest.warns(DeprecationWarning, match=rf"dpmech\.{name} has moved to dpmech\.mechanisms: import it from there"):
        namespace: dict = {}
        exec(f"from dpmech import {name}", namespace)
    assert namespace[name] is getattr(dpmech.mechanisms, name)
    with pytest.warns(DeprecationWarning, match=rf"dpmech\.{name} has moved"):
        assert getattr(dpmech, name) is getattr(dpmech.mechanisms, name)
    assert name not in dir(dpmech)


@pytest.mark.parametrize("name", sorted(dpmech._MOVED))
def test_a_name_that_left_the_top_level_warns_once_per_import_at_the_importer(name):
    # The import system looks a from-list name up on the package before binding it: that lookup must not warn too.
    import warnings

    for statement in (f"from dpmech import {name}", f"import dpmech\ndpmech.{name}"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(compile(statement, "<importer>", "exec"), {})
        moved = [warning for warning in caught if issubclass(warning.category, DeprecationWarning)]
        assert [(warning.filename, f"dpmech.{name} has moved" in str(warning.message)) for warning in moved] == [("<importer>", True)], statement


def test_a_core_name_loads_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from dpmech import PrivacyLedger, randomized_response  # noqa: F401


def test_import_dpmech_stays_lazy():
    import subprocess
    import sys

    code = "import sys, dpmech; print(sorted(m for m in sys.modules if m.startswith('dpmech.') or m in ('numpy', 'scipy')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
