"""Input validation at the public boundary.

Every public function of dpmech checks its arguments here and raises a
``ValueError`` that names the parameter and its valid range. Nothing is
clipped, rounded or defaulted silently.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def _is_plain_real(value) -> bool:
    return isinstance(value, (float, int)) and not isinstance(value, bool)


def _as_float_array(name: str, value) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number or an array of real numbers (got {value!r})") from None
    return array


def _describe(array: np.ndarray, mask: np.ndarray) -> float:
    """The first offending value, as a plain float for the message."""
    return float(array[mask].flat[0]) if array.ndim else float(array)


def real_at_least(name: str, value, minimum: float, *, inclusive: bool = True):
    """Finite real values >= minimum (or > minimum when ``inclusive`` is False).

    A Python int or float comes back as a float, anything else as a float array.
    """
    if _is_plain_real(value) and math.isfinite(value) and (value >= minimum if inclusive else value > minimum):
        return float(value)
    array = _as_float_array(name, value)
    bad = ~np.isfinite(array) | ((array < minimum) if inclusive else (array <= minimum))
    if np.any(bad):
        relation = ">=" if inclusive else ">"
        raise ValueError(
            f"{name} must be finite and {relation} {minimum:g} (got {_describe(array, bad)!r})"
        )
    return array


def positive(name: str, value):
    """Finite values > 0."""
    return real_at_least(name, value, 0.0, inclusive=False)


def non_negative(name: str, value):
    """Finite values >= 0."""
    return real_at_least(name, value, 0.0)


def open_unit_interval(name: str, value):
    """Values in the open interval (0, 1), the valid range of a δ."""
    if _is_plain_real(value) and 0.0 < value < 1.0:
        return float(value)
    array = _as_float_array(name, value)
    bad = ~((array > 0.0) & (array < 1.0))
    if np.any(bad):
        raise ValueError(f"{name} must be in the open interval (0, 1) (got {_describe(array, bad)!r})")
    return array


def in_interval(name: str, value, low: float, high: float, *, low_open: bool, high_open: bool) -> np.ndarray:
    """Values in an interval whose ends are open or closed as requested."""
    array = _as_float_array(name, value)
    above = (array > low) if low_open else (array >= low)
    below = (array < high) if high_open else (array <= high)
    bad = ~(above & below)
    if np.any(bad):
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be in {interval} (got {_describe(array, bad)!r})")
    return array


def integer_at_least(name: str, value, minimum: int = 1):
    """Integer values >= minimum; integral floats such as 3.0 are accepted, 2.5 is not.

    A Python int comes back unchanged, anything else as a float array.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {minimum} (got {value!r})")
    if isinstance(value, int) and value >= minimum:
        return value
    array = _as_float_array(name, value)
    bad = ~np.isfinite(array) | (array != np.floor(array)) | (array < minimum)
    if np.any(bad):
        raise ValueError(f"{name} must be an integer >= {minimum} (got {_describe(array, bad)!r})")
    return array


def integer_scalar(name: str, value, minimum: int = 1) -> int:
    """A single integer >= minimum, returned as a Python int."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum} (got {value!r})")
        return int(value)
    array = integer_at_least(name, value, minimum)
    if array.ndim:
        raise ValueError(f"{name} must be a single integer >= {minimum} (got an array of shape {array.shape})")
    return int(array)


def choice(name: str, value, options) -> str:
    """One of a fixed set of strings."""
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in options)} (got {value!r})")
    return value


def scalar_or_array(array: np.ndarray):
    """Return a Python float for 0-d results and the array otherwise."""
    return float(array) if np.ndim(array) == 0 else array


def generator(name: str, value) -> np.random.Generator:
    """A ``numpy.random.Generator``, or an int seed >= 0 turned into one; never global state."""
    if isinstance(value, np.random.Generator):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and value >= 0:
        return np.random.default_rng(int(value))
    raise ValueError(f"{name} must be a numpy.random.Generator or an integer seed >= 0 (got {value!r})")


def boolean(name: str, value) -> bool:
    """True or False exactly; 0, 1 and strings are refused rather than guessed."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False (got {value!r})")
