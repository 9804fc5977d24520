"""The seed pipelines, one module each: FedAUXfdp (seed 000) and Distributed DP-Helmet (seed 002)."""

from .fedauxfdp import FedAuxFdpConfig, run_fedauxfdp
from .dphelmet import DpHelmetConfig, run_dphelmet

__all__ = ["DpHelmetConfig", "FedAuxFdpConfig", "run_dphelmet", "run_fedauxfdp"]
