"""Hypothesis profiles.

* locally: Hypothesis's defaults (100 random examples), without the per-example deadline, which
  measures the machine's load more than the code on a shared 2-core box;
* under ``CI`` (any value): Hypothesis's own ``ci`` profile (derandomized, no database);
* ``HYPOTHESIS_PROFILE=thorough`` for release checks: ten times the examples.

Tests never pin an example count: a slow property asks for a share of the profile's count with
:func:`tests.profiles.examples`, so the thorough profile reaches it too.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("local", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if "HYPOTHESIS_PROFILE" in os.environ:
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif os.environ.get("CI"):
    settings.load_profile("ci")
else:
    settings.load_profile("local")
