"""Conversions between privacy notions, as functions of a mechanism's parameters (σ, Δ, ε, K, q).

One small module per notion; every function validates its inputs with :mod:`dpmech.validation`
and broadcasts over numpy arrays:

* :mod:`.privacy_loss`: privacy-loss functions ℓ(x), their inverses and tight δ(ε), in
  dp_accounting's conventions (``adjacency="add"``/``"remove"``, Poisson ``sampling_prob``):
  ``gaussian_*`` (also ``"replace"``), ``laplace_*``, ``discrete_laplace_*``,
  ``discrete_gaussian_*`` (truncated, as dp_accounting), ``mixture_gaussian_*``, and
  ``randomized_response_privacy_losses`` / ``randomized_response_delta_for_epsilon``;
* :mod:`.fdp`: trade-off curves (``gdp_tradeoff``, ``approximate_dp_tradeoff``,
  ``laplace_tradeoff``, ``randomized_response_tradeoff``), ``tradeoff_from_profile`` and
  ``profile_from_tradeoff`` (Dong, Roth & Su, Prop. 2.12), ``gaussian_gdp_mu``, ``gdp_delta``,
  ``gdp_epsilon``, ``gdp_mu``;
* :mod:`.renyi`: RDP curves (``gaussian_rdp``, ``laplace_rdp``, ``pure_dp_rdp``,
  ``randomized_response_rdp``), zCDP (``gaussian_zcdp``, ``pure_dp_zcdp``), and conversions to
  (ε, δ) (``rdp_epsilon``, ``rdp_delta``, ``zcdp_epsilon``, ``gaussian_rdp_epsilon``);
* :mod:`.composition`: ``advanced_composition`` and ``smallest_epsilon_from_advanced_composition``
  (Kairouz, Oh & Viswanath 2015, with dp_accounting's semantics) and ``drv_composition``.

Values that are bounds (an RDP-route ε, a δ from a trade-off curve, a composed ε) are never on
the optimistic side; tight values (δ(ε) of a mechanism) are double-precision evaluations checked
against dp_accounting's own test answers and 50-digit references.

Pure numpy/scipy. Not imported by ``import dpmech``: import it as ``dpmech.conversions``.
"""
