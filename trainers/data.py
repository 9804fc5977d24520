"""Offline real data, the Dirichlet label partition over clients, the public/private splits, and a
frozen feature extractor fitted on public data only.

Nothing here downloads: digits ship with scikit-learn, and MNIST-1D is generated locally, the
``mnist1d`` package's procedural generator (``mnist1d.data.make_dataset``) on all records at once
(:func:`make_mnist1d`, equal to it bit for bit), never through its ``get_dataset``, which fetches a
pickle from GitHub. :func:`load_mnist1d` generates it at 10⁵ records and more, chunked and cached. No wheel on the package index ships MNIST or CIFAR arrays
usably offline (checked for issue 16), so other real data comes in through :func:`load_arrays`
(the user's own arrays or ``.npz`` file).
"""

from __future__ import annotations

import math
import os
import pathlib
from dataclasses import dataclass

import numpy as np
import scipy.special
from rich.console import Console
from rich.table import Table
from sklearn.base import BaseEstimator
from sklearn.decomposition import PCA
from sklearn.utils.validation import check_is_fitted

import dpmech
from dpmech import validation as check

from ._features import as_feature_matrix
from .records import LabelledData, PrivateData, PublicData  # re-exported: trainers.data.PrivateData etc.

# FedAUXfdp (Hoech et al. 2022, after Sattler et al. 2021): α = 2^k · 10^-2 for k in {0, 2, 4, 10}.
ALPHA_GRID = (0.01, 0.04, 0.16, 10.24)


def load_digits_dataset() -> LabelledData:
    """scikit-learn's bundled 8×8 digits: 1797 records, 64 features in [0, 16], 10 classes."""
    from sklearn.datasets import load_digits

    features, labels = load_digits(return_X_y=True)
    return LabelledData(features.astype(np.float64), labels)


# numpy's legacy MT19937 stream (np.random.seed, RandomState) in 32-bit words: a double takes two
# (genrand_res53), a bounded integer one per try, an attempt of the polar method two doubles.
_WORDS_PER_DOUBLE = 2
_WORDS_PER_POLAR_ATTEMPT = 2 * _WORDS_PER_DOUBLE


def _legacy_doubles(words: np.ndarray) -> np.ndarray:
    """numpy's legacy ``random_sample`` at every word position q of an MT19937 stream: genrand_res53 of
    words q and q + 1, (⌊w_q / 2⁵⌋·2²⁶ + ⌊w_{q+1} / 2⁶⌋) / 2⁵³ (Matsumoto and Nishimura 1998), exact in
    float64 whatever the order of the operations."""
    return ((words[:-1] >> 5).astype(np.float64) * 67108864.0 + (words[1:] >> 6)) / 9007199254740992.0


def _interp_rows(rows: np.ndarray, length: int) -> np.ndarray:
    """``np.interp(linspace(0, 1, length), linspace(0, 1, m), row)`` for every row of ``rows`` (m columns) at
    once, in np.interp's own arithmetic (numpy's ``arr_interp``), so the values are np.interp's bit for bit:
    at a knot x_j (and at the last) the knot's value, elsewhere slope·(x − x_j) + y_j with
    slope = (y_{j+1} − y_j) / (x_{j+1} − x_j) and x_j ≤ x < x_{j+1}."""
    knots = np.linspace(0, 1, rows.shape[1])
    points = np.linspace(0, 1, length)
    left = np.searchsorted(knots, points, side="right") - 1
    on_knot = (left == knots.size - 1) | (knots[left] == points)
    segment = np.minimum(left, knots.size - 2)
    slopes = (rows[:, segment + 1] - rows[:, segment]) / (knots[segment + 1] - knots[segment])
    return np.where(on_knot, rows[:, left], slopes * (points - knots[segment]) + rows[:, segment])


def _mnist1d_draws(num_records: int, seed: int, translations: int, normals_per_record: int, words: int | None = None) -> dict:
    """The draws ``mnist1d.transform.transform`` makes from numpy's global generator for ``num_records``
    records after ``np.random.seed(seed)``, all at once, and the generator after them.

    Per record, in stream order: ``rand()`` (padding), ``rand()`` (scale), ``choice(translations)`` (a
    32-bit word masked to the next power of two minus one, tried until it is below ``translations``),
    ``normals_per_record`` normals by ``randn`` (numpy's legacy polar method, Marsaglia and Bray 1964:
    attempts of two doubles x₁, x₂ ↦ 2u − 1 until 0 < r² = x₁² + x₂² < 1, then the pair
    f·x₂, f·x₁ with f = √(−2 ln r² / r²)), ``rand()`` (shear). Each record's start in the stream depends on
    the rejections before it, so the starts are found for every position at once: the record starting at
    word s ends where its last accepted attempt ends; the attempts of one record lie on one residue class
    mod 4, so "the k-th accepted attempt from position g" is a rank lookup in its class; the chain of
    starts from 0 then comes by pointer doubling. ln is ``scipy.special.xlogy(1, ·)``, the C library's
    log as numpy's generator calls it (numpy's own ``np.log`` differs from it in the last bit for about
    0.3 % of inputs on AVX-512 machines). ``words``: how many words to draw first (None: 5 % above the
    expected count); twice as many are drawn until the records fit. Returns ``uniforms`` (n, 3: padding, scale, shear), ``shifts``
    (n,), ``normals`` (n, normals_per_record) and ``generator``, a RandomState where the package's global
    generator is after the records.
    """
    if normals_per_record % 2:
        raise ValueError(f"normals_per_record must be even (got {normals_per_record}): with an odd count a record "
                         "would start with the polar method's stored normal")
    attempts_per_record = normals_per_record // 2
    mask = (1 << (translations - 1).bit_length()) - 1
    # Words per record: 3 doubles, 4/3 translation tries and 4 words per attempt at acceptance π/4 on average;
    # 5 % more plus a margin, and twice as many again in the rare case the records run past the words drawn.
    count = (int(num_records * (3 * _WORDS_PER_DOUBLE + 2 + _WORDS_PER_POLAR_ATTEMPT * attempts_per_record * 4 / math.pi)
                 * 1.05) + 4096) if words is None else words
    while True:
        count += -count % 4
        words = np.random.RandomState(seed).randint(0, 2**32, size=count, dtype=np.uint32)  # one word each
        doubles = _legacy_doubles(words)
        first, second = 2.0 * doubles[:-2] - 1.0, 2.0 * doubles[2:] - 1.0
        radius = first * first + second * second
        # attempt at every position q (the last three positions cannot hold one): accepted or not
        accepted = np.zeros(count, dtype=bool)
        accepted[:radius.size] = (radius < 1.0) & (radius != 0.0)
        # ranks of the accepted attempts, class by class (positions q ≡ r mod 4 in order, r = 0..3)
        by_class = accepted.reshape(-1, 4).T.ravel()
        rank_by_class = np.cumsum(by_class) - by_class
        rank = rank_by_class.reshape(4, -1).T.ravel()  # among its class's accepted attempts and the classes before
        class_end = np.cumsum(by_class.reshape(4, -1).sum(axis=1))[np.arange(count) % 4]
        accepted_position = np.flatnonzero(by_class)
        accepted_position = (accepted_position % (count // 4)) * 4 + accepted_position // (count // 4)
        tried = (words & mask) < translations
        translation_word = np.minimum.accumulate(np.where(tried, np.arange(count), count)[::-1])[::-1]
        # the record at every start s: translation word t, first attempt t + 1, last accepted attempt, next start
        translation_at = np.full(count + 2, count)
        translation_at[:count - 2 * _WORDS_PER_DOUBLE] = translation_word[2 * _WORDS_PER_DOUBLE:]
        attempts_from = np.minimum(translation_at + 1, count - 1)
        last_rank = rank[attempts_from] + attempts_per_record - 1
        fits = (translation_at < count - 1) & (last_rank < class_end[attempts_from])
        last_end = accepted_position[np.minimum(last_rank, accepted_position.size - 1)] + _WORDS_PER_POLAR_ATTEMPT
        following = np.where(fits & (last_end + _WORDS_PER_DOUBLE <= count), last_end + _WORDS_PER_DOUBLE, count + 1)
        following[count:] = count + 1  # past the words: stays past
        starts, jump = np.zeros(1, dtype=np.int64), following
        while starts.size < num_records:
            starts = np.concatenate([starts, jump[starts]])
            if starts.size < num_records:
                jump = jump[jump]
        starts = starts[:num_records]
        if following[starts[-1]] <= count:
            break
        count *= 2
    first_attempts = accepted_position[rank[attempts_from[starts]][:, None] + np.arange(attempts_per_record)]
    factor = np.sqrt(-2.0 * scipy.special.xlogy(1.0, radius[first_attempts]) / radius[first_attempts])
    normals = np.stack([factor * second[first_attempts], factor * first[first_attempts]], axis=-1)
    generator = np.random.RandomState(seed)
    generator.randint(0, 2**32, size=int(following[starts[-1]]), dtype=np.uint32)  # past the records' words
    return {"uniforms": np.stack([doubles[starts], doubles[starts + _WORDS_PER_DOUBLE],
                                  doubles[first_attempts[:, -1] + _WORDS_PER_POLAR_ATTEMPT]], axis=1),
            "shifts": (words[translation_at[starts]] & mask).astype(np.int64),
            "normals": normals.reshape(num_records, normals_per_record), "generator": generator}


def make_mnist1d(num_samples: int = 5000, seed: int = 42) -> LabelledData:
    """MNIST-1D (Greydanus 2020) generated locally: ``num_samples`` signals of length 40, 10 classes.

    The records of the package's ``mnist1d.data.make_dataset`` with its default arguments
    (``get_dataset_args()``) and ``num_samples`` and ``seed`` replaced, bit for bit (a test compares them);
    the defaults (5000, 42) reproduce the published dataset. The package transforms one record at a time
    in Python (about 0.7 ms each: pad each digit's template with zeros, dilate by linear interpolation,
    scale, translate, fill the zeros with smoothed noise, add noise, shear, resample to 40 points) from
    numpy's global generator; here every record's draws come at once from the same stream
    (:func:`_mnist1d_draws`) and each step acts on all records, about 10 times faster. The caller's global
    random state is never touched. ``num_samples`` is rounded down to a multiple of 10 as the package
    rounds it (equal class counts).
    """
    import mnist1d.data
    import scipy.ndimage

    num_samples = check.integer_scalar("num_samples", num_samples, 10)
    seed = check.integer_scalar("seed", seed, 0)
    if seed >= 2**32:
        raise ValueError(f"seed must be below 2**32, numpy's legacy seeding range (got {seed})")
    arguments = mnist1d.data.get_dataset_args()
    templates = mnist1d.data.get_templates()
    per_class = num_samples // templates["y"].size
    labels = np.repeat(templates["y"], per_class)  # the package's order: class by class
    low, high = arguments.padding
    length = arguments.template_len + high  # of the padded template after dilation, and of each noise
    draws = _mnist1d_draws(labels.size, seed, arguments.max_translation, 2 * length)
    padding_uniform, scale_uniform, shear_uniform = draws["uniforms"].T
    paddings = low + (padding_uniform * (high - low + 1)).astype(np.int64)
    # the package adds 1e-8 before padding, so that the template is nonzero where the zeros are not
    templates_plus = templates["x"][labels] + 1e-8
    dilated = np.empty((labels.size, length))
    for padding in np.unique(paddings):  # at most high − low + 1 lengths
        rows = np.flatnonzero(paddings == padding)
        dilated[rows] = _interp_rows(np.hstack([templates_plus[rows], np.zeros((rows.size, padding))]), length)
    dilated *= (1 + arguments.scale_coeff * (scale_uniform - 0.5))[:, None]
    # concatenate([x[-k:], x[:-k]]): a rotation by k, the identity at k = 0
    translated = np.take_along_axis(dilated, (np.arange(length) - draws["shifts"][:, None]) % length, axis=1)
    normals = draws["normals"]
    smooth = scipy.ndimage.gaussian_filter1d(arguments.corr_noise_scale * normals[:, :length], 2, axis=1)
    present = translated != 0
    signal = present * translated + (1 - present) * smooth + arguments.iid_noise_scale * normals[:, length:]
    signal -= (arguments.shear_scale * (shear_uniform - 0.5))[:, None] * np.linspace(-0.5, 0.5, length)
    features = _interp_rows(signal, arguments.final_seq_length)
    order = draws["generator"].permutation(labels.size)
    features = features[order]
    # the package centres and scales by the whole set's mean and standard deviation, after the shuffle
    return LabelledData((features - features.mean()) / features.std(), labels[order])


def load_mnist1d(num_samples: int = 100_000, seed: int = 0, *, cache_dir=None, chunk_size: int = 10_000) -> LabelledData:
    """MNIST-1D at scale (10⁵ records and more), generated locally in chunks and cached on disk.

    Chunk k is :func:`make_mnist1d` with ``chunk_size`` records and the seed drawn from
    ``SeedSequence([seed, k])``, so the chunks are independent draws of the generator and the
    result for (``num_samples``, ``seed``, ``chunk_size``) is the same on every machine. A chunk of
    10⁴ records takes about 1 s of CPU, so with ``cache_dir`` every chunk is stored as
    ``mnist1d_<seed>_<chunk_size>_<k>_<size>.npz`` and read back on the next call.
    ``num_samples`` must be a positive multiple of 10 (equal class counts per chunk, never a silent
    rounding); the last chunk is smaller when ``chunk_size`` does not divide it.
    """
    num_samples = check.integer_scalar("num_samples", num_samples, 10)
    seed = check.integer_scalar("seed", seed, 0)
    chunk_size = check.integer_scalar("chunk_size", chunk_size, 10)
    if num_samples % 10 or chunk_size % 10:
        raise ValueError(f"num_samples and chunk_size must be multiples of 10 (got {num_samples}, {chunk_size})")
    directory = None if cache_dir is None else pathlib.Path(cache_dir)
    parts = []
    for index, start in enumerate(range(0, num_samples, chunk_size)):
        size = min(chunk_size, num_samples - start)
        path = None if directory is None else directory / f"mnist1d_{seed}_{chunk_size}_{index}_{size}.npz"
        if path is not None and path.is_file():
            with np.load(path) as stored:
                parts.append(LabelledData(stored["features"], stored["labels"]))
            continue
        chunk_seed = int(np.random.SeedSequence([seed, index]).generate_state(1)[0])
        parts.append(make_mnist1d(size, seed=chunk_seed))
        if path is not None:
            directory.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".partial.npz")
            np.savez(temporary, features=parts[-1].features, labels=parts[-1].labels)
            temporary.replace(path)  # atomic: a concurrent reader never sees half a file
    return LabelledData(np.vstack([part.features for part in parts]), np.concatenate([part.labels for part in parts]))


# The keys of a user's .npz file (features, labels): dpmech run --data's names first, then load_arrays' own.
NPZ_KEYS = (("X", "y"), ("features", "labels"))
# The keys of the public/private split form: public features (labels optional), private features and labels.
NPZ_SPLIT_KEYS = ("X_public", "y_public", "X_private", "y_private")
_EXPECTED = ("an .npz archive (numpy.savez) of X, real features of shape (n, d), and y, integer labels of shape (n,); "
             "or of the split X_public (m, d), optional y_public (m,), X_private (n, d) and y_private (n,)")


@dataclass(frozen=True)
class SplitData:
    """The user's own public/private split (``dpmech run --data`` with ``X_public``, ``X_private``,
    ``y_private`` and optionally ``y_public``): the pipelines use it instead of cutting one pool.

    ``private``: the private rows, checked as :func:`load_arrays` checks arrays (classes 0..C-1, every
    class present); ``split_federated`` holds out a test set from them. ``public_features`` (m, d):
    public rows of the same width; ``public_labels``: their labels in 0..C-1, or None when the file
    has no ``y_public`` (:func:`split_federated` then gives unlabelled public sets, which a step that
    reads their labels refuses: :meth:`~trainers.records.PublicData.required_labels`). ``labels`` is the
    private labels (the class set)."""

    public_features: np.ndarray
    public_labels: np.ndarray | None
    private: LabelledData

    def __post_init__(self) -> None:
        if not isinstance(self.private, LabelledData):
            raise ValueError(f"private must be LabelledData (got {type(self.private).__name__})")
        features = as_feature_matrix("X_public", self.public_features)
        if features.shape[1] != self.private.features.shape[1]:
            raise ValueError(f"X_public must have the {self.private.features.shape[1]} columns of X_private "
                             f"(got {features.shape[1]})")
        object.__setattr__(self, "public_features", features)
        if self.public_labels is not None:
            labels = np.asarray(self.public_labels)
            num_classes = int(self.private.labels.max()) + 1
            if labels.dtype.kind not in "iu" or labels.shape != (features.shape[0],):
                raise ValueError(f"y_public must be integer labels of shape ({features.shape[0]},), one per row of "
                                 f"X_public (got dtype {labels.dtype}, shape {labels.shape})")
            if labels.size and (labels.min() < 0 or labels.max() >= num_classes):
                raise ValueError(f"y_public must be in 0..{num_classes - 1}, the classes of y_private "
                                 f"(got {int(labels.min())}..{int(labels.max())})")
            object.__setattr__(self, "public_labels", labels.astype(np.int64))

    @property
    def labels(self) -> np.ndarray:
        # The class set, read by the pipelines' preparation (trainers.pipelines._common.split_and_map).
        return self.private.labels


def _npz_arrays(path: pathlib.Path) -> dict:
    """Every array of the user's ``.npz`` file ``path``; ValueError naming the file otherwise."""
    where = f"data file {str(path)!r}"
    try:
        stored = np.load(path, allow_pickle=False)
    except OSError as error:
        raise ValueError(f"{where} cannot be read ({error.strerror or type(error).__name__}); expected {_EXPECTED}") from None
    except (ValueError, EOFError):
        # numpy refuses pickled objects and text it cannot parse as an array file.
        raise ValueError(f"{where} is not an array file; expected {_EXPECTED}") from None
    if not isinstance(stored, np.lib.npyio.NpzFile):
        raise ValueError(f"{where} holds a single array (.npy); expected {_EXPECTED}")
    with stored:
        names = set(stored.files)
        split = names & set(NPZ_SPLIT_KEYS)
        plain = next((pair for pair in NPZ_KEYS if set(pair) <= names), None)
        if split and plain is not None:
            raise ValueError(f"{where} holds both {' and '.join(plain)} and the split's {', '.join(sorted(split))}; "
                             "give one form")
        if split:
            missing = [key for key in NPZ_SPLIT_KEYS if key not in names and key != "y_public"]
            if missing:
                raise ValueError(f"{where}: the public/private split needs {', '.join(missing)} (holds {sorted(names)})")
            keys = tuple(key for key in NPZ_SPLIT_KEYS if key in names)
        elif plain is not None:
            keys = plain
        else:
            raise ValueError(f"{where} holds arrays {sorted(names)}; expected {_EXPECTED}")
        try:
            return {key: stored[key] for key in keys}
        except (OSError, ValueError, EOFError):
            raise ValueError(f"{where} holds Python objects or is damaged; expected {_EXPECTED}") from None


def _typed(features: np.ndarray, labels: np.ndarray, feature_key: str, label_key: str) -> None:
    """ValueError unless ``features`` are real of shape (n, d) and ``labels`` integers of shape (n,)."""
    if features.dtype.kind not in "iuf" or features.ndim != 2:
        raise ValueError(f"{feature_key} must be real features of shape (n, d) "
                         f"(got dtype {features.dtype}, shape {features.shape})")
    if labels.dtype.kind not in "iu" or labels.shape != (features.shape[0],):
        raise ValueError(f"{label_key} must be integer labels of shape ({features.shape[0]},), one per row "
                         f"of {feature_key} (got dtype {labels.dtype}, shape {labels.shape})")


def _load_npz(path: pathlib.Path) -> LabelledData | SplitData:
    """The arrays of the user's ``.npz`` file ``path`` (:data:`NPZ_KEYS`, or the split :data:`NPZ_SPLIT_KEYS`),
    checked as :func:`load_arrays` checks arrays; ValueError naming the file, and the key whose array has the
    wrong dtype or shape."""
    arrays = _npz_arrays(path)
    try:
        if "X_private" not in arrays:
            feature_key, label_key = tuple(arrays)
            _typed(arrays[feature_key], arrays[label_key], feature_key, label_key)
            return _checked_arrays(arrays[feature_key], arrays[label_key], feature_key, label_key)
        _typed(arrays["X_private"], arrays["y_private"], "X_private", "y_private")
        public_features = arrays["X_public"]
        if public_features.dtype.kind not in "iuf" or public_features.ndim != 2:
            raise ValueError(f"X_public must be real features of shape (m, d) "
                             f"(got dtype {public_features.dtype}, shape {public_features.shape})")
        if "y_public" in arrays:
            _typed(public_features, arrays["y_public"], "X_public", "y_public")
        private = _checked_arrays(arrays["X_private"], arrays["y_private"], "X_private", "y_private")
        return SplitData(public_features, arrays.get("y_public"), private)
    except ValueError as error:
        raise ValueError(f"data file {str(path)!r}: {error}") from None


def _checked_arrays(features, labels, feature_name: str, label_name: str) -> LabelledData:
    """:class:`LabelledData` of the user's arrays, every error naming the array as the user named it."""
    data = LabelledData(as_feature_matrix(feature_name, features), labels)
    present = np.unique(data.labels)
    if present[0] != 0 or present.size != present[-1] + 1:
        raise ValueError(f"{label_name} must be 0..C-1 with every class present (got classes {present.tolist()})")
    return data


def load_arrays(features, labels=None) -> LabelledData | SplitData:
    """The user's own data: a feature matrix and integer labels, or the path of an ``.npz`` file
    (``dpmech run --data``) holding ``X`` and ``y``, or ``features`` and ``labels`` (:data:`NPZ_KEYS`),
    or the public/private split ``X_public``, optional ``y_public``, ``X_private`` and ``y_private``
    (:data:`NPZ_SPLIT_KEYS`; a :class:`SplitData`). Checked as :class:`LabelledData` (finite 2-d
    features, one integer label per row, labels 0..C-1 with every class present; public rows of the
    private rows' width, public labels among the private classes), never coerced; a file's errors
    name the file and the key."""
    if isinstance(features, (str, pathlib.Path)):
        if labels is not None:
            raise ValueError("labels must be None when features is the path of an .npz file")
        return _load_npz(pathlib.Path(features))
    if labels is None:
        raise ValueError("labels must be given with a feature matrix")
    return _checked_arrays(features, labels, "features", "labels")


DIGITS = "digits"
MNIST1D = "mnist1d"
MNIST1D_CNN = "mnist1d-cnn"
DATASETS = (DIGITS, MNIST1D, MNIST1D_CNN)
# Datasets of public-network features (not raw inputs): only pipelines that train linear heads on
# public features (FedAUXfdp, DP-Helmet, as their seeds do) can use them.
FEATURE_DATASETS = (MNIST1D_CNN,)
# The dataset name of the user's own arrays (load_arrays; dpmech run --data): raw inputs, as digits.
USER_DATA = "user-data"
# "mnist1d-cnn": MNIST-1D records generated, of which this many train the public CNN and are then dropped.
MNIST1D_CNN_SAMPLES = 100_000
MNIST1D_CNN_PUBLIC = 10_000
MNIST1D_CNN_EPOCHS = 15


def default_cache_dir() -> pathlib.Path:
    """Where generated data and the public CNN are cached: ``$XDG_CACHE_HOME/dpmech``, else ``~/.cache/dpmech``."""
    root = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
    return pathlib.Path(root) / "dpmech"


def load_dataset(name: str, num_samples: int = 10_000, *, cache_dir=None) -> LabelledData:
    """One of the embedded datasets by name. Nothing is downloaded.

    * ``"digits"``: scikit-learn's bundled 8×8 digits, 1797 records;
    * ``"mnist1d"``: MNIST-1D generated locally, ``num_samples`` records (raw signals);
    * ``"mnist1d-cnn"``: FedAUXfdp's and DP-Helmet's setting at their scale: :data:`MNIST1D_CNN_SAMPLES`
      MNIST-1D records generated (:func:`load_mnist1d`), a small CNN trained for
      :data:`MNIST1D_CNN_EPOCHS` epochs on :data:`MNIST1D_CNN_PUBLIC` of them only
      (:func:`trainers.features.pretrained_features`), and the other 90,000 records' embeddings,
      each minus the public mean embedding and then at norm 1 (``normalization="centered"``: a map
      of public data and that one record alone, so every row's norm is within the bound 1 the
      heads' sensitivities assume). The CNN's records are dropped, so no record the pipeline sees
      trained the feature map. ``num_samples`` does not apply. Generated data and the trained CNN
      are cached under ``cache_dir`` (None: :func:`default_cache_dir`): about 36 s of CPU the first
      time (21 s of it training the CNN on one torch thread, 12 s generating the records), under 1 s after.
    """
    check.choice("dataset", name, DATASETS)
    cache_dir = check.folder_or_none("cache_dir", cache_dir)
    if name == DIGITS:
        return load_digits_dataset()
    if name == MNIST1D:
        return make_mnist1d(num_samples=num_samples)
    from .features import pretrained_features  # torch loads only for this dataset

    cache_dir = default_cache_dir() if cache_dir is None else cache_dir
    generated = load_mnist1d(MNIST1D_CNN_SAMPLES, seed=0, cache_dir=cache_dir)
    return pretrained_features(generated, MNIST1D_CNN_PUBLIC, seed=0, cache_dir=cache_dir, epochs=MNIST1D_CNN_EPOCHS,
                               normalization="centered").data


def _balanced_proportions(proportions: np.ndarray, tolerance=1e-10, max_iterations=10_000) -> np.ndarray:
    # Sinkhorn scaling to rows summing to 1 and columns to C/K, as FedAUX's make_double_stochstic,
    # so that every client expects the same number of records.
    scaled = np.maximum(proportions, np.finfo(np.float64).tiny)
    num_classes, num_clients = scaled.shape
    for _ in range(max_iterations):
        scaled = scaled * (num_classes / num_clients) / scaled.sum(axis=0, keepdims=True)
        scaled = scaled / scaled.sum(axis=1, keepdims=True)
        if np.abs(scaled.sum(axis=0) - num_classes / num_clients).max() < tolerance:
            break
    return scaled


def dirichlet_label_partition(labels, num_clients, alpha, rng, *, num_classes=None, balance_clients=True) -> np.ndarray:
    """Assign every record to one of ``num_clients`` clients with Dirichlet(α) label skew.

    The scheme of Hsu, Qi & Brown (2019) as implemented by Lin et al. (2020) and FedAUX (the
    partition FedAUXfdp uses): for each class c draw the shares of the clients q_c ~ Dir(α·1_K),
    shuffle the records of class c and cut them at ⌊cumsum(q_c)·n_c⌋. With ``balance_clients``
    (FedAUX's default) the C × K share matrix is first Sinkhorn-scaled to be doubly stochastic so
    every client expects n/K records. Small α concentrates each client on few classes; α → ∞
    gives every client the pool's class mix.

    Returns an int array of length n with each record's client id: every record is assigned
    exactly once. Clients may still receive no record for small α.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0 or labels.dtype.kind not in "iu" or labels.min() < 0:
        raise ValueError("labels must be a non-empty 1-d array of non-negative integers")
    num_records = labels.size
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    if num_clients > num_records:
        raise ValueError(f"num_clients must be <= the number of records {num_records} (got {num_clients})")
    alpha = float(check.positive("alpha", alpha))
    num_classes = int(labels.max()) + 1 if num_classes is None else check.integer_scalar("num_classes", num_classes, 1)
    if labels.max() >= num_classes:
        raise ValueError(f"labels must be < num_classes={num_classes} (got {labels.max()})")
    rng = np.random.default_rng(rng)
    proportions = rng.dirichlet(np.full(num_clients, alpha), size=num_classes)
    if balance_clients:
        proportions = _balanced_proportions(proportions)
    order = np.lexsort((rng.permutation(num_records), labels))
    class_counts = np.bincount(labels, minlength=num_classes)
    class_starts = np.concatenate([[0], np.cumsum(class_counts)[:-1]])
    position_in_class = np.empty(num_records, dtype=np.int64)
    position_in_class[order] = np.arange(num_records) - class_starts[labels[order]]
    cuts = np.floor(np.cumsum(proportions, axis=1)[:, :-1] * class_counts[:, None])
    return (position_in_class[:, None] >= cuts[labels]).sum(axis=1)


def shard_label_partition(labels, num_clients, shards_per_client, rng) -> tuple:
    """Assign every record to a client by label shards: the pathological non-IID split of McMahan
    et al. (2017, §3), which Hao et al. (2021) call "unimodal non-i.i.d." (each client holds few classes).

    The records are sorted by label (ties in an order drawn from ``rng``) and cut into
    ``num_clients · shards_per_client`` contiguous shards whose sizes differ by at most one; a
    permutation drawn from ``rng`` gives every client ``shards_per_client`` shards. Client k owns
    shards ``owner == k``; a client sees at most ``shards_per_client`` classes unless a shard
    straddles a class boundary (then it sees one more per straddling shard).

    Returns ``(client, shard)``: int arrays of length n with each record's client and shard.
    Every record is assigned exactly once and every client receives at least one record.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0 or labels.dtype.kind not in "iu" or labels.min() < 0:
        raise ValueError("labels must be a non-empty 1-d array of non-negative integers")
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    shards_per_client = check.integer_scalar("shards_per_client", shards_per_client, 1)
    num_shards = num_clients * shards_per_client
    if num_shards > labels.size:
        raise ValueError(f"num_clients · shards_per_client must be <= the number of records {labels.size} "
                         f"(got {num_clients} · {shards_per_client} = {num_shards})")
    rng = np.random.default_rng(rng)
    order = np.lexsort((rng.permutation(labels.size), labels))
    shard = np.empty(labels.size, dtype=np.int64)
    # shard s holds sorted positions [⌊s·n/S⌋, ⌊(s+1)·n/S⌋): sizes differ by at most one
    shard[order] = np.arange(labels.size) * num_shards // labels.size
    owner = rng.permutation(num_shards) % num_clients
    return owner[shard], shard


def largest_class_shares(labels, assignment, num_clients, *, num_classes=None, top=3) -> np.ndarray:
    """Mean over non-empty clients of the ranked class shares: entry j is the average fraction of a
    client's records that come from its (j+1)-th largest class (Hoech et al. 2022, Table 1)."""
    labels = np.asarray(labels, dtype=np.int64)
    assignment = np.asarray(assignment, dtype=np.int64)
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    num_classes = int(labels.max()) + 1 if num_classes is None else check.integer_scalar("num_classes", num_classes, 1)
    top = check.integer_scalar("top", top, 1)
    if top > num_classes:
        raise ValueError(f"top must be <= num_classes={num_classes} (got {top})")
    counts = np.bincount(assignment * num_classes + labels, minlength=num_clients * num_classes)
    counts = counts.reshape(num_clients, num_classes)
    totals = counts.sum(axis=1)
    shares = counts[totals > 0] / totals[totals > 0, None]
    return -np.sort(-shares, axis=1)[:, :top].mean(axis=0)


def largest_class_share_table(labels, num_clients, rng, *, alphas=ALPHA_GRID, top=3, repeats=1, console=None) -> np.ndarray:
    """FedAUXfdp's Table 1 (Hoech et al. 2022) for ``labels``: ranked largest-class shares per α, averaged over ``repeats``
    partitions. Returns an array of shape (top, len(alphas)) and prints it as a rich table."""
    rng = np.random.default_rng(rng)
    repeats = check.integer_scalar("repeats", repeats, 1)
    num_classes = int(np.max(labels)) + 1
    shares = np.array([
        np.mean([
            largest_class_shares(labels, dirichlet_label_partition(labels, num_clients, alpha, rng), num_clients,
                                 num_classes=num_classes, top=top)
            for _ in range(repeats)
        ], axis=0)
        for alpha in alphas
    ]).T
    table = Table(title=f"Largest-class shares per client ({num_clients} clients, mean of {repeats} partitions)")
    table.add_column("class rank")
    for alpha in alphas:
        table.add_column(f"α = {alpha:g}", justify="right")
    for rank, row in enumerate(shares, start=1):
        table.add_row(str(rank), *(f"{100 * value:.1f}%" for value in row))
    (console or Console()).print(table)
    return shares


@dataclass(frozen=True)
class FederatedSplit:
    """Disjoint parts of one dataset: the clients' private pool, the public negative set and
    distillation set (auxiliary data), and the test set."""

    private: PrivateData
    negative: PublicData
    distillation: PublicData
    test: LabelledData


def split_federated(data: LabelledData | SplitData, rng, *, test_fraction=0.2, public_fraction=0.2,
                    negative_fraction=0.2) -> FederatedSplit:
    """Split ``data`` uniformly at random: ``test_fraction`` for the test set, ``public_fraction``
    for public auxiliary data (of which ``negative_fraction`` is the negative set and the rest the
    distillation set; FedAUX uses 20% / 80%), and the remainder as the clients' private data.

    The user's own split (:class:`SplitData`) is kept: its public rows are the public data (cut into
    the negative and distillation sets by ``negative_fraction``), ``test_fraction`` of its private rows
    the test set and the rest the clients' private data; ``public_fraction`` does not apply. A split
    without ``y_public`` gives public sets whose ``labels`` are None (unlabelled :class:`PublicData`):
    the pipelines that never read public labels run on it, and a step that does refuses it by name."""
    test_fraction = float(check.in_interval("test_fraction", test_fraction, 0.0, 1.0, low_open=True, high_open=True))
    public_fraction = float(check.in_interval("public_fraction", public_fraction, 0.0, 1.0, low_open=True, high_open=True))
    negative_fraction = float(check.in_interval("negative_fraction", negative_fraction, 0.0, 1.0, low_open=True, high_open=True))
    if isinstance(data, SplitData):
        return _kept_split(data, rng, test_fraction, negative_fraction)
    if test_fraction + public_fraction >= 1.0:
        raise ValueError(f"test_fraction + public_fraction must be < 1 (got {test_fraction + public_fraction:g})")
    num_records = len(data)
    order = np.random.default_rng(rng).permutation(num_records)
    num_test = int(round(test_fraction * num_records))
    num_public = int(round(public_fraction * num_records))
    num_negative = int(round(negative_fraction * num_public))
    parts = np.split(order, np.cumsum([num_test, num_negative, num_public - num_negative]))
    if min(part.size for part in parts) == 0:
        raise ValueError(f"the fractions leave an empty part for {num_records} records; use more data or larger fractions")
    test, negative, distillation, private = parts
    return FederatedSplit(
        private=PrivateData(data.features[private], data.labels[private]),
        negative=PublicData(data.features[negative], data.labels[negative]),
        distillation=PublicData(data.features[distillation], data.labels[distillation]),
        test=LabelledData(data.features[test], data.labels[test]),
    )


def _kept_split(data: SplitData, rng, test_fraction: float, negative_fraction: float) -> FederatedSplit:
    # The user's public/private boundary is kept; only the test set (from the private rows) and the two
    # public sets are cut, uniformly at random from ``rng``.
    generator = np.random.default_rng(rng)
    private_order = generator.permutation(len(data.private))
    public_order = generator.permutation(data.public_features.shape[0])
    num_test = int(round(test_fraction * private_order.size))
    num_negative = int(round(negative_fraction * public_order.size))
    test, private = np.split(private_order, [num_test])
    negative, distillation = np.split(public_order, [num_negative])
    if min(part.size for part in (test, private, negative, distillation)) == 0:
        raise ValueError(f"the fractions leave an empty part of the split ({len(data.private)} private, "
                         f"{public_order.size} public records); use more data or other fractions")
    features, labels = data.private.features, data.private.labels
    public = PublicData(data.public_features, data.public_labels)  # labels None: unlabelled public rows
    return FederatedSplit(
        private=PrivateData(features[private], labels[private]),
        negative=public.subset(negative),
        distillation=public.subset(distillation),
        test=LabelledData(features[test], labels[test]),
    )


def class_disjoint_split(data: LabelledData, num_public_classes: int, rng, *, test_fraction=0.2,
                         public_test_fraction=0.2) -> FederatedSplit:
    """Public and private data of different classes, as FedMD's public MNIST digits and private
    FEMNIST characters (Sun & Lyu 2021): every record with label < ``num_public_classes`` is public,
    the rest private. The private-class records are cut uniformly at random into the test set
    (``test_fraction``) and the clients' private pool; the public-class records into the
    distillation set (FedMD's public data) and, as ``negative``, a held-out ``public_test_fraction``
    on which a public model can be measured. Labels are kept, so a model has one output per class
    of either kind.
    """
    num_classes = int(data.labels.max()) + 1
    num_public_classes = check.integer_scalar("num_public_classes", num_public_classes, 1)
    if num_public_classes >= num_classes:
        raise ValueError(f"num_public_classes must be < the {num_classes} classes (got {num_public_classes})")
    test_fraction = float(check.in_interval("test_fraction", test_fraction, 0.0, 1.0, low_open=True, high_open=True))
    public_test_fraction = float(check.in_interval("public_test_fraction", public_test_fraction, 0.0, 1.0,
                                                   low_open=True, high_open=True))
    rng = np.random.default_rng(rng)
    public = rng.permutation(np.flatnonzero(data.labels < num_public_classes))
    private = rng.permutation(np.flatnonzero(data.labels >= num_public_classes))
    num_test, num_public_test = int(round(test_fraction * private.size)), int(round(public_test_fraction * public.size))
    parts = (private[num_test:], public[:num_public_test], public[num_public_test:], private[:num_test])
    if min(part.size for part in parts) == 0:
        raise ValueError(f"the fractions leave an empty part for {len(data)} records; use more data or other fractions")
    return FederatedSplit(*(kind(data.features[part], data.labels[part])
                            for kind, part in zip((PrivateData, PublicData, PublicData, LabelledData), parts)))


class PublicFeatureExtractor(BaseEstimator):
    """A frozen feature map fitted on public data only: PCA, a public scale, per-example clipping.

    ``fit`` accepts only :class:`PublicData` (one or more sets), so private records cannot reach
    it. It fits a PCA with ``num_components`` components and sets the public scale ``norm_scale_``
    to the ``norm_quantile`` quantile of the public projected norms. ``transform`` maps any rows
    to z = PCA(x) / norm_scale_ clipped per example to ‖z‖₂ <= 1, so ``feature_bound_ = 1`` holds
    for every output by construction and the scale depends on public data only (FedAUX's code
    instead divides by the max norm over private ∪ public features, which depends on private
    data).
    """

    def __init__(self, num_components=16, norm_quantile=0.95):
        self.num_components = num_components
        self.norm_quantile = norm_quantile

    def fit(self, *public_sets: PublicData):
        num_components = check.integer_scalar("num_components", self.num_components, 1)
        norm_quantile = float(check.in_interval("norm_quantile", self.norm_quantile, 0.0, 1.0, low_open=True, high_open=False))
        if not public_sets:
            raise ValueError("fit needs at least one PublicData set")
        for public in public_sets:
            if not isinstance(public, PublicData):
                raise TypeError(
                    f"PublicFeatureExtractor fits on PublicData only (got {type(public).__name__}); "
                    "private data must never reach the feature extractor"
                )
        features = np.vstack([public.features for public in public_sets])
        if num_components > min(features.shape):
            raise ValueError(f"num_components must be <= {min(features.shape)} for this public data (got {num_components})")
        self.pca_ = PCA(n_components=num_components, svd_solver="full").fit(features)
        norms = np.linalg.norm(self.pca_.transform(features), axis=1)
        self.norm_scale_ = float(np.quantile(norms, norm_quantile))
        if self.norm_scale_ <= 0:
            raise ValueError("the public features project to zero; cannot set a norm scale")
        self.feature_bound_ = 1.0
        return self

    def transform(self, features) -> np.ndarray:
        check_is_fitted(self, "pca_")
        projected = self.pca_.transform(as_feature_matrix("features", features)) / self.norm_scale_
        return dpmech.clip_features(projected, self.feature_bound_)
