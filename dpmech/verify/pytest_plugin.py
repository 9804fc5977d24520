"""pytest plugin: DP claims as tests in the user's own suite.

Registered through the ``pytest11`` entry point (``-p dpmech.verify.pytest_plugin``
loads it by hand). It adds

* the options ``--dp-budget SECONDS`` (time per :func:`dp_verify` call,
  default 20) and ``--dp-seed N`` (default 0);
* the marker ``@pytest.mark.dp_claim(epsilon, delta)``, which the
  fixture reads as the default claim of a test;
* the fixture ``dp_verify``: ``dp_verify(sampler, pairs, epsilon=None,
  delta=None, **options)`` runs :func:`dpmech.verify.tester.assert_dp_black_box`
  with the budget and seed from the command line, and fails the test with a
  :class:`dpmech.verify.DpViolation` that names the witness pair, the event
  and its counts.

Hypothesis settings and profiles are left as the user set them; the
fixture draws its own randomness from ``--dp-seed`` so a failure replays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

DEFAULT_BUDGET_SECONDS = 20.0


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpmech", "differential-privacy claims (dpmech.verify)")
    group.addoption("--dp-budget", type=float, default=DEFAULT_BUDGET_SECONDS, help="seconds per dp_verify call (default 20)")
    group.addoption("--dp-seed", type=int, default=0, help="seed of the samplers' generator in dp_verify (default 0)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dp_claim(epsilon, delta=0.0): the (epsilon, delta) claim dp_verify checks by default")
    budget = config.getoption("--dp-budget")
    if not budget > 0:
        raise pytest.UsageError(f"--dp-budget must be a number of seconds > 0 (got {budget!r})")


@pytest.fixture
def dp_verify(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Callable (sampler, pairs, epsilon=None, delta=None, **options) -> report, failing the test on a violation."""
    from .tester import assert_dp_black_box

    marker = request.node.get_closest_marker("dp_claim")
    budget = request.config.getoption("--dp-budget")
    seed = request.config.getoption("--dp-seed")

    def verify(
        sampler: Callable[..., Any], pairs: Any, epsilon: float | None = None, delta: float | None = None, **options: Any
    ) -> Any:
        if epsilon is None:
            if marker is None:
                raise ValueError("epsilon must be given, or the test marked @pytest.mark.dp_claim(epsilon, delta)")
            epsilon = marker.args[0] if marker.args else marker.kwargs["epsilon"]
            delta = marker.args[1] if len(marker.args) > 1 else marker.kwargs.get("delta", 0.0)
        options.setdefault("budget_seconds", budget)
        options.setdefault("rng", seed)
        return assert_dp_black_box(sampler, pairs, epsilon, 0.0 if delta is None else delta, **options)

    return verify
