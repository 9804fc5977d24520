"""DP-Helmet's one-class-per-user ablation (seed 002 RQ3): every user's records from one class,
the classes spread evenly over the users, and the noise and guarantee those of the uniform split."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.profiles import examples
from trainers.pipelines.dphelmet import DpHelmetConfig, one_class_shares, prepare_users, run_dphelmet
from tests.trainers.digits_fixtures import digits

ONE_CLASS = DpHelmetConfig(num_users=12, records_per_user=20, epochs=3, num_components=8, one_class_per_user=True)


@examples(0.5)
@given(num_users=st.integers(1, 40), records_per_user=st.integers(1, 8), num_classes=st.integers(2, 6),
       seed=st.integers(0, 2**32 - 1))
def test_every_user_holds_one_class_and_no_record_is_shared(num_users, records_per_user, num_classes, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, 400)
    needed = -(-num_users // num_classes) * records_per_user
    if np.bincount(labels, minlength=num_classes).min() < needed:
        with pytest.raises(ValueError, match="one_class_per_user"):
            one_class_shares(labels, num_users, records_per_user, num_classes, rng)
        return
    shares = one_class_shares(labels, num_users, records_per_user, num_classes, rng)
    assert shares.shape == (num_users, records_per_user)
    assert np.unique(shares).size == shares.size
    user_classes = labels[shares]
    assert np.all(user_classes == user_classes[:, :1])
    counts = np.bincount(user_classes[:, 0], minlength=num_classes)
    assert counts.max() - counts.min() <= 1


def test_pipeline_gives_each_user_one_class_at_the_uniform_splits_noise(digits):
    prepared = prepare_users(digits, ONE_CLASS, seed=1)
    for user in range(ONE_CLASS.num_users):
        assert np.unique(prepared.local(user).labels).size == 1
    assert {int(prepared.local(u).labels[0]) for u in range(ONE_CLASS.num_users)} == set(range(10))
    uniform = prepare_users(digits, DpHelmetConfig(num_users=12, records_per_user=20, epochs=3, num_components=8), seed=1)
    assert any(np.unique(uniform.local(u).labels).size > 1 for u in range(12))
    # who holds which records is not part of the mechanism: same σ_u, same event
    assert prepared.settings.user_noise_std == uniform.settings.user_noise_std
    assert prepared.settings.event == uniform.settings.event
    result = run_dphelmet(digits, ONE_CLASS, seed=1)
    assert result.config["one_class_per_user"] is True
    assert result.guarantees["tight"].epsilon <= ONE_CLASS.epsilon


def test_too_few_records_of_a_class_raises(digits):
    with pytest.raises(ValueError, match="one_class_per_user: class"):
        prepare_users(digits, DpHelmetConfig(num_users=15, records_per_user=70, num_components=8,
                                             one_class_per_user=True), seed=0)


def test_one_class_per_user_must_be_a_bool():
    with pytest.raises(ValueError, match="one_class_per_user"):
        DpHelmetConfig(one_class_per_user=1)
