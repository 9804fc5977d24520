"""FedGM (Electronics 13(10):1815, 2024): one-shot federated learning with dataset
condensation by gradient matching and synthetic labels released by RRWithPrior.

Label DP does NOT protect the synthetic images. The ε-label-DP guarantee covers only the
synthetic labels. The synthetic images are computed from the clients' private images and labels (they are initialised
from real records and optimised to reproduce their class-conditional gradients), are released in
the clear, and carry no DP guarantee at all; the seed's "visual privacy" argument (§3.3.1) is not
a DP argument. The audit module measures their membership leakage.

Client, one shot (through :func:`trainers.federation.run_clients`), after Zhao & Bilen (ICLR 2021,
"Dataset Condensation with Gradient Matching") and the FedGM paper's Algorithm 1:

1. For each class c the client holds: k-means (scikit-learn, explicit ``random_state``) on the
   class's images with ``images_per_class`` clusters; the real image nearest each centre
   initialises one synthetic image. A second k-means with ``real_batch_size`` clusters gives the
   representative real batch B_c used as the matching target (the seed's "minibatch from the
   centre of clusters", after DREAM, Liu et al. ICCV 2023). With ``clustering="pixels"`` it runs
   once, on pixels (fast default); with ``clustering="embeddings"`` B_c is re-chosen every
   ``recluster_interval`` matching steps by k-means on the current matching network's
   penultimate embeddings (FedGM Algorithm 1 lines 12-14 and §4.1: D_int = 10).
2. ``outer_iterations`` times: a freshly initialised ConvNet with instance normalisation; then
   ``matching_steps`` times: the loss Σ_c D(∇_θ ℓ(B_c), ∇_θ ℓ(S_c)) is minimised over the
   synthetic images S by SGD (momentum 0.5), and the network takes ``network_steps`` SGD steps on
   the synthetic set. D is Zhao et al.'s layer-wise distance
   (:func:`gradient_matching_distance`): per parameter tensor, per output channel (convolutions)
   or output unit (linear layers), 1 − cos of the flattened gradients, summed; biases and
   normalisation parameters are left out, as in the reference code. All classes' gradients come
   from one forward and one backward pass of C stacked copies of the network
   (:func:`_class_gradients`). The real gradients cannot be reused across matching steps: the
   network takes its steps between them. The seed matches 300 outer × 100 inner steps with 128
   real images per class; at ipc 10, 32 real images per class and width 32 one step costs ~0.1
   CPU s per client on one thread, so that budget is ~1 CPU hour per client (an extrapolation).
   The defaults are far smaller (two cores), and ``benchmarks/seed_fedgm.py`` runs larger budgets
   and the accuracy against the budget.

Clients: Dirichlet(``alpha``) label skew (``partition="dirichlet"``) or the seed's pathological
split (``partition="pathological"``: each client holds ``classes_per_client`` classes, #C = k of
Li et al. 2022; :func:`pathological_label_partition`).

Baselines (with ``baselines=True``; none of them is a release, all are trained exactly as the
server trains on the released set, with true labels): ``synthetic_true_labels`` (the synthetic set
without RR), ``kmeans_real`` (the real images that initialised it, i.e. no matching),
``random_real`` (``min(ipc, n_c)`` random real images per class per client, the seed's §4.6
"REAL" at equal upload size), ``real_pooled`` (all clients' real records pooled, the non-private
upper reference), and non-private FedAvg (multi-round and one-shot).

Labels, two stages (FedGM §4.4 and Algorithm 4; Ghazi et al. 2021 multi-stage training): each
client splits its synthetic set into two halves at random. Stage 1: the first half's labels go
through ``dpmech.mechanisms.rr_with_prior`` with the uniform prior (which is K-ary RR); the server trains a
stage-1 model on the union of the stage-1 sets and returns it. Stage 2: the second half's labels
go through ``dpmech.mechanisms.rr_with_prior`` with the prior softmax(stage-1 logits / T), which depends on
the stage-1 releases and the second half's images only, never on its labels. The server then
trains on the union of both stages, continuing from the stage-1 weights.

Ledger: each synthetic label is randomised exactly once and the halves are disjoint, so the
release is ε-label-DP by parallel composition (``dpmech.mechanisms.rr_with_prior_event``) under replace-one
on labels. Note that these labels are the classes the synthetic images were generated for, so
the statement is about the released synthetic labels; it bounds nothing about the private
records.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import torch
from rich.progress import Progress
from sklearn.cluster import KMeans

import dpmech
from dpmech import validation as check

from .. import networks
from ..data import FederatedSplit
from ..fedavg import FedAvgConfig, run_fedavg
from ..federation import ClientMessage, PipelineResult, ledger_from_messages, run_clients
from .clients import check_image_federation, client_datasets
from .targets import configured

IMAGES_NOT_PROTECTED = (
    "label DP does NOT protect the synthetic images: they are computed from the clients' private images "
    "and labels by gradient matching and released in the clear, with no formal guarantee"
)


CLUSTERINGS = ("pixels", "embeddings")
PARTITIONS = ("dirichlet", "pathological")


@dataclass(frozen=True)
class FedGmConfig:
    """FedGM settings. The seed uses ConvNet-3 with 128 filters, 300 matching iterations with 100
    inner loops, 128 representative real images per class, re-clustering on the matching
    network's embeddings every 10 iterations, synthetic-image SGD at 0.01 and ipc in {3, 5, 10}
    (IID) or {30, 50, 100} (pathological non-IID, one or two classes per client); the defaults
    are scaled to digits on two cores (pixels clustered once, 10 × 10 matching steps).

    ``clustering``: ``"pixels"`` (once) or ``"embeddings"`` (every ``recluster_interval`` matching
    steps). ``partition``: ``"dirichlet"`` (``alpha``) or ``"pathological"``
    (``classes_per_client`` classes per client)."""

    input_shape: tuple = (1, 8, 8)
    num_classes: int = 10
    num_clients: int = 5
    alpha: float = 0.5
    images_per_class: int = 10
    real_batch_size: int = 32
    outer_iterations: int = 10
    matching_steps: int = 10
    network_steps: int = 5
    synthetic_learning_rate: float = 0.1
    network_learning_rate: float = 0.01
    width: int = 32
    label_epsilon: float = 2.0
    prior_temperature: float = 0.5
    server_epochs: int = 30
    server_batch_size: int = 32
    server_learning_rate: float = 3e-3
    kmeans_initialisations: int = 3
    clustering: str = "pixels"
    recluster_interval: int = 10
    partition: str = "dirichlet"
    classes_per_client: int = 2
    fedavg_rounds: int = 10
    fedavg_local_epochs: int = 2
    one_shot_local_epochs: int = 10
    baselines: bool = True

    def __post_init__(self):
        check_image_federation(self)
        check.integer_scalar("images_per_class", self.images_per_class, 2)
        check.integer_scalar("real_batch_size", self.real_batch_size, 1)
        check.integer_scalar("outer_iterations", self.outer_iterations, 1)
        check.integer_scalar("matching_steps", self.matching_steps, 1)
        check.integer_scalar("network_steps", self.network_steps, 0)
        check.positive("synthetic_learning_rate", self.synthetic_learning_rate)
        check.positive("network_learning_rate", self.network_learning_rate)
        check.integer_scalar("width", self.width, 1)
        check.positive("label_epsilon", self.label_epsilon)
        check.positive("prior_temperature", self.prior_temperature)
        check.integer_scalar("server_epochs", self.server_epochs, 1)
        check.integer_scalar("server_batch_size", self.server_batch_size, 1)
        check.positive("server_learning_rate", self.server_learning_rate)
        check.integer_scalar("kmeans_initialisations", self.kmeans_initialisations, 1)
        check.choice("clustering", self.clustering, CLUSTERINGS)
        check.integer_scalar("recluster_interval", self.recluster_interval, 1)
        check.choice("partition", self.partition, PARTITIONS)
        if check.integer_scalar("classes_per_client", self.classes_per_client, 1) > self.num_classes:
            raise ValueError(f"classes_per_client must be between 1 and num_classes={self.num_classes} (got {self.classes_per_client})")
        check.integer_scalar("fedavg_rounds", self.fedavg_rounds, 1)
        check.integer_scalar("fedavg_local_epochs", self.fedavg_local_epochs, 1)
        check.integer_scalar("one_shot_local_epochs", self.one_shot_local_epochs, 1)
        check.boolean("baselines", self.baselines)

    @property
    def architecture(self) -> str:
        return f"conv-instance-{self.width}"


def pathological_label_partition(labels, num_clients, classes_per_client, num_classes, rng) -> np.ndarray:
    """Label-skew partition "#C = k" of Li et al. (ICDE 2022, NIID-Bench), the pathological
    non-IID split of the FedGM paper (§4.1, Table 1: each client holds only one or two classes).

    Client i holds class i mod K and ``classes_per_client`` − 1 other classes drawn uniformly
    without replacement; each class's records are shuffled and cut into equal parts, one per client
    holding it. Returns each record's client id, or −1 for a record of a class no client holds
    (possible only when ``num_clients`` < ``num_classes``): such records are left out, as in NIID-Bench.
    """
    labels = np.asarray(labels)
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    num_classes = check.integer_scalar("num_classes", num_classes, 1)
    if check.integer_scalar("classes_per_client", classes_per_client, 1) > num_classes:
        raise ValueError(f"classes_per_client must be between 1 and num_classes={num_classes} (got {classes_per_client})")
    if labels.ndim != 1 or labels.dtype.kind not in "iu" or (labels.size and (labels.min() < 0 or labels.max() >= num_classes)):
        raise ValueError(f"labels must be a 1-d array of integers in [0, {num_classes})")
    rng = check.generator("rng", rng)
    holds = np.zeros((num_clients, num_classes), dtype=bool)
    for client in range(num_clients):
        own = client % num_classes
        holds[client, own] = True
        holds[client, rng.choice(np.delete(np.arange(num_classes), own), classes_per_client - 1, replace=False)] = True
    assignment = np.full(labels.size, -1, dtype=np.int64)
    for label in range(num_classes):
        holders = np.flatnonzero(holds[:, label])
        if holders.size:
            parts = np.array_split(rng.permutation(np.flatnonzero(labels == label)), holders.size)
            assignment[np.concatenate(parts)] = np.repeat(holders, [part.size for part in parts])
    return assignment


def fedgm_clients(private, config: FedGmConfig, rng) -> list:
    """The clients' private datasets: Dirichlet(``alpha``) label skew or the pathological split."""
    if config.partition == "dirichlet":
        return client_datasets(private, config.num_clients, config.alpha, config.num_classes, rng)
    assignment = pathological_label_partition(private.labels, config.num_clients, config.classes_per_client,
                                              config.num_classes, np.random.default_rng(rng))
    return [private.subset(np.flatnonzero(assignment == client)) for client in range(config.num_clients)]


class SeedStreams(NamedTuple):
    """The independent streams one pipeline seed is split into."""

    partition: np.random.SeedSequence
    distillation: np.random.SeedSequence
    stage_one_clients: np.random.SeedSequence
    stage_one_server: np.random.SeedSequence
    stage_two_clients: np.random.SeedSequence
    stage_two_server: np.random.SeedSequence
    baselines: np.random.SeedSequence


def seed_streams(seed) -> SeedStreams:
    return SeedStreams(*np.random.SeedSequence(check.integer_scalar("seed", seed, 0)).spawn(len(SeedStreams._fields)))


def _representatives(features, count, rng, initialisations) -> np.ndarray:
    """Indices of the rows nearest the centres of a k-means with ``count`` clusters (all rows if fewer)."""
    if features.shape[0] <= count:
        return np.arange(features.shape[0])
    kmeans = KMeans(n_clusters=count, n_init=initialisations, random_state=int(rng.integers(0, 2**31 - 1))).fit(features)
    distances = ((features[:, None, :] - kmeans.cluster_centers_[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(distances, axis=0)


def gradient_matching_distance(real_gradients, synthetic_gradients) -> torch.Tensor:
    """Zhao, Mopuri & Bilen's layer-wise distance (ICLR 2021, eq. 10; ``distance_wb`` in their
    code, which FedGM's matching inherits): Σ over parameter tensors, and within a tensor over its
    output units, of 1 − cos between the real and synthetic gradients of that unit.

    Each gradient carries a leading class axis: shape (classes, out, ...) for a parameter of shape
    (out, ...). A convolution kernel's unit is one output channel (its in × kh × kw slice), a
    linear layer's one output row. Parameters with a single axis (biases, normalisation scales)
    contribute nothing, as in the reference code. The cosine's denominator is ‖a‖‖b‖ + 1e-6 as in
    the reference code, so a zero gradient row counts as distance 1 instead of NaN. Returns the
    sum over classes, units and tensors (a 0-d tensor, differentiable in both arguments).
    """
    total = torch.zeros(())
    for real, synthetic in zip(real_gradients, synthetic_gradients, strict=True):
        if real.shape != synthetic.shape:
            raise ValueError(f"real and synthetic gradients must have equal shapes (got {tuple(real.shape)} and {tuple(synthetic.shape)})")
        if real.dim() <= 2:
            continue
        real = real.reshape(real.shape[0], real.shape[1], -1)
        synthetic = synthetic.reshape(synthetic.shape[0], synthetic.shape[1], -1)
        cosine = (real * synthetic).sum(dim=-1) / (real.norm(dim=-1) * synthetic.norm(dim=-1) + 1e-6)
        total = total.to(cosine.device) + (1.0 - cosine).sum()
    return total


def _padded_rows(row_groups, device):
    """Row indices (classes, longest group) padded with the group's first row, and 0/1 weights
    marking the real entries, so that classes of unequal sizes go through one batched call."""
    width = max(rows.size for rows in row_groups)
    indices = np.stack([np.concatenate([rows, np.full(width - rows.size, rows[0])]) for rows in row_groups])
    weights = np.arange(width)[None, :] < np.array([rows.size for rows in row_groups])[:, None]
    return torch.as_tensor(indices, device=device), torch.as_tensor(weights, dtype=torch.float32, device=device)


def _stacked_logits(network, stacked, inputs) -> torch.Tensor:
    """The logits of C copies of ``network`` run side by side, copy c on class c's rows only.

    ``stacked`` maps each parameter name to a (C, *shape) tensor (copy c's parameters) and
    ``inputs`` is (C, R, channels, *spatial). The copies become one network with C channel
    groups: class c's row r sits in channel group c of batch row r, convolutions run with
    ``groups=C`` (block-diagonal kernels), the instance normalisation's groups are per channel and
    so per class, ReLU and pooling act per channel, and the last linear layer is one batched
    product. Returns (R, C, classes) logits. Supports the modules of
    ``networks.build_classifier``'s instance-norm ConvNet and MLP (``ValueError`` otherwise)."""
    copies, rows = inputs.shape[:2]
    x = inputs.transpose(0, 1).reshape(rows, copies * inputs.shape[2], *inputs.shape[3:])
    convolutions = {torch.nn.Conv1d: torch.nn.functional.conv1d, torch.nn.Conv2d: torch.nn.functional.conv2d}
    for name, module in network.named_children():
        weight, bias = stacked.get(f"{name}.weight"), stacked.get(f"{name}.bias")
        if type(module) in convolutions and module.groups == 1 and module.padding_mode == "zeros":
            x = convolutions[type(module)](x, weight.reshape(-1, *weight.shape[2:]), bias.reshape(-1), module.stride,
                                           module.padding, module.dilation, groups=copies)
        elif isinstance(module, torch.nn.GroupNorm):
            x = torch.nn.functional.group_norm(x, copies * module.num_groups, weight.reshape(-1), bias.reshape(-1), module.eps)
        elif isinstance(module, (torch.nn.ReLU, torch.nn.AvgPool1d, torch.nn.AvgPool2d)):
            x = module(x)
        elif isinstance(module, torch.nn.Flatten):
            # (R, C·channels, *spatial) → (R, C, channels·spatial): each copy's own flattening order
            x = x.reshape(rows, copies, -1)
        elif isinstance(module, torch.nn.Linear):
            x = torch.einsum("rci,coi->rco", x.reshape(rows, copies, -1), weight) + bias
        else:
            raise ValueError(f"network must be built from Conv, GroupNorm, ReLU, AvgPool, Flatten and Linear layers "
                             f"(got {type(module).__name__})")
    return x


def _class_gradients(network, parameters, inputs, targets, weights) -> dict:
    """For each class c (leading axis of ``inputs``, ``targets``, ``weights``) the gradient at
    ``parameters`` of class c's weighted mean cross-entropy Σ_r w_cr ℓ_cr / Σ_r w_cr, for all
    classes in one forward and one backward pass (:func:`_stacked_logits`; 1.6× less CPU than
    ``torch.func.vmap`` over classes at the benchmark's sizes). Instance normalisation keeps the
    rows independent, so padding rows of weight 0 change nothing. The result is differentiable in
    ``inputs`` where they require grad (the synthetic images), and carries no graph otherwise (the
    real batches)."""
    stacked = {name: value.detach().unsqueeze(0).expand(inputs.shape[0], *value.shape).clone().requires_grad_(True)
               for name, value in parameters.items()}
    logits = _stacked_logits(network, stacked, inputs)
    losses = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.transpose(0, 1).flatten(), reduction="none")
    loss = ((losses.reshape(weights.shape[1], weights.shape[0]) * weights.T).sum(dim=0) / weights.sum(dim=1)).sum()
    gradients = torch.autograd.grad(loss, list(stacked.values()), create_graph=inputs.requires_grad)
    return dict(zip(stacked, gradients))


def _embeddings(network, inputs) -> np.ndarray:
    """The network's penultimate representation (everything before the last linear layer)."""
    with torch.no_grad():
        return network[:-1](inputs).cpu().numpy()


def distil(features, labels, config: FedGmConfig, device, rng):
    """Gradient-matching condensation of one client's records (module docstring, steps 1–2).

    Returns (synthetic features as rows, the class each was generated for, the real rows that
    initialised them); ``min(ipc, n_c)`` images per class c the client holds.
    """
    rng = check.generator("rng", rng)
    generator = networks.torch_generator(rng)
    classes = np.unique(labels)
    if classes.size == 0:
        empty = np.empty((0, features.shape[1]))
        return empty, np.empty(0, dtype=np.int64), empty
    class_rows = [np.flatnonzero(labels == label) for label in classes]
    initial = np.concatenate([
        rows[_representatives(features[rows], config.images_per_class, rng, config.kmeans_initialisations)] for rows in class_rows
    ])
    synthetic_labels = labels[initial]
    real_inputs = networks.as_inputs(features, config.input_shape, device)
    synthetic = real_inputs[torch.as_tensor(initial, device=device)].clone().requires_grad_(True)
    targets = networks.as_targets(synthetic_labels, device)
    synthetic_index, synthetic_weights = _padded_rows([np.flatnonzero(synthetic_labels == label) for label in classes], device)
    synthetic_targets = targets[synthetic_index]

    def real_batches(network=None):
        # k-means per class on pixels, or on the current network's embeddings (FedGM §3.2.2, after DREAM)
        representatives = []
        for rows in class_rows:
            points = features[rows] if network is None else _embeddings(network, real_inputs[torch.as_tensor(rows, device=device)])
            representatives.append(rows[_representatives(points, config.real_batch_size, rng, config.kmeans_initialisations)])
        index, weights = _padded_rows(representatives, device)
        return real_inputs[index], networks.as_targets(labels, device)[index], weights

    real, real_targets, real_weights = real_batches()
    image_step = torch.optim.SGD([synthetic], lr=config.synthetic_learning_rate, momentum=0.5)
    for _ in range(config.outer_iterations):
        network = networks.build_classifier(config.architecture, config.input_shape, config.num_classes, generator, device)
        network_step = torch.optim.SGD(network.parameters(), lr=config.network_learning_rate)
        for step in range(config.matching_steps):
            if config.clustering == "embeddings" and step % config.recluster_interval == 0:
                real, real_targets, real_weights = real_batches(network)
            network.train()
            parameters = {name: value.detach() for name, value in network.named_parameters()}
            real_gradients = _class_gradients(network, parameters, real, real_targets, real_weights)
            synthetic_gradients = _class_gradients(network, parameters, synthetic[synthetic_index], synthetic_targets,
                                                   synthetic_weights)
            loss = gradient_matching_distance(list(real_gradients.values()), list(synthetic_gradients.values()))
            image_step.zero_grad()
            loss.backward()
            image_step.step()
            detached = synthetic.detach()
            for _ in range(config.network_steps):
                network_step.zero_grad()
                networks.cross_entropy(network(detached), targets).backward()
                network_step.step()
    return synthetic.detach().cpu().numpy().reshape(synthetic.shape[0], -1), synthetic_labels, features[initial]


def release_labels(true_labels, prior, config: FedGmConfig, rng):
    """The label release step: the only path from synthetic labels to a message.

    Each label goes once through ``dpmech.mechanisms.rr_with_prior`` at ``config.label_epsilon`` with its
    label-independent prior row; returns the noisy labels and the release's event
    (``dpmech.mechanisms.rr_with_prior_event``). Both stages call it, and the audit samples its canaries
    through it.
    """
    true_labels = np.asarray(true_labels)
    if true_labels.shape[0] == 0:
        return true_labels, dpmech.mechanisms.rr_with_prior_event(config.label_epsilon)
    return (dpmech.mechanisms.rr_with_prior(true_labels, prior, config.label_epsilon, rng),
            dpmech.mechanisms.rr_with_prior_event(config.label_epsilon))


def _distil_and_release_stage_one(features, labels, client, config, device, rng):
    """Condense, split the synthetic set in halves, release the first half with uniform-prior RR.

    Returns the stage-1 message, the second half (images, true labels) kept for stage 2, and the
    whole synthetic set with its true labels and the real rows that initialised it (kept by the
    simulation for the reference baselines only).
    """
    images, true_labels, initial = distil(features, labels, config, device, rng)
    order = rng.permutation(images.shape[0])
    first, second = order[: (order.size + 1) // 2], order[(order.size + 1) // 2:]
    uniform = np.full((first.size, config.num_classes), 1.0 / config.num_classes)
    noisy, event = release_labels(true_labels[first], uniform, config, rng)
    message = ClientMessage(
        client=client,
        payload={"images": images[first], "labels": noisy},
        events=(event,),
        description=f"stage 1: {first.size} synthetic images in the clear, labels by RRWithPrior (uniform prior); "
                    + IMAGES_NOT_PROTECTED,
    )
    return message, images[second], true_labels[second], (images, true_labels, initial)


def label_prior(model, images, config: FedGmConfig, device="cpu") -> np.ndarray:
    """softmax(model logits / T) on ``images``: the stage-2 prior, a function of the stage-1 model and
    the images only (never of the labels it is applied to). Rows sum to 1 in float64."""
    if images.shape[0] == 0:
        return np.empty((0, config.num_classes))
    logits = networks.predict_logits(model, networks.as_inputs(images, config.input_shape, device)).double()
    return torch.softmax(logits / config.prior_temperature, dim=1).cpu().numpy()


def _release_stage_two(images, true_labels, stage_one_state, client, config, device, rng):
    model = networks.load_state_arrays_(
        networks.build_classifier(config.architecture, config.input_shape, config.num_classes, torch.Generator(), device),
        stage_one_state,
    )
    prior = label_prior(model, images, config, device)
    noisy, event = release_labels(true_labels, prior, config, rng)
    return ClientMessage(
        client=client,
        payload={"images": images, "labels": noisy, "prior": prior},
        events=(event,),
        description=f"stage 2: {images.shape[0]} synthetic images in the clear, labels by RRWithPrior with the "
                    "stage-1 global model's prior; " + IMAGES_NOT_PROTECTED,
    )


def _random_real(data, images_per_class, rng):
    """``min(ipc, n_c)`` real rows of each class c the client holds, drawn uniformly without
    replacement: the condensation's natural baseline at the same upload size."""
    chosen = np.concatenate([rng.permutation(np.flatnonzero(data.labels == label))[:images_per_class]
                             for label in np.unique(data.labels)] or [np.empty(0, dtype=np.int64)])
    return data.features[chosen], data.labels[chosen]


def train_server_model(messages, config: FedGmConfig, seed, device="cpu", model=None):
    """Train (or, given ``model``, continue training) the server's ConvNet on the union of the
    messages' synthetic images and noisy labels. Uses only the messages and ``seed``."""
    generator = networks.torch_generator(np.random.default_rng(seed))
    if model is None:
        model = networks.build_classifier(config.architecture, config.input_shape, config.num_classes, generator, device)
    images = np.concatenate([m.payload["images"] for m in messages])
    labels = np.concatenate([m.payload["labels"] for m in messages])
    return networks.fit(model, networks.as_inputs(images, config.input_shape, device), networks.as_targets(labels, device),
                        epochs=config.server_epochs, batch_size=config.server_batch_size,
                        learning_rate=config.server_learning_rate, generator=generator)


def stage_one_model(stage_one_messages, config: FedGmConfig, seed, device="cpu"):
    """The stage-1 global model: a function of the stage-1 messages and the pipeline seed only."""
    return train_server_model(stage_one_messages, config, seed_streams(seed).stage_one_server, device)


def run_fedgm(split: FederatedSplit, config: FedGmConfig = FedGmConfig(), seed: int = 0, *, n_jobs=None,
              progress: bool = False, device="cpu", torch_threads=1) -> PipelineResult:
    """Run FedGM on ``split`` (private pool → clients; test set for evaluation).

    ``accuracy`` is the final server model's test accuracy; ``baselines["stage_one_model"]`` the
    stage-1 model's. With ``config.baselines`` the result also holds the non-private references of
    the module docstring (``synthetic_true_labels``, ``kmeans_real``, ``random_real``,
    ``real_pooled``, each trained as the server trains on the released set) and non-private FedAvg
    (``fedavg_rounds`` rounds) and one-shot FedAvg on the same clients and ConvNet.
    """
    if not isinstance(config, FedGmConfig):
        raise ValueError(f"config must be a FedGmConfig (got {type(config).__name__})")
    seed = check.integer_scalar("seed", seed, 0)
    warnings.warn(f"FedGM: {IMAGES_NOT_PROTECTED}", dpmech.UnprotectedReleaseWarning, stacklevel=2)
    streams = seed_streams(seed)
    clients = fedgm_clients(split.private, config, streams.partition)
    test_inputs = networks.as_inputs(split.test.features, config.input_shape, device)
    test_labels = networks.as_targets(split.test.labels, device)
    with networks.torch_threads(torch_threads), Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("FedGM", total=4 + 6 * config.baselines)
        stage_one = run_clients(
            _distil_and_release_stage_one, [(d.features, d.labels, i, config, device) for i, d in enumerate(clients)],
            streams.distillation, n_jobs=n_jobs,
        )
        bar.advance(task)
        stage_one_messages = [message for message, _, _, _ in stage_one]
        synthetic = [both for _, _, _, both in stage_one]
        model = stage_one_model(stage_one_messages, config, seed, device)
        stage_one_accuracy = networks.accuracy(model, test_inputs, test_labels)
        bar.advance(task)
        stage_one_state = networks.state_arrays(model)
        stage_two_messages = run_clients(
            _release_stage_two, [(images, labels, stage_one_state, i, config, device) for i, (_, images, labels, _) in enumerate(stage_one)],
            streams.stage_two_clients, n_jobs=n_jobs,
        )
        bar.advance(task)
        model = train_server_model(stage_one_messages + stage_two_messages, config, streams.stage_two_server, device, model)
        bar.advance(task)
        baselines = {"stage_one_model": stage_one_accuracy}
        if config.baselines:
            # Not releases: real or synthetic images with their true labels, trained exactly as the
            # released set is, to separate the costs of RR, of condensation and of the ipc budget.
            multi_round, one_shot, random_draws = streams.baselines.spawn(3)
            random_rng = np.random.default_rng(random_draws)
            references = {
                "synthetic_true_labels": [(images, labels) for images, labels, _ in synthetic],
                "kmeans_real": [(initial, labels) for _, labels, initial in synthetic],
                "random_real": [_random_real(data, config.images_per_class, random_rng) for data in clients],
                "real_pooled": [(data.features, data.labels) for data in clients],
            }
            for name, sets in references.items():
                true_labelled = [ClientMessage(i, {"images": images, "labels": labels}) for i, (images, labels) in enumerate(sets)]
                reference = train_server_model(true_labelled, config, streams.stage_two_server, device)
                baselines[name] = networks.accuracy(reference, test_inputs, test_labels)
                bar.advance(task)
            for name, rounds, epochs, sequence in (
                ("fedavg", config.fedavg_rounds, config.fedavg_local_epochs, multi_round),
                ("one_shot_fedavg", 1, config.one_shot_local_epochs, one_shot),
            ):
                fedavg_config = FedAvgConfig(architecture=config.architecture, rounds=rounds, local_epochs=epochs,
                                             batch_size=config.server_batch_size, learning_rate=config.server_learning_rate,
                                             optimizer="adam")
                run = run_fedavg(clients, config.input_shape, config.num_classes, fedavg_config, sequence, device=device,
                                 n_jobs=n_jobs, progress=False, description=name)
                baselines[name] = networks.accuracy(run.model, test_inputs, test_labels)
                bar.advance(task)

    messages = stage_one_messages + stage_two_messages
    ledger = ledger_from_messages(messages)
    record_level = dpmech.PrivacyLedger(dpmech.REPLACE_ONE).record(dpmech.NoGuaranteeEvent(IMAGES_NOT_PROTECTED))
    per_client = [
        {"records": len(data), "classes": int(np.unique(data.labels).size),
         "synthetic_images": int(first.payload["images"].shape[0] + second.payload["images"].shape[0]),
         "released_values": first.num_released_values + second.num_released_values}
        for data, first, second in zip(clients, stage_one_messages, stage_two_messages)
    ]
    notes = (
        IMAGES_NOT_PROTECTED + ". The epsilon-label-DP statement covers the released synthetic labels only.",
        f"Synthetic labels: epsilon = {config.label_epsilon:g} label DP (replace-one on labels); each label is "
        "randomised once by RRWithPrior and the two stages are disjoint halves (parallel composition).",
        "The FedAvg baselines release non-private model updates (no guarantee).",
        "The kmeans_real, random_real and real_pooled baselines are non-private references (real images with "
        "true labels), never released.",
        # FedGM condenses each client's own records; the public rows of a user's file would otherwise vanish unsaid.
        f"FedGM reads no public data: the split's {split.negative.features.shape[0] + split.distillation.features.shape[0]} "
        "public rows are not used.",
    )
    return PipelineResult(
        pipeline="fedgm",
        accuracy=networks.accuracy(model, test_inputs, test_labels),
        baselines=baselines,
        per_client=per_client,
        ledger=ledger,
        messages=messages,
        guarantees={"synthetic_labels": ledger.delta(config.label_epsilon, method="basic"),
                    "synthetic_images": record_level.epsilon(1e-5, method="basic")},
        notes=notes,
        config=asdict(config),
        seed=seed,
        units={"synthetic_labels": "label", "synthetic_images": "record"},
    )


def config_for(epsilon: float, delta: float, dataset: str) -> FedGmConfig:
    """The configuration for a target (ε, δ) on ``dataset`` (checked by
    :func:`trainers.pipelines.targets.pipeline_config`): ε of the label DP; labels are pure ε-DP, so δ is
    unused."""
    return configured(FedGmConfig, dataset, label_epsilon=epsilon)


def non_private_config(delta: float, dataset: str) -> tuple[None, str, str]:
    """The non-private baseline (:func:`trainers.pipelines.targets.non_private_config`): the configuration has
    no noiseless label release, but the baselines include the same synthesis with the true labels."""
    return (None, "synthetic_true_labels",
            "the pipeline's baseline synthetic_true_labels: the same synthesis with the true labels (no label noise)")
