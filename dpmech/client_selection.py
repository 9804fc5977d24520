r"""Client selection in federated rounds as a ledger event, at user level.

In each of ``rounds`` rounds a server selects clients, each selected client contributes, and the round
releases one mechanism's output (a clipped, noised aggregate, say). ``round_event`` is that release
seen at *user level*: its sensitivity is one user's whole contribution to the round (one client holds one
user's data), so its neighbours differ in one user. Selecting the clients is then sampling users, and
the round is the sampled event:

* ``clients_per_round = k`` of ``num_clients = n``, uniformly without replacement, independently each
  round: :class:`~dpmech.events.SampledWithoutReplacementEvent` (replace-one users; amplification by
  sampling without replacement, Balle, Barthe & Gaboardi 2018, Thm. 9 and 10; the dominating pairs of
  Zhu, Dong & Wang 2022);
* ``participation_probability = q``, each client independently each round (Poisson sampling):
  :class:`~dpmech.events.PoissonSampledEvent` (add/remove-one users; Zhu, Dong & Wang 2022).

The rounds compose adaptively: the event returned is a :class:`~dpmech.events.SelfComposedEvent` of the
sampled round, ``rounds`` times. Record it in a :class:`~dpmech.PrivacyLedger` of the relation it names
(``replace-one`` without replacement, ``add-remove-one`` for Poisson)::

    event = client_selection_event(GaussianEvent(sigma), rounds=100, clients_per_round=10, num_clients=1000)
    PrivacyLedger(REPLACE_ONE).record(event).epsilon(1e-5)

What it assumes: the selection is uniform and independent of the data and of earlier outputs, and it is
not revealed; a client that drops out after selection still counts as selected (dropping out shrinks the
sample, which this accounting does not credit, and does not harm it only if the release's sensitivity
still bounds one user's effect). Under Poisson sampling the number of selected clients is random and
depends on whether a user is present: ``round_event`` must describe the release given the selected set
whatever its size, so the release may not divide by that number or scale its noise with it (divide by a
public constant instead, the fixed-denominator estimator of McMahan, Ramage, Talwar & Zhang 2018), and a
round that selects nobody must release the same noise around the empty sum.
"""

from __future__ import annotations

from . import validation as check
from .events import PoissonSampledEvent, PrivacyEvent, SampledWithoutReplacementEvent, SelfComposedEvent


def client_selection_event(round_event: PrivacyEvent, *, rounds: int, clients_per_round: int | None = None,
                           num_clients: int | None = None,
                           participation_probability: float | None = None) -> SelfComposedEvent:
    """``rounds`` rounds of ``round_event`` (user level), each on the clients selected that round.

    Give ``clients_per_round`` with ``num_clients`` (k of n uniformly without replacement; replace-one) or
    ``participation_probability`` (Poisson; add/remove-one), not both. Returns
    ``SelfComposedEvent(SampledWithoutReplacementEvent(round_event, k, n), rounds)`` or
    ``SelfComposedEvent(PoissonSampledEvent(round_event, q), rounds)`` (see the module docstring).
    """
    if not isinstance(round_event, PrivacyEvent):
        raise ValueError(f"round_event must be a dpmech event (got {type(round_event).__name__})")  # noqa: TRY004 - dpmech refuses bad input with ValueError
    rounds = check.integer_scalar("rounds", rounds, 1)
    uniform = clients_per_round is not None or num_clients is not None
    if uniform == (participation_probability is not None):
        raise ValueError("clients_per_round: give clients_per_round with num_clients (uniform without replacement) "
                         "or participation_probability (Poisson), exactly one of the two")
    if participation_probability is not None:
        return SelfComposedEvent(PoissonSampledEvent(round_event, participation_probability), rounds)
    if clients_per_round is None or num_clients is None:
        missing = "clients_per_round" if clients_per_round is None else "num_clients"
        raise ValueError(f"{missing} is required: uniform selection needs clients_per_round and num_clients")
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    clients_per_round = check.integer_scalar("clients_per_round", clients_per_round, 1)
    if clients_per_round > num_clients:
        raise ValueError(f"clients_per_round must be in [1, num_clients = {num_clients}] (got {clients_per_round})")
    return SelfComposedEvent(SampledWithoutReplacementEvent(round_event, clients_per_round, num_clients), rounds)
