"""FedMD-NFDP (Sun & Lyu, IJCAI 2021): federated model distillation on public data, with
each party's private training restricted to a random subsample ("noise-free DP").

Protocol (Sun & Lyu, Algorithm 1; the losses as in FedMD_clean's ``FedMD.py``):

1. Initialisation, per party i (one-shot, through :func:`trainers.federation.run_clients`):
   transfer learning on the labelled public set for ``public_epochs``, then draw the NFDP
   subsample of k of its n_i records (``dpmech.mechanisms.nfdp_subsample``, with or without replacement)
   and train on it for ``initial_epochs`` (T1). It sends its logits on the first alignment set.
2. Collaboration, R rounds. The server averages the parties' logits (unweighted mean of logits)
   and draws the next alignment subset of the public data. Each party digests for T2 epochs
   (MAE/L1 loss between its logits and the aggregate on the current alignment set), revisits its
   subsample for T3 epochs (cross-entropy), and sends its logits on the next alignment set.

The parties' models may differ (``architectures`` is cycled over the parties): only logits on
public inputs are exchanged.

Privacy. Everything party i releases is a function of its subsample, the public data and the
other parties' releases, so its whole transcript is post-processing of the subsample and carries
the guarantee of ``dpmech.mechanisms.nfdp_guarantee`` once: Theorem 1 (without replacement)
(ln((n+1)/(n+1−k)), k/n) or Theorem 2 (with replacement) (k·ln((n+1)/n), 1 − ((n−1)/n)^k), under
add/remove-one. A record lives at one party, so the record-level guarantee is the worst party's
(the smallest n_i). That guarantee is vacuous: δ >= 1/n, and publishing the k sampled records in
the clear meets it (see :mod:`dpmech.nfdp`); the result's notes carry dpmech's warning.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
import torch
from rich.progress import Progress

import dpmech
from dpmech import validation as check

from .. import networks
from ..data import FederatedSplit
from ..federation import ClientMessage, PipelineResult, ledger_from_messages, run_clients
from .clients import check_image_federation, client_datasets
from .registry import get_pipeline
from .targets import configured


@dataclass(frozen=True)
class FedMdNfdpConfig:
    """FedMD-NFDP settings (Sun & Lyu use N = 10 parties, R = 20, T1 = 20, T2 = 2, T3 = 1, and an
    alignment set of 5000 public examples; the defaults are scaled to digits on two cores)."""

    input_shape: tuple = (1, 8, 8)
    num_classes: int = 10
    num_clients: int = 5
    alpha: float = 10.24
    subsample_size: int = 60
    replacement: bool = False
    architectures: tuple = ("mlp-32", "mlp-64", "conv-none-8")
    public_epochs: int = 2
    initial_epochs: int = 20
    rounds: int = 5
    alignment_size: int = 200
    digest_epochs: int = 2
    revisit_epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 1e-2

    def __post_init__(self):
        check_image_federation(self)
        check.integer_scalar("subsample_size", self.subsample_size, 1)
        check.boolean("replacement", self.replacement)
        if isinstance(self.architectures, str) or len(self.architectures) == 0:
            raise ValueError(f"architectures must be a non-empty tuple of architecture names (got {self.architectures!r})")
        object.__setattr__(self, "architectures", tuple(networks.validated_architecture(a, "architectures") for a in self.architectures))
        check.integer_scalar("public_epochs", self.public_epochs, 0)
        check.integer_scalar("initial_epochs", self.initial_epochs, 1)
        check.integer_scalar("rounds", self.rounds, 1)
        check.integer_scalar("alignment_size", self.alignment_size, 1)
        check.integer_scalar("digest_epochs", self.digest_epochs, 0)
        check.integer_scalar("revisit_epochs", self.revisit_epochs, 0)
        check.integer_scalar("batch_size", self.batch_size, 1)
        check.positive("learning_rate", self.learning_rate)

    def architecture(self, client: int) -> str:
        return self.architectures[client % len(self.architectures)]


def _model(state, architecture, config, device):
    model = networks.build_classifier(architecture, config.input_shape, config.num_classes, torch.Generator(), device)
    return networks.load_state_arrays_(model, state)


def _train(model, features, targets, loss, epochs, config, generator, device):
    inputs = networks.as_inputs(features, config.input_shape, device)
    targets = networks.as_targets(targets, device) if loss is networks.cross_entropy else torch.as_tensor(targets, device=device)
    networks.fit(model, inputs, targets, loss=loss, epochs=epochs, batch_size=config.batch_size,
                 learning_rate=config.learning_rate, generator=generator)


def _logits(model, features, config, device) -> np.ndarray:
    return networks.predict_logits(model, networks.as_inputs(features, config.input_shape, device)).cpu().numpy()


def party_datasets(split: FederatedSplit, config: FedMdNfdpConfig, seed: int) -> list:
    """The parties' private datasets: the split's private pool cut by Dirichlet(α) from the run's partition seed."""
    partition = np.random.SeedSequence(check.integer_scalar("seed", seed, 0)).spawn(3 + config.rounds)[0]
    return client_datasets(split.private, config.num_clients, config.alpha, config.num_classes, partition)


def party_guarantee(num_records: int, config: FedMdNfdpConfig) -> dpmech.mechanisms.NfdpGuarantee:
    """The NFDP guarantee (and its event) of a party with ``num_records`` records under ``config``."""
    return dpmech.mechanisms.nfdp_guarantee(num_records, config.subsample_size, config.replacement)


def initial_phase(features, labels, public_features, public_labels, alignment_features, client, config, device, rng):
    """Transfer learning on public data, NFDP subsample, T1 epochs on it, logits on X_p[0].

    The subsample (``dpmech.mechanisms.nfdp_subsample``) is the party's privacy mechanism: everything it
    releases afterwards is a function of that subsample and public data. Returns the model state,
    the subsample's indices and the logits; audits sample the phase through this function.
    """
    generator = networks.torch_generator(rng)
    architecture = config.architecture(client)
    model = networks.build_classifier(architecture, config.input_shape, config.num_classes, generator, device)
    _train(model, public_features, public_labels, networks.cross_entropy, config.public_epochs, config, generator, device)
    subsample = dpmech.mechanisms.nfdp_subsample(len(labels), config.subsample_size, config.replacement, rng)
    _train(model, features[subsample], labels[subsample], networks.cross_entropy, config.initial_epochs, config, generator, device)
    return networks.state_arrays(model), subsample, _logits(model, alignment_features, config, device)


def _collaboration_round(state, subsample_features, subsample_labels, alignment_features, consensus,
                         next_alignment_features, client, config, device, rng):
    """Digest (L1 to the consensus logits, T2 epochs), revisit (subsample, T3 epochs), predict."""
    generator = networks.torch_generator(rng)
    model = _model(state, config.architecture(client), config, device)
    _train(model, alignment_features, consensus, networks.mean_absolute_error, config.digest_epochs, config, generator, device)
    _train(model, subsample_features, subsample_labels, networks.cross_entropy, config.revisit_epochs, config, generator, device)
    return networks.state_arrays(model), _logits(model, next_alignment_features, config, device)


def _test_accuracy(state, client, split, config, device) -> float:
    model = _model(state, config.architecture(client), config, device)
    return networks.accuracy(model, networks.as_inputs(split.test.features, config.input_shape, device),
                             networks.as_targets(split.test.labels, device))


def run_fedmd_nfdp(split: FederatedSplit, config: FedMdNfdpConfig = FedMdNfdpConfig(), seed: int = 0, *,
                   n_jobs=None, progress: bool = False, device="cpu", torch_threads=1) -> PipelineResult:
    """Run FedMD-NFDP on ``split`` (private pool → parties, distillation set → public data).

    Returns a :class:`~trainers.federation.PipelineResult` whose ``accuracy`` is the parties' mean
    test accuracy after the last round; ``baselines["before_collaboration"]`` is the same mean
    after the initialisation phase. Raises ValueError when a party holds fewer than k records
    (without replacement) or no record, the public set is smaller than ``alignment_size``, or it has
    no labels (a public/private split without ``y_public``: every party trains on them first).
    """
    if not isinstance(config, FedMdNfdpConfig):
        raise ValueError(f"config must be a FedMdNfdpConfig (got {type(config).__name__})")
    seed = check.integer_scalar("seed", seed, 0)
    public = split.distillation
    # Refused before any training: every party's first step trains on the public labels.
    public_labels = public.required_labels(get_pipeline("fedmd-nfdp").public_labels_use)
    if config.alignment_size > len(public):
        raise ValueError(f"alignment_size must be <= the public set size {len(public)} (got {config.alignment_size})")
    _, server, initial, *rounds = np.random.SeedSequence(seed).spawn(3 + config.rounds)
    clients = party_datasets(split, config, seed)
    sizes = [len(data) for data in clients]
    if min(sizes) == 0 or (not config.replacement and config.subsample_size > min(sizes)):
        raise ValueError(
            f"subsample_size must be <= the smallest party's record count {min(sizes)} without replacement, and every "
            f"party needs a record (party sizes {sizes}, subsample_size {config.subsample_size})"
        )
    server_rng = np.random.default_rng(server)
    alignments = [public.features[server_rng.choice(len(public), config.alignment_size, replace=False)]
                  for _ in range(config.rounds + 1)]

    with networks.torch_threads(torch_threads), Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task("FedMD-NFDP", total=config.rounds + 1)
        initialised = run_clients(
            initial_phase,
            [(data.features, data.labels, public.features, public_labels, alignments[0], client, config, device)
             for client, data in enumerate(clients)],
            initial, n_jobs=n_jobs,
        )
        bar.advance(task)
        states = [state for state, _, _ in initialised]
        subsamples = [clients[i].subset(indices) for i, (_, indices, _) in enumerate(initialised)]
        sent = [[logits] for _, _, logits in initialised]
        accuracy_before = [_test_accuracy(state, i, split, config, device) for i, state in enumerate(states)]
        for round_index, round_seed in enumerate(rounds):
            consensus = np.mean([logits[-1] for logits in sent], axis=0)
            updated = run_clients(
                _collaboration_round,
                [(states[i], subsamples[i].features, subsamples[i].labels, alignments[round_index], consensus,
                  alignments[round_index + 1], i, config, device) for i in range(config.num_clients)],
                round_seed, n_jobs=n_jobs,
            )
            states = [state for state, _ in updated]
            for logits, (_, new_logits) in zip(sent, updated):
                logits.append(new_logits)
            bar.advance(task)

    guarantees = [party_guarantee(n, config) for n in sizes]
    messages = [
        ClientMessage(
            client=i,
            payload={"alignment_logits": np.stack(sent[i])},
            events=(guarantees[i].event,),
            description=f"logits on the {config.rounds + 1} public alignment sets, one per round "
                        f"({config.architecture(i)}, trained on k = {config.subsample_size} of n = {sizes[i]} records)",
        )
        for i in range(config.num_clients)
    ]
    worst = max(range(config.num_clients), key=lambda i: (guarantees[i].delta, guarantees[i].epsilon))
    warnings.warn(f"FedMD-NFDP (party {worst}, n = {sizes[worst]}): {guarantees[worst].warning}",
                  dpmech.VacuousGuaranteeWarning, stacklevel=2)
    # Parallel composition: a record lives at one party, so the worst party's ledger is the record-level one.
    ledger = ledger_from_messages([messages[worst]], neighbouring=dpmech.ADD_REMOVE_ONE)
    accuracies = [_test_accuracy(state, i, split, config, device) for i, state in enumerate(states)]
    per_client = [
        {"architecture": config.architecture(i), "records": sizes[i], "subsample_size": config.subsample_size,
         "epsilon": guarantees[i].epsilon, "delta": guarantees[i].delta,
         "accuracy_before_collaboration": accuracy_before[i], "accuracy": accuracies[i]}
        for i in range(config.num_clients)
    ]
    notes = (
        f"NFDP warning (party {worst}, n = {sizes[worst]}): {guarantees[worst].warning}",
        "The guarantee is the theorem's (epsilon, delta) under add/remove-one for the worst party; the mechanism adds "
        "no noise and the whole guarantee sits in delta >= 1/n, so it must not be compared with noise-based "
        "(epsilon, 1e-5) results.",
    )
    return PipelineResult(
        pipeline="fedmd_nfdp",
        accuracy=float(np.mean(accuracies)),
        baselines={"before_collaboration": float(np.mean(accuracy_before))},
        per_client=per_client,
        ledger=ledger,
        messages=messages,
        guarantees={"nfdp": ledger.delta(guarantees[worst].epsilon, method="basic")},
        notes=notes,
        config=asdict(config),
        seed=seed,
    )


def config_for(epsilon: float, delta: float, dataset: str) -> FedMdNfdpConfig:
    """The configuration on ``dataset`` (checked by :func:`trainers.pipelines.targets.pipeline_config`): NFDP
    has no noise to calibrate, its (ε, δ) follow from the party size and the subsample size, so the target
    has no effect and the report states the pipeline's own claim."""
    return configured(FedMdNfdpConfig, dataset)


def non_private_config(delta: float, dataset: str) -> tuple[None, None, str]:
    """No non-private baseline (:func:`trainers.pipelines.targets.non_private_config`): NFDP adds no noise."""
    return None, None, "none: NFDP adds no noise (its privacy comes from subsampling), so there is no noise to remove"
