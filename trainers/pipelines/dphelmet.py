"""Distributed DP-Helmet (Kirschte, Meiser, Ardalan & Mohammadi, arXiv 2211.02003, 2022):
every user trains a projected-SGD linear model on frozen public features, adds its share of
Gaussian noise, and the noisy models are averaged blind by secure summation.

Protocol (one round; one :class:`~trainers.federation.ClientMessage` per user):

1. Public preparation as in FedAUXfdp: a feature map fitted on public data only, every feature
   clipped to the public bound c (the PSGD input clip).
2. |U| users each receive ``records_per_user`` = N private records (disjoint, uniformly at random).
3. User u trains Softmax-SLP-SGD (Alg. 1, :class:`~trainers.psgd.SoftmaxSLPTrainer`) or one-vs-rest
   Huber SVM-SGD (Alg. 2, :class:`~trainers.psgd.HuberSVMTrainer`) and adds N(0, σ_u² I) with
   σ_u = ``dpmech.mechanisms.calibrate_user_noise(ε, δ, s, |U|, t)`` = σ/√(t|U|), σ calibrated to s
   (Lemma 5.2). Its message is that noisy model, its input to secure summation.
4. The server learns only Σ_u f̃_u and divides by |U| (secure summation is simulated by a plain
   sum). Nothing is projected or clipped after the noise: DP-Helmet's code re-projects each noisy
   model, which Thm 5.3 does not cover (post-processing would, but the projection is not applied by
   the server to the sum: it changes each user's share before summation).

Scaling. The models are UNSCALED: each user releases its PSGD output θ_u, not N·θ_u as
DP-Helmet's newest code does. Record level, s = ``trainer.sensitivity(N)`` = 2L/(NΛ) (bolt-on
bound, Wu et al. 2017; seed Thm 4.1 / Ex. 3.16, with L the loss's Lipschitz constant alone, without the
seed's + RΛ: :func:`dpmech.sensitivity.psgd_bolt_on_sensitivity`); with every user holding the same N, scaling by N
multiplies model, sensitivity and noise by the same constant, so guarantee and predictions are
unchanged. User level (``privacy_unit="user"``, Cor. 5.5), s =
``dpmech.sensitivity.user_level_sensitivity(B)`` = 2B, with B the norm bound of the released
model: R for Softmax-SLP (the whole (W, b) is projected onto the R-ball) and √C·R for the SVM
(each class is projected onto the R-ball). For the N-scaled variant this would be 2·N·B, which
the "2R" comment in DP-Helmet's code misses.

Privacy. Record level: one record of one user, replace-one, with the honest fraction t and |U|
public. The ledger holds ``dpmech.mechanisms.blind_averaging_event``: the honest noise on the average
against s/|U| (Lemma 5.1), so the guarantee holds whatever the dishonest users do. It covers the
secure sum only: one user's noisy model seen alone carries just σ_u = σ/√(t|U|). With
``privacy_unit="record"`` the result also states two user-level guarantees for the same noise:
group privacy over the user's N records (Cor. 5.4, sensitivity N·s) and Cor. 5.5 (2B/|U|).

Client selection (user level). k of the |U| users uniformly without replacement: the blind average
of the k, amplified by sampling without replacement (replace-one; :func:`selection_user_noise`).
Each user with probability q (Poisson): add/remove-one users, the selected models summed over the
public q|U| with shares that give the sum the same noise for any number of participants, an empty
round included (:func:`poisson_settings`, :func:`poisson_average`, :func:`poisson_round_event`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional, Sequence

import numpy as np
import torch

import dpmech
import dpmech.blind_averaging
import dpmech.distributed_discrete_gaussian
import dpmech.sensitivity
from dpmech import ADD_REMOVE_ONE, REPLACE_ONE, GaussianEvent, NoGuaranteeEvent, PrivacyLedger
from dpmech import validation as check
from dpmech.client_selection import client_selection_event
from dpmech.events import PrivacyEvent
from dpmech.ledger_calibration import calibrate_ledger

from ..data import LabelledData, PrivateData
from ..federation import ClientMessage, PipelineResult, ledger_from_messages, run_clients
from ..psgd import HUBER_SVM, SOFTMAX, HuberSVMTrainer, SoftmaxSLPTrainer
from ._common import FeatureSets, epsilon_or_infinity, linear_accuracy, split_and_map
from .targets import configured

RECORD = "record"
USER = "user"
CONTINUOUS = "continuous"
DISCRETE = "discrete"
NOISES = (CONTINUOUS, DISCRETE)
# Stands in an event's description until the release names its randomness source.
_RANDOMNESS_PLACEHOLDER = "stated by each release"


@dataclass(frozen=True)
class DpHelmetConfig:
    """Configuration of :func:`run_dphelmet`; validated on construction (ValueError).

    ``model``: ``"softmax"`` (Softmax-SLP-SGD) or ``"huber_svm"`` (SVM-SGD). ``regularization``
    Λ, ``projection_radius`` R, ``huber_h``, ``epochs``, ``batch_size`` as in
    :func:`trainers.psgd.projected_sgd`; the input clip c is ``feature_bound``. ``epsilon``
    (``math.inf``: no noise, no guarantee), ``delta``, ``honest_fraction`` t in (0, 1] (the seed
    uses 0.5), ``privacy_unit`` ``"record"`` or ``"user"``. ``noise``: ``"continuous"`` (float
    Gaussian shares) or ``"discrete"`` (each user's model rounded to the grid ``granularity``·Z^d
    plus an exact discrete Gaussian share; :func:`dpmech.blind_averaging.discrete_blind_average`);
    in process ``granularity`` is required, on Flower ``None`` lets the SecAgg+ encoding choose it. ``device`` is the torch device of
    the users' PSGD. Data options as in :class:`~trainers.pipelines.fedauxfdp.FedAuxFdpConfig`;
    only the public sets of the split are used (for the feature map). ``one_class_per_user``: seed
    002's strongly non-IID ablation (§7 RQ3, Tbl. 2): every user's N records come from one class,
    the users spread over the classes as evenly as |U| allows (see :func:`prepare_users`).
    ``clients_per_round`` k (None: every user): the server selects k of the |U| users uniformly without
    replacement (:func:`selected_users`); only they train and release, their shares are calibrated for
    k participants on the amplified user-level ledger (:func:`selection_user_noise`;
    :func:`dpmech.client_selection.client_selection_event`, one round, replace-one).
    ``participation_probability`` q (None: no Poisson selection; not with ``clients_per_round``): each
    user takes part independently with probability q (:func:`selected_users`), add/remove-one users, the
    release the fixed-denominator sum of :func:`poisson_average` calibrated on the amplified ledger
    (:func:`poisson_settings`). Either selection: user level, continuous noise and
    ``calibration="analytic"`` only.
    """

    num_users: int = 10
    records_per_user: int = 50
    model: str = SOFTMAX
    regularization: float = 1.0
    projection_radius: float = 1.0
    huber_h: float = 0.1
    epochs: int = 20
    batch_size: int = 10
    epsilon: float = 1.0
    delta: float = 1e-5
    honest_fraction: float = 0.5
    privacy_unit: str = RECORD
    calibration: str = "analytic"
    noise: str = "continuous"
    granularity: Optional[float] = None
    num_components: Optional[int] = 16
    feature_bound: float = 1.0
    clip_features: bool = True
    test_fraction: float = 0.2
    public_fraction: float = 0.2
    negative_fraction: float = 0.2
    device: str = "cpu"
    one_class_per_user: bool = False
    clients_per_round: Optional[int] = None
    participation_probability: Optional[float] = None

    @classmethod
    def paper(cls, **overrides) -> "DpHelmetConfig":
        """The DP-Helmet paper's settings rescaled to the public input clip c = 1, for features of a public
        pre-trained network (:mod:`trainers.features`); ``overrides`` replace any field.

        * Λ = 0.01, R = 10: the seed's grid for Softmax-SLP-SGD is Λ ∈ [8e-4, 2.5e-2] and
          R ∈ [3.5, 35] once rescaled to c = 1 (Λ' = Λ/c², R' = R·c; issue 16's reading of
          Kirschte et al. §6); the defaults (Λ = 1, R = 1) are about 1,200× stronger regularisation,
          under which one user reaches ~20 % without noise on MNIST-1D. The same values are used
          for the Huber SVM here (its own grid is in the same range).
        * 1,000 users × 50 records, ε = 1, δ = 1e-5, t = 0.5: Kirschte et al., abstract / RQ1.
        * 100 epochs, batch 20: Kirschte et al. §6 (issue 16).
        * ``num_components=None``: the features are already the public network's, clipped to
          c = 1; the split's public part is then unused (public_fraction 0.02, the smallest the
          split accepts meaningfully), test 0.1.
        The defaults differ because they must give meaningful digits runs with ~10 users of
        PCA(16) features; with Λ = 0.01 and N = 50 the record-level sensitivity 2L/(NΛ) = 8 is
        drowned unless |U| is in the hundreds.
        """
        settings = dict(num_users=1000, records_per_user=50, model=SOFTMAX, regularization=0.01,
                        projection_radius=10.0, epochs=100, batch_size=20, epsilon=1.0, delta=1e-5,
                        honest_fraction=0.5, num_components=None, test_fraction=0.1, public_fraction=0.02)
        settings.update(overrides)
        return cls(**settings)

    def __post_init__(self):
        check.integer_scalar("num_users", self.num_users, 1)
        check.integer_scalar("records_per_user", self.records_per_user, 1)
        check.choice("model", self.model, (SOFTMAX, HUBER_SVM))
        for name in ("regularization", "projection_radius", "huber_h", "feature_bound"):
            value = check.positive(name, getattr(self, name))
            if np.ndim(value):
                raise ValueError(f"{name} must be a single finite number > 0 (got an array)")
        check.integer_scalar("epochs", self.epochs, 1)
        check.integer_scalar("batch_size", self.batch_size, 1)
        object.__setattr__(self, "epsilon", epsilon_or_infinity("epsilon", self.epsilon))
        check.open_unit_interval("delta", self.delta)
        check.in_interval("honest_fraction", self.honest_fraction, 0.0, 1.0, low_open=True, high_open=False)
        check.choice("privacy_unit", self.privacy_unit, (RECORD, USER))
        check.choice("calibration", self.calibration, ("analytic", "classic"))
        check.choice("noise", self.noise, NOISES)
        if self.noise == DISCRETE:
            if self.epsilon == math.inf:
                raise ValueError("epsilon must be finite with noise='discrete'")
            if self.granularity is not None:
                check.single("granularity", check.positive("granularity", self.granularity))
                object.__setattr__(self, "granularity", float(self.granularity))
        elif self.granularity is not None:
            raise ValueError(f"granularity applies to noise='discrete' only (got {self.granularity!r})")
        if self.calibration == "classic" and not self.epsilon < 1.0:
            raise ValueError(f"epsilon must be < 1 with calibration='classic' (got {self.epsilon!r})")
        if self.num_components is not None:
            check.integer_scalar("num_components", self.num_components, 1)
        check.boolean("clip_features", self.clip_features)
        check.boolean("one_class_per_user", self.one_class_per_user)
        if not isinstance(self.device, str):
            raise ValueError(f"device must be a torch device name such as 'cpu' or 'cuda' (got {self.device!r})")
        if self.clients_per_round is not None:
            check.integer_scalar("clients_per_round", self.clients_per_round, 1)
            if self.clients_per_round > self.num_users:
                raise ValueError(f"clients_per_round must be in [1, num_users = {self.num_users}] "
                                 f"(got {self.clients_per_round})")
            if self.participation_probability is not None:
                raise ValueError("clients_per_round and participation_probability exclude each other: give k of n "
                                 "(uniform) or the probability q (Poisson), not both")
        if self.participation_probability is not None:
            object.__setattr__(self, "participation_probability", float(check.single("participation_probability", (
                check.in_interval("participation_probability", self.participation_probability, 0.0, 1.0,
                                  low_open=True, high_open=False)))))
        if self.selection is not None:
            name = self.selection
            # The amplification is proven for the user-level event (one selected user's whole model changes);
            # the discrete shares' event is an (ε, δ) point calibrated without it.
            if self.privacy_unit != USER:
                raise ValueError(f"{name} needs privacy_unit='user' (got {self.privacy_unit!r}): the "
                                 "selection is accounted as sampling users")
            if self.noise != CONTINUOUS:
                raise ValueError(f"{name} needs noise='continuous' (got {self.noise!r})")
            # The amplified round is calibrated on its ledger (selection_user_noise), not by a closed form.
            if self.calibration != "analytic":
                raise ValueError(f"{name} needs calibration='analytic' (got {self.calibration!r}): the "
                                 "selected round is calibrated on its amplified ledger")

    @property
    def participants(self) -> int:
        """How many users train and release: ``clients_per_round`` when set, else ``num_users`` (with Poisson
        selection the count is random: see :attr:`poisson_denominator`)."""
        return self.num_users if self.clients_per_round is None else self.clients_per_round

    @property
    def selection(self) -> Optional[str]:
        """The field of the round's client selection, ``"clients_per_round"`` (uniform) or
        ``"participation_probability"`` (Poisson); None when every user takes part."""
        if self.clients_per_round is not None:
            return "clients_per_round"
        return None if self.participation_probability is None else "participation_probability"

    @property
    def relation(self) -> str:
        """The neighbouring relation of the round's guarantee: add/remove-one users under Poisson selection
        (who takes part is itself private), replace-one otherwise."""
        return REPLACE_ONE if self.participation_probability is None else ADD_REMOVE_ONE

    @property
    def poisson_denominator(self) -> float:
        """q·|U|, the expected number of participants under Poisson selection: the public constant the
        selected users' sum is divided by (:func:`poisson_average`)."""
        if self.participation_probability is None:
            raise ValueError("poisson_denominator needs participation_probability (Poisson selection)")
        return self.participation_probability * self.num_users


def user_trainer(config: DpHelmetConfig, num_classes: int, seed: int):
    """The PSGD trainer every user runs (its randomness from ``seed``)."""
    common = dict(num_classes=num_classes, regularization=config.regularization, input_clip=config.feature_bound,
                  projection_radius=config.projection_radius, epochs=config.epochs, batch_size=config.batch_size,
                  seed=seed, device=config.device)
    if config.model == SOFTMAX:
        return SoftmaxSLPTrainer(**common)
    return HuberSVMTrainer(huber_h=config.huber_h, **common)


def model_norm_bound(config: DpHelmetConfig, num_classes: int) -> float:
    """B, the bound on the Frobenius norm of a released (unnoised) model: R for Softmax-SLP (one
    projection of (W, b)), √C·R for the one-vs-rest SVM (one projection per class)."""
    if config.model == SOFTMAX:
        return config.projection_radius
    return math.sqrt(num_classes) * config.projection_radius


def local_sensitivity(config: DpHelmetConfig, num_classes: int) -> float:
    """s of one user's unscaled model, from dpmech: record level ``trainer.sensitivity(N)``,
    user level ``user_level_sensitivity(B)`` under replace-one; under add/remove-one users (Poisson
    selection) B, the norm of the model a user's presence adds or removes."""
    if config.relation == ADD_REMOVE_ONE:
        return model_norm_bound(config, num_classes)
    if config.privacy_unit == USER:
        return dpmech.sensitivity.user_level_sensitivity(model_norm_bound(config, num_classes))
    return user_trainer(config, num_classes, 0).sensitivity(config.records_per_user)


@dataclass(frozen=True)
class UserSettings:
    """What every user needs (picklable for joblib): the config, C, σ_u (0 when ε = ∞) and the event;
    with discrete noise also γ and σ² of the share in grid units (σ_u is then γσ, for information)."""

    config: DpHelmetConfig
    num_classes: int
    user_noise_std: float
    event: object
    granularity: Optional[float] = None
    sigma_squared_grid: Optional[Fraction] = None


@contextlib.contextmanager
def _one_torch_thread():
    # A user's PSGD multiplies (batch × d) by (d × C) matrices; spreading such tiny products over
    # torch's intra-op pool costs far more than it saves (1000 steps took 34 s with 2 threads and
    # 0.02 s with 1 on a loaded 2-core machine). Parallelism comes from joblib across users.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def release_user_model(user: int, model: np.ndarray, settings: UserSettings, rng) -> ClientMessage:
    """The user's release step: the only path from its trained model to its message.

    Adds this user's noise share N(0, σ_u² I) (none when ε = ∞) and attaches the blind-averaging
    event; with ``noise="discrete"`` rounds the model to the grid and adds a discrete Gaussian share
    (payload also ``grid_share``, the int64 share in grid units), and the event names the randomness. The message holds ``noisy_model`` of shape (C, d + 1), the user's input to secure
    summation. Audits sample releases through this function.
    """
    if settings.sigma_squared_grid is not None:
        share, randomness = dpmech.distributed_discrete_gaussian.grid_share(
            model, settings.granularity, settings.sigma_squared_grid, rng)
        event = dataclasses.replace(settings.event, description=settings.event.description.replace(
            _RANDOMNESS_PLACEHOLDER, randomness))
        return ClientMessage(
            user, {"noisy_model": share * settings.granularity, "grid_share": share}, (event,),
            f"{settings.config.model} PSGD model rounded to the grid {settings.granularity!r} plus this user's "
            f"discrete Gaussian share N_Z(0, {settings.sigma_squared_grid}) in grid units; input to secure summation",
        )
    noisy = model + rng.normal(0.0, settings.user_noise_std, size=model.shape) if settings.user_noise_std > 0 else model
    return ClientMessage(
        user, {"noisy_model": noisy}, (settings.event,),
        f"{settings.config.model} PSGD model plus this user's noise share σ_u = "
        f"{settings.user_noise_std:.4g}; input to secure summation (the server learns only the sum)",
    )


def dphelmet_user(user: int, local: PrivateData, settings: UserSettings, rng):
    """One user's work: train, then :func:`release_user_model`. Returns (message, local model); the
    noiseless model stays with the user (the pipeline reads it only for the non-private baseline)."""
    trainer = user_trainer(settings.config, settings.num_classes, int(rng.integers(2**63 - 1)))
    with _one_torch_thread():
        model = trainer.train(local.features, local.labels)
    return release_user_model(user, model, settings, rng), model


def secure_average(messages: Sequence[ClientMessage]) -> np.ndarray:
    """Σ_u f̃_u / |U|: what secure summation reveals, divided by |U| (simulated by a plain sum)."""
    if not messages:
        raise ValueError("messages must hold at least one user message")
    return np.sum([m.payload["noisy_model"] for m in messages], axis=0) / len(messages)


@dataclass(frozen=True)
class PreparedUsers:
    """The public preparation of a round, a function of (data, config, seed) only: the feature sets,
    each user's record indices, the class count, the users' settings and their Generators' seed;
    ``selected``, the users who train and release (every user, or the ``clients_per_round`` drawn by
    :func:`selected_users`), and ``round_event``, the ledger event of the round (the selected users'
    blind average as sampled from all |U|; None without selection, where the messages' events are it);
    ``empty_round_seed``, under Poisson selection, the seed of the noise an empty round releases
    (:func:`poisson_average`)."""

    features: FeatureSets
    shares: np.ndarray
    num_classes: int
    sensitivity: float
    settings: UserSettings
    user_seed: np.random.SeedSequence
    selected: np.ndarray
    round_event: Optional[PrivacyEvent] = None
    empty_round_seed: Optional[np.random.SeedSequence] = None

    def local(self, user: int) -> PrivateData:
        return self.features.private.subset(self.shares[user])


def one_class_shares(labels: np.ndarray, num_users: int, records_per_user: int, num_classes: int, rng) -> np.ndarray:
    """(|U|, N) record indices, every user's N records from one class (Kirschte et al.'s non-IID ablation).

    User u is given class ``π(u) mod C`` for a random permutation π of the users, so every class
    has ⌊|U|/C⌋ or ⌈|U|/C⌉ users; each class's records are shuffled and cut into disjoint blocks
    of N. Raises ValueError when a class has fewer records than its users need.
    """
    classes = rng.permutation(num_users) % num_classes
    shares = np.empty((num_users, records_per_user), dtype=np.int64)
    for label in range(num_classes):
        users = np.flatnonzero(classes == label)
        pool = np.flatnonzero(labels == label)
        if users.size * records_per_user > pool.size:
            raise ValueError(f"one_class_per_user: class {label} has {pool.size} private records, fewer than its "
                             f"{users.size} users × records_per_user = {users.size * records_per_user}")
        shares[users] = rng.permutation(pool)[:users.size * records_per_user].reshape(users.size, records_per_user)
    return shares


def selection_masks(num_users: int, rounds: int, rng: np.random.Generator, *, clients_per_round: Optional[int] = None,
                    participation_probability: Optional[float] = None) -> np.ndarray:
    """(rounds, |U|) booleans, row r marking the users who take part in round r, drawn from ``rng``
    independently of the data and of the other rounds, with the law
    :func:`dpmech.client_selection.client_selection_event` accounts for: ``clients_per_round`` k, every
    k-subset equally likely (a uniform permutation per row, its first k); ``participation_probability`` q,
    each user independently with probability q (a row may be empty); neither, every user."""
    num_users = check.integer_scalar("num_users", num_users, 1)
    rounds = check.integer_scalar("rounds", rounds, 1)
    if clients_per_round is not None and participation_probability is not None:
        raise ValueError("clients_per_round and participation_probability exclude each other (give one or neither)")
    if clients_per_round is not None:
        if not 1 <= check.integer_scalar("clients_per_round", clients_per_round, 1) <= num_users:
            raise ValueError(f"clients_per_round must be in [1, num_users = {num_users}] (got {clients_per_round})")
        order = rng.permuted(np.broadcast_to(np.arange(num_users), (rounds, num_users)), axis=1)
        masks = np.zeros((rounds, num_users), dtype=bool)
        np.put_along_axis(masks, order[:, :clients_per_round], True, axis=1)
        return masks
    if participation_probability is not None:
        check.in_interval("participation_probability", participation_probability, 0.0, 1.0, low_open=True,
                          high_open=False)
        return rng.random((rounds, num_users)) < participation_probability
    return np.ones((rounds, num_users), dtype=bool)


def selected_users(num_users: int, clients_per_round: Optional[int], rng: np.random.Generator, *,
                   participation_probability: Optional[float] = None) -> np.ndarray:
    """The users of one round, sorted: k = ``clients_per_round`` of |U| uniformly without replacement, or
    each with probability ``participation_probability`` (:func:`selection_masks`, one row)."""
    return np.flatnonzero(selection_masks(num_users, 1, rng, clients_per_round=clients_per_round,
                                          participation_probability=participation_probability)[0])


def poisson_round_event(average_sigma: float, config: DpHelmetConfig, sensitivity: float) -> tuple[GaussianEvent, PrivacyEvent]:
    """(the release's Gaussian, the round's event) under Poisson selection, add/remove-one users.

    The release is Σ_{u∈S} f̃_u / D with D = q|U| public (:func:`poisson_average`). Adding or removing one
    user adds or removes its model, of norm at most B (:func:`model_norm_bound`), so the sum's L2
    sensitivity is ``sensitivity`` = B (:func:`local_sensitivity`) and the release's B/D (rounded up); its
    honest noise is at least ``average_sigma``
    whatever S is, an empty S included (:func:`poisson_settings`). Given S the release is then a Gaussian
    mechanism on the sampled users, and with S drawn by independent coin flips of probability q the round
    is the Poisson-subsampled Gaussian (Zhu, Dong & Wang 2022), one round:
    ``client_selection_event(GaussianEvent(σ, B/D), rounds=1, participation_probability=q)``."""
    # A sensitivity must not be understated: one step up covers the quotient's rounding.
    event = GaussianEvent(average_sigma, math.nextafter(sensitivity / config.poisson_denominator, math.inf),
                          neighbouring=ADD_REMOVE_ONE)
    return event, client_selection_event(event, rounds=1, participation_probability=config.participation_probability)


def poisson_settings(settings: "UserSettings", participants: int) -> "UserSettings":
    """``settings`` with σ_u for a Poisson round of ``participants`` = m selected users.

    Each selected user adds N(0, σ_u² I), σ_u² = (σD)²/(t·max(m, 1)) with σ = the event's σ on the release's
    scale and D = q|U| (Lemma 5.2 of Kirschte et al. 2022 with |U| replaced by m): at least ⌈tm⌉ honest users
    leave honest noise of variance >= (σD)² on the sum, and the whole noise of the sum is N(0, (σD)²/t) for
    every m >= 1, so how many users took part does not show in the noise. An empty round (m = 0) releases the
    zero model with the noise of a one-user round, the same N(0, (σD)²/t) (:func:`poisson_average`), so the
    release's law given S is the same Gaussian on Σ_{u∈S} f_u for every S, the empty one included, as the
    Poisson-subsampled event assumes. Unchanged when ε = ∞ (no noise)."""
    if not isinstance(settings.event, GaussianEvent):
        return settings
    participants = check.integer_scalar("participants", participants, 0)
    sum_sigma = settings.event.sigma * settings.config.poisson_denominator
    # σD/√(t·m) errs by a few ulps (product, square root, quotient); two steps up keep the honest noise >= σD.
    share = sum_sigma / math.sqrt(settings.config.honest_fraction * max(participants, 1))
    return dataclasses.replace(settings, user_noise_std=math.nextafter(math.nextafter(share, math.inf), math.inf))


def poisson_average(messages: Sequence[ClientMessage], settings: "UserSettings", model_shape: tuple,
                    rng: np.random.Generator) -> np.ndarray:
    """Σ_{u∈S} f̃_u / (q|U|): what secure summation of a Poisson round reveals, divided by the public
    expected count q|U| (the fixed-denominator estimator of McMahan, Ramage, Talwar & Zhang 2018), never by
    the realised |S|, which would depend on whether a user took part. ``settings`` are the round's
    (:func:`poisson_settings` for its m); with no message (an empty round) the release is the zero model of
    ``model_shape`` through :func:`release_user_model` with the one-user share, drawn from ``rng``."""
    if messages:
        total = np.sum([m.payload["noisy_model"] for m in messages], axis=0)
    else:
        total = release_user_model(-1, np.zeros(model_shape), poisson_settings(settings, 0), rng).payload["noisy_model"]
    return total / settings.config.poisson_denominator


def selection_user_noise(epsilon: float, delta: float, sensitivity: float, config: DpHelmetConfig) -> float:
    """σ_u for k = ``config.clients_per_round`` of |U| users: the smallest (within 1e-3) whose round,
    ``client_selection_event(blind_averaging_event(σ_u, s, k, t), rounds=1, k, |U|)`` under replace-one,
    has certified δ(ε) <= δ (:func:`dpmech.ledger_calibration.calibrate_ledger`). Without selection
    (Lemma 5.2) σ_u would be :func:`dpmech.mechanisms.calibrate_user_noise` for k users; sampling k of
    |U| without replacement amplifies it (Balle, Barthe & Gaboardi 2018, Thm. 10), so σ_u is smaller."""
    participants = config.participants

    def round_ledger(user_noise_std: float) -> PrivacyLedger:
        event = dpmech.mechanisms.blind_averaging_event(user_noise_std, sensitivity, participants,
                                                        config.honest_fraction, neighbouring=REPLACE_ONE)
        return PrivacyLedger(REPLACE_ONE).record(client_selection_event(
            event, rounds=1, clients_per_round=participants, num_clients=config.num_users))

    unamplified = dpmech.mechanisms.calibrate_user_noise(epsilon, delta, sensitivity, participants,
                                                         config.honest_fraction, method="analytic")
    # The unamplified σ_u meets the target already (amplification never hurts), so the answer lies below 2×.
    return float(calibrate_ledger(round_ledger, epsilon, delta, unamplified * 1e-3, unamplified * 2.0,
                                  guess=unamplified))


def poisson_average_sigma(epsilon: float, delta: float, sensitivity: float, config: DpHelmetConfig) -> float:
    """σ of the release Σ_{u∈S} f̃_u / (q|U|) under Poisson selection with probability q: the smallest
    (within 1e-3) whose round :func:`poisson_round_event` has certified δ(ε) <= δ under add/remove-one
    (:func:`dpmech.ledger_calibration.calibrate_ledger`). The unsampled Gaussian's σ for the same
    sensitivity (:func:`dpmech.calibrate_gaussian`) meets the target already, so the answer lies below it."""
    def round_ledger(average_sigma: float) -> PrivacyLedger:
        return PrivacyLedger(ADD_REMOVE_ONE).record(poisson_round_event(average_sigma, config, sensitivity)[1])

    unamplified = dpmech.calibrate_gaussian(epsilon, delta, sensitivity / config.poisson_denominator)
    return float(calibrate_ledger(round_ledger, epsilon, delta, unamplified * 1e-3, unamplified * 2.0,
                                  guess=unamplified))


def prepare_users(data: LabelledData, config: DpHelmetConfig, seed: int) -> PreparedUsers:
    """Split ``data``, map it to public features, give each user its records and calibrate σ_u.

    The users' records are drawn uniformly at random without replacement, or with
    ``config.one_class_per_user`` by :func:`one_class_shares`. Either way this only decides which
    data each simulated user holds; the record-level guarantee (replace-one inside one user's N
    records, any label) does not depend on it."""
    if not isinstance(config, DpHelmetConfig):
        raise ValueError(f"config must be a DpHelmetConfig (got {type(config).__name__})")
    seed = check.integer_scalar("seed", seed, 0)
    # A SeedSequence's children are numbered, so the fourth (the selection's) and the fifth (an empty Poisson
    # round's noise) leave the first three unchanged.
    split_seed, partition_seed, user_seed, selection_seed, empty_round_seed = np.random.SeedSequence(seed).spawn(5)
    selected = selected_users(config.num_users, config.clients_per_round, np.random.default_rng(selection_seed),
                              participation_probability=config.participation_probability)
    sets, num_classes = split_and_map(data, config, split_seed)
    needed = config.num_users * config.records_per_user
    if needed > len(sets.private):
        raise ValueError(
            f"num_users × records_per_user = {needed} must be <= the {len(sets.private)} private records"
        )
    if config.one_class_per_user:
        shares = one_class_shares(sets.private.labels, config.num_users, config.records_per_user, num_classes,
                                  np.random.default_rng(partition_seed))
    else:
        order = np.random.default_rng(partition_seed).permutation(len(sets.private))[:needed]
        shares = order.reshape(config.num_users, config.records_per_user)

    sensitivity = local_sensitivity(config, num_classes)
    if config.noise == DISCRETE:
        if config.granularity is None:
            raise ValueError("granularity (γ > 0) is required with noise='discrete' in process "
                             "(on Flower the SecAgg+ encoding can choose it)")
        dimension = num_classes * (sets.test.features.shape[1] + 1)
        settings = discrete_user_settings(config, num_classes, sensitivity, dimension, config.granularity,
                                          dpmech.blind_averaging.honest_shares(config.num_users, config.honest_fraction),
                                          config.delta)
        return PreparedUsers(sets, shares, num_classes, sensitivity, settings, user_seed, selected)
    round_event = None
    if config.epsilon == math.inf:
        user_noise_std, event = 0.0, NoGuaranteeEvent("models averaged without noise (ε = ∞)")
    elif config.participation_probability is not None:
        event, round_event = poisson_round_event(poisson_average_sigma(config.epsilon * (1.0 - 1e-9), config.delta,
                                                                       sensitivity, config), config, sensitivity)
        # The shares are set for the m users this round selected (poisson_settings); the event does not depend on m.
        settings = poisson_settings(UserSettings(config, num_classes, event.sigma, event), selected.size)
        return PreparedUsers(sets, shares, num_classes, sensitivity, settings, user_seed, selected, round_event,
                             empty_round_seed)
    elif config.clients_per_round is None:
        # Calibrated for ε(1 − 1e-9): the ledger's certified upper end carries evaluation margins of order
        # 1e-11, and the round must report at most the configured ε (as FedAUXfdp's budget split does).
        user_noise_std = dpmech.mechanisms.calibrate_user_noise(config.epsilon * (1.0 - 1e-9), config.delta, sensitivity,
                                                     config.num_users, config.honest_fraction, method=config.calibration)
        event = dpmech.mechanisms.blind_averaging_event(user_noise_std, sensitivity, config.num_users, config.honest_fraction,
                                             neighbouring=REPLACE_ONE)
    else:
        user_noise_std = selection_user_noise(config.epsilon * (1.0 - 1e-9), config.delta, sensitivity, config)
        event = dpmech.mechanisms.blind_averaging_event(user_noise_std, sensitivity, config.participants,
                                                        config.honest_fraction, neighbouring=REPLACE_ONE)
        round_event = client_selection_event(event, rounds=1, clients_per_round=config.participants,
                                             num_clients=config.num_users)
    settings = UserSettings(config, num_classes, user_noise_std, event)
    return PreparedUsers(sets, shares, num_classes, sensitivity, settings, user_seed, selected, round_event)


def discrete_user_settings(config: DpHelmetConfig, num_classes: int, sensitivity: float, dimension: int,
                           granularity: float, num_shares: int, delta: float) -> UserSettings:
    """Settings of discrete shares on the grid γ whose sum of ``num_shares`` honest shares meets
    (ε(1 − 1e-9), δ(1 − 1e-9)), from dpmech (:func:`dpmech.blind_averaging.calibrate_discrete_user_noise`).

    The event is the (ε, δ) point at δ(1 − 1e-9): the ledger's exact accountant needs an event's δ
    strictly below the δ it is asked at, and a true (ε, δ') point implies (ε, δ) for δ >= δ'.
    """
    event_delta = delta * (1.0 - 1e-9)
    sigma_squared = dpmech.blind_averaging.calibrate_discrete_user_noise(
        config.epsilon * (1.0 - 1e-9), event_delta, sensitivity, granularity, dimension, num_shares)
    event = dpmech.blind_averaging.discrete_blind_averaging_event(
        event_delta, sigma_squared, sensitivity, granularity, dimension, num_shares, neighbouring=REPLACE_ONE,
        randomness=_RANDOMNESS_PLACEHOLDER)
    return UserSettings(config, num_classes, granularity * math.sqrt(sigma_squared), event, granularity, sigma_squared)


def protection_notes(config: DpHelmetConfig, sensitivity: float) -> list:
    """What every DP-Helmet round's guarantee protects and rests on, in process or on Flower."""
    unit = "one user's whole dataset" if config.privacy_unit == USER else "one record of one user"
    poisson = config.participation_probability is not None
    notes = [
        f"Protected: {unit}, {'add/remove-one (whether a user takes part at all)' if poisson else 'replace-one'}; "
        f"|U| = {config.num_users}, N = {config.records_per_user} per user and t = {config.honest_fraction:g} are public.",
        f"Models are unscaled; local sensitivity s = {sensitivity:.6g} "
        + (f"(user level B, add/remove-one: a user's whole model), released sum over q|U| = "
           f"{config.poisson_denominator:.6g}: {sensitivity / config.poisson_denominator:.6g}." if poisson else
           f"({'user level 2B, Cor. 5.5' if config.privacy_unit == USER else 'record level 2L/(NΛ)'}), "
           f"average {sensitivity / config.participants:.6g}."),
        "The guarantee is for the secure sum: a single noisy model seen alone carries only σ_u.",
        "No projection after the noise.",
    ]
    if config.clients_per_round is not None:
        notes.append(
            f"Client selection: {config.clients_per_round} of the {config.num_users} users, uniformly without "
            "replacement from a seeded Generator, train and are averaged; the guarantee is the selected users' "
            "blind average amplified by sampling users without replacement (replace-one; Balle, Barthe & Gaboardi "
            "2018, Thm. 10). It protects against whoever sees the average only (the released model): the server "
            "that selected the users knows who is in the sum and gets the selected users' guarantee, \"basic\". "
            "The amplification assumes every selected user follows the protocol but for dropping its noise: a user "
            "that wrote what it learns of the selection into its model would publish it.")
    if poisson:
        notes.append(
            f"Client selection: each of the {config.num_users} users takes part independently with probability "
            f"q = {config.participation_probability:g} (Poisson, a seeded Generator); the selected users' noisy models "
            f"are summed and divided by q|U| = {config.poisson_denominator:g}, not by how many took part (McMahan, "
            "Ramage, Talwar & Zhang 2018), each adding σ_u² = (σq|U|)²/(t·m) for the m selected, so the sum's noise is the same for "
            "every m; a round that selects nobody releases the zero model with that same noise. The guarantee is "
            "the Poisson-subsampled Gaussian (add/remove-one users; Zhu, Dong & Wang 2022). It protects against "
            "whoever sees the released model only: the server that selected the users knows who took part, and "
            "against it a user's participation is not hidden: \"basic\" is its guarantee, the release without "
            "amplification under replace-one given the selection (a user's model swapped, 2B/D on the release). "
            "The amplification assumes every selected user follows the protocol but for dropping its noise: a user "
            "that wrote m, which it is told to set its share, into its model would publish it.")
    return notes


def run_dphelmet(data: LabelledData, config: DpHelmetConfig = DpHelmetConfig(), seed: int = 0, *,
                 n_jobs: Optional[int] = None, progress: bool = False) -> PipelineResult:
    """Run Distributed DP-Helmet on ``data``; ``accuracy`` is the blind average's test accuracy.

    ``baselines``: "no noise" (the same users' noiseless models averaged; not private) and
    "single user (noisy)" (the mean test accuracy of one noisy local model used alone).
    ``guarantees``: "basic" and "tight" for the configured unit (the ledger holds one Gaussian
    event, so they agree up to the accountants' precision), plus, for ``privacy_unit="record"``,
    "user, group privacy" (Cor. 5.4) and "user, Cor. 5.5" for the same noise.
    """
    prepared = prepare_users(data, config, seed)
    sets, num_classes, sensitivity, settings = prepared.features, prepared.num_classes, prepared.sensitivity, prepared.settings
    user_noise_std, event = settings.user_noise_std, settings.event
    # Only the selected users train and release (all of them without client selection).
    outputs = run_clients(dphelmet_user, [(int(u), prepared.local(u), settings) for u in prepared.selected],
                          prepared.user_seed, n_jobs=n_jobs, progress="DP-Helmet users" if progress else None
                          ) if prepared.selected.size else []
    messages = [message for message, _ in outputs]
    model_shape = (num_classes, sets.test.features.shape[1] + 1)
    local_models = np.stack([model for _, model in outputs]) if outputs else np.zeros((0, *model_shape))
    if config.participation_probability is None:
        average = secure_average(messages)
    else:
        average = poisson_average(messages, settings, model_shape, np.random.default_rng(prepared.empty_round_seed))

    # "basic" is the selected users' release as if every user took part (no amplification; the basic
    # accountant has no sampled events); "tight" the round's ledger.
    ledger = ledger_from_messages(messages, config.relation) if messages else PrivacyLedger(config.relation).record(event)
    if config.participation_probability is not None and isinstance(event, GaussianEvent):
        # The server knows S, so a selected user's presence shows (δ >= q under add/remove-one): its guarantee is
        # replace-one given S, a user's model swapped for another of norm <= B, 2B/D on the release (twice the
        # event's rounded-up B/D, exact in doubles), whose honest noise is still >= σ (poisson_settings).
        server = GaussianEvent(event.sigma, 2.0 * event.sensitivity, neighbouring=REPLACE_ONE)
        guarantees = {"basic": PrivacyLedger(REPLACE_ONE).record(server).epsilon(config.delta, method="basic")}
    else:
        guarantees = {"basic": ledger.epsilon(config.delta, method="basic")}
    if prepared.round_event is not None:
        # The messages' event is the release of the selected users; the round is that release on the users
        # drawn k of |U| (replace-one) or each with probability q (add/remove-one): the amplified event.
        ledger = PrivacyLedger(config.relation).record(prepared.round_event)
    guarantees["tight"] = ledger.epsilon(config.delta, method="auto")
    notes = protection_notes(config, sensitivity)
    if not messages:
        notes.append("No user was selected this round (Poisson selection): the released model is the zero model "
                     "plus the round's noise, N(0, (σD)²/t) on the sum, as for any selection; it carries no data.")
    if config.epsilon == math.inf:
        notes.append("epsilon = ∞: the models are averaged WITHOUT noise, so there is no DP guarantee (ε = ∞).")
        warnings.warn(f"DP-Helmet: {notes[-1]}", dpmech.NoGuaranteeWarning, stacklevel=2)
    elif config.privacy_unit == RECORD:
        guarantees["user, group privacy"] = ledger.group_privacy(config.records_per_user).epsilon(config.delta)
        user_sum_sensitivity = dpmech.sensitivity.user_level_sensitivity(model_norm_bound(config, num_classes))
        if config.noise == DISCRETE:
            # The same shares against the user-level sensitivity 2B of the sum (the average is post-processing).
            user_event = dpmech.blind_averaging.discrete_blind_averaging_event(
                settings.event.delta, settings.sigma_squared_grid, user_sum_sensitivity, settings.granularity,
                local_models[0].size, dpmech.blind_averaging.honest_shares(config.num_users, config.honest_fraction),
                neighbouring=REPLACE_ONE, randomness=messages[0].events[0].description.rsplit("randomness: ", 1)[-1])
        else:
            user_event = GaussianEvent(event.sigma, dpmech.mechanisms.average_sensitivity(user_sum_sensitivity, config.num_users))
        guarantees["user, Cor. 5.5"] = PrivacyLedger(REPLACE_ONE).record(user_event).epsilon(config.delta)
    per_client = [
        {
            "client": message.client,
            "num_records": config.records_per_user,
            "local_model_accuracy": linear_accuracy(model, sets.test),
            "noisy_model_accuracy": linear_accuracy(message.payload["noisy_model"], sets.test),
            "user_noise_std": user_noise_std,
        }
        for message, model in zip(messages, local_models)
    ]
    return PipelineResult(
        pipeline="dphelmet",
        accuracy=linear_accuracy(average, sets.test),
        # An empty round trained no model: it has no baseline to compare with.
        baselines={
            "no noise": linear_accuracy(local_models.mean(axis=0), sets.test),
            "single user (noisy)": float(np.mean([m["noisy_model_accuracy"] for m in per_client])),
        } if messages else {},
        per_client=per_client,
        ledger=ledger,
        messages=messages,
        guarantees=guarantees,
        notes=tuple(notes),
        config=dataclasses.asdict(config),
        seed=seed,
        units={name: USER if name.startswith("user") else config.privacy_unit for name in guarantees},
    )


def config_for(epsilon: float, delta: float, dataset: str) -> DpHelmetConfig:
    """The configuration for a total target (ε, δ) on ``dataset`` (checked by
    :func:`trainers.pipelines.targets.pipeline_config`): (ε, δ) of the blind average."""
    return configured(DpHelmetConfig, dataset, epsilon=epsilon, delta=delta)


def non_private_config(delta: float, dataset: str) -> tuple[DpHelmetConfig, None, str]:
    """The non-private baseline (:func:`trainers.pipelines.targets.non_private_config`): the same pipeline
    averaged without noise (ε = ∞), trained once more."""
    return (configured(DpHelmetConfig, dataset, epsilon=math.inf, delta=delta), None,
            "the same pipeline averaged without noise (ε = ∞)")
