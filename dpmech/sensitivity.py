"""L2 sensitivity bounds of regularised empirical risk minimisers, and the conventions they rest on.

All bounds are for J(θ) = (1/n) Σ ℓ(θ; x_i, y_i) + (λ/2)‖θ‖² under the
replace-one neighbouring relation.
"""

from __future__ import annotations

from . import _validation as check


def sklearn_c(regularization, n):
    """scikit-learn's ``C`` for the mean-form objective with L2 strength λ on n records.

    scikit-learn minimises C·Σ ℓ_i + ½‖θ‖², which is n·C times
    (1/n)Σ ℓ_i + (1/(2nC))‖θ‖², so the objective J above is C = 1/(nλ).
    FedAUX's public code uses C = 1/λ, i.e. the regulariser λ/n, whose
    sensitivity bound is 2/λ rather than 2/(nλ): its noise is n times too small.
    """
    regularization = check.positive("regularization", regularization)
    n = check.integer_at_least("n", n, 1)
    return 1.0 / (n * regularization)
