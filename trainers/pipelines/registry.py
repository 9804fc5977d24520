"""The one registry of the seed pipelines, and the one way to run any of them.

Every seed pipeline is a module of :mod:`trainers.pipelines` with the same shape:
a frozen, validated config class; a public preparation of the round from
(data, config, seed); a training step per client; a release step that is the
only path from a client's private data to its
:class:`~trainers.federation.ClientMessage` (noise added, events attached);
a server step; and a run function whose ledger is built from the messages'
own events. Each module also declares how a target budget configures it:
``config_for(epsilon, delta, dataset)`` and ``non_private_config(delta, dataset)``
(:mod:`trainers.pipelines.targets` checks the arguments and calls them). The audits
in :mod:`audits.attacks.pipelines` sample releases through those release steps.
This registry names them, with what can be known without importing a pipeline
(torch): its default dataset, whether it trains on public-network features,
whether its noise is calibrated to the target, and its Flower app. The command
line, the main job, the Flower simulation and the audits read it, and nothing
else lists the pipelines.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Tuple

from dpmech import validation as check

if TYPE_CHECKING:
    from ..federation import PipelineResult


@dataclass(frozen=True)
class Pipeline:
    """One seed pipeline: its command-line name, its module and what its run function takes.

    ``takes_split``: the run function takes a :class:`~trainers.data.FederatedSplit` made by
    ``split_federated(data, seed)`` rather than the raw labelled data. ``fit_function_name``: a
    function of the run function's arguments that trains the round up to its release step and
    returns an object whose ``release(config, *, baselines)`` returns the run's result at any
    noise setting (output perturbation: FedAUXfdp), or None (:class:`PipelineFit`).

    ``default_dataset``: the dataset a round uses when none is named (a name of
    ``trainers.data.DATASETS``). ``trains_on_features``: the pipeline trains linear heads on
    public-network features, as its seed does, so it alone can use a dataset of such features
    (at its config class's ``paper()`` settings). ``calibrated``: its noise is calibrated to the
    target ε (its ``config_for`` varies with ε; the main job draws the ε → accuracy curve).
    ``flower_function``: ``"module:function"`` of :mod:`trainers.flower` that runs a round in
    Flower's simulation engine, or None (no Flower app). ``flower_config_fields``: (field, value)
    pairs the main job sets on the config of a round it deploys on Flower.

    ``client_selection_fields``: (field, value) pairs the main job sets, besides ``clients_per_round``,
    on the config of a round whose server selects k of its clients per round (``dpmech run
    --clients-per-round``; the amplified user-level accounting is the pipeline's own), or None where
    selection does not apply; ``no_client_selection`` then says why.

    ``public_labels_use``: why the pipeline's run (and its audit) reads the labels of the public rows, or ""
    where it never does: it then runs on a public/private split without ``y_public`` (``dpmech run --data``),
    and the main job refuses such a split, with this reason, for a pipeline that does.
    """

    name: str
    module: str
    config_class_name: str
    run_function_name: str
    takes_split: bool
    seed_paper: str
    fit_function_name: Optional[str] = None
    default_dataset: str = "digits"
    trains_on_features: bool = False
    calibrated: bool = False
    flower_function: Optional[str] = None
    flower_config_fields: Tuple[Tuple[str, str], ...] = ()
    client_selection_fields: Optional[Tuple[Tuple[str, str], ...]] = None
    no_client_selection: str = ""
    public_labels_use: str = ""

    def __post_init__(self) -> None:
        if (self.client_selection_fields is None) == (not self.no_client_selection):
            raise ValueError(f"{self.name}: give client_selection_fields or no_client_selection (why), exactly one")

    def load(self):
        """The pipeline's module (imported on first use: the pipelines import torch)."""
        return importlib.import_module(f"trainers.pipelines.{self.module}")

    @property
    def config_class(self) -> type:
        return getattr(self.load(), self.config_class_name)

    @property
    def run_function(self):
        return getattr(self.load(), self.run_function_name)


PIPELINES = {
    pipeline.name: pipeline
    for pipeline in (
        # FedAUXfdp's per-client output perturbation needs its seed's scale (>= 2,000 records per client) for a
        # meaningful accuracy at ε = 1: on digits (~54 records per client) ε = 1 leaves it near chance.
        Pipeline("fedauxfdp", "fedauxfdp", "FedAuxFdpConfig", "run_fedauxfdp", False, "000 FedAUXfdp", "fit_fedauxfdp",
                 default_dataset="mnist1d-cnn", trains_on_features=True, calibrated=True,
                 flower_function="fedauxfdp:run_flower_fedauxfdp",
                 no_client_selection="one round in which every client's noisy heads reach the server one by one "
                                     "(record level, per client), so selecting clients hides nothing to credit"),
        # DP-Helmet at its seed's scale (1,000 users, 100 epochs) takes minutes, so it stays on digits unless asked.
        # On Flower its shares are discrete, so that the SecAgg+ sum is certified at the target (issue 17).
        Pipeline("dphelmet", "dphelmet", "DpHelmetConfig", "run_dphelmet", False, "002 Distributed DP-Helmet",
                 trains_on_features=True, calibrated=True, flower_function="dphelmet:run_flower_dphelmet",
                 flower_config_fields=(("noise", "discrete"),),
                 # Client selection is accounted at user level: the selected users' blind average, amplified.
                 client_selection_fields=(("privacy_unit", "user"),)),
        # The others read public rows as features only: FedAUXfdp distils on them and takes D⁻ as label 0 whatever
        # its labels, DP-Helmet fits its feature map on them, FedGM and Fed-ZDA (without its oracle) never use them.
        Pipeline("fedmd-nfdp", "fedmd_nfdp", "FedMdNfdpConfig", "run_fedmd_nfdp", True, "001 FedMD-NFDP",
                 no_client_selection="its guarantee is each party's record-level NFDP (subsampling without noise) "
                                     "and every party's logits reach the server one by one",
                 public_labels_use="FedMD-NFDP trains every party on the labelled public data before its private "
                                   "data (FedMD's transfer learning, Li & Wang 2019)"),
        Pipeline("fedgm", "fedgm", "FedGmConfig", "run_fedgm", True, "003 FedGM", calibrated=True,
                 no_client_selection="one round in which every client's randomised labels reach the server one by "
                                     "one (label level, per client), so selecting clients hides nothing to credit"),
        Pipeline("fedzda", "fedzda", "FedZdaConfig", "run_fedzda", True, "004 Fed-ZDA",
                 no_client_selection="it has no privacy guarantee to amplify (ε = ∞); its client_fraction already "
                                     "samples clients per round for training"),
    )
}
PIPELINE_NAMES = tuple(PIPELINES)


def get_pipeline(name) -> Pipeline:
    """The registered pipeline ``name``; ValueError naming the valid names otherwise."""
    if not isinstance(name, str) or name not in PIPELINES:
        raise ValueError(f"pipeline must be one of {', '.join(PIPELINE_NAMES)} (got {name!r})")
    return PIPELINES[name]


def run_pipeline(name, data, config=None, seed: int = 0, *, n_jobs=None, progress: bool = False, threads: int = 1):
    """Run the pipeline ``name`` on labelled ``data`` with one convention for all five.

    ``config`` defaults to the pipeline's config class's defaults and must be an instance of it;
    pipelines that take a federated split get ``split_federated(data, seed)``, as their audits do.
    ``threads`` caps the BLAS/OpenMP pools (threadpoolctl) and torch's intra-op pool of each
    process: on small machines the pools' default of one thread per core slows the many small
    fits of a round severalfold, and parallelism comes from ``n_jobs`` (joblib) instead.
    Returns the pipeline's :class:`~trainers.federation.PipelineResult`.
    """
    pipeline, config, seed, progress, threads = _checked(name, config, seed, progress, threads)
    return _call(pipeline, pipeline.run_function, data, config, seed, n_jobs, progress, threads)


def _checked(name, config, seed, progress, threads) -> tuple:
    pipeline = get_pipeline(name)
    config_class = pipeline.config_class
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise ValueError(f"config must be a {config_class.__name__} (got {type(config).__name__})")
    return (pipeline, config, check.integer_scalar("seed", seed, 0), check.boolean("progress", progress),
            check.integer_scalar("threads", threads, 1))


def _call(pipeline: Pipeline, function, data, config, seed: int, n_jobs, progress: bool, threads: int):
    from threadpoolctl import threadpool_limits

    from ..data import split_federated

    with threadpool_limits(limits=threads):
        if pipeline.takes_split:
            return function(split_federated(data, seed), config, seed, n_jobs=n_jobs, progress=progress,
                            torch_threads=threads)
        return function(data, config, seed=seed, n_jobs=n_jobs, progress=progress)


class PipelineFit:
    """A round of one pipeline on fixed (data, seed), trained once and released at several noise settings
    (:func:`fit_pipeline`; the ε → accuracy curve of ``dpmech run``).

    :meth:`release` returns what ``run_pipeline(name, data, config, seed)`` returns. A pipeline with a
    fit step (``fit_function_name``: FedAUXfdp, whose Gaussian output perturbation is added after
    training) trains what the noise does not touch once, in :func:`fit_pipeline`, and each release
    calibrates, draws the noise and redoes only what is computed from the noisy messages; any other
    pipeline trains its whole round again at each release.
    """

    def __init__(self, pipeline: Pipeline, data, config, seed: int, n_jobs: Optional[int], progress: bool,
                 threads: int) -> None:
        self.pipeline, self.data, self.seed = pipeline, data, seed
        self.n_jobs, self.progress, self.threads = n_jobs, progress, threads
        self.trained = (None if pipeline.fit_function_name is None else
                        _call(pipeline, getattr(pipeline.load(), pipeline.fit_function_name), data, config, seed, n_jobs,
                              progress, threads))

    def release(self, config, *, baselines: bool = True) -> PipelineResult:
        """The round released under ``config``, a config of the pipeline's class: its
        :class:`~trainers.federation.PipelineResult`. ``baselines=False``: the accuracy baselines,
        which release nothing, may be left out (FedAUXfdp's FedAVG+P and FedD+P; a config with a
        ``baselines`` field runs with it False); the other numbers are unchanged."""
        baselines = check.boolean("baselines", baselines)
        if self.trained is not None:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=self.threads):
                return self.trained.release(config, baselines=baselines)
        if not isinstance(config, self.pipeline.config_class):
            raise ValueError(f"config must be a {self.pipeline.config_class.__name__} (got {type(config).__name__})")
        if not baselines and "baselines" in {field.name for field in dataclasses.fields(config)}:
            config = dataclasses.replace(config, baselines=False)
        return _call(self.pipeline, self.pipeline.run_function, self.data, config, self.seed, self.n_jobs,
                     self.progress, self.threads)


def fit_pipeline(name, data, config=None, seed: int = 0, *, n_jobs=None, progress: bool = False,
                 threads: int = 1) -> PipelineFit:
    """The round of pipeline ``name`` on ``data`` and ``seed`` trained once (:class:`PipelineFit`), to be
    released at the noise settings of several configs; the arguments are :func:`run_pipeline`'s, and
    ``config`` is the one the fit step trains under (its noise is the release's matter)."""
    pipeline, config, seed, progress, threads = _checked(name, config, seed, progress, threads)
    return PipelineFit(pipeline, data, config, seed, n_jobs, progress, threads)
