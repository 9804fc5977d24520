"""Trainers: thin adapters (scikit-learn, torch on CPU or CUDA) and the seed pipelines.

Every privacy number they report comes from :mod:`dpmech`.
"""

from dpmech.optional_dependencies import ensure_installed

ensure_installed("torch", "sklearn", "joblib", "mnist1d", "threadpoolctl", purpose="dpmech's trainers")
del ensure_installed
