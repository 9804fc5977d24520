"""Trainers: thin adapters (scikit-learn, torch on CPU or CUDA) and the seed pipelines.

Every privacy number they report comes from :mod:`dpmech`.
"""
