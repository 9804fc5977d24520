"""Known answers from dp_accounting 0.6.0's own tests, copied verbatim.

Source: google/differential-privacy, python/dp_accounting/pld/privacy_loss_mechanism_test.py
(as shipped in the dp-accounting 0.6.0 wheel), pld/privacy_loss_distribution_test.py
(RandomizedResponsePrivacyLossDistributionTest) and, at the end, pld/accountant_test.py (advanced
composition, whose columns its comments name). Each list is the ``parameterized.parameters``
table of the test named in its comment, with ADD, REM and REP written as 'add', 'remove' and
'replace'. Columns: (noise parameter, sensitivity, sampling_prob, adjacency, input, expected).
dp_accounting checks them with ``assertAlmostEqual`` (7 decimal places).
"""

from math import inf

# LaplacePrivacyLossTest.test_laplace_privacy_loss: 18 rows
TEST_LAPLACE_PRIVACY_LOSS = [
    (1.0, 1.0, 1.0, 'add', -0.1, 1.0),
    (1.0, 1.0, 1.0, 'add', 2.0, -1.0),
    (1.0, 1.0, 1.0, 'add', 0.3, 0.4),
    (4.0, 4.0, 1.0, 'add', -0.4, 1.0),
    (5.0, 5.0, 1.0, 'add', 7.0, -1.0),
    (7.0, 7.0, 1.0, 'add', 2.1, 0.4),
    (1.0, 1.0, 0.8, 'add', 1.1, -0.86483972516319),
    (2.0, 1.0, 0.2, 'add', -0.2, 0.0819629071393439),
    (1.0, 1.0, 0.5, 'add', 0.5, 0.0),
    (1.0, 1.0, 1.0, 'remove', -1.1, 1.0),
    (1.0, 1.0, 1.0, 'remove', 1.0, -1.0),
    (1.0, 1.0, 1.0, 'remove', -0.7, 0.4),
    (4.0, 4.0, 1.0, 'remove', -4.4, 1.0),
    (5.0, 5.0, 1.0, 'remove', 2.0, -1.0),
    (7.0, 7.0, 1.0, 'remove', -4.9, 0.4),
    (1.0, 1.0, 0.8, 'remove', -1.1, 0.86483972516319),
    (2.0, 1.0, 0.2, 'remove', 0.2, -0.0819629071393439),
    (1.0, 1.0, 0.5, 'remove', -0.5, 0.0),
]
# LaplacePrivacyLossTest.test_laplace_inverse_privacy_loss: 26 rows
TEST_LAPLACE_INVERSE_PRIVACY_LOSS = [
    (1.0, 1.0, 1.0, 'add', 1.0, 0.0),
    (1.0, 1.0, 1.0, 'add', -1.0, inf),
    (1.0, 1.0, 1.0, 'add', 0.4, 0.3),
    (4.0, 4.0, 1.0, 'add', 1.0, 0.0),
    (5.0, 5.0, 1.0, 'add', -1.0, inf),
    (7.0, 7.0, 1.0, 'add', 0.4, 2.1),
    (1.0, 1.0, 1.0, 'add', 2.0, -inf),
    (3, 1, 1, 'add', 3.1, -inf),
    (4.0, 4.0, 1.0, 'add', 1.1, -inf),
    (1.0, 1.0, 0.8, 'add', -0.8649, inf),
    (1.0, 1.0, 0.7, 'add', 1.0, -inf),
    (2.0, 1.0, 0.2, 'add', 0.0819629071393439, 0),
    (1.0, 1.0, 0.5, 'add', 0.0, 0.5),
    (1.0, 1.0, 1.0, 'remove', 1.0, -1.0),
    (1.0, 1.0, 1.0, 'remove', -1.0, inf),
    (1.0, 1.0, 1.0, 'remove', 0.4, -0.7),
    (4.0, 4.0, 1.0, 'remove', 1.0, -4.0),
    (5.0, 5.0, 1.0, 'remove', -1.0, inf),
    (7.0, 7.0, 1.0, 'remove', 0.4, -4.9),
    (1.0, 1.0, 1.0, 'remove', 2.0, -inf),
    (3.0, 1.0, 1.0, 'remove', 3.1, -inf),
    (4.0, 4.0, 1.0, 'remove', 1.1, -inf),
    (1.0, 1.0, 0.8, 'remove', 0.86483972516319, -1.0),
    (2.0, 1.0, 0.2, 'remove', -0.082, inf),
    (1.0, 1.0, 0.7, 'remove', 1.0, -inf),
    (1.0, 1.0, 0.5, 'remove', 0.0, -0.5),
]
# LaplacePrivacyLossTest.test_laplace_get_delta_for_epsilon: 24 rows
TEST_LAPLACE_GET_DELTA_FOR_EPSILON = [
    (1.0, 1.0, 1.0, 'add', 1.0, 0.0),
    (3.0, 3.0, 1.0, 'add', 1.0, 0.0),
    (2.0, 4.0, 1.0, 'add', 2.0, 0.0),
    (2.0, 4.0, 1.0, 'add', 0.5, 0.52763345),
    (1.0, 1.0, 1.0, 'add', 0.0, 0.39346934),
    (2.0, 2.0, 1.0, 'add', 0.0, 0.39346934),
    (1.0, 1.0, 1.0, 'add', -2.0, 0.86466472),
    (1.0, 1.0, 0.8, 'add', 1.0, 0.0),
    (2.0, 4.0, 0.8, 'add', 0.5, 0.3243606497234246),
    (1.0, 1.0, 0.6, 'add', 0.2, 0.1401134521354217),
    (2.0, 2.0, 0.3, 'add', 0.0, 0.1180408020862099),
    (5.0, 5.0, 0.2, 'add', 2.0, 0.0),
    (1.0, 1.0, 1.0, 'remove', 1.0, 0.0),
    (3.0, 3.0, 1.0, 'remove', 1.0, 0.0),
    (2.0, 4.0, 1.0, 'remove', 2.0, 0.0),
    (2.0, 4.0, 1.0, 'remove', 0.5, 0.52763345),
    (1.0, 1.0, 1.0, 'remove', 0.0, 0.39346934),
    (2.0, 2.0, 1.0, 'remove', 0.0, 0.39346934),
    (1.0, 1.0, 1.0, 'remove', -2.0, 0.86466472),
    (1.0, 1.0, 0.8, 'remove', 1.0, 0.0),
    (2.0, 4.0, 0.8, 'remove', 0.5, 0.4039564635032081),
    (1.0, 1.0, 0.6, 'remove', 0.2, 0.1741992102060086),
    (2.0, 2.0, 0.3, 'remove', 0.0, 0.1180408020862099),
    (5.0, 5.0, 0.2, 'remove', -0.25, 0.2211992169285951),
]
# LaplacePrivacyLossTest.test_laplace_get_delta_for_epsilon_vectorized: 6 rows
TEST_LAPLACE_GET_DELTA_FOR_EPSILON_VECTORIZED = [
    (1.0, 1.0, 1.0, 'add', [-2.0, -1.0, 0.0, 1.0], [0.86466472, 0.63212056, 0.39346934, 0.0]),
    (2.0, 4.0, 1.0, 'add', [-0.5, 0.0, 0.5, 1.0, 2.0], [0.7134952031, 0.6321205588, 0.5276334473, 0.3934693403, 0.0]),
    (1.0, 1.0, 0.2, 'add', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3], [0.2591817793, 0.2008511573, 0.1405456165, 0.07869386806, 0.01879989609, 0.0, 0.0]),
    (1.0, 1.0, 1.0, 'remove', [-2.0, -1.0, 0.0, 1.0], [0.86466472, 0.63212056, 0.39346934, 0.0]),
    (2.0, 4.0, 1.0, 'remove', [-0.5, 0.0, 0.5, 1.0, 2.0], [0.7134952031, 0.6321205588, 0.5276334473, 0.3934693403, 0.0]),
    (1.0, 1.0, 0.2, 'remove', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3], [0.2591817793, 0.1812692469, 0.1121734314, 0.07869386806, 0.05015600993, 0.02391739939, 0.0]),
]
# GaussianPrivacyLossTest.test_gaussian_privacy_loss: 36 rows
TEST_GAUSSIAN_PRIVACY_LOSS = [
    (1.0, 1.0, 1.0, 'add', 5.0, -4.5),
    (1.0, 1.0, 1.0, 'add', -3.0, 3.5),
    (1.0, 2.0, 1.0, 'add', 3.0, -4.0),
    (4.0, 4.0, 1.0, 'add', 20.0, -4.5),
    (5.0, 5.0, 1.0, 'add', -15.0, 3.5),
    (7.0, 14.0, 1.0, 'add', 21.0, -4.0),
    (1.0, 1.0, 0.8, 'add', 0.5, 0.0),
    (1.0, 1.0, 0.5, 'add', -4, 0.6820994357113515),
    (1.0, 2.0, 0.7, 'add', 0, 0.929541389699331),
    (4.0, 4.0, 0.3, 'add', -16, 0.3519252431310541),
    (5.0, 5.0, 0.45, 'add', 20, -2.737735427805667),
    (7.0, 14.0, 0.9, 'add', -7, 2.150000710600199),
    (1.0, 1.0, 1.0, 'remove', 4.0, -4.5),
    (1.0, 1.0, 1.0, 'remove', -4.0, 3.5),
    (1.0, 2.0, 1.0, 'remove', 1.0, -4.0),
    (4.0, 4.0, 1.0, 'remove', 16.0, -4.5),
    (5.0, 5.0, 1.0, 'remove', -20.0, 3.5),
    (7.0, 14.0, 1.0, 'remove', 7.0, -4.0),
    (1.0, 1.0, 0.8, 'remove', -0.5, 0.0),
    (1.0, 1.0, 0.5, 'remove', 4.0, -0.6820994357113515),
    (1.0, 2.0, 0.7, 'remove', 0.0, -0.929541389699331),
    (4.0, 4.0, 0.3, 'remove', 16.0, -0.3519252431310541),
    (5.0, 5.0, 0.45, 'remove', -20.0, 2.737735427805667),
    (7.0, 14.0, 0.9, 'remove', 7.0, -2.150000710600199),
    (1.0, 1.0, 1.0, 'replace', 4.0, -8.0),
    (1.0, 1.0, 1.0, 'replace', -4.0, 8.0),
    (1.0, 2.0, 1.0, 'replace', 1.0, -4.0),
    (4.0, 4.0, 1.0, 'replace', 16.0, -8.0),
    (5.0, 5.0, 1.0, 'replace', -20.0, 8.0),
    (7.0, 14.0, 1.0, 'replace', 7.0, -4.0),
    (1.0, 1.0, 0.8, 'replace', -0.5, 0.7046054708796524),
    (1.0, 1.0, 0.5, 'replace', 4.0, -3.5187026734240265),
    (1.0, 2.0, 0.7, 'replace', 0.0, 0.0),
    (4.0, 4.0, 0.3, 'replace', 16.0, -2.7160414258090357),
    (5.0, 5.0, 0.45, 'replace', -20.0, 3.3265243075613813),
    (7.0, 14.0, 0.9, 'replace', 7.0, -2.1500007106001986),
]
# GaussianPrivacyLossTest.test_gaussian_inverse_privacy_loss: 36 rows
TEST_GAUSSIAN_INVERSE_PRIVACY_LOSS = [
    (1.0, 1.0, 1.0, 'add', -4.5, 5.0),
    (1.0, 1.0, 1.0, 'add', 3.5, -3.0),
    (1.0, 2.0, 1.0, 'add', -4.0, 3.0),
    (4.0, 4.0, 1.0, 'add', -4.5, 20.0),
    (5.0, 5.0, 1.0, 'add', 3.5, -15.0),
    (7.0, 14.0, 1.0, 'add', -4.0, 21.0),
    (1.0, 1.0, 0.8, 'add', 0.0, 0.5),
    (1.0, 1.0, 0.5, 'add', 0.6820994357113515, -4.0),
    (1.0, 2.0, 0.7, 'add', 0.929541389699331, 0.0),
    (4.0, 4.0, 0.3, 'add', 0.3519252431310541, -16.0),
    (5.0, 5.0, 0.45, 'add', -2.737735427805667, 20.0),
    (7.0, 14.0, 0.9, 'add', 2.150000710600199, -7.0),
    (1.0, 1.0, 1.0, 'remove', -4.5, 4.0),
    (1.0, 1.0, 1.0, 'remove', 3.5, -4.0),
    (1.0, 2.0, 1.0, 'remove', -4.0, 1.0),
    (4.0, 4.0, 1.0, 'remove', -4.5, 16.0),
    (5.0, 5.0, 1.0, 'remove', 3.5, -20.0),
    (7.0, 14.0, 1.0, 'remove', -4.0, 7.0),
    (1.0, 1.0, 0.8, 'remove', 0.0, -0.5),
    (1.0, 1.0, 0.5, 'remove', -0.6820994357113515, 4.0),
    (1.0, 2.0, 0.7, 'remove', -0.929541389699331, 0.0),
    (4.0, 4.0, 0.3, 'remove', -0.3519252431310541, 16.0),
    (5.0, 5.0, 0.45, 'remove', 2.737735427805667, -20.0),
    (7.0, 14.0, 0.9, 'remove', -2.150000710600199, 7.0),
    (1.0, 1.0, 1.0, 'replace', -8.0, 4.0),
    (1.0, 1.0, 1.0, 'replace', 8.0, -4.0),
    (1.0, 2.0, 1.0, 'replace', -4.0, 1.0),
    (4.0, 4.0, 1.0, 'replace', -8.0, 16.0),
    (5.0, 5.0, 1.0, 'replace', 8.0, -20.0),
    (7.0, 14.0, 1.0, 'replace', -4.0, 7.0),
    (1.0, 1.0, 0.8, 'replace', 0.7046054708796524, -0.5),
    (1.0, 1.0, 0.5, 'replace', -3.5187026734240265, 4.0),
    (1.0, 2.0, 0.7, 'replace', 0.0, 0.0),
    (4.0, 4.0, 0.3, 'replace', -2.7160414258090357, 16.0),
    (5.0, 5.0, 0.45, 'replace', 3.3265243075613813, -20.0),
    (7.0, 14.0, 0.9, 'replace', -2.1500007106001986, 7.0),
]
# GaussianPrivacyLossTest.test_gaussian_get_delta_for_epsilon: 36 rows
TEST_GAUSSIAN_GET_DELTA_FOR_EPSILON = [
    (1.0, 1.0, 1.0, 'add', 1.0, 0.12693674),
    (2.0, 2.0, 1.0, 'add', 1.0, 0.12693674),
    (1.0, 3.0, 1.0, 'add', 1.0, 0.78760074),
    (2.0, 6.0, 1.0, 'add', 1.0, 0.78760074),
    (1.0, 1.0, 1.0, 'add', 2.0, 0.02092364),
    (5.0, 5.0, 1.0, 'add', 2.0, 0.02092364),
    (1.0, 1.0, 0.8, 'add', 1.0, 0.0231362104090899),
    (2.0, 2.0, 0.8, 'add', 1.0, 0.0231362104090899),
    (1.0, 3.0, 0.7, 'add', 1.0, 0.1195051215523554),
    (2.0, 6.0, 0.4, 'add', 1.0, 0.0),
    (1.0, 1.0, 0.3, 'add', 2.0, 0.0),
    (5.0, 5.0, 0.2, 'add', 2.0, 0.0),
    (1.0, 1.0, 1.0, 'remove', 1.0, 0.12693674),
    (2.0, 2.0, 1.0, 'remove', 1.0, 0.12693674),
    (1.0, 3.0, 1.0, 'remove', 1.0, 0.78760074),
    (2.0, 6.0, 1.0, 'remove', 1.0, 0.78760074),
    (1.0, 1.0, 1.0, 'remove', 2.0, 0.02092364),
    (5.0, 5.0, 1.0, 'remove', 2.0, 0.02092364),
    (1.0, 1.0, 0.8, 'remove', 1.0, 0.0816951786585355),
    (2.0, 2.0, 0.8, 'remove', 1.0, 0.0816951786585355),
    (1.0, 3.0, 0.7, 'remove', 1.0, 0.5356298793262404),
    (2.0, 6.0, 0.4, 'remove', 1.0, 0.2888308005139968),
    (1.0, 1.0, 0.3, 'remove', 2.0, 0.0003341102928869332),
    (5.0, 5.0, 0.2, 'remove', -0.25, 0.2211992169285951),
    (2.0, 1.0, 0.8, 'replace', 1.0, 0.05808665654484252),
    (3.0, 2.0, 0.8, 'replace', 1.0, 0.13711260900644096),
    (2.0, 3.0, 0.7, 'replace', 1.0, 0.4013057526509164),
    (3.0, 6.0, 0.4, 'replace', 1.0, 0.20752885274183325),
    (2.0, 1.0, 0.3, 'replace', 2.0, 2.4770380148941894e-09),
    (10.0, 5.0, 0.2, 'replace', -0.25, 0.22989794629827498),
    (2.0, 1.0, 0.8, 'replace', 1.0, 0.05808665654484252),
    (3.0, 2.0, 0.8, 'replace', 1.0, 0.13711260900644096),
    (2.0, 3.0, 0.7, 'replace', 1.0, 0.4013057526509164),
    (3.0, 6.0, 0.4, 'replace', 1.0, 0.20752885274183325),
    (2.0, 1.0, 0.3, 'replace', 2.0, 2.4770380148941894e-09),
    (10.0, 5.0, 0.2, 'replace', -0.25, 0.22989794629827498),
]
# GaussianPrivacyLossTest.test_gaussian_get_delta_for_epsilon_vectorized: 6 rows
TEST_GAUSSIAN_GET_DELTA_FOR_EPSILON_VECTORIZED = [
    (1.0, 1.0, 1.0, 'add', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.86749642, 0.67881797, 0.38292492, 0.12693674, 0.020923636]),
    (1.0, 1.0, 0.2, 'add', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3], [0.27768558, 0.21052945, 0.14204776, 0.076584985, 0.02337934, 0.00020196, 0.0]),
    (1.0, 1.0, 1.0, 'remove', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.86749642, 0.67881797, 0.38292492, 0.12693674, 0.020923636]),
    (1.0, 1.0, 0.2, 'remove', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.5, 1.0], [0.25918178, 0.1814346, 0.11631708, 0.076584985, 0.051816131, 0.035738492, 0.012494629, 0.00229682]),
    (1.0, 1.0, 1.0, 'replace', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.90958223, 0.81968818, 0.68268949, 0.50986166, 0.331897999]),
    (1.0, 1.0, 0.2, 'replace', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.5, 1.0], [0.29584154, 0.23846474, 0.1841451, 0.1365379, 0.098340892, 0.069858734, 0.0250311655, 0.004734828]),
]
# DiscreteLaplacePrivacyLossDistributionTest.test_discrete_laplace_privacy_loss: 22 rows
TEST_DISCRETE_LAPLACE_PRIVACY_LOSS = [
    (1.0, 1, 1.0, 'add', 0, 1.0),
    (1.0, 1, 1.0, 'add', 1, -1.0),
    (0.3, 2, 1.0, 'add', 0, 0.6),
    (0.3, 2, 1.0, 'add', 1, 0.0),
    (0.3, 2, 1.0, 'add', 2, -0.6),
    (1.0, 1, 0.8, 'add', 1, -0.86483972516319),
    (1.0, 1, 0.8, 'add', -1, 0.7046054708796525),
    (0.3, 2, 0.5, 'add', 2, -0.3443407699259402),
    (0.3, 3, 0.5, 'add', 2, -0.1612080639085818),
    (0.3, 2, 0.4, 'add', 1, 0),
    (0.3, 2, 0.3, 'add', 0, 0.1454380063386891),
    (1.0, 1, 1.0, 'remove', -1, 1.0),
    (1.0, 1, 1.0, 'remove', 0, -1.0),
    (0.3, 2, 1.0, 'remove', -2, 0.6),
    (0.3, 2, 1.0, 'remove', -1, 0),
    (0.3, 2, 1.0, 'remove', 0, -0.6),
    (1.0, 1, 0.8, 'remove', -1, 0.86483972516319),
    (1.0, 1, 0.8, 'remove', 1, -0.7046054708796525),
    (0.3, 2, 0.5, 'remove', -2, 0.3443407699259402),
    (0.3, 3, 0.5, 'remove', -2, 0.1612080639085818),
    (0.3, 2, 0.4, 'remove', -1, 0),
    (0.3, 2, 0.3, 'remove', 0, -0.1454380063386891),
]
# DiscreteLaplacePrivacyLossDistributionTest.test_discrete_laplace_inverse_privacy_loss: 26 rows
TEST_DISCRETE_LAPLACE_INVERSE_PRIVACY_LOSS = [
    (1.0, 1, 1.0, 'add', 1.1, -inf),
    (1.0, 1, 1.0, 'add', 0.9, 0.0),
    (1.0, 1, 1.0, 'add', -1.0, inf),
    (0.3, 2, 1.0, 'add', 0.7, -inf),
    (0.3, 2, 1.0, 'add', 0.2, 0),
    (0.3, 2, 1.0, 'add', 0.0, 1.0),
    (0.3, 2, 1.0, 'add', -0.6, inf),
    (1.0, 1, 0.8, 'add', 0.9, -inf),
    (1.0, 1, 0.8, 'add', 0.7, 0),
    (1.0, 1, 0.8, 'add', -0.9, inf),
    (0.3, 2, 0.5, 'add', 0.26, -inf),
    (0.3, 2, 0.4, 'add', 0.0, 1.0),
    (0.3, 2, 0.3, 'add', -0.23, inf),
    (1.0, 1, 1.0, 'remove', 1.1, -inf),
    (1.0, 1, 1.0, 'remove', 0.9, -1.0),
    (1.0, 1, 1.0, 'remove', -1.0, inf),
    (0.3, 2, 1.0, 'remove', 0.7, -inf),
    (0.3, 2, 1.0, 'remove', 0.2, -2.0),
    (0.3, 2, 1.0, 'remove', 0.0, -1.0),
    (0.3, 2, 1.0, 'remove', -0.6, inf),
    (1.0, 1, 0.8, 'remove', 0.9, -inf),
    (1.0, 1, 0.8, 'remove', 0.86483972516319, -1.0),
    (1.0, 1, 0.8, 'remove', -0.8, inf),
    (0.3, 2, 0.5, 'remove', 0.35, -inf),
    (0.3, 2, 0.4, 'remove', 0.0, -1.0),
    (0.3, 2, 0.3, 'remove', -0.15, inf),
]
# DiscreteLaplacePrivacyLossDistributionTest.test_discrete_laplace_get_delta_for_epsilon: 23 rows
TEST_DISCRETE_LAPLACE_GET_DELTA_FOR_EPSILON = [
    (1.0, 1, 1.0, 'add', 1.0, 0.0),
    (0.333333, 3, 1.0, 'add', 1.0, 0.0),
    (0.5, 4, 1.0, 'add', 2.0, 0.0),
    (0.5, 4, 1.0, 'add', 0.5, 0.54202002),
    (0.5, 4, 1.0, 'add', 1.0, 0.39346934),
    (0.5, 4, 1.0, 'add', -0.5, 0.7222211),
    (1.0, 1, 0.8, 'add', 1.0, 0.0),
    (0.333333, 3, 0.8, 'add', 1.0, 0.0),
    (0.5, 4, 0.7, 'add', 0.5, 0.2293628348747755),
    (0.5, 4, 0.6, 'add', 0.6, 0.0766834425063938),
    (0.5, 4, 0.3, 'add', 0.5, 0.0),
    (1.0, 1, 1.0, 'remove', 1.0, 0.0),
    (0.333333, 3, 1.0, 'remove', 1.0, 0.0),
    (0.5, 4, 1.0, 'remove', 2.0, 0.0),
    (0.5, 4, 1.0, 'remove', 0.5, 0.54202002),
    (0.5, 4, 1.0, 'remove', 1.0, 0.39346934),
    (0.5, 4, 1.0, 'remove', -0.5, 0.7222211),
    (1.0, 1, 0.8, 'remove', 1.0, 0.0),
    (0.333333, 3, 0.8, 'remove', 1.0, 0.0),
    (0.5, 4, 0.7, 'remove', 0.5, 0.3523838505224567),
    (0.5, 4, 0.6, 'remove', 1.0, 0.178181891763215),
    (0.5, 4, 0.3, 'remove', 0.5, 0.1068168460276349),
    (1.0, 1, 0.2, 'remove', -0.25, 0.2211992169285951),
]
# DiscreteLaplacePrivacyLossDistributionTest.test_discrete_laplace_get_delta_for_epsilon_vectorized: 4 rows
TEST_DISCRETE_LAPLACE_GET_DELTA_FOR_EPSILON_VECTORIZED = [
    (0.5, 4, 1.0, 'add', [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], [0.86466472, 0.77686984, 0.7222211, 0.63212056, 0.54202002, 0.39346934, 0.0]),
    (0.5, 4, 0.2, 'add', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3], [0.31709255, 0.25960017, 0.19633877, 0.12642411, 0.058632421, 0.0, 0.0]),
    (0.5, 4, 1.0, 'remove', [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0], [0.86466472, 0.77686984, 0.7222211, 0.63212056, 0.54202002, 0.39346934, 0.0]),
    (0.5, 4, 0.2, 'remove', [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3], [0.25918178, 0.18126925, 0.14821539, 0.12642411, 0.11181698, 0.095673604, 0.07817137]),
]


# privacy_loss_distribution_test.py, RandomizedResponsePrivacyLossDistributionTest: PMFs of the PLD
# discretised with interval 1 rounding up (pessimistic) or down (optimistic), or with the given
# interval rounding up (noise_parameter 0.2, 4 buckets). 'expected_rounded_pmf' is the REMOVE
# direction, 'expected_rounded_pmf_add' the ADD direction (REPLACE_SPECIAL only).
RANDOMIZED_RESPONSE_PESSIMISTIC = [
    {'noise_parameter': 0.5, 'num_buckets': 2, 'neighbor_rel': 'replace_one', 'expected_rounded_pmf': {2: 0.75, -1: 0.25}},
    {'noise_parameter': 0.5, 'num_buckets': 2, 'neighbor_rel': 'replace_special', 'expected_rounded_pmf': {1: 0.75, 0: 0.25}, 'expected_rounded_pmf_add': {1: 0.5, 0: 0.5}},
    {'noise_parameter': 0.2, 'num_buckets': 4, 'neighbor_rel': 'replace_one', 'expected_rounded_pmf': {3: 0.85, -2: 0.05, 0: 0.1}},
    {'noise_parameter': 0.2, 'num_buckets': 4, 'neighbor_rel': 'replace_special', 'expected_rounded_pmf': {2: 0.85, -1: 0.15}, 'expected_rounded_pmf_add': {2: 0.75, -1: 0.25}},
]
RANDOMIZED_RESPONSE_DISCRETIZATION = [
    {'value_discretization_interval': 0.7, 'neighbor_rel': 'replace_one', 'expected_rounded_pmf': {5: 0.85, -4: 0.05, 0: 0.1}},
    {'value_discretization_interval': 0.5, 'neighbor_rel': 'replace_special', 'expected_rounded_pmf': {3: 0.85, -3: 0.15}, 'expected_rounded_pmf_add': {4: 0.75, -2: 0.25}},
    {'value_discretization_interval': 2, 'neighbor_rel': 'replace_one', 'expected_rounded_pmf': {2: 0.85, -1: 0.05, 0: 0.1}},
    {'value_discretization_interval': 2, 'neighbor_rel': 'replace_special', 'expected_rounded_pmf': {1: 0.85, 0: 0.15}, 'expected_rounded_pmf_add': {1: 0.75, 0: 0.25}},
]
RANDOMIZED_RESPONSE_OPTIMISTIC = [
    {'noise_parameter': 0.5, 'num_buckets': 2, 'neighbor_rel': 'replace_one', 'expected_rounded_pmf': {1: 0.75, -2: 0.25}},
    {'noise_parameter': 0.5, 'num_buckets': 2, 'neighbor_rel': 'replace_special', 'expected_rounded_pmf': {0: 0.75, -1: 0.25}, 'expected_rounded_pmf_add': {0: 0.5, -1: 0.5}},
    {'noise_parameter': 0.2, 'num_buckets': 4, 'neighbor_rel': 'replace_one', 'expected_rounded_pmf': {2: 0.85, -3: 0.05, 0: 0.1}},
    {'noise_parameter': 0.2, 'num_buckets': 4, 'neighbor_rel': 'replace_special', 'expected_rounded_pmf': {1: 0.85, -2: 0.15}, 'expected_rounded_pmf_add': {1: 0.75, -2: 0.25}},
]

# Discrete Gaussian tables: (sigma, sensitivity, sampling_prob, adjacency, input, expected), the default
# truncation bound ⌈11.6σ⌉; the get_delta tables carry the truncation bound as a third column.
# privacy_loss_mechanism_test.py, DiscreteGaussianPrivacyLossTest.test_discrete_gaussian_privacy_loss: 32 rows
TEST_DISCRETE_GAUSSIAN_PRIVACY_LOSS = [
    (1.0, 1, 1.0, 'add', 5, -4.5),
    (1, 1, 1, 'add', -3, 3.5),
    (1, 2, 1, 'add', 3, -4.0),
    (4.0, 4, 1.0, 'add', 20, -4.5),
    (5, 5, 1, 'add', -15, 3.5),
    (7.0, 14, 1.0, 'add', 21, -4.0),
    (1.0, 1, 1.0, 'add', -12, inf),
    (1.0, 1, 1.0, 'add', 13, -inf),
    (1.0, 1, 0.8, 'add', -4, 1.565960898891332),
    (1.0, 1, 0.7, 'add', 4, -3.156183763141021),
    (1.0, 2, 0.4, 'add', -1, 0.4986891437585786),
    (4.0, 4, 0.3, 'add', -16, 0.3519252431310541),
    (5.0, 5, 0.4, 'add', 20, -2.628009438900115),
    (7.0, 14, 0.1, 'add', -7, 0.1033275126220077),
    (1.0, 1, 0.3, 'add', 13, -inf),
    (1.0, 1, 0.3, 'add', -12, 0.3566749439387324),
    (1.0, 1, 1.0, 'remove', 4, -4.5),
    (1, 1, 1, 'remove', -4, 3.5),
    (1.0, 2, 1.0, 'remove', 1, -4.0),
    (4, 4, 1, 'remove', 16, -4.5),
    (5.0, 5, 1.0, 'remove', -20, 3.5),
    (7, 14, 1, 'remove', 7, -4.0),
    (1.0, 1, 1.0, 'remove', -13, inf),
    (1.0, 1, 1.0, 'remove', 12, -inf),
    (1.0, 1, 0.8, 'remove', 4, -1.565960898891332),
    (1.0, 1, 0.7, 'remove', -4, 3.156183763141021),
    (1.0, 2, 0.4, 'remove', 1, -0.4986891437585786),
    (4.0, 4, 0.3, 'remove', 16, -0.3519252431310541),
    (5.0, 5, 0.4, 'remove', -20, 2.628009438900115),
    (7.0, 14, 0.1, 'remove', 7, -0.1033275126220077),
    (1.0, 1, 0.3, 'remove', -13, inf),
    (1.0, 1, 0.3, 'remove', 12, -0.3566749439387324),
]

# privacy_loss_mechanism_test.py, DiscreteGaussianPrivacyLossTest.test_discrete_gaussian_privacy_loss_value_errors: 6 rows
TEST_DISCRETE_GAUSSIAN_PRIVACY_LOSS_VALUE_ERRORS = [
    (1.0, 1, 1.0, 'add', 0.4),
    (2.0, 7, 1.0, 'remove', -1.1),
    (1.0, 1, 0.6, 'add', -13),
    (2.0, 1, 0.5, 'add', 26),
    (1.0, 1, 0.6, 'remove', -14),
    (2.0, 1, 0.5, 'remove', 25),
]

# privacy_loss_mechanism_test.py, DiscreteGaussianPrivacyLossTest.test_discrete_gaussian_inverse_privacy_loss: 24 rows
TEST_DISCRETE_GAUSSIAN_INVERSE_PRIVACY_LOSS = [
    (1.0, 1, 1.0, 'add', -4.5, 5),
    (1.0, 1, 1.0, 'add', 3.5, -3),
    (1.0, 2, 1.0, 'add', -4.0, 3),
    (4.0, 4, 1.0, 'add', -4.51, 20),
    (5.0, 5, 1.0, 'add', 3.49, -15),
    (7.0, 14, 1.0, 'add', -4.0, 21),
    (1.0, 1, 0.8, 'add', 1.565961, -5),
    (1.0, 1, 0.7, 'add', -3.156182, 3),
    (1.0, 2, 0.4, 'add', 0.4986892, -2),
    (4.0, 4, 0.3, 'add', 0.3519254, -17),
    (5.0, 5, 0.4, 'add', -2.6280094, 19),
    (7.0, 14, 0.1, 'add', 0.1033276, -8),
    (1.0, 1, 1.0, 'remove', -4.5, 4),
    (1.0, 1, 1.0, 'remove', 3.5, -4),
    (1.0, 2, 1.0, 'remove', -4.0, 1),
    (4.0, 4, 1.0, 'remove', -4.51, 16),
    (5.0, 5, 1.0, 'remove', 3.49, -20),
    (7.0, 14, 1.0, 'remove', -4.0, 7),
    (1.0, 1, 0.8, 'remove', -1.565961, 4),
    (1.0, 1, 0.7, 'remove', 3.156182, -4),
    (1.0, 2, 0.4, 'remove', -0.4986892, 1),
    (4.0, 4, 0.3, 'remove', -0.3519254, 16),
    (5.0, 5, 0.4, 'remove', 2.6280094, -20),
    (7.0, 14, 0.1, 'remove', -0.1033276, 7),
]

# privacy_loss_mechanism_test.py, DiscreteGaussianPrivacyLossTest.test_discrete_gaussian_get_delta_for_epsilon: 8 rows
TEST_DISCRETE_GAUSSIAN_GET_DELTA_FOR_EPSILON = [
    (1.0, 1, 2, 1.0, 'add', 1.0, 0.150574425),
    (10.0, 3, 5, 1.0, 'add', 1.0, 0.263672394),
    (1.0, 1, 2, 0.8, 'add', 1.0, 0.024865564),
    (5.0, 3, 5, 0.4, 'add', 0.1, 0.08558498),
    (1.0, 1, 2, 1.0, 'remove', 1.0, 0.150574425),
    (10.0, 3, 5, 1.0, 'remove', 1.0, 0.263672394),
    (1.0, 1, 2, 0.8, 'remove', 1.0, 0.101734157),
    (5.0, 3, 5, 0.4, 'remove', 0.1, 0.104486937),
]

# privacy_loss_mechanism_test.py, DiscreteGaussianPrivacyLossTest.test_discrete_gaussian_get_delta_for_epsilon_vectorized: 8 rows
TEST_DISCRETE_GAUSSIAN_GET_DELTA_FOR_EPSILON_VECTORIZED = [
    (1.0, 1, 2, 1.0, 'add', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.872038958, 0.687513794, 0.402619947, 0.150574425, 0.054488685]),
    (10.0, 3, 5, 1.0, 'add', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.900348895, 0.729120212, 0.285480872, 0.263672394, 0.263672394]),
    (1.0, 1, 2, 0.8, 'add', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.87056411, 0.669546464, 0.322095958, 0.024865564, 0.0]),
    (5.0, 3, 5, 0.4, 'add', [-0.2, -0.1, 0.0, 0.1, 0.2], [0.258926845, 0.189706273, 0.12952202, 0.08558498, 0.063350727]),
    (1.0, 1, 2, 1.0, 'remove', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.872038958, 0.687513794, 0.402619947, 0.150574425, 0.054488685]),
    (10.0, 3, 5, 1.0, 'remove', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.900348895, 0.729120212, 0.285480872, 0.263672394, 0.263672394]),
    (1.0, 1, 2, 0.8, 'remove', [-2.0, -1.0, 0.0, 1.0, 2.0], [0.864664717, 0.641268089, 0.322095958, 0.101734157, 0.043590948]),
    (5.0, 3, 5, 0.4, 'remove', [-0.2, -0.1, 0.0, 0.1, 0.2], [0.233136435, 0.172603074, 0.12952202, 0.104486937, 0.094851204]),
]

# privacy_loss_mechanism_test.py, MixtureGaussianPrivacyLossTest.test_privacy_loss: 20 rows
MIXTURE_PRIVACY_LOSS = [
    {'testcase_name': 'gaussian_add_1', 'standard_deviation': 1.0, 'sensitivities': [1.0], 'sampling_probs': [1.0], 'adjacency_type': 'add', 'x': 5.0, 'expected_privacy_loss': -4.5},
    {'testcase_name': 'gaussian_add_2', 'standard_deviation': 1.0, 'sensitivities': [2.0], 'sampling_probs': [1.0], 'adjacency_type': 'add', 'x': 3.0, 'expected_privacy_loss': -4.0},
    {'testcase_name': 'gaussian_add_3', 'standard_deviation': 7.0, 'sensitivities': [14.0], 'sampling_probs': [1.0], 'adjacency_type': 'add', 'x': 21.0, 'expected_privacy_loss': -4.0},
    {'testcase_name': 'sampled_gaussian_add_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'add', 'x': 0.5, 'expected_privacy_loss': 0.0},
    {'testcase_name': 'sampled_gaussian_add_2', 'standard_deviation': 1.0, 'sensitivities': [0.0, 2.0], 'sampling_probs': [0.3, 0.7], 'adjacency_type': 'add', 'x': 0, 'expected_privacy_loss': 0.929541389699331},
    {'testcase_name': 'sampled_gaussian_add_3', 'standard_deviation': 7.0, 'sensitivities': [0.0, 14.0], 'sampling_probs': [0.1, 0.9], 'adjacency_type': 'add', 'x': -7, 'expected_privacy_loss': 2.150000710600199},
    {'testcase_name': 'mixture_gaussian_add_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0, 2.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'add', 'x': 0.5, 'expected_privacy_loss': 0.1351602748368097},
    {'testcase_name': 'mixture_gaussian_add_2', 'standard_deviation': 1.0, 'sensitivities': [1.0, 2.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'add', 'x': 0.5, 'expected_privacy_loss': 0.7046054708796523},
    {'testcase_name': 'mixture_gaussian_add_3', 'standard_deviation': 7.0, 'sensitivities': [0.0, 7.0, 14.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'add', 'x': 0.5, 'expected_privacy_loss': 0.4746752545839654},
    {'testcase_name': 'mixture_gaussian_add_4', 'standard_deviation': 7.0, 'sensitivities': [0.0, 7.0, 14.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'add', 'x': -0.5, 'expected_privacy_loss': 0.5757291778782041},
    {'testcase_name': 'gaussian_rem_1', 'standard_deviation': 1.0, 'sensitivities': [1.0], 'sampling_probs': [1.0], 'adjacency_type': 'remove', 'x': 4.0, 'expected_privacy_loss': -4.5},
    {'testcase_name': 'gaussian_rem_2', 'standard_deviation': 1.0, 'sensitivities': [2.0], 'sampling_probs': [1.0], 'adjacency_type': 'remove', 'x': 1.0, 'expected_privacy_loss': -4.0},
    {'testcase_name': 'gaussian_rem_3', 'standard_deviation': 7.0, 'sensitivities': [14.0], 'sampling_probs': [1.0], 'adjacency_type': 'remove', 'x': 7.0, 'expected_privacy_loss': -4.0},
    {'testcase_name': 'sampled_gaussian_rem_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'remove', 'x': -0.5, 'expected_privacy_loss': 0.0},
    {'testcase_name': 'sampled_gaussian_rem_2', 'standard_deviation': 1.0, 'sensitivities': [0.0, 2.0], 'sampling_probs': [0.3, 0.7], 'adjacency_type': 'remove', 'x': 0.0, 'expected_privacy_loss': -0.929541389699331},
    {'testcase_name': 'sampled_gaussian_rem_3', 'standard_deviation': 7.0, 'sensitivities': [0.0, 14.0], 'sampling_probs': [0.1, 0.9], 'adjacency_type': 'remove', 'x': 7.0, 'expected_privacy_loss': -2.150000710600199},
    {'testcase_name': 'mixture_gaussian_rem_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0, 2.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'remove', 'x': 0.5, 'expected_privacy_loss': -0.8423781325734492},
    {'testcase_name': 'mixture_gaussian_rem_2', 'standard_deviation': 1.0, 'sensitivities': [1.0, 2.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'remove', 'x': 0.5, 'expected_privacy_loss': -2.176785009442309},
    {'testcase_name': 'mixture_gaussian_rem_3', 'standard_deviation': 7.0, 'sensitivities': [0.0, 7.0, 14.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'remove', 'x': 0.5, 'expected_privacy_loss': -0.5757291778782041},
    {'testcase_name': 'mixture_gaussian_rem_4', 'standard_deviation': 7.0, 'sensitivities': [0.0, 7.0, 14.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'remove', 'x': -0.5, 'expected_privacy_loss': -0.4746752545839654},
]

# privacy_loss_mechanism_test.py, MixtureGaussianPrivacyLossTest.test_get_delta_for_epsilon: 12 rows
MIXTURE_GET_DELTA_FOR_EPSILON = [
    {'testcase_name': 'gaussian_add_1', 'standard_deviation': 1.0, 'sensitivities': [1.0], 'sampling_probs': [1.0], 'adjacency_type': 'add', 'epsilon': 1.0, 'expected_delta': 0.12693674},
    {'testcase_name': 'gaussian_add_2', 'standard_deviation': 1.0, 'sensitivities': [3.0], 'sampling_probs': [1.0], 'adjacency_type': 'add', 'epsilon': 1.0, 'expected_delta': 0.78760074},
    {'testcase_name': 'sampled_gaussian_add_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'add', 'epsilon': 1.0, 'expected_delta': 0.0231362104090899},
    {'testcase_name': 'sampled_gaussian_add_2', 'standard_deviation': 1.0, 'sensitivities': [0.0, 3.0], 'sampling_probs': [0.3, 0.7], 'adjacency_type': 'add', 'epsilon': 1.0, 'expected_delta': 0.1195051215523554},
    {'testcase_name': 'mixture_gaussian_add_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0, 2.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'add', 'epsilon': 1.0, 'expected_delta': 0.036691263832032806},
    {'testcase_name': 'mixture_gaussian_add_2', 'standard_deviation': 1.0, 'sensitivities': [1.0, 2.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'add', 'epsilon': 1.0, 'expected_delta': 0.3894964356580768},
    {'testcase_name': 'gaussian_remove_1', 'standard_deviation': 1.0, 'sensitivities': [1.0], 'sampling_probs': [1.0], 'adjacency_type': 'remove', 'epsilon': 1.0, 'expected_delta': 0.12693674},
    {'testcase_name': 'gaussian_remove_2', 'standard_deviation': 1.0, 'sensitivities': [3.0], 'sampling_probs': [1.0], 'adjacency_type': 'remove', 'epsilon': 1.0, 'expected_delta': 0.78760074},
    {'testcase_name': 'sampled_gaussian_remove_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'remove', 'epsilon': 1.0, 'expected_delta': 0.0816951786585355},
    {'testcase_name': 'sampled_gaussian_remove_2', 'standard_deviation': 1.0, 'sensitivities': [0.0, 3.0], 'sampling_probs': [0.3, 0.7], 'adjacency_type': 'remove', 'epsilon': 1.0, 'expected_delta': 0.5356298793262404},
    {'testcase_name': 'mixture_gaussian_remove_1', 'standard_deviation': 1.0, 'sensitivities': [0.0, 1.0, 2.0], 'sampling_probs': [0.2, 0.6, 0.2], 'adjacency_type': 'remove', 'epsilon': 1.0, 'expected_delta': 0.15768284088654105},
    {'testcase_name': 'mixture_gaussian_remove_2', 'standard_deviation': 1.0, 'sensitivities': [1.0, 2.0], 'sampling_probs': [0.2, 0.8], 'adjacency_type': 'remove', 'epsilon': 1.0, 'expected_delta': 0.433276675545065},
]


# dp_accounting 0.6.0, pld/accountant_test.py, test_advanced_composition (named parameters, verbatim):
# (epsilon, delta, total_delta, num_queries, expected_total_epsilon); None = no total ε exists.
ADVANCED_COMPOSITION = [
    ("basic_composition", 1, 0, 0, 30, 30),
    ("advantage_over_basic1", 1, 0.001, 0.06, 30, 22),
    ("advantage_over_basic2", 1, 0.001, 0.1, 30, 20),
    ("total_delta_too_small", 1, 0.2, 0.1, 1, None),
    ("total_delta_too_small2", 1, 0.01, 0.26, 30, None),
]
# test_get_smallest_epsilon_from_advanced_composition: (total_epsilon, total_delta, delta, num_queries, expected_epsilon)
SMALLEST_EPSILON = [
    ("basic_composition", 30, 0, 0, 30, 1),
    ("advantage_over_basic", 22, 0.06, 0.001, 30, 1),
    ("advantage_over_basic2", 5, 0.01, 0, 50, 0.25),
    ("total_delta_too_small", 1, 0.1, 0.2, 1, None),
    ("total_delta_too_small2", 30, 0.26, 0.01, 30, None),
]
