"""Warning classes for caveats a user of a privacy result must not miss.

They are raised with :func:`warnings.warn` where the caveat arises, besides the
notes that results carry, so that ``python -W error::dpmech.PrivacyWarning``
(or a ``pytest`` ``filterwarnings`` entry) turns every one of them into a
failure in a user's pipeline.
"""


class PrivacyWarning(UserWarning):
    """Base class: a release or a guarantee is weaker than it may look."""


class VacuousGuaranteeWarning(PrivacyWarning):
    """A guarantee holds but says nothing useful, e.g. NFDP's δ >= 1/n, met by publishing k records in the clear."""


class NoGuaranteeWarning(PrivacyWarning):
    """A release carries no differential-privacy guarantee at all (ε = ∞), e.g. Fed-ZDA or a noiseless head."""


class UnprotectedReleaseWarning(PrivacyWarning):
    """Part of a release is outside the guarantee stated for the rest, e.g. FedGM's synthetic images under label DP."""
