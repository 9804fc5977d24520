"""Drop-in accountants for the DP-SGD libraries users already run.

* :mod:`dpmech.integrations.opacus`: :class:`~dpmech.integrations.opacus.OpacusAccountant`, an opacus
  ``IAccountant`` (``PrivacyEngine().accountant``) whose ε is dpmech's certified upper end for the
  Poisson-subsampled Gaussian, and an opacus-style ``get_noise_multiplier`` that is never under-noised;
  importing the module registers the accountant with opacus as ``"dpmech"``. Needs the ``opacus`` extra.
* :mod:`dpmech.integrations.dp_accounting`: :class:`~dpmech.integrations.dp_accounting.DpmechAccountant`,
  a dp_accounting ``PrivacyAccountant`` that reads ``DpEvent``s as :meth:`dpmech.PrivacyLedger.from_dp_event`
  does and refuses any it cannot account with a certified interval.

Neither module is imported by ``import dpmech``: the core stays importable without torch. Both state
their guarantees under add/remove neighbours by default, as the two libraries do.
"""
