"""Input validation at the public boundary, shared by dpmech, its trainers and its audits.

Every public function checks its arguments with these helpers and raises a
``ValueError`` that names the parameter and its valid range. Nothing is
clipped, rounded, coerced or defaulted silently:

* a real number is a Python ``int`` or ``float``, a ``numbers.Real`` such as
  ``fractions.Fraction``, a numpy integer or floating scalar, or an array of
  those; ``bool``, strings, bytes, complex numbers, ``None`` and object arrays
  are refused (``True`` is not 1 and ``'2'`` is not 2 here);
* an integer is a Python or numpy integer, or an integral real such as
  ``3.0``; ``2.5`` and ``True`` are refused;
* a value too large for a double (``10**400``) is refused, not overflowed.
"""

from __future__ import annotations

import math
import numbers
import os
import pathlib

from collections.abc import Collection
from typing import Any, TypeGuard, overload

import numpy as np
from numpy.typing import NDArray

_REAL_KINDS = "iuf"


def _is_plain_real(value: object) -> TypeGuard[float]:
    return isinstance(value, (float, int)) and not isinstance(value, bool)


def _is_scalar(value: object) -> bool:
    """A number rather than an array: such inputs come back as a Python float."""
    # np.ndim takes any object at run time (what is not array-like has 0 dimensions); its stubs ask for ArrayLike.
    return not isinstance(value, np.ndarray) and np.ndim(value) == 0  # type: ignore[arg-type]


def _short(value: object) -> str:
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _type_error(name: str, value: object, expected: str) -> ValueError:
    return ValueError(f"{name} must be {expected} (got {type(value).__name__} {_short(value)})")


def real_array(name: str, value: object, expected: str = "a real number or an array of real numbers") -> NDArray[np.float64]:
    """``value`` as a float array, refusing every input that is not made of real numbers.

    Booleans, strings, complex numbers, ``None`` and object arrays raise; so do
    Python integers too large for a double.
    """
    if isinstance(value, (bool, np.bool_, str, bytes, complex, np.complexfloating)) or value is None:
        raise _type_error(name, value, expected)
    if isinstance(value, numbers.Real) and not isinstance(value, (np.ndarray, np.generic)):
        try:
            return np.asarray(float(value))
        except OverflowError:
            raise ValueError(f"{name} must be {expected} representable as a double (got {_short(value)})") from None
    try:
        array = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise _type_error(name, value, expected) from None
    if array.dtype.kind not in _REAL_KINDS:
        if array.dtype.kind == "O" and array.size:
            # Lists of Python ints beyond 2**63 land here; convert them one by one so that a
            # too-large integer is named, and anything that is not a real number is refused.
            items = array.ravel().tolist()
            if all(isinstance(item, numbers.Real) and not isinstance(item, bool) for item in items):
                try:
                    return np.array([float(item) for item in items]).reshape(array.shape)
                except OverflowError:
                    raise ValueError(f"{name} must be {expected} representable as a double") from None
        raise _type_error(name, value, expected)
    return array.astype(float, copy=False)


def _describe(array: NDArray[np.float64], mask: NDArray[np.bool_]) -> float:
    """The first offending value, as a plain float for the message."""
    return float(array[mask].flat[0]) if array.ndim else float(array)


# The validators that keep the input's shape return a Python float for a Python or numpy scalar and a
# float array for an array; the overloads let a caller that passes a float keep a float.
@overload
def real_at_least(name: str, value: float, minimum: float, *, inclusive: bool = True) -> float: ...
@overload
def real_at_least(name: str, value: NDArray[Any], minimum: float, *, inclusive: bool = True) -> NDArray[np.float64]: ...
@overload
def real_at_least(name: str, value: object, minimum: float, *, inclusive: bool = True) -> float | NDArray[np.float64]: ...
def real_at_least(name: str, value: object, minimum: float, *, inclusive: bool = True) -> float | NDArray[np.float64]:
    """Finite real values >= minimum (or > minimum when ``inclusive`` is False).

    A Python int or float comes back as a float, anything else as a float array.
    """
    if _is_plain_real(value) and not isinstance(value, int) and math.isfinite(value) and (
        value >= minimum if inclusive else value > minimum
    ):
        return float(value)
    relation = ">=" if inclusive else ">"
    array = real_array(name, value, f"a finite real number {relation} {minimum:g}")
    bad = ~np.isfinite(array) | ((array < minimum) if inclusive else (array <= minimum))
    if np.any(bad):
        raise ValueError(f"{name} must be finite and {relation} {minimum:g} (got {_describe(array, bad)!r})")
    return float(array) if _is_scalar(value) else array


@overload
def positive(name: str, value: float) -> float: ...
@overload
def positive(name: str, value: NDArray[Any]) -> NDArray[np.float64]: ...
@overload
def positive(name: str, value: object) -> float | NDArray[np.float64]: ...
def positive(name: str, value: object) -> float | NDArray[np.float64]:
    """Finite values > 0."""
    return real_at_least(name, value, 0.0, inclusive=False)


@overload
def non_negative(name: str, value: float) -> float: ...
@overload
def non_negative(name: str, value: NDArray[Any]) -> NDArray[np.float64]: ...
@overload
def non_negative(name: str, value: object) -> float | NDArray[np.float64]: ...
def non_negative(name: str, value: object) -> float | NDArray[np.float64]:
    """Finite values >= 0."""
    return real_at_least(name, value, 0.0)


@overload
def open_unit_interval(name: str, value: float) -> float: ...
@overload
def open_unit_interval(name: str, value: NDArray[Any]) -> NDArray[np.float64]: ...
@overload
def open_unit_interval(name: str, value: object) -> float | NDArray[np.float64]: ...
def open_unit_interval(name: str, value: object) -> float | NDArray[np.float64]:
    """Values in the open interval (0, 1), the valid range of a δ."""
    if isinstance(value, float) and 0.0 < value < 1.0:
        return value
    array = real_array(name, value, "a real number in the open interval (0, 1)")
    bad = ~((array > 0.0) & (array < 1.0))
    if np.any(bad):
        raise ValueError(f"{name} must be in the open interval (0, 1) (got {_describe(array, bad)!r})")
    return float(array) if _is_scalar(value) else array


def in_interval(name: str, value: object, low: float, high: float, *, low_open: bool, high_open: bool) -> NDArray[np.float64]:
    """Values in an interval whose ends are open or closed as requested."""
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    array = real_array(name, value, f"a real number in {interval}")
    above = (array > low) if low_open else (array >= low)
    below = (array < high) if high_open else (array <= high)
    bad = ~(above & below)
    if np.any(bad):
        raise ValueError(f"{name} must be in {interval} (got {_describe(array, bad)!r})")
    return array


@overload
def integer_at_least(name: str, value: int | np.integer[Any], minimum: int = 1) -> int: ...
@overload
def integer_at_least(name: str, value: object, minimum: int = 1) -> int | NDArray[np.float64]: ...
def integer_at_least(name: str, value: object, minimum: int = 1) -> int | NDArray[np.float64]:
    """Integer values >= minimum; integral floats such as 3.0 are accepted, 2.5 is not.

    A Python or numpy integer scalar comes back as a Python int (of any size), anything else as a
    float array, in which integers beyond 2**53, which a double cannot hold exactly, are refused.
    """
    expected = f"an integer >= {minimum}"
    if isinstance(value, (bool, np.bool_)):
        raise _type_error(name, value, expected)
    if isinstance(value, (int, np.integer)):
        if value < minimum:
            raise ValueError(f"{name} must be {expected} (got {value!r})")
        return int(value)
    array = real_array(name, value, expected)
    bad = ~np.isfinite(array) | (array != np.floor(array)) | (array < minimum)
    if np.any(bad):
        raise ValueError(f"{name} must be {expected} (got {_describe(array, bad)!r})")
    if np.any(array > 2.0**53):
        raise ValueError(f"{name} must be {expected} and at most 2**53 (got {float(array.max())!r})")
    return array


def integer_scalar(name: str, value: object, minimum: int = 1) -> int:
    """A single integer >= minimum, returned as a Python int."""
    result = integer_at_least(name, value, minimum)
    if isinstance(result, int):
        return result
    if result.ndim:
        raise ValueError(f"{name} must be a single integer >= {minimum} (got an array of shape {result.shape})")
    return int(result)


def choice(name: str, value: object, options: Collection[str]) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in options)} (got {value!r})")
    return value


def single(name: str, value: float | NDArray[Any]) -> float:
    """A validated value as one Python float; ValueError naming ``name`` when it is an array."""
    if np.ndim(value) != 0:
        raise ValueError(f"{name} must be a single number (got an array of shape {np.shape(value)})")
    return float(value)


def scalar_or_array(array: float | NDArray[np.float64]) -> float | NDArray[np.float64]:
    """Return a Python float for 0-d results and the array otherwise."""
    return float(array) if np.ndim(array) == 0 else array


def stated_epsilon_delta(epsilon: float, delta: float) -> None:
    """Refuse a stated (ε, δ) pair unless both are real numbers (not bools), ε >= 0 (inf allowed) and δ in [0, 1]."""
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) or not value >= 0:
            raise ValueError(f"{name} must be a number >= 0 (or inf for epsilon) (got {value!r})")
    if delta > 1.0:
        raise ValueError(f"delta must be in [0, 1] (got {delta!r})")


def target_epsilon_delta(epsilon: object, delta: object) -> tuple[float, float]:
    """A calibration's target (ε, δ): ε > 0 and δ in (0, 1), one number each; ValueError naming the one refused."""
    checked_epsilon = positive("epsilon", epsilon)
    checked_delta = open_unit_interval("delta", delta)
    if np.ndim(checked_epsilon) or np.ndim(checked_delta):
        raise ValueError("epsilon and delta must be single numbers")
    return float(checked_epsilon), float(checked_delta)


def generator(name: str, value: object) -> np.random.Generator:
    """A ``numpy.random.Generator``, or an int seed >= 0 turned into one; never global state."""
    if isinstance(value, np.random.Generator):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and int(value) >= 0:
        return np.random.default_rng(int(value))
    raise ValueError(f"{name} must be a numpy.random.Generator or an integer seed >= 0 (got {value!r})")


def boolean(name: str, value: object) -> bool:
    """True or False exactly; 0, 1 and strings are refused rather than guessed."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False (got {value!r})")


def folder_or_none(name: str, value: object) -> pathlib.Path | None:
    """None, or a folder path (``str`` or ``os.PathLike``) as a ``pathlib.Path``; whether it exists is the caller's matter."""
    if value is None:
        return None
    if isinstance(value, (str, os.PathLike)) and str(value).strip():
        return pathlib.Path(value)
    raise ValueError(f"{name} must be a folder path or None (got {value!r})")
