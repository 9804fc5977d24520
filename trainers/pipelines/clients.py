"""The clients' private datasets: the private pool cut by Dirichlet(α) label skew; the image pipelines' shared
settings checked."""

from __future__ import annotations

import numpy as np

from dpmech import validation as check

from .. import networks
from ..data import PrivateData, dirichlet_label_partition


def check_image_federation(config) -> None:
    """Check the settings the image pipelines' configs share (FedGM, FedMD-NFDP, Fed-ZDA): ``input_shape``
    (stored back normalised on the frozen config), ``num_classes`` >= 2, ``num_clients`` >= 1 and the Dirichlet
    ``alpha`` > 0 of :func:`client_datasets`."""
    object.__setattr__(config, "input_shape", networks.validated_input_shape(config.input_shape))
    check.integer_scalar("num_classes", config.num_classes, 2)
    check.integer_scalar("num_clients", config.num_clients, 1)
    check.positive("alpha", config.alpha)


def client_datasets(private: PrivateData, num_clients: int, alpha: float, num_classes: int, rng) -> list:
    """One :class:`PrivateData` per client, by :func:`trainers.data.dirichlet_label_partition`."""
    assignment = dirichlet_label_partition(private.labels, num_clients, alpha, rng, num_classes=num_classes)
    return [private.subset(np.flatnonzero(assignment == client)) for client in range(num_clients)]
