"""Projected mini-batch SGD in torch: DP-Helmet's Softmax-SLP (Alg. 1) and one-vs-rest Huber SVM
(Alg. 2), Kirschte, Meiser, Ardalan & Mohammadi (arXiv 2211.02003, 2022, §3–4).

Algorithm (both models), on inputs clipped to x ← x / max(1, ‖x‖₂ / c) and extended by the
bias coordinate, x̃ = (x, 1), so the bias is regularised and projected with the weights:

    θ = 0;  t = 0
    b' = min(b, N)
    for each epoch: shuffle (torch.Generator);  for each of the ⌈N/b'⌉ batches B:
        t ← t + 1                              # global step, starts at 1
        η_t = min(1/β, 1/(Λ t))
        θ ← θ − η_t ∇ [(1/b') Σ_{i∈B} ℓ_i + (Λ/2)‖θ‖²]
        project: Softmax-SLP  θ ← θ / max(1, ‖θ‖_F / R)           (the whole (W, b))
                 Huber SVM    θ_k ← θ_k / max(1, ‖θ_k‖₂ / R)       (each class's (w_k, b_k))

Objectives: Softmax-SLP J(θ) = (Λ/2)‖θ‖_F² + CE(softmax(θ x̃), y); Huber SVM
J(θ) = Σ_k [(Λ/2)‖θ_k‖² + ℓ_hub(y_k θ_k·x̃)] with y_k = ±1 (one-vs-rest) and the Huber hinge of
relaxation h. The SVM SUMS the per-class objectives, so every class takes the step η_t of the
theorem; DP-Helmet's public code averages them (each class then steps η_t / C), which is still
private but is not the analysed schedule.

Smoothness β (per example, with ‖x̃‖² <= c² + 1): Huber SVM β = (c² + 1)/(2h) + Λ (Example 3.16
of the seed; tensorflow/privacy's StrongConvexHuber); Softmax-SLP β = (c² + 1)/2 + Λ, because
λ_max(diag(p) − ppᵀ) <= 1/2. The SVM's sum is block-separable over classes, so its β is that
of one class. A larger β (e.g. DP-Helmet's conservative values) may be passed: it only shortens
the steps.

Every batch's summed loss gradient is divided by the nominal batch size b', also the ragged last
batch when b' does not divide N (DP-Helmet's code and tf.data average it over its own, smaller
size, which lets one of its records move θ by up to b'/(N mod b') times the bound: 2.9x for
N = 21, b = 20). With that divisor the Wu et al. (2017) bolt-on bound Δ = 2L/(NΛ) holds for
every N, batch size and number of passes, with L the Lipschitz constant of the loss alone (the
regulariser's gradient cancels between neighbours, so the seed's + RΛ is not needed); the proof,
with the constant-step phase and b > N, is in :func:`dpmech.sensitivity.psgd_bolt_on_sensitivity`.
Its conditions, which this module keeps: η_t = min(1/β, 1/(Λt)) with β at least the analytic
smoothness (a smaller ``smoothness`` raises), the regulariser's gradient Λθ in every step, the
projection after every step, and a visiting order that does not depend on the data. The trainers ask dpmech for Δ
(``sensitivity``) and never compute it here. The returned model is the unscaled θ (DP-Helmet's
newest code releases N·θ).
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin

import dpmech
import dpmech.sensitivity
from dpmech import validation as check

from ._features import as_class_labels, as_feature_matrix, prediction_data, training_data, with_bias_coordinate
from .threads import limited_threads

SOFTMAX = "softmax"
HUBER_SVM = "huber_svm"


def analytic_smoothness(model: str, regularization: float, input_clip: float, huber_h: float | None = None) -> float:
    """β of the per-example objective on bias-augmented inputs, from :mod:`dpmech.sensitivity`."""
    check.choice("model", model, (SOFTMAX, HUBER_SVM))
    if model == SOFTMAX:
        return dpmech.sensitivity.softmax_slp_smoothness(input_clip, regularization, regularized_intercept=True)
    return dpmech.sensitivity.huber_svm_smoothness(input_clip, regularization, huber_h, regularized_intercept=True)


def _as_generator(seed) -> torch.Generator:
    if isinstance(seed, torch.Generator):
        return seed
    return torch.Generator().manual_seed(check.integer_scalar("seed", seed, 0))


def shuffled_batches(num_records: int, batch_size: int, epochs: int, seed) -> list:
    """The visiting order of :func:`projected_sgd`: per epoch, the list of its index batches.

    One ``torch.randperm`` per epoch from ``seed`` (int or ``torch.Generator``), split into
    ⌈n/b'⌉ batches of the nominal size b' = min(b, n), the last one ragged when b' does not divide
    n. The order depends only on n and the seed, never on the data, so neighbouring datasets see
    the same batches (an assumption of the sensitivity bound).
    """
    num_records = check.integer_scalar("num_records", num_records, 1)
    nominal_batch_size = min(check.integer_scalar("batch_size", batch_size, 1), num_records)
    epochs = check.integer_scalar("epochs", epochs, 1)
    generator = _as_generator(seed)
    return [list(torch.randperm(num_records, generator=generator).split(nominal_batch_size)) for _ in range(epochs)]


def _softmax_gradient(theta, inputs, labels, divisor, regularization, huber_h):
    residuals = torch.softmax(inputs @ theta.T, dim=1) - torch.nn.functional.one_hot(labels, theta.shape[0]).to(theta.dtype)
    return residuals.T @ inputs / divisor + regularization * theta


def _huber_svm_gradient(theta, inputs, labels, divisor, regularization, huber_h):
    signs = 2.0 * torch.nn.functional.one_hot(labels, theta.shape[0]).to(theta.dtype) - 1.0
    margins = signs * (inputs @ theta.T)
    # dℓ_hub/dz: −1 below 1−h, −(1+h−z)/(2h) inside, 0 above 1+h
    slopes = -torch.clamp((1.0 + huber_h - margins) / (2.0 * huber_h), min=0.0, max=1.0)
    return (slopes * signs).T @ inputs / divisor + regularization * theta


def _project(theta, model, radius):
    if model == SOFTMAX:
        return theta / torch.clamp(torch.linalg.matrix_norm(theta) / radius, min=1.0)
    return theta / torch.clamp(torch.linalg.vector_norm(theta, dim=1, keepdim=True) / radius, min=1.0)


def projected_sgd(
    features,
    labels,
    *,
    model: str,
    num_classes: int,
    regularization: float,
    input_clip: float,
    projection_radius: float,
    epochs: int,
    batch_size: int,
    seed,
    huber_h: float | None = None,
    smoothness: float | None = None,
    device="cpu",
    dtype=torch.float64,
    on_step=None,
) -> np.ndarray:
    """Run DP-Helmet's PSGD and return θ of shape (num_classes, d + 1) (last column: bias).

    ``seed`` is an int or a ``torch.Generator`` (the only source of randomness: the shuffles,
    :func:`shuffled_batches`). Every batch's loss gradient is summed and divided by
    min(batch_size, n), the ragged last batch's too; batch_size > n runs full-batch steps.
    ``on_step(t, η_t, θ)`` is called after every projected step with the global step t >= 1.
    ``smoothness`` defaults to :func:`analytic_smoothness`; a smaller value raises ValueError.
    """
    model = check.choice("model", model, (SOFTMAX, HUBER_SVM))
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    regularization = float(check.positive("regularization", regularization))
    input_clip = float(check.positive("input_clip", input_clip))
    radius = float(check.positive("projection_radius", projection_radius))
    epochs = check.integer_scalar("epochs", epochs, 1)
    batch_size = check.integer_scalar("batch_size", batch_size, 1)
    if model == HUBER_SVM:
        huber_h = float(check.positive("huber_h", huber_h))
    minimum = analytic_smoothness(model, regularization, input_clip, huber_h)
    if smoothness is None:
        smoothness = minimum
    elif float(check.positive("smoothness", smoothness)) < minimum:
        raise ValueError(f"smoothness must be >= the analytic β = {minimum:g} of this objective (got {smoothness!r})")
    features = as_feature_matrix("features", features)
    labels = as_class_labels("labels", labels, features.shape[0], num_classes)
    inputs = torch.as_tensor(with_bias_coordinate(dpmech.clip_features(features, input_clip)), dtype=dtype, device=device)
    targets = torch.as_tensor(labels, device=device)
    gradient = _softmax_gradient if model == SOFTMAX else _huber_svm_gradient
    num_records = inputs.shape[0]
    # The nominal size divides every batch, the ragged last one too (module docstring).
    nominal_batch_size = min(batch_size, num_records)
    theta = torch.zeros((num_classes, inputs.shape[1]), dtype=dtype, device=device)
    step = 0
    for epoch in shuffled_batches(num_records, batch_size, epochs, seed):
        for batch in epoch:
            batch = batch.to(device)
            step += 1
            rate = min(1.0 / smoothness, 1.0 / (regularization * step))
            step_gradient = gradient(theta, inputs[batch], targets[batch], nominal_batch_size, regularization, huber_h)
            theta = _project(theta - rate * step_gradient, model, radius)
            if on_step is not None:
                on_step(step, rate, theta)
    return theta.cpu().numpy()


class _PsgdTrainer(ClassifierMixin, BaseEstimator):
    """scikit-learn classifier around :func:`projected_sgd`.

    Inputs are clipped to ``input_clip`` (the algorithm's step, so unbounded data is accepted),
    at ``predict`` too. ``classes_`` is always ``arange(num_classes)``: the class set is public,
    never read from ``y``; labels outside it raise ValueError. ``fit`` sets ``n_features_in_``;
    prediction before ``fit`` raises ``sklearn.exceptions.NotFittedError``. ``threads`` (default 1;
    None leaves the pools alone) caps the BLAS/OpenMP and torch pools during ``fit``
    (:func:`trainers.threads.limited_threads`).
    """

    _model = ""

    def __init__(self, num_classes, regularization, input_clip, projection_radius, epochs, batch_size, seed, smoothness,
                 device, threads):
        # Each subclass's own signature states its defaults (scikit-learn's get_params reads it).
        self.num_classes = num_classes
        self.regularization = regularization
        self.input_clip = input_clip
        self.projection_radius = projection_radius
        self.epochs = epochs
        self.batch_size = batch_size
        self.seed = seed
        self.smoothness = smoothness
        self.device = device
        self.threads = threads

    def _common_arguments(self):
        return dict(
            model=self._model,
            num_classes=self.num_classes,
            regularization=self.regularization,
            input_clip=self.input_clip,
            projection_radius=self.projection_radius,
            epochs=self.epochs,
            batch_size=self.batch_size,
            smoothness=self.smoothness,
            device=self.device,
        )

    def fit(self, X, y):
        num_classes = check.integer_scalar("num_classes", self.num_classes, 2)
        features, labels = training_data(self, X, y, num_classes)
        with limited_threads(self.threads):
            self.parameters_ = projected_sgd(features, labels, seed=self.seed, **self._training_arguments())
        self.coef_ = self.parameters_[:, :-1]
        self.intercept_ = self.parameters_[:, -1]
        self.classes_ = np.arange(self.num_classes)
        return self

    def decision_function(self, X):
        inputs = with_bias_coordinate(dpmech.clip_features(prediction_data(self, X), self.input_clip))
        return inputs @ self.parameters_.T

    def predict(self, X):
        # Scores first: they raise NotFittedError before ``classes_`` is looked up.
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def train(self, features, labels) -> np.ndarray:
        """The :class:`trainers.protocol.Trainer` entry point: fit and return ``parameters_``."""
        return self.fit(features, labels).parameters_.copy()


class SoftmaxSLPTrainer(_PsgdTrainer):
    """DP-Helmet Softmax-SLP-SGD (Alg. 1). Sensitivity (replace-one):
    ``dpmech.sensitivity.softmax_slp_sensitivity`` with the projection radius, D(R)/(nΛ), where D(R) <= 2√2·c'
    (c' = sqrt(c²+1), the bias as input) bounds the difference of two records' loss gradients at one iterate
    of the R-ball (``dpmech.sensitivity.softmax_gradient_difference_bound``; 0.60 of the R-free 2√2·c'/(nΛ)
    at c = 1, R = 1, C = 10), for every n, ``batch_size`` (each batch, a ragged last one too, is divided by
    min(batch_size, n)) and number of epochs. Kirschte et al. (2022) Thm 4.1 states 2(√2·c + RΛ)/(nΛ): c
    omits the bias input, and RΛ (the regulariser's gradient) cancels between neighbours (proof in
    ``psgd_bolt_on_sensitivity``)."""

    _model = SOFTMAX

    def __init__(self, num_classes=10, regularization=1.0, input_clip=1.0, projection_radius=1.0, epochs=100,
                 batch_size=20, seed=0, smoothness=None, device="cpu", threads=1):
        super().__init__(num_classes, regularization, input_clip, projection_radius, epochs, batch_size, seed, smoothness,
                         device, threads)

    def _training_arguments(self):
        return self._common_arguments()

    def sensitivity(self, n: int) -> float:
        # fit runs projected_sgd in float64 and projects (W, b) onto the R-ball after every step, so every
        # iterate at which two records' gradients are compared has ‖θ‖_F <= R up to the projection's few ulps of
        # rounding; the relative 2⁻²⁰ covers them (and float32's) with room to spare.
        radius = float(check.positive("projection_radius", self.projection_radius))
        return dpmech.sensitivity.softmax_slp_sensitivity(self.regularization, n, self.input_clip,
                                                          regularized_intercept=True,
                                                          projection_radius=radius * (1 + 2**-20),
                                                          num_classes=self.num_classes)


class HuberSVMTrainer(_PsgdTrainer):
    """DP-Helmet SVM-SGD (Alg. 2): one-vs-rest Huber SVMs, per-class objectives summed.
    Sensitivity (replace-one): ``dpmech.sensitivity.huber_svm_sensitivity``, the joint bound of the C
    classifiers, each moving at most 2·sqrt(c²+1)/(nΛ) (Kirschte et al. 2022 Example 3.16 with the bias input,
    without its RΛ, which cancels between neighbours) and together less than √C times that, since a record's
    label changes the sign of two classes' gradients only (√40/(nΛ) against √80/(nΛ) at c = 1, C = 10); for
    every n, R, ``batch_size`` (each batch divided by min(batch_size, n)) and number of epochs."""

    _model = HUBER_SVM

    def __init__(self, num_classes=10, regularization=10.0, input_clip=1.0, projection_radius=0.06, huber_h=0.1,
                 epochs=100, batch_size=20, seed=0, smoothness=None, device="cpu", threads=1):
        super().__init__(num_classes, regularization, input_clip, projection_radius, epochs, batch_size, seed, smoothness,
                         device, threads)
        self.huber_h = huber_h

    def _training_arguments(self):
        return dict(self._common_arguments(), huber_h=self.huber_h)

    def sensitivity(self, n) -> float:
        return dpmech.sensitivity.huber_svm_sensitivity(self.regularization, n, self.input_clip,
                                                        num_classes=self.num_classes, regularized_intercept=True)
