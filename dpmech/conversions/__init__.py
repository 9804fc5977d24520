"""Conversions between privacy notions, as functions of a mechanism's parameters (σ, Δ, ε, K, q).

One small module per notion, every function broadcasting over numpy arrays:

* :mod:`.privacy_loss`: privacy-loss functions, their inverses and tight δ(ε), in dp_accounting's conventions;
* :mod:`.fdp`: f-DP trade-off curves, μ-GDP and the profile ↔ trade-off conversions;
* :mod:`.renyi`: Rényi DP and zCDP curves and their conversions to (ε, δ);
* :mod:`.composition`: advanced composition of k (ε, δ)-DP mechanisms.

Pure numpy/scipy. Not imported by ``import dpmech``; exports are wired by the package's lead.
"""
