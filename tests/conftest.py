"""Hypothesis profiles: "ci" (default) keeps the suite under 10 minutes on 2 cores;
"thorough" is for release checks (``HYPOTHESIS_PROFILE=thorough pytest``)."""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
