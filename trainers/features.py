"""A public feature extractor as the seeds use one: a small CNN trained on a public split only,
frozen, its embeddings scaled by a public norm and clipped to a public bound.

FedAUXfdp (Hoech et al. 2022) and DP-Helmet (Kirschte et al. 2022) train their private linear heads on features of a
network pre-trained on public data (a contrastively trained ShuffleNet / SimCLR ResNet); the
heads' sensitivity bounds hold only if the feature map does not depend on the private records
and every feature vector has norm at most the public bound. Here:

* :func:`public_private_split` cuts a dataset into a public part (the extractor's training set)
  and the rest; the extractor never sees the rest, and :func:`pretrained_features` returns the
  indices of both, so a caller (and a test) can check that they are disjoint;
* :class:`PublicCnnFeatureExtractor` trains the CNN (two 3-wide convolution blocks of
  :mod:`trainers.networks`, then Linear(feature_dim), ReLU, Linear(C)) with Adam on the public
  part only, every draw from a ``torch.Generator`` seeded by ``seed``; the features are the
  feature_dim ReLU activations rescaled so that the ``norm_quantile`` quantile of the public
  features' norms lands on ``feature_bound``, then clipped per example to that bound
  (``dpmech.clip_features``); or, with ``normalization="unit"``, each embedding e scaled to
  ``feature_bound``·e/‖e‖ (a map of that one record alone, as contrastive features are
  normalised; every nonzero row then has norm exactly the bound);
* the trained state is cached under ``cache_dir`` (key: every setting and a digest of the public
  data), so a benchmark trains it once; so are the embeddings it computes (key: the model's key
  and a digest of the input rows), so a warm run does not run the CNN again.

``device`` is a torch device name; ``"cuda"`` raises ValueError when no CUDA device is
available (never a silent fall-back to the CPU).
"""

from __future__ import annotations

import hashlib
import json
import math
import pathlib
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import nn

import dpmech
from dpmech import validation as check

from . import networks
from ._features import as_feature_matrix
from .records import LabelledData, PublicData


NORMALIZATIONS = ("quantile", "unit", "centered")


def checked_device(device) -> torch.device:
    """``device`` as a torch.device; ValueError for a name torch does not know or CUDA without a GPU."""
    if not isinstance(device, (str, torch.device)):
        raise ValueError(f"device must be a torch device name such as 'cpu' or 'cuda' (got {device!r})")
    try:
        resolved = torch.device(device)
    except RuntimeError:
        raise ValueError(f"device must be a torch device name such as 'cpu' or 'cuda' (got {device!r})") from None
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device={device!r} was asked for but no CUDA device is available; use device='cpu'")
    if resolved.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda[:index]' (got {device!r})")
    return resolved


def public_private_split(data: LabelledData, num_public: int, rng) -> tuple:
    """(public part as :class:`PublicData`, the rest, public indices, rest indices), uniformly at random.

    The public part trains the feature extractor only; the rest is what a pipeline may split
    further into private, auxiliary and test data.
    """
    num_public = check.integer_scalar("num_public", num_public, 1)
    if num_public >= len(data):
        raise ValueError(f"num_public must be < the {len(data)} records (got {num_public})")
    order = check.generator("rng", rng).permutation(len(data))
    public_indices, rest_indices = np.sort(order[:num_public]), np.sort(order[num_public:])
    public = PublicData(data.features[public_indices], data.labels[public_indices])
    return public, data.subset(rest_indices), public_indices, rest_indices


class _PairMean(nn.Module):
    """The mean of each pair of neighbouring positions along the last axis, (a + b) / 2 (an odd last position
    is dropped): ``nn.AvgPool1d(2)``'s values and gradients (g / 2 to each) bit for bit. torch pools a 1-d
    signal through its 2-d kernel; with this mean the public CNN trains in about 87 % of the CPU time."""

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        pairs = inputs.shape[-1] // 2
        return inputs[..., :2 * pairs].reshape(*inputs.shape[:-1], pairs, 2).mean(-1)


def _cnn(input_shape, num_classes, width, feature_dim, generator, device) -> nn.Sequential:
    trunk = networks._conv_network(input_shape, num_classes, "batch", width)[:-1]  # without its classifier
    # the same model with the pooling of pairs computed as a mean (no parameters, so the cached states still load)
    layers = [_PairMean() if isinstance(layer, nn.AvgPool1d) and layer.kernel_size == layer.stride == (2,)
              and layer.padding == (0,) else layer for layer in trunk]
    spatial = math.prod(size // 4 for size in input_shape[1:])
    model = nn.Sequential(*layers, nn.Linear(width * spatial, feature_dim), nn.ReLU(), nn.Linear(feature_dim, num_classes))
    return networks.initialise_parameters_(model.to(torch.float32), generator).to(device)


class PublicCnnFeatureExtractor(BaseEstimator):
    """A small CNN trained on public data only; ``transform`` gives its clipped embeddings.

    Parameters: ``feature_dim`` (embedding size), ``width`` (convolution channels), ``epochs``,
    ``batch_size``, ``learning_rate`` (Adam), ``norm_quantile`` (public scale), ``feature_bound``
    (the public bound every output obeys), ``seed`` (the torch.Generator of initialisation and
    shuffles), ``device``, ``cache_dir`` (None: no cache), ``input_shape`` (None: (1, d), a 1-d
    signal such as MNIST-1D), ``torch_threads`` (intra-op threads while training; None leaves
    torch's setting), ``normalization`` (``"quantile"``: one public scale, then clipping, so rows
    keep their relative norms; ``"unit"``: every row onto the sphere of radius ``feature_bound``;
    ``"centered"``: every row minus the public mean embedding μ, then onto that sphere. All bound
    every output by ``feature_bound`` whatever the input. A linear head's signal grows with ‖x‖
    while output-perturbation noise is calibrated to the bound, so ``"unit"`` gives a private head
    more signal per unit of noise than ``"quantile"`` (at the 0.95 quantile the median MNIST-1D row
    has norm about 0.64 of the bound). ReLU embeddings share a large common component, which a
    head's intercept can express without any weight, yet it spends most of the norm budget: on
    MNIST-1D the mean unit-normalised row has norm 0.83 and the rows' distance to it is 0.55, so
    ``"centered"`` spends the bound on the part that separates classes; a row equal to μ maps to
    zero).

    ``fit`` accepts only :class:`~trainers.data.PublicData`; fitted attributes: ``model_``,
    ``norm_scale_``, ``public_mean_`` (the public mean embedding), ``public_accuracy_`` (training accuracy on the public set, computed on first read), ``from_cache_``,
    ``model_path_`` (the cached state's file, None without ``cache_dir``).
    """

    def __init__(self, feature_dim=32, width=32, epochs=10, batch_size=128, learning_rate=3e-3, norm_quantile=0.95,
                 feature_bound=1.0, seed=0, device="cpu", cache_dir=None, input_shape=None, torch_threads=1,
                 normalization="quantile"):
        self.feature_dim = feature_dim
        self.width = width
        self.epochs = epochs
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.norm_quantile = norm_quantile
        self.feature_bound = feature_bound
        self.seed = seed
        self.device = device
        self.cache_dir = cache_dir
        self.input_shape = input_shape
        self.torch_threads = torch_threads
        self.normalization = normalization

    def _settings(self, public: PublicData) -> dict:
        settings = {
            "feature_dim": check.integer_scalar("feature_dim", self.feature_dim, 1),
            "width": check.integer_scalar("width", self.width, 1),
            "epochs": check.integer_scalar("epochs", self.epochs, 1),
            "batch_size": check.integer_scalar("batch_size", self.batch_size, 1),
            "learning_rate": float(check.positive("learning_rate", self.learning_rate)),
            "norm_quantile": float(check.in_interval("norm_quantile", self.norm_quantile, 0.0, 1.0,
                                                     low_open=True, high_open=False)),
            "feature_bound": float(check.positive("feature_bound", self.feature_bound)),
            "seed": check.integer_scalar("seed", self.seed, 0),
            "input_shape": list(networks.validated_input_shape(
                (1, public.features.shape[1]) if self.input_shape is None else self.input_shape)),
            "num_classes": int(public.labels.max()) + 1,
            # the device changes the floating-point path, so a CUDA model is cached apart from a CPU one
            "device": checked_device(self.device).type,
        }
        if math.prod(settings["input_shape"]) != public.features.shape[1]:
            raise ValueError(f"input_shape {tuple(settings['input_shape'])} does not hold {public.features.shape[1]} features")
        if min(settings["input_shape"][1:]) < 4:
            raise ValueError(f"input_shape {tuple(settings['input_shape'])} is too small for two pooling steps")
        return settings

    def _cache_path(self, settings: dict, public: PublicData):
        if self.cache_dir is None:
            return None
        digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
        digest.update(np.ascontiguousarray(public.features).tobytes())
        digest.update(np.ascontiguousarray(public.labels).tobytes())
        return pathlib.Path(self.cache_dir) / f"public_cnn_{digest.hexdigest()[:24]}.npz"

    def fit(self, public: PublicData):
        if not isinstance(public, PublicData):
            raise TypeError(f"PublicCnnFeatureExtractor fits on PublicData only (got {type(public).__name__}); "
                            "private data must never reach the feature extractor")
        settings = self._settings(public)
        # the normalisation acts after training, so it stays out of the cache key
        normalization = check.choice("normalization", self.normalization, NORMALIZATIONS)
        device = checked_device(self.device)
        generator = torch.Generator().manual_seed(settings["seed"])
        model = _cnn(tuple(settings["input_shape"]), settings["num_classes"], settings["width"],
                     settings["feature_dim"], generator, device)
        path = self._cache_path(settings, public)
        inputs = networks.as_inputs(public.features, settings["input_shape"], device)
        self.from_cache_ = path is not None and path.is_file()
        if self.from_cache_:
            with np.load(path) as stored:
                networks.load_state_arrays_(model, {name[len("state/"):]: stored[name] for name in stored.files
                                                    if name.startswith("state/")})
        else:
            with networks.torch_threads(self.torch_threads):
                networks.fit(model, inputs, networks.as_targets(public.labels, device), epochs=settings["epochs"],
                             batch_size=settings["batch_size"], learning_rate=settings["learning_rate"],
                             generator=generator)
        model.eval()
        self.model_ = model
        self.model_path_ = path
        self.input_shape_ = tuple(settings["input_shape"])
        self.feature_bound_ = settings["feature_bound"]
        self.normalization_ = normalization
        # A forward pass over the public set that only benchmarks read: deferred to public_accuracy_'s first read
        # (dpmech run loads the data with a cached model at every run and never reads it).
        self._public_batch = (inputs, networks.as_targets(public.labels, device))
        self._public_accuracy = None
        public_embedding = self._embed(public.features)
        self.public_mean_ = public_embedding.mean(axis=0)
        norms = np.linalg.norm(public_embedding, axis=1)
        self.norm_scale_ = float(np.quantile(norms, settings["norm_quantile"]))
        if not self.norm_scale_ > 0:
            raise ValueError("the public embeddings are all zero; cannot set a norm scale (train longer or wider)")
        if path is not None and not self.from_cache_:
            path.parent.mkdir(parents=True, exist_ok=True)
            arrays = {f"state/{name}": value for name, value in networks.state_arrays(model).items()}
            temporary = path.with_suffix(".partial.npz")
            np.savez(temporary, **arrays)
            temporary.replace(path)  # atomic: a concurrent reader never sees half a file
        return self

    @property
    def public_accuracy_(self) -> float:
        """The CNN's training accuracy on the public set it was fitted on (computed on the first read)."""
        check_is_fitted(self, "model_")
        if self._public_accuracy is None:
            self._public_accuracy = networks.accuracy(self.model_, *self._public_batch)
        return self._public_accuracy

    def _embed(self, features) -> np.ndarray:
        features = as_feature_matrix("features", features)
        # The embedding is a deterministic function of the trained model (named by its cache key: every
        # setting and the public data) and the input rows, so with a cache it is stored under both digests.
        path = None
        if self.model_path_ is not None:
            digest = hashlib.sha256(self.model_path_.stem.encode())
            digest.update(repr((features.dtype.str, features.shape)).encode())
            digest.update(np.ascontiguousarray(features).tobytes())
            path = self.model_path_.with_name(f"embedding_{digest.hexdigest()[:24]}.npy")
            if path.is_file():
                return np.load(path)
        inputs = networks.as_inputs(features, self.input_shape_, next(self.model_.parameters()).device)
        # inference mode also skips autograd's version counters (no_grad keeps them); the values are the same
        with torch.inference_mode():
            embedding = networks.predict_logits(self.model_[:-1], inputs).cpu().numpy().astype(np.float64)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".partial.npy")
            np.save(temporary, embedding)
            temporary.replace(path)  # atomic: a concurrent reader never sees half a file
        return embedding

    def transform(self, features) -> np.ndarray:
        """``"quantile"``: embeddings · bound / public scale (the public quantile lands on the
        bound), clipped per example to ‖z‖₂ <= ``feature_bound``; ``"unit"``: bound · e/‖e‖ per
        row (a zero embedding stays zero); ``"centered"``: the same for e − μ (public mean μ)."""
        check_is_fitted(self, "model_")
        embedding = self._embed(features)
        if self.normalization_ == "centered":
            embedding = embedding - self.public_mean_
        if self.normalization_ in ("unit", "centered"):
            norms = np.linalg.norm(embedding, axis=1, keepdims=True)
            scaled = embedding * (self.feature_bound_ / np.where(norms > 0, norms, 1.0))
        else:
            scaled = embedding * (self.feature_bound_ / self.norm_scale_)
        # clipping also after "unit" keeps the bound exact where rounding put a norm a hair above it
        return dpmech.clip_features(scaled, self.feature_bound_)


@dataclass(frozen=True)
class PretrainedFeatures:
    """The records the extractor did not see, mapped to its features, and where they came from.

    ``data`` holds rows of norm <= the extractor's bound; ``public_indices`` (the extractor's
    training rows) and ``rest_indices`` (the rows of ``data``) index the original dataset and are
    disjoint.
    """

    data: LabelledData
    extractor: PublicCnnFeatureExtractor
    public_indices: np.ndarray
    rest_indices: np.ndarray


def pretrained_features(data: LabelledData, num_public: int, seed: int = 0, **extractor_settings) -> PretrainedFeatures:
    """Split ``data`` into a public part of ``num_public`` records and the rest, train a
    :class:`PublicCnnFeatureExtractor` (``extractor_settings``) on the public part only, and map
    the rest. The split is drawn from ``seed``, the extractor's training from ``seed`` too."""
    seed = check.integer_scalar("seed", seed, 0)
    public, rest, public_indices, rest_indices = public_private_split(data, num_public, np.random.default_rng(seed))
    extractor = PublicCnnFeatureExtractor(seed=seed, **extractor_settings).fit(public)
    return PretrainedFeatures(LabelledData(extractor.transform(rest.features), rest.labels), extractor,
                              public_indices, rest_indices)
