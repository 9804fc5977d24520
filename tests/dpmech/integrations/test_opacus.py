"""OpacusAccountant inside opacus: its steps, its ε (the ledger's certified upper end), checkpoints,
registration, calibration, and a real DP-SGD loop with ``PrivacyEngine.make_private``."""

import io
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.profiles import examples

from dpmech import ADD_REMOVE_ONE, GaussianEvent, PoissonSampledEvent, PrivacyLedger


@pytest.fixture(scope="module", autouse=True)
def opacus_and_the_integration():
    """opacus, torch and dpmech's integration, bound as this module's names when its first test runs: both
    xdist workers collect every file and only one runs this one, so importing opacus at collection cost the
    other worker 1.1 s of CPU (issue 32). Without opacus every test here is skipped."""
    global opacus, torch, RDPAccountant, create_accountant, register_accountant, opacus_registry
    global integration, OpacusAccountant, get_noise_multiplier
    opacus = pytest.importorskip("opacus")
    torch = pytest.importorskip("torch")
    from opacus.accountants import RDPAccountant, create_accountant, register_accountant
    from opacus.accountants import registry as opacus_registry

    from dpmech.integrations import opacus as integration
    from dpmech.integrations.opacus import OpacusAccountant, get_noise_multiplier


def ledger_epsilon(history, delta):
    """ε of a history, written out by hand as the ledger the accountant must build."""
    ledger = PrivacyLedger(ADD_REMOVE_ONE)
    for sigma, rate, steps in history:
        ledger.record(PoissonSampledEvent(GaussianEvent(sigma), rate), count=steps)
    return ledger.epsilon(delta).epsilon


def test_steps_merge_as_opacus_history_does():
    ours, rdp = OpacusAccountant(), RDPAccountant()
    for sigma, rate in [(1.0, 0.01)] * 3 + [(1.2, 0.01)] + [(1.0, 0.01)] * 2:
        ours.step(noise_multiplier=sigma, sample_rate=rate)
        rdp.step(noise_multiplier=sigma, sample_rate=rate)
    assert ours.history == rdp.history == [(1.0, 0.01, 3), (1.2, 0.01, 1), (1.0, 0.01, 2)]
    assert len(ours) == 6
    assert ours.mechanism() == "dpmech"


def test_dp_sgd_row_is_certified_and_within_2e_3_of_the_truth():
    # q = 0.01, σ = 1, 1000 steps, δ = 1e-5: the true ε is >= 1.827967 (dpmech's certified lower end
    # lies above it) and dp_accounting's PLD at 1e-4 gives 1.828244.
    accountant = OpacusAccountant()
    for _ in range(1000):
        accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    assert accountant.history == [(1.0, 0.01, 1000)]
    epsilon = accountant.get_epsilon(1e-5)
    assert 1.827967 <= epsilon <= 1.830244
    guarantee = accountant.get_guarantee(1e-5)
    assert 1.827967 <= guarantee.interval[0] <= epsilon == guarantee.epsilon
    assert guarantee.neighbouring == ADD_REMOVE_ONE and "under add-remove-one" in str(guarantee)
    assert epsilon == ledger_epsilon([(1.0, 0.01, 1000)], 1e-5)


history_entries = st.lists(st.tuples(st.floats(0.6, 5.0), st.floats(0.001, 0.2), st.integers(1, 400)),
                           min_size=1, max_size=3)


@pytest.mark.filterwarnings("ignore:Optimal order is the largest alpha")  # RDP's bound stays valid, only looser
@examples(0.1)
@given(history_entries, st.floats(-9.0, -3.0))
@pytest.mark.slow  # 5.78 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_epsilon_is_the_ledgers_and_below_opacus_rdp(history, log10_delta):
    delta = 10.0**log10_delta
    ours, rdp = OpacusAccountant(), RDPAccountant()
    ours.history, rdp.history = list(history), list(history)
    epsilon = ours.get_epsilon(delta)
    assert epsilon == ledger_epsilon(history, delta)
    # RDP's conversion is a proven upper bound too (Mironov 2017), never tighter than the optimal one.
    assert 0.0 < epsilon <= rdp.get_epsilon(delta) + 1e-9


def test_a_narrower_width_stays_inside_the_default_interval():
    accountant = OpacusAccountant()
    accountant.history = [(1.0, 0.01, 1000)]
    lower, _, upper = accountant.get_guarantee(1e-5).interval
    narrow_lower, _, narrow_upper = accountant.get_guarantee(1e-5, width=2e-5).interval
    assert narrow_upper - narrow_lower <= 2e-5
    assert lower <= narrow_upper == accountant.get_epsilon(1e-5, width=2e-5) and narrow_lower <= upper
    # The options also reach a history without steps, or with a noiseless one.
    assert OpacusAccountant().get_epsilon(1e-5, width=1e-4) == 0.0
    accountant.history = [(0.0, 0.1, 1)]
    assert accountant.get_epsilon(1e-5, width=1e-4) == math.inf


def test_no_step_is_zero_and_a_noiseless_step_is_infinite():
    accountant = OpacusAccountant()
    assert accountant.get_epsilon(1e-5) == 0.0 and len(accountant) == 0
    accountant.step(noise_multiplier=0.0, sample_rate=0.1)
    assert accountant.get_epsilon(1e-5) == math.inf
    assert "noise multiplier 0" in accountant.get_guarantee(1e-5).note


def test_state_dict_round_trip_also_through_torch_save():
    accountant = OpacusAccountant()
    for sigma in (1.0, 1.0, 2.0):
        accountant.step(noise_multiplier=sigma, sample_rate=0.05)
    buffer = io.BytesIO()
    torch.save(accountant.state_dict(), buffer)
    buffer.seek(0)
    restored = OpacusAccountant()
    restored.load_state_dict(torch.load(buffer, weights_only=False))
    assert restored.history == accountant.history == [(1.0, 0.05, 2), (2.0, 0.05, 1)]
    assert restored.get_epsilon(1e-5) == accountant.get_epsilon(1e-5)
    restored.step(noise_multiplier=2.0, sample_rate=0.05)
    assert restored.history[-1] == (2.0, 0.05, 2)


@pytest.mark.parametrize("state,parameter", [
    ({"history": [(1.0, 0.01, 3)], "mechanism": "rdp"}, "mechanism"),
    ({"history": [(1.0, 1.5, 3)], "mechanism": "dpmech"}, "sample_rate"),
    ({"history": [(-1.0, 0.1, 3)], "mechanism": "dpmech"}, "noise_multiplier"),
    ({"history": [(1.0, 0.1, 0)], "mechanism": "dpmech"}, "steps"),
    ({"history": [(1.0, 0.1)], "mechanism": "dpmech"}, "history"),
    ({}, "state dict"),
])
def test_a_bad_state_dict_is_refused_and_leaves_the_history(state, parameter):
    accountant = OpacusAccountant()
    accountant.step(noise_multiplier=1.0, sample_rate=0.1)
    with pytest.raises(ValueError, match=parameter):
        accountant.load_state_dict(state)
    assert accountant.history == [(1.0, 0.1, 1)]


@pytest.mark.parametrize("call,parameter", [
    (lambda: OpacusAccountant().step(noise_multiplier=1.0, sample_rate=0.0), "sample_rate"),
    (lambda: OpacusAccountant().step(noise_multiplier=math.nan, sample_rate=0.1), "noise_multiplier"),
    (lambda: OpacusAccountant().get_epsilon(0.0), "delta"),
    (lambda: OpacusAccountant().get_epsilon(1e-5, eps_error=0.01), "options"),
    (lambda: get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01), "epochs or steps"),
    (lambda: get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, epochs=1, steps=100),
     "epochs or steps"),
    # 1 epoch at q = 256/60000 is 234.375 steps: opacus would truncate to 234, one step short of a loader's 235.
    (lambda: get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=256 / 60000, epochs=1), "steps"),
    (lambda: get_noise_multiplier(target_epsilon=0.0, target_delta=1e-5, sample_rate=0.01, steps=10),
     "target_epsilon"),
    (lambda: get_noise_multiplier(target_epsilon=1.0, target_delta=1.0, sample_rate=0.01, steps=10), "target_delta"),
])
def test_bad_input_names_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_calibration_row_and_the_accountant_confirms_it():
    sigma = get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, steps=1000)
    assert 1.4150 <= sigma <= 1.4175
    # 10 epochs at q = 0.01 are the same 1000 steps.
    assert get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=0.01, epochs=10) == sigma
    accountant = OpacusAccountant()
    accountant.history = [(sigma, 0.01, 1000)]
    assert accountant.get_epsilon(1e-5) <= 1.0
    # Not over-noised beyond the tolerance: 0.5 % less noise no longer meets the target.
    accountant.history = [(sigma / 1.005, 0.01, 1000)]
    assert accountant.get_epsilon(1e-5) > 1.0


def test_small_epsilon_calibration_is_confirmed_by_the_accountants_own_grid():
    # At ε = 0.1 the calibration's grid certifies a σ whose default-grid ε is 0.10030 (1000 steps,
    # q = 0.01): the σ returned is raised until the accountant itself reports at most the target.
    sigma = get_noise_multiplier(target_epsilon=0.1, target_delta=1e-5, sample_rate=0.01, steps=1000)
    accountant = OpacusAccountant()
    accountant.history = [(sigma, 0.01, 1000)]
    assert accountant.get_epsilon(1e-5) <= 0.1
    assert sigma < 9.80330688953618 * 1.01


@pytest.mark.filterwarnings("ignore:Secure RNG turned off")
def test_registered_by_name_and_registration_is_idempotent(monkeypatch):
    assert isinstance(create_accountant("dpmech"), OpacusAccountant)
    integration.register()
    assert isinstance(opacus.PrivacyEngine(accountant="dpmech").accountant, OpacusAccountant)
    monkeypatch.setitem(opacus_registry._ACCOUNTANTS, "dpmech", RDPAccountant)
    with pytest.raises(ValueError, match="different accountant"):
        integration.register()
    monkeypatch.undo()
    with pytest.raises(ValueError, match="already registered"):
        register_accountant("dpmech", RDPAccountant)


def tiny_training(engine, **private):
    """A logistic model on 64 random points, batch 8 (q = 1/8), one epoch of Poisson-sampled DP-SGD."""
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(64, 3, generator=generator)
    labels = (features[:, 0] > 0).long()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(features, labels), batch_size=8)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = (engine.make_private_with_epsilon if "target_epsilon" in private
                                else engine.make_private)(module=model, optimizer=optimizer, data_loader=loader,
                                                          max_grad_norm=1.0, **private)
    loss = torch.nn.CrossEntropyLoss()
    for batch_features, batch_labels in loader:
        optimizer.zero_grad()
        loss(model(batch_features), batch_labels).backward()
        optimizer.step()
    return optimizer


@pytest.mark.filterwarnings("ignore:Secure RNG turned off", "ignore:Full backward hook")
def test_privacy_engine_with_our_accountant_trains_and_reports_the_ledgers_epsilon():
    torch.manual_seed(0)
    engine = opacus.PrivacyEngine()
    engine.accountant = OpacusAccountant()  # before make_private, which hooks the optimizer to it
    tiny_training(engine, noise_multiplier=1.1)
    assert engine.accountant.history == [(1.1, 0.125, 8)]
    epsilon = engine.get_epsilon(1e-5)
    assert math.isfinite(epsilon) and epsilon > 0.0
    assert epsilon == ledger_epsilon([(1.1, 0.125, 8)], 1e-5)


@pytest.mark.filterwarnings("ignore:Secure RNG turned off", "ignore:Full backward hook")
def test_make_private_with_epsilon_by_name_meets_the_target():
    # opacus's own search creates the accountant by its mechanism name, so registration is what makes this work.
    torch.manual_seed(0)
    engine = opacus.PrivacyEngine(accountant="dpmech")
    optimizer = tiny_training(engine, target_epsilon=3.0, target_delta=1e-5, epochs=1)
    assert isinstance(engine.accountant, OpacusAccountant)
    assert engine.accountant.history == [(optimizer.noise_multiplier, 0.125, 8)]
    assert engine.get_epsilon(1e-5) <= 3.0

