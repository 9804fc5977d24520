"""The clients' private datasets: the private pool cut by Dirichlet(α) label skew."""

from __future__ import annotations

import numpy as np

from ..data import PrivateData, dirichlet_label_partition


def client_datasets(private: PrivateData, num_clients: int, alpha: float, num_classes: int, rng) -> list:
    """One :class:`PrivateData` per client, by :func:`trainers.data.dirichlet_label_partition`."""
    assignment = dirichlet_label_partition(private.labels, num_clients, alpha, rng, num_classes=num_classes)
    return [private.subset(np.flatnonzero(assignment == client)) for client in range(num_clients)]
