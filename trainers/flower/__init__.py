"""Flower deployment of the one-shot pipelines (extra ``dpmech[flower]``; imports ``flwr`` lazily).

* :mod:`.encoding`: the SecAgg+ encoding of a noisy share, exact on Flower's grid, refused
  outside its range;
* :mod:`.accounting`: what the encoding and the dropouts cost (realised honest shares, floor,
  certified quantised-sum event, dropout table);
* :mod:`.dphelmet`: Distributed DP-Helmet as a Flower ClientApp/ServerApp pair over SecAgg+;
* :mod:`.simulation`: :func:`run_flower_round`, the entry point of ``dpmech run --engine flower``.
"""

from dpmech.optional_dependencies import ensure_installed

ensure_installed("flwr", purpose="trainers.flower")
del ensure_installed
